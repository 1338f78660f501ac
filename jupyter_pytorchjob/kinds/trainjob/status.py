"""A TrainJob's state and per-node detail, read from the object and its pods.

Trainer v2.3 sets only ``Suspended``, ``Complete`` and ``Failed`` conditions (no Created or
Running; ``trainjob_types.go``), so the states between come from the pods, as a user reads
them: no pods and no status yet -> Submitted (the controller has not made the JobSet); pods
being made -> Created; a ``node`` pod running -> Running. Complete is shown as Succeeded.
Pods are JobSet's: labelled with the job (``jobset.sigs.k8s.io/jobset-name``) and the
replicated job (``replicatedjob-name``); a node's rank is its Job completion index, so
node ``i`` is the pod of index ``i`` (JobSet v0.12 and the Job controller label them so).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from ...job.messages import Message, msg
from ...job.progress import JobProgress, ProgressSource, merge, reading_from_trainer_status
from ...job.status import JobInfo, JobState, ReplicaInfo
from ..pods import epoch, pod_replica, read_conditions, unschedulable

# The API's names (here, not in ``manifest``: reading a job's state loads no manifest code).
GROUP = "trainer.kubeflow.org"
VERSION = "v1alpha1"
KIND = "TrainJob"
# The replicated job and container the torch runtimes train in (torch_distributed.yaml).
NODE = "node"
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
RJOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
# The runtime's replicated jobs whose pods are a TrainJob's replicas: the initializers run
# (one pod each, before the nodes: the runtime's dependsOn) and then the nodes.
INITIALIZERS = ("dataset-initializer", "model-initializer")
REPLICATED_JOBS = (*INITIALIZERS, NODE)

# The conditions Trainer v2.3 writes, (type, status, reason, message) word for word
# (trainjob_types.go, pkg/constants/constants.go; Complete and Failed are JobSet's copied).
SUSPENDED = ("Suspended", "True", "Suspended", "TrainJob is suspended")
RESUMED = ("Suspended", "False", "Resumed", "TrainJob is resumed")
COMPLETE = ("Complete", "True", "AllJobsCompleted", "jobset completed successfully")
FAILED_JOBS = (
    "Failed",
    "True",
    "FailedJobs",
    "jobset failed due to one or more job failures (first failed job: {job})",
)
DEADLINE_EXCEEDED = ("Failed", "True", "DeadlineExceeded", "TrainJob exceeded its active deadline")
# The Job controller's reason and message when a Job's pods restart past its backoffLimit.
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")

# How long a job may have neither status nor pods before we say so.
CONTROLLER_GRACE = 30.0


def replicated_job(pod: Mapping[str, Any]) -> str:
    """The pod's replicated job: ``node`` or one of the initializers."""
    rjob = ((pod.get("metadata") or {}).get("labels") or {}).get(RJOB_LABEL)
    return str(rjob) if rjob in INITIALIZERS else NODE


def replica_name(pod: Mapping[str, Any]) -> str:
    """``node-<rank>``, or ``dataset-initializer-0`` / ``model-initializer-0``."""
    meta = pod.get("metadata") or {}
    index = (meta.get("labels") or {}).get(INDEX_LABEL)
    if index is None:  # the Job controller also writes it as an annotation
        index = (meta.get("annotations") or {}).get(INDEX_LABEL, "?")
    return f"{replicated_job(pod)}-{index}"


def child_sources(
    job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]
) -> dict[tuple[str, str], str]:
    """The JobSet (named as the TrainJob) and its Jobs ``<name>-<replicatedJob>-<i>``: the
    replicated jobs of ``status.jobsStatus`` (index 0; ancestor jobs have one replica),
    the ``node`` one before there is a status, and every Job a pod names."""
    name = str((job.get("metadata") or {}).get("name", ""))
    rjobs = [str(j.get("name")) for j in (job.get("status") or {}).get("jobsStatus") or []]
    jobs = {f"{name}-{rjob}-0" for rjob in [*rjobs, NODE]}
    jobs |= {
        str(labels[JOB_NAME_LABEL])
        for pod in pods
        if JOB_NAME_LABEL in (labels := (pod.get("metadata") or {}).get("labels") or {})
    }
    return {("JobSet", name): f"jobset/{name}", **{("Job", j): f"job/{j}" for j in jobs}}


def job_state(job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> JobState:
    """Failed, Complete (Succeeded) from the conditions; Suspended from ``spec.suspend``
    (what the user or Kueue asked, before the controller's condition follows), else the
    condition; then the pods."""
    status = job.get("status") or {}
    asked = (job.get("spec") or {}).get("suspend")
    true = {c.get("type") for c in status.get("conditions") or [] if c.get("status") == "True"}
    if "Failed" in true:
        return JobState.FAILED
    if "Complete" in true:
        return JobState.SUCCEEDED
    if asked is True or (asked is None and "Suspended" in true):
        return JobState.SUSPENDED
    if any(
        (p.get("status") or {}).get("phase") == "Running" and replicated_job(p) == NODE
        for p in pods
    ):
        return JobState.RUNNING  # a running initializer leaves the job Created
    if pods or status.get("jobsStatus"):
        return JobState.CREATED
    return JobState.SUBMITTED


def waiting_message(state: JobState, created: float, now: float) -> Message | None:
    waited = now - created
    if state is not JobState.SUBMITTED or waited < CONTROLLER_GRACE:
        return None
    return msg("no_controller", seconds=int(waited))


def missing_replica(job: Mapping[str, Any], state: JobState, name: str) -> ReplicaInfo:
    """A node without a pod: not made yet; none while suspended; gone once finished (a
    deadline deletes the JobSet and its pods)."""
    if state.finished:
        reasons = [
            c.get("reason")
            for c in (job.get("status") or {}).get("conditions") or []
            if c.get("type") == "Failed" and c.get("status") == "True"
        ]
        if "DeadlineExceeded" in reasons:
            message = msg("replica_deadline_deleted")
            return ReplicaInfo(
                name=name, phase="Deleted", reason="DeadlineExceeded", message=message
            )
        message = msg("replica_deleted")
        return ReplicaInfo(name=name, phase="Deleted", reason="Deleted", message=message)
    if state is JobState.SUSPENDED:
        message = msg("replica_suspended")
        return ReplicaInfo(name=name, phase="Pending", reason="Suspended", message=message)
    return ReplicaInfo(name=name, phase="Pending")


def gpus_per_node(trainer: Mapping[str, Any]) -> int:
    """GPUs per node as the runtime counts them: the first resource naming ``gpu``,
    requests before limits (``GetNumGPUPerNode``)."""
    needs = trainer.get("resourcesPerNode") or {}
    for part in ("requests", "limits"):
        for key, value in (needs.get(part) or {}).items():
            if "gpu" in key.lower() and str(value).isdigit():
                return int(value)
    return 0


def job_info(
    job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], *, with_manifest: bool = False
) -> JobInfo:
    from ..manifests import LOGDIR_ANNOTATION  # manifest code: loaded once a cluster is read

    meta = job.get("metadata") or {}
    spec = job.get("spec") or {}
    status = job.get("status") or {}
    trainer = spec.get("trainer") or {}
    nodes = trainer.get("numNodes")
    count = int(nodes) if isinstance(nodes, int) and nodes >= 1 else 1
    # Newest last: after a JobSet restart the new pod of an index replaces the old one.
    ordered = sorted(
        (
            p
            for p in pods
            if (p.get("metadata") or {}).get("labels", {}).get(RJOB_LABEL) in REPLICATED_JOBS
        ),
        key=lambda p: str((p.get("metadata") or {}).get("creationTimestamp") or ""),
    )
    by_name: dict[str, ReplicaInfo] = {}
    for pod in ordered:
        info = pod_replica(pod, name=replica_name(pod), container=replicated_job(pod))
        unschedulable(pod, info)
        by_name[info.name] = info
    state = job_state(job, ordered)
    # The initializers first (they run before the nodes): those the job asks for, and
    # those its runtime runs anyway (their pods show them).
    asked = spec.get("initializer") or {}
    initializers = [
        f"{rjob}-0"
        for rjob in INITIALIZERS
        if f"{rjob}-0" in by_name
        or (isinstance(asked, Mapping) and asked.get(rjob.removesuffix("-initializer")))
    ]
    expected = [*initializers, *(f"{NODE}-{i}" for i in range(count))]
    replicas = [
        by_name.pop(n) if n in by_name else missing_replica(job, state, n) for n in expected
    ]
    replicas += list(by_name.values())
    conditions = read_conditions(status)
    finished = next(
        (
            c.last_transition
            for c in conditions
            if c.type in ("Complete", "Failed") and c.status == "True"
        ),
        None,
    )
    starts = [epoch((p.get("status") or {}).get("startTime")) for p in ordered]
    created = epoch(meta.get("creationTimestamp")) or 0.0
    return JobInfo(
        name=meta.get("name", ""),
        state=state,
        replicas=replicas,
        nodes=count,
        gpus=gpus_per_node(trainer),
        created=created,
        kind="TrainJob",
        started=min((s for s in starts if s is not None), default=None),
        finished=finished,
        conditions=conditions,
        logdir=(meta.get("annotations") or {}).get(LOGDIR_ANNOTATION),
        namespace=meta.get("namespace"),
        manifest=job if with_manifest else None,
        message=waiting_message(state, created, time.time()),
        progress=trainer_progress(status.get("trainerStatus")),
    )


def trainer_progress(trainer_status: Any) -> JobProgress | None:
    """``status.trainerStatus`` (Trainer v2.3, gate ``TrainJobStatus``: what the job's
    pods POSTed to the status server) as the job's progress; parts outside Kubeflow's
    bounds are skipped."""
    if not isinstance(trainer_status, Mapping):
        return None
    when = epoch(trainer_status.get("lastUpdatedTime")) or time.time()
    reading = reading_from_trainer_status(
        trainer_status, ProgressSource.TRAINER_STATUS, when, strict=False
    )
    return merge([reading])
