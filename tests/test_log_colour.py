"""Colour codes in ``ptjob logs``: kept by default (a terminal shows them), stripped with
``--no-color`` or ``$NO_COLOR``; the stripping is one pass whatever the input."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_pytorchjob.backends import LogChunk
from jupyter_pytorchjob.frontends.ansi import colour_wanted, strip_ansi
from jupyter_pytorchjob.frontends.formatting import LogWriter

from .local_jobs import EXAMPLES


def test_strip_removes_every_kind_of_sequence() -> None:
    assert strip_ansi("\x1b[1;31mred\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[m") == "red rgb"
    assert strip_ansi("\x1b[2K\x1b[1Gbar\x1b[?25l") == "bar"
    assert strip_ansi("\x1b]0;title\x07x\x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\") == "xlink"
    assert strip_ansi("a\x1bb\x1b") == "ab"
    assert strip_ansi("plain ] [ m") == "plain ] [ m"


def test_strip_ends_an_unfinished_sequence_at_its_line() -> None:
    # A merged chunk names each line's replica: stripping keeps every line.
    assert strip_ansi("a\x1b]0;title\nb\n") == "a\nb\n"


def test_strip_takes_one_pass_over_hostile_input() -> None:
    hostile = "\x1b[1;2;3" * 20_000 + "\x1b]" + "x" * 1000
    assert "\x1b" not in strip_ansi(hostile)


def test_no_color_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert colour_wanted(False) and not colour_wanted(True)
    monkeypatch.setenv("NO_COLOR", "")
    assert colour_wanted(False)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_wanted(False)


def test_no_color_strips_before_the_terminal_rendering() -> None:
    """Raw or collapsed, the codes go; a redraw still goes over its line (the writer's
    own line-clearing sequence is not the program's)."""
    chunk = LogChunk("master-0", "\x1b[32m 10%\x1b[0m\n\r\x1b[32m 90%\x1b[0m\n", 9)
    raw = LogWriter(prefix=False, raw=True, colour=False).text(chunk)
    assert raw.rstrip("\n") == " 10%\r 90%"
    shown = LogWriter(prefix=True, overwrite=True, colour=False).text(chunk)
    assert "\x1b[32m" not in shown and shown.rstrip("\n").endswith("master-0 |  90%")
    assert "\x1b[32m" in LogWriter(prefix=False, raw=True).text(chunk)


def ptjob(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("ptjob")), *args]
    return subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=120, check=False, cwd=EXAMPLES
    )


@pytest.fixture
def coloured_job(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A finished local job that printed a coloured line; deleted afterwards."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PTJOB_HOME"] = str(tmp_path / "home")
    script = "print('\\x1b[31mred\\x1b[0m and \\x1b]0;title\\x07plain')"
    submitted = ptjob(
        "submit", "--name", "col", "--shm", "off", "--", "python", "-c", script, env=env
    )
    assert submitted.returncode == 0, submitted.stderr
    try:
        assert ptjob("wait", "col", "--timeout", "60", env=env).returncode == 0
        yield env
    finally:
        ptjob("delete", "col", env=env)


def test_cli_logs_keep_colours_unless_told(coloured_job: dict[str, str]) -> None:
    env = coloured_job
    kept = ptjob("logs", "col", env=env)
    assert kept.returncode == 0 and "master-0 | \x1b[31mred\x1b[0m and" in kept.stdout
    stripped = ptjob("logs", "col", "--no-color", env=env)
    assert stripped.stdout == "master-0 | red and plain\n"
    assert ptjob("logs", "col", env={**env, "NO_COLOR": "1"}).stdout == stripped.stdout
