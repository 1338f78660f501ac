"""One TrainJob, two backends, one outcome: the local supervisor (``JobSetSupervisor``)
against the fake Kubeflow Trainer v2.3 + JobSet + Job controller (tests/fake_kube/
trainer.py, written from shared/notes/trainjob.md), as test_operator_fidelity.py does for
PyTorchJobs.

Each scenario is a table of exit codes per node and attempt (``None``: the node keeps
running). Locally a tiny script plays it (``SCENARIO`` directory: the table, and a count
of attempts per node); in the fake cluster ``Kube.play`` steps the kubelet the same way
(a container runs, exits with the code, waits out its back-off). Both must end with the
same state and conditions, word for word.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob.backends import JobInfo, JobState
from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend
from jupyter_pytorchjob.job import JobSpec

from .crd import require_crds
from .local_jobs import collect_logs, eventually
from .test_operator_fidelity import Local as OperatorLocal

pytestmark = pytest.mark.slow

NS = "team-a"
# Plays the table: count this attempt, print it, exit with its code (the last one
# repeats) or keep running. A node knows itself by its rank, as torchrun does.
PLAYER = """\
import json, os, pathlib, sys, time
d = pathlib.Path(os.environ["SCENARIO"])
me = "node-" + os.environ["PET_NODE_RANK"]
count = d / (me + ".count")
n = int(count.read_text()) if count.exists() else 0
count.write_text(str(n + 1))
print("attempt", n, flush=True)
codes = json.loads((d / "table.json").read_text())[me]
code = codes[min(n, len(codes) - 1)]
if code is None:
    time.sleep(600)
sys.exit(code)
"""

Codes = dict[str, list[int | None]]


def spec(body: dict[str, Any], command: list[str]) -> JobSpec:
    return JobSpec.from_wire(
        {"name": "demo", "kind": "TrainJob", "shm": "off", "command": command, **body}
    )


class Local(OperatorLocal):
    """The local backend; a short back-off (0.05 s doubling) instead of the kubelet's 10 s."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.backend.crash_back_off = 0.05

    async def submit(  # type: ignore[override]  # no "after" here
        self, body: dict[str, Any], codes: Codes
    ) -> None:
        (self.dir / "table.json").write_text(json.dumps(codes))
        body = {**body, "env": {"SCENARIO": str(self.dir)}}
        await self.backend.submit(spec(body, [sys.executable, "-c", PLAYER]))

    async def started(self, name: str) -> JobInfo:
        """Every node runs (after a submit or a resume)."""

        async def running() -> bool:
            job = await self.backend.get_job(name)
            return all(r.phase == "Running" for r in job.replicas)

        assert await eventually(running)
        return await self.backend.get_job(name)

    async def elapse(self, name: str, seconds: float) -> None:
        """Time passes: locally it really does (the wall clock is the job's clock)."""
        end = time.monotonic() + seconds
        assert await eventually(lambda: time.monotonic() >= end, timeout=seconds + 5)


class Kube:
    """The kubernetes backend on the fake API server; ``play`` steps the kubelet."""

    def __init__(self, fake: Any) -> None:
        self.fake = fake
        self.trainer = fake.trainer
        self.backend = KubernetesBackend(namespace=NS)
        self.codes: Codes = {}
        self.attempts: dict[str, int] = {}

    async def submit(self, body: dict[str, Any], codes: Codes) -> None:
        self.codes, self.attempts = codes, dict.fromkeys(codes, 0)
        await self.backend.submit(spec(body, ["python", "player.py"]))

    async def play(self, name: str, timeout: float = 60) -> JobInfo:
        """Run every pod, then act the table until the job is finished or nothing moves."""
        self.trainer.run(NS, name)
        for _ in range(200):
            if (await self.backend.get_job(name)).state.finished or not self.step(name):
                break
        return await self.backend.get_job(name)

    async def started(self, name: str) -> JobInfo:
        self.trainer.run(NS, name)
        return await self.backend.get_job(name)

    def step(self, name: str) -> bool:
        for node, codes in self.codes.items():
            index = int(node.rsplit("-", 1)[1])
            try:
                pod = self.trainer.pod(NS, name, index)
            except KeyError:  # deleted with the failed Job
                continue
            entry = next(
                (s for s in pod["status"].get("containerStatuses") or [] if s["name"] == "node"),
                {},
            )
            state = entry.get("state") or {}
            if (state.get("waiting") or {}).get("reason") == "CrashLoopBackOff":
                self.attempts[node] += 1
                self.trainer.back_off_over(NS, name, index)
                return True
            if "running" not in state:
                continue
            code = codes[min(self.attempts[node], len(codes) - 1)]
            if code is None:
                continue
            if code == 0:
                self.trainer.succeed(NS, name, index)
            else:
                restarts = int(entry.get("restartCount", 0))
                self.trainer.exit(NS, name, index, exit_code=code)
                again = self.fake.get("pods", NS, pod["metadata"]["name"])
                if again is not None and self.fake.kubelet.restarted(again, "node", restarts):
                    self.attempts[node] += 1  # the kubelet restarted a first crash at once
            return True
        return False

    async def elapse(self, name: str, seconds: float) -> None:
        self.trainer.elapse(NS, name, seconds)


@pytest.fixture(params=["local", "kubernetes"])
def cluster(
    request: pytest.FixtureRequest, tmp_path: Path, jp_asyncio_loop: Any
) -> Iterator[Local | Kube]:
    """Where the job runs; every job left is deleted afterwards, also on failure."""
    if request.param == "local":
        where: Local | Kube = Local(tmp_path)
    else:
        require_crds()  # the fake plays Trainer from the real CRDs and shipped runtimes
        where = Kube(request.getfixturevalue("fake_kube"))
    yield where
    for job in jp_asyncio_loop.run_until_complete(where.backend.list_jobs()):
        jp_asyncio_loop.run_until_complete(where.backend.delete_job(job.name))
    jp_asyncio_loop.run_until_complete(where.backend.close())


def conditions(job: JobInfo) -> list[tuple[str, str, str, str]]:
    return [(c.type, c.status, c.reason, c.message) for c in job.conditions]


COMPLETE = ("Complete", "True", "AllJobsCompleted", "jobset completed successfully")
FAILED_JOBS = (
    "Failed",
    "True",
    "FailedJobs",
    "jobset failed due to one or more job failures (first failed job: demo-node-0)",
)
DEADLINE = ("Failed", "True", "DeadlineExceeded", "TrainJob exceeded its active deadline")
SUSPENDED = ("Suspended", "True", "Suspended", "TrainJob is suspended")
RESUMED = ("Suspended", "False", "Resumed", "TrainJob is resumed")


async def test_a_flaky_node_restarts_in_place_and_the_job_completes(
    cluster: Local | Kube,
) -> None:
    """OnFailure: node-0 fails twice and is restarted in place (same node, restarts 2),
    then succeeds; Complete once every node has, with no other condition on the way."""
    await cluster.submit({"nodes": 2}, {"node-0": [3, 3, 0], "node-1": [0]})
    job = await cluster.play("demo")
    assert job.state is JobState.SUCCEEDED
    assert conditions(job) == [COMPLETE]
    assert [(r.name, r.phase, r.restarts) for r in job.replicas] == [
        ("node-0", "Succeeded", 2),
        ("node-1", "Succeeded", 0),
    ]


async def test_a_crashing_node_fails_the_job_at_the_backoff_limit(cluster: Local | Kube) -> None:
    """The Job's backoffLimit (6, the runtime sets none) counts the in-place restarts;
    then JobSet fails at once (no maxRestarts): Failed FailedJobs naming the Job."""
    await cluster.submit({"nodes": 2}, {"node-0": [3], "node-1": [None]})
    job = await cluster.play("demo")
    assert job.state is JobState.FAILED
    assert conditions(job) == [FAILED_JOBS]
    if isinstance(cluster, Local):  # a cluster deletes the pods; here they stay readable
        node0, node1 = job.replicas
        assert (node0.phase, node0.restarts, node0.exit_code) == ("Failed", 6, 3)
        assert (node1.phase, node1.reason) == ("Deleted", "BackoffLimitExceeded")
        assert json.loads((cluster.dir / "node-0.count").read_text()) == 6
        events = {(e.type, e.reason, e.message) for e in await cluster.backend.events("demo")}
        assert (
            "Warning",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        ) in events
        logs = await collect_logs(cluster.backend, "demo", previous=True)
        assert logs["node-0"] == "attempt 5\n"  # the last run, kept as the previous log


async def test_the_deadline_fails_the_job_and_deletes_its_jobset(cluster: Local | Kube) -> None:
    """activeDeadlineSeconds from creation: Failed DeadlineExceeded, and the JobSet with
    every pod (and its log) is deleted."""
    await cluster.submit({"nodes": 2, "deadline": 1}, {"node-0": [None], "node-1": [None]})
    await cluster.started("demo")
    await cluster.elapse("demo", 1.5)
    job = await cluster.backend.wait("demo", timeout=30)
    assert conditions(job) == [DEADLINE]

    async def deleted() -> bool:
        replicas = (await cluster.backend.get_job("demo")).replicas
        return [(r.phase, r.reason) for r in replicas] == [("Deleted", "DeadlineExceeded")] * 2

    assert await eventually(deleted)
    if isinstance(cluster, Local):
        assert await collect_logs(cluster.backend, "demo") == {}


async def test_suspend_and_resume(cluster: Local | Kube) -> None:
    """spec.suspend: every node stops, Suspended True; resuming starts them again and
    leaves Suspended False (Resumed); no Running condition either way."""
    await cluster.submit({"nodes": 2}, {"node-0": [None], "node-1": [None]})
    job = await cluster.started("demo")
    assert job.state is JobState.RUNNING and conditions(job) == []
    await cluster.backend.suspend("demo")

    async def state(wanted: JobState) -> bool:
        return (await cluster.backend.get_job("demo")).state is wanted

    assert await eventually(lambda: state(JobState.SUSPENDED))
    assert await eventually(lambda: _conditions_are(cluster, [SUSPENDED]), timeout=10), conditions(
        await cluster.backend.get_job("demo")
    )
    await cluster.backend.resume("demo")
    job = await cluster.started("demo")
    assert await eventually(lambda: state(JobState.RUNNING))
    job = await cluster.backend.get_job("demo")
    assert conditions(job) == [RESUMED]
    assert [r.phase for r in job.replicas] == ["Running", "Running"]


async def test_the_deadline_counts_from_the_resume(cluster: Local | Kube) -> None:
    """Submitted suspended: time spent suspended does not count; after the resume the
    deadline counts from it."""
    await cluster.submit(
        {"nodes": 1, "deadline": 2, "extras": {"spec": {"suspend": True}}}, {"node-0": [None]}
    )
    assert await eventually(lambda: _conditions_are(cluster, [SUSPENDED]))
    await cluster.elapse("demo", 2.5)  # past the deadline, counted from creation
    await asyncio.sleep(0)
    assert (await cluster.backend.get_job("demo")).state is JobState.SUSPENDED
    await cluster.backend.resume("demo")
    job = await cluster.started("demo")
    assert job.state is JobState.RUNNING and conditions(job) == [RESUMED]
    await cluster.elapse("demo", 2.5)
    job = await cluster.backend.wait("demo", timeout=30)
    assert conditions(job) == [RESUMED, DEADLINE]


async def _conditions_are(cluster: Local | Kube, wanted: list[tuple[str, ...]]) -> bool:
    return conditions(await cluster.backend.get_job("demo")) == wanted
