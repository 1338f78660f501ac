"""A stand-in for the Kubeflow Training Operator v1.9.4 (PyTorchJob) in the real-cluster tier.

The operator cannot be built here (no Go module registry), so this asyncio controller plays its
part against the real API server: it lists and watches PyTorchJobs, their pods and services, and
reconciles each job as the operator's controller does, creating real pods (placed by the real
scheduler, run by the real kubelet) and headless services, writing the job's ``/status`` and
core/v1 events on the job.

It is written from ``shared/notes/operator.md`` and ``operator-fidelity.md`` and from the
operator's Go code at tag v1.9.4 of kubeflow/trainer (commit 4445c12a; the v1 code also lives on
branch release-1.9); comments cite ``pkg/...:line`` there. It never imports or copies the
product's code (``jupyter_pytorchjob``) or the project's fake API server (``tests/fake_kube``):
it is an independent reading, so that where it and the product disagree one of them is wrong.

Usage::

    player = OperatorPlayer(kubeconfig_path, namespace=None)   # None: all namespaces
    await player.start()   # lists, then watches and reconciles in background tasks
    await player.stop()    # cancels them and closes the client; idempotent

    python -m tests.cluster.operator_player KUBECONFIG [--namespace NS]   # in the foreground

What it plays, as the operator does:

- Defaults in memory only (``pytorch_defaults.go:77-96``): cleanPodPolicy None, replicas 1,
  restartPolicy OnFailure, the ``pytorchjob-port`` 23456 on the ``pytorch`` container, elastic
  min/max, nprocPerNode ``auto``. Nothing is written back into the spec.
- Per replica a pod and a headless service ``<job>-<master|worker>-<i>`` with the operator's
  labels and a controller ownerReference (so the real garbage collector deletes them with the
  job); env of ``envvar.go``/``master.go``/``elastic.go`` appended to every container; the pod's
  restartPolicy from the replica's (ExitCode -> Never).
- Status: conditions with the operator's reasons and messages and ``util/status.go``'s rules
  (Failed is final, Running and Restarting replace each other), replicaStatuses, startTime at the
  first reconcile, completionTime; backoffLimit counted as ``core/job.go`` PastBackoffLimit does
  (restarts of Running pods only), activeDeadlineSeconds from startTime, suspend/resume,
  cleanPodPolicy on finish, ttlSecondsAfterFinished deleting the job.
- Events on the job: SuccessfulCreatePod, SuccessfulCreateService, SuccessfulDeletePod,
  SuccessfulDeleteService, ExitedWithCode and the PyTorchJob* reasons.

Upstream quirks kept on purpose: with OnFailure a crash-looping pod stays Running, so the job
shows no Restarting condition and fails only when the restarts of Running pods reach
backoffLimit; an ExitCode retry re-creates the pod (restartCount 0, never counted); a
non-retryable ExitCode failure sets Failed without a completionTime (``common/pod.go:367-373``
sets no time and the job is finished before ``UpdateJobStatus`` could).

DELIBERATE DIFFERENCES of the test tier (this cluster has no cluster DNS and no kube-proxy):

(a) The ``init-pytorch`` init container (alpine:3.10 running ``nslookup <job>-master-0``,
    ``initcontainer.go``) is not added: there is no DNS to look up and no alpine image.
(b) ``MASTER_ADDR=<job>-master-0`` must still resolve, so the master pod is created first and the
    worker pods only once it has a pod IP; each worker gets a ``hostAliases`` entry mapping
    ``<job>-master-0`` to that IP. Jobs without a Master get nothing (elastic jobs'
    ``<job>-worker-0`` rendezvous host does not resolve here). A worker created before a master
    is re-created (ExitCode retry) keeps the old IP.
(c) Pods run the node's images as the job names them; nothing is pulled (there is no registry).
(d) Events the operator records on every reconcile while a state lasts (ExitedWithCode for a
    terminated container, PyTorchJobSuspended while suspended) are recorded once per container
    run / per suspension; client-go's recorder would fold the repeats into one event's count.
(e) Replica types are reconciled Master first, then Worker (Go iterates a map in random order),
    and every replica type's selector is written on each status update.
(f) Gang scheduling, HPA (elastic ``metrics``) and the work queue's rate-limited retry count
    (``previousRetry`` in ``common/job.go:176``, taken as 0) are not played.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import json
import logging
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio import config as k8s_config

log = logging.getLogger("operator_player")

Json = dict[str, Any]
JobKey = tuple[str, str]  # (namespace, name)

GROUP = "kubeflow.org"
VERSION = "v1"
PLURAL = "pytorchjobs"
KIND = "PyTorchJob"
CONTROLLER_NAME = "pytorchjob-controller"  # pytorchjob_controller.go:59
MANAGED_BY_OPERATOR = "kubeflow.org/training-operator"  # common_types.go KubeflowJobsController

# common_types.go:24-37
LABEL_OPERATOR = "training.kubeflow.org/operator-name"
LABEL_JOB_NAME = "training.kubeflow.org/job-name"
LABEL_REPLICA_TYPE = "training.kubeflow.org/replica-type"
LABEL_REPLICA_INDEX = "training.kubeflow.org/replica-index"
LABEL_JOB_ROLE = "training.kubeflow.org/job-role"

DEFAULT_CONTAINER = "pytorch"
DEFAULT_PORT_NAME = "pytorchjob-port"
DEFAULT_PORT = 23456
DEFAULT_RESTART_POLICY = "OnFailure"
MASTER = "Master"
WORKER = "Worker"

RESYNC_SECONDS = 5.0
# The operator holds a job back until the informer has seen its own creations and deletions
# (expectation/expectation.go); an expectation older than this is given up.
EXPECTATION_SECONDS = 60.0
WATCH_SECONDS = 120  # the server ends each watch after this; the player watches on


# --------------------------------------------------------------------------------------------
# Pure parts: what the operator decides, given the job, its pods and services and the time.
# --------------------------------------------------------------------------------------------


def rfc3339(moment: datetime) -> str:
    """metav1.Time's wire form (seconds, UTC)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def default_job(job: Json) -> Json:
    """A deep copy with SetDefaults_PyTorchJob applied (pytorch_defaults.go:77-96)."""
    job = copy.deepcopy(job)
    spec = job.setdefault("spec", {})
    run_policy = spec.setdefault("runPolicy", {})
    run_policy.setdefault("cleanPodPolicy", "None")
    replicas = spec.setdefault("pytorchReplicaSpecs", {})
    # setTypeNameToCamelCase (defaulting_utils.go:50-59)
    for wanted in (MASTER, WORKER):
        for key in list(replicas):
            if key.lower() == wanted.lower() and key != wanted:
                replicas[wanted] = replicas.pop(key)
                break
    for replica in replicas.values():
        if replica.get("replicas") is None:
            replica["replicas"] = 1
        if not replica.get("restartPolicy"):
            replica["restartPolicy"] = DEFAULT_RESTART_POLICY
        containers = replica.setdefault("template", {}).setdefault("spec", {}).get("containers")
        if containers:
            # getDefaultContainerIndex falls back to the first container (defaulting_utils.go:10-17)
            index = next(
                (i for i, c in enumerate(containers) if c.get("name") == DEFAULT_CONTAINER), 0
            )
            ports = containers[index].setdefault("ports", [])
            if not any(p.get("name") == DEFAULT_PORT_NAME for p in ports):
                ports.append({"name": DEFAULT_PORT_NAME, "containerPort": DEFAULT_PORT})
    elastic = spec.get("elasticPolicy")
    if elastic is not None:  # setElasticPolicy (pytorch_defaults.go:38-55)
        if elastic.get("maxReplicas") is not None and elastic.get("minReplicas") is not None:
            pass
        elif elastic.get("maxReplicas") is not None:
            elastic["minReplicas"] = elastic["maxReplicas"]
        elif elastic.get("minReplicas") is not None:
            elastic["maxReplicas"] = elastic["minReplicas"]
        else:
            workers = replicas.get(WORKER, {}).get("replicas")
            elastic["maxReplicas"] = workers
            elastic["minReplicas"] = workers
    no_legacy_nproc = elastic is None or elastic.get("nProcPerNode") is None
    if no_legacy_nproc and spec.get("nprocPerNode") is None:  # pytorch_defaults.go:68-74
        spec["nprocPerNode"] = "auto"
    return job


def replica_order(replicas: Json) -> list[str]:
    """Master, then Worker, then anything else (deliberate difference (e))."""
    known = [t for t in (MASTER, WORKER) if t in replicas]
    return known + sorted(t for t in replicas if t not in (MASTER, WORKER))


def condition_true(status: Json, kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or []
    )


def is_finished(status: Json) -> bool:
    return condition_true(status, "Succeeded") or condition_true(status, "Failed")


def update_conditions(
    status: Json, kind: str, value: str, reason: str, message: str, now: datetime
) -> None:
    """UpdateJobConditions / setCondition / filterOutCondition (util/status.go:59-149)."""
    if condition_true(status, "Failed"):
        return
    conditions: list[Json] = status.get("conditions") or []
    current = next((c for c in conditions if c.get("type") == kind), None)
    if current is not None and current.get("status") == value and current.get("reason") == reason:
        return
    stamp = rfc3339(now)
    condition = {
        "type": kind,
        "status": value,
        "reason": reason,
        "message": message,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
    }
    if current is not None and current.get("status") == value:
        condition["lastTransitionTime"] = str(current.get("lastTransitionTime"))
    kept: list[Json] = []
    for c in conditions:
        if kind == "Restarting" and c.get("type") == "Running":
            continue
        if kind == "Running" and c.get("type") == "Restarting":
            continue
        if c.get("type") == kind:
            continue
        if kind in ("Failed", "Succeeded") and c.get("type") == "Running":
            c = {**c, "status": "False"}
        kept.append(c)
    status["conditions"] = [*kept, condition]


def job_reason(kind: str) -> str:
    """NewReason (util/status.go:31-33): "PyTorchJob" + the reason."""
    return KIND + kind


def job_labels(job_name: str) -> dict[str, str]:
    """GenLabels (common/job_controller.go:236-242)."""
    return {LABEL_OPERATOR: CONTROLLER_NAME, LABEL_JOB_NAME: job_name.replace("/", "-")}


def replica_name(job_name: str, rtype: str, index: int) -> str:
    """GenGeneralName (core/utils.go:30-33)."""
    return f"{job_name}-{rtype.lower()}-{index}".replace("/", "-")


def selector_string(job_name: str, rtype: str) -> str:
    """metav1.FormatLabelSelector of GenLabelSelector (pytorchjob_controller.go:332-340, 372)."""
    labels = {**job_labels(job_name), LABEL_REPLICA_TYPE: rtype.lower()}
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def owner_reference(job: Json) -> Json:
    """GenOwnerReference (common/job_controller.go:222-234)."""
    meta = job["metadata"]
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": KIND,
        "name": meta["name"],
        "uid": meta["uid"],
        "blockOwnerDeletion": True,
        "controller": True,
    }


def controlled_by(obj: Json, job: Json) -> bool:
    uid = job["metadata"].get("uid")
    return any(
        ref.get("controller") and ref.get("uid") == uid
        for ref in obj.get("metadata", {}).get("ownerReferences") or []
    )


def port_of(job: Json, rtype: str) -> int | None:
    """getPortFromPyTorchJob (envvar.go:155-168)."""
    replica = job["spec"]["pytorchReplicaSpecs"].get(rtype) or {}
    for container in replica.get("template", {}).get("spec", {}).get("containers") or []:
        if container.get("name") == DEFAULT_CONTAINER:
            for port in container.get("ports") or []:
                if port.get("name") == DEFAULT_PORT_NAME:
                    return int(port["containerPort"])
    return None


def total_replicas(job: Json) -> int:
    return sum(int(r.get("replicas") or 0) for r in job["spec"]["pytorchReplicaSpecs"].values())


def replica_env(job: Json, rtype: str, index: int) -> list[Json]:
    """setPodEnv (envvar.go:43-127) with master.go:33-62 and elastic.go:68-184; job defaulted."""
    spec = job["spec"]
    name = job["metadata"]["name"]
    replicas = spec["pytorchReplicaSpecs"]
    env: list[Json] = [{"name": "PYTHONUNBUFFERED", "value": "1"}]
    nproc = spec.get("nprocPerNode")
    try:
        nproc_int = int(nproc) if nproc is not None else 1
    except ValueError:
        nproc_int = 1  # getNprocPerNodeInt: a non-integer counts as 1
    if replicas.get(MASTER) is not None:
        master_port = port_of(job, MASTER)
        if master_port is None:
            raise ValueError("port not found")
        master_addr = replica_name(name, MASTER, 0)
        env += [
            {"name": "MASTER_PORT", "value": str(master_port)},
            {"name": "PET_MASTER_PORT", "value": str(master_port)},
            {"name": "MASTER_ADDR", "value": master_addr},
            {"name": "PET_MASTER_ADDR", "value": master_addr},
        ]
        rank = index + 1 if rtype == WORKER else index
        env += [
            {"name": "WORLD_SIZE", "value": str(total_replicas(job) * nproc_int)},
            {"name": "RANK", "value": str(rank)},
            {"name": "PET_NODE_RANK", "value": str(rank)},
        ]
    if nproc is not None:
        env.append({"name": "PET_NPROC_PER_NODE", "value": str(nproc)})
    elastic = spec.get("elasticPolicy")
    if elastic is None:
        env.append({"name": "PET_NNODES", "value": str(total_replicas(job))})
        return env
    host = elastic.get("rdzvHost") or f"{name}-worker-0"
    port = elastic.get("rdzvPort")
    if port is None:
        port = port_of(job, WORKER)
        if port is None:
            raise ValueError("port not found")
    env.append({"name": "PET_RDZV_ENDPOINT", "value": f"{host}:{port}"})
    env.append({"name": "PET_RDZV_BACKEND", "value": str(elastic.get("rdzvBackend") or "c10d")})
    if elastic.get("minReplicas") is None and elastic.get("maxReplicas") is None:
        nnodes = str(replicas.get(WORKER, {}).get("replicas"))
    else:
        nnodes = f"{elastic.get('minReplicas')}:{elastic.get('maxReplicas')}"
    env.append({"name": "PET_NNODES", "value": nnodes})
    if elastic.get("maxRestarts") is not None:
        env.append({"name": "PET_MAX_RESTARTS", "value": str(elastic["maxRestarts"])})
    if elastic.get("nProcPerNode") is not None:
        env.append({"name": "PET_NPROC_PER_NODE", "value": str(elastic["nProcPerNode"])})
    if elastic.get("rdzvId") is not None:
        env.append({"name": "PET_RDZV_ID", "value": str(elastic["rdzvId"])})
    if elastic.get("rdzvConf") is not None and elastic["rdzvConf"]:
        conf = ",".join(f"{c.get('key')}={c.get('value')}" for c in elastic["rdzvConf"])
        env.append({"name": "PET_RDZV_CONF", "value": conf})
    if elastic.get("standalone"):
        env.append({"name": "PET_STANDALONE", "value": ""})
    return env


def is_master_role(replicas: Json, rtype: str, index: int) -> bool:
    """IsMasterRole (pytorchjob_controller.go:499-506)."""
    if MASTER in replicas:
        return rtype == MASTER
    return rtype == WORKER and index == 0


def replica_pod(job: Json, rtype: str, index: int, master_ip: str | None) -> Json:
    """createNewPod (common/pod.go:383-474) + GetPodFromTemplate (control/pod_control.go:120-138).

    ``job`` is defaulted. ``master_ip`` adds the hostAliases entry of deliberate difference (b).
    """
    name = job["metadata"]["name"]
    replicas = job["spec"]["pytorchReplicaSpecs"]
    replica = replicas[rtype]
    template = copy.deepcopy(replica.get("template") or {})
    meta = template.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    labels.update(job_labels(name))
    labels[LABEL_REPLICA_TYPE] = rtype.lower()
    labels[LABEL_REPLICA_INDEX] = str(index)
    if is_master_role(replicas, rtype, index):
        labels[LABEL_JOB_ROLE] = "master"
    pod_spec = template.get("spec") or {}
    env = replica_env(job, rtype, index)
    for container in pod_spec.get("containers") or []:
        container["env"] = [*(container.get("env") or []), *copy.deepcopy(env)]
    policy = replica["restartPolicy"]
    # core/pod.go:81-88: ExitCode is not a pod restart policy
    pod_spec["restartPolicy"] = "Never" if policy == "ExitCode" else policy
    if master_ip:
        aliases = list(pod_spec.get("hostAliases") or [])
        aliases.append({"ip": master_ip, "hostnames": [replica_name(name, MASTER, 0)]})
        pod_spec["hostAliases"] = aliases
    pod_meta: Json = {
        "name": replica_name(name, rtype, index),
        "namespace": job["metadata"]["namespace"],
        "labels": labels,
        "ownerReferences": [owner_reference(job)],
    }
    if meta.get("annotations"):
        pod_meta["annotations"] = dict(meta["annotations"])
    if meta.get("finalizers"):
        pod_meta["finalizers"] = list(meta["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec}


def replica_service(job: Json, rtype: str, index: int) -> Json:
    """CreateNewService (common/service.go:211-273); ports: GetPortsFromJob (core/service.go:83)."""
    name = job["metadata"]["name"]
    labels = {
        **job_labels(name),
        LABEL_REPLICA_TYPE: rtype.lower(),
        LABEL_REPLICA_INDEX: str(index),
    }
    ports: dict[str, int] = {}
    replica = job["spec"]["pytorchReplicaSpecs"][rtype]
    for container in replica.get("template", {}).get("spec", {}).get("containers") or []:
        if container.get("name") == DEFAULT_CONTAINER:
            for port in container.get("ports") or []:
                ports[port.get("name") or ""] = int(port["containerPort"])
            break
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": replica_name(name, rtype, index),
            "namespace": job["metadata"]["namespace"],
            "labels": labels,
            "ownerReferences": [owner_reference(job)],
        },
        "spec": {
            "clusterIP": "None",
            "selector": dict(labels),
            "ports": [{"name": n, "port": p} for n, p in ports.items()],
        },
    }


def pod_phase(pod: Json) -> str:
    return str(pod.get("status", {}).get("phase") or "")


def is_terminating(obj: Json) -> bool:
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


def is_active(pod: Json) -> bool:
    """IsPodActive (util/k8sutil/k8sutil.go:109-113)."""
    return pod_phase(pod) not in ("Succeeded", "Failed") and not is_terminating(pod)


def replica_index(obj: Json) -> int | None:
    try:
        return int(obj.get("metadata", {}).get("labels", {}).get(LABEL_REPLICA_INDEX))
    except (TypeError, ValueError):
        return None


def of_type(objs: Iterable[Json], rtype: str) -> list[Json]:
    rt = rtype.lower()
    return [
        o for o in objs if o.get("metadata", {}).get("labels", {}).get(LABEL_REPLICA_TYPE) == rt
    ]


def past_backoff_limit(job: Json, pods: list[Json]) -> bool:
    """PastBackoffLimit (core/job.go:95-133): restarts of Running pods only, job defaulted."""
    limit = job["spec"]["runPolicy"].get("backoffLimit")
    if limit is None:
        return False
    total = 0
    for rtype, replica in job["spec"]["pytorchReplicaSpecs"].items():
        if replica.get("restartPolicy") not in ("OnFailure", "Always", "ExitCode"):
            continue
        for pod in of_type(pods, rtype):
            if pod_phase(pod) != "Running":
                continue
            status = pod.get("status", {})
            for cs in (status.get("initContainerStatuses") or []) + (
                status.get("containerStatuses") or []
            ):
                total += int(cs.get("restartCount") or 0)
    if int(limit) == 0:
        return total > 0
    return total >= int(limit)


def past_active_deadline(job: Json, status: Json, now: datetime) -> bool:
    """PastActiveDeadline (core/job.go:82-91)."""
    deadline = job["spec"]["runPolicy"].get("activeDeadlineSeconds")
    start = parse_time(status.get("startTime"))
    if deadline is None or start is None:
        return False
    return now - start >= timedelta(seconds=int(deadline))


@dataclass
class Plan:
    """What one reconcile of one job does, in order; ``status`` is None when unchanged."""

    actions: list[tuple[str, Any]] = field(default_factory=list)
    status: Json | None = None
    requeue_after: float | None = None
    skipped: str = ""

    def event(self, kind: str, why: str, message: str) -> None:
        self.actions.append(("event", (kind, why, message)))


def _delete_pods_and_services(plan: Plan, job: Json, status: Json, pods: list[Json]) -> None:
    """DeletePodsAndServices (common/job.go:43-69): cleanPodPolicy applies once finished."""
    policy = job["spec"]["runPolicy"].get("cleanPodPolicy")
    finished = is_finished(status)
    if finished and policy == "None":
        return
    for pod in pods:
        if finished and policy == "Running" and pod_phase(pod) not in ("Running", "Pending"):
            continue
        name = pod["metadata"]["name"]
        if not is_terminating(pod):  # pod_control.go:178-181: a terminating pod is skipped
            plan.actions.append(("delete_pod", name))
        plan.actions.append(("delete_service", name))  # same name as the pod (job.go:63)


def _cleanup_job(plan: Plan, job: Json, status: Json, now: datetime) -> None:
    """CleanupJob (common/job.go:420-453): ttlSecondsAfterFinished deletes the job."""
    run_policy = job["spec"]["runPolicy"]
    ttl = run_policy.get("ttlSecondsAfterFinished")
    if ttl is None or run_policy.get("suspend"):
        return
    finish = parse_time(status.get("completionTime"))
    if finish is None:
        plan.skipped = "job completion time is nil, cannot cleanup"
        return
    expire = finish + timedelta(seconds=int(ttl))
    if now > expire:
        plan.actions.append(("delete_job", None))
    else:
        plan.requeue_after = (expire - now).total_seconds()


def _exit_code(pod: Json) -> int | None:
    for cs in pod.get("status", {}).get("containerStatuses") or []:
        terminated = (cs.get("state") or {}).get("terminated")
        if cs.get("name") == DEFAULT_CONTAINER and terminated:
            return int(terminated.get("exitCode") or 0)
    return None


def _exit_key(pod: Json) -> str:
    """One ExitedWithCode event per container run (deliberate difference (d))."""
    for cs in pod.get("status", {}).get("containerStatuses") or []:
        terminated = (cs.get("state") or {}).get("terminated")
        if cs.get("name") == DEFAULT_CONTAINER and terminated:
            run = terminated.get("containerID") or terminated.get("finishedAt") or ""
            return f"{pod['metadata'].get('uid')}/{run}"
    return ""


def _master_ip(job: Json, pods: list[Json]) -> str | None:
    for pod in of_type(pods, MASTER):
        if replica_index(pod) == 0 and not is_terminating(pod):
            ip = pod.get("status", {}).get("podIP")
            return str(ip) if ip else None
    return None


def _reconcile_pods(
    plan: Plan,
    job: Json,
    status: Json,
    pods: list[Json],
    rtype: str,
    now: datetime,
    seen_exits: set[str],
) -> None:
    """ReconcilePods (common/pod.go:269-380)."""
    name = job["metadata"]["name"]
    namespace = job["metadata"]["namespace"]
    replicas = job["spec"]["pytorchReplicaSpecs"]
    replica = replicas[rtype]
    policy = replica["restartPolicy"]
    count = int(replica["replicas"])
    typed = of_type(pods, rtype)
    status.setdefault("replicaStatuses", {})[rtype] = {}  # core/status.go:25-31
    indexed = [(replica_index(p), p) for p in typed]
    size = max([count] + [i + 1 for i, _ in indexed if i is not None])
    slices: list[list[Json]] = [[] for _ in range(size)]
    for i, pod in indexed:
        if i is not None and i >= 0:
            slices[i].append(pod)
    for index, found in enumerate(slices):
        if len(found) > 1:
            log.warning("too many pods for %s %s %d", name, rtype, index)
            continue
        if not found:
            if index >= count:
                continue
            master_ip = None
            if rtype != MASTER and MASTER in replicas:
                master_ip = _master_ip(job, pods)
                if master_ip is None:  # deliberate difference (b): wait for the master's IP
                    plan.skipped = plan.skipped or f"waiting for {replica_name(name, MASTER, 0)}"
                    continue
            if replica.get("template", {}).get("spec", {}).get("restartPolicy"):
                plan.event(
                    "Warning",
                    "SetPodTemplateRestartPolicy",
                    "Restart policy in pod template will be overwritten by restart policy in "
                    "replica spec",
                )
            plan.actions.append(("create_pod", replica_pod(job, rtype, index, master_ip)))
            continue
        pod = found[0]
        pod_name = pod["metadata"]["name"]
        if index >= count and not is_terminating(pod):
            plan.actions.append(("delete_pod", pod_name))
        exit_code = _exit_code(pod)
        if exit_code is not None:
            key = _exit_key(pod)
            if key not in seen_exits:
                seen_exits.add(key)
                plan.event(
                    "Normal",
                    "ExitedWithCode",
                    f"Pod: {namespace}.{pod_name} exited with code {exit_code}",
                )
        code = 0xBEEF if exit_code is None else exit_code  # common/pod.go:340 magic number
        if pod_phase(pod) == "Failed":
            retryable = code >= 128  # train_util.go:24-26
            if (policy == "ExitCode" and retryable) or policy in ("OnFailure", "Always"):
                if not is_terminating(pod):
                    plan.actions.append(("delete_pod", pod_name))
                msg = f"job {name} is restarting because {rtype} replica(s) failed."
                plan.event("Warning", job_reason("Restarting"), msg)
                update_conditions(status, "Restarting", "True", job_reason("Restarting"), msg, now)
            elif policy == "ExitCode":
                msg = f'job "{name}" is failing because "{rtype}" replica(s) failed.'
                plan.event("Warning", job_reason("Failed"), msg)
                update_conditions(status, "Failed", "True", job_reason("Failed"), msg, now)
        counts = status["replicaStatuses"][rtype]  # core/status.go:34-50
        phase = pod_phase(pod)
        if phase == "Running":
            slot = "failed" if is_terminating(pod) else "active"
            counts[slot] = counts.get(slot, 0) + 1
        elif phase == "Succeeded":
            counts["succeeded"] = counts.get("succeeded", 0) + 1
        elif phase == "Failed":
            counts["failed"] = counts.get("failed", 0) + 1


def _reconcile_services(plan: Plan, job: Json, services: list[Json], rtype: str) -> None:
    """ReconcileServices (common/service.go:157-203)."""
    count = int(job["spec"]["pytorchReplicaSpecs"][rtype]["replicas"])
    typed = of_type(services, rtype)
    have: dict[int, list[Json]] = {}
    for svc in typed:
        i = replica_index(svc)
        if i is not None:
            have.setdefault(i, []).append(svc)
    for index in range(max([count] + [i + 1 for i in have])):
        found = have.get(index, [])
        if not found and index < count:
            plan.actions.append(("create_service", replica_service(job, rtype, index)))
        elif len(found) == 1 and index >= count and not is_terminating(found[0]):
            plan.actions.append(("delete_service", found[0]["metadata"]["name"]))


def _update_job_status(plan: Plan, job: Json, status: Json, now: datetime) -> None:
    """UpdateJobStatus (pytorchjob_controller.go:343-447)."""
    name = job["metadata"]["name"]
    namespace = job["metadata"]["namespace"]
    replicas = job["spec"]["pytorchReplicaSpecs"]
    if not status.get("startTime"):
        status["startTime"] = rfc3339(now)
    statuses = status.setdefault("replicaStatuses", {})
    for rtype in replica_order(replicas):  # deliberate difference (e)
        statuses.setdefault(rtype, {})["selector"] = selector_string(name, rtype)
    has_master = MASTER in replicas
    for rtype in replica_order(replicas):
        replica = replicas[rtype]
        counts = statuses[rtype]
        succeeded = int(counts.get("succeeded", 0))
        running = int(counts.get("active", 0))
        failed = int(counts.get("failed", 0))
        wanted = int(replica["replicas"])
        expected = wanted - succeeded
        if has_master:
            if rtype == MASTER:
                if running > 0:
                    msg = f"PyTorchJob {name} is running."
                    update_conditions(status, "Running", "True", job_reason("Running"), msg, now)
                if expected == 0:
                    msg = f"PyTorchJob {name} is successfully completed."
                    plan.event("Normal", job_reason("Succeeded"), msg)
                    status.setdefault("completionTime", rfc3339(now))
                    update_conditions(
                        status, "Succeeded", "True", job_reason("Succeeded"), msg, now
                    )
                    return
        elif rtype == WORKER:
            elastic = job["spec"].get("elasticPolicy") is not None
            if expected == 0 or (elastic and succeeded > 0):
                msg = f"PyTorchJob {namespace}/{name} successfully completed."
                plan.event("Normal", job_reason("Succeeded"), msg)
                status.setdefault("completionTime", rfc3339(now))
                update_conditions(status, "Succeeded", "True", job_reason("Succeeded"), msg, now)
            elif running > 0:
                msg = f"PyTorchJob {namespace}/{name} is running."
                update_conditions(status, "Running", "True", job_reason("Running"), msg, now)
        if failed > 0 and wanted > succeeded + running:
            if replica["restartPolicy"] != "Never":
                msg = f"PyTorchJob {name} is restarting because {failed} {rtype} replica(s) failed."
                plan.event("Warning", job_reason("Restarting"), msg)
                update_conditions(status, "Restarting", "True", job_reason("Restarting"), msg, now)
            else:
                msg = f"PyTorchJob {name} is failed because {failed} {rtype} replica(s) failed."
                plan.event("Normal", job_reason("Failed"), msg)
                status.setdefault("completionTime", rfc3339(now))
                update_conditions(status, "Failed", "True", job_reason("Failed"), msg, now)


def _until_deadline(job: Json, status: Json, now: datetime) -> float | None:
    deadline = job["spec"]["runPolicy"].get("activeDeadlineSeconds")
    start = parse_time(status.get("startTime"))
    if deadline is None or start is None or is_finished(status):
        return None
    return max(0.0, (start + timedelta(seconds=int(deadline)) - now).total_seconds())


def plan_reconcile(
    raw_job: Json,
    pods: list[Json],
    services: list[Json],
    now: datetime,
    seen_exits: set[str] | None = None,
) -> Plan:
    """One Reconcile (pytorchjob_controller.go:124-179 -> common/job.go:78-364), pure.

    ``pods``/``services`` may hold others' objects: only those the job controls are used.
    ``seen_exits`` remembers the container runs whose ExitedWithCode event was recorded.
    """
    plan = Plan()
    seen = set() if seen_exits is None else seen_exits
    managed_by = (raw_job.get("spec", {}).get("runPolicy") or {}).get("managedBy")
    if managed_by and managed_by != MANAGED_BY_OPERATOR:  # pytorchjob_controller.go:135-138
        plan.skipped = f"managed by {managed_by}"
        return plan
    if is_terminating(raw_job):  # pytorchjob_controller.go:149-153
        plan.skipped = "being deleted"
        return plan
    job = default_job(raw_job)
    name = job["metadata"]["name"]
    old = raw_job.get("status") or {}
    status = copy.deepcopy(old)
    # onOwnerCreateFunc (pytorchjob_controller.go:517-526) marks every job it is told of
    update_conditions(
        status, "Created", "True", job_reason("Created"), f"PyTorchJob {name} is created.", now
    )
    run_policy = job["spec"]["runPolicy"]
    replicas = job["spec"]["pytorchReplicaSpecs"]
    pods = [p for p in pods if controlled_by(p, job)]
    services = [s for s in services if controlled_by(s, job)]

    def finish() -> Plan:
        if status != old:
            plan.status = status
        return plan

    if is_finished(status):  # common/job.go:122-144
        _delete_pods_and_services(plan, job, status, pods)
        _cleanup_job(plan, job, status, now)
        if condition_true(status, "Succeeded"):
            for counts in (status.get("replicaStatuses") or {}).values():
                active = int(counts.pop("active", 0) or 0)
                if active:
                    counts["succeeded"] = int(counts.get("succeeded", 0)) + active
        return finish()

    if run_policy.get("suspend"):  # common/job.go:146-166
        _delete_pods_and_services(plan, job, status, pods)
        for counts in (status.get("replicaStatuses") or {}).values():
            counts.pop("active", None)
        msg = f"PyTorchJob {name} is suspended."
        if condition_true(status, "Running"):
            update_conditions(status, "Running", "False", job_reason("Suspended"), msg, now)
        if not condition_true(status, "Suspended"):
            update_conditions(status, "Suspended", "True", job_reason("Suspended"), msg, now)
            plan.event("Normal", job_reason("Suspended"), msg)  # deliberate difference (d)
        return finish()
    if condition_true(status, "Suspended"):  # common/job.go:167-173
        msg = f"PyTorchJob {name} is resumed."
        update_conditions(status, "Suspended", "False", job_reason("Resumed"), msg, now)
        status["startTime"] = rfc3339(now)
        plan.event("Normal", job_reason("Resumed"), msg)

    active = sum(1 for p in pods if is_active(p))  # common/job.go:176-204
    failed = sum(1 for p in pods if pod_phase(p) == "Failed")
    previous_failed = sum(
        int(c.get("failed", 0) or 0) for c in (status.get("replicaStatuses") or {}).values()
    )
    failure = ""
    limit = run_policy.get("backoffLimit")
    if limit is not None:
        new_failure = failed > previous_failed
        exceeds = (
            new_failure and active != total_replicas(job) and int(limit) < 0 + 1
        )  # previousRetry 0
        if exceeds or past_backoff_limit(job, pods):
            failure = f"Job {name} has failed because it has reached the specified backoff limit"
    if not failure and past_active_deadline(job, status, now):
        failure = f"Job {name} has failed because it was active longer than specified deadline"
    if failure:  # common/job.go:216-247
        status.setdefault("completionTime", rfc3339(now))
        plan.event("Normal", job_reason("Failed"), failure)
        update_conditions(status, "Failed", "True", job_reason("Failed"), failure, now)
        _delete_pods_and_services(plan, job, status, pods)
        _cleanup_job(plan, job, status, now)
        return finish()

    for rtype in replica_order(replicas):  # common/job.go:338-351
        _reconcile_pods(plan, job, status, pods, rtype, now, seen)
        _reconcile_services(plan, job, services, rtype)
    _update_job_status(plan, job, status, now)
    until = _until_deadline(job, status, now)
    if until is not None:
        plan.requeue_after = until
    return finish()


# --------------------------------------------------------------------------------------------
# The controller: caches fed by list+watch, a work queue, the plan carried out.
# --------------------------------------------------------------------------------------------


class ApiError(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"{status}: {body[:300]}")
        self.status = status
        self.body = body


def _owner_key(obj: Json) -> JobKey | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == KIND:
            return (obj["metadata"].get("namespace", ""), ref.get("name", ""))
    return None


def _key(obj: Json) -> JobKey:
    meta = obj.get("metadata", {})
    return (meta.get("namespace", ""), meta.get("name", ""))


class OperatorPlayer:
    """Plays the Training Operator's PyTorchJob controller against a real API server."""

    def __init__(self, kubeconfig_path: str, namespace: str | None = None) -> None:
        self.kubeconfig_path = kubeconfig_path
        self.namespace = namespace
        self._api: k8s_client.ApiClient | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._jobs: dict[JobKey, Json] = {}
        self._pods: dict[JobKey, Json] = {}
        self._services: dict[JobKey, Json] = {}
        self._synced: dict[str, asyncio.Event] = {}
        self._queue: asyncio.Queue[JobKey] = asyncio.Queue()
        self._queued: set[JobKey] = set()
        self._timers: dict[JobKey, asyncio.TimerHandle] = {}
        # (job key) -> {(kind, object name): expiry}: our creations/deletions not yet watched
        self._expected: dict[JobKey, dict[tuple[str, str], float]] = {}
        self._seen_exits: dict[JobKey, set[str]] = {}
        self._stopped = False

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self, sync_timeout: float = 60.0) -> None:
        """Start watching and reconciling; returns once the first lists are in."""
        if self._tasks:
            return
        self._stopped = False
        configuration = k8s_client.Configuration()
        await k8s_config.load_kube_config(
            config_file=self.kubeconfig_path, client_configuration=configuration
        )
        self._api = k8s_client.ApiClient(configuration)
        selector = f"{LABEL_OPERATOR}={CONTROLLER_NAME}"
        ns_path = f"/namespaces/{self.namespace}" if self.namespace else ""
        watched: list[tuple[str, str, str, dict[JobKey, Json]]] = [
            ("jobs", f"/apis/{GROUP}/{VERSION}{ns_path}/{PLURAL}", "", self._jobs),
            ("pods", f"/api/v1{ns_path}/pods", selector, self._pods),
            ("services", f"/api/v1{ns_path}/services", selector, self._services),
        ]
        for kind, path, labels, cache in watched:
            self._synced[kind] = asyncio.Event()
            self._tasks.append(
                asyncio.create_task(self._watch(kind, path, labels, cache), name=f"watch-{kind}")
            )
        try:
            async with asyncio.timeout(sync_timeout):
                for event in self._synced.values():
                    await event.wait()
        except BaseException:
            await self.stop()
            raise
        self._tasks.append(asyncio.create_task(self._work(), name="reconcile"))
        self._tasks.append(asyncio.create_task(self._resync(), name="resync"))

    async def stop(self) -> None:
        """Cancel every task and close the client; safe to call twice or after a failed start."""
        self._stopped = True
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        api, self._api = self._api, None
        if api is not None:
            await api.close()

    async def __aenter__(self) -> OperatorPlayer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- HTTP -----------------------------------------------------------------------------------

    async def _open(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: Json | None = None,
        timeout: aiohttp.ClientTimeout | None = None,
    ) -> aiohttp.ClientResponse:
        assert self._api is not None, "the player is not started"
        response: aiohttp.ClientResponse = await self._api.call_api(
            path,
            method,
            query_params=query or [],
            header_params={"Accept": "application/json", "Content-Type": "application/json"},
            body=body,
            auth_settings=["BearerToken"],
            _preload_content=False,
            _request_timeout=timeout or aiohttp.ClientTimeout(total=30),
        )
        if not 200 <= response.status <= 299:
            text = (await response.read()).decode("utf-8", "replace")
            response.release()
            raise ApiError(response.status, text)
        return response

    async def _call(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: Json | None = None,
    ) -> Json:
        response = await self._open(method, path, query, body)
        try:
            data: Json = json.loads(await response.read())
        finally:
            response.release()
        return data

    # -- list + watch ---------------------------------------------------------------------------

    async def _watch(self, kind: str, path: str, labels: str, cache: dict[JobKey, Json]) -> None:
        failures = 0
        while True:
            try:
                query = [("labelSelector", labels)] if labels else []
                listing = await self._call("GET", path, query)
                version = str(listing["metadata"].get("resourceVersion") or "")
                fresh = {_key(o): o for o in listing.get("items") or []}
                gone = [cache[k] for k in set(cache) - set(fresh)]
                cache.clear()
                cache.update(fresh)
                for obj in [*fresh.values(), *gone]:
                    self._observe(kind, "SYNC", obj)
                for obj in gone:
                    self._observe(kind, "DELETED", obj)
                self._synced[kind].set()
                failures = 0
                while True:  # watch on from the last version; 410 Gone sends us back to list
                    version = await self._stream(kind, path, labels, version, cache)
            except asyncio.CancelledError:
                raise
            except (ApiError, aiohttp.ClientError, TimeoutError, ValueError) as err:
                if isinstance(err, ApiError) and err.status == 410:
                    log.info("%s watch expired (410 Gone); listing again", kind)
                    continue
                failures += 1
                log.warning("%s list/watch failed (%s); retrying", kind, err)
                # the API server may be restarting: back off, capped, before listing again
                await asyncio.sleep(min(5.0, 0.2 * 2**failures))

    async def _stream(
        self, kind: str, path: str, labels: str, version: str, cache: dict[JobKey, Json]
    ) -> str:
        query = [
            ("watch", "true"),
            ("resourceVersion", version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(WATCH_SECONDS)),
        ]
        if labels:
            query.append(("labelSelector", labels))
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=WATCH_SECONDS + 30)
        response = await self._open("GET", path, query, timeout=timeout)
        buffer = b""
        try:
            async for chunk in response.content.iter_any():
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    what, obj = event.get("type"), event.get("object") or {}
                    if what == "ERROR":
                        raise ApiError(int(obj.get("code") or 500), json.dumps(obj))
                    version = str(obj.get("metadata", {}).get("resourceVersion") or version)
                    if what == "BOOKMARK":
                        continue
                    if what == "DELETED":
                        cache.pop(_key(obj), None)
                    else:
                        cache[_key(obj)] = obj
                    self._observe(kind, str(what), obj)
        finally:
            response.release()
        return version

    def _observe(self, kind: str, what: str, obj: Json) -> None:
        """A watched change: settle expectations and queue the job concerned."""
        if kind == "jobs":
            key = _key(obj)
            if what == "DELETED":
                self._seen_exits.pop(key, None)
                self._expected.pop(key, None)
                timer = self._timers.pop(key, None)
                if timer is not None:
                    timer.cancel()
            self.enqueue(key)
            return
        owner = _owner_key(obj)
        if owner is None:
            return
        expected = self._expected.get(owner)
        if expected:
            name = obj["metadata"]["name"]
            if what in ("ADDED", "SYNC"):
                expected.pop((f"create_{kind}", name), None)
            if what == "DELETED":
                expected.pop((f"delete_{kind}", name), None)
        self.enqueue(owner)

    # -- work queue -----------------------------------------------------------------------------

    def enqueue(self, key: JobKey) -> None:
        if self._stopped or key in self._queued:
            return
        self._queued.add(key)
        self._queue.put_nowait(key)

    def _enqueue_after(self, key: JobKey, delay: float) -> None:
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(max(0.0, delay), self._fire, key)

    def _fire(self, key: JobKey) -> None:
        self._timers.pop(key, None)
        self.enqueue(key)

    async def _resync(self) -> None:
        while True:
            await asyncio.sleep(RESYNC_SECONDS)
            for key in list(self._jobs):
                self.enqueue(key)

    async def _work(self) -> None:
        while True:
            key = await self._queue.get()
            self._queued.discard(key)
            try:
                await self._reconcile(key)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("reconcile of %s/%s failed; retrying", *key)
                self._enqueue_after(key, 1.0)

    # -- reconcile ------------------------------------------------------------------------------

    def _expectations_met(self, key: JobKey) -> bool:
        """SatisfiedExpectations (common/util.go / expectation.go): our own changes are seen."""
        expected = self._expected.get(key)
        if not expected:
            return True
        now = time.monotonic()
        for item, expiry in list(expected.items()):
            if expiry < now:
                del expected[item]
        return not expected

    async def _reconcile(self, key: JobKey) -> None:
        job = self._jobs.get(key)
        if job is None:
            return
        if not self._expectations_met(key):
            log.debug("%s/%s waits for its own changes: %s", *key, sorted(self._expected[key]))
            return
        namespace = key[0]
        pods = [p for k, p in self._pods.items() if k[0] == namespace]
        services = [s for k, s in self._services.items() if k[0] == namespace]
        seen = self._seen_exits.setdefault(key, set())
        plan = plan_reconcile(job, pods, services, datetime.now(UTC), seen)
        if plan.skipped:
            log.debug("%s/%s: %s", *key, plan.skipped)
        for action, arg in plan.actions:
            if key not in self._jobs:
                return  # deleted meanwhile: the garbage collector has the rest
            await self._carry_out(job, action, arg)
        if plan.status is not None:
            log.debug("%s/%s status: %s", *key, [c["type"] for c in plan.status["conditions"]])
            await self._write_status(key, job, plan.status)
        if plan.requeue_after is not None:
            self._enqueue_after(key, plan.requeue_after + 0.05)

    def _expect(self, key: JobKey, action: str, name: str) -> None:
        self._expected.setdefault(key, {})[(action, name)] = time.monotonic() + EXPECTATION_SECONDS

    def _unexpect(self, key: JobKey, action: str, name: str) -> None:
        self._expected.get(key, {}).pop((action, name), None)

    async def _carry_out(self, job: Json, action: str, arg: Any) -> None:
        key = _key(job)
        namespace = key[0]
        core = f"/api/v1/namespaces/{namespace}"
        try:
            if action == "event":
                await self._record(job, *arg)
            elif action == "create_pod":
                await self._create(job, f"{core}/pods", arg, "Pod", "create_pods")
            elif action == "create_service":
                await self._create(job, f"{core}/services", arg, "Service", "create_services")
            elif action == "delete_pod":
                await self._delete(job, f"{core}/pods/{arg}", arg, "Pod", "delete_pods")
            elif action == "delete_service":
                if (namespace, arg) in self._services:
                    await self._delete(
                        job, f"{core}/services/{arg}", arg, "Service", "delete_services"
                    )
            elif action == "delete_job":
                path = f"/apis/{GROUP}/{VERSION}/namespaces/{namespace}/{PLURAL}/{key[1]}"
                await self._call("DELETE", path)
        except ApiError as err:
            if err.status == 404:
                return  # gone already, or the job's namespace is being removed
            raise

    async def _create(self, job: Json, path: str, body: Json, kind: str, expect: str) -> None:
        name = body["metadata"]["name"]
        # expected before the call: the watch may bring the object before the call returns
        self._expect(_key(job), expect, name)
        try:
            await self._call("POST", path, body=body)
        except ApiError as err:
            self._unexpect(_key(job), expect, name)
            if err.status == 409:
                return  # our cache is behind: the watch brings it
            await self._record(job, "Warning", f"FailedCreate{kind}", f"Error creating: {err}")
            raise
        # control/pod_control.go:162, control/service_control.go:106
        await self._record(
            job, "Normal", f"SuccessfulCreate{kind}", f"Created {kind.lower()}: {name}"
        )

    async def _delete(self, job: Json, path: str, name: str, kind: str, expect: str) -> None:
        self._expect(_key(job), expect, name)
        try:
            await self._call("DELETE", path)
        except ApiError as err:
            self._unexpect(_key(job), expect, name)
            if err.status == 404:
                return
            await self._record(job, "Warning", f"FailedDelete{kind}", f"Error deleting: {err}")
            raise
        # control/pod_control.go:190, control/service_control.go:133
        await self._record(
            job, "Normal", f"SuccessfulDelete{kind}", f"Deleted {kind.lower()}: {name}"
        )

    async def _record(self, job: Json, kind: str, why: str, message: str) -> None:
        """A core/v1 Event on the job, as client-go's recorder writes one (name <job>.<ns hex>)."""
        meta = job["metadata"]
        stamp = rfc3339(datetime.now(UTC))
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{meta['name']}.{time.time_ns():x}",
                "namespace": meta["namespace"],
            },
            "involvedObject": {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": KIND,
                "name": meta["name"],
                "namespace": meta["namespace"],
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
            },
            "reason": why,
            "message": message,
            "type": kind,
            "source": {"component": CONTROLLER_NAME},
            "reportingComponent": CONTROLLER_NAME,
            "reportingInstance": "",
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        try:
            await self._call("POST", f"/api/v1/namespaces/{meta['namespace']}/events", body=body)
        except ApiError as err:  # events are best effort, as client-go's recorder
            log.warning("event %s on %s not recorded: %s", why, meta["name"], err)

    async def _write_status(self, key: JobKey, job: Json, status: Json) -> None:
        """UpdateJobStatusInApiServer (pytorchjob_controller.go:458-486): PUT .../status."""
        namespace, name = key
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{namespace}/{PLURAL}/{name}/status"
        body = {**job, "status": status}
        try:
            written = await self._call("PUT", path, body=body)
        except ApiError as err:
            if err.status == 404:
                return  # the job was deleted meanwhile
            if err.status == 409:  # someone wrote first: read it again and reconcile again
                try:
                    fresh = await self._call("GET", path[: -len("/status")])
                except ApiError as again:
                    if again.status == 404:
                        return
                    raise
                self._keep_newer(key, fresh)
                self.enqueue(key)
                return
            raise
        self._keep_newer(key, written)

    def _keep_newer(self, key: JobKey, obj: Json) -> None:
        current = self._jobs.get(key)
        if current is None:
            return
        try:
            newer = int(obj["metadata"]["resourceVersion"]) >= int(
                current["metadata"]["resourceVersion"]
            )
        except (KeyError, ValueError):
            newer = True
        if newer:
            self._jobs[key] = obj


# --------------------------------------------------------------------------------------------


async def _run_forever(kubeconfig: str, namespace: str | None) -> None:
    player = OperatorPlayer(kubeconfig, namespace)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await player.start()
    log.info("playing the Training Operator (namespace %s)", namespace or "all")
    try:
        await stop.wait()
    finally:
        await player.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("kubeconfig", help="path of a kubeconfig to the cluster")
    parser.add_argument("--namespace", default=None, help="one namespace (default: all)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_run_forever(args.kubeconfig, args.namespace))


if __name__ == "__main__":
    main()
