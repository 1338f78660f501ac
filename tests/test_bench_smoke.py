"""``benchmarks/smoke.py``, which runs each line of ``make bench-smoke`` (CI): a benchmark
passes only if it exits 0 in time and leaves no process running (daemons included) and
no file in its ``TMPDIR``; what it left is named, killed and removed."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

SMOKE = Path(__file__).resolve().parent.parent / "benchmarks" / "smoke.py"


def smoke(code: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SMOKE), *options, "--", sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def daemon_pid(tmp_path: Path) -> Iterator[Path]:
    """Where a command writes the pid of a daemon it starts; the daemon is killed in
    teardown if the runner left it alive."""
    where = tmp_path / "daemon.pid"
    yield where
    if where.exists():
        try:
            proc = psutil.Process(int(where.read_text()))
            if proc.status() != psutil.STATUS_ZOMBIE:
                proc.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass


def test_a_clean_benchmark_passes_with_its_times() -> None:
    done = smoke(
        """
        import os, pathlib, tempfile
        with tempfile.TemporaryDirectory() as tmp:  # in the runner's TMPDIR
            assert tmp.startswith(os.environ['TMPDIR'])
            pathlib.Path(tmp, 'f').write_text('x')
        """
    )
    assert done.returncode == 0, done.stderr
    assert "FAILED" not in done.stderr
    assert "s wall" in done.stdout and "s CPU" in done.stdout


def test_a_failing_benchmark_fails() -> None:
    done = smoke("raise SystemExit(3)")
    assert done.returncode == 1
    assert "exited with 3" in done.stderr


def test_a_benchmark_past_its_timeout_is_killed_and_fails(daemon_pid: Path) -> None:
    done = smoke(
        f"""
        import pathlib, os, time
        pathlib.Path({str(daemon_pid)!r}).write_text(str(os.getpid()))
        time.sleep(120)
        """,
        "--timeout",
        "3",
    )
    assert done.returncode == 1
    assert "still running after 3 s" in done.stderr
    assert not psutil.pid_exists(int(daemon_pid.read_text()))


def test_a_daemon_left_running_is_named_killed_and_fails(daemon_pid: Path) -> None:
    # Double fork and a new session, as the local backend's supervisors detach: the
    # daemon is no child of the benchmark's, only the runner's (its subreaper).
    done = smoke(
        f"""
        import os, pathlib, time
        ready, started = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                pathlib.Path({str(daemon_pid)!r}).write_text(str(os.getpid()))
                os.write(started, b"x")
                time.sleep(120)
            os._exit(0)
        os.wait()
        os.read(ready, 1)  # the daemon has written its pid
        """,
        "--grace",
        "0.5",
    )
    pid = int(daemon_pid.read_text())
    assert done.returncode == 1
    assert "left processes running (killed)" in done.stderr
    assert f"{pid} " in done.stderr
    assert not psutil.pid_exists(pid)


def test_a_daemon_that_ends_within_the_grace_passes() -> None:
    done = smoke(
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(1)
            os._exit(0)
        os.wait()
        """,
        "--grace",
        "20",
    )
    assert done.returncode == 0, done.stderr


def test_files_left_in_tmpdir_fail_and_are_removed() -> None:
    done = smoke(
        """
        import os, pathlib
        tmp = pathlib.Path(os.environ['TMPDIR'])
        (tmp / 'leftover-dir').mkdir()
        print(tmp)
        """
    )
    assert done.returncode == 1
    assert "left files in its TMPDIR (removed): leftover-dir" in done.stderr
    assert not Path(done.stdout.splitlines()[0]).exists()


def test_what_torch_and_tensorboard_keep_there_is_not_a_leftover() -> None:
    done = smoke(
        """
        import os, pathlib
        tmp = pathlib.Path(os.environ['TMPDIR'])
        (tmp / 'torchinductor_someone' / 'cache').mkdir(parents=True)
        (tmp / '.tensorboard-info').mkdir()
        """
    )
    assert done.returncode == 0, done.stderr
    # A TensorBoard's own record left there means it was not stopped.
    done = smoke(
        """
        import os, pathlib
        info = pathlib.Path(os.environ['TMPDIR']) / '.tensorboard-info'
        info.mkdir()
        (info / 'pid-123.info').write_text('{}')
        """
    )
    assert done.returncode == 1
    assert ".tensorboard-info/pid-123.info" in done.stderr
