"""A node's output -> its log file, one timestamped line at a time, in linear time.

Lines are what a person sees: ``\\n``, ``\\r\\n`` and a lone ``\\r`` (a progress bar
redrawing itself) each end one; a ``\\r`` right after a line end adds no empty line.
Like a container runtime, a line longer than ``LINE_MAX`` (16 KiB) is cut and the rest
continues as a new line, so an unfinished line never holds more than that: each byte is
copied a bounded number of times, however the output is shaped.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from .store import timestamp

LINE_MAX = 16 * 1024
CHUNK = 65536


def cut(line: bytes, limit: int = LINE_MAX) -> list[bytes]:
    """``line`` in pieces of at most ``limit`` bytes, never inside a UTF-8 character."""
    pieces = []
    while len(line) > limit:
        at = limit
        while at > limit - 3 and line[at] & 0xC0 == 0x80:  # a continuation byte
            at -= 1
        pieces.append(line[:at])
        line = line[at:]
    pieces.append(line)
    return pieces


class LineSplitter:
    """Bytes in, display lines out (without their line ends)."""

    def __init__(self, limit: int = LINE_MAX) -> None:
        self.limit = limit
        self.partial = b""  # the unfinished last line, at most ``limit`` bytes
        self.after_cr = False  # the data so far ended with \r: a \n now ends nothing

    def feed(self, data: bytes) -> list[bytes]:
        if self.after_cr and data.startswith(b"\n"):
            data = data[1:]
        if not data:
            return []
        self.after_cr = data.endswith(b"\r")
        data = self.partial + data
        if b"\r" in data:
            pieces = data.splitlines(keepends=True)  # bytes: only \n, \r\n and \r
            self.partial = pieces.pop() if not pieces[-1].endswith((b"\n", b"\r")) else b""
            # A bare \r (a redraw starting on a fresh line) is no line of its own.
            lines = [p.rstrip(b"\r\n") for p in pieces if p != b"\r"]
        else:
            end = data.rfind(b"\n") + 1
            lines = data[:end].split(b"\n")[:-1]
            self.partial = data[end:]
        if any(len(line) > self.limit for line in lines):
            lines = [piece for line in lines for piece in cut(line, self.limit)]
        if len(self.partial) > self.limit:
            *full, self.partial = cut(self.partial, self.limit)
            lines.extend(full)
        return lines

    def close(self) -> list[bytes]:
        """The unfinished last line, once the output has ended."""
        rest, self.partial = self.partial, b""
        return [rest] if rest else []


def stamped(lines: list[bytes]) -> bytes:
    """The lines as the log holds them: ``<RFC 3339 timestamp> <text>\\n`` each."""
    prefix = timestamp().encode() + b" "
    return prefix + (b"\n" + prefix).join(lines) + b"\n"


async def pump(stream: asyncio.StreamReader, log: Path) -> None:
    """Copy a node's output to its log until the output ends; one write per read."""
    lines = LineSplitter()
    with log.open("ab") as out:
        while True:
            chunk = await stream.read(CHUNK)
            done = lines.close() if not chunk else lines.feed(chunk)
            if done:
                out.write(stamped(done))
                out.flush()
            if not chunk:
                return
