"""``untrusted_files``: what a volume holds is read without hanging, without following
links, regular files only, bounded - each hostile file planted for real."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob import untrusted_files
from jupyter_pytorchjob.untrusted_files import (
    UntrustedFileError,
    open_directory,
    open_regular,
    opened,
    read_bounded,
    read_range,
    read_tail,
    regular_files,
    walk,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def finishes(call: Callable[[], Any], seconds: float = 10.0) -> Any:
    """``call``'s result or its exception, failing if it hangs (a blocking open of a
    FIFO never returns: the thread is left behind, the test fails)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("value", call()))
        except BaseException as err:  # handed to the test
            outcome.append(("error", err))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"{call} hung"
    kind, value = outcome[0]
    if kind == "error":
        raise value
    return value


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "master-0.log"
    os.mkfifo(path)
    return path


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "f.log"
    path.write_bytes(b"0123456789")
    assert read_bounded(path, 10) == b"0123456789"
    assert read_range(path, 3, 4) == b"3456"
    assert read_range(path, 8, 100) == b"89"
    assert read_tail(path, 3) == b"789"
    assert read_tail(path, 100) == b"0123456789"
    with opened(path) as f:
        f.seek(5)
        assert f.read() == b"56789"


@pytest.mark.parametrize(
    "read",
    [
        lambda p: open_regular(p),
        lambda p: read_bounded(p, 100),
        lambda p: read_range(p, 0, 100),
        lambda p: read_tail(p, 100),
    ],
)
def test_a_fifo_is_refused_without_hanging(fifo: Path, read: Callable[[Path], Any]) -> None:
    with pytest.raises(UntrustedFileError) as caught:
        finishes(lambda: read(fifo))
    assert caught.value.what == "a FIFO"
    assert str(fifo) in str(caught.value)


def test_a_symlink_to_dev_zero_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "master-0.log"
    link.symlink_to("/dev/zero")
    with pytest.raises(UntrustedFileError, match="a symbolic link") as caught:
        finishes(lambda: read_bounded(link, 1 << 20))
    assert caught.value.path == str(link)


def test_a_device_is_refused_by_what_it_is() -> None:
    with pytest.raises(UntrustedFileError, match="a character device"):
        finishes(lambda: read_range("/dev/zero", 0, 1 << 20))


def test_a_symlink_to_a_regular_file_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other-job.log"
    other.write_text("another job's secrets\n")
    link = tmp_path / "master-0.log"
    link.symlink_to(other)
    with pytest.raises(UntrustedFileError, match="a symbolic link"):
        read_bounded(link, 100)


def test_a_directory_is_refused_as_a_file(tmp_path: Path) -> None:
    with pytest.raises(UntrustedFileError, match="a directory"):
        open_regular(tmp_path)


def test_a_file_swapped_for_a_link_after_the_check_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decision rests on the open itself, not on the lstat before it: a regular
    file replaced by a link (or a FIFO) between the two is refused, without hanging."""
    path = tmp_path / "master-0.log"
    path.write_text("fine\n")
    real_stat = os.stat
    swaps = iter([lambda: path.symlink_to("/dev/zero"), lambda: os.mkfifo(path)])

    def stat_then_swap(target: Any, **kwargs: Any) -> os.stat_result:
        found = real_stat(target, **kwargs)
        swap = next(swaps, None) if os.fspath(target) == str(path) else None
        if swap is not None:
            path.unlink()
            swap()
        return found

    monkeypatch.setattr(untrusted_files.os, "stat", stat_then_swap)
    with pytest.raises(UntrustedFileError, match="a symbolic link"):
        finishes(lambda: read_bounded(path, 100))
    path.unlink()
    path.write_text("fine\n")
    with pytest.raises(UntrustedFileError, match="a FIFO"):
        finishes(lambda: read_bounded(path, 100))


def test_read_bounded_refuses_a_larger_file(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_bytes(b"x" * 11)
    assert read_bounded(path, 11) == b"x" * 11
    with pytest.raises(UntrustedFileError, match="larger than 10 bytes"):
        read_bounded(path, 10)


def test_read_bounded_reads_no_more_than_one_byte_past_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that grows after its size was taken is read to one byte past the bound,
    then refused."""
    path = tmp_path / "growing"
    path.write_bytes(b"x" * 1000)
    real_read = os.read
    read: list[int] = []

    def counting_read(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        read.append(len(data))
        return data

    real_fstat = os.fstat
    monkeypatch.setattr(
        untrusted_files.os,
        "fstat",
        lambda fd: os.stat_result((*real_fstat(fd)[:6], 0, *real_fstat(fd)[7:])),
    )
    monkeypatch.setattr(untrusted_files.os, "read", counting_read)
    with pytest.raises(UntrustedFileError, match="larger than 10 bytes"):
        read_bounded(path, 10)
    assert sum(read) == 11


def test_regular_files_lists_no_links_fifos_or_directories(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("a")
    (tmp_path / "b.log").symlink_to("/dev/zero")
    (tmp_path / "b2.log").symlink_to(tmp_path / "a.log")
    os.mkfifo(tmp_path / "c.log")
    (tmp_path / "d").mkdir()
    assert regular_files(tmp_path) == ["a.log"]
    link = tmp_path.parent / f"{tmp_path.name}-link"
    link.symlink_to(tmp_path)
    assert regular_files(link) == []  # a linked directory: not read
    with pytest.raises(UntrustedFileError, match="a symbolic link"):
        open_directory(link)


def test_walk_enters_no_symlinked_directory(tmp_path: Path) -> None:
    logdir = tmp_path / "runs"
    (logdir / "run1" / "deep" / "deeper" / "deepest").mkdir(parents=True)
    (logdir / "top.tfevents").write_text("")
    (logdir / "run1" / "a.tfevents").write_text("")
    (logdir / "run1" / "deep" / "deeper" / "deepest" / "too-deep.tfevents").write_text("")
    (logdir / "root").symlink_to("/")
    (logdir / "run1" / "link.tfevents").symlink_to("/dev/zero")
    (logdir / "run1" / "other.tfevents").symlink_to(logdir / "top.tfevents")
    os.mkfifo(logdir / "run1" / "fifo.tfevents")
    seen = {
        directory.relative_to(logdir).as_posix(): files
        for directory, files in walk(logdir, max_depth=3)
    }
    assert seen == {
        ".": ["top.tfevents"],
        "run1": ["a.tfevents"],
        "run1/deep": [],
        "run1/deep/deeper": [],
    }


def test_walk_of_a_symlinked_root_yields_nothing(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.symlink_to("/")
    assert list(walk(root, max_depth=3)) == []


def test_walk_and_listing_look_at_a_bounded_number_of_entries(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"{i:02}.tfevents").write_text("")
    (found,) = walk(tmp_path, max_depth=0, max_entries=10)
    assert len(found[1]) == 10
    assert len(regular_files(tmp_path, max_entries=10)) == 10
    assert len(regular_files(tmp_path)) == 50
