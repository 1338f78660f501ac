"""The log line contract (pure, standard library only): a program's output as display
lines, and display lines as a terminal shows them (``api/openapi.yaml``'s ``LogChunk``).

A display line holds at most ``LINE_MAX`` bytes (a container runtime's cut; the rest
continues as a new line, never inside a UTF-8 character). A program's carriage return
starts a *redraw*: the text after it is a line of its own that starts with ``\\r``, and a
terminal shows it instead of the line before (``collapse``); ``raw`` joins them back.
Within one ``\\n``-ended line: a ``\\r`` right before the ``\\n`` is part of the line end,
empty pieces make no line (a blank line stays one), the first piece is plain.

Every backend produces these lines: the local log pump and the log-archive wrapper (which
ships this file's text ahead of its own, so nothing here may import the package) from a
program's output, the Kubernetes reader from the kubelet's lines. Each byte is copied a
bounded number of times, however the output is shaped (a bar that never ends its line
included): an unfinished piece is never longer than ``LINE_MAX``.
"""

from __future__ import annotations

LINE_MAX = 16 * 1024


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


class DisplayLines:
    """A program's output in, display lines out (without their ``\\n``)."""

    def __init__(self, limit: int = LINE_MAX) -> None:
        self.limit = limit
        # The unfinished piece (at most ``limit`` bytes, no \r), its mark (b"\r": a
        # redraw), and whether the unfinished line has given a line already.
        self.partial = b""
        self.mark = b""
        self.given = False

    def feed(self, data: bytes) -> list[bytes]:
        data = self.partial + data
        end = data.rfind(b"\n") + 1
        if b"\r" not in data and not self.mark and not self.given:
            lines = data[:end].split(b"\n")[:-1]
            self.partial = data[end:]
            if len(data) > self.limit and any(len(line) > self.limit for line in lines):
                lines = [piece for line in lines for piece in cut(line, self.limit)]
            if len(self.partial) > self.limit:
                *full, self.partial = cut(self.partial, self.limit)
                lines.extend(full)
            return lines
        self.partial = b""
        out: list[bytes] = []
        if end:
            for line in data[: end - 1].split(b"\n"):
                self._line(line[:-1] if line.endswith(b"\r") else line, out, True)
        self._line(data[end:], out, False)
        return out

    def close(self) -> list[bytes]:
        """The unfinished last line, once the output has ended."""
        out: list[bytes] = []
        rest, self.partial = self.partial, b""
        if rest:
            self._line(rest, out, True)
        self.mark, self.given = b"", False
        return out

    def _line(self, text: bytes, out: list[bytes], ended: bool) -> None:
        """One line's text (without \\n): its complete pieces; the last one kept unless
        the line ``ended``."""
        pieces = text.split(b"\r")
        last = len(pieces) - 1
        for i, piece in enumerate(pieces):
            if i == last and not ended:
                if len(piece) > self.limit:  # the runtime's cut: the rest continues plain
                    *full, piece = cut(piece, self.limit)
                    for part in full:
                        out.append(self.mark + part)
                        self.mark, self.given = b"", True
                self.partial = piece
                return
            if piece:
                for part in cut(piece, self.limit):
                    out.append(self.mark + part)
                    self.mark, self.given = b"", True
            if i < last:  # a \r follows: what comes next redraws what was given
                self.mark = b"\r" if self.given else b""
        if not self.given:
            out.append(b"")  # a blank line
        self.mark, self.given = b"", False
