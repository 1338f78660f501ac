"""A node's output -> its log file, one timestamped display line at a time, in linear time.

The lines are the log line contract's (``job/loglines.py``): ``\\n`` ends a line, a
``\\r`` starts a redraw line (``\\r`` + text), a line longer than 16 KiB is cut as a
container runtime cuts it, so an unfinished line never holds more than that. Each piece
is written as it completes (a progress bar shows its state one redraw later).

A log never fills its disk: below ``DISK_RESERVE`` free bytes lines are dropped (and
counted), so the job's state can still be written; the log says how many lines it lost
once there is room again, and the lines before stay whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from ...job.loglines import DisplayLines
from .store import timestamp

CHUNK = 65536
DISK_RESERVE = 1 << 20


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
    lines = DisplayLines()
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
