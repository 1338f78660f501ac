"""Kubeflow Trainer v2.3's rules for a local TrainJob: a TrainJob's nodes as Trainer,
JobSet v0.12 and the Job controller run them on the ``torch-distributed`` runtime
(kubeflow/trainer v2.3.0 ``pkg/controller/trainjob_controller.go``, jobset v0.12.0
``pkg/controllers/failure_policy.go``, kubernetes ``pkg/controller/job``):

* every node is one completion index of one Job whose pods restart in place
  (``OnFailure``, the kubelet's back-off); the Job fails once the restarts of its live
  pods reach its ``backoffLimit`` (6), and JobSet, which has no ``maxRestarts``, fails
  at once: Failed ``FailedJobs``; the Job's other pods are deleted (the nodes still
  running are stopped; their logs are kept here);
* Complete (``AllJobsCompleted``) once every node has succeeded;
* no Created or Running condition: the state comes from the conditions, then the
  nodes, as ``kinds.trainjob.status.job_state`` reads a cluster's pods;
* ``spec.suspend``: Suspended True (every node stopped, logs gone), then Suspended
  False ``Resumed``, which stays;
* ``activeDeadlineSeconds`` counts from creation, or from the last resume; once past,
  Failed ``DeadlineExceeded`` and the JobSet is deleted: every node stops and its logs
  go;
* no TTL, no clean-pod policy: a finished TrainJob keeps its pods.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ...kinds.trainjob import TRAINJOB
from ...kinds.trainjob import status as trainjob
from ...kinds.trainjob.environment import BACKOFF_LIMIT
from ..base import JobState
from .controller import Controller, PodCleanup

if TYPE_CHECKING:  # the supervisor's nodes: readers of a job's files load no replica code
    from .replica import Replica


class JobSetController(Controller):
    """Kubeflow Trainer's and JobSet's (a TrainJob)."""

    kind_name = TRAINJOB.kind
    container = TRAINJOB.container

    @classmethod
    def created_conditions(cls, name: str, now: float) -> list[dict[str, Any]]:
        return []  # Trainer writes no Created condition

    @classmethod
    def state_shown(cls, stored: JobState, phases: list[str]) -> JobState:
        """Created and Running come from the nodes (no condition says them): from the
        nodes read beside the state, never a copy older than those nodes."""
        if stored in (JobState.SUBMITTED, JobState.CREATED, JobState.RUNNING):
            return JobState.RUNNING if "Running" in phases else JobState.CREATED
        return stored

    @property
    def state(self) -> JobState:
        job = {
            "spec": {"suspend": self.suspend_requested()},
            "status": {"conditions": self.nodes.job.get("conditions") or []},
        }
        pods = [{"status": {"phase": r.phase}} for r in self.nodes.replicas.values()]
        return trainjob.job_state(job, [p for p in pods if p["status"]["phase"] != "Deleted"])

    def restart_policy(self, rtype: str) -> str:
        return "OnFailure"  # the runtime's Job template

    def suspend_requested(self) -> bool:
        return bool(self.nodes.spec.get("suspend"))

    def record_state(self) -> None:
        self.nodes.job["state"] = self.state.value  # it follows the nodes, not only conditions

    def set_condition(self, type_: str, status: str, reason: str, message: str) -> None:
        """apimachinery ``meta.SetStatusCondition``: one condition per type, updated in
        place; its transition time moves only when its status changes."""
        job = self.nodes.job
        conditions = job.setdefault("conditions", [])
        now = time.time()
        current = next((c for c in conditions if c["type"] == type_), None)
        if current is None:
            conditions.append(
                {
                    "type": type_,
                    "status": status,
                    "reason": reason,
                    "message": message,
                    "last_transition": now,
                }
            )
        elif (current["status"], current["reason"], current["message"]) == (
            status,
            reason,
            message,
        ):
            return
        else:
            if current["status"] != status:
                current["last_transition"] = now
            current.update(status=status, reason=reason, message=message)
        if status == "True" and type_ in ("Complete", "Failed"):
            job.setdefault("finished", now)
        if status == "True" and type_ == "Failed":
            self.nodes.summarise_failure(reason, message)
        self.nodes.save()

    def fail(self, message: str) -> None:
        self.set_condition("Failed", "True", trainjob.FAILED_JOBS[2], message)

    def reconcile(self, failed: Replica | None = None) -> Replica | None:
        """The Job controller (pastBackoffLimitOnFailure: restarts of its live pods),
        then JobSet (no failurePolicy: a failed Job fails the JobSet)."""
        if self.past_limit(BACKOFF_LIMIT):
            job = f"{self.nodes.name}-{TRAINJOB.container}-0"
            reason, text = trainjob.BACKOFF_LIMIT_EXCEEDED
            self.nodes.jobdir.add_event("Warning", reason, text, job)
            message = trainjob.FAILED_JOBS[3].format(job=job)
            self.nodes.jobdir.add_event(
                "Warning", trainjob.FAILED_JOBS[2], message, self.nodes.name
            )
            self.set_condition(*trainjob.FAILED_JOBS[:3], message)
            return None
        self.update_status()
        return None

    def update_status(self) -> None:
        if all(r.phase == "Succeeded" for r in self.nodes.replicas.values()):
            self.nodes.jobdir.add_event(
                "Normal", trainjob.COMPLETE[2], trainjob.COMPLETE[3], self.nodes.name
            )
            self.set_condition(*trainjob.COMPLETE)
        self.nodes.save()

    def check_deadline(self, now: float) -> None:
        """``reconcileDeadline``: from creation, or from the last resume."""
        deadline = self.nodes.spec.get("activeDeadlineSeconds")
        if deadline is None or self.nodes.suspended or self.state.finished:
            return
        job = self.nodes.job
        if now - float(job.get("deadline_from") or job["created"]) >= deadline:
            self.nodes.jobdir.add_event(
                "Warning",
                trainjob.DEADLINE_EXCEEDED[2],
                trainjob.DEADLINE_EXCEEDED[3],
                self.nodes.name,
            )
            self.set_condition(*trainjob.DEADLINE_EXCEEDED)

    def pod_cleanup(self) -> PodCleanup:
        """Past the deadline the JobSet is deleted (every node and its logs); after a
        failure the Job's live pods are deleted (a node in back-off is never restarted
        now); a complete job has nothing left."""
        deadline = any(
            c["type"] == "Failed" and c["reason"] == trainjob.DEADLINE_EXCEEDED[2]
            for c in self.nodes.job.get("conditions") or []
        )
        if deadline:
            return PodCleanup(stop=trainjob.DEADLINE_EXCEEDED[2], ended_too=True, remove_logs=True)
        return PodCleanup(settle_back_off=True, stop=trainjob.BACKOFF_LIMIT_EXCEEDED[0])

    def on_suspended(self) -> None:
        self.nodes.jobdir.add_event(
            "Normal", trainjob.SUSPENDED[2], trainjob.SUSPENDED[3], self.nodes.name
        )
        self.set_condition(*trainjob.SUSPENDED)

    def on_resumed(self) -> None:
        """Suspended False (Resumed); the deadline counts again from now."""
        self.nodes.job["deadline_from"] = time.time()
        self.nodes.jobdir.add_event(
            "Normal", trainjob.RESUMED[2], trainjob.RESUMED[3], self.nodes.name
        )
        self.set_condition(*trainjob.RESUMED)
