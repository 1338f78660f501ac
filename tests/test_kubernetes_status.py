"""What the kubernetes backend shows for a job: pure functions over the API's dicts.

The job and pod shapes are the Training Operator's (notes/operator.md §5, §8, §10); the
jobs here are built by hand, as other tools (the Kubeflow SDK) create them.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_pytorchjob.frontends.formatting import format_status
from jupyter_pytorchjob.kinds.pytorchjob.status import job_info

LABEL = "training.kubeflow.org/"


def replica_spec(replicas: int, gpus: int = 0) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "pytorch", "image": "img"}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return {"replicas": replicas, "template": {"spec": {"containers": [container]}}}


def job(
    specs: dict[str, Any],
    conditions: list[tuple[str, str]],
    run_policy: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "sdk", "namespace": "team-a"},
        "spec": {"pytorchReplicaSpecs": specs, "runPolicy": run_policy or {}},
        "status": {
            "conditions": [
                {"type": t, "status": s, "reason": f"PyTorchJob{t}", "message": ""}
                for t, s in conditions
            ]
        },
    }


def pod(rtype: str, index: int, phase: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"sdk-{rtype}-{index}",
            "labels": {f"{LABEL}replica-type": rtype, f"{LABEL}replica-index": str(index)},
        },
        "spec": {"nodeName": "node-1"},
        "status": {"phase": phase},
    }


RUNNING = [("Created", "True"), ("Running", "True")]
SUCCEEDED = [("Created", "True"), ("Running", "False"), ("Succeeded", "True")]
FAILED = [("Created", "True"), ("Running", "False"), ("Failed", "True")]


def test_gpus_come_from_every_replica_type() -> None:
    """A Worker-only SDK job, 2 workers x 1 GPU: 1 GPU per node (as the local backend
    counts), 2 in all in `ptjob list`."""
    info = job_info(job({"Worker": replica_spec(2, gpus=1)}, RUNNING), [])
    assert (info.nodes, info.gpus) == (2, 1)
    mixed = job({"Master": replica_spec(1), "Worker": replica_spec(2, gpus=4)}, RUNNING)
    assert job_info(mixed, []).gpus == 4


def test_a_worker_only_job_shows_its_workers() -> None:
    info = job_info(job({"Worker": replica_spec(2)}, RUNNING), [])
    assert [r.name for r in info.replicas] == ["worker-0", "worker-1"]
    assert info.topology == "2 workers"
    assert "Nodes:    2 (2 workers)" in format_status(info)
    three = job_info(job({"Master": replica_spec(1), "Worker": replica_spec(1)}, RUNNING), [])
    assert three.topology == "1 master + 1 worker"
    assert job_info(job({"Master": replica_spec(1)}, RUNNING), []).topology == "1 master"


@pytest.mark.parametrize(
    ("conditions", "policy", "reason"),
    [
        (SUCCEEDED, {"cleanPodPolicy": "All"}, "CleanPodPolicy"),
        (FAILED, {"cleanPodPolicy": "Running"}, "CleanPodPolicy"),
        (SUCCEEDED, {}, "Deleted"),
    ],
)
def test_replicas_gone_after_the_job_finished_show_deleted(
    conditions: list[tuple[str, str]], policy: dict[str, Any], reason: str
) -> None:
    """cleanPodPolicy, a backoff or deadline failure or anyone else removed the pods of a
    finished job: they are Deleted, with the reason, never Pending."""
    finished = job({"Master": replica_spec(1), "Worker": replica_spec(2)}, conditions, policy)
    info = job_info(finished, [pod("master", 0, "Succeeded")])
    assert [(r.name, r.phase) for r in info.replicas] == [
        ("master-0", "Succeeded"),
        ("worker-0", "Deleted"),
        ("worker-1", "Deleted"),
    ]
    assert {r.reason for r in info.replicas[1:]} == {reason}
    assert all(r.message for r in info.replicas[1:])


def test_a_replica_not_created_yet_is_pending_while_the_job_runs() -> None:
    running = job({"Master": replica_spec(1), "Worker": replica_spec(1)}, RUNNING)
    info = job_info(running, [pod("master", 0, "Running")])
    assert [(r.name, r.phase) for r in info.replicas] == [
        ("master-0", "Running"),
        ("worker-0", "Pending"),
    ]


def test_a_suspended_job_has_no_pods_and_says_why() -> None:
    suspended = job(
        {"Master": replica_spec(1)},
        [("Created", "True"), ("Running", "False"), ("Suspended", "True")],
        {"suspend": True},
    )
    (replica,) = job_info(suspended, []).replicas
    assert (replica.phase, replica.reason) == ("Pending", "Suspended")


def test_a_failed_job_without_completion_time_stops_its_duration() -> None:
    """The v1.9.4 operator sets no completionTime when it fails a job for an ExitCode
    restart policy's permanent exit code (Training Operator v1.9.4
    pkg/controller.v1/common/pod.go:367-372 sets only the Failed condition): the Failed
    condition's time ends it, not now."""
    failed = job({"Master": replica_spec(1)}, FAILED)
    failed["status"]["startTime"] = "2026-11-23T10:00:00Z"
    for condition in failed["status"]["conditions"]:
        condition["lastTransitionTime"] = "2026-11-23T10:05:00Z"
    info = job_info(failed, [])
    assert info.finished is not None and info.duration == 300.0
    failed["status"]["completionTime"] = "2026-11-23T10:06:00Z"  # when there is one, it wins
    assert job_info(failed, []).duration == 360.0
