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

from jupyter_pytorchjob.job import JobSpec, JobSpecInvalid
from jupyter_pytorchjob.job.status import JobState
from jupyter_pytorchjob.kinds.trainjob import TRAINJOB
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
    assert trainer["numNodes"] == 2 and trainer["numProcPerNode"] == 1
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


def pod(index: int, phase: str, *, job: str = "demo", **status: Any) -> dict[str, Any]:
    """A JobSet pod of the ``node`` replicated job, labelled as notes/trainjob.md §4 says."""
    return {
        "metadata": {
            "name": f"{job}-node-0-{index}-abcde",
            "creationTimestamp": "2026-11-23T10:00:00Z",
            "labels": {
                "jobset.sigs.k8s.io/jobset-name": job,
                "jobset.sigs.k8s.io/replicatedjob-name": "node",
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
    assert info.message is not None and "TrainJobResourcesCreationFailed" in info.message


def test_pods_are_found_by_jobsets_labels() -> None:
    assert TRAINJOB.pod_selector("demo") == (
        "jobset.sigs.k8s.io/jobset-name=demo,jobset.sigs.k8s.io/replicatedjob-name=node"
    )
    assert TRAINJOB.job_of_pod(pod(1, "Running")) == "demo"
    assert TRAINJOB.replica_of_pod(pod(1, "Running")) == "node-1"
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
    assert deepspeed.usable is not None and "mpi" in deepspeed.usable


def test_a_namespaced_runtime_hides_the_cluster_one_of_its_name() -> None:
    cluster = shipped_runtime("torch_distributed.yaml")
    mine = copy.deepcopy(cluster)
    mine["kind"] = "TrainingRuntime"
    mine["metadata"]["labels"]["trainer.kubeflow.org/support"] = "deprecated"
    mine["spec"]["mlPolicy"]["numNodes"] = 4
    (only,) = available_runtimes([cluster], [mine])
    assert (only.kind, only.nodes, only.deprecated) == ("TrainingRuntime", 4, True)
    assert only.to_wire()["replicatedJobs"] == ["node"]
