"""Merged logs in time order (#27): the merge itself (pure), then the local backend over
real log files of a real job, backlog and resumption."""

from __future__ import annotations

import random
import sys
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_pytorchjob.backends import LogChunk
from jupyter_pytorchjob.backends.kubernetes.logs import skip_line_by_line
from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.backends.local.store import JobDir, timestamp
from jupyter_pytorchjob.backends.logmerge import TAKE_BYTES, Taken, TimeMerge, lines_after
from jupyter_pytorchjob.backends.timestamps import format_timestamp_ns
from jupyter_pytorchjob.frontends.formatting import LogWriter
from jupyter_pytorchjob.job.loglines import OWNER_BASE

from .local_jobs import backend, make_spec

__all__ = ["backend"]  # the fixture

T0 = 1_790_000_000.0


def lines(replica: str, *stamps: int) -> bytes:
    return b"".join(b"%02d %s %d\n" % (s, replica.encode(), s) for s in stamps)


def owned(taken: Taken | None) -> list[tuple[str, str]]:
    """(replica, text) of each line ``take`` gave, in order."""
    if taken is None:
        return []
    assert taken.text.endswith("\n")
    texts = taken.text[:-1].split("\n")
    owners = taken.owners or chr(OWNER_BASE) * len(texts)
    return [(taken.replicas[ord(o) - OWNER_BASE], t) for o, t in zip(owners, texts, strict=True)]


def texts(taken: Taken | None) -> list[str]:
    return [text for _, text in owned(taken)]


def test_the_backlogs_merge_by_stamp_ties_in_replica_order() -> None:
    merge = TimeMerge(["m", "w"])
    merge.add("w", lines("w", 1, 3, 3, 6))
    merge.add("m", lines("m", 0, 3, 4, 5))
    taken = merge.take()
    assert texts(taken) == ["m 0", "w 1", "m 3", "w 3", "w 3", "m 4", "m 5", "w 6"]
    assert taken is not None and taken.owners == "01011001"
    assert (taken.replicas, taken.sizes, taken.stamps) == (("m", "w"), (28, 28), (b"05", b"06"))
    assert merge.take() is None


def test_one_replicas_lines_come_without_owners() -> None:
    merge = TimeMerge(["m", "w"])
    merge.add("w", lines("w", 1, 2))
    taken = merge.take()
    assert taken is not None
    assert (taken.text, taken.owners) == ("w 1\nw 2\n", "")
    assert (taken.replicas, taken.sizes) == (("w",), (14,))


def test_a_backlog_still_being_read_holds_back_what_may_come_after_it() -> None:
    merge = TimeMerge(["m", "w"])
    merge.opened("m")
    merge.opened("w")
    merge.add("m", lines("m", 0, 2, 4))
    assert merge.take() is None  # w's first line may be the oldest
    merge.add("w", lines("w", 1, 3))
    assert texts(merge.take()) == ["m 0", "w 1", "m 2", "w 3"]  # up to w's newest
    merge.closed("w")  # w has caught up: it holds nothing back
    assert texts(merge.take()) == ["m 4"]
    merge.add("w", lines("w", 1))
    assert merge.take() is None  # m's next line may be older
    merge.closed("m")  # both caught up: a live line goes out as it arrives
    assert texts(merge.take()) == ["w 1"]


def test_a_later_replicas_tie_with_the_horizon_waits_for_the_replica_being_read() -> None:
    merge = TimeMerge(["m", "w"])
    merge.opened("m")
    merge.add("m", lines("m", 1, 3))
    merge.add("w", lines("w", 3))
    assert texts(merge.take()) == ["m 1", "m 3"]  # m may have more lines stamped 3
    merge.add("m", lines("m", 3))
    merge.closed("m")
    assert texts(merge.take()) == ["m 3", "w 3"]


def test_stamps_that_go_back_keep_the_replicas_own_order() -> None:
    merge = TimeMerge(["m", "w"])
    merge.add("m", lines("m", 5, 2, 6))  # the node's clock stepped back after 5
    merge.add("w", lines("w", 3, 5))
    # m's 2 counts as the 5 before it: after m's 5, before w's (ties: m first).
    assert texts(merge.take()) == ["w 3", "m 5", "m 2", "w 5", "m 6"]
    merge.add("m", lines("m", 4))  # back again, in a later block: never before its 6
    merge.add("w", lines("w", 5))
    taken = merge.take()
    assert texts(taken) == ["w 5", "m 4"]
    assert taken is not None and taken.stamps == (b"06", b"05")


def test_lines_added_alone_still_merge_with_a_replica_that_turns_up_before_they_go_out() -> None:
    """Lines of a replica alone go in without sort keys (#28: the cost of a single
    stream); a replica whose pod turns up before they go out still merges with them."""
    merge = TimeMerge(["m", "w"])
    merge.opened("m")
    merge.add("m", lines("m", 1, 4, 6))
    merge.opened("w")
    merge.add("w", lines("w", 2, 5))
    merge.closed("m")
    merge.closed("w")
    taken = merge.take()
    assert texts(taken) == ["m 1", "w 2", "m 4", "w 5", "m 6"]
    assert taken is not None and taken.stamps == (b"06", b"05")


def test_a_replica_taken_alone_never_sorts_before_what_it_gave() -> None:
    """Taken alone (no keys), a replica still remembers its newest stamp: after a clock
    that stepped back its later lines come after another replica's older ones."""
    merge = TimeMerge(["m", "w"])
    merge.add("m", lines("m", 5, 6))
    taken = merge.take()
    assert texts(taken) == ["m 5", "m 6"] and taken is not None and taken.stamps == (b"06",)
    merge.add("m", lines("m", 4))  # the node's clock stepped back
    merge.add("w", lines("w", 3, 5))
    taken = merge.take()
    assert texts(taken) == ["w 3", "w 5", "m 4"]
    assert taken is not None and taken.stamps == (b"06", b"05")


def test_a_replica_alone_goes_out_as_read_when_stamps_are_kept() -> None:
    """Keeping stamps (the websocket's reader removes them), a replica alone goes out in
    the blocks it was read in, split into no lines; the stamp of the last line given
    (never before one given earlier) says where it ends; a replica turning up before they
    go out still merges with them."""
    merge = TimeMerge(["m", "w"], keep_stamps=True)
    merge.add("m", lines("m", 5, 6))
    merge.add("m", b"04 m 4")  # the end of a log without its newline; a clock back
    assert merge.pending("m") == 3 and merge.pending_bytes("m") == 21
    taken = merge.take()
    assert taken is not None and taken.text == "05 m 5\n06 m 6\n04 m 4\n"
    assert (taken.replicas, taken.sizes, taken.stamps) == (("m",), (21,), (b"04",))
    merge.add("m", lines("m", 7, 9))
    merge.opened("w")
    merge.add("w", lines("w", 8))
    merge.closed("w")
    taken = merge.take()
    assert owned(taken) == [("m", "07 m 7"), ("w", "08 w 8"), ("m", "09 m 9")]
    assert taken is not None and taken.sizes == (14, 7) and taken.stamps == (b"09", b"08")


def test_stamps_of_different_widths_are_each_removed_whole() -> None:
    merge = TimeMerge(["m"])
    # A shorter stamp whose text has a space where the wider stamps end.
    merge.add("m", b"05 wide\n6  gap\n07 Z end\n")
    assert texts(merge.take()) == ["wide", " gap", "Z end"]


def test_a_shorter_stamp_sorts_before_the_longer_ones_it_starts() -> None:
    merge = TimeMerge(["m", "w"])
    # m's stamps are one character wider than w's "5" except one, whose text starts
    # with a space where the wider stamps end.
    merge.add("m", b"1a x\n2  y\n3a z\n55 v\n")
    merge.add("w", b"5 w\n")
    assert texts(merge.take()) == ["x", " y", "z", "w", "v"]


def test_a_line_with_nothing_after_its_stamp_stays_an_empty_line() -> None:
    merge = TimeMerge(["m", "w"])
    merge.add("m", b"01\n03 m\n")
    merge.add("w", b"02 w\n")
    assert owned(merge.take()) == [("m", ""), ("w", "w"), ("m", "m")]


def test_a_stamped_merge_gives_each_lines_time_in_the_merged_order() -> None:
    """``stamped``: each line of a merged take gets its own time (seconds since the
    epoch, to the ms), in the take's line order, the texts as an unstamped merge gives
    them; a line whose stamp went back keeps its own stamp's time; no stamp, no time."""
    m = b"2026-11-22T04:25:01.123456789Z m 0\n2026-11-22T04:25:03.5Z m 1\n"
    w = b"2026-11-22T04:25:02Z w 0\n2026-11-22T04:25:02.000001Z\n2026-11-22T04:25:00Z back\n"
    plain, stamped = TimeMerge(["m", "w"]), TimeMerge(["m", "w"], stamped=True)
    for merge in (plain, stamped):
        merge.add("m", m)
        merge.add("w", w)
    unstamped, taken = plain.take(), stamped.take()
    assert taken is not None and unstamped is not None
    assert (taken.text, taken.owners) == (unstamped.text, unstamped.owners)
    assert unstamped.times is None
    base = 1_795_321_500  # 2026-11-22T04:25:00Z
    assert texts(taken) == ["m 0", "w 0", "", "back", "m 1"]
    assert taken.times == [base + 1.123, base + 2, base + 2, base, base + 3.5]
    # One replica's take (no owners) too; something that is no stamp has no time.
    alone = TimeMerge(["w"], stamped=True)
    alone.add("w", b"garbage line\n2026-11-22T04:25:04Z ok\n")
    taken = alone.take()
    assert taken is not None and taken.owners == ""
    assert taken.times == [None, base + 4]


def test_a_chunk_with_times_prints_each_line_after_its_time() -> None:
    """The plain-text log and ``display``: each line after its RFC 3339 time (UTC, ms),
    then its replica's tag; a line without a time has none."""
    base = 1_795_321_500
    chunk = LogChunk.merged(
        ("m", "w"), "a\nb\n\rc\n", "010", (1, 2), times=[base + 1.5, None, base + 2.25]
    )
    assert chunk.display(prefix=True) == (
        "2026-11-22T04:25:01.500Z m | a\n"
        "w | b\n"
        "2026-11-22T04:25:02.250Z m | \r2026-11-22T04:25:02.250Z m | c\n"
    )
    assert chunk.display(prefix=False) == (
        "2026-11-22T04:25:01.500Z a\nb\n2026-11-22T04:25:02.250Z \r2026-11-22T04:25:02.250Z c\n"
    )
    assert chunk.to_wire()["times"] == [base + 1.5, None, base + 2.25]
    assert "times" not in LogChunk.merged(("m", "w"), "a\n", "0", (1, 2)).to_wire()


def test_undecodable_bytes_are_replaced_and_counted_as_read() -> None:
    merge = TimeMerge(["m", "w"])
    merge.opened("m")
    merge.opened("w")
    read = b"01 \xc3\xa9\xff\n02 a\n02 b\n"  # "é" and a byte that is no UTF-8
    merge.add("m", read + b"05 x\n")
    merge.add("w", "03 \u2713\n".encode())
    taken = merge.take()  # up to w's newest: m's last line stays
    assert owned(taken) == [("m", "\xe9\ufffd"), ("m", "a"), ("m", "b"), ("w", "\u2713")]
    assert taken is not None and taken.sizes == (len(read), 7)
    merge.add("w", "04 \u2713\n06 y\n".encode())
    taken = merge.take()  # up to m's newest this time, counted from what is taken
    assert owned(taken) == [("w", "\u2713"), ("m", "x")]
    assert taken is not None and taken.sizes == (5, 7)


TEXTS = [b"a", b"", b"x y", b"  lead", b"\rbar 5%", b"\xc3\xa9t\xc3\xa9", b"\xff\xfe", b"\x1b[1mb"]


def random_logs(rng: random.Random) -> dict[str, bytes]:
    """Up to five replicas' logs: stamps never going back, many ties, each replica's
    stamps of its own width, now and then a line that is only a stamp."""
    logs = {}
    for i in range(rng.randint(1, 5)):
        width, stamp, rows = rng.choice([2, 3]), rng.randint(0, 5), []
        for _ in range(rng.randint(0, 60)):
            stamp += rng.choice([0, 0, 1, 2])
            head = b"%0*d" % (width, stamp)
            text = b"" if rng.random() < 0.05 else b" " + rng.choice(TEXTS)
            rows.append(head + text + b"\n")
        logs[f"r{i}"] = b"".join(rows)
    return logs


def reference(logs: dict[str, bytes]) -> list[tuple[str, str]]:
    """The merged log by definition: by stamp, ties in replica order, then each
    replica's own order."""
    lines = []
    for order, (replica, log) in enumerate(logs.items()):
        for index, line in enumerate(log.split(b"\n")[:-1]):
            stamp, _, text = line.partition(b" ")
            lines.append((stamp, order, index, replica, text.decode("utf-8", "replace")))
    return [(replica, text) for *_, replica, text in sorted(lines)]


def unstamped(given: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Lines given with their stamps as a reader sees them: the text after the first
    space (a line without one is a stamp alone)."""
    return [(replica, line.partition(" ")[2]) for replica, line in given]


@pytest.mark.parametrize("keep_stamps", [False, True])
@pytest.mark.parametrize("seed", range(60))
def test_backlogs_read_in_random_blocks_merge_as_the_reference_does(
    seed: int, keep_stamps: bool
) -> None:
    rng = random.Random(seed)
    logs = random_logs(rng)
    take_bytes = rng.choice([TAKE_BYTES, 100, 1])
    merge = TimeMerge(list(logs), take_bytes=take_bytes, keep_stamps=keep_stamps)
    queues: dict[str, list[bytes]] = {}  # each replica's log in a few blocks
    for replica, log in logs.items():
        merge.opened(replica)
        rows = log.split(b"\n")[:-1]
        rows = [row + b"\n" for row in rows]
        cuts = sorted(rng.sample(range(1, len(rows)), min(3, max(0, len(rows) - 1))))
        bounds = zip([0, *cuts], [*cuts, len(rows)], strict=True)
        queues[replica] = [b"".join(rows[a:b]) for a, b in bounds]
    given: list[tuple[str, str]] = []
    sizes = dict.fromkeys(logs, 0)
    newest: dict[str, bytes] = {}

    def take() -> None:
        """Once or until nothing more can go out."""
        once = rng.random() < 0.5
        while (taken := merge.take()) is not None:
            given.extend(owned(taken))
            for replica, size, stamp in zip(taken.replicas, taken.sizes, taken.stamps, strict=True):
                sizes[replica] += size
                assert stamp >= newest.get(replica, b"")
                newest[replica] = stamp
            if once:
                return

    while any(queues.values()):  # the replicas' blocks interleaved at random
        replica = rng.choice([r for r in logs if queues[r]])
        merge.add(replica, queues[replica].pop(0))
        if not queues[replica]:
            merge.closed(replica)
        if rng.random() < 0.5:
            take()
    for replica in logs:
        merge.closed(replica)
    while any(merge.pending(r) for r in logs):
        take()
    assert merge.take() is None
    assert (unstamped(given) if keep_stamps else given) == reference(logs)
    assert sizes == {r: len(log) for r, log in logs.items()}


def test_a_take_gives_about_take_bytes_and_the_rest_next() -> None:
    merge = TimeMerge(["a", "b", "c"], take_bytes=2000)
    logs = {
        r: b"".join(b"%06d %s line\n" % (i * 3 + j, r.encode()) for i in range(1000))
        for j, r in enumerate("abc")
    }
    for replica, log in logs.items():
        merge.add(replica, log)
    given = []
    while (taken := merge.take()) is not None:
        assert sum(taken.sizes) <= 2000 + 3 * 14  # a tie's line at most beyond
        given += owned(taken)
    assert len(given) == 3000 and given == reference(logs)


def test_a_merged_chunk_shows_as_its_runs_do() -> None:
    rng = random.Random(7)
    for _ in range(200):
        replicas = ("master-0", "worker-0", "worker-1")[: rng.randint(2, 3)]
        lines = [rng.choice(["a", "b c", "\rbar", "\x1b[1mx"]) for _ in range(rng.randint(1, 8))]
        owners = "".join(chr(OWNER_BASE + rng.randrange(len(replicas))) for _ in lines)
        if len(set(owners)) < 2:
            continue
        text = "\n".join(lines) + "\n"
        chunk = LogChunk.merged(replicas, text, owners, (1, 2, 3)[: len(replicas)])
        runs = chunk.runs()
        assert [line for _, text in runs for line in text[:-1].split("\n")] == lines
        assert all(r != q for (r, _), (q, _) in pairwise(runs))  # runs end at a change
        assert chunk.display(prefix=True) == "".join(
            LogChunk(r, text, 0).display(prefix=True) for r, text in runs
        )
        for options in ({"raw": True}, {"overwrite": True}, {}):
            merged, by_run = LogWriter(prefix=True, **options), LogWriter(prefix=True, **options)
            shown = merged.text(chunk) + merged.terminal.end()
            expected = "".join(by_run.text(LogChunk(r, text, 0)) for r, text in runs)
            assert shown == expected + by_run.terminal.end(), options


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
    master, worker, order = alternate(16000)  # ~600 KB each: several reads per replica
    jobdir = JobDir(backend.jobs_dir / "two")
    jobdir.log("master-0").write_bytes(master)
    jobdir.log("worker-0").write_bytes(worker)

    chunks = [chunk async for chunk in backend.logs("two")]
    assert [line for c in chunks for line in c.text.splitlines()] == order
    assert len(chunks) > 2 and any(c.owners for c in chunks)  # both replicas' lines in one

    # A reconnect after any chunk: the rest, from the offsets seen, neither lost nor repeated.
    for seen_chunks in range(1, len(chunks)):
        since: dict[str, int] = {}
        for chunk in chunks[:seen_chunks]:
            since.update(chunk.resume_offsets())
        seen = [line for c in chunks[:seen_chunks] for line in c.text.splitlines()]
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
