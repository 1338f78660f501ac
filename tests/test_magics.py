"""``%ptjob`` end to end: a real notebook on a real kernel (local backend, and the
fake Kubernetes API through a kubeconfig in the kernel's env), a kernel interrupt,
and the background-loop plumbing in process.
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import nbformat
import pytest
import yaml
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient

from jupyter_pytorchjob import magics
from jupyter_pytorchjob.backends import (
    Backend,
    BackendError,
    Event,
    JobInfo,
    JobNotFound,
    JobState,
    LogChunk,
    ReplicaInfo,
    Volume,
)
from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.frontends import backend_choice, server
from jupyter_pytorchjob.job.failure import JobFailure, JobWaiting
from jupyter_pytorchjob.job.messages import msg
from jupyter_pytorchjob.job.spec import JobSpec

DDP_CELL = """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo", init_method="env://")
total = torch.tensor([dist.get_rank() + 1.0])
dist.all_reduce(total)
print(f"rank {dist.get_rank()} of {dist.get_world_size()}: sum {total.item():g}", flush=True)
dist.destroy_process_group()
"""

CELLS: list[tuple[str, str, bool]] = [
    # (key, source, raises)
    ("load", "%load_ext jupyter_pytorchjob", False),
    ("submit", "%%ptjob submit --name nb-ddp --nodes 2 --shm off\n" + DDP_CELL, False),
    ("handle", "job = _\nprint(repr(job))", False),
    ("wait", "%ptjob wait nb-ddp --timeout 120", False),
    ("logs", "%ptjob logs nb-ddp", False),
    ("status", "%ptjob status nb-ddp", False),
    ("list", "%ptjob list", False),
    (
        "use",
        "print(job.status().state, job.wait(timeout=30))\n"
        "print(sorted(line.split(' | ')[0] for line in job.logs().splitlines() if 'rank' in line))",
        False,
    ),
    ("delete", "%ptjob delete nb-ddp", False),
    ("empty", "%ptjob list", False),
    ("tasks", "print(get_ipython().magics_manager.registry['PtjobMagics'].runner.tasks())", False),
    ("bad-nodes", "%ptjob submit --nodes 0 -- python x.py", True),
    ("bad-tail", "%ptjob logs nb-ddp --tail -1", True),
    ("bad-flag", "%ptjob submit --frobnicate 1 -- python x.py", True),
    ("too-big", "%%ptjob submit --name too-big\n" + "x = 1\n" * 21000, True),
    ("missing", "%ptjob status no-such-job", True),
]


def kernel_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTJOB_")}
    env["PTJOB_HOME"] = str(home)
    return env


def text_of(outputs: list[Any]) -> str:
    """Every stream and text/plain of a cell's outputs, joined."""
    parts = []
    for out in outputs:
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif "data" in out:
            parts.append(out["data"].get("text/plain", ""))
        elif out["output_type"] == "error":
            parts.append("\n".join(out["traceback"]))
    return "".join(parts)


def html_of(outputs: list[Any]) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in outputs)


@pytest.fixture(scope="module")
def notebook(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    """The notebook, executed once on a real ipykernel; outputs by cell key."""
    tmp = tmp_path_factory.mktemp("nb")
    nb = nbformat.v4.new_notebook()
    for _key, source, raises in CELLS:
        cell = nbformat.v4.new_code_cell(source)
        if raises:
            cell.metadata["tags"] = ["raises-exception"]
        nb.cells.append(cell)
    client = NotebookClient(
        nb, kernel_name="python3", timeout=180, resources={"metadata": {"path": str(tmp)}}
    )
    try:
        client.execute(env=kernel_env(tmp / "home"))
    finally:
        with contextlib.suppress(Exception):
            asyncio.run(LocalBackend(root=tmp / "home").delete_job("nb-ddp"))
    return {key: cell.outputs for (key, _s, _r), cell in zip(CELLS, nb.cells, strict=True)}


def test_notebook_ddp_flow(notebook: dict[str, list[Any]]) -> None:
    assert notebook["load"] == []
    submitted = text_of(notebook["submit"])
    assert "Submitted nb-ddp: 2 node(s) (1 master + 1 worker) on the local backend" in submitted
    assert "JobHandle('nb-ddp', backend='local')" in text_of(notebook["handle"])
    # The next steps once: in the handle's display, not printed as well.
    streamed = "".join(o["text"] for o in notebook["submit"] if o["output_type"] == "stream")
    assert "Follow it with" not in streamed
    assert html_of(notebook["submit"]).count("%ptjob logs nb-ddp -f") == 1

    # wait: a display updated in place (display_data + update_display_data), then the state
    wait = notebook["wait"]
    assert wait[0]["output_type"] == "display_data"
    assert "nb-ddp: Succeeded" in wait[0]["data"]["text/plain"]
    assert wait[-1]["output_type"] == "execute_result"
    assert wait[-1]["data"]["text/plain"] == "'Succeeded'"

    logs = text_of(notebook["logs"])
    assert "master-0 | rank 0 of 2: sum 3" in logs
    assert "worker-0 | rank 1 of 2: sum 3" in logs

    status = notebook["status"][0]["data"]
    assert "State:    Succeeded" in status["text/plain"]
    assert "Succeeded" in status["text/html"]
    assert "<table>" in status["text/html"] and "worker-0" in status["text/html"]

    listing = notebook["list"][0]["data"]
    assert listing["text/plain"].splitlines()[0].split()[:2] == ["NAME", "STATE"]
    assert "nb-ddp" in listing["text/html"] and "<table>" in listing["text/html"]

    assert text_of(notebook["use"]).splitlines() == [
        "Succeeded Succeeded",
        "['master-0', 'worker-0']",
    ]
    assert text_of(notebook["delete"]).strip() == "deleted nb-ddp"
    assert "no jobs" in text_of(notebook["empty"])
    assert text_of(notebook["tasks"]).strip() == "[]"


class FakeKubeThread:
    """The fake API server (operator simulation on) on its own loop in a thread, so
    that the test can step the operator between notebook cells."""

    def __init__(self) -> None:
        from .fake_kube import FakeKube

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.fake = self.call(FakeKube.start, operator=True)

    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        async def go() -> Any:
            result = fn(*args, **kwargs)
            return await result if asyncio.iscoroutine(result) else result

        return asyncio.run_coroutine_threadsafe(go(), self.loop).result(timeout=30)

    def stop(self) -> None:
        self.call(self.fake.stop)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def test_notebook_flow_against_the_fake_kubernetes_api(tmp_path: Path) -> None:
    kube = FakeKubeThread()
    try:
        env = kernel_env(tmp_path / "home")
        env["KUBECONFIG"] = str(kube.fake.write_kubeconfig(tmp_path / "kubeconfig"))
        env["PTJOB_BACKEND"] = "kubernetes"
        env.pop("KUBERNETES_SERVICE_HOST", None)
        sources = [
            "%load_ext jupyter_pytorchjob",
            "%%ptjob submit --name kube-ddp --nodes 2 --image pytorch/pytorch:2.5.1\n" + DDP_CELL,
            "%ptjob wait kube-ddp --timeout 60",
            "%ptjob logs kube-ddp",
            "%ptjob status kube-ddp",
            "%ptjob list",
            "%ptjob delete kube-ddp",
            "print(get_ipython().magics_manager.registry['PtjobMagics'].runner.tasks())",
        ]
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in sources])
        client = NotebookClient(
            nb, kernel_name="python3", timeout=90, resources={"metadata": {"path": str(tmp_path)}}
        )
        with client.setup_kernel(env=env):
            client.execute_cell(nb.cells[0], 0)
            client.execute_cell(nb.cells[1], 1)
            kube.call(kube.fake.operator.run, "team-a", "kube-ddp")
            job = kube.fake.get("pytorchjobs", "team-a", "kube-ddp")
            assert "dist.all_reduce(total)" in json.dumps(job)  # the cell travels in the job
            for replica in ("master-0", "worker-0"):
                pod = f"kube-ddp-{replica}"
                rank = 0 if replica == "master-0" else 1
                kube.call(
                    kube.fake.append_log, "team-a", pod, "pytorch", f"rank {rank} of 2: sum 3\n"
                )
            kube.call(kube.fake.operator.succeed, "team-a", "kube-ddp")
            for index in range(2, len(sources)):
                client.execute_cell(nb.cells[index], index)
        out = [cell.outputs for cell in nb.cells]
        assert "Submitted kube-ddp: 2 node(s) (1 master + 1 worker) on the kubernetes backend" in (
            text_of(out[1])
        )
        assert "kube-ddp: Succeeded" in text_of(out[2])
        logs = text_of(out[3])
        assert "master-0 | rank 0 of 2: sum 3" in logs
        assert "worker-0 | rank 1 of 2: sum 3" in logs
        assert "State:    Succeeded" in text_of(out[4])
        assert "kube-ddp" in html_of(out[5])
        assert text_of(out[6]).strip() == "deleted kube-ddp"
        assert text_of(out[7]).strip() == "[]"
    finally:
        kube.stop()


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("bad-nodes", "UsageError: %ptjob submit: error: --nodes: must be a whole number >= 1"),
        (
            "bad-tail",
            "UsageError: %ptjob logs: error: argument --tail: must be a whole number >= 0",
        ),
        ("bad-flag", "UsageError: %ptjob: error: unrecognized arguments: --frobnicate 1"),
        ("too-big", "UsageError: %ptjob submit: error: the cell: is 126000 bytes"),
        ("missing", "UsageError: %ptjob status: error: job 'no-such-job' not found"),
    ],
)
def test_bad_input_is_one_line_without_traceback(
    notebook: dict[str, list[Any]], key: str, expected: str
) -> None:
    outputs = notebook[key]
    text = text_of(outputs)
    assert text.startswith(expected), text
    assert len(text.strip().splitlines()) == 1, text
    assert all(o["output_type"] == "stream" for o in outputs), outputs
    assert "Traceback" not in text and "jupyter_pytorchjob/" not in text
    if key == "too-big":
        assert "PVC" in text


def test_kernel_interrupt_stops_following(tmp_path: Path) -> None:
    """``%ptjob logs NAME -f`` on a running job, interrupted like the Stop button."""
    home = tmp_path / "home"
    km, kc = start_new_kernel(kernel_name="python3", env=kernel_env(home), cwd=str(tmp_path))
    try:

        def run(code: str, timeout: float = 60) -> tuple[dict[str, Any], str]:
            reply = kc.execute_interactive(code, timeout=timeout, output_hook=collect)
            return reply["content"], "".join(seen.pop(0) for _ in range(len(seen)))

        seen: list[str] = []

        def collect(msg: dict[str, Any]) -> None:
            if msg["msg_type"] == "stream":
                seen.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                seen.append("ERROR " + msg["content"]["ename"])

        run("%load_ext jupyter_pytorchjob")
        reply, out = run(
            "%%ptjob submit --name forever --shm off\n"
            "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n"
            "    time.sleep(0.1)\n"
        )
        assert reply["status"] == "ok", out

        msg_id = kc.execute("%ptjob logs forever -f")
        lines = ""
        deadline = time.monotonic() + 30
        while "master-0 | tick 3" not in lines and time.monotonic() < deadline:
            msg = kc.get_iopub_msg(timeout=30)
            if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream":
                lines += msg["content"]["text"]
        assert "master-0 | tick 3" in lines
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=30)
        while reply["parent_header"].get("msg_id") != msg_id:  # pragma: no cover
            reply = kc.get_shell_msg(timeout=30)
        assert reply["content"]["status"] == "ok"
        rest = ""
        while True:
            msg = kc.get_iopub_msg(timeout=10)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                rest += msg["content"]["text"]
            if msg["msg_type"] == "error":
                rest += "ERROR"
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        assert "(stopped following forever; the job goes on)" in rest
        assert "ERROR" not in rest and "Traceback" not in rest and "KeyboardInterrupt" not in rest

        reply, out = run(
            "r = get_ipython().magics_manager.registry['PtjobMagics'].runner\n"
            "print(r.tasks(), r._thread.is_alive())\n"
            "%ptjob status forever"
        )
        assert out.startswith("[] True"), out
        reply, out = run("%ptjob delete forever")
        assert out.strip() == "deleted forever"
    finally:
        with contextlib.suppress(Exception):
            asyncio.run(LocalBackend(root=home).delete_job("forever"))
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# -- in process ----------------------------------------------------------------------


def crashed_job() -> JobInfo:
    """A job whose master raised (what a backend reports of it)."""
    failure = JobFailure(
        replica="master-0",
        reason="Error",
        message="ZeroDivisionError: <division> by zero",
        exit_code=1,
        tail=["Traceback (most recent call last):", "    1 / 0", "ZeroDivisionError: <x>"],
        log_source="previous",
        hint=msg("hint_shm", shm="--shm"),
    )
    return JobInfo(
        name="crashed",
        state=JobState.FAILED,
        replicas=[ReplicaInfo("master-0", "Failed", exit_code=1, reason="Error")],
        nodes=1,
        gpus=0,
        created=time.time(),
        failure=failure,
    )


class FakeBackend(Backend):
    """Logs forever; records whether the log generator was closed."""

    name = "fake"

    def __init__(self, logdir: str | None = None) -> None:
        self.closed = threading.Event()
        self.yielded = threading.Event()
        self.logdir = logdir

    def _job(self, name: str) -> JobInfo:
        if name == "crashed":
            return crashed_job()
        if name != "demo":
            raise JobNotFound(name)
        return JobInfo(
            name="demo",
            state=JobState.RUNNING,
            replicas=[
                ReplicaInfo("master-0", "Running"),
                ReplicaInfo("worker-0", "Pending", reason="<Unschedulable>", message="0/4 & co"),
            ],
            nodes=2,
            gpus=0,
            created=time.time(),
            logdir=self.logdir,
        )

    async def submit(self, spec: JobSpec) -> JobInfo:
        raise NotImplementedError

    async def list_jobs(self) -> list[JobInfo]:
        return [self._job("demo")]

    async def get_job(self, name: str) -> JobInfo:
        return self._job(name)

    async def delete_job(self, name: str) -> None:
        self._job(name)

    async def suspend(self, name: str) -> JobInfo:
        return self._job(name)

    async def resume(self, name: str) -> JobInfo:
        return self._job(name)

    async def events(self, name: str) -> list[Event]:
        return []

    async def volumes(self) -> list[Volume]:
        return []

    async def job_logdir(self, name: str) -> str:
        self._job(name)
        if not self.logdir:
            raise BackendError(f"job {name!r} has no log directory; submit it with --logdir DIR")
        return self.logdir

    async def logs(
        self,
        name: str,
        *,
        replica: str | None = None,
        follow: bool = False,
        tail: int | None = None,
        previous: bool = False,
        since: Mapping[str, int] | None = None,
    ) -> AsyncIterator[LogChunk]:
        self._job(name)
        if name == "crashed":  # restarted after its crash: only the previous run has lines
            if previous:
                yield LogChunk("master-0", "ZeroDivisionError: <x>\n", 24, previous=True)
            return
        try:
            for i in range(100_000):
                yield LogChunk("master-0", f"line {i}\n", i)
                if i == 5:
                    self.yielded.set()
                await asyncio.sleep(0.005)
        finally:
            self.closed.set()


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    ip = InteractiveShell.instance()
    yield ip
    ip.run_line_magic("unload_ext", "jupyter_pytorchjob")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, shell: InteractiveShell) -> FakeBackend:
    backend = FakeBackend()
    # The magic picks its backend through backend_choice; this one answers from memory.
    monkeypatch.setattr(backend_choice, "open_backend", lambda name, namespace=None: backend)
    shell.run_line_magic("load_ext", "jupyter_pytorchjob")
    return backend


def runner_of(shell: InteractiveShell) -> magics.Runner:
    instance = shell.magics_manager.registry["PtjobMagics"]
    assert isinstance(instance, magics.PtjobMagics)
    return instance.runner


def test_interrupt_closes_the_log_generator(
    shell: InteractiveShell, fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    """A KeyboardInterrupt in the main thread (what SIGINT does) cancels the pump and
    closes the async generator on the background loop before the magic returns."""

    def interrupt() -> None:
        fake.yielded.wait(10)
        time.sleep(0.05)
        _thread.interrupt_main()

    threading.Thread(target=interrupt, daemon=True).start()
    shell.run_line_magic("ptjob", "logs demo -f")
    out = capsys.readouterr().out
    assert "master-0 | line 0\n" in out and "master-0 | line 5\n" in out
    assert out.rstrip().endswith("(stopped following demo; the job goes on)")
    assert fake.closed.is_set()
    assert runner_of(shell).tasks() == []


async def bar_logs(name: str, **_: Any) -> AsyncIterator[LogChunk]:
    """A bar redrawn on master-0 while worker-0 prints a line (the log line contract)."""
    yield LogChunk("master-0", "epoch 1\n 10%\n", 10)
    yield LogChunk("worker-0", "w\n", 2)
    yield LogChunk("master-0", "\r 50%\n\r100%\ndone\n", 20)


@pytest.mark.parametrize(
    ("flags", "kernel", "out"),
    [
        # Collapsed: a redraw replaces its line while no other line has followed it.
        ("", False, "m | epoch 1\nm |  10%\nw | w\nm | 100%\nm | done"),
        # In a notebook the output area redraws on \r itself: printed as they come.
        ("", True, "m | epoch 1\nm |  10%\nw | w\nm |  50%\rm | 100%\nm | done"),
        ("--raw", False, "m | epoch 1\nm |  10%\nw | w\nm | \r 50%\r100%\nm | done"),
    ],
    ids=["collapsed", "in-a-kernel", "raw"],
)
def test_logs_show_a_redrawn_bar_as_a_terminal_does(
    shell: InteractiveShell,
    fake: FakeBackend,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flags: str,
    kernel: bool,
    out: str,
) -> None:
    monkeypatch.setattr(fake, "logs", bar_logs)
    monkeypatch.setattr(magics.PtjobMagics, "in_kernel", property(lambda self: kernel))
    shell.run_line_magic("ptjob", f"logs demo {flags}")
    expected = out.replace("m | ", "master-0 | ").replace("w | ", "worker-0 | ") + "\n"
    assert capsys.readouterr().out == expected


def test_errors_from_the_stream_close_it_too(shell: InteractiveShell, fake: FakeBackend) -> None:
    with pytest.raises(UsageError, match=r"^%ptjob logs: error: job 'nope' not found$"):
        shell.run_line_magic("ptjob", "logs nope -f")
    assert runner_of(shell).tasks() == []


def test_plain_ipython_renders_text_and_html(shell: InteractiveShell, fake: FakeBackend) -> None:
    table = shell.run_line_magic("ptjob", "list")
    assert repr(table).splitlines()[1].split()[:3] == ["demo", "Running", "2"]
    status = shell.run_line_magic("ptjob", "status demo")
    assert status.state == "Running"
    page = status._repr_html_()
    assert "&lt;Unschedulable&gt; 0/4 &amp; co" in page and "<Unschedulable>" not in page
    assert "worker-0  Pending" in repr(status)


def test_wait_prints_lines_outside_a_notebook(
    shell: InteractiveShell, fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    assert shell.run_line_magic("ptjob", "wait demo --timeout 0.2") == "Running"
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("demo: Running [master-0 Running, worker-0 Pending (<Unschedulable>)]")
    assert out[-1].endswith("still going after 0.2 s; stopped waiting")


def test_status_and_wait_say_why_a_job_failed(
    shell: InteractiveShell, fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    """The failure first: the replica, its exit, the exception, the hint, the traceback
    (escaped in HTML), in %ptjob status and in the output of %ptjob wait."""
    status = shell.run_line_magic("ptjob", "status crashed")
    text = repr(status)
    assert "Failure:  master-0 exited 1: ZeroDivisionError: <division> by zero" in text
    assert "Hint:     Shared memory (/dev/shm) ran out: raise --shm" in text
    assert "Output (master-0, from its previous run (logs --previous)):" in text
    assert "  Traceback (most recent call last):\n      1 / 0\n  ZeroDivisionError: <x>" in text
    page = status._repr_html_()
    assert "ZeroDivisionError: &lt;division&gt; by zero" in page and "<division>" not in page
    assert "<pre>Traceback (most recent call last):" in page
    assert shell.run_line_magic("ptjob", "wait crashed") == "Failed"
    out = capsys.readouterr().out
    assert "Failure:  master-0 exited 1: ZeroDivisionError: <division> by zero" in out
    assert "  ZeroDivisionError: <x>" in out


def test_logs_of_a_failed_job_show_its_failing_run(
    shell: InteractiveShell, fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    """%ptjob logs of a job whose failing replica's current run is empty: that run's
    previous one, after a line saying so."""
    shell.run_line_magic("ptjob", "logs crashed")
    captured = capsys.readouterr()
    assert captured.out == "master-0 | ZeroDivisionError: <x>\n"
    assert "its current run has no output; below is its previous run" in captured.err


def test_status_says_what_a_job_waits_for(shell: InteractiveShell, fake: FakeBackend) -> None:
    job = fake._job("demo")
    hint = msg("hint_no_gpus", gpus="--gpus")
    job.waiting = JobWaiting("Unschedulable", "worker-0: 0/4 & co", hint)
    status = magics.JobStatus(job)
    assert (
        "Waiting:  Unschedulable: worker-0: 0/4 & co\n"
        "Hint:     No node has the GPUs asked for free: lower --gpus or wait."
    ) in repr(status)
    assert "<b>Waiting:</b> Unschedulable: worker-0: 0/4 &amp; co" in status._repr_html_()


def test_handle_outside_the_magic(fake: FakeBackend) -> None:
    job = magics.JobHandle("demo", backend="local")
    assert repr(job) == "JobHandle('demo', backend='local')"
    assert "%ptjob logs demo -f" in job._repr_html_()
    # A function's job (it has a result key) is followed through its handle; once
    # submit() printed that, its display does not say it again.
    job.result_key = b"k"
    assert "job.logs(follow=True)" in job._repr_html_()
    assert "%ptjob" not in job._repr_html_()
    job.guided = True
    assert "Follow it with" not in job._repr_html_()
    assert job.status().state == "Running"
    with pytest.raises(TimeoutError, match="still Running"):
        job.wait(timeout=0.2)
    job.delete()
    with pytest.raises(JobNotFound):
        magics.JobHandle("other").status()


def test_interrupting_wait_returns_the_state(
    shell: InteractiveShell, fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    threading.Timer(0.3, _thread.interrupt_main).start()
    assert shell.run_line_magic("ptjob", "wait demo") == "Running"
    assert "(stopped waiting for demo; the job goes on: Running)" in capsys.readouterr().out
    assert runner_of(shell).tasks() == []


def test_interrupting_a_backend_call_cancels_it(fake: FakeBackend) -> None:
    runner = magics.Runner()
    finished = threading.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            finished.set()

    threading.Timer(0.2, _thread.interrupt_main).start()
    with pytest.raises(KeyboardInterrupt):
        runner.run(slow())
    assert finished.is_set() and runner.tasks() == []
    runner.close()


def test_help_comes_from_the_shared_parser(shell: InteractiveShell, fake: FakeBackend) -> None:
    doc = magics.PtjobMagics.ptjob.__doc__ or ""
    for word in ("usage: %ptjob", "tensorboard", "120 KiB", "PVC", "logs NAME [-f]"):
        assert word in doc
    with pytest.raises(UsageError, match="cell"):
        shell.run_cell_magic("ptjob", "list", "print(1)\n")


@pytest.mark.parametrize(
    ("flags", "key", "value"),
    [
        ("--priority-class high", "priorityClassName", "high"),
        ("--service-account s3-reader", "serviceAccountName", "s3-reader"),
        ("--image-pull-secret regcred", "imagePullSecrets", [{"name": "regcred"}]),
    ],
)
def test_cell_magic_renders_a_pod_field(
    shell: InteractiveShell,
    fake: FakeBackend,
    capsys: pytest.CaptureFixture[str],
    flags: str,
    key: str,
    value: Any,
) -> None:
    shell.run_cell_magic("ptjob", f"render --name p {flags}", "print(1)\n")
    manifest = yaml.safe_load(capsys.readouterr().out)
    master = manifest["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    assert master[key] == value


def test_dash_h_prints_the_subcommand_help(
    shell: InteractiveShell, fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    assert shell.run_line_magic("ptjob", "submit -h") is None
    out = capsys.readouterr().out
    assert out.startswith("usage: %ptjob submit") and "--nproc-per-node" in out


class _FakeServer(BaseHTTPRequestHandler):
    requests: ClassVar[list[tuple[str, str, dict[str, Any]]]] = []
    known_jobs = False

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append((self.path, self.headers.get("Authorization", ""), body))
        if "job" in body and not self.known_jobs:
            self._answer(400, {"field": "job", "message": "this server cannot find a job's logdir"})
        elif body.get("logdir") == "/outside":
            self._answer(403, {"field": "logdir", "message": "'/outside' is outside the roots"})
        else:
            self._answer(201, {"id": "abc", "url": "pytorchjob/tensorboard/abc/", "logdir": "/x"})

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def jupyter_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A stand-in Jupyter server, announced as this process's parent in the runtime dir."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _FakeServer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    _FakeServer.requests = []
    info = {
        "url": f"http://127.0.0.1:{httpd.server_port}/a%40b/",
        "base_url": "/a%40b/",
        "token": "secret",
        "pid": os.getpid(),
    }
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / f"jpserver-{os.getpid()}.json").write_text(json.dumps(info))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("JPY_PARENT_PID", str(os.getpid()))
    yield info
    httpd.shutdown()


def test_tensorboard_inline_through_the_server(
    shell: InteractiveShell, fake: FakeBackend, jupyter_server: dict[str, Any]
) -> None:
    assert server.running_server() == jupyter_server
    fake.logdir = "/runs/demo"
    _FakeServer.known_jobs = True
    with capture_output() as captured:
        shell.run_line_magic("ptjob", "tensorboard demo")
    (shown,) = captured.outputs
    assert '<iframe src="/a%40b/pytorchjob/tensorboard/abc/"' in shown.data["text/html"]
    assert shown.data["text/plain"] == (
        f"TensorBoard for demo: {jupyter_server['url']}pytorchjob/tensorboard/abc/"
    )
    assert _FakeServer.requests == [
        ("/a%40b/pytorchjob/api/tensorboards", "token secret", {"job": "demo"})
    ]


def test_tensorboard_falls_back_to_the_logdir_and_shows_refusals(
    shell: InteractiveShell,
    fake: FakeBackend,
    jupyter_server: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _FakeServer.known_jobs = False
    fake.logdir = "/runs/demo"
    with capture_output() as captured:
        shell.run_line_magic("ptjob", "tensorboard demo")
    assert "/a%40b/pytorchjob/tensorboard/abc/" in captured.outputs[0].data["text/html"]
    assert [body for _p, _a, body in _FakeServer.requests] == [
        {"job": "demo"},
        {"logdir": "/runs/demo"},
    ]

    fake.logdir = None  # the server cannot resolve the job, and the job has no logdir
    shell.run_line_magic("ptjob", "tensorboard demo")
    err = capsys.readouterr().err
    assert "this server cannot find a job's logdir" in err
    assert "has no log directory; submit it with --logdir DIR" in err

    fake.logdir = "/outside"
    shell.run_line_magic("ptjob", "tensorboard demo")
    assert "'/outside' is outside the roots" in capsys.readouterr().err


def test_tensorboard_without_a_server_says_how(
    shell: InteractiveShell,
    fake: FakeBackend,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("JPY_PARENT_PID", raising=False)
    monkeypatch.delenv("JUPYTER_SERVER_URL", raising=False)
    shell.run_line_magic("ptjob", "tensorboard demo")
    out = capsys.readouterr().out
    assert "ptjob tensorboard demo" in out and "PyTorch Jobs panel" in out
    with pytest.raises(UsageError, match="job 'other' not found"):
        shell.run_line_magic("ptjob", "tensorboard other")


# -- ``ptjob tensorboard`` (the CLI side of the same subcommand) ---------------------


def test_cli_tensorboard_runs_a_local_one_until_ctrl_c(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import urllib.request

    env = kernel_env(tmp_path / "home")
    for name in ("JPY_PARENT_PID", "JUPYTER_SERVER_URL"):
        env.pop(name, None)
    ptjob = [str(Path(sys.executable).with_name("ptjob"))]
    command = ["--shm", "off", "--", "python", "-c", "pass"]
    for args in (
        ["--name", "with-tb", "--pvc", "w:/mnt/w", "--logdir", "/mnt/w/runs", *command],
        ["--name", "no-tb", *command],
    ):
        done = subprocess.run([*ptjob, "submit", *args], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    done = subprocess.run([*ptjob, "tensorboard", "no-tb"], env=env, capture_output=True, text=True)
    assert done.returncode == 2
    assert "no-tb" in done.stderr and "--logdir" in done.stderr

    proc = subprocess.Popen(
        [*ptjob, "tensorboard", "with-tb"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/"), url
        with urllib.request.urlopen(url + "data/environment", timeout=10) as answer:
            environment = json.loads(answer.read())
        # The job's directory, as a run named after the job: a private folder of links.
        links = Path(environment["data_location"])
        job_dir = tmp_path / "home" / "volumes" / "w" / "runs"
        assert [p.name for p in links.iterdir()] == ["with-tb"]
        assert (links / "with-tb").resolve() == job_dir.resolve()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
        assert not links.exists()  # gone with its TensorBoard
        with pytest.raises(OSError):
            urllib.request.urlopen(url, timeout=2)
    finally:
        if proc.poll() is None:  # pragma: no cover - only when an assertion failed
            proc.kill()
        with contextlib.suppress(Exception):
            asyncio.run(LocalBackend(root=tmp_path / "home").delete_job("with-tb"))


def test_suspend_and_resume_magics(
    shell: InteractiveShell,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``%ptjob suspend|resume NAME`` on a running local job; a finished job's refusal is
    the magic's usage error, not a traceback."""
    backend = LocalBackend(root=tmp_path / "home")
    monkeypatch.setattr(backend_choice, "open_backend", lambda name, namespace=None: backend)
    shell.run_line_magic("load_ext", "jupyter_pytorchjob")
    manifest = backend.jobs_dir / "pausable" / "manifest.json"
    runner = runner_of(shell)
    try:
        shell.run_line_magic(
            "ptjob", "submit --name pausable --shm off -- python -c 'import time; time.sleep(120)'"
        )
        capsys.readouterr()
        shell.run_line_magic("ptjob", "suspend pausable")
        assert capsys.readouterr().out == "suspended pausable\n"
        assert json.loads(manifest.read_text())["spec"]["runPolicy"]["suspend"] is True
        shell.run_line_magic("ptjob", "resume pausable")
        assert capsys.readouterr().out == "resumed pausable\n"
        assert json.loads(manifest.read_text())["spec"]["runPolicy"]["suspend"] is False

        shell.run_line_magic("ptjob", "submit --name over --shm off -- true")
        runner.run(backend.wait("over", timeout=60))
        with pytest.raises(UsageError, match="is Succeeded: a finished job cannot be suspended"):
            shell.run_line_magic("ptjob", "suspend over")
    finally:
        for job in runner.run(backend.list_jobs()):
            runner.run(backend.delete_job(job.name))


def test_runtimes_and_a_trainjob_submit_on_the_kubernetes_backend(
    shell: InteractiveShell,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``%ptjob runtimes`` lists the fake Trainer's runtimes (text and HTML), and
    ``%ptjob submit --kind trainjob --runtime X`` makes a TrainJob on that runtime."""
    from .crd import TRAINJOB_CRD, require_crds

    require_crds(TRAINJOB_CRD)
    kube = FakeKubeThread()
    try:
        monkeypatch.setenv("KUBECONFIG", str(kube.fake.write_kubeconfig(tmp_path / "kubeconfig")))
        monkeypatch.setenv("PTJOB_BACKEND", "kubernetes")
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        shell.run_line_magic("load_ext", "jupyter_pytorchjob")
        table = shell.run_line_magic("ptjob", "runtimes")
        lines = repr(table).splitlines()
        assert lines[0].split() == ["NAME", "SCOPE", "FRAMEWORK", "NODES", "IMAGE", "USABLE"]
        rows = {line.split()[0]: line for line in lines[1:]}
        assert rows["torch-distributed"].split()[1:5] == [
            "cluster",
            "torch",
            "1",
            "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
        ]
        assert rows["torch-distributed"].rstrip().endswith("  yes")
        assert "no: runs mpi jobs, not torch (torchrun) ones" in rows["deepspeed-distributed"]
        assert "<td>torch-distributed</td><td>cluster</td>" in table._repr_html_()

        shell.run_line_magic(
            "ptjob",
            "submit --kind trainjob --runtime torch-distributed --name tj --nodes 2 "
            "-- torchrun train.py",
        )
        assert "Submitted tj: 2 node(s)" in capsys.readouterr().out
        job = kube.call(kube.fake.get, "trainjobs", "team-a", "tj")
        assert job["spec"]["runtimeRef"]["name"] == "torch-distributed"
        assert job["spec"]["trainer"]["numNodes"] == 2
        with pytest.raises(UsageError, match=r"--runtime: .*no-such"):
            shell.run_line_magic(
                "ptjob", "submit --kind trainjob --runtime no-such --name tj2 -- torchrun t.py"
            )
    finally:
        runner_of(shell).run(runner_of(shell).backend("kubernetes", None).close())
        kube.stop()


def test_result_errors_show_no_traceback_into_our_raise(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    """``job.result()`` / ``job.wait()`` errors: IPython prints the message alone."""
    shell.run_cell(
        "from jupyter_pytorchjob.function.script import ResultError\n"
        "def result():\n"
        "    raise ResultError('job j is Running, so it has no result: call wait() first')\n"
        "result()\n"
    )
    shown = capsys.readouterr()
    text = shown.out + shown.err
    assert "ResultError: job j is Running, so it has no result: call wait() first" in text
    assert "Traceback" not in text and "def result" not in text
