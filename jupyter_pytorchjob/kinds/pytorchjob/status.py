"""A PyTorchJob's state and per-replica detail, read from the object and its pods.

The state follows the operator's conditions (Failed and Succeeded win, then Suspended,
then the newest of Restarting, Running, Created); pods are found by the operator's
labels. Pure functions over the dicts the API returns, so the rules are tested without
a cluster.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from ...job.messages import Message, msg
from ...job.status import JobInfo, JobState, ReplicaInfo
from ..pods import epoch, init_running, pod_replica, read_conditions, unschedulable

GROUP = "kubeflow.org"
VERSION = "v1"
PLURAL = "pytorchjobs"
JOB_LABEL = "training.kubeflow.org/job-name"
TYPE_LABEL = "training.kubeflow.org/replica-type"
INDEX_LABEL = "training.kubeflow.org/replica-index"
CONTAINER = "pytorch"
INIT_CONTAINER = "init-pytorch"


# How long a job may wait for the operator's first pass before we say none came.
OPERATOR_GRACE = 30.0


def state_of(conditions: Sequence[Mapping[str, Any]]) -> JobState:
    """The state a list of operator conditions says: Failed and Succeeded win; then
    Suspended; then the newest True of Restarting, Running, Created; no conditions at
    all is Submitted (no operator has reconciled the job yet). The local supervisor
    keeps the same conditions, so it reads its state with this too."""
    true = [c for c in conditions if c.get("status") == "True"]
    types = {c.get("type") for c in true}
    for final in ("Failed", "Succeeded", "Suspended"):
        if final in types:
            return JobState(final)
    for c in reversed(true):
        if c.get("type") in ("Restarting", "Running", "Created"):
            return JobState(c["type"])
    return JobState.CREATED if conditions else JobState.SUBMITTED


def job_state(job: Mapping[str, Any]) -> JobState:
    """The state the job's conditions say."""
    return state_of((job.get("status") or {}).get("conditions") or [])


def waiting_message(state: JobState, created: float, now: float) -> Message | None:
    """What to tell a user whose job no operator has touched for a while."""
    waited = now - created
    if state is not JobState.SUBMITTED or waited < OPERATOR_GRACE:
        return None
    return msg("no_operator", seconds=int(waited))


def replica_name(pod: Mapping[str, Any]) -> str:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return f"{labels.get(TYPE_LABEL, '?')}-{labels.get(INDEX_LABEL, '?')}"


def replica_info(pod: Mapping[str, Any]) -> ReplicaInfo:
    """Phase, restarts, exit code and the reason a replica is not running; a worker
    whose ``init-pytorch`` still runs is waiting for the master to be reachable."""
    info = pod_replica(pod, name=replica_name(pod), container=CONTAINER)
    if init_running(pod, INIT_CONTAINER):
        info.reason = info.reason if info.reason not in (None, "PodInitializing") else None
        info.reason = info.reason or "WaitingForMaster"
        info.message = info.message or msg("replica_waits_for_master")
    unschedulable(pod, info)
    return info


def missing_replica(job: Mapping[str, Any], name: str) -> ReplicaInfo:
    """A replica the job has but whose pod is not there: not created yet while the job
    runs; deleted once it finished (by cleanPodPolicy, which v1.9.4 also applies after a
    backoff or deadline failure, ``common/job.go:122-126,216-231``, or by anyone else);
    none at all while suspended (``common/job.go:146-166``)."""
    state = job_state(job)
    policy = ((job.get("spec") or {}).get("runPolicy") or {}).get("cleanPodPolicy") or "None"
    if state in (JobState.SUCCEEDED, JobState.FAILED):
        if policy in ("Running", "All"):
            message = msg("replica_cleaned_up", policy=policy)
            return ReplicaInfo(name=name, phase="Deleted", reason="CleanPodPolicy", message=message)
        message = msg("replica_deleted")
        return ReplicaInfo(name=name, phase="Deleted", reason="Deleted", message=message)
    if state == JobState.SUSPENDED:
        message = msg("replica_suspended")
        return ReplicaInfo(name=name, phase="Pending", reason="Suspended", message=message)
    return ReplicaInfo(name=name, phase="Pending")


def gpus_per_node(replica_specs: Mapping[str, Any]) -> int:
    """GPUs of the ``pytorch`` container, the most any replica type asks for: per node, as
    the local backend counts (``ptjob list`` shows GPUs x nodes)."""
    most = 0
    for rspec in replica_specs.values():
        pod = ((rspec or {}).get("template") or {}).get("spec") or {}
        containers = pod.get("containers") or []
        pytorch: Mapping[str, Any] = next((c for c in containers if c.get("name") == CONTAINER), {})
        limits = (pytorch.get("resources") or {}).get("limits") or {}
        gpus = sum(int(v) for k, v in limits.items() if k.endswith("/gpu") and str(v).isdigit())
        most = max(most, gpus)
    return most


def job_info(
    job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], *, with_manifest: bool = False
) -> JobInfo:
    """The JobInfo of a PyTorchJob and its pods (see ``missing_replica`` for replicas
    without a pod)."""
    meta = job.get("metadata") or {}
    spec = job.get("spec") or {}
    status = job.get("status") or {}
    replica_specs = spec.get("pytorchReplicaSpecs") or {}
    expected = []
    for rtype, rspec in sorted(replica_specs.items(), key=lambda item: item[0] != "Master"):
        count = (rspec or {}).get("replicas")
        expected += [f"{rtype.lower()}-{i}" for i in range(1 if count is None else int(count))]
    by_name = {replica_name(p): replica_info(p) for p in pods}
    replicas = [by_name.pop(n) if n in by_name else missing_replica(job, n) for n in expected]
    replicas += list(by_name.values())
    conditions = read_conditions(status)
    state = job_state(job)
    created = epoch(meta.get("creationTimestamp")) or 0.0
    # v1.9.4 fails a job for an ExitCode policy's permanent exit code without a
    # completionTime (pkg/controller.v1/common/pod.go:367-372): its Failed condition's
    # time ends it, so its duration stops growing.
    finished = epoch(status.get("completionTime")) or next(
        (
            c.last_transition
            for c in conditions
            if c.type in ("Succeeded", "Failed") and c.status == "True" and c.last_transition
        ),
        None,
    )
    return JobInfo(
        name=meta.get("name", ""),
        state=state,
        replicas=replicas,
        nodes=len(expected),
        gpus=gpus_per_node(replica_specs),
        created=created,
        started=epoch(status.get("startTime")),
        finished=finished,
        conditions=conditions,
        logdir=(meta.get("annotations") or {}).get("pytorchjob.jupyter.org/logdir"),
        namespace=meta.get("namespace"),
        manifest=job if with_manifest else None,
        message=waiting_message(state, created, time.time()),
    )
