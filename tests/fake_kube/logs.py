"""Per-container log buffers: one bytearray per container instance, with write times."""

from __future__ import annotations

import bisect
import time
from datetime import datetime, timezone


def rfc3339(ns: int | None = None, *, nano: bool = False) -> str:
    """``2024-05-01T12:00:00Z`` (or with nanoseconds, as the kubelet stamps log lines)."""
    ns = time.time_ns() if ns is None else ns
    base = datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S"
    )
    return f"{base}.{ns % 1_000_000_000:09d}Z" if nano else f"{base}Z"


def parse_rfc3339(text: str) -> int:
    """RFC 3339 (``Z`` or offset, optional fraction) → ns since the epoch."""
    text = text.strip().replace("z", "Z")
    frac_ns = 0
    if "." in text:
        head, rest = text.split(".", 1)
        digits = "".join(c for c in rest if c.isdigit())
        tail = rest[len(digits) :]
        frac_ns = int((digits + "000000000")[:9])
        text = head + tail
    stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(stamp.timestamp()) * 1_000_000_000 + frac_ns


class LogInstance:
    """The output of one run of one container. ``closed`` once that run has ended."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.offsets: list[int] = []  # start offset of every write
        self.times: list[int] = []  # its time, ns
        self.closed = False

    def append(self, data: bytes, at_ns: int | None = None) -> None:
        if data:
            self.offsets.append(len(self.data))
            self.times.append(time.time_ns() if at_ns is None else at_ns)
            self.data.extend(data)

    def time_at(self, offset: int) -> int:
        index = bisect.bisect_right(self.offsets, offset) - 1
        return self.times[max(index, 0)] if self.times else time.time_ns()

    def start_offset(self, *, since_ns: int | None, tail_lines: int | None) -> int:
        """Where the backlog starts for ``sinceTime``/``sinceSeconds`` and ``tailLines``."""
        start = 0
        if since_ns is not None:
            index = bisect.bisect_left(self.times, since_ns)
            start = self.offsets[index] if index < len(self.offsets) else len(self.data)
            # A line is as old as the write that completed it (``render``): one that began
            # in an earlier write is still after sinceTime, from its start.
            start = self.data.rfind(b"\n", 0, start) + 1
        if tail_lines is None:
            return start
        end = len(self.data)
        if tail_lines <= 0:
            return end
        pos = end - 1 if end and self.data[end - 1] == 0x0A else end
        for _ in range(tail_lines):
            newline = self.data.rfind(b"\n", start, pos)
            if newline < 0:
                return start
            pos = newline
        return pos + 1

    def render(self, start: int, end: int, *, timestamps: bool) -> bytes:
        """Bytes ``[start, end)``; with ``timestamps`` every line that starts there is stamped."""
        chunk = bytes(self.data[start:end])
        if not timestamps or not chunk:
            return chunk
        out = []
        pos = start
        at_line_start = start == 0 or self.data[start - 1] == 0x0A
        # A line's time is that of the write that completed it, as the CRI stamps a line
        # once it has read all of it (an unfinished one: its latest write). The lines of
        # one write share its time: formatted once per write (a benchmark reads logs of
        # millions of lines through here).
        stamps: dict[int, bytes] = {}
        for line in chunk.splitlines(keepends=True):
            if at_line_start:
                newline = self.data.find(b"\n", pos)
                ns = self.time_at(newline if newline >= 0 else len(self.data) - 1)
                stamp = stamps.get(ns)
                if stamp is None:
                    stamp = stamps[ns] = rfc3339(ns, nano=True).encode() + b" "
                out.append(stamp)
            out.append(line)
            pos += len(line)
            at_line_start = line.endswith(b"\n")
        return b"".join(out)
