"""TrainJobs on the kubernetes backend, against the fake API server playing Kubeflow
Trainer v2.3 (tests/fake_kube/trainer.py, written from the platform's facts): submit,
watch, merged logs of every node, suspend/resume, delete - through the same backend
contract as PyTorchJobs - and interop with the real Kubeflow SDK both ways."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_pytorchjob.backends.base import BackendError, JobState
from jupyter_pytorchjob.backends.kubernetes.backend import (
    KINDS_RECHECK,
    KINDS_TTL,
    KubernetesBackend,
)
from jupyter_pytorchjob.backends.kubernetes.connection import CrdMissing
from jupyter_pytorchjob.job import JobSpec, JobSpecInvalid
from jupyter_pytorchjob.kinds import PYTORCHJOB, TRAINJOB

from .crd import CRDS_DIR, require_crds
from .fake_kube import FakeKube
from .fake_kube.trainer import read_yaml

NS = "team-a"


@pytest.fixture(autouse=True)
def trainer_crds() -> None:
    """The fake plays Trainer v2 from the real CRDs and shipped runtimes (../shared):
    skipped in a bare clone, a failure in CI (PTJOB_REQUIRE_CRDS=1)."""
    require_crds()


@pytest.fixture
def backend(fake_kube: FakeKube, jp_asyncio_loop: Any) -> Iterator[KubernetesBackend]:
    backend = KubernetesBackend(namespace=NS)
    yield backend
    jp_asyncio_loop.run_until_complete(backend.close())


def trainjob(name: str = "tj", **body: Any) -> JobSpec:
    return JobSpec.from_wire(
        {"name": name, "kind": "TrainJob", "command": ["torchrun", "train.py"], **body}
    )


async def test_a_trainjob_from_submit_to_delete(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    fake_kube.seed_pvc(NS, "workspace")
    info = await backend.submit(
        trainjob(nodes=2, pvc=[{"claim": "workspace", "mountPath": "/ws"}], shm="1Gi")
    )
    assert info.kind == "TrainJob" and info.state is JobState.SUBMITTED
    assert fake_kube.pruned == []  # every field we write is in the v2.3.0 CRD
    job = await backend.get_job("tj")
    assert job.kind == "TrainJob" and job.state is JobState.CREATED
    assert [(r.name, r.phase) for r in job.replicas] == [
        ("node-0", "Pending"),
        ("node-1", "Pending"),
    ]
    pod = fake_kube.trainer.pod(NS, "tj", 1)
    mounts = {m["mountPath"] for m in pod["spec"]["containers"][0]["volumeMounts"]}
    assert {"/ws", "/dev/shm"} <= mounts  # our runtime patch reached the pods
    env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
    assert env["PYTHONUNBUFFERED"] == "1" and env["PET_NNODES"] == "2"

    fake_kube.trainer.run(NS, "tj")
    for index in (0, 1):
        name = fake_kube.trainer.pod(NS, "tj", index)["metadata"]["name"]
        fake_kube.append_log(NS, name, "node", f"step 1 on node {index}\n")
    job = await backend.get_job("tj")
    assert job.state is JobState.RUNNING and {r.phase for r in job.replicas} == {"Running"}
    assert [j.name for j in await backend.list_jobs()] == ["tj"]
    chunks = [c async for c in backend.logs("tj")]
    lines = {(r, line) for c in chunks for r, text in c.runs() for line in text.splitlines()}
    assert lines == {("node-0", "step 1 on node 0"), ("node-1", "step 1 on node 1")}

    suspended = await backend.suspend("tj")
    assert suspended.state is JobState.SUSPENDED
    assert fake_kube.get("trainjobs", NS, "tj")["spec"]["suspend"] is True
    resumed = await backend.resume("tj")
    assert resumed.state is not JobState.SUSPENDED
    fake_kube.trainer.run(NS, "tj")
    fake_kube.trainer.succeed(NS, "tj")
    done = await backend.get_job("tj")
    assert done.state is JobState.SUCCEEDED and done.finished is not None
    with pytest.raises(BackendError) as info_:
        await backend.suspend("tj")
    assert info_.value.status == 409

    await backend.delete_job("tj")
    assert fake_kube.get("trainjobs", NS, "tj") is None


async def test_the_pods_account_and_pull_secrets_are_kept_and_reach_the_pods(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """v2.3's PodSpecPatch declares serviceAccountName: kept, and JobSet's pods run as it."""
    await backend.submit(
        trainjob(nodes=2, serviceAccount="s3-reader", imagePullSecrets=["regcred"])
    )
    assert fake_kube.pruned == []
    pod = fake_kube.trainer.pod(NS, "tj", 1)["spec"]
    assert pod["serviceAccountName"] == "s3-reader"
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]
    stored = fake_kube.get("trainjobs", NS, "tj")
    assert TRAINJOB.parse(stored).service_account == "s3-reader"


async def test_a_trainjobs_events_are_its_jobsets_jobs_and_pods_in_time_order(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    await backend.submit(trainjob(nodes=2))
    fake_kube.trainer.run(NS, "tj")
    fake_kube.trainer.succeed(NS, "tj")
    events = await backend.events("tj")
    by_object = {(e.object, e.reason) for e in events}
    assert {
        ("job/tj-node-0", "SuccessfulCreate"),
        ("job/tj-node-0", "Completed"),
        ("jobset/tj", "AllJobsCompleted"),
        ("node-0", "Scheduled"),
        ("node-1", "Started"),
    } <= by_object
    assert {e.object for e in events} == {"jobset/tj", "job/tj-node-0", "node-0", "node-1"}
    times = [e.time for e in events]
    assert times == sorted(times) and times[0] > 0
    # Merged in time: the Job creates the pods before the JobSet completes.
    reasons = [e.reason for e in events]
    assert reasons.index("SuccessfulCreate") < reasons.index("AllJobsCompleted")


async def test_a_name_too_long_for_jobset_shows_the_warning_not_created(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """A TrainJob made elsewhere (kubectl, the SDK) with a 50-character name passes the
    TrainJob admission (63) but JobSet refuses its Jobs: no status and no pods for ever,
    Warning events on the TrainJob (notes/trainjob.md §2, Pitfalls 4). The job says why."""
    name = "a" * 50
    manifest = TRAINJOB.build(trainjob("short"), namespace=NS)
    manifest["metadata"]["name"] = name
    custom = await backend.custom()
    await custom.create_namespaced_custom_object(
        TRAINJOB.group, TRAINJOB.version, NS, TRAINJOB.plural, manifest
    )
    job = await backend.get_job(name)
    assert job.state is JobState.SUBMITTED
    assert job.message is not None
    assert job.message.startswith("TrainJobResourcesCreationFailed: TrainJob resources")
    assert "JobSet name is too long, pod names generated" in job.message
    assert job.waiting is not None and job.waiting.message == job.message
    assert job.waiting.hint is not None and "--name" in str(job.waiting.hint)
    [listed] = await backend.list_jobs()
    assert listed.message == job.message
    warnings = [e for e in await backend.events(name) if e.type == "Warning"]
    assert [(e.object, e.reason) for e in warnings] == [(name, "TrainJobResourcesCreationFailed")]


async def test_suspend_leaves_the_immutable_fields_alone(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """Suspend/resume patch ``spec.suspend`` only: the CRD's CEL rules (trainer,
    runtimeRef, activeDeadlineSeconds immutable) let them through."""
    await backend.submit(trainjob(nodes=2, deadline=600))
    assert (await backend.suspend("tj")).state is JobState.SUSPENDED
    assert (await backend.resume("tj")).state is not JobState.SUSPENDED
    spec = fake_kube.get("trainjobs", NS, "tj")["spec"]
    assert spec["activeDeadlineSeconds"] == 600 and spec["trainer"]["numNodes"] == 2


async def test_a_refused_edit_names_the_field_in_the_servers_words(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    await backend.submit(trainjob(nodes=2))
    # An immutable field (our only edit, suspend, never touches one: this is the path any
    # edit takes). The CRD's CEL rule refuses it with 422.
    with pytest.raises(BackendError) as info:
        await backend._patch(TRAINJOB, "tj", {"spec": {"trainer": {"numNodes": 3}}}, "edit")
    assert info.value.status == 400
    assert info.value.message.startswith("the cluster refused to edit trainjob 'tj': ")
    assert 'spec.trainer: Invalid value: "object": field is immutable' in info.value.message
    assert fake_kube.get("trainjobs", NS, "tj")["spec"]["trainer"]["numNodes"] == 2
    # A deleted runtime (notes/trainjob.md Pitfall 9): the webhook refuses even suspend.
    fake_kube.delete("clustertrainingruntimes", "", "torch-distributed")
    with pytest.raises(BackendError) as info:
        await backend.suspend("tj")
    assert info.value.status == 400
    assert info.value.message.startswith("the cluster refused to suspend trainjob 'tj': ")
    assert "spec.RuntimeRef: Invalid value: " in info.value.message
    assert info.value.message.endswith(
        "specified clusterTrainingRuntime must be created before the TrainJob is created"
    )


async def test_a_runtime_must_exist_and_run_torch(backend: KubernetesBackend) -> None:
    runtimes = {r.name: r for r in await backend.runtimes()}
    assert runtimes["torch-distributed"].usable is None
    assert runtimes["deepspeed-distributed"].usable is not None
    with pytest.raises(JobSpecInvalid) as info:
        await backend.submit(trainjob(runtime="no-such-runtime"))
    assert (
        info.value.errors[0].field == "runtime" and "GET runtimes" in info.value.errors[0].message
    )
    with pytest.raises(JobSpecInvalid) as info:
        await backend.submit(trainjob(runtime="deepspeed-distributed"))
    assert info.value.errors[0].field == "runtime" and "mpi" in info.value.errors[0].message


async def test_a_webhook_refusal_is_a_refused_job_in_its_words(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """An env patch on container ``node`` passes our rules (it comes through ``extras``)
    but the Trainer's webhook refuses it with 403: a 400 saying so, not "not allowed"."""
    patch = {
        "manager": "example.com/me",
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "containers": [
                                                {
                                                    "name": "node",
                                                    "env": [{"name": "A", "value": "1"}],
                                                }
                                            ]
                                        }
                                    }
                                }
                            },
                        }
                    ]
                }
            }
        },
    }
    with pytest.raises(BackendError) as info:
        await backend.submit(trainjob(extras={"spec": {"runtimePatches": [patch]}}))
    assert info.value.status == 400 and "refused the job" in info.value.message
    assert "admission webhook" in info.value.message
    assert info.value.to_wire()["code"] == "k8s_refused_job"
    assert "admission webhook" in info.value.to_wire()["params"]["message"]
    assert fake_kube.get("trainjobs", NS, "tj") is None


async def test_each_kind_needs_its_crd(backend: KubernetesBackend, fake_kube: FakeKube) -> None:
    fake_kube.remove_crd("pytorchjob")
    assert await backend.job_kinds() == [TRAINJOB]
    with pytest.raises(CrdMissing) as info:
        await backend.submit(JobSpec.from_wire({"name": "pt", "command": ["python"]}))
    assert "pytorchjobs.kubeflow.org" in info.value.message
    # What to do instead: the kind it does serve, as the CLI and REST name it.
    assert "it serves TrainJobs: submit with --kind trainjob" in info.value.message
    await backend.submit(trainjob())  # the served kind still works
    assert [j.kind for j in await backend.list_jobs()] == ["TrainJob"]
    fake_kube.restore_crd("pytorchjob")
    assert PYTORCHJOB in await KubernetesBackend(namespace=NS).job_kinds()


async def test_a_namespace_user_submits_without_listing_cluster_runtimes(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """Many namespace users may create TrainJobs but not list cluster-scoped
    ClusterTrainingRuntimes: the submit reads the named runtime instead, and where even
    that is refused the Trainer's webhook judges the reference, as for kubectl (#29 3)."""
    fake_kube.deny("list", "clustertrainingruntimes")
    await backend.submit(trainjob())
    stored = fake_kube.get("trainjobs", NS, "tj")
    assert stored is not None
    assert stored["spec"]["runtimeRef"]["kind"] == "ClusterTrainingRuntime"
    listed = [p for m, p, _ in fake_kube.access_log if p.endswith("/clustertrainingruntimes")]
    assert listed == []
    with pytest.raises(JobSpecInvalid) as invalid:  # readable: still checked here
        await backend.submit(trainjob("tj2", runtime="deepspeed-distributed"))
    assert invalid.value.errors[0].field == "runtime"
    fake_kube.deny("get", "clustertrainingruntimes")
    await backend.submit(trainjob("tj3"))
    assert fake_kube.get("trainjobs", NS, "tj3") is not None
    # The picker's list names the scope the permission is missing in.
    with pytest.raises(BackendError) as info:
        await backend.runtimes()
    message = info.value.message
    assert info.value.status == 403 and "cluster-scoped" in message
    assert "ClusterRoleBinding" in message and "in namespace" not in message


class Clock:
    """A monotonic clock the test moves on (the discovery's age), instead of sleeping."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_kind_installed_while_a_server_runs_is_found(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """Trainer v2 installed after the server started: found again after KINDS_TTL (the
    list, config, runtimes), and at once by a submit of that kind (#29 item 1)."""
    backend.clock = clock = Clock()
    fake_kube.remove_crd("trainjob")
    assert await backend.job_kinds() == [PYTORCHJOB]
    assert await backend.runtimes() == []
    fake_kube.restore_crd("trainjob")
    clock.now += KINDS_RECHECK + 1  # a moment later: a submit looks again at once
    created = await backend.submit(trainjob())
    assert created.kind == "TrainJob"
    assert await backend.job_kinds() == [PYTORCHJOB, TRAINJOB]
    assert [j.kind for j in await backend.list_jobs()] == ["TrainJob"]

    def discoveries() -> int:
        return len([p for _, p, _ in fake_kube.access_log if p.rstrip("/").count("/") == 3])

    looked = discoveries()
    fake_kube.remove_crd("pytorchjob")
    clock.now += KINDS_TTL - 1  # within the TTL the discovery stands: no request
    assert await backend.job_kinds() == [PYTORCHJOB, TRAINJOB]
    assert discoveries() == looked
    clock.now += 2
    assert await backend.job_kinds() == [TRAINJOB]
    assert discoveries() == looked + 2  # one per kind
    assert [r.name for r in await backend.runtimes()]


async def test_the_list_after_a_crd_is_deleted_shows_the_kind_still_served(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """The PyTorchJob CRD deleted while the server runs: the next list answers with the
    TrainJobs (it failed 404 once, #29 item 8), and so do get and logs."""
    await backend.submit(trainjob())
    assert await backend.job_kinds() == [PYTORCHJOB, TRAINJOB]
    fake_kube.remove_crd("pytorchjob")
    assert [j.name for j in await backend.list_jobs()] == ["tj"]
    assert (await backend.get_job("tj")).kind == "TrainJob"
    assert await backend.job_kinds() == [TRAINJOB]
    fake_kube.remove_crd("trainjob")
    with pytest.raises(CrdMissing) as info:
        await backend.list_jobs()
    assert "serves no kind of job" in info.value.message


def sdk_client() -> Any:
    import os

    from kubeflow.common.types import KubernetesBackendConfig
    from kubeflow.trainer import TrainerClient

    config = KubernetesBackendConfig(namespace=NS, config_file=os.environ["KUBECONFIG"])
    return TrainerClient(backend_config=config)


def sdk_train() -> None:  # pragma: no cover - runs inside the (simulated) pod
    print("hello")


async def test_the_kubeflow_sdk_and_we_see_each_others_jobs(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """A TrainJob the SDK's ``train`` made shows in our list, view and clone; one we made
    shows in the SDK's ``get_job`` with its steps."""
    from kubeflow.trainer import CustomTrainer

    sdk = await asyncio.to_thread(sdk_client)
    theirs = await asyncio.to_thread(
        sdk.train,
        trainer=CustomTrainer(func=sdk_train, num_nodes=2, resources_per_node={"cpu": 2}),
    )
    job = await backend.get_job(theirs)
    assert (job.kind, job.nodes, [r.name for r in job.replicas]) == (
        "TrainJob",
        2,
        ["node-0", "node-1"],
    )
    assert job.manifest is not None
    clone = TRAINJOB.parse(job.manifest)
    assert (clone.kind, clone.nodes, float(clone.cpu or 0)) == ("TrainJob", 2, 2.0)  # SDK: 2.0

    await backend.submit(trainjob("ours", nodes=2))
    fake_kube.trainer.run(NS, "ours")
    seen = await asyncio.to_thread(sdk.get_job, "ours")
    assert seen.status == "Running"
    assert sorted(s.name for s in seen.steps) == ["node-0", "node-1"]


async def test_a_trainjobs_trainer_status_is_its_progress(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """What a pod reports to Trainer's status server (status.trainerStatus) is the job's
    progress, in the list and the job; a report outside the CRD's bounds changes nothing."""
    await backend.submit(trainjob())
    fake_kube.trainer.run(NS, "tj")
    assert (await backend.get_job("tj")).progress is None
    report = {
        "progressPercentage": 45,
        "estimatedRemainingSeconds": 120,
        "metrics": [
            {"name": "loss", "value": "0.25"},
            {"name": "accuracy", "value": "0.9"},
            {"name": "step", "value": "450"},
        ],
        "lastUpdatedTime": "2026-01-02T03:04:05Z",
    }
    assert fake_kube.trainer.report(NS, "tj", {"trainerStatus": report})[0] == 200
    bad = {**report, "progressPercentage": 140}
    assert fake_kube.trainer.report(NS, "tj", {"trainerStatus": bad})[0] == 422
    job = await backend.get_job("tj")
    listed = (await backend.list_jobs())[0]
    for progress in (job.progress, listed.progress):
        assert progress is not None
        assert progress.to_wire() == {
            "source": "trainerStatus",
            "updated": 1767323045.0,
            "percent": 45.0,
            "etaSeconds": 120.0,
            "step": 450,
            "totalSteps": None,
            "epoch": None,
            "totalEpochs": None,
            "metrics": {"loss": 0.25, "accuracy": 0.9},
            "keyMetric": "loss",
            "droppedMetrics": 0,
            "metricTexts": {},  # printed texts come from log lines only
        }
    fake_kube.trainer.succeed(NS, "tj")
    done = await backend.get_job("tj")
    assert done.state is JobState.SUCCEEDED and done.progress == job.progress


async def test_a_trainjobs_logs_add_to_its_trainer_status(
    fake_kube: FakeKube, jp_asyncio_loop: Any
) -> None:
    """trainerStatus is the best source; rank 0's log (node-0's pod) adds what it lacks."""
    backend = KubernetesBackend(namespace=NS, progress_interval=0.05)
    try:
        await backend.submit(trainjob(nodes=2))
        fake_kube.trainer.run(NS, "tj")
        pods = {
            p["metadata"]["name"]: p
            for p in fake_kube.list("pods", NS)
            if p["metadata"]["name"].startswith("tj-")
        }
        node0 = min(pods)  # tj-node-0-0-...: the JobSet's first Job, index 0
        assert "node-0" in node0, sorted(pods)
        fake_kube.append_log(NS, node0, "node", "{'eval_loss': 0.4, 'epoch': 1.0}\n")
        report = {
            "progressPercentage": 45,
            "metrics": [{"name": "loss", "value": "0.25"}],
            "lastUpdatedTime": "2026-01-02T03:04:05Z",
        }
        assert fake_kube.trainer.report(NS, "tj", {"trainerStatus": report})[0] == 200
        deadline = time.monotonic() + 20
        while True:
            progress = (await backend.list_jobs())[0].progress
            if progress is not None and "eval_loss" in progress.metrics:
                break
            assert time.monotonic() < deadline, progress
            await asyncio.sleep(0.05)
        assert progress.source.value == "trainerStatus" and progress.percent == 45
        assert progress.metrics == {"loss": 0.25, "eval_loss": 0.4}
        assert progress.epoch == 1.0  # only the log says it
    finally:
        await backend.close()


# Every shape of resources a TrainJob of ours can have (the SDK reads each pod's limits:
# a GPU, TPU, MIG or NPU key it knows, else cpu, else it raises - kubeflow 0.5.0
# trainer/backends/kubernetes/utils.py get_container_devices).
SDK_SHAPES: dict[str, dict[str, Any]] = {
    "plain": {},
    "cpu": {"cpu": "2"},
    "memory": {"memory": "1Gi"},
    "gpus": {"gpus": 2},
    "gpus-memory": {"gpus": 1, "memory": "1Gi"},
    "amd": {"gpus": 1, "gpuResource": "amd.com/gpu", "cpu": "4"},
    "amd-memory": {"gpus": 1, "gpuResource": "amd.com/gpu", "cpu": "4", "memory": "1Gi"},
    "all": {"nodes": 2, "cpu": "500m", "memory": "1Gi", "gpus": 1, "nprocPerNode": 1},
    "script": {"command": [], "script": "print(1)", "shm": "1Gi"},
    # a torchtune runtime: initializer pods (steps of their own for the SDK) and tune run
    "tune": {
        "runtime": "torchtune-llama3.2-1b",
        "command": ["tune", "run", "epochs=1"],
        "dataset": "hf://tatsu-lab/alpaca",
        "model": "hf://meta-llama/Llama-3.2-1B-Instruct",
        "gpus": 1,
    },
    "tune-own": {"runtime": "torchtune-llama3.2-1b", "command": []},
}


async def test_the_kubeflow_sdk_lists_the_namespace_after_every_job_we_submit(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """The real TrainerClient's list_jobs reads every job's pods: one job of ours whose
    pod limits it cannot read would make it raise for the whole namespace."""
    sdk = await asyncio.to_thread(sdk_client)
    for name, body in SDK_SHAPES.items():
        await backend.submit(trainjob(name, **body))
        for rjob in ("dataset-initializer", "model-initializer", "node"):
            fake_kube.trainer.run(NS, name, rjob)
        listed = await asyncio.to_thread(sdk.list_jobs)
        assert name in {job.name for job in listed}


async def test_a_name_too_long_for_the_runtimes_initializers_is_refused(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """On a torchtune runtime (dataset and model initializer jobs) JobSet's limit is 33
    characters: a 34-character name would stay Submitted forever, so it is refused."""
    runtime = read_yaml(CRDS_DIR.parent / "runtimes" / "more" / "llama3_2_1B.yaml")
    fake_kube.add(runtime)
    tune = runtime["metadata"]["name"]
    with pytest.raises(JobSpecInvalid) as info:
        await backend.submit(trainjob("t" * 34, runtime=tune))
    assert [e.field for e in info.value.errors] == ["name"]
    assert "33" in info.value.errors[0].message
    assert await backend.list_jobs() == []  # nothing half-created
    await backend.submit(trainjob("t" * 33, runtime=tune))
    assert fake_kube.get("jobsets", NS, "t" * 33) is not None  # JobSet admitted it


async def test_the_fake_stores_whole_numbers_as_an_api_server_does(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """The SDK sends resources as floats (``2.0``); an API server decodes them to float64
    and writes them back as ``2`` (Go's encoding/json), so the job reads back with its GPUs
    and its clone builds."""
    from kubeflow.trainer import CustomTrainer

    sdk = await asyncio.to_thread(sdk_client)
    theirs = await asyncio.to_thread(
        sdk.train,
        trainer=CustomTrainer(func=sdk_train, resources_per_node={"cpu": 2, "gpu": 1}),
    )
    stored = fake_kube.get("trainjobs", NS, theirs)
    assert stored is not None
    limits = stored["spec"]["trainer"]["resourcesPerNode"]["limits"]
    assert limits == {"cpu": 2, "nvidia.com/gpu": 1}
    assert all(type(v) is int for v in limits.values())
    job = await backend.get_job(theirs)
    assert job.manifest is not None
    clone = TRAINJOB.parse(job.manifest)
    assert (clone.gpus, clone.cpu) == (1, "2")
    assert TRAINJOB.build(clone.with_changes(name="clone"))["spec"]["trainer"]["numNodes"] == 1


# -- initializers (the runtimes of ../shared/runtimes/more) -------------------------------


async def test_initializers_run_first_as_their_own_replicas(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """On a torchtune runtime the dataset and model initializers are replicas before the
    nodes, with their own logs; the node job starts when both completed (the runtime's
    dependsOn), and the job's URIs reach the initializers as STORAGE_URI
    (plugins/jobset/builder.go:41-97 at v2.3.0)."""
    require_crds(CRDS_DIR.parent / "runtimes" / "more" / "llama3_2_1B.yaml")
    spec = trainjob(
        runtime="torchtune-llama3.2-1b",
        command=["tune", "run"],
        dataset="hf://tatsu-lab/alpaca",
        model="hf://meta-llama/Llama-3.2-1B-Instruct",
        modelSecret="hf-token",
        gpus=1,
    )
    await backend.submit(spec)
    trainer = fake_kube.trainer
    job = await backend.get_job("tj")
    assert [(r.name, r.phase) for r in job.replicas] == [
        ("dataset-initializer-0", "Pending"),
        ("model-initializer-0", "Pending"),
        ("node-0", "Pending"),
    ]
    (dataset_pod,) = trainer.pods(NS, "tj", "dataset-initializer")
    (container,) = dataset_pod["spec"]["containers"]
    assert {"name": "STORAGE_URI", "value": "hf://tatsu-lab/alpaca"} in container["env"]
    (model_pod,) = trainer.pods(NS, "tj", "model-initializer")
    assert model_pod["spec"]["containers"][0]["envFrom"] == [{"secretRef": {"name": "hf-token"}}]
    assert trainer.pods(NS, "tj") == []  # the nodes wait for the initializers
    for rjob in ("dataset-initializer", "model-initializer"):
        trainer.run(NS, "tj", rjob)
        (pod,) = trainer.pods(NS, "tj", rjob)
        fake_kube.append_log(NS, pod["metadata"]["name"], rjob, f"{rjob} downloading\n")
    job = await backend.get_job("tj")
    assert job.state is JobState.CREATED  # initializing: no node runs yet
    assert [r.phase for r in job.replicas] == ["Running", "Running", "Pending"]
    chunks = [c async for c in backend.logs("tj")]
    assert {r: text for c in chunks for r, text in c.runs()} == {
        "dataset-initializer-0": "dataset-initializer downloading\n",
        "model-initializer-0": "model-initializer downloading\n",
    }
    for rjob in ("dataset-initializer", "model-initializer"):
        trainer.succeed(NS, "tj", rjob=rjob)
    trainer.run(NS, "tj")
    job = await backend.get_job("tj")
    assert [(r.name, r.phase) for r in job.replicas] == [
        ("dataset-initializer-0", "Succeeded"),
        ("model-initializer-0", "Succeeded"),
        ("node-0", "Running"),
    ]
    assert job.state is JobState.RUNNING


async def test_an_initializer_the_runtime_lacks_is_refused_by_its_field(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """torch-distributed has no dataset-initializer job: the Trainer's webhook would refuse
    the job (plugins/jobset/jobset.go:112-115 at v2.3.0); we say so naming ``dataset``."""
    with pytest.raises(JobSpecInvalid) as info:
        await backend.submit(trainjob(dataset="hf://tatsu-lab/alpaca"))
    (error,) = info.value.errors
    assert error.field == "dataset" and "no dataset-initializer job" in error.message
    # The fake's webhook says the same of the manifest as written (kubectl create).
    manifest = TRAINJOB.build(trainjob(dataset="hf://tatsu-lab/alpaca"), namespace=NS)
    errors = fake_kube.trainer.webhook(manifest, None)
    assert any("must have dataset-initializer job" in e for e in errors)


def node_container(fake_kube: FakeKube, name: str = "tj") -> dict[str, Any]:
    trainer = fake_kube.trainer
    for rjob in ("dataset-initializer", "model-initializer"):
        trainer.run(NS, name, rjob)
        trainer.succeed(NS, name, rjob=rjob)
    (container,) = trainer.pod(NS, name, 0)["spec"]["containers"]
    return container  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("gpus", "completed"),
    [
        # torchtune.go:108-134 (getRecipeAndConfig) at v2.3.0: one node of one GPU
        (1, ["full_finetune_single_device", "--config", "llama3_2/1B_full_single_device"]),
        # torch.go:182-191: more than one GPU (auto) adds the rendezvous endpoint
        (
            2,
            [
                "--rdzv_endpoint=tj-node-0-0.tj:29500",
                "full_finetune_distributed",
                "--config",
                "llama3_2/1B_full",
            ],
        ),
    ],
)
async def test_a_torchtune_job_runs_the_command_the_runtime_completes(
    backend: KubernetesBackend, fake_kube: FakeKube, gpus: int, completed: list[str]
) -> None:
    """``ptjob submit --runtime torchtune-llama3.2-1b -- tune run epochs=1``: the torch
    plugin appends the rendezvous, recipe and config, then the runtime's own paths
    (extractOverridesFromRuntime, torchtune.go:172-197; manifests/base/runtimes/
    torchtune/llama3_2/llama3_2_1B.yaml), keeps the overrides as args and sets no
    PET_MASTER_* (torch.go:175-200)."""
    require_crds(CRDS_DIR.parent / "runtimes" / "more" / "llama3_2_1B.yaml")
    spec = trainjob(runtime="torchtune-llama3.2-1b", command=["tune", "run", "epochs=1"], gpus=gpus)
    await backend.submit(spec)
    container = node_container(fake_kube)
    assert container["command"] == [
        "tune",
        "run",
        *completed,
        "output_dir=/workspace/output",
        "tokenizer.path=/workspace/model/original/tokenizer.model",
        "checkpointer.checkpoint_dir=/workspace/model",
    ]
    assert container["args"] == ["epochs=1"]
    env = {e["name"] for e in container["env"]}
    assert "PET_NNODES" in env and not {"PET_MASTER_ADDR", "PET_MASTER_PORT"} & env
    job = await backend.get_job("tj")
    assert [r.name for r in job.replicas][-1] == "node-0"


async def test_a_torchtune_job_may_run_the_runtimes_command_as_written(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    require_crds(CRDS_DIR.parent / "runtimes" / "more" / "llama3_2_1B.yaml")
    runtime = read_yaml(CRDS_DIR.parent / "runtimes" / "more" / "llama3_2_1B.yaml")
    await backend.submit(
        JobSpec.from_wire({"name": "tj", "kind": "TrainJob", "runtime": "torchtune-llama3.2-1b"})
    )
    written = runtime["spec"]["template"]["spec"]["replicatedJobs"][2]["template"]["spec"]
    assert (
        node_container(fake_kube)["command"]
        == (written["template"]["spec"]["containers"][0]["command"])
    )
