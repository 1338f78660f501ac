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

from collections.abc import Iterable, Sequence
from itertools import groupby, repeat
from operator import add

LINE_MAX = 16 * 1024
# A piece of several replicas' lines (a merged log's chunk) names each line's replica
# with one character, ``chr(OWNER_BASE + i)`` for the i-th of its replicas: "0", "1"...
OWNER_BASE = 48


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


def may_hold_a_line_over(data: bytes, limit: int) -> bool:
    """False when no line of ``data`` (which ends with a newline) is longer than
    ``limit``, found with a ``find`` per ``limit // 2`` bytes, not an object per line:
    every aligned window of that size holding a newline leaves no longer run without."""
    step = max(1, limit // 2)
    return any(
        data.find(b"\n", pos, pos + step) < 0 for pos in range(0, len(data) - step + 1, step)
    )


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


class StampedLines:
    """The kubelet's lines (``<stamp> <output>``, ``timestamps=true``) in, stamped display
    lines out: a container runtime splits a log only at ``\\n``, so a bar's redraws come
    as one long line; each of its pieces goes out with the line's stamp as it completes.
    Lines without a ``\\r`` and within ``limit`` pass through as they are."""

    def __init__(self, limit: int = LINE_MAX) -> None:
        self.limit = limit
        self.display = DisplayLines(limit)
        self.stamp: bytes | None = None  # the unfinished line's "<stamp> "
        self.head = b""  # the start of a line whose stamp has not all arrived

    def feed(self, data: bytes) -> bytes:
        out: list[bytes] = []
        if self.stamp is not None:
            end = data.find(b"\n") + 1
            self._pieces(self.stamp, data[:end] if end else data, out)
            if not end:
                return b"".join(out)
            self.stamp, data = None, data[end:]
        data = self.head + data
        end = data.rfind(b"\n") + 1
        whole, rest = data[:end], data[end:]
        if b"\r" in whole or (
            may_hold_a_line_over(whole, self.limit)
            and max(map(len, whole.split(b"\n"))) > self.limit + 64
        ):
            for line in whole[:-1].split(b"\n"):
                stamp, _, text = line.partition(b" ")
                if b"\r" in text or len(text) > self.limit:
                    self._pieces(stamp + b" ", text + b"\n", out)
                else:
                    out.append(line + b"\n")
        else:
            out.append(whole)
        space = rest.find(b" ") + 1
        self.head = b""
        if space:
            self.stamp = rest[:space]
            self._pieces(self.stamp, rest[space:], out)
        elif len(rest) > 64:  # no stamp (not the kubelet's format): a line of its own
            self.stamp = b""
            self._pieces(b"", rest, out)
        else:
            self.head = rest
        return b"".join(out)

    def close(self) -> bytes:
        """The unfinished last line, once the log has ended."""
        stamp, self.stamp = self.stamp, None
        pieces = self.display.close()
        return b"".join(stamp + p + b"\n" for p in pieces) if stamp is not None else b""

    def _pieces(self, stamp: bytes, text: bytes, out: list[bytes]) -> None:
        out.extend(stamp + piece + b"\n" for piece in self.display.feed(text))


def owner_runs(text: str, owners: str) -> list[tuple[int, str]]:
    """``text``'s lines (``owners``: each one's replica) in runs of one replica's lines:
    (its index, the lines, each ending with a newline)."""
    lines = text[:-1].split("\n")
    out = []
    at = 0
    for mark, run in groupby(owners):
        count = sum(1 for _ in run)
        out.append((ord(mark) - OWNER_BASE, "\n".join(lines[at : at + count]) + "\n"))
        at += count
    return out


def tagged(text: str, tags: Sequence[str], owners: str = "") -> str:
    """``text``'s lines, each after its replica's tag (``owners``: each line's, indexing
    ``tags``; none: all are the first's), and again after a redraw's ``\\r``, so that
    a terminal shows the tag on the line redrawn."""
    lines = text.split("\n")
    end = ""
    if not lines[-1]:  # the text's final newline
        lines.pop()
        end = "\n"
    if owners:
        tag_of = {chr(OWNER_BASE + i): tag for i, tag in enumerate(tags)}
        line_tags: Iterable[str] = map(tag_of.__getitem__, owners)
    else:
        line_tags = repeat(tags[0], len(lines))
    if "\r" in text:
        lines = [
            tag + line.replace("\r", "\r" + tag) for tag, line in zip(line_tags, lines, strict=True)
        ]
        return "\n".join(lines) + end
    return "\n".join(map(add, line_tags, lines)) + end


class TerminalText:
    """Display lines, replica by replica, as text to print the way a terminal shows them.

    ``raw``: as the program wrote them (a redraw joined to its line by its ``\\r``).
    Otherwise a redraw replaces its replica's line, if that is the last one printed:
    with ``overwrite`` (a terminal, a notebook's output, which both redraw on ``\\r``) in
    place, the newest line printed without its newline until the next one comes and a
    redraw going over it after ``\\r`` + ``clear``; without (a pipe, a file), each line
    held until the next one shows it was not redrawn (``end`` gives the last). A redraw
    of a line that others have followed is printed as a line of its own."""

    def __init__(self, *, raw: bool = False, overwrite: bool = False, clear: str = "") -> None:
        self.raw = raw
        self.overwrite = overwrite or raw
        self.clear = "" if raw else clear
        self.held: str | None = None  # the replica of the last line, if it may be redrawn
        self.line = ""  # that line, when not printed yet

    def text(self, replica: str, lines: str, tag: str = "") -> str:
        """What to print for ``lines`` (whole display lines) of ``replica``, each line
        after ``tag``."""
        out = []
        if "\r" not in lines:  # no redraw: only the last line waits
            body, _, last = lines[:-1].rpartition("\n")
            out.append(self.end())
            if body:
                out.append(tag + body.replace("\n", "\n" + tag) + "\n" if tag else body + "\n")
            self._hold(replica, tag + last, out)
            return "".join(out)
        for line in lines[:-1].split("\n"):
            if line.startswith("\r") and self.held == replica:
                if self.raw:
                    out.append(line)
                elif self.overwrite:
                    out.append("\r" + self.clear + tag + line[1:])
                else:
                    self.line = tag + line[1:]
                continue
            out.append(self.end())
            self._hold(replica, tag + (line if self.raw else line.removeprefix("\r")), out)
        return "".join(out)

    def merged(self, lines: str, owners: str, replicas: Sequence[str], tags: Sequence[str]) -> str:
        """``text`` of whole display lines of several replicas: ``owners`` names each
        line's (``OWNER_BASE``), indexing ``replicas`` and their ``tags``."""
        if "\r" in lines:  # redraws replace their own replica's line: run by run
            return "".join(
                self.text(replicas[i], run, tags[i]) for i, run in owner_runs(lines, owners)
            )
        out = [self.end()]
        body, _, last = lines[:-1].rpartition("\n")
        if body:
            out.append(tagged(body + "\n", tags, owners[:-1]) if any(tags) else body + "\n")
        final = ord(owners[-1]) - OWNER_BASE
        self._hold(replicas[final], tags[final] + last, out)
        return "".join(out)

    def end(self) -> str:
        """The rest of the last line (its newline), once nothing may redraw it."""
        if self.held is None:
            return ""
        rest = "\n" if self.overwrite else self.line + "\n"
        self.held, self.line = None, ""
        return rest

    def _hold(self, replica: str, line: str, out: list[str]) -> None:
        self.held = replica
        if self.overwrite:
            out.append(line)
        else:
            self.line = line
