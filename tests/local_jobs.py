"""Helpers for tests of the local backend's reliability: a backend that deletes its jobs in
teardown (also when the test fails), process probes that read /proc, and a throwaway
unrelated process."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob.backends import JobInfo
from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.job import JobSpec

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def make_spec(**body: Any) -> JobSpec:
    return JobSpec.from_wire({"shm": "off", **body})


@pytest.fixture
def backend(tmp_path: Path, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[LocalBackend]:
    """A local backend in ``tmp_path``; every job left is deleted afterwards."""
    local = LocalBackend(
        root=tmp_path / "home", volume_root=tmp_path / "volumes", default_workdir=EXAMPLES
    )
    yield local
    for job in jp_asyncio_loop.run_until_complete(local.list_jobs()):
        jp_asyncio_loop.run_until_complete(local.delete_job(job.name))


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A live process that has nothing to do with any job (its own process group, as a
    node's would be), stopped in teardown."""
    process = subprocess.Popen(["sleep", "600"], start_new_session=True)
    yield process
    process.kill()
    process.wait()


async def collect_logs(backend: LocalBackend, name: str, **kwargs: Any) -> dict[str, str]:
    text: dict[str, str] = {}
    async for chunk in backend.logs(name, **kwargs):
        for replica, lines in chunk.runs():
            text[replica] = text.get(replica, "") + lines
    return text


async def finished_with_every_node(
    backend: LocalBackend, name: str, timeout: float = 120
) -> JobInfo:
    """Wait for the job to finish and each of its nodes to exit (with cleanPodPolicy None
    a worker may end after the master's success)."""
    await backend.wait(name, timeout=timeout)

    async def exited() -> bool:
        return all(r.exit_code is not None for r in (await backend.get_job(name)).replicas)

    await eventually(exited)
    return await backend.get_job(name)


def proc_state(pid: int) -> str | None:
    """The state letter of ``/proc/<pid>/stat`` (``Z`` zombie), None if there is none."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def running(pid: int) -> bool:
    """Alive and not a zombie."""
    return proc_state(pid) not in (None, "Z")


def processes_with_environ(marker: str) -> list[int]:
    """Live processes whose environment holds ``marker`` (every process of a job, whatever
    its parent or group: each test job sets a marker variable), found in /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if marker.encode() in (entry / "environ").read_bytes() and running(int(entry.name)):
                found.append(int(entry.name))
    return found


async def eventually(
    condition: Callable[[], bool | Awaitable[bool]], *, timeout: float = 20.0
) -> bool:
    """Poll ``condition`` (a function or a coroutine function) until it holds or
    ``timeout`` passes; its last value."""

    async def check() -> bool:
        value = condition()
        return bool(await value) if inspect.isawaitable(value) else bool(value)

    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() >= deadline:
            return await check()
        await asyncio.sleep(0.05)
    return True


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]
