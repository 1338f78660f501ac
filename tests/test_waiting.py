"""``ptjob wait`` / ``%ptjob wait`` progress: the line and display (pure), the magic's
display updated at every look, the CLI's redrawn terminal line and its plain lines."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from jupyter_pytorchjob.backends import JobInfo, JobState, ReplicaInfo
from jupyter_pytorchjob.frontends import backend_choice
from jupyter_pytorchjob.frontends.waiting import TerminalWait, WaitLine, progress_bar
from jupyter_pytorchjob.job.progress import JobProgress, ProgressSource
from jupyter_pytorchjob.magics import magic as magic_module

from .local_jobs import EXAMPLES
from .test_magics import FakeBackend


def job(percent: float | None, state: JobState = JobState.RUNNING, **metrics: float) -> JobInfo:
    progress = None
    if percent is not None:
        progress = JobProgress(
            ProgressSource.LOGS,
            time.time(),
            percent=percent,
            eta_seconds=80,
            step=int(percent * 10),
            total_steps=1000,
            metrics=dict(metrics),
        )
    return JobInfo(
        name="demo",
        state=state,
        replicas=[ReplicaInfo("master-0", "Running")],
        nodes=1,
        gpus=0,
        created=time.time() - 200,
        started=time.time() - 123,
        progress=progress,
    )


def test_the_bar_fills_in_eighths_and_clamps() -> None:
    assert progress_bar(0, 4) == "|    |"
    assert progress_bar(50, 4) == "|██  |"
    assert progress_bar(56.25, 4) == "|██▎ |"
    assert progress_bar(100, 4) == "|████|"
    assert progress_bar(250, 4) == "|████|" and progress_bar(-5, 4) == "|    |"


def test_the_line_shows_percent_bar_step_metric_eta_and_time() -> None:
    text = WaitLine(job(42, loss=0.1234)).text()
    assert text.startswith("demo: Running [master-0 Running] 42% |████████▍")
    assert text.endswith("| step 420/1000 · loss 0.1234 · ETA 1m20s · 2m03s")
    assert WaitLine(job(None)).text() == "demo: Running [master-0 Running] 2m03s"
    assert WaitLine(replace(job(None), started=None)).text() == "demo: Running [master-0 Running]"
    finished = WaitLine(job(100, JobState.SUCCEEDED), "done").text()
    assert "ETA" not in finished and finished.endswith(" done")
    cut = WaitLine(job(42, loss=0.1)).text(30)
    assert len(cut) == 30 and cut.endswith("…")


def test_the_html_has_a_progress_bar_and_escapes() -> None:
    info = job(42, **{"<b>": 1.0})
    page = WaitLine(info, "<i>").html()
    assert '<progress max="100" value="42.0"' in page and "42%" in page
    assert "<b>" not in page and "&lt;b&gt; 1" in page and "&lt;i&gt;" in page


def test_plain_lines_come_per_state_and_tenth() -> None:
    out = io.StringIO()
    watch = TerminalWait(out, tty=False)
    for percent in (1, 5, 9, 10, 15, 31):
        watch(job(percent))
    watch(job(31, JobState.SUCCEEDED))
    watch.close()
    lines = out.getvalue().splitlines()
    # the finished state is the caller's own last line
    assert [line.split()[4] for line in lines] == ["1%", "10%", "31%"]
    assert "\r" not in out.getvalue()


def test_a_terminal_gets_one_line_redrawn() -> None:
    out = io.StringIO()
    watch = TerminalWait(out, tty=True, width=40)
    watch(job(10))
    watch(job(20))
    watch.close()
    text = out.getvalue()
    assert text.count("\r") == 2 and text.count("\x1b[K") == 2 and text.endswith("\n")
    assert all(
        len(part.removesuffix("\x1b[K\n").removesuffix("\x1b[K")) <= 39
        for part in text.split("\r")[1:]
    )


class ProgressingBackend(FakeBackend):
    """A job 10 % further along at every look, Succeeded at 50 %."""

    def __init__(self) -> None:
        super().__init__()
        self.looks = 0

    def _job(self, name: str) -> JobInfo:
        info = super()._job(name)
        self.looks += 1
        info.progress = JobProgress(
            ProgressSource.REPORT, time.time(), percent=10.0 * self.looks, metrics={"loss": 1.0}
        )
        if self.looks >= 5:
            info.state = JobState.SUCCEEDED
        return info


@pytest.fixture
def progressing(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProgressingBackend]:
    """The magic loaded in a shell that it takes for a kernel's, on that backend."""
    backend = ProgressingBackend()
    monkeypatch.setattr(backend_choice, "open_backend", lambda name, namespace=None: backend)
    monkeypatch.setattr(magic_module.PtjobMagics, "in_kernel", property(lambda self: True))
    monkeypatch.setattr(magic_module, "WAIT_INTERVAL", 0.01)
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "jupyter_pytorchjob")
    yield backend
    shell.run_line_magic("unload_ext", "jupyter_pytorchjob")


def test_the_notebook_display_updates_at_every_look(progressing: ProgressingBackend) -> None:
    """The job's state never changes while it runs, yet the display moves with its
    percent (it froze at the first look before)."""
    with capture_output() as captured:
        assert InteractiveShell.instance().run_line_magic("ptjob", "wait demo") == "Succeeded"
    shown = [o.data["text/html"] for o in captured.outputs]
    assert [o.update for o in captured.outputs] == [False, True, True, True, True]
    assert [p[p.index("</progress> ") + 12 :].split("%")[0] for p in shown] == [
        "10",
        "20",
        "30",
        "40",
        "50",
    ]
    assert "Succeeded" in shown[-1] and "loss 1" in shown[-1]


# -- the CLI on a real local job ----------------------------------------------------

HALFWAY = (
    "import os, sys, time\n"
    "print('train:  50%|#####     | 5/10 [00:05<00:05, loss=0.25]', flush=True)\n"
    "while not os.path.exists(sys.argv[1]):\n"
    "    time.sleep(0.05)\n"
)


def ptjob_command(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("ptjob")), *args]


@pytest.fixture
def halfway_job(tmp_path: Path) -> Iterator[tuple[dict[str, str], Path]]:
    """A local job that says 50 % and then waits for its go file; deleted afterwards."""
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}
    go = tmp_path / "go"
    submitted = subprocess.run(
        ptjob_command(
            "submit", "--name", "half", "--shm", "off", "--", "python", "-c", HALFWAY, str(go)
        ),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=EXAMPLES,
    )
    assert submitted.returncode == 0, submitted.stderr
    yield env, go
    subprocess.run(
        ptjob_command("delete", "half"), env=env, capture_output=True, timeout=120, check=False
    )


def test_cli_wait_redraws_one_line_on_a_terminal(
    halfway_job: tuple[dict[str, str], Path],
) -> None:
    env, go = halfway_job
    main, child = pty.openpty()
    proc = subprocess.Popen(
        ptjob_command("wait", "half", "--timeout", "120"),
        env={**env, "COLUMNS": "100"},
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=child,
    )
    os.close(child)
    seen = b""
    try:
        while b"50% |" not in seen:
            ready, _, _ = select.select([main], [], [], 60)
            assert ready, seen
            seen += os.read(main, 4096)
        go.touch()
        while proc.poll() is None or select.select([main], [], [], 0)[0]:
            if select.select([main], [], [], 1)[0]:
                try:
                    seen += os.read(main, 4096)
                except OSError:  # the child side closed
                    break
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)
    text = seen.decode().replace("\r\n", "\n")  # the terminal ends lines with \r\n
    redraws = text.split("\r")[1:]
    assert len(redraws) >= 2 and all("\x1b[K" in r for r in redraws)
    assert "half: Running" in text and "loss 0.25" in text
    assert all(len(r.split("\x1b[K")[0]) <= 99 for r in redraws)
    assert text.rstrip().endswith("half: Succeeded")


def test_cli_wait_prints_plain_lines_into_a_pipe(
    halfway_job: tuple[dict[str, str], Path],
) -> None:
    env, go = halfway_job
    proc = subprocess.Popen(
        ptjob_command("wait", "half", "--timeout", "120"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = []
        while not lines or "50% |" not in lines[-1]:
            line = proc.stdout.readline()
            assert line, lines
            lines.append(line)
        go.touch()
        rest, errors = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, errors
    lines += rest.splitlines(keepends=True)
    text = "".join(lines)
    assert "\r" not in text and "\x1b" not in text
    assert lines[-1] == "half: Succeeded\n"
    # a line per change worth reading, not one per look
    assert sum("Running" in line and "50% |" in line for line in lines) == 1
