"""A failed cluster job says why in one look (#26): the replica that failed first, its
exit, the kubelet's reason, the traceback from its failing run's log (previous
container), kept on the job as an annotation so a new server needs no log. Against the
HTTP-level fake (its operator, kubelet and Trainer, from the platform's facts)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_pytorchjob.backends import JobState
from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend
from jupyter_pytorchjob.frontends.logs import FAILING_RUN_NOTICE, job_logs
from jupyter_pytorchjob.job import JobSpec
from jupyter_pytorchjob.kinds.pods import FAILURE_ANNOTATION

from .fake_kube import FakeKube
from .fake_kube.kueue import insufficient_quota, pending_workload
from .fake_kube.logs import parse_rfc3339, rfc3339

NS = "team-a"
TRACEBACK = (
    "step 1 loss 0.9\n"
    "Traceback (most recent call last):\n"
    '  File "/app/train.py", line 9, in <module>\n'
    "    1 / 0\n"
    "ZeroDivisionError: division by zero\n"
)


@pytest.fixture
def backend(fake_kube: FakeKube, jp_asyncio_loop: Any) -> Iterator[KubernetesBackend]:
    backend = KubernetesBackend(namespace=NS)
    yield backend
    jp_asyncio_loop.run_until_complete(backend.close())


def spec(name: str = "demo", **body: Any) -> JobSpec:
    return JobSpec.from_wire({"name": name, "command": ["python", "train.py"], **body})


async def test_a_crash_looping_master_past_the_backoff_limit(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """OnFailure: the master crashes, restarts in place at once and the job fails at the
    backoff limit; our default cleanPodPolicy (None) keeps the pod, whose previous container
    holds the traceback. The summary goes onto the job: a new server, the pod gone,
    still has it."""
    await backend.submit(spec(nodes=2, backoffLimit=1))
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", TRACEBACK)
    fake_kube.operator.exit(NS, "demo", "master-0", exit_code=1)
    job = await backend.get_job("demo")
    assert job.state is JobState.FAILED
    failure = job.failure
    assert failure is not None
    assert (failure.replica, failure.exit_code, failure.reason) == ("master-0", 1, "Error")
    assert failure.message == "ZeroDivisionError: division by zero"
    assert failure.tail == TRACEBACK.splitlines()[1:]
    assert failure.log_source == "previous"
    stored = fake_kube.get("pytorchjobs", NS, "demo")["metadata"]["annotations"]
    assert json.loads(stored[FAILURE_ANNOTATION]) == failure.to_wire()
    listed = next(j for j in await backend.list_jobs() if j.name == "demo")
    assert listed.failure == failure
    # The kubelet restarted the first crash at once (that restart reached the limit) and
    # nothing deletes the pod: its current run is empty and ptjob logs adds the failing
    # run, saying so.
    chunks = [c async for c in job_logs(backend, "demo", replica="master-0")]
    assert (chunks[0].text, chunks[0].notice) == (FAILING_RUN_NOTICE, True)
    assert "".join(c.text for c in chunks[1:]) == TRACEBACK

    fake_kube.delete("pods", NS, "demo-master-0")
    fresh = KubernetesBackend(namespace=NS)
    try:
        assert (await fresh.get_job("demo")).failure == failure
    finally:
        await fresh.close()


async def test_the_replica_that_failed_first(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """Never: worker-0 fails the job; the master, failing after it (its peer gone), is
    not the failure, even once it has failed too."""
    await backend.submit(spec(nodes=2, restartPolicy="Never"))
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-worker-0", "pytorch", "RuntimeError: bad shard 3\n")
    fake_kube.operator.exit(NS, "demo", "worker-0", exit_code=2)
    job = await backend.get_job("demo")
    assert job.failure is not None
    assert (job.failure.replica, job.failure.exit_code) == ("worker-0", 2)
    assert job.failure.message == "RuntimeError: bad shard 3"
    assert job.failure.log_source == "current"
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "DistNetworkError: Connection reset\n")
    fake_kube.operator.exit(NS, "demo", "master-0", exit_code=1)
    assert (await backend.get_job("demo")).failure == job.failure


async def test_an_oom_killed_replica(backend: KubernetesBackend, fake_kube: FakeKube) -> None:
    """The kubelet's OOMKilled, exit 137: the hint names --memory."""
    await backend.submit(spec(restartPolicy="Never"))
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "loading the dataset\n")
    fake_kube.operator.exit(NS, "demo", "master-0", exit_code=137, reason="OOMKilled")
    failure = (await backend.get_job("demo")).failure
    assert failure is not None
    assert (failure.reason, failure.exit_code, failure.signal) == ("OOMKilled", 137, "SIGKILL")
    assert failure.headline == "master-0 was OOMKilled: loading the dataset"
    assert failure.hint is not None and "--memory" in str(failure.hint)


async def test_pods_gone_without_an_archive(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """cleanPodPolicy Running deletes the crash-looping master at the backoff limit and
    no archive kept its output: the condition's cause is all there is, said as such."""
    await backend.submit(spec(backoffLimit=1, cleanPodPolicy="Running", logArchive="off"))
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", TRACEBACK)
    fake_kube.operator.exit(NS, "demo", "master-0", exit_code=1)
    failure = (await backend.get_job("demo")).failure
    assert failure is not None
    assert (failure.replica, failure.reason, failure.tail) == ("", "BackoffLimitExceeded", [])
    assert "backoff limit" in failure.message
    assert failure.hint is not None and "--backoff-limit" in str(failure.hint)


async def test_a_deadline(backend: KubernetesBackend, fake_kube: FakeKube) -> None:
    """No replica failed: the deadline is the reason (the operator says it in its
    message only), the master the replica to look at, its last lines where it stood
    (cleanPodPolicy None keeps its pod)."""
    await backend.submit(spec(deadline=60))
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "epoch 3/100\n")
    fake_kube.operator.elapse(NS, "demo", 61)
    failure = (await backend.get_job("demo")).failure
    assert failure is not None and failure.reason == "DeadlineExceeded"
    assert "active longer than specified deadline" in failure.message
    assert (failure.replica, failure.tail, failure.log_source) == (
        "master-0",
        ["epoch 3/100"],
        "current",
    )
    assert failure.hint is not None and "--deadline" in str(failure.hint)


async def test_an_evicted_pod(backend: KubernetesBackend, fake_kube: FakeKube) -> None:
    """The kubelet's eviction manager fails the pod: phase Failed, reason Evicted and its
    message (pkg/kubelet/eviction/helpers.go, evictionMessage)."""
    await backend.submit(spec(restartPolicy="Never"))
    fake_kube.operator.run(NS, "demo")
    message = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 42Mi. "
    fake_kube.operator.fail(NS, "demo", "master-0", exit_code=137, reason="Error")
    fake_kube.set_pod_phase(NS, "demo-master-0", "Failed", reason="Evicted", message=message)
    failure = (await backend.get_job("demo")).failure
    assert failure is not None
    assert (failure.replica, failure.reason) == ("master-0", "Evicted")
    assert failure.hint is not None and "--memory" in str(failure.hint)


async def test_a_running_job_has_no_failure(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    await backend.submit(spec())
    fake_kube.operator.run(NS, "demo")
    job = await backend.get_job("demo")
    assert job.failure is None
    assert FAILURE_ANNOTATION not in (
        fake_kube.get("pytorchjobs", NS, "demo")["metadata"].get("annotations") or {}
    )


async def test_a_trainjob_node_that_raises(backend: KubernetesBackend, fake_kube: FakeKube) -> None:
    """A TrainJob's node crash-loops in place until its Job's backoffLimit (6), then
    JobSet fails the TrainJob (FailedJobs): the node's failing run is its previous one."""
    from .crd import require_crds

    require_crds()
    await backend.submit(
        JobSpec.from_wire(
            {"name": "tj", "kind": "TrainJob", "command": ["torchrun", "train.py"], "nodes": 2}
        )
    )
    fake_kube.trainer.run(NS, "tj")
    pod = fake_kube.trainer.pod(NS, "tj", 1)["metadata"]["name"]
    for _ in range(7):
        fake_kube.append_log(NS, pod, "node", TRACEBACK)
        fake_kube.trainer.exit(NS, "tj", 1, exit_code=1)
        if fake_kube.kubelet.in_back_off(fake_kube.trainer.pod(NS, "tj", 1), "node"):
            fake_kube.trainer.back_off_over(NS, "tj", 1)  # the first crash restarted at once
        job = await backend.get_job("tj")
        if job.state is JobState.FAILED:
            break
    assert job.state is JobState.FAILED, job.conditions
    assert job.failure is not None
    assert (job.failure.replica, job.failure.exit_code) == ("node-1", 1)
    assert job.failure.message == "ZeroDivisionError: division by zero"
    assert job.failure.tail[0] == "Traceback (most recent call last):"


# -- what a job waits for ---------------------------------------------------------------------
# The platform's words: kube-scheduler's FitError ("0/%v nodes are available", then each
# reason with its node count, sorted, then "." and the preemption's own message;
# pkg/scheduler/framework/types.go NoNodeAvailableMsg / FitError.Error, kubernetes
# v1.34, and noderesources/fit.go's "Insufficient <resource>"; VolumeBinding's
# PreFilter: persistentvolumeclaim "<name>" not found); the kubelet's image back-off
# (pkg/kubelet/images/image_manager.go: Back-off pulling image %q) and its
# CreateContainerConfigError and FailedMount messages carrying the secret manager's
# NotFound (secret "<name>" not found).
GPU_FIT = (
    "0/8 nodes are available: 8 Insufficient nvidia.com/gpu. preemption: 0/8 nodes are "
    "available: 8 No preemption victims found for incoming pod."
)
NO_PVC = (
    '0/3 nodes are available: persistentvolumeclaim "data" not found. preemption: 0/3 '
    "nodes are available: 3 Preemption is not helpful for scheduling."
)


@pytest.mark.parametrize(
    ("message", "flag"), [(GPU_FIT, "--gpus"), (NO_PVC, "Create the PVC data first")]
)
async def test_waiting_for_the_scheduler(
    backend: KubernetesBackend, fake_kube: FakeKube, message: str, flag: str
) -> None:
    await backend.submit(spec(nodes=2, gpus=4))
    fake_kube.operator.set_unschedulable(NS, "demo-master-0", message)
    job = await backend.get_job("demo")
    assert job.waiting is not None
    assert (job.waiting.reason, job.waiting.message) == ("Unschedulable", f"master-0: {message}")
    assert job.waiting.hint is not None and flag in str(job.waiting.hint)
    [listed] = await backend.list_jobs()
    assert listed.waiting == job.waiting


@pytest.mark.parametrize(
    ("reason", "message", "flag"),
    [
        ("ImagePullBackOff", 'Back-off pulling image "nope:1"', "--image"),
        ("ErrImagePull", 'failed to pull and unpack image "docker.io/library/nope:1"', "--image"),
        ("CreateContainerConfigError", 'secret "hf-token" not found', "secret hf-token"),
    ],
)
async def test_waiting_for_the_kubelet(
    backend: KubernetesBackend, fake_kube: FakeKube, reason: str, message: str, flag: str
) -> None:
    await backend.submit(spec())
    fake_kube.operator.run(NS, "demo")
    fake_kube.set_waiting(NS, "demo-master-0", "pytorch", reason, message)
    fake_kube.set_pod_phase(NS, "demo-master-0", "Pending")
    job = await backend.get_job("demo")
    assert job.waiting is not None
    assert (job.waiting.reason, job.waiting.message) == (reason, f"master-0: {message}")
    assert job.waiting.hint is not None and flag in str(job.waiting.hint)


async def test_waiting_for_a_volume(backend: KubernetesBackend, fake_kube: FakeKube) -> None:
    """A secret volume that does not exist: the container stays ContainerCreating and
    only the kubelet's FailedMount event says why (one job's read looks at it)."""
    await backend.submit(spec())
    fake_kube.operator.run(NS, "demo")
    fake_kube.set_waiting(NS, "demo-master-0", "pytorch", "ContainerCreating")
    fake_kube.set_pod_phase(NS, "demo-master-0", "Pending")
    text = 'MountVolume.SetUp failed for volume "token" : secret "token" not found'
    fake_kube.add_event(NS, "Pod", "demo-master-0", "FailedMount", text, "Warning")
    job = await backend.get_job("demo")
    assert job.waiting is not None
    assert (job.waiting.reason, job.waiting.message) == ("FailedMount", f"master-0: {text}")
    assert job.waiting.hint is not None and "secret token" in str(job.waiting.hint)


async def test_waiting_for_kueue(backend: KubernetesBackend, fake_kube: FakeKube) -> None:
    """A queued job Kueue suspended and could not admit: its Workload's QuotaReserved
    message; before Kueue made a Workload, that; without a queue, plain suspension."""
    await backend.submit(spec(gpus=4, queue="team-queue"))
    fake_kube.operator.suspend(NS, "demo")  # Kueue's webhook, defaults.go:37-44
    job = await backend.get_job("demo")
    assert job.waiting is not None and job.waiting.reason == "NoWorkload"
    assert "'team-queue'" in str(job.waiting.message)
    message = insufficient_quota("master", "nvidia.com/gpu", "a100", "4")
    pending_workload(fake_kube, NS, "pytorchjobs", "demo", message)
    job = await backend.get_job("demo")
    assert job.waiting is not None
    assert (job.waiting.reason, job.waiting.message) == (
        "QuotaReserved",
        f"Kueue (Pending): {message}",
    )
    assert job.waiting.hint is not None and "--gpus" in str(job.waiting.hint)
    [listed] = await backend.list_jobs()
    assert listed.waiting == job.waiting

    await backend.submit(spec("plain"))
    fake_kube.operator.suspend(NS, "plain")
    plain = await backend.get_job("plain")
    assert plain.waiting is not None and plain.waiting.reason == "Suspended"


def back_date(fake_kube: FakeKube, pod: str, seconds: float) -> None:
    """The pod's container's times ``seconds`` earlier: as if that long had passed since."""
    for entry in fake_kube.get("pods", NS, pod)["status"]["containerStatuses"]:
        for state in (entry.get("state") or {}, entry.get("lastState") or {}):
            for times in state.values():
                for key in ("startedAt", "finishedAt"):
                    if times.get(key):
                        when = parse_rfc3339(times[key]) - int(seconds * 1e9)
                        times[key] = rfc3339(when)


async def test_a_master_restarted_while_its_worker_finished_waits_for_it(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """The operator keeps a job Running while its restarted master waits for a worker that
    has succeeded (OnFailure restarts only the crashed container): once they have been
    alone a minute (from the later of the restart and the worker's end, the pods' own
    times), the job says it waits for nothing that will come."""
    await backend.submit(spec(nodes=2))
    fake_kube.operator.run(NS, "demo")
    fake_kube.operator.exit(NS, "demo", "master-0", exit_code=1)  # restarted at once
    fake_kube.operator.exit(NS, "demo", "worker-0", exit_code=0)
    job = await backend.get_job("demo")
    assert (job.state, job.waiting, job.message) == (JobState.RUNNING, None, None)
    back_date(fake_kube, "demo-master-0", 120)
    back_date(fake_kube, "demo-worker-0", 50)
    job = await backend.get_job("demo")
    assert job.waiting is None  # the worker ended 50 s ago
    back_date(fake_kube, "demo-worker-0", 10)
    job = await backend.get_job("demo")
    assert job.state is JobState.RUNNING
    assert job.waiting is not None and job.waiting.reason == "WaitingForPeers"
    assert str(job.waiting.message) == (
        "master-0 restarted and waits for its peers, which have all exited "
        "(worker-0 Succeeded): the job cannot complete; delete it"
    )
    assert job.message == job.waiting.message
    [listed] = await backend.list_jobs()
    assert listed.waiting == job.waiting
