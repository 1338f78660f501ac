"""The fake Training Operator against values written from the operator's Go code.

Expected values come from ``kubeflow/trainer`` at tag v1.9.4, cited as ``file:line`` under
``pkg/``, never from our own code. Jobs are created through the HTTP API (the real
``kubernetes_asyncio`` client); the kubelet and the clock are stepped with the hooks of
``tests/fake_kube/operator.py``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from jupyter_pytorchjob.kinds.pytorchjob.environment import replica_env

from .fake_kube import FakeKube
from .fake_kube.logs import parse_rfc3339
from .fake_kube.operator import default_validator, operator_env
from .strategies import manifests
from .test_fake_kube import GROUP, PLURAL, VERSION, apis, create

NS = "team-a"
MERGE = "application/merge-patch+json"


def job(
    name: str = "job1",
    workers: int = 2,
    master: bool = True,
    restart: str | None = "OnFailure",
    **run_policy: Any,
) -> dict[str, Any]:
    """A PyTorchJob as a person writes it (no builder of ours involved)."""

    def replica(count: int) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "replicas": count,
            "template": {
                "spec": {"containers": [{"name": "pytorch", "image": "img", "command": ["x"]}]}
            },
        }
        if restart is not None:
            spec["restartPolicy"] = restart
        return spec

    specs = {"Master": replica(1)} if master else {}
    if workers:
        specs["Worker"] = replica(workers)
    manifest: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name},
        "spec": {"pytorchReplicaSpecs": specs},
    }
    if run_policy:
        manifest["spec"]["runPolicy"] = run_policy
    return manifest


def stored(fake: FakeKube, name: str = "job1") -> dict[str, Any]:
    obj = fake.get("pytorchjobs", NS, name)
    assert obj is not None
    return obj


def conditions(fake: FakeKube, name: str = "job1") -> list[tuple[str, str, str]]:
    return [
        (c["type"], c["status"], c["reason"]) for c in stored(fake, name)["status"]["conditions"]
    ]


def last(fake: FakeKube, name: str = "job1") -> dict[str, Any]:
    return stored(fake, name)["status"]["conditions"][-1]  # type: ignore[no-any-return]


def pod(fake: FakeKube, name: str) -> dict[str, Any]:
    obj = fake.get("pods", NS, name)
    assert obj is not None, name
    return obj


def pytorch_status(fake: FakeKube, name: str) -> dict[str, Any]:
    (entry,) = [s for s in pod(fake, name)["status"]["containerStatuses"] if s["name"] == "pytorch"]
    return entry  # type: ignore[no-any-return]


def events(fake: FakeKube, name: str = "job1") -> list[tuple[str, str, str]]:
    return [
        (e["type"], e["reason"], e["message"])
        for e in fake.list("events", NS)
        if e["involvedObject"]["kind"] == "PyTorchJob" and e["involvedObject"]["name"] == name
    ]


async def submit(manifest: dict[str, Any]) -> None:
    async with apis() as (custom, _):
        await create(custom, manifest)


# -- the environment: a golden table from the Go code ----------------------------------------

# Master x1 + Worker x2, nprocPerNode "2": envvar.go:56-123 in order, master.go:44-59 for the
# master block (port 23456 by defaulting, pytorch_defaults.go:30-36).
GOLDEN_ENV = {
    "job1-master-0": [
        ("PYTHONUNBUFFERED", "1"),
        ("MASTER_PORT", "23456"),
        ("PET_MASTER_PORT", "23456"),
        ("MASTER_ADDR", "job1-master-0"),
        ("PET_MASTER_ADDR", "job1-master-0"),
        ("WORLD_SIZE", "6"),  # 3 replicas x 2 (envvar.go:62-64)
        ("RANK", "0"),
        ("PET_NODE_RANK", "0"),
        ("PET_NPROC_PER_NODE", "2"),
        ("PET_NNODES", "3"),
    ],
    "job1-worker-1": [
        ("PYTHONUNBUFFERED", "1"),
        ("MASTER_PORT", "23456"),
        ("PET_MASTER_PORT", "23456"),
        ("MASTER_ADDR", "job1-master-0"),
        ("PET_MASTER_ADDR", "job1-master-0"),
        ("WORLD_SIZE", "6"),
        ("RANK", "2"),  # index + 1 for workers (envvar.go:81-83)
        ("PET_NODE_RANK", "2"),
        ("PET_NPROC_PER_NODE", "2"),
        ("PET_NNODES", "3"),
    ],
}
# Worker-only elastic job, 2 workers, no min/max: no master env (envvar.go:67), nproc
# defaulted to "auto" (pytorch_defaults.go:68-74), min = max = 2 (pytorch_defaults.go:48-53),
# endpoint worker-0 on the Worker's port (elastic.go:146-168), standalone "" (elastic.go:114-119).
GOLDEN_ELASTIC_ENV = [
    ("PYTHONUNBUFFERED", "1"),
    ("PET_NPROC_PER_NODE", "auto"),
    ("PET_RDZV_ENDPOINT", "job1-worker-0:23456"),
    ("PET_RDZV_BACKEND", "c10d"),
    ("PET_NNODES", "2:2"),
    ("PET_STANDALONE", ""),
]


def env_of(fake: FakeKube, name: str) -> list[tuple[str, str]]:
    (container,) = pod(fake, name)["spec"]["containers"]
    return [(e["name"], e["value"]) for e in container["env"]]


async def test_pod_env_is_the_golden_table(fake_kube: FakeKube) -> None:
    manifest = job()
    manifest["spec"]["nprocPerNode"] = "2"
    await submit(manifest)
    for name, expected in GOLDEN_ENV.items():
        assert env_of(fake_kube, name) == expected
    elastic = job("job2", master=False)
    elastic["metadata"]["name"] = "job1"
    fake_kube.delete("pytorchjobs", NS, "job1")
    elastic["spec"]["elasticPolicy"] = {"standalone": True}
    await submit(elastic)
    for name in ("job1-worker-0", "job1-worker-1"):
        assert env_of(fake_kube, name) == GOLDEN_ELASTIC_ENV


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifests())
def test_our_environment_is_the_operators(manifest: dict[str, Any]) -> None:
    """``kinds.pytorchjob.environment.replica_env`` (what the local backend gives its
    nodes) against the fake's reading of the Go code, for any admitted manifest."""
    for rtype, rspec in manifest["spec"]["pytorchReplicaSpecs"].items():
        for index in range(rspec.get("replicas", 1)):
            ours = list(replica_env(manifest, rtype, index).items())
            theirs = [(e["name"], e["value"]) for e in operator_env(manifest, rtype, index)]
            assert ours == theirs, (rtype, index)


# -- what a new job gets -------------------------------------------------------------------------


async def test_create_gives_pods_services_labels_and_start_time(fake_kube: FakeKube) -> None:
    manifest = job(restart=None)
    worker = manifest["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
    worker["metadata"] = {"labels": {"team": "a"}}
    worker["spec"]["initContainers"] = [{"name": "fetch", "image": "busybox"}]
    worker["spec"]["restartPolicy"] = "Never"
    await submit(manifest)
    status = stored(fake_kube)["status"]
    # Created at the create event, startTime at the first reconcile (pytorchjob_controller.go
    # :358-367), before any pod runs.
    assert conditions(fake_kube) == [("Created", "True", "PyTorchJobCreated")]
    assert last(fake_kube)["message"] == "PyTorchJob job1 is created."
    assert status["startTime"]
    # replicaStatuses count Running pods only as active (core/status.go:34-50).
    assert status["replicaStatuses"] == {
        "Master": {
            "selector": "training.kubeflow.org/job-name=job1,"
            "training.kubeflow.org/operator-name=pytorchjob-controller,"
            "training.kubeflow.org/replica-type=master"
        },
        "Worker": {
            "selector": "training.kubeflow.org/job-name=job1,"
            "training.kubeflow.org/operator-name=pytorchjob-controller,"
            "training.kubeflow.org/replica-type=worker"
        },
    }
    w0 = pod(fake_kube, "job1-worker-0")
    # Default restart policy OnFailure (pytorch_defaults.go:88) overwrites the template's, with
    # a Warning (common/pod.go:428-435).
    assert w0["spec"]["restartPolicy"] == "OnFailure"
    assert (
        "Warning",
        "SetPodTemplateRestartPolicy",
        "Restart policy in pod template will be overwritten by restart policy in replica spec",
    ) in events(fake_kube)
    # Template labels kept, the operator's added (common/pod.go:401-422); job-role only on the
    # Master (pytorchjob_controller.go:499-506).
    assert w0["metadata"]["labels"] == {
        "team": "a",
        "training.kubeflow.org/operator-name": "pytorchjob-controller",
        "training.kubeflow.org/job-name": "job1",
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "0",
    }
    assert pod(fake_kube, "job1-master-0")["metadata"]["labels"][
        "training.kubeflow.org/job-role"
    ] == ("master")
    # init-pytorch appended after the user's (initcontainer.go:131), IfNotPresent (:38).
    inits = w0["spec"]["initContainers"]
    assert [c["name"] for c in inits] == ["fetch", "init-pytorch"]
    assert inits[1]["imagePullPolicy"] == "IfNotPresent" and inits[1]["image"] == "alpine:3.10"
    assert "nslookup job1-master-0" in inits[1]["command"][2]
    assert "initContainers" not in pod(fake_kube, "job1-master-0")["spec"]
    # Services: the four job labels as labels and selector (common/service.go:219-244).
    service = fake_kube.get("services", NS, "job1-worker-0")
    assert service is not None
    four = {
        "training.kubeflow.org/operator-name": "pytorchjob-controller",
        "training.kubeflow.org/job-name": "job1",
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "0",
    }
    assert service["metadata"]["labels"] == four and service["spec"]["selector"] == four
    assert service["spec"]["clusterIP"] == "None"
    assert [p["port"] for p in service["spec"]["ports"]] == [23456]


async def test_worker_only_job_roles_and_success(fake_kube: FakeKube) -> None:
    await submit(job(master=False, workers=2))
    assert "training.kubeflow.org/job-role" in pod(fake_kube, "job1-worker-0")["metadata"]["labels"]
    assert "initContainers" not in pod(fake_kube, "job1-worker-1")["spec"]
    fake_kube.operator.run(NS, "job1")
    assert last(fake_kube)["message"] == "PyTorchJob team-a/job1 is running."  # :421-423
    fake_kube.operator.succeed(NS, "job1")
    assert last(fake_kube)["message"] == "PyTorchJob team-a/job1 successfully completed."
    assert ("Normal", "PyTorchJobSucceeded", "PyTorchJob team-a/job1 successfully completed.") in (
        events(fake_kube)
    )


async def test_success_sequence_replica_statuses_and_events(fake_kube: FakeKube) -> None:
    await submit(job(cleanPodPolicy="None"))
    fake_kube.operator.run(NS, "job1")
    assert conditions(fake_kube) == [
        ("Created", "True", "PyTorchJobCreated"),
        ("Running", "True", "PyTorchJobRunning"),
    ]
    assert stored(fake_kube)["status"]["replicaStatuses"]["Worker"]["active"] == 2
    # The master exits 0 while a worker still runs: the job succeeds (:389-401) and, once
    # finished, what was active counts as succeeded (common/job.go:131-136).
    fake_kube.operator.exit(NS, "job1", "master-0", 0)
    assert conditions(fake_kube) == [
        ("Created", "True", "PyTorchJobCreated"),
        ("Running", "False", "PyTorchJobRunning"),
        ("Succeeded", "True", "PyTorchJobSucceeded"),
    ]
    status = stored(fake_kube)["status"]
    assert status["completionTime"]
    assert status["replicaStatuses"]["Master"]["succeeded"] == 1
    assert status["replicaStatuses"]["Worker"]["succeeded"] == 2
    assert "active" not in status["replicaStatuses"]["Worker"]
    assert ("Normal", "PyTorchJobSucceeded", "PyTorchJob job1 is successfully completed.") in (
        events(fake_kube)
    )
    # cleanPodPolicy None: the running worker is left running (common/job.go:48-51).
    assert pod(fake_kube, "job1-worker-0")["status"]["phase"] == "Running"


@pytest.mark.parametrize(
    ("policy", "left"),
    [
        ("None", {"job1-master-0", "job1-worker-0", "job1-worker-1"}),
        ("Running", {"job1-master-0"}),
        ("All", set()),
    ],
)
async def test_clean_pod_policy_once_finished(
    fake_kube: FakeKube, policy: str, left: set[str]
) -> None:
    """common/job.go:41-69: Running deletes Running and Pending pods, All every pod, each
    with its Service."""
    await submit(job(cleanPodPolicy=policy))
    fake_kube.operator.run(NS, "job1")
    fake_kube.operator.exit(NS, "job1", "master-0", 0)
    assert {p["metadata"]["name"] for p in fake_kube.list("pods", NS)} == left
    assert {s["metadata"]["name"] for s in fake_kube.list("services", NS)} == left


# -- failures and restarts -------------------------------------------------------------------------


async def test_never_fails_the_job_with_the_operators_words(fake_kube: FakeKube) -> None:
    await submit(job(restart="Never", backoffLimit=3))
    fake_kube.operator.run(NS, "job1")
    fake_kube.operator.exit(NS, "job1", "worker-1", 2)
    assert pod(fake_kube, "job1-worker-1")["status"]["phase"] == "Failed"
    condition = last(fake_kube)
    assert (condition["type"], condition["reason"]) == ("Failed", "PyTorchJobFailed")
    assert condition["message"] == "PyTorchJob job1 is failed because 1 Worker replica(s) failed."
    # The failure event is Normal (pytorchjob_controller.go:436), the exit code recorded
    # (common/pod.go:346).
    assert ("Normal", "PyTorchJobFailed", condition["message"]) in events(fake_kube)
    assert ("Normal", "ExitedWithCode", "Pod: team-a.job1-worker-1 exited with code 2") in (
        events(fake_kube)
    )


async def test_backoff_limit_zero_fails_a_never_job_with_the_backoff_message(
    fake_kube: FakeKube,
) -> None:
    """common/job.go:192-199: a new failure with backoffLimit 0 exceeds it first."""
    await submit(job(restart="Never", backoffLimit=0))
    fake_kube.operator.run(NS, "job1")
    fake_kube.operator.exit(NS, "job1", "worker-0", 1)
    assert last(fake_kube)["message"] == (
        "Job job1 has failed because it has reached the specified backoff limit"
    )


async def test_on_failure_backs_off_in_place_until_the_backoff_limit(fake_kube: FakeKube) -> None:
    """The kubelet restarts the container in the same pod: the first crash at once, each
    later one after CrashLoopBackOff's 10 s doubling (kuberuntime_manager.go:868-897 over
    flowcontrol/backoff.go:71-103), restartCount counting the restarts done; the job stays
    Running, no Restarting condition; restarts of Running pods reaching backoffLimit fail
    it (core/job.go:95-133) and cleanPodPolicy applies (common/job.go:229)."""
    await submit(job(backoffLimit=3, cleanPodPolicy="Running"))
    fake_kube.operator.run(NS, "job1")
    uid = pod(fake_kube, "job1-worker-0")["metadata"]["uid"]
    fake_kube.append_log(NS, "job1-worker-0", "pytorch", "crash 1\n")
    fake_kube.operator.exit(NS, "job1", "worker-0", 1)
    entry = pytorch_status(fake_kube, "job1-worker-0")
    assert entry["restartCount"] == 1
    assert list(entry["state"]) == ["running"]  # at once: no back-off entry yet
    assert entry["lastState"]["terminated"]["exitCode"] == 1
    assert pod(fake_kube, "job1-worker-0")["metadata"]["uid"] == uid
    assert pod(fake_kube, "job1-worker-0")["status"]["phase"] == "Running"
    assert [c[0] for c in conditions(fake_kube)] == ["Created", "Running"]
    async with apis() as (_, core):
        previous = await core.read_namespaced_pod_log(
            "job1-worker-0", NS, container="pytorch", previous=True
        )
    assert previous == "crash 1\n"
    fake_kube.operator.exit(NS, "job1", "worker-0", 1)
    entry = pytorch_status(fake_kube, "job1-worker-0")
    assert entry["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert entry["state"]["waiting"]["message"].startswith("back-off 10s restarting failed")
    assert entry["restartCount"] == 1  # the restarts done: the wait is not one
    fake_kube.operator.back_off_over(NS, "job1", "worker-0")
    assert pytorch_status(fake_kube, "job1-worker-0")["restartCount"] == 2
    fake_kube.operator.exit(NS, "job1", "worker-0", 1)
    message = pytorch_status(fake_kube, "job1-worker-0")["state"]["waiting"]["message"]
    assert message.startswith("back-off 20s ")
    assert last(fake_kube)["type"] == "Running"
    fake_kube.operator.back_off_over(NS, "job1", "worker-0")  # the third restart: the limit
    condition = last(fake_kube)
    assert (condition["type"], condition["message"]) == (
        "Failed",
        "Job job1 has failed because it has reached the specified backoff limit",
    )
    assert fake_kube.list("pods", NS) == []  # every pod was Running: cleanPodPolicy Running


async def test_a_back_off_not_moved_on_for_ten_minutes_restarts_at_once(
    fake_kube: FakeKube,
) -> None:
    """backoff.go:147-149 ``hasExpired``: a crash ending more than twice the longest wait
    (2 x 5 min) after the entry last moved on restarts at once, the entry back at 10 s."""
    await submit(job(workers=0, backoffLimit=10))
    fake_kube.operator.run(NS, "job1")
    fake_kube.operator.exit(NS, "job1", "master-0", 1)  # at once
    key = (pod(fake_kube, "job1-master-0")["metadata"]["uid"], "pytorch")
    fake_kube.kubelet.back_offs[key].last_update -= 601  # a run of ten minutes
    fake_kube.operator.exit(NS, "job1", "master-0", 1)
    entry = pytorch_status(fake_kube, "job1-master-0")
    assert (list(entry["state"]), entry["restartCount"]) == (["running"], 2)
    fake_kube.operator.exit(NS, "job1", "master-0", 1)
    message = pytorch_status(fake_kube, "job1-master-0")["state"]["waiting"]["message"]
    assert message.startswith("back-off 10s ")


async def test_always_restarts_a_replica_that_exits_0(fake_kube: FakeKube) -> None:
    """Always goes to the pod (core/pod.go:81-88): the kubelet restarts even after exit 0,
    the Master never succeeds and the restarts reach backoffLimit."""
    await submit(job(restart="Always", workers=0, backoffLimit=2))
    fake_kube.operator.run(NS, "job1")
    fake_kube.operator.succeed(NS, "job1")
    entry = pytorch_status(fake_kube, "job1-master-0")
    assert (list(entry["state"]), entry["restartCount"]) == (["running"], 1)
    fake_kube.operator.succeed(NS, "job1")
    assert pytorch_status(fake_kube, "job1-master-0")["restartCount"] == 1
    assert last(fake_kube)["type"] == "Running"
    fake_kube.operator.back_off_over(NS, "job1", "master-0")
    assert last(fake_kube)["type"] == "Failed"
    assert "backoff limit" in last(fake_kube)["message"]


async def test_exit_code_recreates_the_pod_for_retryable_codes(fake_kube: FakeKube) -> None:
    """ExitCode: the pod gets Never; a code >= 128 deletes and recreates it (new uid,
    restarts 0, the old log gone) with Restarting (common/pod.go:350-366); 1-127 fails."""
    await submit(job(restart="ExitCode", workers=1))
    assert pod(fake_kube, "job1-master-0")["spec"]["restartPolicy"] == "Never"
    fake_kube.operator.run(NS, "job1")
    old = pod(fake_kube, "job1-master-0")["metadata"]["uid"]
    fake_kube.append_log(NS, "job1-master-0", "pytorch", "before\n")
    fake_kube.operator.fail(NS, "job1", "master-0", 137, "OOMKilled")
    new = pod(fake_kube, "job1-master-0")
    assert new["metadata"]["uid"] != old
    assert pytorch_status(fake_kube, "job1-master-0")["restartCount"] == 0
    assert fake_kube.runtime(NS, "job1-master-0", "pytorch").current.data == bytearray()
    assert conditions(fake_kube) == [
        ("Created", "True", "PyTorchJobCreated"),
        ("Restarting", "True", "PyTorchJobRestarting"),
    ]
    assert last(fake_kube)["message"] == "job job1 is restarting because Master replica(s) failed."
    assert ("Warning", "PyTorchJobRestarting", last(fake_kube)["message"]) in events(fake_kube)
    assert ("Normal", "SuccessfulDeletePod", "Deleted pod: job1-master-0") in events(fake_kube)
    fake_kube.operator.run(NS, "job1")  # Running replaces Restarting (util/status.go:130-135)
    assert [c[0] for c in conditions(fake_kube)] == ["Created", "Running"]
    fake_kube.operator.fail(NS, "job1", "master-0", 3)
    assert last(fake_kube)["type"] == "Failed"
    assert last(fake_kube)["message"] == 'job "job1" is failing because "Master" replica(s) failed.'


# -- the clock, suspend, TTL -----------------------------------------------------------------------


@pytest.mark.parametrize(("policy", "pods_left"), [("None", 2), ("All", 0)])
async def test_active_deadline_applies_the_clean_pod_policy(
    fake_kube: FakeKube, policy: str, pods_left: int
) -> None:
    """Counted from startTime (core/job.go:82-91); v1.9.4 sets Failed before the cleanup,
    so cleanPodPolicy applies (common/job.go:216-231): None leaves pods running."""
    await submit(job(workers=1, activeDeadlineSeconds=60, cleanPodPolicy=policy))
    fake_kube.operator.run(NS, "job1")
    fake_kube.operator.elapse(NS, "job1", 30)
    assert last(fake_kube)["type"] == "Running"
    fake_kube.operator.elapse(NS, "job1", 31)
    assert last(fake_kube)["message"] == (
        "Job job1 has failed because it was active longer than specified deadline"
    )
    assert len(fake_kube.list("pods", NS)) == pods_left


async def test_suspend_and_resume_through_the_api(fake_kube: FakeKube) -> None:
    """runPolicy.suspend (common/job.go:146-173): pods and Services deleted, Running False
    with reason PyTorchJobSuspended, Suspended True; resume: Suspended False
    (PyTorchJobResumed), startTime reset, pods created again."""
    await submit(job(workers=1, cleanPodPolicy="None"))
    fake_kube.operator.run(NS, "job1")
    started = stored(fake_kube)["status"]["startTime"]
    fake_kube.operator.elapse(NS, "job1", 100)
    async with apis() as (custom, _):
        patch = {"spec": {"runPolicy": {"suspend": True}}}
        await custom.patch_namespaced_custom_object(
            GROUP, VERSION, NS, PLURAL, "job1", patch, _content_type=MERGE
        )
        assert fake_kube.list("pods", NS) == [] and fake_kube.list("services", NS) == []
        assert conditions(fake_kube) == [
            ("Created", "True", "PyTorchJobCreated"),
            ("Running", "False", "PyTorchJobSuspended"),
            ("Suspended", "True", "PyTorchJobSuspended"),
        ]
        assert last(fake_kube)["message"] == "PyTorchJob job1 is suspended."
        assert "active" not in stored(fake_kube)["status"]["replicaStatuses"]["Master"]
        patch = {"spec": {"runPolicy": {"suspend": False}}}
        await custom.patch_namespaced_custom_object(
            GROUP, VERSION, NS, PLURAL, "job1", patch, _content_type=MERGE
        )
    assert ("Suspended", "False", "PyTorchJobResumed") in conditions(fake_kube)
    status = stored(fake_kube)["status"]
    assert parse_rfc3339(status["startTime"]) > parse_rfc3339(started) - 100 * 10**9
    assert {p["metadata"]["name"] for p in fake_kube.list("pods", NS)} == {
        "job1-master-0",
        "job1-worker-0",
    }
    fake_kube.operator.run(NS, "job1")
    assert last(fake_kube)["type"] == "Running"
    assert ("Normal", "PyTorchJobResumed", "PyTorchJob job1 is resumed.") in events(fake_kube)


async def test_ttl_deletes_the_job_after_completion(fake_kube: FakeKube) -> None:
    """CleanupJob (common/job.go:420-453) deletes the job TTL s after completionTime; its pods
    follow by garbage collection."""
    await submit(job(workers=1, ttlSecondsAfterFinished=30, cleanPodPolicy="None"))
    fake_kube.operator.run(NS, "job1")
    fake_kube.operator.succeed(NS, "job1")
    fake_kube.operator.elapse(NS, "job1", 10)
    assert fake_kube.get("pytorchjobs", NS, "job1") is not None
    fake_kube.operator.elapse(NS, "job1", 21)
    assert fake_kube.get("pytorchjobs", NS, "job1") is None


# -- the webhook ---------------------------------------------------------------------------------

# (change, field, message) as pytorchjob_webhook.go words them through apimachinery.
WEBHOOK_CASES = [
    (lambda m: m["metadata"].update(name="Bad_Name"), "metadata.name", 'Invalid value: "Bad_Name"'),
    (
        lambda m: m["spec"]["pytorchReplicaSpecs"]["Master"].update(replicas=2),
        "spec.pytorchReplicaSpecs[Master].replicas",
        "Forbidden: must be 1",
    ),
    (
        lambda m: m["spec"]["pytorchReplicaSpecs"]["Master"].pop("replicas"),
        "spec.pytorchReplicaSpecs[Master].replicas",
        "Forbidden: must be 1",
    ),
    (
        lambda m: m["spec"]["pytorchReplicaSpecs"]["Worker"].update(replicas=0),
        "spec.pytorchReplicaSpecs[Worker].replicas",
        "Forbidden: must be at least 1",
    ),
    (
        lambda m: m["spec"]["pytorchReplicaSpecs"].update(
            Chief=m["spec"]["pytorchReplicaSpecs"]["Worker"]
        ),
        "spec.pytorchReplicaSpecs[Chief]",
        'Unsupported value: "Chief"',
    ),
    (
        lambda m: m["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][
            0
        ].update(name="trainer"),
        "spec.pytorchReplicaSpecs[Master].template.spec.containers",
        "Required value: must have at least one container with name pytorch",
    ),
    (
        lambda m: m["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][
            0
        ].pop("image"),
        "spec.pytorchReplicaSpecs[Worker].template.spec.containers[0].image",
        "Required value: must be required",
    ),
    (
        lambda m: (
            m["spec"]["pytorchReplicaSpecs"].pop("Worker"),
            m["spec"].update(elasticPolicy={}),
        ),
        "spec.pytorchReplicaSpecs[Worker]",
        "Required value: must be configured if elastic policy is used",
    ),
    (
        lambda m: m["spec"].update(nprocPerNode="2", elasticPolicy={"nProcPerNode": 2}),
        "spec.elasticPolicy.nProcPerNode",
        "Forbidden: must not be used with spec.nprocPerNode",
    ),
    (
        lambda m: m["spec"].setdefault("runPolicy", {}).update(managedBy=""),
        "spec.runPolicy.managedBy",
        'Unsupported value: ""',
    ),
]


@pytest.mark.parametrize(("change", "field", "message"), WEBHOOK_CASES)
def test_webhook_rules(change: Any, field: str, message: str) -> None:
    manifest = copy.deepcopy(job())
    change(manifest)
    errors = default_validator(manifest)
    assert any(f == field and m.startswith(message) for f, m in errors), errors


def test_the_webhook_has_no_name_length_rule() -> None:
    """A name too long for ``<name>-worker-<i>`` is admitted (trainer#1101); refusing it is
    our own rule, not the operator's."""
    assert default_validator(job(name="a" * 60)) == []
