"""A node's output -> its log file, one timestamped line at a time, in linear time.

Lines are what a person sees: ``\\n``, ``\\r\\n`` and a lone ``\\r`` (a progress bar
redrawing itself) each end one; a ``\\r`` right after a line end adds no empty line.
Like a container runtime, a line longer than ``LINE_MAX`` (16 KiB) is cut and the rest
continues as a new line, so an unfinished line never holds more than that: each byte is
copied a bounded number of times, however the output is shaped.

A log never fills its disk: below ``DISK_RESERVE`` free bytes lines are dropped (and
counted), so the job's state can still be written; the log says how many lines it lost
once there is room again, and the lines before stay whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from .store import timestamp

LINE_MAX = 16 * 1024
CHUNK = 65536
DISK_RESERVE = 1 << 20


def cut(line: bytes, limit: int = LINE_MAX) -> list[bytes]:
    """``line`` in pieces of at most ``limit`` bytes, never inside a UTF-8 character."""
    pieces = []
    while len(line) > limit:
        at = limit
        while at > max(1, limit - 3) and line[at] & 0xC0 == 0x80:  # a continuation byte
            at -= 1
        pieces.append(line[:at])
        line = line[at:]
    pieces.append(line)
    return pieces


class LineSplitter:
    """Bytes in, display lines out (without their line ends)."""

    def __init__(self, limit: int = LINE_MAX) -> None:
        self.limit = limit
        # The unfinished last line (at most ``limit`` bytes), with its \r if the data so
        # far ended with one: a \n may follow in the next read (\r\n is one line end).
        self.partial = b""

    def feed(self, data: bytes) -> list[bytes]:
        data = self.partial + data
        if b"\r" in data:
            pieces = data.splitlines(keepends=True)  # bytes: only \n, \r\n and \r
            self.partial = b"" if pieces[-1].endswith(b"\n") else pieces.pop()
            # A bare \r (a redraw starting on a fresh line) is no line of its own.
            lines = [p.rstrip(b"\r\n") for p in pieces if p != b"\r"]
        else:
            end = data.rfind(b"\n") + 1
            lines = data[:end].split(b"\n")[:-1]
            self.partial = data[end:]
        if any(len(line) > self.limit for line in lines):
            lines = [piece for line in lines for piece in cut(line, self.limit)]
        cr = self.partial.endswith(b"\r")
        if len(self.partial) - cr > self.limit:
            *full, rest = cut(self.partial[: len(self.partial) - cr], self.limit)
            lines.extend(full)
            self.partial = rest + b"\r" * cr
        return lines

    def close(self) -> list[bytes]:
        """The unfinished last line, once the output has ended."""
        rest, self.partial = self.partial.removesuffix(b"\r"), b""
        return [rest] if rest else []


def stamped(lines: list[bytes]) -> bytes:
    """The lines as the log holds them: ``<RFC 3339 timestamp> <text>\\n`` each."""
    prefix = timestamp().encode() + b" "
    return prefix + (b"\n" + prefix).join(lines) + b"\n"


class LogFile:
    """Appends whole lines to a log without ever filling its disk."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.size = os.fstat(self.fd).st_size
        self.dropped = 0  # lines not written since the disk filled up

    def write(self, lines: list[bytes]) -> None:
        # Once dropping, resume only with room to spare, not a line here and there.
        if self.dropped and self._append(stamped([self._note()]), 2 * DISK_RESERVE):
            self.dropped = 0
        if self.dropped or not self._append(stamped(lines), DISK_RESERVE):
            self.dropped += len(lines)

    def close(self) -> None:
        if self.dropped:  # the note may use the reserve: it is all the log has left
            self._append(stamped([self._note()]), 0)
        os.close(self.fd)

    def _note(self) -> bytes:
        return (
            f"[jupyter-pytorchjob: {self.dropped} lines of output dropped: less than "
            f"{DISK_RESERVE >> 20} MiB free on the disk of this log]"
        ).encode()

    def _append(self, data: bytes, reserve: int) -> bool:
        """Write all of ``data`` or nothing (a short write is cut off again)."""
        try:
            disk = os.fstatvfs(self.fd)
            if disk.f_bavail * disk.f_frsize < len(data) + reserve:
                return False
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view) :]
        except OSError:  # ENOSPC, EDQUOT, EIO: keep the log a sequence of whole lines
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, self.size)
            return False
        self.size += len(data)
        return True


async def pump(stream: asyncio.StreamReader, log: Path) -> None:
    """Copy a node's output to its log until the output ends; one write per read. The
    output is read to its end whatever happens to the log, so the node never blocks."""
    lines = LineSplitter()
    out = LogFile(log)
    try:
        while True:
            chunk = await stream.read(CHUNK)
            done = lines.close() if not chunk else lines.feed(chunk)
            if done:
                out.write(done)
            if not chunk:
                return
    finally:
        out.close()
