"""Several replicas' timestamped lines merged into one time order (pure, no I/O).

Both backends read each replica's log in blocks of whole ``<stamp> <text>`` lines and
``add`` them here; ``take`` gives back runs of one replica's lines, oldest first, as far
as it is sure of the order: up to the *horizon*, the newest stamp every replica whose
backlog is still being read (``opened``) has reached. A replica whose reader has caught
up (``closed``: nothing more to read now) holds nothing back, so once every backlog is
read, lines go out as they arrive. Ties keep each replica's own order, then the order of
the replicas.

A replica's pending lines stay the bytes they were read as: where a run of one replica's
lines ends is found by bisecting those bytes on the stamps at a few line starts (the
next replica's head stamp against the run's), so stamps are read per run, not per line;
the per-line work is C-speed ``split``/``partition`` of what goes out. The bisection
takes each replica's stamps as never going back; one whose clock stepped back keeps its
own order, its lines around the step placed among the others' by the stamps probed, and
the stamps ``take`` gives for it never go back.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from operator import itemgetter, methodcaller

_PARTITION = methodcaller("partition", b" ")
_TEXT = itemgetter(2)


class TimeMerge:
    """The pending lines of every replica and what can be given out in order."""

    def __init__(self, replicas: Sequence[str] = ()) -> None:
        self.order = {r: i for i, r in enumerate(replicas)}
        self.counts: dict[str, int] = {}  # replicas that had lines, how many are pending
        self.buffers: dict[str, bytes] = {}  # each one's pending lines from ``starts``
        self.starts: dict[str, int] = {}
        # Blocks added since the last ``take``, joined to the buffer there: a reader ahead
        # of the consumer costs a copy per take, not one of all it holds per block.
        self.added: dict[str, list[bytes]] = {}
        self.last: dict[str, bytes] = {}  # the newest stamp added, per replica
        self.given: dict[str, bytes] = {}  # the newest stamp given out, per replica
        self.reading: set[str] = set()
        self.runs: dict[str, int] = {}  # the bytes of each one's last run: where to look

    def opened(self, replica: str) -> None:
        """The replica's backlog is being read: nothing later than it goes out first."""
        self.reading.add(replica)

    def closed(self, replica: str) -> None:
        """The replica's reader has caught up (or ended): it holds nothing back."""
        self.reading.discard(replica)

    def pending(self, replica: str) -> int:
        """How many of the replica's lines are waiting to go out."""
        return self.counts.get(replica, 0)

    def add(self, replica: str, block: bytes) -> None:
        """Whole lines of one replica (``<stamp> <text>\\n`` each), in its order."""
        if not block:
            return
        if not block.endswith(b"\n"):
            block += b"\n"
        self.order.setdefault(replica, len(self.order))
        if self.counts.get(replica):
            self.added.setdefault(replica, []).append(block)
        else:
            self.buffers[replica], self.starts[replica] = block, 0
        self.counts[replica] = self.counts.get(replica, 0) + block.count(b"\n")
        stamp = _stamp_at(block, block.rfind(b"\n", 0, len(block) - 1) + 1)
        before = self.last.get(replica)
        self.last[replica] = stamp if before is None or stamp > before else before

    def take(self) -> list[tuple[str, bytes, bytes, int]]:
        """The lines that can go out now, as runs ``(replica, text, last stamp, size)``:
        ``text`` their texts each ending with a newline, ``size`` the bytes they took in
        the log as read. Nothing while a replica being read has no line pending (its
        next line may be the oldest)."""
        for replica, blocks in self.added.items():
            held = self.buffers[replica][self.starts[replica] :]
            self.buffers[replica], self.starts[replica] = b"".join([held, *blocks]), 0
        self.added.clear()
        horizon: bytes | None = None
        for replica in self.reading:
            if not self.counts.get(replica):
                return []
            if horizon is None or self.last[replica] < horizon:
                horizon = self.last[replica]
        heads = []
        for replica, count in self.counts.items():
            if count:
                head = _stamp_at(self.buffers[replica], self.starts[replica])
                if horizon is None or head <= horizon:
                    heads.append((head, self.order[replica], replica))
        heapq.heapify(heads)
        out = []
        buffers, starts, counts, runs, given = (
            self.buffers,
            self.starts,
            self.counts,
            self.runs,
            self.given,
        )
        while heads:
            head, order, replica = heapq.heappop(heads)
            # Its lines up to the next replica's head (ties: the replica first in order),
            # and none later than the horizon.
            limit, inclusive = horizon, True
            if heads and (limit is None or heads[0][0] <= limit):
                limit, inclusive = heads[0][0], heads[0][1] > order
            data, start = buffers[replica], starts[replica]
            end = data.find(b"\n", start) + 1
            following = _stamp_at(data, end, len(head)) if end < len(data) else None
            if following is not None and (
                limit is None or (following <= limit if inclusive else following < limit)
            ):
                # More than one line (where replicas alternate line by line, one is all).
                if limit is not None:
                    end = _cut(data, end, limit, inclusive, start + runs.get(replica, 0))
                else:
                    end = len(data)
                runs[replica] = end - start
                lines = data[start : end - 1].split(b"\n")
                last = _stamp_at(data, end - len(lines[-1]) - 1, len(head))
                following = _stamp_at(data, end, len(head)) if end < len(data) else None
                text = _texts(lines, len(last))
                taken = len(lines)
            else:  # one line: ``head`` is its stamp, read up to its first space
                cut = start + len(head) + 1
                text, last, taken = data[cut:end] if cut < end else b"\n", head, 1
            before = given.get(replica)
            if before is not None and last < before:
                last = before
            given[replica] = last
            out.append((replica, text, last, end - start))
            count = counts[replica] = counts[replica] - taken
            if count:
                starts[replica] = end
                if following is not None and (horizon is None or following <= horizon):
                    heapq.heappush(heads, (following, order, replica))
            else:
                buffers[replica], starts[replica] = b"", 0
        return out


def lines_after(data: bytes, stamp: bytes, seen: int | None) -> bytes | None:
    """``data`` (whole ``<stamp> <text>`` lines of one log, in its order) without the
    lines already given out: those before the first stamped ``stamp``, and of those
    stamped ``stamp`` the first ``seen`` (all of them when None). Found with a ``find``
    (a bisection on the stamps where no line carries ``stamp``) and one per line at
    ``stamp``, not a parse per line; None where the first or the last line's stamp is
    not ``stamp``'s width (the stamps do not compare as bytes)."""
    width = len(stamp)
    final = data.rfind(b"\n", 0, len(data) - 1) + 1
    heads = data[: width + 1], data[final : final + width + 1]
    if any(len(h) != width + 1 or h[width:] != b" " or h.find(b" ") != width for h in heads):
        return None
    if heads[0][:width] > stamp:
        return data
    if heads[1][:width] < stamp:
        return b""
    at = stamp + b" "
    if data.startswith(at):
        start = 0
    else:
        found = data.find(b"\n" + at)
        start = found + 1 if found >= 0 else _cut(data, 0, stamp, False, 0)
    if seen is None:
        return (
            data[_cut(data, start, stamp, True, start) :]
            if data.startswith(at, start)
            else data[start:]
        )
    while seen and data.startswith(at, start):
        start = data.find(b"\n", start) + 1 or len(data)
        seen -= 1
    return data[start:]


def _texts(lines: list[bytes], width: int) -> bytes:
    """The lines without their stamps, each ending with a newline. Where every stamp is
    ``width`` wide (as the pump's and the kubelet's are), cut at that width: each line's
    first ``width + 1`` bytes, joined, hold exactly one space per line, every one at
    ``width``."""
    heads = b"".join(map(itemgetter(slice(width + 1)), lines))
    count = len(lines)
    if (
        len(heads) == count * (width + 1)
        and heads.count(b" ") == count
        and heads[width :: width + 1] == b" " * count
    ):
        texts = list(map(itemgetter(slice(width + 1, None)), lines))
    else:
        texts = list(map(_TEXT, map(_PARTITION, lines)))
    texts.append(b"")
    return b"\n".join(texts)


def _stamp_at(data: bytes, start: int, width: int = 0) -> bytes:
    """The stamp of the line starting at ``start`` (the whole line if it has no space);
    read at once if it is ``width`` wide."""
    if width:
        head = data[start : start + width + 1]
        if head.find(b" ") == width and b"\n" not in head:
            return head[:width]
    end = data.find(b"\n", start)
    space = data.find(b" ", start, end)
    return data[start : space if space >= 0 else end]


def _cut(data: bytes, low: int, limit: bytes, inclusive: bool, guess: int) -> int:
    """Where a run of lines ends (``low``: the start of a line taken): the first line
    stamped after ``limit`` (or at it, unless ``inclusive``), bisecting between a taken
    line's start and a line not taken's start (or the end), first around ``guess`` (a
    position: runs of one replica tend to be alike)."""
    taken = limit.__ge__ if inclusive else limit.__gt__
    width = len(limit)

    def stamp_at(line: int) -> bytes:
        return _stamp_at(data, line, width)

    high = len(data)
    if taken(stamp_at(data.rfind(b"\n", 0, high - 1) + 1)):
        return high  # all of them (the common case once the backlogs are read)
    following = data.find(b"\n", low) + 1
    if following >= high or not taken(stamp_at(following)):
        return following
    low = following
    if low < guess < high:
        line = data.find(b"\n", guess - 1, high - 1) + 1
        if line > low:
            if taken(stamp_at(line)):
                low = line
                following = data.find(b"\n", low) + 1
                if following >= high or not taken(stamp_at(following)):
                    return following
                low = following
            else:
                high = line
                before = data.rfind(b"\n", low, high - 1) + 1
                if before <= low or taken(stamp_at(before)):
                    return high
                high = before
    while True:
        middle = (low + high) // 2
        newline = data.find(b"\n", middle, high - 1)
        if newline < 0:
            newline = data.rfind(b"\n", low, middle)
            if newline < 0:
                return high
        if taken(stamp_at(newline + 1)):
            low = newline + 1
        else:
            high = newline + 1
