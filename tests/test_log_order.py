"""Merged logs in time order (#27): the merge itself (pure), then the local backend over
real log files of a real job, backlog and resumption."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

from jupyter_pytorchjob.backends.kubernetes.logs import skip_line_by_line
from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.backends.local.store import JobDir, timestamp
from jupyter_pytorchjob.backends.logmerge import TimeMerge, lines_after
from jupyter_pytorchjob.backends.timestamps import format_timestamp_ns

from .local_jobs import backend, collect_logs, make_spec

__all__ = ["backend"]  # the fixture

T0 = 1_790_000_000.0


def lines(replica: str, *stamps: int) -> bytes:
    return b"".join(b"%02d %s %d\n" % (s, replica.encode(), s) for s in stamps)


def texts(runs: list[tuple[str, bytes, bytes, int]]) -> list[str]:
    return [line for _, text, _, _ in runs for line in text.decode().splitlines()]


def test_the_backlogs_merge_by_stamp_ties_in_replica_order() -> None:
    merge = TimeMerge(["m", "w"])
    merge.add("w", lines("w", 1, 3, 3, 6))
    merge.add("m", lines("m", 0, 3, 4, 5))
    runs = merge.take()
    assert texts(runs) == ["m 0", "w 1", "m 3", "w 3", "w 3", "m 4", "m 5", "w 6"]
    assert [(r, size) for r, _, _, size in runs][:2] == [("m", 7), ("w", 7)]
    assert [stamp for _, _, stamp, _ in runs][-1] == b"06"
    assert merge.take() == []


def test_a_backlog_still_being_read_holds_back_what_may_come_after_it() -> None:
    merge = TimeMerge(["m", "w"])
    merge.opened("m")
    merge.opened("w")
    merge.add("m", lines("m", 0, 2, 4))
    assert merge.take() == []  # w's first line may be the oldest
    merge.add("w", lines("w", 1, 3))
    assert texts(merge.take()) == ["m 0", "w 1", "m 2", "w 3"]  # up to w's newest
    merge.closed("w")  # w has caught up: it holds nothing back
    assert texts(merge.take()) == ["m 4"]
    merge.add("w", lines("w", 1))
    assert merge.take() == []  # m's next line may be older
    merge.closed("m")  # both caught up: a live line goes out as it arrives
    assert texts(merge.take()) == ["w 1"]


def test_stamps_that_go_back_keep_the_replicas_own_order() -> None:
    merge = TimeMerge(["m", "w"])
    merge.add("m", lines("m", 5, 2, 6))  # the node's clock stepped back after 5
    merge.add("w", lines("w", 3, 7))
    assert texts(merge.take()) == ["w 3", "m 5", "m 2", "m 6", "w 7"]


def test_stamps_of_different_widths_are_each_removed_whole() -> None:
    merge = TimeMerge(["m"])
    # A shorter stamp whose text has a space where the wider stamps end.
    merge.add("m", b"05 wide\n6  gap\n07 Z end\n")
    assert texts(merge.take()) == ["wide", " gap", "Z end"]


def test_a_run_ends_at_the_first_line_stamped_after_the_next_replicas_head() -> None:
    merge = TimeMerge(["m", "w"])
    # m's stamps are one character wider than w's "5" except one, whose text starts
    # with a space where the wider stamps end.
    merge.add("m", b"1a x\n2  y\n3a z\n6a v\n")
    merge.add("w", b"5 w\n")
    assert texts(merge.take()) == ["x", " y", "z", "w", "v"]


def test_a_line_with_nothing_after_its_stamp_stays_an_empty_line() -> None:
    merge = TimeMerge(["m", "w"])
    merge.add("m", b"01\n03 m\n")
    merge.add("w", b"02 w\n")
    assert [text for _, text, _, _ in merge.take()] == [b"\n", b"w\n", b"m\n"]


def alternate(count: int) -> tuple[bytes, bytes, list[str]]:
    """Two logs as the pump writes them, master-0 on even and worker-0 on odd tenths of
    a second (a tie every 100 lines: the master's line first), and the merged order."""
    logs: dict[str, list[bytes]] = {"master-0": [], "worker-0": []}
    order = []
    for i in range(count):
        replica = "master-0" if i % 2 == 0 else "worker-0"
        when = T0 + (i - 1 if i % 100 == 1 else i) / 10  # line 101 ties with line 100
        text = f"line {i:06d} of {replica} " + "x" * 40
        logs[replica].append(f"{timestamp(when)} {text}\n".encode())
        order.append(text)
    return b"".join(logs["master-0"]), b"".join(logs["worker-0"]), order


async def test_local_two_replicas_come_back_in_time_order_also_after_a_resume(
    backend: LocalBackend,
) -> None:
    await backend.submit(make_spec(name="two", nodes=2, command=[sys.executable, "-c", "pass"]))
    await backend.wait("two", timeout=60)
    master, worker, order = alternate(6000)  # ~250 KB each: several reads per replica
    jobdir = JobDir(backend.jobs_dir / "two")
    jobdir.log("master-0").write_bytes(master)
    jobdir.log("worker-0").write_bytes(worker)

    chunks = [chunk async for chunk in backend.logs("two")]
    assert [line for c in chunks for line in c.text.splitlines()] == order

    # A reconnect after any chunk: the rest, from the offsets seen, neither lost nor repeated.
    half = len(chunks) // 2
    since = {c.replica: c.offset for c in chunks[:half]}
    seen = [line for c in chunks[:half] for line in c.text.splitlines()]
    rest = await collect_logs(backend, "two", since=since)
    assert sorted(seen + rest["master-0"].splitlines() + rest["worker-0"].splitlines()) == sorted(
        order
    )
    again = [c async for c in backend.logs("two", since=since)]
    assert seen + [line for c in again for line in c.text.splitlines()] == order


def kubelet_lines(*stamps: int) -> bytes:
    """Lines as the kubelet stamps them (``timestamps=true``), the text naming the stamp
    and the line's place."""
    return b"".join(
        format_timestamp_ns(T0_NS + s) + b" line %d at %d\n" % (i, s) for i, s in enumerate(stamps)
    )


T0_NS = 1_790_000_000 * 10**9


def test_lines_after_those_seen_are_found_without_parsing_each_line() -> None:
    """After a reconnect the API answers from the whole second: the lines before the
    last stamp seen go, and as many of those at it as were seen (all: unknown)."""
    data = kubelet_lines(1, 2, 5, 5, 5, 7, 9)
    stamp = format_timestamp_ns(T0_NS + 5)
    texts = [line.partition(b" ")[2] for line in data.splitlines()]

    def after(stamp_ns: int, seen: int | None) -> list[bytes]:
        rest = lines_after(data, format_timestamp_ns(T0_NS + stamp_ns), seen)
        assert rest is not None
        return [line.partition(b" ")[2] for line in rest.splitlines()]

    assert after(5, 1) == texts[3:]
    assert after(5, 2) == texts[4:]
    assert after(5, 3) == after(5, None) == texts[5:]
    assert after(6, 0) == after(6, None) == texts[5:]  # no line at it: the first after it
    assert after(0, None) == texts and after(9, None) == []
    assert lines_after(data, stamp, 0) == data[data.index(stamp) :]
    # Stamps of another width (the local pump's microseconds) are not compared as bytes.
    assert lines_after(b"2026-11-22T04:25:01.123456Z x\n", stamp, None) is None


@given(
    st.lists(st.integers(0, 20), min_size=1, max_size=40).map(sorted),
    st.integers(-1, 21),
    st.none() | st.integers(0, 5),
)
def test_lines_after_drops_what_the_line_by_line_reading_drops(
    stamps: list[int], last: int, seen: int | None
) -> None:
    data = kubelet_lines(*stamps)
    rest = lines_after(data, format_timestamp_ns(T0_NS + last), seen)
    assert rest == skip_line_by_line(data, T0_NS + last, seen)
