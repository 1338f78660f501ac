"""The fake's Kubeflow Trainer v2.3.0 (``tests/fake_kube/trainer.py``) against the facts of
``shared/notes/trainjob.md`` (§N), driven over HTTP by the real ``kubernetes_asyncio`` client
and by the real Kubeflow SDK ``TrainerClient`` (kubeflow 0.5.0) - never by our own code.

Expected values are written from the note, not from the fake; the kubelet and the clock are
stepped with the hooks of ``fake.trainer``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from .crd import RUNTIMES_DIR, TRAINJOB_CRD, require_crds
from .fake_kube import FakeKube
from .test_fake_kube import AUTH, apis, expect_status
from .waiting import until

NS = "team-a"
GROUP, VERSION, PLURAL = "trainer.kubeflow.org", "v1alpha1", "trainjobs"
MERGE = "application/merge-patch+json"
JOBSET = "jobset.sigs.k8s.io/jobset-name"
RJOB = "jobset.sigs.k8s.io/replicatedjob-name"
INDEX = "batch.kubernetes.io/job-completion-index"
MANAGER = "jupyterlab.example.org/trainjob-ui"


@pytest.fixture(autouse=True)
def _trainer_crds() -> None:
    """These tests need the real TrainJob CRD and the shipped runtimes beside the checkout."""
    require_crds(TRAINJOB_CRD)
    require_crds(RUNTIMES_DIR / "torch_distributed.yaml")


def trainjob(name: str = "tj1", **trainer: Any) -> dict[str, Any]:
    """A TrainJob as a person writes it (§1), on the shipped torch-distributed runtime."""
    spec: dict[str, Any] = {"runtimeRef": {"name": "torch-distributed"}}
    spec["trainer"] = {"command": ["torchrun", "train.py"], **trainer}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": spec,
    }


async def create(custom: client.CustomObjectsApi, body: dict[str, Any]) -> Any:
    return await custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, body)


async def patch(custom: client.CustomObjectsApi, name: str, body: dict[str, Any]) -> Any:
    return await custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, name, body, _content_type=MERGE
    )


def stored(fake: FakeKube, name: str = "tj1") -> dict[str, Any]:
    obj = fake.get("trainjobs", NS, name)
    assert obj is not None
    return obj


def conditions(fake: FakeKube, name: str = "tj1") -> list[tuple[str, str, str, str]]:
    return [
        (c["type"], c["status"], c["reason"], c["message"])
        for c in (stored(fake, name).get("status") or {}).get("conditions") or []
    ]


def node_env(pod: dict[str, Any]) -> dict[str, Any]:
    (node,) = [c for c in pod["spec"]["containers"] if c["name"] == "node"]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in node.get("env") or []}


# -- discovery and which kinds a cluster serves ---------------------------------------------


async def test_discovery_lists_the_trainer_resources(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        found = await custom.get_api_resources(GROUP, VERSION)
    scope = {r.name: r.namespaced for r in found.resources}
    assert scope["trainjobs"] is True and scope["trainingruntimes"] is True
    assert scope["clustertrainingruntimes"] is False
    assert "trainjobs/status" in scope


@pytest.mark.parametrize(
    ("kinds", "serves_pytorchjob", "serves_trainjob"),
    [(("pytorchjob",), True, False), (("trainjob",), False, True), (None, True, True)],
)
async def test_a_cluster_serves_the_kinds_it_was_started_with(
    kinds: tuple[str, ...] | None, serves_pytorchjob: bool, serves_trainjob: bool
) -> None:
    import aiohttp

    fake = await (FakeKube.start(kinds=kinds) if kinds else FakeKube.start())
    try:
        async with aiohttp.ClientSession(headers=AUTH) as session:
            groups = await (await session.get(f"{fake.url}/apis")).json()
            names = {g["name"] for g in groups["groups"]}
            assert ("kubeflow.org" in names) is serves_pytorchjob
            assert (GROUP in names) is serves_trainjob
            answer = await session.get(
                f"{fake.url}/apis/{GROUP}/{VERSION}/namespaces/{NS}/trainjobs"
            )
            assert answer.status == (200 if serves_trainjob else 404)
            if not serves_trainjob:
                assert await answer.text() == "404 page not found\n"
            answer = await session.get(f"{fake.url}/apis/kubeflow.org/v1")
            assert answer.status == (200 if serves_pytorchjob else 404)
    finally:
        await fake.stop()


async def not_served(call: Any) -> None:
    with pytest.raises(ApiException) as info:
        await call
    assert info.value.status == 404 and info.value.body == "404 page not found\n"


async def test_remove_crd_takes_one_kind_away(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        fake_kube.remove_crd("trainjob")
        await not_served(custom.get_api_resources(GROUP, VERSION))
        assert (await custom.get_api_resources("kubeflow.org", "v1")).resources
        fake_kube.restore_crd("trainjob")
        fake_kube.remove_crd()  # the default stays the PyTorchJob CRD
        assert (await custom.get_api_resources(GROUP, VERSION)).resources
        await not_served(custom.get_api_resources("kubeflow.org", "v1"))


async def test_the_shipped_runtimes_are_seeded(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        listed = await custom.list_cluster_custom_object(GROUP, VERSION, "clustertrainingruntimes")
        runtime = next(i for i in listed["items"] if i["metadata"]["name"] == "torch-distributed")
        assert runtime["metadata"]["labels"]["trainer.kubeflow.org/framework"] == "torch"
        assert "namespace" not in runtime["metadata"]
        assert runtime["spec"]["mlPolicy"] == {"numNodes": 1, "torch": {}}
        public = await core.read_namespaced_config_map("kubeflow-trainer-public", "kubeflow-system")
        assert public.data["kubeflow_trainer_version"]
        empty = await custom.list_namespaced_custom_object(GROUP, VERSION, NS, "trainingruntimes")
        assert empty["items"] == []


# -- admission: schema, CEL, webhook (§2) ---------------------------------------------------


async def test_create_defaults_as_the_crd_says(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        made = await create(custom, trainjob())
    spec = made["spec"]
    assert spec["runtimeRef"] == {
        "name": "torch-distributed",
        "kind": "ClusterTrainingRuntime",
        "apiGroup": GROUP,
    }
    assert spec["managedBy"] == "trainer.kubeflow.org/trainjob-controller"
    assert spec["suspend"] is False
    assert "status" not in made  # the controller acts after the create is answered


async def test_name_rules_are_the_crds_cel_rules(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        body = await expect_status(create(custom, trainjob("a" * 64)), 422, "Invalid")
        assert body["message"] == (
            f'TrainJob.trainer.kubeflow.org "{"a" * 64}" is invalid: <nil>: Invalid value: '
            '"object": metadata.name must be no more than 63 characters'
        )
        body = await expect_status(create(custom, trainjob("1job")), 422, "Invalid")
        assert "metadata.name must match RFC 1035 DNS label format" in body["message"]
        assert (await create(custom, trainjob("a" * 63)))["metadata"]["name"] == "a" * 63


async def test_num_proc_per_node_must_be_an_integer(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        body = await expect_status(create(custom, trainjob(numProcPerNode="auto")), 422, "Invalid")
    assert 'spec.trainer.numProcPerNode: Invalid value: "string"' in body["message"]
    assert "must be of type integer" in body["message"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"trainer": {"numNodes": 3}}, "spec.trainer"),
        ({"runtimeRef": {"name": "deepspeed-distributed"}}, "spec.runtimeRef"),
        ({"managedBy": "kueue.x-k8s.io/multikueue"}, "spec.managedBy"),
    ],
)
async def test_immutable_fields_are_refused_on_update(
    fake_kube: FakeKube, change: dict[str, Any], field: str
) -> None:
    async with apis() as (custom, _):
        await create(custom, trainjob())
        body = await expect_status(patch(custom, "tj1", {"spec": change}), 422, "Invalid")
    assert f": {field}: Invalid value: " in body["message"]
    assert body["message"].endswith("field is immutable")


async def test_active_deadline_is_immutable_once_set(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        job = trainjob()
        job["spec"]["activeDeadlineSeconds"] = 600
        await create(custom, job)
        body = await expect_status(
            patch(custom, "tj1", {"spec": {"activeDeadlineSeconds": 60}}), 422, "Invalid"
        )
    assert (
        'spec.activeDeadlineSeconds: Invalid value: "integer": field is immutable'
        in (body["message"])
    )


async def test_webhook_refuses_a_missing_runtime_with_403(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        job = trainjob()
        job["spec"]["runtimeRef"] = {"name": "nope"}
        body = await expect_status(create(custom, job), 403, "Forbidden")
        assert body["message"].startswith(
            'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
        )
        assert body["message"].endswith(
            'clustertrainingruntimes.trainer.kubeflow.org "nope" not found: specified '
            "clusterTrainingRuntime must be created before the TrainJob is created"
        )
        job["spec"]["runtimeRef"] = {"name": "torch-distributed", "kind": "TrainingRuntime"}
        body = await expect_status(create(custom, job), 403, "Forbidden")
        assert "specified trainingRuntime must be created" in body["message"]
        job["spec"]["runtimeRef"] = {"name": "torch-distributed", "kind": "Other"}
        body = await expect_status(create(custom, job), 403, "Forbidden")
        assert body["message"].endswith("unsupported runtime: Other.trainer.kubeflow.org")
    assert fake_kube.get("trainjobs", NS, "tj1") is None


async def test_webhook_refuses_reserved_torch_env(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        job = trainjob(env=[{"name": "PET_NNODES", "value": "9"}, {"name": "OK", "value": "1"}])
        body = await expect_status(create(custom, job), 403, "Forbidden")
    assert "spec.trainer.env: Invalid value: " in body["message"]
    assert body["message"].endswith(
        "must not have reserved envs, invalid envs configured: [PET_NNODES]"
    )


def with_patch(job: dict[str, Any], pod_spec: dict[str, Any], manager: str = MANAGER) -> None:
    job["spec"]["runtimePatches"] = [{
        "manager": manager,
        "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
            {"name": "node", "template": {"spec": {"template": {"spec": pod_spec}}}},
        ]}}},
    }]  # fmt: skip


@pytest.mark.parametrize(
    ("manager", "pod_spec", "text"),
    [
        ("trainjob-ui", {"nodeSelector": {"a": "b"}}, "must be a domain-prefixed path"),
        (MANAGER, {"containers": [{"name": "trainer"}]}, "doesn't exist in the runtime"),
        (
            MANAGER,
            {"containers": [{"name": "node", "env": [{"name": "X", "value": "1"}]}]},
            "must not have env patches for the node container",
        ),
    ],
)
async def test_webhook_checks_runtime_patches(
    fake_kube: FakeKube, manager: str, pod_spec: dict[str, Any], text: str
) -> None:
    job = trainjob()
    with_patch(job, pod_spec, manager)
    async with apis() as (custom, _):
        body = await expect_status(create(custom, job), 403, "Forbidden")
    assert text in body["message"]


# -- what the controllers create (§3, §4) ---------------------------------------------------


async def test_jobset_job_pods_and_service(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        made = await create(custom, trainjob(numNodes=2))
        pods = await core.list_namespaced_pod(NS, label_selector=f"{JOBSET}=tj1,{RJOB}=node")
    jobset = fake_kube.get("jobsets", NS, "tj1")
    assert jobset is not None
    assert jobset["metadata"]["ownerReferences"][0]["uid"] == made["metadata"]["uid"]
    job = fake_kube.get("jobs", NS, "tj1-node-0")
    assert job is not None
    assert job["spec"]["parallelism"] == job["spec"]["completions"] == 2
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["backoffLimit"] == 6
    assert job["metadata"]["labels"]["trainer.kubeflow.org/trainjob-ancestor-step"] == "trainer"
    service = fake_kube.get("services", NS, "tj1")
    assert service is not None and service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == {JOBSET: "tj1"}
    by_index = {p.metadata.labels[INDEX]: p for p in pods.items}
    assert sorted(by_index) == ["0", "1"]
    for index, pod in by_index.items():
        assert pod.metadata.name.startswith(f"tj1-node-0-{index}-")
        assert len(pod.metadata.name) == len("tj1-node-0-0-") + 5
        assert pod.metadata.annotations[INDEX] == index
        assert pod.metadata.labels["jobset.sigs.k8s.io/job-index"] == "0"
        assert "trainer.kubeflow.org/trainjob-ancestor-step" not in pod.metadata.labels
        assert pod.spec.hostname == f"tj1-node-0-{index}" and pod.spec.subdomain == "tj1"
        assert pod.spec.restart_policy == "OnFailure"
        assert pod.metadata.owner_references[0].kind == "Job"


async def test_torch_plugin_env(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        await create(custom, trainjob(numNodes=3, env=[{"name": "EPOCHS", "value": "2"}]))
    pod = fake_kube.trainer.pod(NS, "tj1", 2)
    env = node_env(pod)
    assert env["EPOCHS"] == "2"
    assert env["PET_NNODES"] == "3" and env["PET_MASTER_PORT"] == "29500"
    assert env["PET_MASTER_ADDR"] == "tj1-node-0-0.tj1"
    assert env["PET_NODE_RANK"] == {
        "fieldRef": {
            "apiVersion": "v1",
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']",
        }
    }
    assert "MASTER_ADDR" not in env and "PYTHONUNBUFFERED" not in env
    (node,) = pod["spec"]["containers"]
    assert node["image"] == "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
    assert node["command"] == ["torchrun", "train.py"]
    assert {"containerPort": 29500, "protocol": "TCP"} in node["ports"]


@pytest.mark.parametrize(
    ("trainer", "expected"),
    [
        ({"numProcPerNode": 4}, "4"),
        ({"resourcesPerNode": {"limits": {"nvidia.com/gpu": "1"}}}, "auto"),
        ({"resourcesPerNode": {"requests": {"cpu": "500m"}}}, "1"),
        ({"resourcesPerNode": {"limits": {"cpu": "3", "memory": "1Gi"}}}, "3"),
        ({}, "1"),
    ],
)
async def test_nproc_per_node_rule(
    fake_kube: FakeKube, trainer: dict[str, Any], expected: str
) -> None:
    async with apis() as (custom, _):
        await create(custom, trainjob(**trainer))
    assert node_env(fake_kube.trainer.pod(NS, "tj1"))["PET_NPROC_PER_NODE"] == expected


async def test_runtime_patches_merge_strategically(fake_kube: FakeKube) -> None:
    job = trainjob(resourcesPerNode={"limits": {"nvidia.com/gpu": "1"}})
    with_patch(job, {
        "nodeSelector": {"gpu-type": "a100"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "team-pvc"}},
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
        ],
        "containers": [{"name": "node", "volumeMounts": [
            {"name": "data", "mountPath": "/workspace/data"},
            {"name": "dshm", "mountPath": "/dev/shm"},
        ]}],
    })  # fmt: skip
    async with apis() as (custom, _):
        await create(custom, job)
    assert fake_kube.pruned == []
    spec = fake_kube.trainer.pod(NS, "tj1")["spec"]
    assert spec["nodeSelector"] == {"gpu-type": "a100"}
    assert spec["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert [v["name"] for v in spec["volumes"]] == ["data", "dshm"]
    (node,) = spec["containers"]
    assert [m["mountPath"] for m in node["volumeMounts"]] == ["/workspace/data", "/dev/shm"]
    assert node["image"].startswith("pytorch/pytorch:")  # the runtime's container is kept
    assert node["resources"] == {"limits": {"nvidia.com/gpu": "1"}}


async def test_name_too_long_for_jobset_leaves_an_empty_status_and_warnings(
    fake_kube: FakeKube,
) -> None:
    long = "a" * 49  # 48 is the limit for node with ≤ 10 nodes (§2)
    async with apis() as (custom, core):
        await create(custom, trainjob(long))
        await create(custom, trainjob("b" * 48))
        events = await core.list_namespaced_event(NS, field_selector=f"involvedObject.name={long}")
    assert stored(fake_kube, long).get("status") in (None, {})
    assert fake_kube.get("jobsets", NS, long) is None
    (event,) = events.items
    assert event.type == "Warning" and event.reason == "TrainJobResourcesCreationFailed"
    assert event.involved_object.kind == "TrainJob"
    assert event.message.startswith("TrainJob resources reconciliation failed: ")
    # events.k8s.io recorder: an eventTime, no firstTimestamp (trainjob.md §7)
    assert event.first_timestamp is None and event.event_time is not None
    assert "pod names generated for this JobSet will exceed 63 characters" in event.message
    assert fake_kube.get("jobsets", NS, "b" * 48) is not None


# -- status (§5, §6) ------------------------------------------------------------------------


async def test_a_running_job_has_no_conditions_and_counts_jobs(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        await create(custom, trainjob(numNodes=2))
        fake_kube.trainer.run(NS, "tj1")
        got = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "tj1")
        pods = await core.list_namespaced_pod(NS, label_selector=f"{JOBSET}=tj1")
    assert "conditions" not in got["status"]
    assert got["status"]["jobsStatus"] == [
        {"name": "node", "ready": 1, "succeeded": 0, "failed": 0, "active": 1, "suspended": 0}
    ]
    assert {p.status.phase for p in pods.items} == {"Running"}


async def test_complete_when_every_node_succeeds(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        await create(custom, trainjob(numNodes=2))
    fake_kube.trainer.run(NS, "tj1")
    fake_kube.trainer.succeed(NS, "tj1", 1)
    assert conditions(fake_kube) == []
    fake_kube.trainer.succeed(NS, "tj1", 0)
    assert conditions(fake_kube) == [
        ("Complete", "True", "AllJobsCompleted", "jobset completed successfully")
    ]
    assert stored(fake_kube)["status"]["jobsStatus"][0]["succeeded"] == 1
    assert len(fake_kube.trainer.pods(NS, "tj1")) == 2  # pods are kept


async def test_in_place_restarts_count_toward_backoff_limit_6(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        await create(custom, trainjob(numNodes=2))
        fake_kube.trainer.run(NS, "tj1")
        name = fake_kube.trainer.pod(NS, "tj1", 1)["metadata"]["name"]
        for attempt in range(5):
            fake_kube.append_log(NS, name, "node", f"attempt {attempt}\n")
            fake_kube.trainer.exit(NS, "tj1", 1)
            if attempt:  # the kubelet restarts the first crash at once, later ones after a wait
                fake_kube.trainer.back_off_over(NS, "tj1", 1)
        pod = fake_kube.trainer.pod(NS, "tj1", 1)
        assert pod["metadata"]["name"] == name  # the same pod, restarted in place
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 5
        assert conditions(fake_kube) == []
        previous = await core.read_namespaced_pod_log(name, NS, container="node", previous=True)
        assert previous == "attempt 4\n"
        fake_kube.trainer.exit(NS, "tj1", 1)
        assert conditions(fake_kube) == []  # in back-off: five restarts done
        fake_kube.trainer.back_off_over(NS, "tj1", 1)  # the sixth
    assert conditions(fake_kube) == [(
        "Failed", "True", "FailedJobs",
        "jobset failed due to one or more job failures (first failed job: tj1-node-0)",
    )]  # fmt: skip
    assert stored(fake_kube)["status"]["jobsStatus"][0]["failed"] == 1
    job = fake_kube.get("jobs", NS, "tj1-node-0")
    assert job is not None
    assert [(c["type"], c["reason"]) for c in job["status"]["conditions"]] == [
        ("Failed", "BackoffLimitExceeded")
    ]


async def test_a_failed_pod_is_replaced_with_a_new_name(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        await create(custom, trainjob())
    fake_kube.trainer.run(NS, "tj1")
    first = fake_kube.trainer.pod(NS, "tj1")["metadata"]["name"]
    fake_kube.trainer.fail(NS, "tj1")
    second = fake_kube.trainer.pod(NS, "tj1")["metadata"]["name"]
    assert second != first and second.startswith("tj1-node-0-0-")
    assert conditions(fake_kube) == []


async def test_deadline_fails_the_job_and_deletes_the_jobset(fake_kube: FakeKube) -> None:
    job = trainjob()
    job["spec"]["activeDeadlineSeconds"] = 60
    async with apis() as (custom, _):
        await create(custom, job)
    fake_kube.trainer.run(NS, "tj1")
    fake_kube.trainer.elapse(NS, "tj1", 30)
    assert conditions(fake_kube) == []
    fake_kube.trainer.elapse(NS, "tj1", 31)
    assert conditions(fake_kube) == [
        ("Failed", "True", "DeadlineExceeded", "TrainJob exceeded its active deadline")
    ]
    assert fake_kube.get("jobsets", NS, "tj1") is None
    await until(lambda: not fake_kube.trainer.pods(NS, "tj1"), "the JobSet's pods collected")
    assert fake_kube.get("jobs", NS, "tj1-node-0") is None


async def test_suspend_and_resume_by_patch(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        await create(custom, trainjob(numNodes=2))
        fake_kube.trainer.run(NS, "tj1")
        await patch(custom, "tj1", {"spec": {"suspend": True}})
        assert conditions(fake_kube) == [
            ("Suspended", "True", "Suspended", "TrainJob is suspended")
        ]
        jobset = fake_kube.get("jobsets", NS, "tj1")
        assert jobset is not None and jobset["spec"]["suspend"] is True
        assert fake_kube.trainer.pods(NS, "tj1") == []
        assert stored(fake_kube)["status"]["jobsStatus"][0]["suspended"] == 1
        await patch(custom, "tj1", {"spec": {"suspend": False}})
    assert conditions(fake_kube) == [("Suspended", "False", "Resumed", "TrainJob is resumed")]
    assert len(fake_kube.trainer.pods(NS, "tj1")) == 2
    fake_kube.trainer.run(NS, "tj1")
    fake_kube.trainer.succeed(NS, "tj1")
    assert [c[:3] for c in conditions(fake_kube)] == [
        ("Suspended", "False", "Resumed"),
        ("Complete", "True", "AllJobsCompleted"),
    ]


async def test_runtime_patches_change_only_while_suspended(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        await create(custom, trainjob())
        change = {"spec": {"runtimePatches": [{"manager": MANAGER}]}}
        body = await expect_status(patch(custom, "tj1", change), 403, "Forbidden")
        assert (
            "runtimePatches can only be modified when the TrainJob is suspended"
            in (body["message"])
        )
        await patch(custom, "tj1", {"spec": {"suspend": True}})
        made = await patch(custom, "tj1", change)
    assert made["spec"]["runtimePatches"][0]["manager"] == MANAGER


async def test_deleting_the_trainjob_collects_everything(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        await create(custom, trainjob(numNodes=2))
        await custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "tj1")
    await until(
        lambda: (
            not fake_kube.trainer.pods(NS, "tj1")
            and fake_kube.get("jobsets", NS, "tj1") is None
            and fake_kube.get("services", NS, "tj1") is None
        ),
        "the TrainJob's JobSet, Job, pods and Service collected",
    )


# -- the real Kubeflow SDK (§7) -------------------------------------------------------------


def sdk_client(fake: FakeKube) -> Any:
    import os

    from kubeflow.common.types import KubernetesBackendConfig
    from kubeflow.trainer import TrainerClient

    config = KubernetesBackendConfig(namespace=NS, config_file=os.environ["KUBECONFIG"])
    return TrainerClient(backend_config=config)


def train_in_sdk() -> None:  # pragma: no cover - runs inside the (simulated) pod
    print("hello from the SDK")


async def test_the_kubeflow_sdk_trainer_client_against_the_fake(fake_kube: FakeKube) -> None:
    from kubeflow.trainer import CustomTrainer

    trainer = await asyncio.to_thread(sdk_client, fake_kube)
    assert ("GET", "/api/v1/namespaces/kubeflow-system/configmaps/kubeflow-trainer-public") in {
        (m, p) for m, p, _ in fake_kube.access_log
    }
    runtimes = await asyncio.to_thread(trainer.list_runtimes)
    assert {r.name for r in runtimes} >= {"torch-distributed", "deepspeed-distributed"}
    name = await asyncio.to_thread(
        trainer.train,
        trainer=CustomTrainer(func=train_in_sdk, num_nodes=2, resources_per_node={"cpu": 2}),
    )
    assert fake_kube.pruned == []  # the SDK's manifest is all the CRD declares
    made = stored(fake_kube, name)
    assert made["spec"]["trainer"]["numNodes"] == 2
    job = await asyncio.to_thread(trainer.get_job, name)
    assert job.status == "Created"
    assert sorted(s.name for s in job.steps) == ["node-0", "node-1"]
    assert {s.status for s in job.steps} == {"Pending"}

    fake_kube.trainer.run(NS, name)
    master = fake_kube.trainer.pod(NS, name, 0)["metadata"]["name"]
    fake_kube.append_log(NS, master, "node", "hello from the SDK\nsecond line\n")
    job = await asyncio.to_thread(trainer.get_job, name)
    assert job.status == "Running" and job.num_nodes == 2
    assert {s.status for s in job.steps} == {"Running"}
    assert {s.device for s in job.steps} == {"cpu"} and {s.device_count for s in job.steps} == {"2"}
    listed = await asyncio.to_thread(trainer.list_jobs)
    assert [j.name for j in listed] == [name]
    events = await asyncio.to_thread(trainer.get_job_events, name)
    seen = {(e.involved_object_kind, e.involved_object_name, e.reason) for e in events}
    assert ("Pod", master, "Started") in seen and ("Pod", master, "Scheduled") in seen
    assert not any(kind == "Job" for kind, _, _ in seen)  # the SDK never names the Job
    logs = await asyncio.to_thread(lambda: list(trainer.get_job_logs(name)))
    assert logs == ["hello from the SDK", "second line"]

    fake_kube.trainer.succeed(NS, name)
    job = await asyncio.to_thread(trainer.get_job, name)
    assert job.status == "Complete"
    followed = await asyncio.to_thread(lambda: list(trainer.get_job_logs(name, follow=True)))
    assert [line.rstrip("\n") for line in followed if line.strip()] == [
        "hello from the SDK",
        "second line",
    ]
    assert any(q.get("follow") == "True" for m, p, q in fake_kube.access_log if p.endswith("/log"))
    await asyncio.to_thread(trainer.delete_job, name)
    assert fake_kube.get("trainjobs", NS, name) is None


async def test_the_sdk_sees_a_job_it_did_not_submit(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        await create(custom, trainjob("ours", numNodes=1))
    fake_kube.trainer.run(NS, "ours")
    trainer = await asyncio.to_thread(sdk_client, fake_kube)
    (job,) = await asyncio.to_thread(trainer.list_jobs)
    assert job.name == "ours" and job.status == "Running"
    assert [s.name for s in job.steps] == ["node-0"]


async def test_raw_http_watch_sees_trainjob_status_changes(fake_kube: FakeKube) -> None:
    import aiohttp

    async with apis() as (custom, _):
        made = await create(custom, trainjob())
    rv = made["metadata"]["resourceVersion"]
    fake_kube.trainer.run(NS, "tj1")
    fake_kube.trainer.succeed(NS, "tj1")
    url = (
        f"{fake_kube.url}/apis/{GROUP}/{VERSION}/namespaces/{NS}/trainjobs"
        f"?watch=true&resourceVersion={rv}&timeoutSeconds=1"
    )
    async with aiohttp.ClientSession(headers=AUTH) as session:
        text = await (await session.get(url)).text()
    events = [json.loads(line) for line in text.splitlines()]
    assert {e["type"] for e in events} == {"MODIFIED"}
    last = events[-1]["object"]["status"]["conditions"][-1]
    assert last["type"] == "Complete"


async def test_patches_merge_onto_a_namespaced_runtime(fake_kube: FakeKube) -> None:
    """Mounts merge by mountPath, nodeSelector per key, tolerations replace (§1)."""
    pod_spec = {
        "nodeSelector": {"zone": "x"},
        "tolerations": [{"key": "a", "operator": "Exists"}],
        "volumes": [{"name": "cache", "emptyDir": {}}],
        "containers": [{"name": "node", "image": "img:1",
                        "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]}],
    }  # fmt: skip
    runtime = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "TrainingRuntime",
        "metadata": {"name": "custom", "labels": {"trainer.kubeflow.org/framework": "torch"}},
        "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {
            "replicatedJobs": [{"name": "node", "template": {
                "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                "spec": {"template": {"spec": pod_spec}}}}]}}},
    }  # fmt: skip
    job = trainjob()
    job["spec"]["runtimeRef"] = {"name": "custom", "kind": "TrainingRuntime"}
    with_patch(job, {
        "nodeSelector": {"gpu": "a100"},
        "tolerations": [{"key": "b", "operator": "Exists"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}}],
        "containers": [{"name": "node", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
    })  # fmt: skip
    async with apis() as (custom, _):
        await custom.create_namespaced_custom_object(
            GROUP, VERSION, NS, "trainingruntimes", runtime
        )
        await create(custom, job)
    spec = fake_kube.trainer.pod(NS, "tj1")["spec"]
    assert spec["nodeSelector"] == {"zone": "x", "gpu": "a100"}
    assert spec["tolerations"] == [{"key": "b", "operator": "Exists"}]
    assert [v["name"] for v in spec["volumes"]] == ["cache", "data"]
    (node,) = spec["containers"]
    assert node["image"] == "img:1"
    assert [m["mountPath"] for m in node["volumeMounts"]] == ["/cache", "/data"]


async def test_the_sdk_never_says_running_after_a_resume(fake_kube: FakeKube) -> None:
    """§7: a non-empty ``conditions`` keeps the SDK's state at Created."""
    async with apis() as (custom, _):
        await create(custom, trainjob("ours"))
        await patch(custom, "ours", {"spec": {"suspend": True}})
        await patch(custom, "ours", {"spec": {"suspend": False}})
    fake_kube.trainer.run(NS, "ours")
    trainer = await asyncio.to_thread(sdk_client, fake_kube)
    job = await asyncio.to_thread(trainer.get_job, "ours")
    assert [s.status for s in job.steps] == ["Running"]
    assert job.status == "Created"


async def test_a_deleted_runtime_blocks_updates_not_the_running_job(fake_kube: FakeKube) -> None:
    """Pitfall 9: no runtime finalizers; the job runs on, webhook-checked updates fail."""
    async with apis() as (custom, _):
        await create(custom, trainjob())
        fake_kube.delete("clustertrainingruntimes", "", "torch-distributed")
        body = await expect_status(
            patch(custom, "tj1", {"spec": {"suspend": True}}), 403, "Forbidden"
        )
        assert "must be created before the TrainJob is created" in body["message"]
    fake_kube.trainer.run(NS, "tj1")
    fake_kube.trainer.succeed(NS, "tj1")
    assert [c[0] for c in conditions(fake_kube)] == ["Complete"]
