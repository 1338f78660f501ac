"""A cluster job's progress from its master pod's log (read through the API from the last
line on) and its TensorBoard files (where the notebook mounts the job's PVC): the real
kubernetes_asyncio client against the HTTP-level fake API server."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend
from jupyter_pytorchjob.backends.kubernetes import progress as watcher_module
from jupyter_pytorchjob.job import JobSpec

from .test_kubernetes_backend import NOTEBOOK_POD
from .waiting import until

NS = "team-a"
LOG = "/api/v1/namespaces/team-a/pods/{}/log"


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    """A Jupyter server on the kubernetes backend that reads progress every 0.1 s."""
    return {
        "ServerApp": jp_server_config["ServerApp"],
        "PyTorchJobApp": {"backend": "kubernetes", "kubernetes_progress_interval": 0.1},
    }


@pytest.fixture
def backend(fake_kube: Any, jp_asyncio_loop: Any) -> Any:
    backend = KubernetesBackend(progress_interval=0.05)
    yield backend
    jp_asyncio_loop.run_until_complete(backend.close())


def spec(name: str, **body: Any) -> JobSpec:
    return JobSpec.from_wire({"name": name, "command": ["python", "train.py"], "nodes": 2, **body})


def log_reads(fake_kube: Any, pod: str) -> list[dict[str, str]]:
    return [q for method, path, q in fake_kube.access_log if path == LOG.format(pod)]


async def progress_of(backend: KubernetesBackend, name: str) -> Any:
    return next(j.progress for j in await backend.list_jobs() if j.name == name)


async def wait_progress(backend: KubernetesBackend, name: str, check: Any, what: str) -> Any:
    """List until the job's progress passes ``check`` (each list is a look, which keeps
    the polling on); the progress."""
    deadline = time.monotonic() + 20
    while True:
        progress = await progress_of(backend, name)
        if progress is not None and check(progress):
            return progress
        assert time.monotonic() < deadline, f"still waiting for {what}: {progress}"
        await asyncio.sleep(0.05)


async def test_master_log_progress_is_read_from_the_last_line_on(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    await backend.submit(spec("ddp"))
    fake_kube.operator.run(NS, "ddp")
    fake_kube.append_log(NS, "ddp-worker-0", "pytorch", " 90%|█████████ | 90/100 [00:09<00:01]\n")
    fake_kube.append_log(
        NS, "ddp-master-0", "pytorch", "starting\n 10%|█         | 10/100 [00:01<00:09, 9.5it/s]\n"
    )
    progress = await wait_progress(backend, "ddp", lambda p: p.step == 10, "the master's bar")
    assert progress.source.value == "logs" and progress.total_steps == 100
    assert progress.percent == pytest.approx(10)
    # The worker's bar is not the job's progress: the master's is.
    assert not log_reads(fake_kube, "ddp-worker-0")
    fake_kube.append_log(
        NS,
        "ddp-master-0",
        "pytorch",
        "{'loss': 0.75, 'learning_rate': 2e-05, 'epoch': 0.5}\n"
        " 50%|█████     | 50/100 [00:05<00:05, 9.5it/s]\r 60%|██████    | 60/100 [00:06<00:04]\n",
    )
    progress = await wait_progress(backend, "ddp", lambda p: p.step == 60, "the redrawn bar")
    assert progress.metrics == {"loss": 0.75, "learning_rate": 2e-05}
    assert progress.epoch == 0.5
    assert progress.key_metric == "loss"
    # Read incrementally: the first read took the tail, every later one resumed from
    # the newest line read (sinceTime), bounded by limitBytes.
    reads = log_reads(fake_kube, "ddp-master-0")
    assert "tailLines" in reads[0] and "sinceTime" not in reads[0]
    assert len(reads) > 1 and all("sinceTime" in q for q in reads[1:]), reads
    assert all(q["limitBytes"] == str(watcher_module.LOG_BUDGET) for q in reads)
    assert all(q["container"] == "pytorch" and q["timestamps"] == "true" for q in reads)
    # Each loss line once in the history, however many polls read the log.
    _, history = await backend.progress("ddp")
    assert history is not None and [p.value for p in history.series["loss"]] == [0.75]


async def test_a_finished_job_keeps_its_final_metrics_and_is_read_no_more(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    await backend.submit(spec("done"))
    fake_kube.operator.run(NS, "done")
    fake_kube.append_log(NS, "done-master-0", "pytorch", "{'eval_loss': 0.31, 'epoch': 3.0}\n")
    fake_kube.operator.succeed(NS, "done")
    progress = await wait_progress(backend, "done", lambda p: "eval_loss" in p.metrics, "metrics")
    assert progress.metrics["eval_loss"] == 0.31
    await until(
        lambda: backend.progress_watcher.jobs["done"].done, "the finished job read to its end"
    )
    reads = len(log_reads(fake_kube, "done-master-0"))
    for _ in range(5):
        assert (await progress_of(backend, "done")).metrics["eval_loss"] == 0.31
        await backend.progress_watcher.poll()
    assert len(log_reads(fake_kube, "done-master-0")) == reads
    # A job gone from the list is forgotten; one never read has no progress.
    await backend.delete_job("done")
    await backend.submit(spec("quiet"))
    assert await progress_of(backend, "quiet") is None
    assert "done" not in backend.progress_watcher.jobs


async def test_event_files_where_the_notebook_mounts_the_pvc(
    fake_kube: Any, jp_asyncio_loop: Any, tmp_path: Path
) -> None:
    """The job writes to /mnt/ws/runs/a on PVC workspace; the notebook mounts workspace
    at a directory of this machine: the event files are read there, as TensorBoard does."""
    from torch.utils.tensorboard import SummaryWriter

    notebook = copy.deepcopy(NOTEBOOK_POD)
    home = tmp_path / "home"
    notebook["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] = str(home)
    fake_kube.add(notebook)
    backend = KubernetesBackend(self_pod="nb-0", progress_interval=0.05)
    try:
        await backend.submit(
            spec(
                "board",
                pvc=[{"claim": "workspace", "mountPath": "/mnt/ws"}],
                logdir="/mnt/ws/runs/a",
            )
        )
        fake_kube.operator.run(NS, "board")
        writer = SummaryWriter(str(home / "runs" / "a"))
        try:
            for step in range(1, 4):
                writer.add_scalar("loss", 1.0 / step, step)
            writer.flush()
            progress = await wait_progress(backend, "board", lambda p: p.step == 3, "scalars")
            assert progress.source.value == "tensorboard"
            assert progress.metrics == {"loss": pytest.approx(1 / 3)}
            writer.add_scalar("loss", 0.125, 8)
            writer.add_scalar("accuracy", 0.9, 8)
            writer.flush()
            progress = await wait_progress(backend, "board", lambda p: p.step == 8, "new scalars")
            assert progress.metrics == {"loss": 0.125, "accuracy": pytest.approx(0.9)}
        finally:
            writer.close()
        _, history = await backend.progress("board")
        assert history is not None
        assert [p.step for p in history.series["loss"]] == [1, 2, 3, 8]  # each once
    finally:
        await backend.close()


def archive_line(text: str) -> str:
    """A line as the log archive's wrapper writes it: RFC 3339 with nanoseconds, a space."""
    ns = time.time_ns()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9))
    return f"{stamp}.{ns % 10**9:09d}Z {text}\n"


async def test_a_job_whose_pods_are_gone_shows_its_final_metrics_from_the_archive(
    fake_kube: Any, jp_asyncio_loop: Any, tmp_path: Path
) -> None:
    """cleanPodPolicy All deleted the pods: a server that reads the job afresh (restarted,
    or new) finds its final metrics in the chief replica's log archive on the PVC."""
    notebook = copy.deepcopy(NOTEBOOK_POD)
    home = tmp_path / "home"
    notebook["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] = str(home)
    fake_kube.add(notebook)
    body = {
        "pvc": [{"claim": "workspace", "mountPath": "/mnt/ws"}],
        "logdir": "/mnt/ws/runs/g",
        "cleanPodPolicy": "All",
    }
    writer = KubernetesBackend(self_pod="nb-0", progress_interval=0)
    try:
        await writer.submit(spec("gone", **body))
    finally:
        await writer.close()
    fake_kube.operator.run(NS, "gone")
    # What the wrapper archived in the pods (the archive defaults to the log directory).
    archive = home / "runs" / "g" / ".ptjob-logs" / "gone"
    archive.mkdir(parents=True)
    (archive / "worker-0.log").write_text(archive_line("{'loss': 9.0, 'epoch': 3.0}"))
    (archive / "master-0.log").write_text(archive_line("{'loss': 0.9, 'epoch': 1.0}"))
    (archive / "master-0.1.log").write_text(
        archive_line(" 50%|█████     | 50/100 [00:05<00:05]")
        + archive_line("{'loss': 0.231, 'epoch': 3.0}")
        + archive_line("100%|██████████| 100/100 [00:10<00:00]")
    )
    fake_kube.operator.succeed(NS, "gone")
    assert fake_kube.operator.pods(NS, "gone") == []

    backend = KubernetesBackend(self_pod="nb-0", progress_interval=0.05)
    try:
        progress = await wait_progress(
            backend, "gone", lambda p: p.step == 100, "the archived master's progress"
        )
        assert progress.metrics["loss"] == pytest.approx(0.231)  # the master's last run
        assert progress.percent == pytest.approx(100)
        await until(lambda: backend.progress_watcher.jobs["gone"].done, "read to its end")
        # A notebook without the PVC: no progress, and no error in the list.
        elsewhere = KubernetesBackend(progress_interval=0.05)
        try:
            await progress_of(elsewhere, "gone")  # a look: the watcher reads it from now on
            for _ in range(2):
                await elsewhere.progress_watcher.poll()
            assert await progress_of(elsewhere, "gone") is None
        finally:
            await elsewhere.close()
    finally:
        await backend.close()


async def test_a_hostile_log_changes_only_its_own_jobs_progress(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    await backend.submit(spec("calm"))
    await backend.submit(spec("noisy"))
    for name in ("calm", "noisy"):
        fake_kube.operator.run(NS, name)
    fake_kube.append_log(NS, "calm-master-0", "pytorch", " 20%|██        | 20/100 [00:02<00:08]\n")
    # A 10 MB line, then a fake bar with absurd numbers, then nothing sane.
    fake_kube.append_log(NS, "noisy-master-0", "pytorch", "x" * (10 << 20) + "\n")
    fake_kube.append_log(
        NS, "noisy-master-0", "pytorch", "1e308%|█| 99999999999999999999/3 [99:99<-1]\n"
    )
    progress = await wait_progress(backend, "calm", lambda p: p.step == 20, "the calm job")
    assert progress.percent == pytest.approx(20)
    await until(
        lambda: len(log_reads(fake_kube, "noisy-master-0")) >= 3, "the noisy log read again"
    )
    noisy = await progress_of(backend, "noisy")
    assert noisy is None or (noisy.step is None and noisy.percent is None), noisy
    # Reading goes on after the second of the long line (the lines of that second after
    # it are lost to the progress - the API resumes only at whole seconds).
    second = int(time.time()) + 1
    await until(lambda: time.time() >= second, "the next second")
    fake_kube.append_log(NS, "noisy-master-0", "pytorch", " 30%|███       | 30/100 [00:03<00:07]\n")
    progress = await wait_progress(backend, "noisy", lambda p: p.step == 30, "sane again")
    assert (await progress_of(backend, "calm")).step == 20


async def test_fresh_metric_names_are_bounded_and_said(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    """A job printing a dict with fresh names on every line keeps MAX_METRICS of them,
    says how many it left out, and another job's progress still comes."""
    from jupyter_pytorchjob.job.progress import MAX_METRICS

    await backend.submit(spec("calm"))
    await backend.submit(spec("names"))
    for name in ("calm", "names"):
        fake_kube.operator.run(NS, name)
    fresh = "".join(f"{{'loss': 0.5, 'm{i}': {i}}}\n" for i in range(5000))
    fake_kube.append_log(NS, "names-master-0", "pytorch", fresh)
    fake_kube.append_log(NS, "calm-master-0", "pytorch", " 20%|██        | 20/100 [00:02<00:08]\n")
    await wait_progress(backend, "calm", lambda p: p.step == 20, "the calm job")
    progress = await wait_progress(
        backend, "names", lambda p: p.dropped_metrics > 0, "the dropped names counted"
    )
    assert len(progress.metrics) == MAX_METRICS
    assert progress.dropped_metrics == 200 - (MAX_METRICS - 1)  # the tail: its last 200 lines
    _, history = await backend.progress("names")
    assert history is not None and len(history.series) == MAX_METRICS


async def test_a_command_reads_for_each_look_and_leaves_nothing_running(
    fake_kube: Any,
) -> None:
    """``ptjob list`` lists once and exits, ``%ptjob list`` runs in a kernel: each look
    waits (boundedly) for a read made for it, and no polling goes on between looks."""
    backend = KubernetesBackend(progress_interval=0.05, progress_wait=10)
    try:
        await backend.submit(spec("cli"))
        fake_kube.operator.run(NS, "cli")
        fake_kube.append_log(NS, "cli-master-0", "pytorch", "Epoch 2/8\n")
        progress = await progress_of(backend, "cli")  # the very first list
        assert progress is not None and (progress.epoch, progress.total_epochs) == (2, 8)
        watcher = backend.progress_watcher
        assert watcher._task is not None and watcher._task.done()
        reads = len(log_reads(fake_kube, "cli-master-0"))
        fake_kube.append_log(NS, "cli-master-0", "pytorch", "Epoch 3/8\n")
        assert len(log_reads(fake_kube, "cli-master-0")) == reads  # nobody looked
        progress = await progress_of(backend, "cli")
        assert progress.epoch == 3  # read on from the last line
        reads_after = log_reads(fake_kube, "cli-master-0")[reads:]
        assert len(reads_after) == 1 and "sinceTime" in reads_after[0]
    finally:
        await backend.close()


async def test_a_server_polls_while_somebody_looks(
    backend: KubernetesBackend, fake_kube: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watcher_module, "IDLE", 0.3)
    await backend.submit(spec("srv"))
    fake_kube.operator.run(NS, "srv")
    fake_kube.append_log(NS, "srv-master-0", "pytorch", "Epoch 2/8\n")
    await wait_progress(backend, "srv", lambda p: p.epoch == 2, "the first read")
    watcher = backend.progress_watcher
    await until(lambda: watcher._task is not None and watcher._task.done(), "polling stops")
    reads = len(log_reads(fake_kube, "srv-master-0"))
    fake_kube.append_log(NS, "srv-master-0", "pytorch", "Epoch 3/8\n")
    assert len(log_reads(fake_kube, "srv-master-0")) == reads  # nobody looked
    # A look starts it again; the look itself shows what was read before it.
    assert (await progress_of(backend, "srv")).epoch == 2
    await wait_progress(backend, "srv", lambda p: p.epoch == 3, "polling again")


async def test_no_progress_sources_when_turned_off(fake_kube: Any) -> None:
    backend = KubernetesBackend(progress_interval=0)
    try:
        await backend.submit(spec("off"))
        fake_kube.operator.run(NS, "off")
        fake_kube.append_log(NS, "off-master-0", "pytorch", "Epoch 1/2\n")
        for _ in range(3):
            assert await progress_of(backend, "off") is None
        assert not log_reads(fake_kube, "off-master-0")
    finally:
        await backend.close()


async def test_the_rest_api_carries_cluster_progress(fake_kube: Any, jp_fetch: Any) -> None:
    """``GET jobs`` on a real Jupyter server: the progress the server's own polling read
    from the master's log; ``GET jobs/{name}/progress`` its history."""

    async def get(*path: str) -> Any:
        return json.loads((await jp_fetch("pytorchjob", "api", *path)).body)

    body = {"name": "api", "nodes": 2, "command": ["python", "train.py"]}
    await jp_fetch("pytorchjob", "api", "jobs", method="POST", body=json.dumps(body))
    fake_kube.operator.run(NS, "api")
    fake_kube.append_log(NS, "api-master-0", "pytorch", "{'loss': 0.5, 'epoch': 1.0}\n")
    fake_kube.append_log(NS, "api-master-0", "pytorch", "{'loss': 0.25, 'epoch': 2.0}\n")
    deadline = time.monotonic() + 20
    while True:
        (job,) = (await get("jobs"))["jobs"]
        if job["progress"] and job["progress"]["metrics"].get("loss") == 0.25:
            break
        assert time.monotonic() < deadline, job
        await asyncio.sleep(0.05)
    assert job["progress"]["source"] == "logs" and job["progress"]["keyMetric"] == "loss"
    assert (await get("jobs", "api"))["progress"]["epoch"] == 2.0
    history = (await get("jobs", "api", "progress"))["history"]
    assert [p["value"] for p in history["loss"]] == [0.5, 0.25]
    with pytest.raises(HTTPClientError) as info:
        await get("jobs", "nope", "progress")
    assert info.value.code == 404


async def test_a_killed_parser_process_is_replaced(fake_kube: Any) -> None:
    """A server parses in a worker process: when it dies (killed, out of memory) a new
    one takes over at the next read, from the log's tail, and nothing else breaks."""
    backend = KubernetesBackend(progress_interval=0.05, progress_parse_in_process=True)
    try:
        await backend.submit(spec("kill"))
        fake_kube.operator.run(NS, "kill")
        fake_kube.append_log(NS, "kill-master-0", "pytorch", "Epoch 1/4\n")
        await wait_progress(backend, "kill", lambda p: p.epoch == 1, "the first epoch")
        pool = backend.progress_watcher.parser._pool
        assert pool is not None
        (worker,) = pool._processes.values()  # the only way to its pid: a private map
        assert worker.pid != os.getpid()
        os.kill(worker.pid, signal.SIGKILL)
        fake_kube.append_log(NS, "kill-master-0", "pytorch", "Epoch 2/4\n")
        await wait_progress(backend, "kill", lambda p: p.epoch == 2, "a new parser")
        assert backend.progress_watcher.parser._pool is not pool
        _, history = await backend.progress("kill")
        assert history is not None
    finally:
        await backend.close()
    assert backend.progress_watcher.parser._pool is None  # its process stopped


# A server's parser, as in a Jupyter server: its worker process started, then waiting.
PARSER_HOLDER = """
import asyncio, multiprocessing.resource_tracker as tracker, sys
from jupyter_pytorchjob.backends.kubernetes.progress import ProgressParser

async def main():
    parser = ProgressParser(in_process=True)
    await parser.start("job", None)
    (worker,) = parser._pool._processes.values()
    print(worker.pid, tracker._resource_tracker._pid, flush=True)
    await asyncio.to_thread(sys.stdin.read)

asyncio.run(main())
"""


def test_a_killed_server_leaves_no_parser_process_or_resource_tracker() -> None:
    """SIGKILL runs no shutdown: the worker dies with the server (PR_SET_PDEATHSIG),
    and with it the multiprocessing resource tracker (its pipe closes)."""
    import subprocess
    import sys

    import psutil

    holder = subprocess.Popen(
        [sys.executable, "-c", PARSER_HOLDER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    left: list[psutil.Process] = []
    try:
        assert holder.stdout is not None
        worker, tracker = (psutil.Process(int(pid)) for pid in holder.stdout.readline().split())
        left = [worker, tracker]
        assert {worker.ppid(), tracker.ppid()} == {holder.pid}
        holder.kill()
        holder.wait()
        _, left = psutil.wait_procs([worker, tracker], timeout=20)
        assert left == [], f"left running after the server was killed: {left}"
    finally:
        for process in [holder, *left]:
            with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
                process.kill()
        holder.wait()


def counting_backend() -> tuple[KubernetesBackend, list[int]]:
    """A backend polling progress, and the size of each log read it makes."""
    backend = KubernetesBackend(progress_interval=0.05, progress_wait=10)
    served: list[int] = []
    read_log = backend.progress_watcher.read_log

    async def counted(pod: str, query: dict[str, Any]) -> bytes | None:
        data = await read_log(pod, query)
        served.append(len(data or b""))
        return data

    backend.progress_watcher.read_log = counted
    return backend, served


async def test_a_second_over_the_budget_is_not_read_again_while_nothing_is_new(
    fake_kube: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job whose last second of output exceeded ``LOG_BUDGET``: ``sinceTime`` has whole
    seconds, so reading on from its newest line asks for that whole second again - once
    at most, then the polls read only what is new (here: nothing)."""
    monkeypatch.setattr(watcher_module, "LOG_BUDGET", 64 << 10)
    backend, served = counting_backend()
    try:
        await backend.submit(spec("burst"))
        fake_kube.operator.run(NS, "burst")
        # One write: every line has the same time, 4 budgets' worth of them.
        lines = "".join(f"Epoch {i}/9999 {'x' * 1000}\n" for i in range(1, 260))
        fake_kube.append_log(NS, "burst-master-0", "pytorch", lines)
        for _ in range(6):  # catch up: the tail, then on from its newest line
            await progress_of(backend, "burst")
        served.clear()
        for _ in range(10):
            await progress_of(backend, "burst")
        assert len(served) == 10
        # At most one more read of the whole second; the other polls read nothing.
        assert sum(served) <= watcher_module.LOG_BUDGET + 4096, served
    finally:
        await backend.close()


async def test_following_a_jobs_logs_tracks_no_progress(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    """The watcher reads the jobs somebody looks at (a list, a status), registered by
    those reads alone: following a job's logs, which reads the job again to see it end,
    starts no progress reads of it."""
    await backend.submit(spec("followed"))
    fake_kube.operator.run(NS, "followed")
    fake_kube.append_log(NS, "followed-master-0", "pytorch", "hello\n")
    fake_kube.operator.succeed(NS, "followed")
    chunks = [c async for c in backend.logs("followed", follow=True)]
    assert any("hello" in c.text for c in chunks)
    assert "followed" not in backend.progress_watcher.jobs
    await backend.get_job("followed")
    assert "followed" in backend.progress_watcher.jobs


async def test_an_ended_second_is_not_read_again_while_nothing_is_new(
    fake_kube: Any,
) -> None:
    """``sinceTime`` has whole seconds: reading on from the newest line asks for all of
    its second again, at every poll, however long ago that second ended (up to
    ``LOG_BUDGET`` each time). Once it has ended, the polls read only what is new
    (here: nothing), and a line written later is read all the same."""
    backend, served = counting_backend()
    try:
        await backend.submit(spec("quiet"))
        fake_kube.operator.run(NS, "quiet")
        # One write, its second long over (well past any clock skew).
        bars = "".join(f" {i}%|          | {i}/100 [00:01<00:09]\n" for i in range(1, 51))
        ended = time.time_ns() - 60 * 10**9
        fake_kube.append_log(NS, "quiet-master-0", "pytorch", bars, at_ns=ended)
        await wait_progress(backend, "quiet", lambda p: p.step == 50, "the last bar")
        for _ in range(3):  # the tail, then on from its newest line
            await progress_of(backend, "quiet")
        served.clear()
        for _ in range(10):
            await progress_of(backend, "quiet")
        assert len(served) == 10
        assert sum(served) == 0, served
        fake_kube.append_log(
            NS, "quiet-master-0", "pytorch", " 60%|          | 60/100 [00:06<00:04]\n"
        )
        await wait_progress(backend, "quiet", lambda p: p.step == 60, "a bar written later")
    finally:
        await backend.close()
