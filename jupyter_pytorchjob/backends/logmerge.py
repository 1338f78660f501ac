"""Several replicas' timestamped lines merged into one time order (pure, no I/O).

Both backends read each replica's log in blocks of whole ``<stamp> <text>`` lines and
``add`` them here; ``take`` gives back runs of one replica's lines, oldest first, as far
as it is sure of the order: up to the *horizon*, the newest stamp every replica whose
backlog is still being read (``opened``) has reached. A replica whose reader has caught
up (``closed``: nothing more to read now) holds nothing back, so once every backlog is
read, lines go out as they arrive. Ties keep each replica's own order, then the order of
the replicas. A replica whose stamps go back in time (a clock stepped back) keeps its own
order: its stamps are taken as never lower than the one before.

The per-line work runs at C speed (``split``, ``partition`` and the sort through
``map``/``itemgetter``); Python code runs once per block and once per run of one
replica's lines, which is every line only where replicas alternate line by line.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import groupby, repeat
from operator import itemgetter, le, methodcaller

_PARTITION = methodcaller("partition", b" ")
_STAMP = itemgetter(0)
_TEXT = itemgetter(2)
_REPLICA = itemgetter(1)


class TimeMerge:
    """The pending lines of every replica and what can be given out in order.

    ``offset_of(replica, stamp, size)`` makes a run's resume offset from its last line's
    stamp and the run's size in bytes as read (lines, stamps and newlines): the local
    backend counts bytes, the Kubernetes backend uses the stamp."""

    def __init__(self, replicas: Sequence[str] = ()) -> None:
        self.order = {r: i for i, r in enumerate(replicas)}
        self.stamps: dict[str, list[bytes]] = {}
        self.texts: dict[str, list[bytes]] = {}
        self.sizes: dict[str, list[int]] = {}
        self.last: dict[str, bytes] = {}  # the newest stamp added, per replica
        self.reading: set[str] = set()

    def opened(self, replica: str) -> None:
        """The replica's backlog is being read: nothing later than it goes out first."""
        self.reading.add(replica)

    def closed(self, replica: str) -> None:
        """The replica's reader has caught up (or ended): it holds nothing back."""
        self.reading.discard(replica)

    def pending(self, replica: str) -> int:
        return len(self.stamps.get(replica, ()))

    def add(self, replica: str, block: bytes) -> None:
        """Whole lines of one replica (``<stamp> <text>\\n`` each), in its order."""
        if not block:
            return
        lines = block[:-1].split(b"\n") if block.endswith(b"\n") else block.split(b"\n")
        parts = list(map(_PARTITION, lines))
        stamps = list(map(_STAMP, parts))
        before = self.last.get(replica)
        if (before is not None and stamps[0] < before) or not all(map(le, stamps, stamps[1:])):
            stamps = _never_back(stamps, before)
        if replica not in self.stamps:
            self.order.setdefault(replica, len(self.order))
            self.stamps[replica], self.texts[replica], self.sizes[replica] = [], [], []
        self.stamps[replica] += stamps
        self.texts[replica] += map(_TEXT, parts)
        self.sizes[replica] += map(len, lines)
        self.last[replica] = stamps[-1]

    def take(self) -> list[tuple[str, bytes, bytes, int]]:
        """The lines that can go out now, as runs ``(replica, text, last stamp, size)``:
        ``text`` their texts each ending with a newline, ``size`` the bytes they took in
        the log as read. Nothing while a replica being read has no line pending (its
        next line may be the oldest)."""
        horizon: bytes | None = None
        for replica in self.reading:
            stamps = self.stamps.get(replica)
            if not stamps:
                return []
            if horizon is None or stamps[-1] < horizon:
                horizon = stamps[-1]
        counts = {}
        for replica, stamps in sorted(self.stamps.items(), key=lambda kv: self.order[kv[0]]):
            count = len(stamps) if horizon is None else bisect_right(stamps, horizon)
            if count:
                counts[replica] = count
        if len(counts) == 1:
            runs = list(counts.items())
        else:
            tagged: list[tuple[bytes, str]] = []
            for replica, count in counts.items():
                tagged += zip(self.stamps[replica][:count], repeat(replica))
            tagged.sort(key=_STAMP)  # stable: ties keep the replicas' and their own order
            runs = [(r, len(list(group))) for r, group in groupby(map(_REPLICA, tagged))]
        out = []
        used = dict.fromkeys(counts, 0)
        for replica, count in runs:
            start = used[replica]
            end = used[replica] = start + count
            texts = self.texts[replica][start:end]
            texts.append(b"")
            size = sum(self.sizes[replica][start:end]) + count
            out.append((replica, b"\n".join(texts), self.stamps[replica][end - 1], size))
        for replica, count in counts.items():
            del self.stamps[replica][:count], self.texts[replica][:count]
            del self.sizes[replica][:count]
        return out


def _never_back(stamps: list[bytes], before: bytes | None) -> list[bytes]:
    """``stamps`` with each one at least the one before (a clock that stepped back)."""
    out = []
    for stamp in stamps:
        before = stamp if before is None or stamp > before else before
        out.append(before)
    return out
