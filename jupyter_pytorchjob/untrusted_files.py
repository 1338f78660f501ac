"""The one way this package reads a file that a volume holds (a job's log archive, its
event files, its result, a local job's logs): anything a pod or another user can write.

Such a file may be a FIFO (an open or a read blocks forever), a symlink to
``/dev/zero`` (a read never ends), a symlink to another job's or user's file, or a
directory linked to ``/``. So every open here is non-blocking and follows no link in
its last component (``O_NONBLOCK | O_NOFOLLOW``), what it opened must be a regular
file (``fstat``, after the open: a file swapped for a link between a check and the
open is caught too), and every read is bounded. Directories are walked without
following symlinked directories (as TensorBoard's walk does not), a symlinked root
included. A refusal is an ``UntrustedFileError`` (an ``OSError``: readers that skip
unreadable files skip these too) naming the path and what it was.

Standard library only: every layer may import it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

StrPath = str | os.PathLike[str]

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_DIRECTORY_FLAGS = _OPEN_FLAGS | getattr(os, "O_DIRECTORY", 0)
# What an open with O_NOFOLLOW of a symlink fails with (Linux, macOS: ELOOP; FreeBSD:
# EMLINK).
_LINK_ERRNOS = {errno.ELOOP, errno.EMLINK}
_CHUNK = 1 << 16


class UntrustedFileError(OSError):
    """A file refused: ``path`` is not a regular file (``what`` it is instead), or is
    larger than the reader allows."""

    def __init__(self, path: StrPath, what: str) -> None:
        super().__init__(f"{os.fspath(path)}: {what}")
        self.path = os.fspath(path)
        self.what = what


def describe(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words."""
    for test, what in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def _open(path: StrPath, flags: int, dir_fd: int | None, want: int) -> int:
    # lstat first: a device or FIFO is refused without being opened at all (opening
    # some devices acts); the fstat after the open is what the decision rests on.
    try:
        before = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        before = None
    if before is not None and stat.S_IFMT(before.st_mode) != want:
        raise UntrustedFileError(path, describe(before.st_mode))
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except OSError as err:
        if err.errno in _LINK_ERRNOS:
            raise UntrustedFileError(path, "a symbolic link") from err
        raise
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if stat.S_IFMT(mode) != want:
        os.close(fd)
        raise UntrustedFileError(path, describe(mode))
    return fd


def open_regular(path: StrPath, *, dir_fd: int | None = None) -> int:
    """A read-only descriptor of ``path`` (relative to ``dir_fd`` if given): opened
    non-blocking, close-on-exec, its last component not followed if a link, and a
    regular file - else ``UntrustedFileError`` naming what it was."""
    return _open(path, _OPEN_FLAGS, dir_fd, stat.S_IFREG)


def open_directory(path: StrPath, *, dir_fd: int | None = None) -> int:
    """A descriptor of the directory ``path`` (not a link to one: refused)."""
    return _open(path, _DIRECTORY_FLAGS, dir_fd, stat.S_IFDIR)


@contextlib.contextmanager
def opened(path: StrPath, *, dir_fd: int | None = None) -> Iterator[BinaryIO]:
    """``open_regular`` as a binary file object, closed on leaving."""
    with os.fdopen(open_regular(path, dir_fd=dir_fd), "rb", buffering=0) as file:
        yield file


def _read_up_to(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    left = size
    while left > 0:
        part = os.read(fd, min(left, _CHUNK))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def read_bounded(path: StrPath, max_bytes: int, *, dir_fd: int | None = None) -> bytes:
    """The whole of the regular file ``path``; refused (``UntrustedFileError``) when it
    holds more than ``max_bytes`` - never more than ``max_bytes + 1`` bytes are read."""
    fd = open_regular(path, dir_fd=dir_fd)
    try:
        if os.fstat(fd).st_size > max_bytes:
            raise UntrustedFileError(path, f"larger than {max_bytes} bytes")
        data = _read_up_to(fd, max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew after the fstat
        raise UntrustedFileError(path, f"larger than {max_bytes} bytes")
    return data


def read_range(path: StrPath, offset: int, size: int, *, dir_fd: int | None = None) -> bytes:
    """At most ``size`` bytes of the regular file ``path`` from ``offset``."""
    fd = open_regular(path, dir_fd=dir_fd)
    try:
        os.lseek(fd, offset, os.SEEK_SET)
        return _read_up_to(fd, size)
    finally:
        os.close(fd)


def read_tail(path: StrPath, max_bytes: int, *, dir_fd: int | None = None) -> bytes:
    """The last ``max_bytes`` bytes (at most) of the regular file ``path``."""
    fd = open_regular(path, dir_fd=dir_fd)
    try:
        size = os.fstat(fd).st_size
        os.lseek(fd, max(0, size - max_bytes), os.SEEK_SET)
        return _read_up_to(fd, max_bytes)
    finally:
        os.close(fd)


def regular_files(directory: StrPath, *, max_entries: int = 10_000) -> list[str]:
    """The names of the regular files in ``directory`` (itself no link), links and
    everything else left out, among its first ``max_entries`` entries; ``[]`` when it
    cannot be read."""
    try:
        fd = open_directory(directory)
    except OSError:
        return []
    try:
        with os.scandir(fd) as entries:
            return [
                entry.name
                for _, entry in zip(range(max_entries), entries, strict=False)
                if entry.is_file(follow_symlinks=False)
            ]
    except OSError:
        return []
    finally:
        os.close(fd)


def walk(
    root: StrPath, *, max_depth: int, max_entries: int = 100_000
) -> Iterator[tuple[Path, list[str]]]:
    """Each directory under ``root`` (``root`` itself first, then at most ``max_depth``
    levels below, in name order) with the names of its regular files. Symlinked
    directories are not entered and a symlinked ``root`` yields nothing; each
    directory is opened relative to its parent's descriptor, so one swapped for a link
    during the walk is refused too. At most ``max_entries`` entries are looked at in
    all (a directory of millions of names costs no more)."""
    try:
        top = open_directory(root)
    except OSError:
        return
    budget = [max_entries]
    try:
        yield from _walk(Path(root), top, max_depth, budget)
    finally:
        os.close(top)


def _walk(
    path: Path, fd: int, depth_left: int, budget: list[int]
) -> Iterator[tuple[Path, list[str]]]:
    files: list[str] = []
    subdirectories: list[str] = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if budget[0] <= 0:
                    break
                budget[0] -= 1
                if entry.is_file(follow_symlinks=False):
                    files.append(entry.name)
                elif entry.is_dir(follow_symlinks=False):
                    subdirectories.append(entry.name)
    except OSError:
        return
    yield path, sorted(files)
    if depth_left <= 0:
        return
    for name in sorted(subdirectories):
        try:
            child = open_directory(name, dir_fd=fd)
        except OSError:
            continue
        try:
            yield from _walk(path / name, child, depth_left - 1, budget)
        finally:
            os.close(child)
