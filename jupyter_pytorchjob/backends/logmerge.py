"""Several replicas' timestamped lines merged into one time order (pure, no I/O).

Both backends read each replica's log in blocks of whole ``<stamp> <text>`` lines and
``add`` them here; ``take`` gives back every line it is sure of the order of, all
replicas' together in time order: up to the *horizon*, the newest stamp every replica
whose backlog is still being read (``opened``) has reached. A replica whose reader has
caught up (``closed``: nothing more to read now) holds nothing back, so once every
backlog is read, lines go out as they arrive. Ties keep each replica's own order, then
the order of the replicas.

No per-line Python code runs: ``add`` splits a block and slices each line's stamp
(a sort key) in C-speed ``split``/``map``; ``take`` cuts each replica's keys at the
horizon with ``bisect`` and merges what goes out with one stable ``sorted`` of the
line indices (Timsort merges the replicas' sorted runs), whose order then gives the
texts and each line's replica. Replicas whose lines alternate line by line (ranks
printing in step) cost what replicas writing in bursts do: one merged piece per
``take``, not one per run of one replica's lines. A replica whose clock stepped back
keeps its own order: each of its lines sorts as the newest stamp it has had so far,
and the stamps ``take`` gives for it never go back.

A replica alone (no other with lines pending or being read: a single-node job, one
replica asked for) needs no keys: its lines go out in their own order, only the stamps
cut off (``_take_alone``); keys are made for its pending lines once another replica
turns up.

A merge made ``stamped`` also gives each line's time (``Taken.times``, from the stamps
as read); by default none is parsed: the hot path only checks the flag.

``lines_after`` drops the lines of a log read again (a reconnect, a resume) that were
already given out, comparing the kubelet's stamps as bytes.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, repeat
from operator import add, itemgetter, methodcaller

from ..job.loglines import OWNER_BASE
from .timestamps import stamp_seconds

# What one ``take`` gives at most, about: a chunk stays bounded however many replicas
# are merged (as a websocket message's text is: ``handlers.BATCH_BYTES``).
TAKE_BYTES = 256 * 1024

_PARTITION = methodcaller("partition", " ")
_STAMP = itemgetter(0)
_TEXT = itemgetter(2)
_MARK = itemgetter(-1)


@dataclass(frozen=True)
class Taken:
    """Lines merged in time order: ``text`` their texts (stamps removed), each ending
    with a newline; ``owners`` one character per line, ``chr(OWNER_BASE + i)`` for a
    line of ``replicas[i]`` (empty when all are ``replicas[0]``'s); per replica, the
    bytes its lines took in the log as read (``sizes``) and its last stamp
    (``stamps``); from a ``stamped`` merge, each line's time in seconds since the epoch
    (``times``, None for a line without a stamp)."""

    text: str
    owners: str
    replicas: tuple[str, ...]
    sizes: tuple[int, ...]
    stamps: tuple[bytes, ...]
    times: list[float | None] | None = None
    stamped: bool = False  # each line still starts with its stamp (``keep_stamps``)


class TimeMerge:
    """The pending lines of every replica and what can be given out in order."""

    def __init__(
        self,
        replicas: Sequence[str] = (),
        *,
        take_bytes: int = TAKE_BYTES,
        stamped: bool = False,
        keep_stamps: bool = False,
    ) -> None:
        self.order = {r: i for i, r in enumerate(replicas)}
        self.take_bytes = take_bytes
        self.stamped = stamped  # each take with its lines' times
        # Each line given out as read, ``<stamp> <text>``: its reader removes the stamp.
        self.keep_stamps = keep_stamps and not stamped
        # Per replica, its pending lines as read (without their newline; undecodable
        # bytes kept as surrogates, so that sizes stay exact) and their sort keys: the
        # stamp, a space (below every stamp character: a shorter stamp sorts first) and
        # the replica's mark (ties in replica order), never going back.
        # The lines from ``start`` on are pending (those before it were given out: the
        # lists shrink when lines are added, not at every take).
        self.lines: dict[str, list[str]] = {}
        self.keys: dict[str, list[str]] = {}
        self.start: dict[str, int] = {}
        self.size: dict[str, int] = {}  # the bytes its pending lines took
        # The stamp width of every pending line of the replica (0: not all alike).
        self.width: dict[str, int] = {}
        self.ascii: dict[str, bool] = {}  # whether they are all ASCII (a byte a character)
        self.newest: dict[str, str] = {}  # the newest key added, per replica
        self.reading: set[str] = set()
        # Keeping stamps, a replica alone keeps its blocks as read, not even split into
        # lines (each ends with a newline), and how many lines they hold.
        self.raw: dict[str, list[tuple[bytes, int]]] = {}
        self.raw_lines: dict[str, int] = {}

    def opened(self, replica: str) -> None:
        """The replica's backlog is being read: nothing later than it goes out first."""
        self.reading.add(replica)

    def closed(self, replica: str) -> None:
        """The replica's reader has caught up (or ended): it holds nothing back."""
        self.reading.discard(replica)

    def pending(self, replica: str) -> int:
        """How many of the replica's lines are waiting to go out."""
        return (
            len(self.lines.get(replica, ()))
            - self.start.get(replica, 0)
            + self.raw_lines.get(replica, 0)
        )

    def pending_bytes(self, replica: str) -> int:
        """How many bytes of the replica's log its pending lines took."""
        return self.size.get(replica, 0)

    def add(self, replica: str, block: bytes) -> None:
        """Whole lines of one replica (``<stamp> <text>\\n`` each), in its order."""
        if not block:
            return
        self.order.setdefault(replica, len(self.order))
        alone = self._alone(replica)  # of the others: what follows leaves them as they are
        if self.keep_stamps and alone and not self._split(replica):
            self._add_raw(replica, block)
            return
        self._split_raw(replica)
        size = len(block)
        if block.endswith(b"\n"):
            block = block[:-1]
        else:
            size += 1  # as if it had its newline (the line's end is read next)
        text = block.decode("utf-8", "surrogateescape")
        lines = text.split("\n")
        mark = chr(OWNER_BASE + self.order[replica])
        # Alone (no other replica's line pending or to come first), the lines need no
        # sort keys: they go out in their own order (``_take_alone``), keyed only if
        # another replica turns up before they are taken.
        alone = alone and not self.stamped and not self._keyed(replica)
        keys, width = ([], _width(lines)) if alone else _keys(lines, mark)
        if self.pending(replica):
            if width != self.width[replica]:
                width = 0
            start = self.start[replica]
            self.lines[replica] = self.lines[replica][start:] + lines
            self.keys[replica] = self.keys[replica][start:]
            self.size[replica] += size
            self.ascii[replica] = self.ascii[replica] and text.isascii()
        else:
            self.lines[replica], self.keys[replica] = lines, []
            self.size[replica] = size
            self.ascii[replica] = text.isascii()
        self.start[replica] = 0
        self.width[replica] = width
        if not alone:
            self._add_keys(replica, keys)

    def _add_raw(self, replica: str, block: bytes) -> None:
        """A block kept as it is (a replica alone, stamps kept): no line is split."""
        if not block.endswith(b"\n"):
            block += b"\n"  # as if it had its newline (the line's end is read next)
        count = block.count(b"\n")
        self.raw.setdefault(replica, []).append((block, count))
        self.raw_lines[replica] = self.raw_lines.get(replica, 0) + count
        self.size[replica] = self.size.get(replica, 0) + len(block)
        self.lines.setdefault(replica, [])
        self.start.setdefault(replica, 0)

    def _split(self, replica: str) -> bool:
        """Whether the replica has lines pending as lines (not raw blocks)."""
        return len(self.lines.get(replica, ())) > self.start.get(replica, 0)

    def _split_raw(self, replica: str) -> None:
        """The replica's raw blocks as lines (another replica turned up)."""
        blocks = self.raw.pop(replica, None)
        if blocks:
            self.raw_lines.pop(replica)
            data = b"".join(block for block, _ in blocks)
            self.size[replica] -= len(data)
            self.add(replica, data)

    def _alone(self, replica: str) -> bool:
        """Whether no other replica has lines pending or is being read."""
        return self.reading <= {replica} and all(
            r == replica or not self.pending(r) for r in self.lines
        )

    def _keyed(self, replica: str) -> bool:
        """Whether the replica's pending lines have their sort keys (all or none do)."""
        return len(self.keys.get(replica, ())) > self.start.get(replica, 0)

    def _add_keys(self, replica: str, keys: list[str]) -> None:
        """Append the sort keys of the replica's newest lines: a clock that stepped back
        makes each line sort as the newest stamp so far."""
        newest = self.newest.get(replica, "")
        if keys[0] < newest or keys != sorted(keys):
            keys = list(accumulate(keys, max, initial=newest))[1:]
        self.keys[replica] += keys
        self.newest[replica] = keys[-1]

    def _key_pending(self, replica: str) -> None:
        """Sort keys for a replica's pending lines added without (while it was alone)."""
        start = self.start[replica]
        lines = self.lines[replica][start:]
        mark = chr(OWNER_BASE + self.order[replica])
        self.lines[replica], self.keys[replica], self.start[replica] = lines, [], 0
        self._add_keys(replica, _keys(lines, mark)[0])

    def take(self) -> Taken | None:
        """The lines that can go out now, in time order, about ``take_bytes`` at most
        (take again for the rest); None while a replica being read has no line pending
        (its next line may be the oldest)."""
        starts, all_of = self.start, self.keys
        pending = {r: self.pending(r) for r in self.lines}
        waiting = [r for r, count in pending.items() if count]
        if len(waiting) == 1 and self.reading <= set(waiting) and not self._keyed(waiting[0]):
            if self.raw.get(waiting[0]):
                return self._take_raw(waiting[0])
            return self._take_alone(waiting[0], pending[waiting[0]])
        for replica in waiting:
            self._split_raw(replica)
            if not self._keyed(replica):
                self._key_pending(replica)
        pending = {r: len(lines) - starts[r] for r, lines in self.lines.items()}
        horizon: str | None = None
        for replica in self.reading:
            if not pending.get(replica):
                return None
            if horizon is None or all_of[replica][-1] < horizon:
                horizon = all_of[replica][-1]
        pending = {r: count for r, count in pending.items() if count}
        # About ``take_bytes`` at most: each replica's share, counted in its lines of
        # average size, lowers the horizon to its last line that fits (one at least).
        share = self.take_bytes // max(1, len(pending))
        for replica, count in pending.items():
            size = self.size[replica]
            if size > share:
                fits = max(1, count * share // size)
                last = all_of[replica][starts[replica] + fits - 1]
                if fits < count and (horizon is None or last < horizon):
                    horizon = last
        replicas: list[str] = []
        sizes: list[int] = []
        stamps: list[bytes] = []
        runs: dict[str, Iterator[str]] = {}  # each one's texts, by its mark
        stamp_runs: dict[str, Iterator[str]] = {}  # each one's stamps (``stamped``)
        all_keys: list[str] = []
        widths = set()
        ascii = True
        for replica in sorted(pending, key=self.order.__getitem__):
            lines, keys, start = self.lines[replica], self.keys[replica], self.start[replica]
            end = len(keys)
            if horizon is not None and keys[-1] > horizon:
                end = bisect_right(keys, horizon, start)
                if end == start:
                    continue
            if end == len(keys):
                size = self.size[replica]
                self.lines[replica], self.keys[replica], self.start[replica] = [], [], 0
                taken, taken_keys = (lines[start:], keys[start:]) if start else (lines, keys)
            else:
                taken, taken_keys = lines[start:end], keys[start:end]
                self.start[replica] = end
                # Counted on the smaller side: often what stays (reading a backlog).
                if len(keys) - end < end - start:
                    size = self.size[replica] - _size(lines[end:], self.ascii[replica])
                else:
                    size = _size(taken, self.ascii[replica])
            self.size[replica] -= size
            replicas.append(replica)
            sizes.append(size)
            stamps.append(taken_keys[-1][:-2].encode("utf-8", "surrogateescape"))
            ascii = ascii and self.ascii[replica]
            width = self.width[replica]
            widths.add(width)
            runs[_MARK(taken_keys[0])] = iter(taken) if self.keep_stamps else _texts(taken, width)
            if self.stamped:  # the stamps as read (a key may be a newer one's)
                stamp_runs[_MARK(taken_keys[0])] = map(_STAMP, map(_PARTITION, taken))
            all_keys += taken_keys
        if not replicas:
            return None
        stamps_in_order: Iterable[str] = ()
        if len(replicas) == 1:
            owners = ""
            texts = list(*runs.values())
            if self.stamped:
                stamps_in_order = next(iter(stamp_runs.values()))
        else:
            # The keys in time order give each line's mark; each mark the next text of
            # its replica's, which keep their own order.
            all_keys.sort()
            width = widths.pop() if len(widths) == 1 else 0
            if width:
                marks = "".join(all_keys)[width + 1 :: width + 2]
            else:
                marks = "".join(map(_MARK, all_keys))
            texts = list(map(next, map(runs.__getitem__, marks)))
            local = {ord(mark): OWNER_BASE + i for i, mark in enumerate(runs)}
            owners = marks.translate(local)
            if self.stamped:
                stamps_in_order = map(next, map(stamp_runs.__getitem__, marks))
        times = stamp_seconds(stamps_in_order) if self.stamped else None
        return Taken(
            _joined(texts, ascii),
            owners,
            tuple(replicas),
            tuple(sizes),
            tuple(stamps),
            times,
            self.keep_stamps,
        )

    def _take_alone(self, replica: str, count: int) -> Taken:
        """The lines of the only replica with lines pending (and no other being read),
        in its order, about ``take_bytes`` at most: no keys, no sort."""
        lines, start, size = self.lines[replica], self.start[replica], self.size[replica]
        ascii = self.ascii[replica]
        fits = count if size <= self.take_bytes else max(1, count * self.take_bytes // size)
        if fits == count:
            self.lines[replica], self.keys[replica], self.start[replica] = [], [], 0
            taken = lines[start:] if start else lines
        else:
            end = start + fits
            taken = lines[start:end]
            self.start[replica] = end
            if count - fits < fits:
                size -= _size(lines[end:], ascii)
            else:
                size = _size(taken, ascii)
        self.size[replica] -= size
        width = self.width[replica]
        stamp = self._given(replica, taken[-1][:width] if width else _STAMP(_PARTITION(taken[-1])))
        texts = list(taken) if self.keep_stamps else list(_texts(taken, width))
        return Taken(
            _joined(texts, ascii), "", (replica,), (size,), (stamp,), stamped=self.keep_stamps
        )

    def _take_raw(self, replica: str) -> Taken:
        """The raw blocks of the only replica with lines pending, as they were read, about
        ``take_bytes`` at most (one block at least): nothing done per line."""
        blocks = self.raw[replica]
        taken, size, lines = 1, len(blocks[0][0]), blocks[0][1]
        while taken < len(blocks) and size + len(blocks[taken][0]) <= self.take_bytes:
            size += len(blocks[taken][0])
            lines += blocks[taken][1]
            taken += 1
        data = b"".join(block for block, _ in blocks[:taken])
        del blocks[:taken]
        self.raw_lines[replica] -= lines
        self.size[replica] -= size
        last = data.rfind(b"\n", 0, len(data) - 1) + 1
        space = data.find(b" ", last, len(data) - 1)
        stamp = self._given(replica, _text(data[last : space if space >= 0 else len(data) - 1]))
        text = data.decode("utf-8", "replace")
        return Taken(text, "", (replica,), (size,), (stamp,), stamped=True)

    def _given(self, replica: str, last: str) -> bytes:
        """The stamp to give for a replica alone whose last line given is stamped
        ``last``: never before one given earlier (a clock that stepped back), as resuming
        starts from it; kept as its newest key."""
        newest = max(
            self.newest.get(replica, ""), f"{last} {chr(OWNER_BASE + self.order[replica])}"
        )
        self.newest[replica] = newest
        return newest[:-2].encode("utf-8", "surrogateescape")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _joined(texts: list[str], ascii: bool) -> str:
    """The lines' texts as one, each with its newline."""
    texts.append("")
    text = "\n".join(texts)
    if not ascii:  # what could not be decoded: replaced now, counted as read before
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def _width(lines: list[str]) -> int:
    """The stamps' width where all are alike (as the pump's and the kubelet's are),
    else 0."""
    width = lines[0].find(" ")
    if width > 0:
        heads = "".join(map(itemgetter(slice(width + 1)), lines))
        count = len(lines)
        if (
            len(heads) == count * (width + 1)
            and heads.count(" ") == count
            and heads[width :: width + 1] == " " * count
        ):
            return width
    return 0


def _keys(lines: list[str], mark: str) -> tuple[list[str], int]:
    """Each line's sort key (its stamp, a space and ``mark``; for a line without a
    space, the whole line) and the stamps' width where all are alike (as the pump's and
    the kubelet's are), else 0."""
    width = lines[0].find(" ")
    if width > 0:
        keys = list(map(add, map(itemgetter(slice(width + 1)), lines), repeat(mark)))
        heads = "".join(keys)
        count = len(lines)
        if (
            len(heads) == count * (width + 2)
            and heads.count(" ") == count
            and heads[width :: width + 2] == " " * count
        ):
            return keys, width
    stamps = map(_STAMP, map(_PARTITION, lines))
    return list(map(add, stamps, repeat(" " + mark))), 0


def _size(lines: list[str], ascii: bool) -> int:
    """The bytes ``lines`` took in the log, newlines included."""
    joined = "\n".join(lines)  # a copy of the characters: cheaper than a len() a line
    return (len(joined) if ascii else len(joined.encode("utf-8", "surrogateescape"))) + (
        1 if lines else 0
    )


def _texts(lines: list[str], width: int) -> Iterator[str]:
    """The lines without their stamps: cut at ``width`` where all stamps are that wide."""
    if width:
        return map(itemgetter(slice(width + 1, None)), lines)
    return map(_TEXT, map(_PARTITION, lines))


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
