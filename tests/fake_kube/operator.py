"""The Training Operator's visible behaviour (``shared/notes/operator.md`` sections 5, 6, 8),
stepped explicitly by tests: ``create_pods`` (automatic on create when enabled), ``run``,
``succeed``, ``fail``, ``set_unschedulable``."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from jupyter_pytorchjob.job.environment import DEFAULT_PORT, PORT_NAME, replica_env
from jupyter_pytorchjob.job.webhook import check_manifest

from .logs import rfc3339

if TYPE_CHECKING:
    from .server import FakeKube

LABEL = "training.kubeflow.org/"
INIT_IMAGE = "alpine:3.10"
UNSCHEDULABLE = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."


def default_validator(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    """The operator's webhook rules, plus the CRD schema when ``../shared/crds`` is there."""
    errors = [(e.field, e.message) for e in check_manifest(manifest)]
    try:
        from tests.crd import lenient_validator

        validator = lenient_validator()
    except (ImportError, FileNotFoundError):
        return errors
    for err in validator.iter_errors(manifest):
        path = ".".join(str(p) for p in err.absolute_path)
        errors.append((path or "<root>", err.message))
    return errors


def pod_name(job: str, replica: str) -> str:
    """``replica``: ``master-0``/``worker-1``, ``Master``/``Worker`` (index 0) or a pod name."""
    if replica.startswith(f"{job}-"):
        return replica
    rtype, _, index = replica.lower().partition("-")
    return f"{job}-{rtype}-{index or 0}"


class Operator:
    def __init__(self, fake: FakeKube, *, enabled: bool = False) -> None:
        self.fake = fake
        self.enabled = enabled

    def enable(self) -> None:
        self.enabled = True

    def disable(self) -> None:
        self.enabled = False

    # -- helpers -----------------------------------------------------------------------

    def _job(self, ns: str, name: str) -> dict[str, Any]:
        job = self.fake.get("pytorchjobs", ns, name)
        if job is None:
            raise KeyError(f"no PyTorchJob {ns}/{name}")
        return job

    def pods(self, ns: str, job: str) -> list[dict[str, Any]]:
        return self.fake.list("pods", ns, f"{LABEL}job-name={job}")

    @staticmethod
    def _labels(job: str, rtype: str, index: int, master_role: bool) -> dict[str, str]:
        labels = {
            f"{LABEL}operator-name": "pytorchjob-controller",
            f"{LABEL}job-name": job,
            f"{LABEL}replica-type": rtype.lower(),
            f"{LABEL}replica-index": str(index),
        }
        if master_role:
            labels[f"{LABEL}job-role"] = "master"
        return labels

    def _update_job(self, job: dict[str, Any], change: Any) -> None:
        old = copy.deepcopy(job)
        status = job.setdefault("status", {})
        change(status)
        self.fake._emit("pytorchjobs", "MODIFIED", job, old)

    @staticmethod
    def _set_condition(status: dict[str, Any], kind: str, reason: str, message: str) -> None:
        """``pkg/util/status.go``: Running/Restarting replace each other, Succeeded/Failed turn
        Running False, the new condition is appended; nothing changes once Failed."""
        conditions = status.setdefault("conditions", [])
        if any(c["type"] == "Failed" and c["status"] == "True" for c in conditions):
            return
        now = rfc3339()
        for c in conditions:
            if c["type"] == kind and c["status"] == "True" and c.get("reason") == reason:
                return
        kept = []
        for c in conditions:
            if c["type"] == kind or {c["type"], kind} == {"Running", "Restarting"}:
                continue
            if kind in ("Succeeded", "Failed") and c["type"] == "Running" and c["status"] == "True":
                c = c | {"status": "False", "lastUpdateTime": now, "lastTransitionTime": now}
            kept.append(c)
        kept.append({
            "type": kind, "status": "True", "reason": reason, "message": message,
            "lastUpdateTime": now, "lastTransitionTime": now,
        })  # fmt: skip
        status["conditions"] = kept

    def _replica_statuses(self, ns: str, job: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for pod in self.pods(ns, job):
            rtype = pod["metadata"]["labels"][f"{LABEL}replica-type"].capitalize()
            entry = out.setdefault(rtype, {})
            phase = pod["status"].get("phase")
            key = {
                "Running": "active",
                "Pending": "active",
                "Succeeded": "succeeded",
                "Failed": "failed",
            }
            if phase in key:
                entry[key[phase]] = entry.get(key[phase], 0) + 1
            entry["selector"] = ",".join(
                f"{LABEL}{k}={v}"
                for k, v in (("job-name", job), ("operator-name", "pytorchjob-controller"),
                             ("replica-type", rtype.lower()))
            )  # fmt: skip
        return out

    def _event(self, job: dict[str, Any], reason: str, message: str, type_: str = "Normal") -> None:
        meta = job["metadata"]
        self.fake.add_event(meta["namespace"], "PyTorchJob", meta["name"], reason, message, type_)

    # -- what the operator does on create ------------------------------------------------

    def on_created(self, job: dict[str, Any]) -> None:
        self.create_pods(job["metadata"]["namespace"], job["metadata"]["name"])

    def create_pods(self, ns: str, name: str) -> list[dict[str, Any]]:
        """The pods and headless Services of every replica, Pending, and condition Created."""
        job = self._job(ns, name)
        replicas = job["spec"]["pytorchReplicaSpecs"]
        owner = {
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": name,
            "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True,
        }  # fmt: skip
        created = []
        for rtype in sorted(replicas, key=lambda r: r != "Master"):
            rspec = replicas[rtype] or {}
            for index in range(int(rspec.get("replicas", 1))):
                pod_name = f"{name}-{rtype.lower()}-{index}"
                if self.fake.get("pods", ns, pod_name) is not None:
                    continue
                master_role = rtype == "Master" or ("Master" not in replicas and index == 0)
                pod = self._pod(job, rtype, index, master_role, owner)
                created.append(self.fake._stored("pods", pod))
                self._event(job, "SuccessfulCreatePod", f"Created pod: {pod_name}")
                self.fake._stored("services", self._service(pod, owner))
                self._event(job, "SuccessfulCreateService", f"Created service: {pod_name}")

        def created_condition(status: dict[str, Any]) -> None:
            if not status.get("conditions"):
                self._set_condition(
                    status, "Created", "PyTorchJobCreated", f"PyTorchJob {name} is created."
                )
            status["replicaStatuses"] = self._replica_statuses(ns, name)

        self._update_job(job, created_condition)
        return created

    def _pod(
        self, job: dict[str, Any], rtype: str, index: int, master_role: bool, owner: dict[str, Any]
    ) -> dict[str, Any]:
        name = job["metadata"]["name"]
        replicas = job["spec"]["pytorchReplicaSpecs"]
        rspec = replicas[rtype]
        template = copy.deepcopy(rspec.get("template") or {})
        meta = template.get("metadata") or {}
        spec = template.get("spec") or {}
        env = [{"name": k, "value": v} for k, v in replica_env(job, rtype, index).items()]
        for container in spec.get("containers") or []:
            container["env"] = list(container.get("env") or []) + env
            if container["name"] == "pytorch" and not any(
                p.get("name") == PORT_NAME for p in container.get("ports") or []
            ):
                port = {"name": PORT_NAME, "containerPort": DEFAULT_PORT, "protocol": "TCP"}
                container["ports"] = [*(container.get("ports") or []), port]
        if rtype == "Worker" and "Master" in replicas:
            script = (
                f"err=1;for i in $(seq 100); do if nslookup {name}-master-0; then err=0 && break; "
                "fi;echo waiting for master; sleep 2; done; exit $err"
            )
            spec["initContainers"] = [
                {
                    "name": "init-pytorch",
                    "image": INIT_IMAGE,
                    "command": ["sh", "-c", script],
                    "resources": {
                        "limits": {"cpu": "100m", "memory": "20Mi"},
                        "requests": {"cpu": "50m", "memory": "10Mi"},
                    },
                },
                *(spec.get("initContainers") or []),
            ]
        policy = rspec.get("restartPolicy") or "Never"
        spec["restartPolicy"] = "Never" if policy == "ExitCode" else policy
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("serviceAccountName", "default")
        spec["nodeName"] = "node-1"
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{rtype.lower()}-{index}",
                "namespace": job["metadata"]["namespace"],
                "labels": {
                    **(meta.get("labels") or {}),
                    **self._labels(name, rtype, index, master_role),
                },
                "annotations": dict(meta.get("annotations") or {}),
                "ownerReferences": [owner],
            },
            "spec": spec,
            "status": {"phase": "Pending"},
        }

    @staticmethod
    def _service(pod: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
        ports = [
            {
                "name": p.get("name"),
                "port": p["containerPort"],
                "targetPort": p["containerPort"],
                "protocol": "TCP",
            }
            for c in pod["spec"]["containers"]
            if c["name"] == "pytorch"
            for p in c.get("ports") or []
        ]
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": pod["metadata"]["name"],
                "namespace": pod["metadata"]["namespace"],
                "labels": dict(pod["metadata"]["labels"]),
                "ownerReferences": [owner],
            },
            "spec": {
                "clusterIP": "None",
                "selector": dict(pod["metadata"]["labels"]),
                "ports": ports,
            },
        }

    # -- explicit steps ------------------------------------------------------------------

    def run(self, ns: str, name: str) -> None:
        """Every pod Running (``init-pytorch`` Completed), the job Running."""
        job = self._job(ns, name)
        for pod in self.pods(ns, name):
            pname = pod["metadata"]["name"]
            if not pod["spec"].get("nodeName"):
                self._schedule(pod)
            for init in pod["spec"].get("initContainers") or []:
                self.fake.append_log(ns, pname, init["name"], f"Name:\t{name}-master-0\n")
                self.fake.terminate(ns, pname, init["name"], 0)
            for container in pod["spec"]["containers"]:
                entry = self.fake._status_entry(pod, container["name"])
                if entry is None or "running" not in (entry.get("state") or {}):
                    self.fake._set_state(pod, entry or {}, {"running": {"startedAt": rfc3339()}})

        def running(status: dict[str, Any]) -> None:
            status.setdefault("startTime", rfc3339())
            self._set_condition(
                status, "Running", "PyTorchJobRunning", f"PyTorchJob {name} is running."
            )
            status["replicaStatuses"] = self._replica_statuses(ns, name)

        self._update_job(job, running)

    def succeed(self, ns: str, name: str) -> None:
        """Every ``pytorch`` container exits 0; the job Succeeded (Running turns False)."""
        job = self._job(ns, name)
        self._terminate_all(ns, name, 0)

        def succeeded(status: dict[str, Any]) -> None:
            self._set_condition(
                status,
                "Succeeded",
                "PyTorchJobSucceeded",
                f"PyTorchJob {name} is successfully completed.",
            )
            status["completionTime"] = rfc3339()
            status["replicaStatuses"] = self._replica_statuses(ns, name)

        self._update_job(job, succeeded)
        self._event(job, "PyTorchJobSucceeded", f"PyTorchJob {ns}/{name} successfully completed.")

    def fail(
        self,
        ns: str,
        name: str,
        replica: str = "master-0",
        exit_code: int = 1,
        reason: str = "Error",
    ) -> None:
        """``replica`` (``master-0``, ``worker-1``, ...) exits with ``exit_code``; the job Failed.
        The other replicas keep running (terminate them with ``fake.terminate`` if needed)."""
        job = self._job(ns, name)
        pname = pod_name(name, replica)
        pod = self.fake.get("pods", ns, pname)
        if pod is None:
            raise KeyError(f"no pod {ns}/{pname}")
        entry = self.fake._status_entry(pod, "pytorch")
        if entry is None or "running" not in (entry.get("state") or {}):
            self.fake.append_log(ns, pname, "pytorch", b"")
        self.fake.terminate(ns, pname, "pytorch", exit_code, reason)
        self.fake.set_pod_phase(ns, pname, "Failed")
        self._event(job, "ExitedWithCode", f"Pod: {ns}.{pname} exited with code {exit_code}")
        rtype = pname[len(name) + 1 :].split("-")[0].capitalize()

        def failed(status: dict[str, Any]) -> None:
            self._set_condition(
                status,
                "Failed",
                "PyTorchJobFailed",
                f"PyTorchJob {name} is failed because 1 {rtype} replica(s) failed.",
            )
            status["completionTime"] = rfc3339()
            status["replicaStatuses"] = self._replica_statuses(ns, name)

        self._update_job(job, failed)
        self._event(
            job,
            "PyTorchJobFailed",
            f"PyTorchJob {name} is failed because 1 {rtype} replica(s) failed.",
            "Warning",
        )

    def set_unschedulable(self, ns: str, pod: str, message: str = UNSCHEDULABLE) -> None:
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
        self.fake._init_pod(pod)

    def _terminate_all(self, ns: str, name: str, exit_code: int) -> None:
        for pod in self.pods(ns, name):
            pname = pod["metadata"]["name"]
            entry = self.fake._status_entry(pod, "pytorch")
            if entry is None or "terminated" in (entry.get("state") or {}):
                continue
            if "running" not in (entry.get("state") or {}):
                self.fake.append_log(ns, pname, "pytorch", b"")
            self.fake.terminate(ns, pname, "pytorch", exit_code)
