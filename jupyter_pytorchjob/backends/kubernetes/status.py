"""Job state and per-replica detail, derived as in notes/operator.md section 8.

Pure functions over the PyTorchJob and Pod dicts the API returns, so the rules are
tested without a cluster.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..base import Condition, JobInfo, JobState, ReplicaInfo

GROUP = "kubeflow.org"
VERSION = "v1"
PLURAL = "pytorchjobs"
JOB_LABEL = "training.kubeflow.org/job-name"
TYPE_LABEL = "training.kubeflow.org/replica-type"
INDEX_LABEL = "training.kubeflow.org/replica-index"
CONTAINER = "pytorch"
INIT_CONTAINER = "init-pytorch"


def epoch(value: Any) -> float | None:
    """RFC 3339 (as the API writes it, or a datetime) -> seconds since the epoch."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


# How long a job may wait for the operator's first pass before we say none came.
OPERATOR_GRACE = 30.0


def job_state(job: Mapping[str, Any]) -> JobState:
    """Failed and Succeeded win; then Suspended; then the newest of Restarting,
    Running, Created; no conditions at all is Submitted (no operator has reconciled
    it yet - the operator's first pass sets Created)."""
    conditions = (job.get("status") or {}).get("conditions") or []
    true = [c for c in conditions if c.get("status") == "True"]
    types = {c.get("type") for c in true}
    for final in ("Failed", "Succeeded", "Suspended"):
        if final in types:
            return JobState(final)
    for c in reversed(true):
        if c.get("type") in ("Restarting", "Running", "Created"):
            return JobState(c["type"])
    return JobState.CREATED if conditions else JobState.SUBMITTED


def waiting_message(state: JobState, created: float, now: float) -> str | None:
    """What to tell a user whose job no operator has touched for a while."""
    waited = now - created
    if state is not JobState.SUBMITTED or waited < OPERATOR_GRACE:
        return None
    return (
        f"no operator has picked this job up in {int(waited)} s: the Kubeflow Training "
        "Operator (deployment training-operator, usually in namespace kubeflow) may be down "
        "or not installed; the job starts when it reconciles"
    )


def replica_name(pod: Mapping[str, Any]) -> str:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return f"{labels.get(TYPE_LABEL, '?')}-{labels.get(INDEX_LABEL, '?')}"


def replica_info(pod: Mapping[str, Any]) -> ReplicaInfo:
    """Phase, restarts, exit code and the reason a replica is not running."""
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    statuses = status.get("containerStatuses") or []
    init_statuses = status.get("initContainerStatuses") or []
    restarts = sum(int(s.get("restartCount") or 0) for s in [*statuses, *init_statuses])
    info = ReplicaInfo(
        name=replica_name(pod),
        phase=status.get("phase") or "Unknown",
        restarts=restarts,
        node=spec.get("nodeName"),
    )
    main = next((s for s in statuses if s.get("name") == CONTAINER), None)
    if main is not None:
        state = main.get("state") or {}
        last = (main.get("lastState") or {}).get("terminated") or {}
        if state.get("terminated"):
            term = state["terminated"]
            info.exit_code = term.get("exitCode")
            info.reason, info.message = term.get("reason"), term.get("message")
        elif state.get("waiting"):
            waiting = state["waiting"]
            info.reason, info.message = waiting.get("reason"), waiting.get("message")
            if last:
                info.exit_code = last.get("exitCode")
                info.message = info.message or (
                    f"last run: {last.get('reason') or 'exited'} with code {last.get('exitCode')}"
                )
        elif last:
            info.exit_code = last.get("exitCode")
    init = next((s for s in init_statuses if s.get("name") == INIT_CONTAINER), None)
    if init is not None and not (init.get("state") or {}).get("terminated"):
        info.reason = info.reason if info.reason not in (None, "PodInitializing") else None
        info.reason = info.reason or "WaitingForMaster"
        info.message = info.message or "init-pytorch is waiting for the master to be reachable"
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            info.reason = condition.get("reason") or "Unschedulable"
            info.message = condition.get("message")
    return info


def job_info(
    job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], *, with_manifest: bool = False
) -> JobInfo:
    """The JobInfo of a PyTorchJob and its pods (replicas not yet created show Pending)."""
    meta = job.get("metadata") or {}
    spec = job.get("spec") or {}
    status = job.get("status") or {}
    replica_specs = spec.get("pytorchReplicaSpecs") or {}
    expected = []
    for rtype, rspec in replica_specs.items():
        count = int((rspec or {}).get("replicas", 1))
        expected += [f"{rtype.lower()}-{i}" for i in range(count)]
    by_name = {replica_name(p): replica_info(p) for p in pods}
    replicas = [by_name.pop(n, ReplicaInfo(name=n, phase="Pending")) for n in expected]
    replicas += list(by_name.values())
    master = (replica_specs.get("Master") or {}).get("template") or {}
    containers = (master.get("spec") or {}).get("containers") or []
    pytorch: Mapping[str, Any] = next((c for c in containers if c.get("name") == CONTAINER), {})
    limits = (pytorch.get("resources") or {}).get("limits") or {}
    gpus = sum(int(v) for k, v in limits.items() if k.endswith("/gpu") and str(v).isdigit())
    conditions = [
        Condition(
            type=c.get("type", ""),
            status=c.get("status", ""),
            reason=c.get("reason", ""),
            message=c.get("message", ""),
            last_transition=epoch(c.get("lastTransitionTime")) or 0.0,
        )
        for c in status.get("conditions") or []
    ]
    state = job_state(job)
    created = epoch(meta.get("creationTimestamp")) or 0.0
    return JobInfo(
        name=meta.get("name", ""),
        state=state,
        replicas=replicas,
        nodes=len(expected),
        gpus=gpus,
        created=created,
        started=epoch(status.get("startTime")),
        finished=epoch(status.get("completionTime")),
        conditions=conditions,
        logdir=(meta.get("annotations") or {}).get("pytorchjob.jupyter.org/logdir"),
        namespace=meta.get("namespace"),
        manifest=job if with_manifest else None,
        message=waiting_message(state, created, time.time()),
    )
