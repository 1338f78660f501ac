"""Faults on the local backend, with real processes: each ends in a true state, no
process of the job left (found in /proc by a marker in their environment, whoever their
parent is now), and the log written so far intact."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from jupyter_pytorchjob.backends import JobNotFound, JobState
from jupyter_pytorchjob.backends.local import LocalBackend

from .local_jobs import (
    EXAMPLES,
    backend,
    collect_logs,
    eventually,
    make_spec,
    processes_with_environ,
    running,
)
from .log_messages import unbatch

pytestmark = pytest.mark.slow
__all__ = ["backend"]  # fixture


@pytest.fixture
def marker() -> Iterator[str]:
    """An environment variable value that marks every process of one test's jobs; any
    still alive afterwards is killed (and fails the test that left it)."""
    mark = f"fault-{uuid.uuid4().hex}"
    yield mark
    for pid in processes_with_environ(mark):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def ticks(text: str) -> list[int]:
    return [int(line.split()[1]) for line in text.splitlines() if line.startswith("tick ")]


# Rank 0 prints ticks, the other ranks are silent; each starts a child that sleeps.
TICKER = """
import os, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
if os.environ["RANK"] != "0":
    time.sleep(600)
for i in range(10**9):
    print("tick", i, flush=True)
    time.sleep(0.01)
"""


async def running_with_ticks(backend: LocalBackend, name: str, marker: str) -> None:
    async def ready() -> bool:
        job = await backend.get_job(name)
        text = (await collect_logs(backend, name)).get("master-0", "")
        return all(r.phase == "Running" for r in job.replicas) and len(ticks(text)) >= 20

    assert await eventually(ready, timeout=30)
    # 2 nodes and their 2 children; the children may still be starting.
    assert await eventually(lambda: len(processes_with_environ(marker)) >= 4)


async def test_supervisor_killed_mid_run(backend: LocalBackend, marker: str) -> None:
    await backend.submit(make_spec(name="orphan", nodes=2, script=TICKER, env={"MARK": marker}))
    await running_with_ticks(backend, "orphan", marker)
    job = json.loads((backend.jobs_dir / "orphan" / "job.json").read_text())
    os.kill(job["supervisor"]["pid"], signal.SIGKILL)

    assert await eventually(lambda: processes_with_environ(marker) == [])
    done = await backend.wait("orphan", timeout=20, interval=0.1)
    condition = done.conditions[-1]
    assert (done.state, condition.reason) == (JobState.FAILED, "SupervisorLost")
    assert done.failure is not None and done.failure.reason == "SupervisorLost"
    assert "was killed by signal 9 (SIGKILL)" in condition.message
    assert "master-0, worker-0 were stopped" in condition.message
    # Killed with their supervisor, not by a broken pipe: SIGKILL, 128 + 9.
    assert [(r.phase, r.exit_code) for r in done.replicas] == [("Failed", 137)] * 2
    seen = ticks((await collect_logs(backend, "orphan"))["master-0"])
    assert seen == list(range(len(seen))) and len(seen) >= 20


# Each node starts a child in a session of its own: outside the node's process group,
# where only its ancestors' subreapers would find it.
LEAVES_THE_GROUP = TICKER.replace(
    'subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])',
    'subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],'
    " start_new_session=True)",
)


async def test_delete_reaches_what_outlived_supervisor_and_watchdog(
    backend: LocalBackend, marker: str
) -> None:
    """Supervisor and watchdog killed together: no subreaper is left to adopt the
    nodes' children. DELETE still finds every process of the job (by the job's mark)."""
    assert LEAVES_THE_GROUP != TICKER
    await backend.submit(
        make_spec(name="headless", nodes=2, script=LEAVES_THE_GROUP, env={"MARK": marker})
    )
    await running_with_ticks(backend, "headless", marker)
    job = json.loads((backend.jobs_dir / "headless" / "job.json").read_text())
    for role in ("watchdog", "supervisor"):
        os.kill(job[role]["pid"], signal.SIGKILL)
    assert await eventually(lambda: not running(job["supervisor"]["pid"]))
    # The nodes die with their supervisor (PR_SET_PDEATHSIG); their children do not.
    assert await eventually(lambda: len(processes_with_environ(marker)) == 2)
    await backend.delete_job("headless")
    assert processes_with_environ(marker) == []
    with pytest.raises(JobNotFound):
        await backend.get_job("headless")


IGNORES_SIGTERM = """
import os, pathlib, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
ready = pathlib.Path(os.environ.get("READY", os.devnull))
if os.environ["RANK"] != "0" and os.environ.get("READY"):
    ready.touch()  # SIGTERM is ignored from here on
if os.environ["RANK"] == "0" and os.environ.get("READY"):
    while not ready.exists():  # the master succeeds once the worker ignores SIGTERM
        time.sleep(0.01)
    print("master done", flush=True)
    sys.exit(0)
for i in range(10**9):
    print("tick", i, flush=True)
    time.sleep(0.01)
"""


async def test_delete_a_node_that_ignores_sigterm(backend: LocalBackend, marker: str) -> None:
    """SIGTERM first, SIGKILL after the grace period: nothing of the job is left."""
    await backend.submit(
        make_spec(name="stubborn", nodes=2, script=IGNORES_SIGTERM, env={"MARK": marker})
    )
    await running_with_ticks(backend, "stubborn", marker)
    await backend.delete_job("stubborn")
    assert processes_with_environ(marker) == []
    with pytest.raises(JobNotFound):
        await backend.get_job("stubborn")


async def test_clean_pod_policy_kills_a_worker_that_ignores_sigterm(
    backend: LocalBackend, marker: str, tmp_path: Path
) -> None:
    await backend.submit(
        make_spec(
            name="straggler",
            nodes=2,
            script=IGNORES_SIGTERM,
            env={"MARK": marker, "READY": str(tmp_path / "worker-ready")},
            cleanPodPolicy="Running",
        )
    )
    assert (await backend.wait("straggler", timeout=60)).state is JobState.SUCCEEDED

    async def worker() -> tuple[str, int | None, str | None]:
        replica = (await backend.get_job("straggler")).replicas[1]
        return replica.phase, replica.exit_code, replica.reason

    async def deleted() -> bool:
        return (await worker())[0] == "Deleted"

    assert await eventually(deleted, timeout=15)  # the grace period is 5 s
    assert await worker() == ("Deleted", 137, "CleanPodPolicy")
    assert await eventually(lambda: processes_with_environ(marker) == [])
    logs = await collect_logs(backend, "straggler")
    assert "master done" in logs["master-0"]
    seen = ticks(logs["worker-0"])
    assert seen == list(range(len(seen)))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs (needs root and a kernel that lets us mount), unmounted afterwards."""
    mount = tmp_path / "small"
    mount.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {result.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


FLOOD = """
import sys
line = "x" * 100
for i in range(100_000):  # ~11 MB, far more than the disk holds
    print("tick", i, line)
print("done")
"""


async def test_disk_full_on_the_job_directory(small_disk: Path, marker: str) -> None:
    """The log stops while the disk is full (the lines so far stay whole), says what it
    dropped, and the job still ends Succeeded and says so."""
    backend = LocalBackend(
        root=small_disk, volume_root=small_disk / "volumes", default_workdir=EXAMPLES
    )
    try:
        await backend.submit(make_spec(name="flood", script=FLOOD, env={"MARK": marker}))
        done = await backend.wait("flood", timeout=120)
        assert done.state is JobState.SUCCEEDED
        assert done.replicas[0].exit_code == 0
        text = (await collect_logs(backend, "flood"))["master-0"]
        lines = text.splitlines()
        seen = ticks(text)
        assert seen == list(range(len(seen))) and len(seen) > 10_000
        assert all(line == f"tick {i} {'x' * 100}" for i, line in enumerate(lines[:-1]))
        assert "lines of output dropped" in lines[-1] and "disk" in lines[-1]
        assert processes_with_environ(marker) == []
        await backend.delete_job("flood")
        assert list((small_disk / "jobs").iterdir()) == []
    finally:
        for job in await backend.list_jobs():
            await backend.delete_job(job.name)


# Ticks until a file appears, then ends: a job whose log has a known, finite end.
TICK_UNTIL = """
import os, pathlib, sys, time
stop = pathlib.Path(os.environ["STOP"])
i = 0
while not stop.exists():
    print("tick", i, flush=True)
    i += 1
    time.sleep(0.005)
print("tick", i, flush=True)
print("done", flush=True)
"""


class JupyterServer:
    """``jupyter server`` (local backend) as a real process, for faults a process can
    suffer: started on ``start()``, killed by the ``jupyter_server`` fixture's teardown."""

    TOKEN = "fault-token"

    def __init__(self, tmp: Path, local_root: Path) -> None:
        self.tmp, self.local_root = tmp, local_root
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def api(self) -> str:
        return f"127.0.0.1:{self.port}/pytorchjob/api"

    async def start(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter_server",
                "--ServerApp.jpserver_extensions={'jupyter_pytorchjob': True}",
                f"--IdentityProvider.token={self.TOKEN}",
                "--ServerApp.allow_root=True",
                "--ServerApp.open_browser=False",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                f"--ServerApp.root_dir={self.tmp}",
                "--PyTorchJobApp.backend=local",
                f"--PyTorchJobApp.local_root={self.local_root}",
                "--PyTorchJobApp.default_shm=off",
            ],
            env={
                **os.environ,
                "JUPYTER_CONFIG_DIR": str(self.tmp / "config"),
                "JUPYTER_RUNTIME_DIR": str(self.tmp / "runtime"),
            },
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        async def answers() -> bool:
            assert self.process is not None and self.process.poll() is None, "server exited"
            try:
                await self.fetch("config")
            except OSError:
                return False
            return True

        assert await eventually(answers, timeout=60), "the server did not start"

    async def fetch(self, path: str, *, parse: bool = True, **kwargs: Any) -> Any:
        """The answer's JSON (its text with ``parse=False``)."""
        response = await AsyncHTTPClient().fetch(
            f"http://{self.api}/{path}",
            headers={"Authorization": f"token {self.TOKEN}"},
            **kwargs,
        )
        text = response.body.decode()
        return json.loads(text) if parse and text else text

    async def logs(self, name: str, **query: str) -> WebSocketClientConnection:
        request = HTTPRequest(
            f"ws://{self.api}/jobs/{name}/logs?{urlencode(query)}",
            headers={"Authorization": f"token {self.TOKEN}"},
        )
        return await websocket_connect(request)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def jupyter_server(
    tmp_path: Path, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[JupyterServer]:
    server = JupyterServer(tmp_path, tmp_path / "ptjob-home")
    yield server
    server.kill()
    # The jobs it left, deleted through a backend on the same root.
    local = LocalBackend(root=server.local_root, default_workdir=EXAMPLES)
    for job in jp_asyncio_loop.run_until_complete(local.list_jobs()):
        jp_asyncio_loop.run_until_complete(local.delete_job(job.name))


async def read_messages(
    ws: WebSocketClientConnection, messages: list[dict[str, Any]], until: Callable[[], bool]
) -> bool:
    """Append the socket's messages until ``until()`` holds (True) or it closes (False)."""
    while not until():
        text = await ws.read_message()
        if text is None:
            return False
        messages.extend(unbatch(text))
    return True


def lines(messages: list[dict[str, Any]]) -> str:
    """The log text of the websocket's messages."""
    return "".join(m.get("text", "") for m in messages)


async def test_server_killed_while_following_logs(
    jupyter_server: JupyterServer, marker: str, tmp_path: Path
) -> None:
    """The job lives on under its supervisor; a restarted server serves it, and following
    again from the last offset received loses and repeats no line."""
    stop = tmp_path / "stop"
    await jupyter_server.start()
    body = {"name": "survivor", "script": TICK_UNTIL, "env": {"MARK": marker, "STOP": str(stop)}}
    await jupyter_server.fetch("jobs", method="POST", body=json.dumps(body))

    first: list[dict[str, Any]] = []
    ws = await jupyter_server.logs("survivor", follow="1")
    assert await read_messages(ws, first, lambda: len(ticks(lines(first))) >= 50)
    supervisor = json.loads(
        (jupyter_server.local_root / "jobs" / "survivor" / "job.json").read_text()
    )
    jupyter_server.kill()
    # The client sees its socket close, not a hang.
    assert not await asyncio.wait_for(read_messages(ws, first, lambda: False), 10)
    assert all("error" not in m for m in first)
    # The job runs on under the same supervisor.
    assert running(supervisor["supervisor"]["pid"])

    await jupyter_server.start()
    job = await jupyter_server.fetch("jobs/survivor")
    assert job["state"] == "Running"
    since = {m["replica"]: m["offset"] for m in first if "offset" in m}
    second: list[dict[str, Any]] = []
    ws = await jupyter_server.logs("survivor", follow="1", since=json.dumps(since))
    assert await read_messages(ws, second, lambda: len(ticks(lines(second))) >= 50)
    stop.touch()
    assert await asyncio.wait_for(
        read_messages(ws, second, lambda: bool(second) and second[-1].get("end") is True), 30
    )
    assert all("error" not in m for m in second)

    seen = ticks(lines(first) + lines(second))
    assert seen == list(range(len(seen)))
    assert lines(second).endswith("done\n")
    # What was followed is all the log holds.
    log = await jupyter_server.fetch("jobs/survivor/logs?replica=master-0", parse=False)
    assert log == lines(first) + lines(second)
    assert (await jupyter_server.fetch("jobs/survivor"))["state"] == "Succeeded"
    assert await eventually(lambda: processes_with_environ(marker) == [])
