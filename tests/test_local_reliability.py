"""The local backend never harms what is not its own, never loses a job's story, and keeps
its output pump linear; real processes throughout (issue 13)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob.backends import JobState
from jupyter_pytorchjob.backends.local import LocalBackend

from .local_jobs import backend, bystander, make_spec, python, running

pytestmark = pytest.mark.slow
__all__ = ["backend", "bystander"]  # fixtures


def recorded_pids_replaced(data: Any, pid: int) -> Any:
    """``data`` with every recorded process id (a key ``pid`` or ``*_pid``) set to ``pid``."""
    if isinstance(data, dict):
        return {
            k: pid
            if (k == "pid" or k.endswith("_pid")) and isinstance(v, int)
            else recorded_pids_replaced(v, pid)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [recorded_pids_replaced(v, pid) for v in data]
    return data


def plant_pid(jobdir: Path, pid: int, *, files: tuple[str, ...]) -> None:
    for name in files:
        path = jobdir / name
        path.write_text(json.dumps(recorded_pids_replaced(json.loads(path.read_text()), pid)))


@pytest.mark.parametrize(
    "where", [("replicas.json",), ("job.json",)], ids=["as-a-node", "as-the-supervisor"]
)
async def test_deleting_a_finished_job_signals_no_recycled_pid(
    backend: LocalBackend, bystander: subprocess.Popen[bytes], where: tuple[str, ...]
) -> None:
    """Pids wrap: long after a job finished, its recorded pids may belong to anyone."""
    await backend.submit(make_spec(name="done", nodes=2, command=python("pass")))
    assert (await backend.wait("done", timeout=60)).state is JobState.SUCCEEDED
    jobdir = backend.jobs_dir / "done"
    plant_pid(jobdir, bystander.pid, files=where)
    await backend.delete_job("done")
    assert bystander.poll() is None and running(bystander.pid)
    assert not jobdir.exists()
