"""One job, two backends, one outcome: the local supervisor against the fake Training
Operator v1.9.4 (tests/fake_kube/operator.py, written from the operator's Go code).

Each scenario is a table of exit codes per replica and attempt (``None``: the node keeps
running). Locally a tiny script plays it (``SCENARIO`` directory: the table, and a count
of attempts per replica); in the fake cluster ``Kube.play`` steps the kubelet the same
way (a container runs, exits with the code, waits out its back-off, or its pod is
created again). Both must end with the same conditions, restarts and state.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob.backends import BackendError, JobInfo, JobNotFound, JobState
from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend
from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.backends.local.index import read_index
from jupyter_pytorchjob.job import JobSpec

from .local_jobs import collect_logs, eventually, running

pytestmark = pytest.mark.slow

NS = "team-a"
# Plays the table: count this attempt, print it, exit with its code (the last one
# repeats) or keep running; ``after`` waits for another replica's attempts first.
PLAYER = """\
import json, os, pathlib, sys, time
d = pathlib.Path(os.environ["SCENARIO"])
me = "-".join(os.environ["HOSTNAME"].split("-")[-2:])
count = d / (me + ".count")
n = int(count.read_text()) if count.exists() else 0
# Replaced whole: a peer waiting on it never reads it half-written (an empty file made
# the waiting master exit 1 with a ValueError once, on a loaded machine).
count.with_suffix(".tmp").write_text(str(n + 1))
count.with_suffix(".tmp").replace(count)
table = json.loads((d / "table.json").read_text())
print("attempt", n, flush=True)
after = table["after"].get(me)
while after and not (
    (d / (after[0] + ".count")).exists()
    and int((d / (after[0] + ".count")).read_text()) >= after[1]
):
    time.sleep(0.05)
codes = table["codes"][me]
code = codes[min(n, len(codes) - 1)]
if code is None:
    time.sleep(600)
sys.exit(code)
"""

Codes = dict[str, list[int | None]]


class Local:
    """The local backend; a short back-off (0.2 s doubling) instead of the kubelet's 10 s."""

    name = "local"

    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path / "scenario"
        self.dir.mkdir()
        self.backend = LocalBackend(
            root=tmp_path / "home",
            volume_root=tmp_path / "volumes",
            default_workdir=tmp_path,
            crash_back_off=0.2,
        )
        self.ns = "default"

    async def submit(
        self, body: dict[str, Any], codes: Codes, after: dict[str, tuple[str, int]] | None = None
    ) -> None:
        (self.dir / "table.json").write_text(json.dumps({"codes": codes, "after": after or {}}))
        body = {**body, "env": {"SCENARIO": str(self.dir)}}
        await self.backend.submit(spec(body, [sys.executable, "-c", PLAYER]))

    async def play(self, name: str, timeout: float = 60) -> JobInfo:
        return await self.backend.wait(name, timeout=timeout)

    async def elapse(self, name: str, seconds: float) -> None:
        """Time passes: locally it really does."""
        await asyncio.sleep(0)


class Kube:
    """The kubernetes backend on the fake API server; ``play`` steps the kubelet."""

    name = "kubernetes"

    def __init__(self, fake: Any) -> None:
        self.fake = fake
        self.backend = KubernetesBackend()
        self.ns = NS
        self.codes: Codes = {}
        self.after: dict[str, tuple[str, int]] = {}
        self.attempts: dict[str, int] = {}

    async def submit(
        self, body: dict[str, Any], codes: Codes, after: dict[str, tuple[str, int]] | None = None
    ) -> None:
        self.codes, self.after = codes, after or {}
        self.attempts = dict.fromkeys(codes, 0)
        await self.backend.submit(spec(body, ["python", "player.py"]))

    async def play(self, name: str, timeout: float = 60) -> JobInfo:
        """Run every pod, then act the table until the job is finished or nothing moves."""
        operator = self.fake.operator
        operator.run(self.ns, name)
        for _ in range(200):
            if (await self.backend.get_job(name)).state.finished:
                break
            if not self.step(name):
                break
        return await self.backend.get_job(name)

    def step(self, name: str) -> bool:
        operator = self.fake.operator
        for replica, codes in self.codes.items():
            pod = self.fake.get("pods", self.ns, f"{name}-{replica}")
            if pod is None:
                continue
            if pod["status"].get("phase") == "Pending":  # created again (ExitCode)
                self.attempts[replica] += 1
                operator.run(self.ns, name)
                return True
            entry = next(
                (s for s in pod["status"].get("containerStatuses") or [] if s["name"] == "pytorch"),
                {},
            )
            state = entry.get("state") or {}
            if (state.get("waiting") or {}).get("reason") == "CrashLoopBackOff":
                self.attempts[replica] += 1
                operator.back_off_over(self.ns, name, replica)
                return True
            if "running" not in state:
                continue
            after = self.after.get(replica)
            if after and self.attempts[after[0]] + 1 < after[1]:
                continue
            code = codes[min(self.attempts[replica], len(codes) - 1)]
            if code is not None:
                restarts = int(entry.get("restartCount", 0))
                operator.exit(self.ns, name, replica, exit_code=code)
                again = self.fake.get("pods", self.ns, f"{name}-{replica}")
                if again is not None and self.fake.kubelet.restarted(again, "pytorch", restarts):
                    self.attempts[replica] += 1  # the kubelet restarted a first crash at once
                return True
        return False

    async def elapse(self, name: str, seconds: float) -> None:
        self.fake.operator.elapse(self.ns, name, seconds)


def spec(body: dict[str, Any], command: list[str]) -> JobSpec:
    return JobSpec.from_wire({"name": "demo", "shm": "off", "command": command, **body})


@pytest.fixture(params=["local", "kubernetes"])
def cluster(
    request: pytest.FixtureRequest, tmp_path: Path, jp_asyncio_loop: Any
) -> Iterator[Local | Kube]:
    """Where the job runs; every job left is deleted afterwards, also on failure."""
    if request.param == "local":
        where: Local | Kube = Local(tmp_path)
    else:
        where = Kube(request.getfixturevalue("fake_kube"))
    yield where
    for job in jp_asyncio_loop.run_until_complete(where.backend.list_jobs()):
        jp_asyncio_loop.run_until_complete(where.backend.delete_job(job.name))
    jp_asyncio_loop.run_until_complete(where.backend.close())


def conditions(job: JobInfo, ns: str) -> list[tuple[str, str, str, str]]:
    """The conditions list as the operator shapes it (local jobs say ``default`` where a
    cluster says the namespace)."""
    return [
        (c.type, c.status, c.reason, c.message.replace(f" {ns}/", " NS/")) for c in job.conditions
    ]


CREATED = ("Created", "True", "PyTorchJobCreated", "PyTorchJob demo is created.")
RUNNING_FALSE = ("Running", "False", "PyTorchJobRunning", "PyTorchJob demo is running.")
BACKOFF = (
    "Failed",
    "True",
    "PyTorchJobFailed",
    "Job demo has failed because it has reached the specified backoff limit",
)


async def test_always_restarts_after_success_until_the_backoff_limit(cluster: Local | Kube) -> None:
    """Always: the kubelet restarts even after exit 0, so the Master never succeeds and
    the job fails at the backoff limit (notes/operator-fidelity.md item 1)."""
    await cluster.submit(
        {"restartPolicy": "Always", "backoffLimit": 2, "cleanPodPolicy": "None"}, {"master-0": [0]}
    )
    job = await cluster.play("demo")
    assert job.state is JobState.FAILED
    assert conditions(job, cluster.ns) == [CREATED, RUNNING_FALSE, BACKOFF]
    assert job.replicas[0].restarts == 2


@pytest.mark.parametrize(
    ("codes", "state", "restarts"),
    [([3], JobState.FAILED, 2), ([3, 0], JobState.SUCCEEDED, 1)],
    ids=["crashes", "flaky"],
)
async def test_on_failure_restarts_in_place_without_restarting_condition(
    cluster: Local | Kube, codes: list[int | None], state: JobState, restarts: int
) -> None:
    """OnFailure: restarts in place after a back-off, the job stays Running (no
    Restarting condition); it fails as soon as the restarts reach backoffLimit (item 4)."""
    await cluster.submit(
        {"restartPolicy": "OnFailure", "backoffLimit": 2, "cleanPodPolicy": "None"},
        {"master-0": codes},
    )
    job = await cluster.play("demo")
    assert job.state is state
    expected = [CREATED, RUNNING_FALSE]
    expected.append(
        BACKOFF
        if state is JobState.FAILED
        else (
            "Succeeded",
            "True",
            "PyTorchJobSucceeded",
            "PyTorchJob demo is successfully completed.",
        )
    )
    assert conditions(job, cluster.ns) == expected
    assert job.replicas[0].restarts == restarts


async def test_on_failure_shows_crash_loop_back_off(tmp_path: Path) -> None:
    """The kubelet restarts a first crash at once; between the next attempts the node
    waits as a pod in CrashLoopBackOff: phase Running, the exit code, the back-off in the
    message; the run's log is the previous one."""
    local = Local(tmp_path)
    local.backend.crash_back_off = 30  # long enough to look at
    await local.submit({"restartPolicy": "OnFailure", "backoffLimit": 3}, {"master-0": [3]})
    try:

        async def waiting() -> bool:
            return (await local.backend.get_job("demo")).replicas[0].reason == "CrashLoopBackOff"

        assert await eventually(waiting)
        job = await local.backend.get_job("demo")
        master = job.replicas[0]
        assert (job.state, master.phase, master.restarts, master.exit_code) == (
            JobState.RUNNING,
            "Running",
            2,  # the first restart waited for nothing
            3,
        )
        assert master.message is not None and master.message.startswith("back-off 30s ")
        previous = await collect_logs(local.backend, "demo", previous=True)
        assert previous == {"master-0": "attempt 1\n"}
    finally:
        await local.backend.delete_job("demo")


CRASH_THEN_RUN = """\
import os, pathlib, sys, time
count = pathlib.Path(os.environ["COUNT"])
n = int(count.read_text()) if count.exists() else 0
# Replaced whole: a peer waiting on it never reads it half-written (an empty file made
# the waiting master exit 1 with a ValueError once, on a loaded machine).
count.with_suffix(".tmp").write_text(str(n + 1))
count.with_suffix(".tmp").replace(count)
if n == 1:
    time.sleep(float(os.environ["RUN"]))
sys.exit(3 if n < 3 else 0)
"""


async def test_the_kubelets_back_off_starts_at_once_and_over_after_a_long_run(
    tmp_path: Path,
) -> None:
    """kubelet ``doBackOff`` (pkg/kubelet/kuberuntime/kuberuntime_manager.go, v1.20) over
    client-go util/flowcontrol/backoff.go: a crash without a back-off entry restarts at
    once; an entry not moved on for twice the longest wait (``hasExpired``: 10 min with
    the kubelet's 5 min, here 60 first waits) is none. Attempt 0 crashes (restarted at
    once), attempt 1 runs past that and crashes (at once again), attempt 2 crashes (one
    back-off), attempt 3 succeeds: one BackOff event, where the old rule had three."""
    local = Local(tmp_path)
    local.backend.crash_back_off = 0.05  # the longest wait 1.5 s, forgotten after 3 s
    body = {
        "name": "demo",
        "shm": "off",
        "restartPolicy": "OnFailure",
        "backoffLimit": 10,
        "env": {"COUNT": str(tmp_path / "count"), "RUN": "3.5"},
        "command": [sys.executable, "-c", CRASH_THEN_RUN],
    }
    await local.backend.submit(JobSpec.from_wire(body))
    try:
        job = await local.backend.wait("demo", timeout=60)
        assert job.state is JobState.SUCCEEDED
        assert job.replicas[0].restarts == 3
        backoffs = [e for e in await local.backend.events("demo") if e.reason == "BackOff"]
        assert len(backoffs) == 1
    finally:
        await local.backend.delete_job("demo")


@pytest.mark.parametrize(
    ("codes", "limit", "last"),
    [
        (
            [137, 143, 0],
            1,
            (
                "Succeeded",
                "True",
                "PyTorchJobSucceeded",
                "PyTorchJob demo is successfully completed.",
            ),
        ),
        (
            [137, 1],
            1,
            (
                "Failed",
                "True",
                "PyTorchJobFailed",
                'job "demo" is failing because "Master" replica(s) failed.',
            ),
        ),
        ([137], 0, BACKOFF),
    ],
    ids=["retried", "not-retryable", "limit-0"],
)
async def test_exit_code_recreates_the_pod(
    cluster: Local | Kube, codes: list[int | None], limit: int, last: tuple[str, ...]
) -> None:
    """ExitCode: a code >= 128 recreates the pod (restarts back to 0, unlimited unless
    backoffLimit is 0); a lower code fails the job with the operator's text (item 3)."""
    await cluster.submit(
        {"restartPolicy": "ExitCode", "backoffLimit": limit, "cleanPodPolicy": "None"},
        {"master-0": codes},
    )
    job = await cluster.play("demo")
    assert conditions(job, cluster.ns)[-1] == last
    assert [c.type for c in job.conditions] == ["Created", "Running", last[0]]
    assert job.replicas[0].restarts == 0
    if isinstance(cluster, Local):  # the new "pod" has no previous log, and its own
        logs = await collect_logs(cluster.backend, "demo")
        assert logs["master-0"] == f"attempt {len(codes) - 1 if limit else 0}\n"
        assert await collect_logs(cluster.backend, "demo", previous=True) == {}


async def test_restarting_while_recreated(tmp_path: Path) -> None:
    """While an ExitCode node is created again the job is Restarting, with the text of
    common/pod.go:362 (recorded as the operator's Warning event); it is Running again as
    soon as the new node runs, and the conditions list keeps one of the two."""
    local = Local(tmp_path)
    await local.submit(
        {"nodes": 2, "restartPolicy": "ExitCode", "backoffLimit": 1},
        {"master-0": [None], "worker-0": [137, None]},
    )
    try:
        count = local.dir / "worker-0.count"
        assert await eventually(lambda: count.exists() and count.read_text() == "2")
        job = await local.backend.get_job("demo")
        assert job.state is JobState.RUNNING
        assert [c.type for c in job.conditions] == ["Created", "Running"]
        assert job.replicas[1].restarts == 0
        events = [(e.type, e.reason, e.message) for e in await local.backend.events("demo")]
        assert (
            "Warning",
            "PyTorchJobRestarting",
            "job demo is restarting because Worker replica(s) failed.",
        ) in events
        assert (
            "Normal",
            "SuccessfulDeletePod",
            "Deleted pod: demo-worker-0",
        ) in events
    finally:
        await local.backend.delete_job("demo")


@pytest.mark.parametrize(
    ("limit", "last"),
    [
        (
            3,
            (
                "Failed",
                "True",
                "PyTorchJobFailed",
                "PyTorchJob demo is failed because 1 Worker replica(s) failed.",
            ),
        ),
        (0, BACKOFF),
    ],
)
async def test_never_fails_with_the_replica_type(
    cluster: Local | Kube, limit: int, last: tuple[str, ...]
) -> None:
    """Never: the failure names the number of failed pods and their type; backoffLimit 0
    gives the backoff text even for Never (item 8)."""
    await cluster.submit(
        {"nodes": 2, "restartPolicy": "Never", "backoffLimit": limit, "cleanPodPolicy": "All"},
        {"master-0": [None], "worker-0": [3]},
    )
    job = await cluster.play("demo")
    assert conditions(job, cluster.ns) == [CREATED, RUNNING_FALSE, last]


async def test_per_replica_restart_policies(cluster: Local | Kube) -> None:
    """Master Never, Worker OnFailure: the worker restarts in place, the master's
    success ends the job."""
    extras = {"spec": {"pytorchReplicaSpecs": {"Worker": {"restartPolicy": "OnFailure"}}}}
    await cluster.submit(
        {
            "nodes": 2,
            "restartPolicy": "Never",
            "backoffLimit": 3,
            "cleanPodPolicy": "None",
            "extras": extras,
        },
        {"worker-0": [3, 0], "master-0": [0]},
        after={"master-0": ("worker-0", 2)},
    )
    job = await cluster.play("demo")
    assert job.state is JobState.SUCCEEDED
    assert [c.type for c in job.conditions] == ["Created", "Running", "Succeeded"]
    assert [r.restarts for r in job.replicas] == [0, 1]


async def test_worker_only_job(cluster: Local | Kube) -> None:
    """No Master: the job succeeds when every Worker has, with the operator's texts."""
    await cluster.submit(
        {"nodes": 2, "master": False, "restartPolicy": "OnFailure"},
        {"worker-0": [0], "worker-1": [0]},
    )
    job = await cluster.play("demo")
    assert [r.name for r in job.replicas] == ["worker-0", "worker-1"]
    assert conditions(job, cluster.ns) == [
        CREATED,
        ("Running", "False", "PyTorchJobRunning", "PyTorchJob NS/demo is running."),
        ("Succeeded", "True", "PyTorchJobSucceeded", "PyTorchJob NS/demo successfully completed."),
    ]


DEADLINE = (
    "Failed",
    "True",
    "PyTorchJobFailed",
    "Job demo has failed because it was active longer than specified deadline",
)


@pytest.mark.parametrize("policy", ["None", "Running", "All"])
async def test_deadline_applies_clean_pod_policy(cluster: Local | Kube, policy: str) -> None:
    """activeDeadlineSeconds fails the job, then cleanPodPolicy applies: None keeps the
    nodes running, Running stops them, All stops them and their logs go (item 5)."""
    await cluster.submit(
        {"nodes": 2, "deadline": 1, "cleanPodPolicy": policy},
        {"master-0": [None], "worker-0": [0]},
    )
    if isinstance(cluster, Kube):
        await cluster.play("demo")
        await cluster.elapse("demo", 2)
    job = await cluster.backend.wait("demo", timeout=30)
    assert conditions(job, cluster.ns) == [CREATED, RUNNING_FALSE, DEADLINE]
    if isinstance(cluster, Kube):
        pods = {p["metadata"]["name"] for p in cluster.fake.operator.pods(NS, "demo")}
        expected = {"None": {"demo-master-0", "demo-worker-0"}, "Running": {"demo-worker-0"}}
        assert pods == expected.get(policy, set())
        return

    async def cleaned() -> bool:
        replicas = (await cluster.backend.get_job("demo")).replicas
        return policy == "None" or replicas[0].phase == "Deleted"

    assert await eventually(cleaned)
    master, worker = (await cluster.backend.get_job("demo")).replicas
    logs = await collect_logs(cluster.backend, "demo")
    if policy == "None":
        assert master.phase == "Running" and "master-0" in logs
    elif policy == "Running":
        assert (master.phase, master.reason) == ("Deleted", "CleanPodPolicy")
        assert worker.phase == "Succeeded" and "master-0" in logs
    else:
        assert [r.phase for r in (master, worker)] == ["Deleted", "Deleted"]
        assert logs == {}


async def test_ttl_from_completion_kills_stragglers(cluster: Local | Kube) -> None:
    """The TTL counts from completionTime and deletes the job, even with cleanPodPolicy
    None and a worker still running (item 9)."""
    await cluster.submit(
        {"nodes": 2, "ttl": 1, "cleanPodPolicy": "None"},
        {"master-0": [0], "worker-0": [None]},
        after={"master-0": ("worker-0", 1)},
    )
    job = await cluster.play("demo")
    assert job.state is JobState.SUCCEEDED
    pids = []
    if isinstance(cluster, Local):
        replicas = json.loads((cluster.backend.jobs_dir / "demo" / "replicas.json").read_text())
        pids = [replicas["worker-0"]["process"]["pid"]]
    await cluster.elapse("demo", 2)

    async def deleted() -> bool:
        try:
            await cluster.backend.get_job("demo")
        except JobNotFound:
            return True
        return False

    assert await eventually(deleted)
    assert await eventually(lambda: not any(running(pid) for pid in pids))


async def test_a_permanent_exit_code_failure_is_never_deleted_by_the_ttl(
    cluster: Local | Kube,
) -> None:
    """ExitCode with a code < 128 fails the job without a completionTime (v1.9.4
    pkg/controller.v1/common/pod.go:366-371), and CleanupJob counts the TTL from it
    (common/job.go:428-430: no completionTime, no cleanup): the job stays."""
    await cluster.submit(
        {"restartPolicy": "ExitCode", "ttl": 1, "backoffLimit": 3}, {"master-0": [1]}
    )
    job = await cluster.play("demo")
    assert job.state is JobState.FAILED
    await cluster.elapse("demo", 2)
    if isinstance(cluster, Local):
        jobs_dir = cluster.backend.jobs_dir

        async def settled_or_gone() -> bool:
            """The supervisor is done with the job: it expired it, or settled it (listed
            in the index) once nothing was left to wait for."""
            return "demo" in read_index(jobs_dir) or not (jobs_dir / "demo").exists()

        assert await eventually(settled_or_gone)
        events = await cluster.backend.events("demo")
        assert any(e.reason == "TTLNotApplied" for e in events)
    job = await cluster.backend.get_job("demo")  # not JobNotFound
    assert job.state is JobState.FAILED


async def test_suspend_and_resume(cluster: Local | Kube) -> None:
    """runPolicy.suspend: the nodes stop, Running False (PyTorchJobSuspended) and
    Suspended; resuming starts them again with a new start time (item 12)."""
    await cluster.submit({"nodes": 2}, {"master-0": [None], "worker-0": [None]})
    if isinstance(cluster, Kube):
        job = await cluster.play("demo")
    else:

        async def both_running() -> bool:
            job = await cluster.backend.get_job("demo")
            return job.state is JobState.RUNNING

        assert await eventually(both_running)
        job = await cluster.backend.get_job("demo")
    started = job.started
    await cluster.backend.suspend("demo")

    async def state(wanted: JobState) -> bool:
        return (await cluster.backend.get_job("demo")).state is wanted

    assert await eventually(lambda: state(JobState.SUSPENDED))
    job = await cluster.backend.get_job("demo")
    assert conditions(job, cluster.ns) == [
        CREATED,
        ("Running", "False", "PyTorchJobSuspended", "PyTorchJob demo is suspended."),
        ("Suspended", "True", "PyTorchJobSuspended", "PyTorchJob demo is suspended."),
    ]
    if isinstance(cluster, Local):
        assert [r.phase for r in job.replicas] == ["Pending", "Pending"]
        assert await collect_logs(cluster.backend, "demo") == {}
    await cluster.elapse("demo", 1)
    await asyncio.sleep(0.01)
    await cluster.backend.resume("demo")
    if isinstance(cluster, Kube):
        cluster.fake.operator.run(NS, "demo")
    assert await eventually(lambda: state(JobState.RUNNING))
    job = await cluster.backend.get_job("demo")
    assert [c[:3] for c in conditions(job, cluster.ns)] == [
        CREATED[:3],
        ("Suspended", "False", "PyTorchJobResumed"),
        ("Running", "True", "PyTorchJobRunning"),
    ]
    assert job.started is not None and started is not None and job.started > started - 1


async def test_submitted_suspended_does_not_start(cluster: Local | Kube) -> None:
    extras = {"spec": {"runPolicy": {"suspend": True}}}
    await cluster.submit({"extras": extras}, {"master-0": [0]})

    async def suspended() -> bool:
        return (await cluster.backend.get_job("demo")).state is JobState.SUSPENDED

    assert await eventually(suspended)
    job = await cluster.backend.get_job("demo")
    assert [c.type for c in job.conditions] == ["Created", "Suspended"]
    assert job.started is None
    await cluster.backend.resume("demo")
    if isinstance(cluster, Local):
        assert await eventually(lambda: (cluster.dir / "master-0.count").exists())
    job = await cluster.play("demo")
    assert job.state is JobState.SUCCEEDED
    with pytest.raises(BackendError) as err:
        await cluster.backend.suspend("demo")
    assert err.value.status == 409


@pytest.mark.parametrize(
    "calls",
    [
        [("Created", "True", "PyTorchJobCreated"), ("Running", "True", "PyTorchJobRunning")],
        [
            ("Running", "True", "PyTorchJobRunning"),
            ("Restarting", "True", "PyTorchJobRestarting"),
            ("Running", "True", "PyTorchJobRunning"),
            ("Running", "True", "PyTorchJobRunning"),
            ("Succeeded", "True", "PyTorchJobSucceeded"),
        ],
        [
            ("Created", "True", "PyTorchJobCreated"),
            ("Running", "True", "PyTorchJobRunning"),
            ("Running", "False", "PyTorchJobSuspended"),
            ("Suspended", "True", "PyTorchJobSuspended"),
            ("Suspended", "False", "PyTorchJobResumed"),
            ("Running", "True", "PyTorchJobRunning"),
            ("Failed", "True", "PyTorchJobFailed"),
            ("Running", "True", "PyTorchJobRunning"),
        ],
    ],
    ids=["created-running", "restart-succeed", "suspend-resume-fail"],
)
def test_conditions_list_shaped_as_set_condition(calls: list[tuple[str, str, str]]) -> None:
    """The local conditions list changes as the operator's (util/status.go:100-149, the
    fake's ``_set_condition``): Running and Restarting remove each other, Succeeded and
    Failed turn Running False, a repeat keeps its first message, nothing after Failed
    (item 7)."""
    from jupyter_pytorchjob.backends.local.operator_controller import set_condition

    from .fake_kube.operator import Operator

    ours: list[dict[str, Any]] = []
    theirs: dict[str, Any] = {}
    for step, (ctype, status, reason) in enumerate(calls):
        message = f"call {step}"
        set_condition(ours, ctype, status, reason, message, float(step))
        Operator._set_condition(theirs, ctype, status, reason, message)
    shape = [(c["type"], c["status"], c["reason"], c["message"]) for c in ours]
    assert shape == [
        (c["type"], c["status"], c["reason"], c["message"]) for c in theirs["conditions"]
    ]
