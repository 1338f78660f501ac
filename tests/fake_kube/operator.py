"""The Training Operator v1.9.4 as its API objects show it, and the steps of the kubelet
under it that tests drive on a PyTorchJob's pods (the kubelet itself: ``kubelet.py``).

Written from ``kubeflow/trainer`` at tag v1.9.4 (commit 4445c12a), never from our own
code: nothing here imports ``jupyter_pytorchjob``, so the tests can catch our mistakes
in the environment, the webhook rules or the status mapping. ``file:line`` citations
are under ``pkg/``. The tables below are the operator's values; the functions apply
them the way ``controller.v1/common/job.go`` ``ReconcileJobs`` does.

The fake reconciles on the events a real controller watches (job created or updated,
and after every hook that changes a pod) until nothing changes, as the watch-triggered
requeues would. What the kubelet and the clock do is stepped by tests:

- ``run``: pods scheduled, ``init-pytorch`` done, containers running;
- ``succeed``: every ``pytorch`` container exits 0 (``Always`` restarts it, as the
  kubelet does);
- ``exit``: one replica's container exits; the kubelet restarts it in place under
  ``OnFailure``/``Always`` (the first crash at once, later ones after CrashLoopBackOff's
  10 s doubling to 5 min), or the pod ends Failed under ``Never``/``ExitCode``;
- ``back_off_over``: the back-off has passed, the container runs again;
- ``fail``: a replica's pod ends in phase Failed whatever its policy (pod
  ``restartPolicy`` Never, or evicted);
- ``elapse``: time passes for one job (``activeDeadlineSeconds``, TTL);
- ``suspend``/``resume``: ``runPolicy.suspend`` patched (an update of the job through the
  API does the same);
- ``set_unschedulable``: the scheduler cannot place a pod.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .kubelet import container_status
from .logs import parse_rfc3339, rfc3339

if TYPE_CHECKING:
    from .server import FakeKube

# -- tables from the Go code ---------------------------------------------------------------

KIND = "PyTorchJob"
MASTER, WORKER = "Master", "Worker"
CONTAINER = "pytorch"  # apis/kubeflow.org/v1/pytorch_types.go:27
PORT_NAME, PORT = "pytorchjob-port", 23456  # pytorch_types.go:25,29
LABEL = "training.kubeflow.org/"
OPERATOR_NAME = "pytorchjob-controller"  # pytorchjob_controller.go ControllerName

# apis/kubeflow.org/v1/common_types.go:25-37; GenLabels common/job_controller.go:236-242
JOB_NAME, OPERATOR = f"{LABEL}job-name", f"{LABEL}operator-name"
REPLICA_TYPE, REPLICA_INDEX, JOB_ROLE = (
    f"{LABEL}replica-type",
    f"{LABEL}replica-index",
    f"{LABEL}job-role",
)

# SetDefaults_PyTorchJob, apis/kubeflow.org/v1/pytorch_defaults.go:77-96 (in memory only)
DEFAULTS = {
    "cleanPodPolicy": "None",  # :79-81
    "replicas": 1,  # :87
    "restartPolicy": "OnFailure",  # :88, pytorch_types.go:31
    "nprocPerNode": "auto",  # :22-24, 68-74 (unless elasticPolicy.nProcPerNode)
}

# The init container of Workers when a Master exists, controller.v1/pytorch/initcontainer.go:35-46
# (image and tries are operator flags, defaults alpine:3.10 and 100), appended at :131.
INIT_IMAGE, INIT_TRIES = "alpine:3.10", 100


def init_container(job: str) -> dict[str, Any]:
    return {
        "name": "init-pytorch",
        "image": INIT_IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "resources": {
            "limits": {"cpu": "100m", "memory": "20Mi"},
            "requests": {"cpu": "50m", "memory": "10Mi"},
        },
        "command": [
            "sh",
            "-c",
            f"err=1;for i in $(seq {INIT_TRIES}); do if nslookup {job}-master-0; then err=0 && "
            "break; fi;echo waiting for master; sleep 2; done; exit $err",
        ],
    }


# Conditions: (type, reason, message), reason = PyTorchJob + util/status.go:15-28.
CONDITIONS = {
    # onOwnerCreateFunc, pytorchjob_controller.go:521-524
    "created": ("Created", "PyTorchJobCreated", "PyTorchJob {name} is created."),
    # UpdateJobStatus with a Master, pytorchjob_controller.go:385-387, 391-398
    "running": ("Running", "PyTorchJobRunning", "PyTorchJob {name} is running."),
    "succeeded": (
        "Succeeded",
        "PyTorchJobSucceeded",
        "PyTorchJob {name} is successfully completed.",
    ),
    # ... without a Master, :410-423
    "running_workers": ("Running", "PyTorchJobRunning", "PyTorchJob {ns}/{name} is running."),
    "succeeded_workers": (
        "Succeeded",
        "PyTorchJobSucceeded",
        "PyTorchJob {ns}/{name} successfully completed.",
    ),
    # a Failed pod: restartPolicy not Never, :428-433; Never, :434-442
    "restarting": (
        "Restarting",
        "PyTorchJobRestarting",
        "PyTorchJob {name} is restarting because {count} {rtype} replica(s) failed.",
    ),
    "failed": (
        "Failed",
        "PyTorchJobFailed",
        "PyTorchJob {name} is failed because {count} {rtype} replica(s) failed.",
    ),
    # ReconcilePods on a Failed pod, common/pod.go:350-373
    "recreating": (
        "Restarting",
        "PyTorchJobRestarting",
        "job {name} is restarting because {rtype} replica(s) failed.",
    ),
    "failing": (
        "Failed",
        "PyTorchJobFailed",
        'job "{name}" is failing because "{rtype}" replica(s) failed.',
    ),
    # ReconcileJobs, common/job.go:206-214
    "backoff": (
        "Failed",
        "PyTorchJobFailed",
        "Job {name} has failed because it has reached the specified backoff limit",
    ),
    "deadline": (
        "Failed",
        "PyTorchJobFailed",
        "Job {name} has failed because it was active longer than specified deadline",
    ),
    # suspend / resume, common/job.go:146-173
    "suspended": ("Suspended", "PyTorchJobSuspended", "PyTorchJob {name} is suspended."),
    "resumed": ("Suspended", "PyTorchJobResumed", "PyTorchJob {name} is resumed."),
}

# Events on the PyTorchJob: condition key or event -> (type, reason). The operator records
# success and failure as Normal, restarts as Warning (pytorchjob_controller.go:393, 412, 431,
# 436; common/pod.go:346, 364, 371; common/job.go:161, 172, 226; control/pod_control.go:162,
# 190; control/service_control.go:106, 133).
EVENTS = {
    "succeeded": ("Normal", "PyTorchJobSucceeded"),
    "succeeded_workers": ("Normal", "PyTorchJobSucceeded"),
    "restarting": ("Warning", "PyTorchJobRestarting"),
    "failed": ("Normal", "PyTorchJobFailed"),
    "recreating": ("Warning", "PyTorchJobRestarting"),
    "failing": ("Warning", "PyTorchJobFailed"),
    "backoff": ("Normal", "PyTorchJobFailed"),
    "deadline": ("Normal", "PyTorchJobFailed"),
    "suspended": ("Normal", "PyTorchJobSuspended"),
    "resumed": ("Normal", "PyTorchJobResumed"),
    "exited": ("Normal", "ExitedWithCode"),  # "Pod: {ns}.{pod} exited with code {code}"
    "created_pod": ("Normal", "SuccessfulCreatePod"),  # "Created pod: {pod}"
    "deleted_pod": ("Normal", "SuccessfulDeletePod"),  # "Deleted pod: {pod}"
    "created_service": ("Normal", "SuccessfulCreateService"),  # "Created service: {pod}"
    "deleted_service": ("Normal", "SuccessfulDeleteService"),  # "Deleted service: {pod}"
    "deleted_job": ("Normal", "SuccessfulDeletePod"),  # TTL: "Deleted job: {name}", :316-330
    # the replica's template sets restartPolicy, common/pod.go:428-434
    "template_restart_policy": ("Warning", "SetPodTemplateRestartPolicy"),
}
TEMPLATE_RESTART_POLICY_TEXT = (
    "Restart policy in pod template will be overwritten by restart policy in replica spec"
)

# Restart policies (apis/kubeflow.org/v1/common_types.go) and what the pod gets
# (core/pod.go:81-88), whether restarts count toward backoffLimit (core/job.go:102-106),
# whether a Failed pod is deleted and created again (common/pod.go:352-354; ExitCode only
# for codes >= 128, util/train/train_util.go:24-26).
RESTART_POLICIES = {
    # policy: (pod restartPolicy, counts toward backoffLimit, Failed pod recreated)
    "Always": ("Always", True, True),
    "OnFailure": ("OnFailure", True, True),
    "Never": ("Never", False, False),
    "ExitCode": ("Never", True, None),  # None: recreated when the exit code is >= 128
}

# The validating webhook, webhooks/pytorch/pytorchjob_webhook.go (no name-length rule:
# the webhook has none, trainer#1101). field.Path text: spec.pytorchReplicaSpecs[Master].
DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1035_TEXT = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
MANAGED_BY = (
    "kueue.x-k8s.io/multikueue",
    "kubeflow.org/training-operator",
)  # common/util/webhooks.go:11-13
WEBHOOK_RULES = [
    # (rule, where in the Go code)
    ("metadata.name is a DNS-1035 label of at most 63 characters", "pytorchjob_webhook.go:79-81"),
    ("runPolicy.managedBy is one of MANAGED_BY when set", "common/util/webhooks.go:15-25"),
    ("elasticPolicy needs a Worker spec", "pytorchjob_webhook.go:95-100"),
    (
        "elasticPolicy.nProcPerNode is forbidden with spec.nprocPerNode",
        "pytorchjob_webhook.go:101-108",
    ),
    ("pytorchReplicaSpecs is required", "pytorchjob_webhook.go:117-119"),
    ("replica types are Master or Worker", "pytorchjob_webhook.go:124-131"),
    ("every replica has containers, each with an image", "pytorchjob_webhook.go:133-142"),
    ("a container named pytorch in every replica", "pytorchjob_webhook.go:143-150"),
    (
        "Master.replicas is set and 1; Worker.replicas >= 1 when set",
        "pytorchjob_webhook.go:151-157",
    ),
]


def default_validator(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    """The webhook's rules (``WEBHOOK_RULES``) as ``(field path, message)``, worded as
    apimachinery's field errors. The server checks the CRD schema before it. Create and
    update check the same: ``ValidateUpdate`` gets the new object as old and new
    (pytorchjob_webhook.go:62-69), so managedBy is never checked for immutability."""
    return webhook_errors(manifest)


def webhook_errors(job: Mapping[str, Any]) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []
    name = str((job.get("metadata") or {}).get("name") or "")
    problems = []
    if len(name) > 63:
        problems.append("must be no more than 63 characters")
    if not DNS1035.match(name):
        problems.append(DNS1035_TEXT)
    if problems:
        errors.append(
            ("metadata.name", f'Invalid value: "{name}": should match: {",".join(problems)}')
        )
    spec = job.get("spec") or {}
    managed_by = (spec.get("runPolicy") or {}).get("managedBy")
    if managed_by is not None and managed_by not in MANAGED_BY:
        supported = ", ".join(f'"{m}"' for m in MANAGED_BY)
        errors.append(
            (
                "spec.runPolicy.managedBy",
                f'Unsupported value: "{managed_by}": supported values: {supported}',
            )
        )
    replicas = spec.get("pytorchReplicaSpecs")
    elastic = spec.get("elasticPolicy")
    if elastic is not None:
        if WORKER not in (replicas or {}):
            errors.append(
                (
                    f"spec.pytorchReplicaSpecs[{WORKER}]",
                    "Required value: must be configured if elastic policy is used",
                )
            )
        if elastic.get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
            errors.append(
                (
                    "spec.elasticPolicy.nProcPerNode",
                    "Forbidden: must not be used with spec.nprocPerNode",
                )
            )
    if replicas is None:
        errors.append(("spec.pytorchReplicaSpecs", "Required value: must be required"))
    for rtype, rspec in (replicas or {}).items():
        path = f"spec.pytorchReplicaSpecs[{rtype}]"
        containers_path = f"{path}.template.spec.containers"
        if rtype not in (MASTER, WORKER):
            errors.append(
                (path, f'Unsupported value: "{rtype}": supported values: "{MASTER}", "{WORKER}"')
            )
        containers = (((rspec or {}).get("template") or {}).get("spec") or {}).get(
            "containers"
        ) or []
        if not containers:
            errors.append((containers_path, "Required value: must be specified"))
        for index, container in enumerate(containers):
            if not container.get("image"):
                errors.append(
                    (f"{containers_path}[{index}].image", "Required value: must be required")
                )
        if not any(c.get("name") == CONTAINER for c in containers):
            errors.append(
                (
                    containers_path,
                    f"Required value: must have at least one container with name {CONTAINER}",
                )
            )
        count = (rspec or {}).get("replicas")
        if rtype == MASTER and count != 1:
            errors.append((f"{path}.replicas", "Forbidden: must be 1"))
        elif rtype != MASTER and count is not None and count < 1:
            errors.append((f"{path}.replicas", "Forbidden: must be at least 1"))
    return errors


# -- the operator's defaulting and environment ---------------------------------------------


def defaulted(job: Mapping[str, Any]) -> dict[str, Any]:
    """The job as the controller sees it after ``r.Scheme.Default`` (pytorch_defaults.go)."""
    job = copy.deepcopy(dict(job))
    spec = job.setdefault("spec", {})
    run_policy = spec.setdefault("runPolicy", {})
    run_policy.setdefault("cleanPodPolicy", DEFAULTS["cleanPodPolicy"])
    for rspec in (spec.get("pytorchReplicaSpecs") or {}).values():
        if rspec.get("replicas") is None:
            rspec["replicas"] = DEFAULTS["replicas"]
        rspec["restartPolicy"] = rspec.get("restartPolicy") or DEFAULTS["restartPolicy"]
        pod = rspec.setdefault("template", {}).setdefault("spec", {})
        containers = pod.get("containers") or []
        index = next((i for i, c in enumerate(containers) if c.get("name") == CONTAINER), 0)
        if containers and not any(
            p.get("name") == PORT_NAME for p in containers[index].get("ports") or []
        ):
            containers[index]["ports"] = [
                *(containers[index].get("ports") or []),
                {"name": PORT_NAME, "containerPort": PORT},
            ]  # defaulting_utils.go:28-34
    elastic = spec.get("elasticPolicy")
    if elastic is not None:  # pytorch_defaults.go:38-55
        low, high = elastic.get("minReplicas"), elastic.get("maxReplicas")
        if low is None and high is None:
            low = high = spec["pytorchReplicaSpecs"][WORKER]["replicas"]
        elastic["minReplicas"] = high if low is None else low
        elastic["maxReplicas"] = low if high is None else high
    if (elastic is None or elastic.get("nProcPerNode") is None) and spec.get(
        "nprocPerNode"
    ) is None:
        spec["nprocPerNode"] = DEFAULTS["nprocPerNode"]  # pytorch_defaults.go:68-74
    return job


def _port(job: Mapping[str, Any], rtype: str) -> int:
    """getPortFromPyTorchJob, envvar.go:155-168 (after defaulting, always found)."""
    containers = job["spec"]["pytorchReplicaSpecs"][rtype]["template"]["spec"]["containers"]
    for container in containers:
        if container.get("name") == CONTAINER:
            for port in container.get("ports") or []:
                if port.get("name") == PORT_NAME:
                    return int(port["containerPort"])
    raise ValueError("port not found")


def operator_env(job: Mapping[str, Any], rtype: str, index: int) -> list[dict[str, str]]:
    """setPodEnv, controller.v1/pytorch/envvar.go:43-127, on the defaulted job: the env
    appended to every container of pod ``<job>-<rtype>-<index>``, in its order."""
    job = defaulted(job)
    name, spec = job["metadata"]["name"], job["spec"]
    replicas = spec["pytorchReplicaSpecs"]
    env = [("PYTHONUNBUFFERED", "1")]  # :56-60
    total = sum(int(r["replicas"]) for r in replicas.values())  # getTotalReplicas :142-148
    nproc = spec.get("nprocPerNode")
    nproc_int = (
        int(nproc) if nproc is not None and re.fullmatch(r"[+-]?\d+", str(nproc)) else 1
    )  # :132-140
    if MASTER in replicas:  # :67-97 and master.go:33-62
        port = str(_port(job, MASTER))
        addr = f"{name}-master-0"
        env += [
            ("MASTER_PORT", port),
            ("PET_MASTER_PORT", port),
            ("MASTER_ADDR", addr),
            ("PET_MASTER_ADDR", addr),
        ]
        rank = index + 1 if rtype == WORKER else index
        env += [
            ("WORLD_SIZE", str(total * nproc_int)),
            ("RANK", str(rank)),
            ("PET_NODE_RANK", str(rank)),
        ]
    if nproc is not None:  # :99-104
        env.append(("PET_NPROC_PER_NODE", str(nproc)))
    elastic = spec.get("elasticPolicy")
    if elastic is None:  # :117-123
        env.append(("PET_NNODES", str(total)))
    else:  # elastic.go:68-122
        host = elastic.get("rdzvHost") or f"{name}-worker-0"
        port = elastic.get("rdzvPort") or _port(job, WORKER)
        env.append(("PET_RDZV_ENDPOINT", f"{host}:{port}"))
        env.append(("PET_RDZV_BACKEND", str(elastic.get("rdzvBackend") or "c10d")))
        env.append(("PET_NNODES", f"{elastic['minReplicas']}:{elastic['maxReplicas']}"))
        if elastic.get("maxRestarts") is not None:
            env.append(("PET_MAX_RESTARTS", str(elastic["maxRestarts"])))
        if elastic.get("nProcPerNode") is not None:
            env.append(("PET_NPROC_PER_NODE", str(elastic["nProcPerNode"])))
        if elastic.get("rdzvId") is not None:
            env.append(("PET_RDZV_ID", str(elastic["rdzvId"])))
        if elastic.get("rdzvConf") is not None:
            env.append(
                ("PET_RDZV_CONF", ",".join(f"{c['key']}={c['value']}" for c in elastic["rdzvConf"]))
            )
        if elastic.get("standalone"):
            env.append(("PET_STANDALONE", ""))
    return [{"name": k, "value": v} for k, v in env]


def pod_name(job: str, replica: str) -> str:
    """``replica``: ``master-0``/``worker-1``, ``Master``/``Worker`` (index 0) or a pod name."""
    if replica.startswith(f"{job}-"):
        return replica
    rtype, _, index = replica.lower().partition("-")
    return f"{job}-{rtype}-{index or 0}"


# -- the simulation ------------------------------------------------------------------------


class Operator:
    """The controller (``reconcile``) and the kubelet steps tests drive (module docstring)."""

    def __init__(self, fake: FakeKube, *, enabled: bool = False) -> None:
        self.fake = fake
        self.enabled = enabled
        self._events: set[tuple[str, str, str, str]] = set()

    def enable(self) -> None:
        self.enabled = True

    def disable(self) -> None:
        self.enabled = False

    # -- helpers -------------------------------------------------------------------------

    def _job(self, ns: str, name: str) -> dict[str, Any]:
        job = self.fake.get("pytorchjobs", ns, name)
        if job is None:
            raise KeyError(f"no PyTorchJob {ns}/{name}")
        return job

    def pods(self, ns: str, job: str) -> list[dict[str, Any]]:
        return self.fake.list("pods", ns, f"{JOB_NAME}={job}")

    def _pod(self, ns: str, job: str, replica: str) -> dict[str, Any]:
        name = pod_name(job, replica)
        pod = self.fake.get("pods", ns, name)
        if pod is None:
            raise KeyError(f"no pod {ns}/{name}")
        return pod

    def _event(self, job: Mapping[str, Any], key: str, message: str) -> None:
        """Record an event once per job and text, as the event recorder aggregates repeats."""
        type_, reason = EVENTS[key]
        meta = job["metadata"]
        seen = (meta["uid"], type_, reason, message)
        if seen not in self._events:
            self._events.add(seen)
            self.fake.add_event(meta["namespace"], KIND, meta["name"], reason, message, type_)

    @staticmethod
    def _set_condition(
        status: dict[str, Any], ctype: str, cstatus: str, reason: str, message: str
    ) -> None:
        """setCondition, util/status.go:100-149."""
        conditions = status.get("conditions") or []
        if any(c["type"] == "Failed" and c["status"] == "True" for c in conditions):
            return  # :104-107
        current = next((c for c in conditions if c["type"] == ctype), None)
        if current is not None and current["status"] == cstatus and current.get("reason") == reason:
            return  # :111-114: no change, the old message and times stay
        now = rfc3339()
        since = (
            current["lastTransitionTime"]
            if current is not None and current["status"] == cstatus
            else now
        )
        kept = []
        for c in conditions:  # filterOutCondition, :126-149
            if {ctype, c["type"]} == {"Running", "Restarting"} or c["type"] == ctype:
                continue
            if ctype in ("Failed", "Succeeded") and c["type"] == "Running":
                c = c | {"status": "False"}  # the times stay as they were
            kept.append(c)
        kept.append({
            "type": ctype, "status": cstatus, "reason": reason, "message": message,
            "lastUpdateTime": now, "lastTransitionTime": since,
        })  # fmt: skip
        status["conditions"] = kept

    def _condition(
        self,
        job: Mapping[str, Any],
        status: dict[str, Any],
        key: str,
        cstatus: str = "True",
        **values: Any,
    ) -> None:
        ctype, reason, text = CONDITIONS[key]
        meta = job["metadata"]
        message = text.format(name=meta["name"], ns=meta["namespace"], **values)
        if key in EVENTS:
            self._event(job, key, message)
        self._set_condition(status, ctype, cstatus, reason, message)

    @staticmethod
    def _true(status: Mapping[str, Any], ctype: str) -> bool:
        return any(
            c["type"] == ctype and c["status"] == "True" for c in status.get("conditions") or []
        )

    def _save_status(self, job: dict[str, Any], status: dict[str, Any]) -> bool:
        if status == (job.get("status") or {}):
            return False
        old = copy.deepcopy(job)
        job["status"] = status
        self.fake._emit("pytorchjobs", "MODIFIED", job, old)
        return True

    # -- the controller ------------------------------------------------------------------

    def on_created(self, job: dict[str, Any]) -> None:
        """The create event (onOwnerCreateFunc, pytorchjob_controller.go:516-527), then
        reconciles."""
        status = copy.deepcopy(job.get("status") or {})
        self._condition(job, status, "created")
        self._save_status(job, status)
        self.reconcile(job["metadata"]["namespace"], job["metadata"]["name"])

    def on_updated(self, job: dict[str, Any]) -> None:
        """An update of the job (e.g. ``runPolicy.suspend``) is reconciled."""
        self.reconcile(job["metadata"]["namespace"], job["metadata"]["name"])

    def create_pods(self, ns: str, name: str) -> list[dict[str, Any]]:
        """The operator picks the job up now (an operator that starts lists every job and
        gets a create event for each): Created, then a reconcile. Returns the pods."""
        self.on_created(self._job(ns, name))
        return self.pods(ns, name)

    def reconcile(self, ns: str, name: str) -> None:
        """``ReconcileJobs`` until nothing changes, as the controller's watches requeue it."""
        for _ in range(8):
            job = self.fake.get("pytorchjobs", ns, name)
            if (
                job is None
                or job["metadata"].get("deletionTimestamp")
                or not self._reconcile_once(job)
            ):
                return

    def _reconcile_once(self, stored: dict[str, Any]) -> bool:
        """common/job.go:78-364 for one job; True if it changed anything."""
        job = defaulted(stored)
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        spec, run_policy = job["spec"], job["spec"]["runPolicy"]
        replicas = spec["pytorchReplicaSpecs"]
        status = copy.deepcopy(stored.get("status") or {})
        pods = self.pods(ns, name)
        changed = False

        if self._true(status, "Succeeded") or self._true(status, "Failed"):  # :122-144
            changed |= self._clean_up(stored, run_policy, pods, finished=True)
            if self._true(status, "Succeeded"):
                for entry in (status.get("replicaStatuses") or {}).values():
                    entry["succeeded"] = entry.get("succeeded", 0) + entry.pop("active", 0)
                    if not entry["succeeded"]:
                        entry.pop("succeeded")
            changed |= self._save_status(stored, status)
            return self._ttl(stored, run_policy, status) or changed

        if run_policy.get("suspend"):  # :146-166
            changed |= self._clean_up(stored, run_policy, pods, finished=False)
            for entry in (status.get("replicaStatuses") or {}).values():
                entry.pop("active", None)
            if self._true(status, "Running"):
                text = CONDITIONS["suspended"][2].format(name=name)
                self._set_condition(status, "Running", "False", "PyTorchJobSuspended", text)
            if not self._true(status, "Suspended"):
                self._condition(stored, status, "suspended")
            else:
                self._event(stored, "suspended", CONDITIONS["suspended"][2].format(name=name))
            return self._save_status(stored, status) or changed
        if self._true(status, "Suspended"):  # :167-173
            self._condition(stored, status, "resumed", cstatus="False")
            status["startTime"] = rfc3339()

        active = sum(1 for p in pods if p["status"].get("phase") == "Running")  # FilterActivePods
        failed = sum(1 for p in pods if p["status"].get("phase") == "Failed")
        total = sum(int(r["replicas"]) for r in replicas.values())
        previously_failed = sum(
            e.get("failed", 0) for e in (status.get("replicaStatuses") or {}).values()
        )
        exceeded = None
        limit = run_policy.get("backoffLimit")
        # :192-204, exceedsBackoffLimit with the work queue's retries at 0, or PastBackoffLimit
        retries = 0
        new_failure = failed > previously_failed and active != total
        if limit is not None and (
            (new_failure and retries + 1 > limit) or self._past_backoff_limit(replicas, pods, limit)
        ):
            exceeded = "backoff"
        deadline = run_policy.get("activeDeadlineSeconds")
        if (
            exceeded is None and deadline is not None and status.get("startTime")
        ):  # core/job.go:82-91
            started = parse_rfc3339(status["startTime"]) / 1e9
            if time.time() - started >= deadline:
                exceeded = "deadline"
        if exceeded:  # :216-247
            status.setdefault("completionTime", rfc3339())
            self._condition(stored, status, exceeded)
            self._save_status(stored, status)
            self._clean_up(stored, run_policy, pods, finished=True)
            self._ttl(stored, run_policy, status)
            return True

        statuses: dict[str, Any] = {}
        for rtype, rspec in sorted(replicas.items(), key=lambda item: item[0] != MASTER):
            entry = statuses.setdefault(
                rtype, {}
            )  # initializeReplicaStatuses, core/status.go:25-31
            changed |= self._reconcile_pods(stored, job, status, pods, rtype, rspec, entry)
            changed |= self._reconcile_services(stored, job, rtype, rspec)
        for rtype, entry in statuses.items():
            labels = {JOB_NAME: name, OPERATOR: OPERATOR_NAME, REPLICA_TYPE: rtype.lower()}
            entry["selector"] = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        status["replicaStatuses"] = statuses
        self._update_job_status(stored, job, status)
        return self._save_status(stored, status) or changed

    @staticmethod
    def _past_backoff_limit(
        replicas: Mapping[str, Any], pods: list[dict[str, Any]], limit: int
    ) -> bool:
        """core/job.go:95-133: restarts of Running pods whose policy counts."""
        restarts = 0
        for rtype, rspec in replicas.items():
            if not RESTART_POLICIES.get(rspec["restartPolicy"], ("", False, False))[1]:
                continue
            for pod in pods:
                if pod["metadata"]["labels"].get(REPLICA_TYPE) != rtype.lower():
                    continue
                if pod["status"].get("phase") != "Running":
                    continue
                for key in ("initContainerStatuses", "containerStatuses"):
                    restarts += sum(
                        int(s.get("restartCount", 0)) for s in pod["status"].get(key) or []
                    )
        return restarts > 0 if limit == 0 else restarts >= limit

    def _reconcile_pods(
        self,
        stored: dict[str, Any],
        job: dict[str, Any],
        status: dict[str, Any],
        pods: list[dict[str, Any]],
        rtype: str,
        rspec: Mapping[str, Any],
        entry: dict[str, Any],
    ) -> bool:
        """common/pod.go:269-380."""
        ns = job["metadata"]["namespace"]
        mine = {
            int(p["metadata"]["labels"][REPLICA_INDEX]): p
            for p in pods
            if p["metadata"]["labels"].get(REPLICA_TYPE) == rtype.lower()
        }
        changed = False
        policy = rspec["restartPolicy"]
        for index in range(max([int(rspec["replicas"]), *(i + 1 for i in mine)])):
            pod = mine.get(index)
            if pod is None:
                self._create_pod(stored, job, rtype, index)
                changed = True
                continue
            if index >= int(rspec["replicas"]):
                self._delete_pod(stored, pod)
                changed = True
            main = next(
                (s for s in pod["status"].get("containerStatuses") or [] if s["name"] == CONTAINER),
                None,
            )
            code = ((main or {}).get("state") or {}).get("terminated", {}).get("exitCode")
            if code is not None:
                self._event(
                    stored, "exited", f"Pod: {ns}.{pod['metadata']['name']} exited with code {code}"
                )
            if pod["status"].get("phase") == "Failed":
                recreate = RESTART_POLICIES.get(policy, ("", False, False))[2]
                if recreate is None:
                    recreate = (code if code is not None else 0xBEEF) >= 128
                if recreate:
                    self._delete_pod(stored, pod)
                    self._condition(stored, status, "recreating", rtype=rtype)
                    changed = True
                elif policy == "ExitCode":
                    self._condition(stored, status, "failing", rtype=rtype)
            phase = pod["status"].get("phase")  # core/status.go:34-50
            key = {"Running": "active", "Succeeded": "succeeded", "Failed": "failed"}.get(
                phase or ""
            )
            if key:
                entry[key] = entry.get(key, 0) + 1
        return changed

    def _update_job_status(
        self, stored: dict[str, Any], job: dict[str, Any], status: dict[str, Any]
    ) -> None:
        """UpdateJobStatus, pytorchjob_controller.go:343-447 (replica types Master first)."""
        replicas = job["spec"]["pytorchReplicaSpecs"]
        status.setdefault("startTime", rfc3339())  # :358-367
        for rtype, rspec in sorted(replicas.items(), key=lambda item: item[0] != MASTER):
            entry = status["replicaStatuses"][rtype]
            succeeded, running, failed = (
                entry.get(k, 0) for k in ("succeeded", "active", "failed")
            )
            expected = int(rspec["replicas"]) - succeeded
            if MASTER in replicas:
                if rtype == MASTER:
                    if running > 0:
                        self._condition(stored, status, "running")
                    if expected == 0:
                        status.setdefault("completionTime", rfc3339())
                        self._condition(stored, status, "succeeded")
                        return
            elif rtype == WORKER:
                if expected == 0 or (
                    job["spec"].get("elasticPolicy") is not None and succeeded > 0
                ):
                    status.setdefault("completionTime", rfc3339())
                    self._condition(stored, status, "succeeded_workers")
                elif running > 0:
                    self._condition(stored, status, "running_workers")
            if failed > 0 and int(rspec["replicas"]) > succeeded + running:
                if rspec["restartPolicy"] != "Never":
                    self._condition(stored, status, "restarting", count=failed, rtype=rtype)
                else:
                    status.setdefault("completionTime", rfc3339())
                    self._condition(stored, status, "failed", count=failed, rtype=rtype)

    # -- pods and services -------------------------------------------------------------------

    def _owner(self, stored: Mapping[str, Any]) -> dict[str, Any]:
        meta = stored["metadata"]
        return {
            "apiVersion": "kubeflow.org/v1", "kind": KIND, "name": meta["name"],
            "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True,
        }  # fmt: skip

    def _create_pod(
        self, stored: dict[str, Any], job: dict[str, Any], rtype: str, index: int
    ) -> None:
        """createNewPod, common/pod.go:383-474; SetClusterSpec, pytorchjob_controller.go:489."""
        name, ns = job["metadata"]["name"], job["metadata"]["namespace"]
        replicas = job["spec"]["pytorchReplicaSpecs"]
        rspec = replicas[rtype]
        template = copy.deepcopy(rspec.get("template") or {})
        meta, spec = template.get("metadata") or {}, template.get("spec") or {}
        labels = {**(meta.get("labels") or {}), OPERATOR: OPERATOR_NAME, JOB_NAME: name}
        labels |= {REPLICA_TYPE: rtype.lower(), REPLICA_INDEX: str(index)}
        if (MASTER in replicas and rtype == MASTER) or (MASTER not in replicas and index == 0):
            labels[JOB_ROLE] = "master"  # IsMasterRole, pytorchjob_controller.go:499-506
        env = operator_env(stored, rtype, index)
        for container in spec.get("containers") or []:
            container["env"] = [*(container.get("env") or []), *copy.deepcopy(env)]
            for port in container.get("ports") or []:
                port.setdefault("protocol", "TCP")  # the API server's pod defaulting
        if MASTER in replicas and rtype == WORKER:
            spec["initContainers"] = [*(spec.get("initContainers") or []), init_container(name)]
        if spec.get("restartPolicy"):
            self._event(stored, "template_restart_policy", TEMPLATE_RESTART_POLICY_TEXT)
        spec["restartPolicy"] = RESTART_POLICIES[rspec["restartPolicy"]][0]
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("serviceAccountName", "default")
        spec["nodeName"] = "node-1"
        pod_name_ = f"{name}-{rtype.lower()}-{index}"
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod_name_,
                "namespace": ns,
                "labels": labels,
                "annotations": dict(meta.get("annotations") or {}),
                "ownerReferences": [self._owner(stored)],
            },
            "spec": spec,
            "status": {"phase": "Pending"},
        }
        self.fake._stored("pods", pod)
        self._event(stored, "created_pod", f"Created pod: {pod_name_}")

    def _delete_pod(self, stored: dict[str, Any], pod: dict[str, Any]) -> None:
        self.fake._delete("pods", pod)
        self._event(stored, "deleted_pod", f"Deleted pod: {pod['metadata']['name']}")

    def _reconcile_services(
        self, stored: dict[str, Any], job: dict[str, Any], rtype: str, rspec: Mapping[str, Any]
    ) -> bool:
        """ReconcileServices/CreateNewService, common/service.go:157-262: one headless
        Service per replica with the four job labels as labels and selector."""
        name, ns = job["metadata"]["name"], job["metadata"]["namespace"]
        containers = rspec["template"]["spec"].get("containers") or []
        pytorch = next((c for c in containers if c.get("name") == CONTAINER), {})
        ports = sorted(
            (p.get("name") or "", int(p["containerPort"])) for p in pytorch.get("ports") or []
        )
        changed = False
        for index in range(int(rspec["replicas"])):
            service_name = f"{name}-{rtype.lower()}-{index}"
            if self.fake.get("services", ns, service_name) is not None:
                continue
            labels = {
                OPERATOR: OPERATOR_NAME,
                JOB_NAME: name,
                REPLICA_TYPE: rtype.lower(),
                REPLICA_INDEX: str(index),
            }
            service = {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {
                    "name": service_name, "namespace": ns, "labels": labels,
                    "ownerReferences": [self._owner(stored)],
                },
                "spec": {
                    "clusterIP": "None",
                    "selector": dict(labels),
                    # ServicePort{Name, Port}; the API server fills protocol and targetPort
                    "ports": [
                        {"name": n, "port": p, "protocol": "TCP", "targetPort": p} for n, p in ports
                    ],
                },
            }  # fmt: skip
            self.fake._stored("services", service)
            self._event(stored, "created_service", f"Created service: {service_name}")
            changed = True
        return changed

    def _clean_up(
        self,
        stored: dict[str, Any],
        run_policy: Mapping[str, Any],
        pods: list[dict[str, Any]],
        *,
        finished: bool,
    ) -> bool:
        """DeletePodsAndServices, common/job.go:41-69: once finished per cleanPodPolicy
        (None: nothing; Running: Running and Pending pods; All: every pod), otherwise
        (suspended) every pod; each pod's Service goes with it."""
        policy = run_policy.get("cleanPodPolicy") or DEFAULTS["cleanPodPolicy"]
        if finished and policy == "None":
            return False
        changed = False
        for pod in pods:
            if (
                finished
                and policy == "Running"
                and pod["status"].get("phase") not in ("Running", "Pending")
            ):
                continue
            if self.fake.get("pods", pod["metadata"]["namespace"], pod["metadata"]["name"]) is None:
                continue
            self._delete_pod(stored, pod)
            service = self.fake.get(
                "services", pod["metadata"]["namespace"], pod["metadata"]["name"]
            )
            if service is not None:
                self.fake._delete("services", service)
                self._event(
                    stored, "deleted_service", f"Deleted service: {pod['metadata']['name']}"
                )
            changed = True
        return changed

    def _ttl(
        self, stored: dict[str, Any], run_policy: Mapping[str, Any], status: Mapping[str, Any]
    ) -> bool:
        """CleanupJob, common/job.go:420-453: delete the job TTL seconds after completion
        (its pods and Services go with it by garbage collection)."""
        ttl = run_policy.get("ttlSecondsAfterFinished")
        if ttl is None or run_policy.get("suspend") or not status.get("completionTime"):
            return False
        if time.time() <= parse_rfc3339(status["completionTime"]) / 1e9 + int(ttl):
            return False
        self._event(stored, "deleted_job", f"Deleted job: {stored['metadata']['name']}")
        self.fake._delete("pytorchjobs", stored)
        return True

    # -- the kubelet and the clock: test hooks -----------------------------------------------

    def run(self, ns: str, name: str) -> None:
        """Every pod Running (``init-pytorch`` Completed); then the operator reconciles."""
        self._job(ns, name)
        for pod in self.pods(ns, name):
            pname = pod["metadata"]["name"]
            if not pod["spec"].get("nodeName"):
                self._schedule(pod)
            for init in pod["spec"].get("initContainers") or []:
                entry = container_status(pod, init["name"])
                if entry is None or "terminated" not in (entry.get("state") or {}):
                    self.fake.append_log(ns, pname, init["name"], f"Name:\t{name}-master-0\n")
                    self.fake.terminate(ns, pname, init["name"], 0)
            for container in pod["spec"]["containers"]:
                entry = container_status(pod, container["name"])
                if entry is None or "running" not in (entry.get("state") or {}):
                    self.fake.kubelet.set_state(
                        pod, entry or {}, {"running": {"startedAt": rfc3339()}}
                    )
        self.reconcile(ns, name)

    def succeed(self, ns: str, name: str) -> None:
        """Every running ``pytorch`` container exits 0 (see ``exit``)."""
        for pod in self.pods(ns, name):
            entry = container_status(pod, CONTAINER)
            if entry is not None and "terminated" not in (entry.get("state") or {}):
                self._exit(pod, 0, None)
        self.reconcile(ns, name)

    def exit(
        self,
        ns: str,
        name: str,
        replica: str = "master-0",
        exit_code: int = 1,
        reason: str | None = None,
    ) -> None:
        """``replica``'s ``pytorch`` container exits with ``exit_code``. Under pod restartPolicy
        ``OnFailure`` (non-zero) or ``Always`` (any code) the kubelet restarts it in place
        (``Kubelet.crash_loop``: the first time at once, later after CrashLoopBackOff, which
        ``back_off_over`` ends); the pod stays Running. Otherwise
        the container stays terminated and the pod ends Succeeded or Failed. Then the
        operator reconciles."""
        self._exit(self._pod(ns, name, replica), exit_code, reason)
        self.reconcile(ns, name)

    def _exit(self, pod: dict[str, Any], code: int, reason: str | None) -> None:
        ns, pname = pod["metadata"]["namespace"], pod["metadata"]["name"]
        entry = container_status(pod, CONTAINER)
        if entry is None or "running" not in (entry.get("state") or {}):
            self.fake.append_log(ns, pname, CONTAINER, b"")
        self.fake.terminate(ns, pname, CONTAINER, code, reason)
        policy = pod["spec"].get("restartPolicy", "Always")
        if policy == "Always" or (policy == "OnFailure" and code != 0):
            self.fake.kubelet.crash_loop(self.fake.get("pods", ns, pname) or pod, CONTAINER)

    def back_off_over(self, ns: str, name: str, replica: str = "master-0") -> None:
        """The back-off has passed: the kubelet starts the container again."""
        self.fake.kubelet.back_off_over(self._pod(ns, name, replica), CONTAINER)
        self.reconcile(ns, name)

    def fail(
        self,
        ns: str,
        name: str,
        replica: str = "master-0",
        exit_code: int = 1,
        reason: str = "Error",
    ) -> None:
        """``replica`` exits with ``exit_code`` and its pod ends in phase Failed whatever the
        policy (as under pod restartPolicy Never, or an eviction); then the operator
        reconciles: ``Never`` fails the job, ``ExitCode`` recreates the pod for codes >= 128
        (a new pod: new uid, restarts 0, the old log gone) and fails it otherwise,
        ``OnFailure``/``Always`` recreate it. Other replicas keep running."""
        pod = self._pod(ns, name, replica)
        pname = pod["metadata"]["name"]
        entry = container_status(pod, CONTAINER)
        if entry is None or "running" not in (entry.get("state") or {}):
            self.fake.append_log(ns, pname, CONTAINER, b"")
        self.fake.terminate(ns, pname, CONTAINER, exit_code, reason)
        self.fake.set_pod_phase(ns, pname, "Failed")
        self.reconcile(ns, name)

    def elapse(self, ns: str, name: str, seconds: float) -> None:
        """``seconds`` pass for the job (its start and completion times move back), then
        the operator reconciles: ``activeDeadlineSeconds`` and the TTL are checked."""
        job = self._job(ns, name)
        old = copy.deepcopy(job)
        for key in ("startTime", "completionTime"):
            if (job.get("status") or {}).get(key):
                shifted = parse_rfc3339(job["status"][key]) - int(seconds * 1e9)
                job["status"][key] = rfc3339(shifted)
        self.fake._emit("pytorchjobs", "MODIFIED", job, old)
        self.reconcile(ns, name)

    def suspend(self, ns: str, name: str) -> None:
        """``runPolicy.suspend: true`` patched on the job; the operator reconciles."""
        self._patch_suspend(ns, name, True)

    def resume(self, ns: str, name: str) -> None:
        """``runPolicy.suspend: false``; the operator reconciles."""
        self._patch_suspend(ns, name, False)

    def _patch_suspend(self, ns: str, name: str, value: bool) -> None:
        job = self._job(ns, name)
        old = copy.deepcopy(job)
        job["spec"].setdefault("runPolicy", {})["suspend"] = value
        job["metadata"]["generation"] = int(job["metadata"].get("generation", 1)) + 1
        self.fake._emit("pytorchjobs", "MODIFIED", job, old)
        self.reconcile(ns, name)

    def set_unschedulable(
        self,
        ns: str,
        pod: str,
        message: str = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
    ) -> None:
        """The scheduler cannot place ``pod``: no node, PodScheduled False, and a
        FailedScheduling event."""
        obj = self.fake.get("pods", ns, pod)
        if obj is None:
            raise KeyError(f"no pod {ns}/{pod}")
        old = copy.deepcopy(obj)
        obj["spec"].pop("nodeName", None)
        obj["status"] = {
            "phase": "Pending",
            "qosClass": obj["status"].get("qosClass", "BestEffort"),
            "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "message": message, "lastProbeTime": None, "lastTransitionTime": rfc3339(),
            }],
        }  # fmt: skip
        self.fake._emit("pods", "MODIFIED", obj, old)
        self.fake.add_event(ns, "Pod", pod, "FailedScheduling", message, "Warning")

    def _schedule(self, pod: dict[str, Any]) -> None:
        pod["spec"]["nodeName"] = "node-1"
        pod["status"].pop("conditions", None)
        self.fake.kubelet.init_pod(pod)
