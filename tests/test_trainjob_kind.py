"""The TrainJob kind (Kubeflow Trainer v2.3): manifests valid against the published models
and the real CRD, a lossless round trip, the rules admission and JobSet apply, and state
read from conditions and pods as ``notes/trainjob.md`` describes them."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_pytorchjob.job import JobSpec, JobSpecInvalid
from jupyter_pytorchjob.job.failure import waiting_for_peers
from jupyter_pytorchjob.job.fields import DEFAULT_IMAGE
from jupyter_pytorchjob.job.progress import chief_replica
from jupyter_pytorchjob.job.status import JobState
from jupyter_pytorchjob.kinds import kind_named
from jupyter_pytorchjob.kinds.pods import epoch
from jupyter_pytorchjob.kinds.trainjob import TRAINJOB
from jupyter_pytorchjob.kinds.trainjob.environment import nproc_per_node
from jupyter_pytorchjob.kinds.trainjob.rules import max_name_length
from jupyter_pytorchjob.kinds.trainjob.runtimes import available_runtimes, runtime_of

from . import crd_trainjob
from .crd import CRDS_DIR, require_crds
from .strategies import trainjob_bodies

UNSUPPORTED = (
    "restartPolicy",
    "cleanPodPolicy",
    "backoffLimit",
    "ttl",
    "workdir",
    "priorityClassName",
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trainjob_bodies())
def test_every_form_job_is_a_valid_trainjob_and_comes_back(body: dict[str, Any]) -> None:
    spec = JobSpec.from_wire(body)
    manifest = TRAINJOB.build(spec, namespace="team-a")
    assert crd_trainjob.model_errors(manifest) == []
    assert TRAINJOB.check(manifest) == []
    back = TRAINJOB.parse(manifest, gpu_resource=spec.gpu_resource)  # 0 GPUs name none
    assert back.to_wire() == spec.to_wire()


def test_the_manifest_against_the_real_crd() -> None:
    spec = JobSpec.from_wire(
        {
            "kind": "TrainJob",
            "name": "demo",
            "image": "img",
            "script": "print(1)",
            "nodes": 2,
            "gpus": 1,
            "cpu": "4",
            "memory": "16Gi",
            "pvc": [{"claim": "team-pvc", "mountPath": "/workspace/data"}],
            "nodeSelector": {"gpu-type": "a100"},
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
            ],
            "deadline": 3600,
            "logdir": "/workspace/data/runs",
        }
    )
    manifest = TRAINJOB.build(spec)
    assert crd_trainjob.schema_errors(manifest) == []
    trainer = manifest["spec"]["trainer"]
    assert trainer["numNodes"] == 2 and "numProcPerNode" not in trainer  # the runtime's rule
    assert trainer["args"][0] == "torchrun"  # the runtime only injects PET_* for torchrun
    assert {"name": "PYTHONUNBUFFERED", "value": "1"} in trainer["env"]
    (patch,) = manifest["spec"]["runtimePatches"]
    assert patch["manager"] == "pytorchjob.jupyter.org/ptjob"
    (rjob,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    pod = rjob["template"]["spec"]["template"]["spec"]
    assert rjob["name"] == "node" and pod["containers"][0]["name"] == "node"
    mounts = {m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
    assert mounts == {"/workspace/data", "/dev/shm"}


# A TrainJob as other tools write them: the SDK's train() (runtimeRef without apiGroup,
# requests = limits), an initializer, another manager's patch, a namespaced runtime.
FOREIGN: dict[str, Any] = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {
        "name": "a1b2c3d4e5f6",
        "namespace": "team-a",
        "uid": "x",
        "resourceVersion": "7",
        "creationTimestamp": "2026-11-23T10:00:00Z",
    },
    "spec": {
        "runtimeRef": {"name": "my-runtime", "kind": "TrainingRuntime"},
        "trainer": {
            "image": "ghcr.io/me/train:1",
            "command": ["bash", "-c", "torchrun train.py"],
            "numNodes": 2,
            "resourcesPerNode": {
                "requests": {"cpu": "2", "nvidia.com/gpu": "1"},
                "limits": {"cpu": "2", "nvidia.com/gpu": "1"},
            },
            "env": [
                {"name": "LR", "value": "0.1"},
                {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "t"}}},
            ],
        },
        "initializer": {"dataset": {"storageUri": "hf://tatsu-lab/alpaca"}},
        "suspend": True,
        "runtimePatches": [
            {
                "manager": "kueue.x-k8s.io/manager",
                "trainingRuntimeSpec": {
                    "template": {
                        "spec": {
                            "replicatedJobs": [
                                {
                                    "name": "node",
                                    "template": {
                                        "spec": {"template": {"spec": {"nodeSelector": {"x": "y"}}}}
                                    },
                                }
                            ]
                        }
                    }
                },
            }
        ],
    },
    "status": {"conditions": []},
}


@pytest.mark.parametrize(
    ("wire", "value", "key", "in_pod"),
    [
        ("serviceAccount", "s3-reader", "serviceAccountName", "s3-reader"),
        ("imagePullSecrets", ["regcred"], "imagePullSecrets", [{"name": "regcred"}]),
    ],
)
def test_a_pod_field_goes_into_the_runtime_patch_and_back(
    wire: str, value: Any, key: str, in_pod: Any
) -> None:
    """v2.3's PodSpecPatch takes serviceAccountName and imagePullSecrets
    (notes/trainjob.md): the pods of the node replicated job get them."""
    spec = JobSpec.from_wire({"kind": "TrainJob", "name": "pf", "command": ["x"], wire: value})
    manifest = TRAINJOB.build(spec)
    assert crd_trainjob.schema_errors(manifest) == []  # the CRD keeps it
    assert crd_trainjob.model_errors(manifest) == []
    (patch,) = manifest["spec"]["runtimePatches"]
    (rjob,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert rjob["template"]["spec"]["template"]["spec"][key] == in_pod
    back = TRAINJOB.parse(manifest)
    assert back.to_wire()[wire] == value and back.extras == {}


def test_a_foreign_trainjob_reads_back_and_rebuilds_without_loss() -> None:
    spec = TRAINJOB.parse(FOREIGN)
    assert (spec.nodes, spec.gpus, spec.cpu, spec.image) == (2, 1, "2", "ghcr.io/me/train:1")
    assert spec.env == {"LR": "0.1"}
    rebuilt = TRAINJOB.build(spec)
    expected = copy.deepcopy(FOREIGN)
    del expected["status"]
    expected["metadata"] = {"name": "a1b2c3d4e5f6"}
    # What the builder writes out that was unset: the apiGroup default, the process
    # count, the unbuffered output.
    assert rebuilt["spec"]["runtimeRef"] == {
        "name": "my-runtime",
        "kind": "TrainingRuntime",
        "apiGroup": "trainer.kubeflow.org",
    }
    assert rebuilt["spec"]["initializer"] == expected["spec"]["initializer"]
    assert rebuilt["spec"]["suspend"] is True
    assert rebuilt["spec"]["runtimePatches"] == expected["spec"]["runtimePatches"]
    assert expected["spec"]["trainer"]["env"][1] in rebuilt["spec"]["trainer"]["env"]
    assert (
        rebuilt["spec"]["trainer"]["resourcesPerNode"]
        == expected["spec"]["trainer"]["resourcesPerNode"]
    )
    # Built again from its own reading: the same manifest (a fixed point).
    assert TRAINJOB.build(TRAINJOB.parse(rebuilt)) == rebuilt


def test_the_name_limit_is_jobsets_not_the_crds() -> None:
    assert max_name_length(2) == 48  # <name>-node-0-1-xxxxx fits 63
    assert max_name_length(11) == 47
    body = {"kind": "TrainJob", "name": "a" * 49, "image": "img", "command": ["python"], "nodes": 2}
    with pytest.raises(JobSpecInvalid) as info:
        TRAINJOB.build(JobSpec.from_wire(body))
    assert info.value.errors[0].field == "name" and "48" in info.value.errors[0].message
    with_initializer = copy.deepcopy(FOREIGN)
    with_initializer["metadata"]["name"] = "b" * 34
    problems = TRAINJOB.check(with_initializer)
    assert [p.field for p in problems] == ["name"] and "33" in problems[0].message


def test_admission_rules_name_their_field() -> None:
    manifest = copy.deepcopy(FOREIGN)
    manifest["spec"]["trainer"]["env"].append({"name": "PET_NNODES", "value": "4"})
    manifest["spec"]["trainer"]["numProcPerNode"] = 0
    manifest["spec"]["runtimePatches"][0]["manager"] = "my-tool"
    fields = {p.field for p in TRAINJOB.check(manifest)}
    assert fields == {
        "spec.trainer.env[2].name",
        "spec.trainer.numProcPerNode",
        "spec.runtimePatches[0].manager",
    }


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("restartPolicy", "Never"),
        ("cleanPodPolicy", "All"),
        ("backoffLimit", 0),
        ("ttl", 60),
        ("workdir", "/w"),
        ("master", False),
        ("priorityClassName", "high"),
    ],
)
def test_what_a_trainjob_cannot_express_is_refused_by_name(field: str, value: Any) -> None:
    body = {"kind": "TrainJob", "name": "demo", "image": "img", "command": ["python"], "nodes": 2}
    body[field] = value
    with pytest.raises(JobSpecInvalid) as info:
        TRAINJOB.build(JobSpec.from_wire(body))
    assert [e.field for e in info.value.errors] == [field]


# -- state ------------------------------------------------------------------------------


def pod(
    index: int, phase: str, *, job: str = "demo", rjob: str = "node", **status: Any
) -> dict[str, Any]:
    """A JobSet pod of the ``rjob`` replicated job, labelled as notes/trainjob.md §4 says."""
    return {
        "metadata": {
            "name": f"{job}-{rjob}-0-{index}-abcde",
            "creationTimestamp": "2026-11-23T10:00:00Z",
            "labels": {
                "jobset.sigs.k8s.io/jobset-name": job,
                "jobset.sigs.k8s.io/replicatedjob-name": rjob,
                "batch.kubernetes.io/job-completion-index": str(index),
            },
        },
        "status": {"phase": phase, **status},
    }


def trainjob(
    *conditions: tuple[str, str, str], created: str = "2026-11-23T10:00:00Z"
) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "demo", "namespace": "team-a", "creationTimestamp": created},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2}},
        "status": {
            "conditions": [
                {"type": t, "status": s, "reason": r, "message": "", "lastTransitionTime": created}
                for t, s, r in conditions
            ]
        },
    }


def test_states_come_from_conditions_then_pods() -> None:
    running = [pod(0, "Running", startTime="2026-11-23T10:00:05Z"), pod(1, "Pending")]
    assert TRAINJOB.job_info(trainjob(), []).state is JobState.SUBMITTED
    assert TRAINJOB.job_info(trainjob(), [pod(0, "Pending")]).state is JobState.CREATED
    info = TRAINJOB.job_info(trainjob(), running)
    assert info.state is JobState.RUNNING
    assert [(r.name, r.phase) for r in info.replicas] == [
        ("node-0", "Running"),
        ("node-1", "Pending"),
    ]
    assert info.started is not None and info.nodes == 2
    done = TRAINJOB.job_info(trainjob(("Complete", "True", "AllJobsCompleted")), running)
    assert done.state is JobState.SUCCEEDED and done.finished is not None
    suspended = TRAINJOB.job_info(trainjob(("Suspended", "True", "Suspended")), [])
    assert suspended.state is JobState.SUSPENDED
    assert {r.reason for r in suspended.replicas} == {"Suspended"}
    resumed = trainjob(("Suspended", "False", "Resumed"))
    assert TRAINJOB.job_info(resumed, running).state is JobState.RUNNING


def test_a_deadline_leaves_its_nodes_deleted_not_pending() -> None:
    info = TRAINJOB.job_info(trainjob(("Failed", "True", "DeadlineExceeded")), [])
    assert info.state is JobState.FAILED
    assert {(r.phase, r.reason) for r in info.replicas} == {("Deleted", "DeadlineExceeded")}


def test_a_job_without_pods_or_status_says_why_after_a_while() -> None:
    old = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 120))
    info = TRAINJOB.job_info(trainjob(created=old), [])
    assert info.state is JobState.SUBMITTED
    assert info.message is not None and "TrainJobResourcesCreationFailed" in str(info.message)


def test_pods_are_found_by_jobsets_labels() -> None:
    """The node and initializer pods, as the Kubeflow SDK's get_job selects them
    (kubeflow 0.5.0 trainer/backends/kubernetes/backend.py, notes/trainjob.md §7)."""
    assert TRAINJOB.pod_selector("demo") == (
        "jobset.sigs.k8s.io/jobset-name=demo,jobset.sigs.k8s.io/replicatedjob-name in "
        "(dataset-initializer,model-initializer,node)"
    )
    assert TRAINJOB.job_of_pod(pod(1, "Running")) == "demo"
    assert TRAINJOB.replica_of_pod(pod(1, "Running")) == "node-1"
    assert TRAINJOB.container_of_pod(pod(1, "Running")) == "node"
    model = pod(0, "Running", rjob="model-initializer")
    assert TRAINJOB.replica_of_pod(model) == "model-initializer-0"
    assert TRAINJOB.container_of_pod(model) == "model-initializer"
    assert TRAINJOB.suspend_patch(True) == {"spec": {"suspend": True}}


# -- runtimes ---------------------------------------------------------------------------


def shipped_runtime(file: str) -> dict[str, Any]:
    """A runtime as Kubeflow Trainer v2.3.0 ships it (../shared/runtimes)."""
    require_crds()
    path = CRDS_DIR.parent / "runtimes" / file
    return yaml.safe_load(path.read_text())  # type: ignore[no-any-return]


def test_the_shipped_runtimes_as_the_picker_shows_them() -> None:
    torch = runtime_of(shipped_runtime("torch_distributed.yaml"))
    assert (torch.name, torch.kind, torch.framework, torch.policy) == (
        "torch-distributed",
        "ClusterTrainingRuntime",
        "torch",
        "torch",
    )
    assert torch.nodes == 1 and torch.image == "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
    assert torch.replicated_jobs == ["node"] and torch.initializers == []
    assert torch.usable is None
    deepspeed = runtime_of(shipped_runtime("deepspeed_distributed.yaml"))
    assert deepspeed.policy == "mpi" and "launcher" in deepspeed.replicated_jobs
    assert deepspeed.usable is not None and "mpi" in str(deepspeed.usable)
    # The form's picker says why in the user's language: the code beside the English.
    wire = deepspeed.to_wire()
    assert (wire["unusable"], wire["unusableCode"], wire["unusableParams"]) == (
        "runs mpi jobs, not torch (torchrun) ones",
        "runtime_policy",
        {"policy": "mpi"},
    )
    assert (torch.to_wire()["unusable"], torch.to_wire()["unusableCode"]) == (None, None)


def test_a_namespaced_runtime_hides_the_cluster_one_of_its_name() -> None:
    cluster = shipped_runtime("torch_distributed.yaml")
    mine = copy.deepcopy(cluster)
    mine["kind"] = "TrainingRuntime"
    mine["metadata"]["labels"]["trainer.kubeflow.org/support"] = "deprecated"
    mine["spec"]["mlPolicy"]["numNodes"] = 4
    (only,) = available_runtimes([cluster], [mine])
    assert (only.kind, only.nodes, only.deprecated) == ("TrainingRuntime", 4, True)
    assert only.to_wire()["replicatedJobs"] == ["node"]


# -- what the user did not set, the runtime decides -------------------------------------

RUNTIME_FILES = (
    "torch_distributed.yaml",
    "deepspeed_distributed.yaml",
    "more/torch_distributed_with_cache.yaml",
    "more/llama3_2_1B.yaml",
    "more/llama3_2_3B.yaml",
    "more/qwen2_5_1.5B.yaml",
    "more/jax_distributed.yaml",
    "more/mlx_distributed.yaml",
    "more/xgboost_distributed.yaml",
)


def test_an_unset_image_and_process_count_stay_unset() -> None:
    # CLI, magic and submit() send no image; the handlers pass the notebook's as a default.
    body = {"kind": "TrainJob", "name": "tune", "runtime": "my-runtime", "command": ["python"]}
    for defaults in ({}, {"image": "notebook:1"}):
        spec = JobSpec.from_wire({**body, "gpus": 4}, defaults=defaults)
        assert (spec.image, spec.nproc_per_node) == (None, None)
        trainer = TRAINJOB.build(spec)["spec"]["trainer"]
        assert "image" not in trainer and "numProcPerNode" not in trainer
    assert JobSpec.from_wire({**body, "image": ""}).image is None  # the form's empty field
    # A PyTorchJob still writes every value out.
    v1 = JobSpec.from_wire({"name": "v1", "command": ["python"], "gpus": 4})
    assert (v1.image, v1.nproc_per_node) == (DEFAULT_IMAGE, 4)


def test_an_sdk_job_on_four_gpus_clones_without_pinning_anything() -> None:
    manifest = copy.deepcopy(FOREIGN)
    manifest["spec"]["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] = "4"
    manifest["spec"]["trainer"]["resourcesPerNode"]["requests"]["nvidia.com/gpu"] = "4"
    del manifest["spec"]["trainer"]["image"]
    spec = TRAINJOB.parse(manifest)
    assert (spec.image, spec.nproc_per_node) == (None, None)
    # Clone & edit: the job body back through from_wire, as the form sends it.
    rebuilt = TRAINJOB.build(JobSpec.from_wire(spec.to_wire()))
    assert "image" not in rebuilt["spec"]["trainer"]
    assert "numProcPerNode" not in rebuilt["spec"]["trainer"]
    assert nproc_per_node(rebuilt["spec"]["trainer"], {}) == "auto"


def node_template(runtime: dict[str, Any]) -> dict[str, Any]:
    """The runtime's ``node`` container and ``mlPolicy.numNodes``."""
    nodes = runtime["spec"].get("mlPolicy", {}).get("numNodes")
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        for container in job["template"]["spec"]["template"]["spec"]["containers"]:
            if container["name"] == "node":
                return {"container": container, "nodes": nodes}
    return {"container": {}, "nodes": nodes}


def what_runs(manifest: dict[str, Any], runtime: dict[str, Any]) -> dict[str, Any]:
    """What the ``node`` container runs, resolved as Trainer v2.3.0 does: the trainer's
    image/command/args over the runtime's (``plugins/jobset/builder.go`` Trainer), the
    node count (``torch.go`` EnforceMLPolicy) and ``PET_NPROC_PER_NODE`` by the torch
    plugin's rule; the env without PYTHONUNBUFFERED (our builder's output buffering)."""
    trainer = manifest["spec"].get("trainer") or {}
    node = node_template(runtime)
    container = node["container"]
    resources = copy.deepcopy(container.get("resources") or {})
    for part, values in (trainer.get("resourcesPerNode") or {}).items():
        resources.setdefault(part, {}).update(values)
    env = [e for e in trainer.get("env") or [] if e["name"] != "PYTHONUNBUFFERED"]
    return {
        "runtime": manifest["spec"]["runtimeRef"],
        "image": trainer.get("image", container.get("image")),
        "command": trainer.get("command", container.get("command")),
        "args": trainer.get("args", container.get("args")),
        "nodes": trainer.get("numNodes", node["nodes"]),
        "nproc": nproc_per_node(trainer, resources),
        "resources": trainer.get("resourcesPerNode"),
        "env": env,
        "patches": manifest["spec"].get("runtimePatches"),
        "initializer": manifest["spec"].get("initializer"),
    }


@st.composite
def runtime_trainjobs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A TrainJob on one of the shipped runtimes, its image and process count each set or
    left to the runtime, as another tool (the SDK, kubectl) may write it."""
    runtime = shipped_runtime(draw(st.sampled_from(RUNTIME_FILES)))
    manifest = TRAINJOB.build(JobSpec.from_wire(draw(trainjob_bodies())))
    manifest["spec"]["runtimeRef"]["name"] = runtime["metadata"]["name"]
    trainer = manifest["spec"]["trainer"]
    for key in ("image", "numProcPerNode", "numNodes"):
        if draw(st.booleans()):
            trainer.pop(key, None)
    return manifest, runtime


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runtime_trainjobs())
def test_parse_then_build_changes_nothing_that_runs(
    job: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    manifest, runtime = job
    spec = TRAINJOB.parse(manifest)
    rebuilt = TRAINJOB.build(spec)
    assert what_runs(rebuilt, runtime) == what_runs(manifest, runtime)
    # ... and through the job body, as the form's Clone & edit and Apply YAML send it.
    again = TRAINJOB.build(JobSpec.from_wire(spec.to_wire(), defaults={"image": "nb:1"}))
    assert what_runs(again, runtime) == what_runs(manifest, runtime)


def test_limits_the_kubeflow_sdk_cannot_read_are_never_written() -> None:
    """kubeflow 0.5.0 get_container_devices raises on pod limits without cpu or a device key
    it knows (trainer/backends/kubernetes/utils.py), for every job list_jobs reads."""
    body = {"kind": "TrainJob", "name": "r", "command": ["python"]}
    memory = TRAINJOB.build(JobSpec.from_wire({**body, "memory": "8Gi"}))
    assert memory["spec"]["trainer"]["resourcesPerNode"] == {"requests": {"memory": "8Gi"}}
    amd = {**body, "gpus": 1, "gpuResource": "amd.com/gpu"}
    with pytest.raises(JobSpecInvalid) as info:
        TRAINJOB.build(JobSpec.from_wire(amd))
    assert [e.field for e in info.value.errors] == ["cpu"]
    assert "amd.com/gpu" in info.value.errors[0].message
    limits = TRAINJOB.build(JobSpec.from_wire({**amd, "cpu": "4"}))["spec"]["trainer"]
    assert limits["resourcesPerNode"]["limits"] == {"cpu": "4", "amd.com/gpu": 1}
    edited = copy.deepcopy(FOREIGN)  # Apply YAML: the same rule on the manifest
    edited["spec"]["trainer"]["resourcesPerNode"] = {"limits": {"memory": "8Gi"}}
    assert [p.field for p in TRAINJOB.check(edited)] == ["spec.trainer.resourcesPerNode.limits"]


def test_the_name_limit_counts_the_runtimes_initializer_jobs() -> None:
    """JobSet's webhook checks the pod name of every replicated job of the runtime (jobset
    v0.12.0 pkg/webhooks/jobset_webhook.go ValidateCreate): on the torchtune runtimes that
    is dataset-initializer's, even when the TrainJob sets no initializer."""
    tune = runtime_of(shipped_runtime("more/llama3_2_1B.yaml"))
    manifest = copy.deepcopy(FOREIGN)
    del manifest["spec"]["initializer"]
    manifest["metadata"]["name"] = "t" * 34
    assert TRAINJOB.check(manifest) == []  # 34 fits the node job of 2 nodes
    (problem,) = TRAINJOB.runtime_problems(manifest, tune)
    assert problem.field == "name" and "at most 33" in problem.message
    assert "-dataset-initializer-0-0-xxxxx" in problem.message
    manifest["metadata"]["name"] = "t" * 33
    assert TRAINJOB.runtime_problems(manifest, tune) == []
    torch = runtime_of(shipped_runtime("torch_distributed.yaml"))
    manifest["metadata"]["name"] = "t" * 48
    assert TRAINJOB.runtime_problems(manifest, torch) == []


# -- initializers (spec.initializer, Trainer v2.3.0 trainjob_types.go) --------------------


def test_dataset_and_model_are_the_initializers_storage_uris() -> None:
    """``--dataset``/``--model`` become ``initializer.dataset|model.storageUri`` (the CRD's
    own rule checks them: trainer.kubeflow.org_trainjobs.yaml at v2.3.0); their ``env`` and
    ``secretRef`` ride along untouched."""
    require_crds(CRDS_DIR / "trainer.kubeflow.org_trainjobs.yaml")
    body = {
        "kind": "TrainJob",
        "name": "tune",
        "runtime": "torchtune-llama3.2-1b",
        "command": ["tune", "run"],
        "dataset": "hf://tatsu-lab/alpaca",
        "model": "hf://meta-llama/Llama-3.2-1B-Instruct",
    }
    manifest = TRAINJOB.build(JobSpec.from_wire(body))
    assert manifest["spec"]["initializer"] == {
        "dataset": {"storageUri": "hf://tatsu-lab/alpaca"},
        "model": {"storageUri": "hf://meta-llama/Llama-3.2-1B-Instruct"},
    }
    assert crd_trainjob.schema_errors(manifest) == []
    manifest["spec"]["initializer"]["model"]["secretRef"] = {"name": "hf-token"}
    manifest["spec"]["initializer"]["model"]["env"] = [{"name": "ACCESS_TOKEN", "value": "x"}]
    back = TRAINJOB.parse(manifest)
    assert (back.dataset, back.model) == (body["dataset"], body["model"])
    assert (back.model_secret, back.dataset_secret) == ("hf-token", None)  # --model-secret
    assert TRAINJOB.build(back) == manifest
    secret = TRAINJOB.build(JobSpec.from_wire({**body, "datasetSecret": "s3-creds"}))
    assert secret["spec"]["initializer"]["dataset"]["secretRef"] == {"name": "s3-creds"}
    assert crd_trainjob.schema_errors(secret) == []
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire({**body, "modelSecret": "Not_A_Name"})
    assert [e.field for e in info.value.errors] == ["modelSecret"]


@pytest.mark.parametrize("uri", ["alpaca", "hf:/x", "3s://bucket/x", "s3://" + "b" * 2048])
def test_a_storage_uri_the_crd_refuses_is_named(uri: str) -> None:
    body = {"kind": "TrainJob", "name": "t", "command": ["x"], "dataset": uri, "model": uri}
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire(body)
    assert [e.field for e in info.value.errors] == ["dataset", "model"]
    assert "scheme://" in info.value.errors[0].message


def test_a_pytorchjob_has_no_initializers() -> None:
    for field in ("dataset", "model", "datasetSecret", "modelSecret"):
        value = "hf://a/b" if field in ("dataset", "model") else "creds"
        spec = JobSpec.from_wire({"name": "p", "command": ["x"], field: value})
        with pytest.raises(JobSpecInvalid) as info:
            kind_named("PyTorchJob").build(spec)
        assert [e.field for e in info.value.errors] == [field]


def test_a_dataset_counts_its_initializer_in_the_name_limit() -> None:
    """A job that asks for a dataset runs a dataset-initializer job, whose pod name
    ``<name>-dataset-initializer-0-0-xxxxx`` must fit 63 (jobset_webhook.go)."""
    body = {"kind": "TrainJob", "name": "d" * 34, "command": ["x"]}
    JobSpec.from_wire(body)
    TRAINJOB.build(JobSpec.from_wire(body))
    with pytest.raises(JobSpecInvalid) as info:
        TRAINJOB.build(JobSpec.from_wire({**body, "dataset": "hf://a/b"}))
    assert [e.field for e in info.value.errors] == ["name"]
    assert "at most 33" in info.value.errors[0].message


def test_initializer_pods_are_replicas_before_the_nodes() -> None:
    """A dataset initializer the job asks for shows before the nodes, Pending until its
    pod comes; a running initializer leaves the job Created (no node runs yet: the
    runtime's node job dependsOn it), and its failure names it."""
    job = trainjob()
    job["status"] = {}
    job["spec"]["initializer"] = {"dataset": {"storageUri": "hf://tatsu-lab/alpaca"}}
    info = TRAINJOB.job_info(job, [])
    assert [r.name for r in info.replicas] == ["dataset-initializer-0", "node-0", "node-1"]
    init = pod(0, "Running", rjob="dataset-initializer")
    model = pod(0, "Pending", rjob="model-initializer")  # the runtime's, not asked for
    info = TRAINJOB.job_info(job, [model, init])
    assert [(r.name, r.phase) for r in info.replicas] == [
        ("dataset-initializer-0", "Running"),
        ("model-initializer-0", "Pending"),
        ("node-0", "Pending"),
        ("node-1", "Pending"),
    ]
    assert info.state is JobState.CREATED
    failed = pod(
        0,
        "Running",
        rjob="dataset-initializer",
        containerStatuses=[
            {
                "name": "dataset-initializer",
                "restartCount": 1,
                "state": {"terminated": {"exitCode": 1, "reason": "Error"}},
            }
        ],
    )
    run = TRAINJOB.failed_run(job, [failed, pod(0, "Pending")])
    assert (run.failure.replica, run.failure.exit_code) == ("dataset-initializer-0", 1)
    # Progress is rank 0's: node-0, whatever sorts first.
    assert chief_replica(["dataset-initializer-0", "model-initializer-0", "node-0"]) == "node-0"


def test_the_initializers_are_no_nodes_peers() -> None:
    """A node restarted after the other node ended waits for it alone; the initializers,
    done before any node started, are not among the peers it waits for."""

    def container(name: str, restarts: int, **state: Any) -> dict[str, Any]:
        return {"containerStatuses": [{"name": name, "restartCount": restarts, "state": state}]}

    ended = {"terminated": {"exitCode": 0, "finishedAt": "2026-11-23T10:01:00Z"}}
    pods = [
        pod(
            0,
            "Succeeded",
            rjob="dataset-initializer",
            **container("dataset-initializer", 0, **ended),
        ),
        pod(0, "Running", **container("node", 1, running={"startedAt": "2026-11-23T10:02:00Z"})),
        pod(1, "Succeeded", **container("node", 0, **ended)),
    ]
    runs = TRAINJOB.node_runs(pods)
    assert [(r.name, r.phase, r.restarted) for r in runs] == [
        ("node-0", "Running", True),
        ("node-1", "Succeeded", False),
    ]
    waiting = waiting_for_peers(runs, now=epoch("2026-11-23T10:03:00Z") or 0.0, grace=60)
    assert waiting is not None
    assert str(waiting.message).startswith(
        "node-0 restarted and waits for its peers, which have all exited (node-1 Succeeded)"
    )


# -- torchtune (BuiltinTrainer) runtimes -----------------------------------------------


def test_tune_run_is_left_for_the_runtime_to_complete() -> None:
    """The torch plugin completes a command that is exactly ``tune run`` (torch.go:175-200
    at v2.3.0), so the overrides after it go as args; a runtime-set path among them is
    refused (torchtune.go:87-101), and so is the archive wrapper around the command."""
    body = {
        "kind": "TrainJob",
        "name": "tune",
        "runtime": "torchtune-llama3.2-1b",
        "command": ["tune", "run", "epochs=1"],
        "args": ["batch_size=2"],
    }
    manifest = TRAINJOB.build(JobSpec.from_wire(body))
    trainer = manifest["spec"]["trainer"]
    assert trainer["command"] == ["tune", "run"]
    assert trainer["args"] == ["epochs=1", "batch_size=2"]
    assert TRAINJOB.build(TRAINJOB.parse(manifest)) == manifest
    with pytest.raises(JobSpecInvalid) as info:
        TRAINJOB.build(JobSpec.from_wire({**body, "args": ["output_dir=/mine"]}))
    assert [e.field for e in info.value.errors] == ["spec.trainer.args[1]"]
    archived = {**body, "logdir": "/ws/runs", "pvc": [{"claim": "c", "mountPath": "/ws"}]}
    with pytest.raises(JobSpecInvalid) as info:
        TRAINJOB.build(JobSpec.from_wire(archived))
    assert [e.field for e in info.value.errors] == ["logArchive"]


def test_a_named_runtime_may_run_its_own_command() -> None:
    """A TrainJob on a named runtime needs no command: the runtime's runs as written
    (a torchtune runtime's full ``tune run ...``); torch-distributed has none."""
    spec = JobSpec.from_wire({"kind": "TrainJob", "name": "t", "runtime": "torchtune-llama3.2-1b"})
    trainer = TRAINJOB.build(spec)["spec"]["trainer"]
    assert "command" not in trainer and "args" not in trainer
    with pytest.raises(JobSpecInvalid) as info:
        JobSpec.from_wire({"kind": "TrainJob", "name": "t"})
    assert [e.field for e in info.value.errors] == ["command"]


def test_the_more_runtimes_as_the_picker_shows_them() -> None:
    """v2.3.0's other runtimes (../shared/runtimes/more): the torchtune ones run torch with
    both initializers and their own ``tune run`` command (what runs with none given, the
    form's placeholder); the data cache has a dataset initializer; other frameworks are
    listed as unusable by a torchrun job."""
    tune = runtime_of(shipped_runtime("more/llama3_2_1B.yaml"))
    assert (tune.framework, tune.policy, tune.usable) == ("torchtune", "torch", None)
    assert tune.initializers == ["dataset-initializer", "model-initializer"]
    assert tune.command[:2] == ["tune", "run"] and "llama3_2/1B_full" in tune.command
    assert tune.to_wire()["command"] == tune.command
    cache = runtime_of(shipped_runtime("more/torch_distributed_with_cache.yaml"))
    assert cache.initializers == ["dataset-initializer"] and cache.usable is None
    for file in ("jax_distributed.yaml", "mlx_distributed.yaml", "xgboost_distributed.yaml"):
        assert runtime_of(shipped_runtime(f"more/{file}")).usable is not None, file
