"""The log archive wrapper as a real process around real commands: the command's exit
status, signals, stdin and streams are unchanged, its output is also archived with
timestamps, and a failing archive never stops the command."""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob.kinds.log_archive import WRAPPER

STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) (.*)$")


def wrapper_env(archive: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "PTJOB_LOG_ARCHIVE": str(archive),
        "PTJOB_REPLICA_TYPE": "master",
        "PTJOB_REPLICA_INDEX": "0",
        **extra,
    }


def wrapped(command: list[str], python: str = sys.executable) -> list[str]:
    return [python, "-c", WRAPPER, *command]


def archived(path: Path) -> list[str]:
    """The archive's lines, checked to be stamped in order, without their stamps."""
    lines = path.read_text().splitlines()
    matches = [STAMP.match(line) for line in lines]
    assert all(matches), lines
    stamps = [m.group(1) for m in matches if m]
    assert stamps == sorted(stamps)
    return [m.group(2) for m in matches if m]


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts; killed (with their groups) in teardown."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def launch(
    script: str, archive: Path, processes: list[subprocess.Popen[bytes]], **popen: Any
) -> subprocess.Popen[bytes]:
    """The wrapper around ``python -c script`` (stdout piped), in its own process group
    (signals sent to it reach the wrapper only; teardown kills the group)."""
    process = subprocess.Popen(
        wrapped([sys.executable, "-c", script]),
        stdout=subprocess.PIPE,
        env=wrapper_env(archive),
        start_new_session=True,
        **popen,
    )
    processes.append(process)
    return process


EXITS = {
    "exit 0": "import sys; sys.exit(0)",
    "exit 1": "import sys; sys.exit(1)",
    "SIGKILL (137)": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
    "SIGTERM (143)": "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
}


@pytest.mark.parametrize("script", EXITS.values(), ids=EXITS.keys())
def test_the_exit_status_is_the_commands(script: str, tmp_path: Path) -> None:
    command = [sys.executable, "-c", f"print('x', flush=True); {script}"]
    plain = subprocess.run(command, capture_output=True)
    run = subprocess.run(wrapped(command), capture_output=True, env=wrapper_env(tmp_path))
    assert run.returncode == plain.returncode  # 0, 1, -9, -15: a shell shows 137 and 143
    assert run.stdout == plain.stdout == b"x\n"
    assert archived(tmp_path / "master-0.log") == ["x"]


def test_signals_are_forwarded_to_the_command(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    script = (
        "import signal, sys\n"
        "def on(n, f):\n"
        "    print('got', n, flush=True)\n"
        "    if n == signal.SIGTERM: sys.exit(7)\n"
        "for s in (signal.SIGUSR1, signal.SIGINT, signal.SIGTERM): signal.signal(s, on)\n"
        "print('ready', flush=True)\n"
        "while True: signal.pause()\n"
    )
    process = launch(script, tmp_path, processes)
    # A signal that never arrives must fail the test, not hang it: the group is killed
    # after a deadline, which ends the reads below.
    deadline = threading.Timer(20, os.killpg, (process.pid, signal.SIGKILL))
    deadline.start()
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"ready\n"
        for signum in (signal.SIGUSR1, signal.SIGINT, signal.SIGTERM):
            process.send_signal(signum)
            assert process.stdout.readline() == f"got {signum.value}\n".encode()
        assert process.wait(10) == 7
    finally:
        deadline.cancel()


def test_stdin_and_both_streams_pass_through(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "for line in sys.stdin: print(line.strip().upper(), flush=True)\n"
        "print('to stderr', file=sys.stderr, flush=True)\n"
        "sys.stdout.write('no newline at the end')\n"
    )
    run = subprocess.run(
        wrapped([sys.executable, "-c", script]),
        input=b"hello\nworld\n",
        capture_output=True,
        env=wrapper_env(tmp_path),
    )
    assert run.returncode == 0
    assert run.stdout == b"HELLO\nWORLD\nno newline at the end"
    assert run.stderr == b"to stderr\n"
    # Each stream in its order; between two pipes there is none (nor in a container log).
    lines = archived(tmp_path / "master-0.log")
    assert [line for line in lines if line != "to stderr"] == [
        "HELLO",
        "WORLD",
        "no newline at the end",
    ]
    assert lines.count("to stderr") == 1


def test_needs_nothing_but_the_system_python(tmp_path: Path) -> None:
    """As in an image: whatever python3 is on PATH, without this project's packages."""
    python3 = shutil.which("python3")
    if python3 is None:
        pytest.skip("no python3 on PATH")
    env = wrapper_env(tmp_path, PYTHONPATH="", PTJOB_REPLICA_TYPE="node", JOB_COMPLETION_INDEX="3")
    del env["PTJOB_REPLICA_INDEX"]  # a TrainJob's node: the Job controller's index
    run = subprocess.run(
        wrapped(["echo", "hi"], python=python3), capture_output=True, env=env, cwd="/"
    )
    assert (run.returncode, run.stdout) == (0, b"hi\n")
    assert archived(tmp_path / "node-3.log") == ["hi"]


def test_each_run_takes_the_next_free_file(tmp_path: Path) -> None:
    for run in range(3):
        subprocess.run(wrapped(["echo", f"run {run}"]), env=wrapper_env(tmp_path), check=True)
    assert archived(tmp_path / "master-0.log") == ["run 0"]
    assert archived(tmp_path / "master-0.1.log") == ["run 1"]
    assert archived(tmp_path / "master-0.2.log") == ["run 2"]


def test_the_archive_is_its_owners_alone(tmp_path: Path) -> None:
    """Others sharing the PVC read no job's output: 0700 directory, 0600 files (not the
    0755 an os.open without a mode made)."""
    archive = tmp_path / ".ptjob-logs" / "job"
    subprocess.run(wrapped(["echo", "hi"]), env=wrapper_env(archive), check=True)
    assert stat.S_IMODE(archive.stat().st_mode) == 0o700
    assert stat.S_IMODE((archive / "master-0.log").stat().st_mode) == 0o600


def test_an_archive_that_cannot_be_created_leaves_the_job_alone(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    run = subprocess.run(
        wrapped([sys.executable, "-c", "print('still runs'); raise SystemExit(3)"]),
        capture_output=True,
        env=wrapper_env(blocker / "archive"),
    )
    assert (run.returncode, run.stdout) == (3, b"still runs\n")
    assert b"the log archive stopped" in run.stderr


def test_a_full_disk_stops_the_archive_not_the_job(tmp_path: Path) -> None:
    """A file size limit makes the archive's writes fail (EFBIG) as a full disk does
    (ENOSPC); every line still reaches the container log and the exit code is kept."""
    lines = 200_000
    limit = 64 * 1024

    def small_files() -> None:  # in the wrapper only; its command gets the default back
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    started = time.monotonic()
    run = subprocess.run(
        wrapped([sys.executable, "-c", f"for i in range({lines}): print('line', i)"]),
        capture_output=True,
        env=wrapper_env(tmp_path),
        preexec_fn=small_files,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.count(b"\n") == lines
    assert run.stdout.endswith(f"line {lines - 1}\n".encode())
    assert b"the log archive stopped" in run.stderr
    assert (tmp_path / "master-0.log").stat().st_size <= limit
    assert time.monotonic() - started < 60


def test_a_redrawn_line_is_archived_as_display_lines_while_it_is_drawn(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    """The container gets the bar's bytes unchanged; the archive gets each redraw as a
    line of its own (``\\r`` + text) as soon as the next ``\\r`` ends it, without waiting
    for a newline that a bar may never print (the line contract: job/loglines.py)."""
    script = (
        "import sys\n"
        "sys.stdout.write('epoch 1\\n\\r  0%|\\r 50%|\\r100%|'); sys.stdout.flush()\n"
        "sys.stdin.readline()\n"
        "sys.stdout.write('\\ndone\\r\\n'); sys.stdout.flush()\n"
    )
    process = launch(script, tmp_path, processes, stdin=subprocess.PIPE)
    log = tmp_path / "master-0.log"

    def texts() -> list[str]:
        lines = log.read_bytes().decode().split("\n")[:-1] if log.exists() else []
        return [line.split(" ", 1)[1] for line in lines]

    deadline = time.monotonic() + 15
    while texts() != ["epoch 1", "  0%|", "\r 50%|"]:  # 100% waits for what ends it
        assert time.monotonic() < deadline, texts()
        time.sleep(0.02)
    out, _ = process.communicate(b"go\n", timeout=15)
    assert out == b"epoch 1\n\r  0%|\r 50%|\r100%|\ndone\r\n"
    assert texts() == ["epoch 1", "  0%|", "\r 50%|", "\r100%|", "done"]
