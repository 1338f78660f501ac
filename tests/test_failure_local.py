"""A failed local job says why in one look (#26): the node that failed first, its exit
code or signal, its last lines from the traceback on, kept in the job record by the
supervisor, so it survives the logs' clean-up and a new server; and a hint for the
failures it knows. Real processes."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from jupyter_pytorchjob.backends import JobState
from jupyter_pytorchjob.backends.local import LocalBackend

from .local_jobs import EXAMPLES, collect_logs, eventually, make_spec

pytestmark = pytest.mark.slow

RAISES = textwrap.dedent(
    """
    for step in range(3):
        print(f"step {step} loss 0.5", flush=True)
    1 / 0
    """
)
# worker-0 fails at once; the master waits to be stopped (never the failure's).
WORKER_FAILS = textwrap.dedent(
    """
    import os, sys, time
    if os.environ["RANK"] != "0":
        print("fatal: no training data under /data", file=sys.stderr, flush=True)
        sys.exit(1)
    time.sleep(120)
    """
)
KILLED = "import os, signal; print('allocating', flush=True); os.kill(os.getpid(), signal.SIGKILL)"


@pytest.fixture
def backend(tmp_path: Path, jp_asyncio_loop: asyncio.AbstractEventLoop) -> LocalBackend:
    local = LocalBackend(
        root=tmp_path / "home",
        volume_root=tmp_path / "volumes",
        default_workdir=EXAMPLES,
        crash_back_off=0.1,
    )
    yield local  # type: ignore[misc]
    for job in jp_asyncio_loop.run_until_complete(local.list_jobs()):
        jp_asyncio_loop.run_until_complete(local.delete_job(job.name))


@pytest.mark.parametrize("policy", ["None", "Running", "All"])
async def test_a_script_that_raises(backend: LocalBackend, tmp_path: Path, policy: str) -> None:
    """OnFailure, the backoff limit reached: the crash-looping node's previous run holds
    the traceback; whatever the clean-pod policy, the summary keeps it."""
    name = f"raises-{policy.lower()}"
    await backend.submit(
        make_spec(
            name=name,
            command=["python", "-c", RAISES],
            backoffLimit=1,
            cleanPodPolicy=policy,
        )
    )
    info = await backend.wait(name, timeout=60)
    assert info.state is JobState.FAILED
    failure = info.failure
    assert failure is not None, info
    assert (failure.replica, failure.exit_code, failure.signal) == ("master-0", 1, None)
    assert failure.reason == "Error"
    assert failure.message == "ZeroDivisionError: division by zero"
    assert failure.tail[0] == "Traceback (most recent call last):"
    assert failure.tail[-1] == "ZeroDivisionError: division by zero"
    assert failure.log_source == "previous"
    assert failure.headline == "master-0 exited 1: ZeroDivisionError: division by zero"
    # A new server reads the same record.
    again = LocalBackend(root=tmp_path / "home", volume_root=tmp_path / "volumes")
    assert (await again.get_job(name)).failure == failure
    assert info.to_wire()["failure"]["logSource"] == "previous"


async def test_the_node_that_failed_first(backend: LocalBackend) -> None:
    """Never: worker-0 exits 1 and fails the job; the master, stopped after it by the
    clean-pod policy, is not the failure."""
    await backend.submit(
        make_spec(
            name="first",
            nodes=2,
            command=["python", "-c", WORKER_FAILS],
            restartPolicy="Never",
            cleanPodPolicy="Running",
        )
    )
    info = await backend.wait("first", timeout=60)
    assert info.state is JobState.FAILED
    assert info.failure is not None
    assert info.failure.replica == "worker-0"
    assert info.failure.exit_code == 1
    assert info.failure.message == "fatal: no training data under /data"
    assert info.failure.tail == ["fatal: no training data under /data"]
    assert info.failure.log_source == "current"


async def test_a_node_killed_by_sigkill(backend: LocalBackend) -> None:
    await backend.submit(
        make_spec(name="killed", command=["python", "-c", KILLED], restartPolicy="Never")
    )
    info = await backend.wait("killed", timeout=60)
    assert info.failure is not None
    assert (info.failure.exit_code, info.failure.signal) == (137, "SIGKILL")
    assert info.failure.headline == "master-0 was killed by SIGKILL: allocating"
    assert info.failure.hint is not None and "--memory" in str(info.failure.hint)


async def test_a_deadline(backend: LocalBackend) -> None:
    """No node failed: the deadline is the reason, the master the replica to look at;
    its last lines are kept although the deadline's clean-up stops it."""
    script = "import time; print('epoch 1/100', flush=True); time.sleep(120)"
    await backend.submit(make_spec(name="late", command=["python", "-c", script], deadline=1))
    info = await backend.wait("late", timeout=60)
    assert info.failure is not None
    assert (info.failure.replica, info.failure.reason) == ("master-0", "DeadlineExceeded")
    assert info.failure.exit_code is None and info.failure.log_source == "current"
    assert info.failure.tail == ["epoch 1/100"]
    assert info.failure.hint is not None and "--deadline" in str(info.failure.hint)


async def test_a_trainjob_that_raises(backend: LocalBackend) -> None:
    await backend.submit(make_spec(name="tj", kind="TrainJob", command=["python", "-c", RAISES]))
    info = await backend.wait("tj", timeout=90)
    assert info.state is JobState.FAILED, await collect_logs(backend, "tj")
    assert info.failure is not None
    assert info.failure.replica == "node-0"
    assert info.failure.message == "ZeroDivisionError: division by zero"
    assert info.failure.log_source == "previous"


async def test_a_running_job_has_no_failure_and_a_suspended_one_waits(
    backend: LocalBackend,
) -> None:
    await backend.submit(
        make_spec(name="paused", command=["python", "-c", "import time; time.sleep(60)"])
    )
    info = await backend.suspend("paused")
    assert info.failure is None

    async def suspended() -> bool:
        job = await backend.get_job("paused")
        return job.state is JobState.SUSPENDED

    assert await eventually(suspended)
    job = await backend.get_job("paused")
    assert job.waiting is not None and job.waiting.reason == "Suspended"


async def test_a_known_failure_in_the_output_gets_its_hint(backend: LocalBackend) -> None:
    """Recognised from the output: a DataLoader worker killed by SIGBUS (/dev/shm full)
    names --shm."""
    script = textwrap.dedent(
        """
        import sys
        print("ERROR: Unexpected bus error encountered in worker. This might be caused "
              "by insufficient shared memory (shm).", flush=True)
        raise RuntimeError("DataLoader worker (pid 4242) is killed by signal: Bus error. ")
        """
    )
    await backend.submit(
        make_spec(name="shm", command=["python", "-c", script], restartPolicy="Never")
    )
    info = await backend.wait("shm", timeout=60)
    assert info.failure is not None
    assert info.failure.message.startswith("RuntimeError: DataLoader worker (pid 4242)")
    assert info.failure.hint is not None and "--shm" in str(info.failure.hint)
