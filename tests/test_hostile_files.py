"""Hostile files on a job's volume (#25): a FIFO, a link to ``/dev/zero``, a log
directory linked elsewhere, a link to another job's archive - planted where a pod (or
another user of the PVC) could put them, read through real requests to a real Jupyter
server and the real progress worker process. Each answers, takes bounded memory, shows
nothing of another job and leaves the other jobs' progress alone."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend

from .local_jobs import backend, make_spec
from .test_kubernetes_backend import NOTEBOOK_POD
from .test_kubernetes_progress import archive_line, spec, wait_progress

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
__all__ = ["backend"]  # fixture: deletes its jobs in teardown

NS = "team-a"
API = ("pytorchjob", "api")
# What reading a hostile file may add to the peak memory of the server's process: the
# jobs' own reads take a few MB; /dev/zero read to its end takes all there is.
MEMORY_BOUND = 150 << 20


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    """A server in notebook pod nb-0 on the kubernetes backend, reading progress often."""
    return {
        "ServerApp": jp_server_config["ServerApp"],
        "PyTorchJobApp": {
            "backend": "kubernetes",
            "kubernetes_progress_interval": 0.1,
            "notebook_pod": "nb-0",
        },
    }


@pytest.fixture
def home(fake_kube: Any, tmp_path: Path) -> Path:
    """Where notebook nb-0 mounts PVC workspace (the jobs mount it at /mnt/ws)."""
    notebook = copy.deepcopy(NOTEBOOK_POD)
    mounted = tmp_path / "workspace-pvc"
    notebook["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] = str(mounted)
    fake_kube.add(notebook)
    mounted.mkdir()
    return mounted


@pytest.fixture
def fifos() -> Iterator[list[Path]]:
    """FIFOs a test plants. Teardown opens each for writing: a reader blocked in its
    open (the bug) is released, so a failing test still ends."""
    planted: list[Path] = []
    yield planted
    release(planted)


def release(fifos: list[Path]) -> None:
    """Open each FIFO for writing, and close it: a reader blocked opening it goes on."""
    for fifo in fifos:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue  # no reader waits on it
        os.close(fd)


def body(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "nodes": 2,
        "command": ["python", "train.py"],
        "pvc": [{"claim": "workspace", "mountPath": "/mnt/ws"}],
        "logdir": f"/mnt/ws/runs/{name}",
        "cleanPodPolicy": "All",
    }


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


async def test_hostile_archives_answer_and_touch_only_their_own_job(
    fake_kube: Any, jp_fetch: Any, jp_serverapp: Any, home: Path, fifos: list[Path]
) -> None:
    """Finished jobs whose pods are gone are read from their log archive: the progress
    poller and ``GET jobs/{name}/logs``. One archive is fine; the others hold a link to
    /dev/zero, a FIFO, a link to the fine job's log, a link to the fine job's archive."""
    names = ["victim", "zero", "fifo", "thief", "thief-dir"]
    for name in names:
        await jp_fetch(*API, "jobs", method="POST", body=json.dumps(body(name)))
        fake_kube.operator.run(NS, name)
        fake_kube.operator.succeed(NS, name)
        assert fake_kube.operator.pods(NS, name) == []
    archive = {name: home / "runs" / name / ".ptjob-logs" / name for name in names}
    for name in ["victim", "zero", "fifo", "thief"]:
        archive[name].mkdir(parents=True)
    secret = "{'loss': 0.231, 'epoch': 3.0}"
    (archive["victim"] / "master-0.log").write_text(archive_line(secret))
    (archive["zero"] / "master-0.log").symlink_to("/dev/zero")
    os.mkfifo(archive["fifo"] / "master-0.log")
    fifos.append(archive["fifo"] / "master-0.log")
    (archive["thief"] / "master-0.log").symlink_to(archive["victim"] / "master-0.log")
    archive["thief-dir"].parent.mkdir(parents=True)
    archive["thief-dir"].symlink_to(archive["victim"], target_is_directory=True)
    before = peak_rss()

    async def jobs() -> dict[str, Any]:
        listed = json.loads((await jp_fetch(*API, "jobs")).body)["jobs"]
        return {job["name"]: job for job in listed}

    # The fine job's progress comes from its archive, the others' from nowhere.
    deadline = time.monotonic() + 30
    while (found := await jobs())["victim"]["progress"] is None:
        assert time.monotonic() < deadline, found
        await asyncio.sleep(0.05)
    assert found["victim"]["progress"]["metrics"]["loss"] == pytest.approx(0.231)
    # Every job is read to its end: nothing hangs on a FIFO or reads /dev/zero for ever.
    watcher = jp_serverapp.web_app.settings["pytorchjob_backend"].progress_watcher

    async def all_read() -> bool:
        await jobs()  # a look keeps the poller going
        return all(watcher.jobs[name].done for name in names)

    deadline = time.monotonic() + 30
    while not await all_read():
        undone = [n for n in names if not watcher.jobs[n].done]
        assert time.monotonic() < deadline, f"never read to the end: {undone}"
        await asyncio.sleep(0.05)
    for name in names[1:]:
        assert (await jobs())[name]["progress"] is None, name

    # The logs answer; the fine job's lines show under its own name only.
    for name in names:
        response = await asyncio.wait_for(
            jp_fetch(*API, "jobs", name, "logs", raise_error=False), 30
        )
        assert response.code == 200, (name, response.body)
        text = response.body.decode()
        assert ("0.231" in text) == (name == "victim"), (name, text[:500])
    assert peak_rss() - before < MEMORY_BOUND


async def test_hostile_event_files_freeze_no_job_and_show_nothing_foreign(
    fake_kube: Any, jp_asyncio_loop: Any, home: Path, tmp_path: Path, fifos: list[Path]
) -> None:
    """The parser's worker process (as a server runs it) reads every job's event files:
    a FIFO named like an event file, a directory linked to ``/`` and a log directory
    linked to another project's runs neither stall it nor lend their metrics."""
    from torch.utils.tensorboard import SummaryWriter

    board = home / "runs" / "board"
    board.mkdir(parents=True)
    fifo = board / "events.out.tfevents.0.fifo"
    os.mkfifo(fifo)
    fifos.append(fifo)
    (board / "everything").symlink_to("/", target_is_directory=True)
    (board / "zero.tfevents").symlink_to("/dev/zero")
    other_project = tmp_path / "other-project" / "runs"
    other_project.mkdir(parents=True)
    (home / "runs" / "rooted").symlink_to(other_project, target_is_directory=True)
    for directory, tag in ((other_project, "secret"), (board / "run1", "loss")):
        writer = SummaryWriter(str(directory))
        writer.add_scalar(tag, 0.5, 7)
        writer.close()

    backend = KubernetesBackend(
        self_pod="nb-0", progress_interval=0.05, progress_parse_in_process=True
    )
    try:
        for name in ("board", "rooted"):
            await backend.submit(spec(name, **{k: v for k, v in body(name).items() if k != "name"}))
            fake_kube.operator.run(NS, name)
        progress = await wait_progress(backend, "board", lambda p: p.step == 7, "its scalars")
        assert progress.metrics == {"run1/loss": 0.5}
        # The other job's reads are done too (the parser serves the jobs one at a time).
        fake_kube.operator.succeed(NS, "rooted")
        deadline = time.monotonic() + 30
        while not backend.progress_watcher.jobs["rooted"].done:
            await backend.list_jobs()
            assert time.monotonic() < deadline, "the linked job never read to its end"
            await asyncio.sleep(0.05)
        assert next(j for j in await backend.list_jobs() if j.name == "rooted").progress is None
        pool = backend.progress_watcher.parser._pool
        assert pool is not None
        (worker,) = pool._processes.values()  # the only way to its pid: a private map
        assert psutil.Process(worker.pid).memory_info().rss < MEMORY_BOUND
    finally:
        release(fifos)  # else a worker stuck opening one (the bug) is never shut down
        await backend.close()


# -- local: the supervisor's progress tracker ------------------------------------------

EPOCHS = "import time\nfor i in range(1, 4):\n    print(f'Epoch {i}/3', flush=True)\n"


async def test_a_local_jobs_hostile_log_directory_stalls_neither_progress_nor_the_end(
    backend: Any, fifos: list[Path]
) -> None:
    """The job's supervisor reads its log directory's event files in a thread: a FIFO
    named like one, a link to /dev/zero and a directory linked to / are passed over;
    the log's progress comes, and the job ends (the final read drains every source)."""
    logdir = backend.volume_root / "data" / "tb"
    logdir.mkdir(parents=True)
    os.mkfifo(logdir / "events.out.tfevents.0.fifo")
    fifos.append(logdir / "events.out.tfevents.0.fifo")
    (logdir / "zero.tfevents").symlink_to("/dev/zero")
    (logdir / "everything").symlink_to("/", target_is_directory=True)
    spec = make_spec(
        name="hostile",
        script=EPOCHS,
        pvc=[{"claim": "data", "mountPath": "/data"}],
        logdir="/data/tb",
        logArchive="off",
    )
    await backend.submit(spec)
    try:
        done = await backend.wait("hostile", timeout=60, interval=0.1)
        assert done.state.value == "Succeeded"
        deadline = time.monotonic() + 30
        while (progress := (await backend.get_job("hostile")).progress) is None or (
            progress.epoch != 3
        ):
            assert time.monotonic() < deadline, progress
            await asyncio.sleep(0.05)
        assert progress.metrics == {}  # nothing read from the planted files
    finally:
        release(fifos)
