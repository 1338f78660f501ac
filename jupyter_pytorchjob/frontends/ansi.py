"""ANSI escape sequences out of log text: ``ptjob logs --no-color`` (or ``$NO_COLOR``)
prints what a program wrote without its colour codes, cursor moves or titles.

One pass, linear in the text: each alternative's classes exclude ESC, so no sequence,
however malformed, makes the expression scan past the next ESC more than once. The
viewer's ``src/logs/ansi.ts`` strips the same set."""

from __future__ import annotations

import os
import re

# CSI (ECMA-48: parameters, intermediates, final byte), OSC (to BEL or ST, else to the
# next ESC or the line's end: a merged chunk's lines stay one per line), any other
# two-byte escape, else a lone ESC.
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[@-Z\\-_]|)")


def strip_ansi(text: str) -> str:
    """``text`` without any escape sequence."""
    return _ESCAPE.sub("", text) if "\x1b" in text else text


def colour_wanted(no_color: bool) -> bool:
    """Whether log output keeps its colours: not with ``--no-color``, nor with
    ``$NO_COLOR`` set to anything but empty (https://no-color.org)."""
    return not no_color and not os.environ.get("NO_COLOR")
