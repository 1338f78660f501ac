"""The Training Operator v1.9.4's rules for a local PyTorchJob (paths under
kubeflow/trainer pkg/), as its supervisor consults them:

* Created, then Running once the Master runs (without a Master: once a Worker runs);
  Succeeded when the Master exits 0 (without a Master: when every Worker has, or one
  with ``elasticPolicy``);
* each replica type restarts by its own restartPolicy (the kubelet's back-off is the
  supervisor's); the job fails as soon as the restarts of the running nodes reach
  backoffLimit;
* ExitCode recreates a node that exits with 128-255 (a new "pod": restarts 0, its
  logs gone, unlimited unless backoffLimit is 0) and fails the job on 1-127; Never
  fails the job at once; with backoffLimit 0 any failure gives the backoff message;
* the conditions list is shaped as util/status.go's setCondition does it, with the
  operator's texts word for word;
* activeDeadlineSeconds counts from the (last) start; once the job is finished
  cleanPodPolicy applies (None: nodes keep running but are not restarted; Running:
  running ones stop; All: every one stops and its logs go, as a pod's do);
* ttlSecondsAfterFinished counts from completion; a job ExitCode failed (1-127) has
  none, so the TTL never applies and it stays until deleted;
* ``runPolicy.suspend``: Running False and Suspended True once every node is stopped;
  clearing it gives Suspended False (Resumed) and a new start time.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ...kinds.pytorchjob import PYTORCHJOB
from ...kinds.pytorchjob.status import state_of
from ..base import JobState
from .controller import Controller, PodCleanup

if TYPE_CHECKING:  # the supervisor's nodes: readers of a job's files load no replica code
    from .replica import Replica

# Local jobs have no namespace; the operator's texts for Worker-only jobs name one.
NAMESPACE = "default"

# The operator's condition texts, word for word (paths under kubeflow/trainer pkg/).
CREATED = "PyTorchJob {name} is created."
RUNNING = "PyTorchJob {name} is running."  # pytorchjob_controller.go:385-387
SUCCEEDED = "PyTorchJob {name} is successfully completed."  # :391-398
RUNNING_WORKERS = "PyTorchJob {ns}/{name} is running."  # :410-423 (no Master)
SUCCEEDED_WORKERS = "PyTorchJob {ns}/{name} successfully completed."
RESTARTING = "PyTorchJob {name} is restarting because {count} {rtype} replica(s) failed."  # :430
FAILED = "PyTorchJob {name} is failed because {count} {rtype} replica(s) failed."  # :435
RECREATING = "job {name} is restarting because {rtype} replica(s) failed."  # common/pod.go:362
FAILING = 'job "{name}" is failing because "{rtype}" replica(s) failed.'  # common/pod.go:369
# In job.json: the operator failed the job without a completionTime (the FAILING path).
NO_COMPLETION_TIME = "no_completion_time"
NO_TTL = (
    "ttlSecondsAfterFinished is not applied: the operator fails an ExitCode job for a "
    "permanent exit code without a completion time, and counts the TTL from that (the "
    "job stays until deleted)"
)
BACKOFF = "Job {name} has failed because it has reached the specified backoff limit"
DEADLINE = "Job {name} has failed because it was active longer than specified deadline"
SUSPENDED = "PyTorchJob {name} is suspended."  # common/job.go:146-166
RESUMED = "PyTorchJob {name} is resumed."  # common/job.go:167-173


class OperatorController(Controller):
    """The Training Operator's (a PyTorchJob)."""

    kind_name = PYTORCHJOB.kind
    container = PYTORCHJOB.container

    @classmethod
    def created_conditions(cls, name: str, now: float) -> list[dict[str, Any]]:
        """A new job's conditions: the operator's Created."""
        created = {"type": "Created", "status": "True", "reason": "PyTorchJobCreated"}
        return [{**created, "message": CREATED.format(name=name), "last_transition": now}]

    @property
    def run_policy(self) -> dict[str, Any]:
        policy: dict[str, Any] = self.nodes.spec.get("runPolicy") or {}
        return policy

    @property
    def state(self) -> JobState:
        return state_of(self.nodes.job.get("conditions") or [])

    def restart_policy(self, rtype: str) -> str:
        rspec = (self.nodes.spec.get("pytorchReplicaSpecs") or {}).get(rtype) or {}
        return str(rspec.get("restartPolicy") or "OnFailure")  # the operator's default

    def suspend_requested(self) -> bool:
        return bool(self.run_policy.get("suspend"))

    def ttl_after_finished(self) -> float | None:
        ttl = self.run_policy.get("ttlSecondsAfterFinished")
        if ttl is None or self.nodes.job.get(NO_COMPLETION_TIME):
            return None
        return float(ttl)

    def record_state(self) -> None:
        """The state was set with the conditions (``set_condition``)."""

    def text(self, template: str, **values: Any) -> str:
        return template.format(name=self.nodes.name, ns=NAMESPACE, **values)

    def set_condition(self, type_: str, status: str, reason: str, message: str) -> None:
        job = self.nodes.job
        conditions = job.setdefault("conditions", [])
        now = time.time()
        if not set_condition(conditions, type_, status, reason, message, now):
            return
        job["state"] = state_of(conditions).value
        if status == "True" and type_ in ("Succeeded", "Failed"):
            job.setdefault("finished", now)  # completionTime
        if status == "True" and type_ == "Failed":
            self.nodes.summarise_failure(reason, message)
        self.nodes.save()

    def fail(self, message: str) -> None:
        self.set_condition("Failed", "True", "PyTorchJobFailed", message)

    def failure_reason(self, reason: str, message: str) -> str:
        """The operator words a deadline in its message only (its reason is
        PyTorchJobFailed)."""
        return "DeadlineExceeded" if message == self.text(DEADLINE) else reason

    def reconcile(self, failed: Replica | None = None) -> Replica | None:
        """One pass of ReconcileJobs (common/job.go:78-364) after ``failed`` ended in
        phase Failed (or a restart in place): the backoff limit first, then the ExitCode
        rule, then the job's conditions from its replicas."""
        limit = self.run_policy.get("backoffLimit")
        # exceedsBackoffLimit, job.go:192-204: a new failure only counts when the limit
        # is 0 (the work queue's retries are 0); else the restarts of running pods
        # (PastBackoffLimit, core/job.go:95-133).
        if limit is not None and ((failed is not None and limit == 0) or self.past_limit(limit)):
            self.fail(self.text(BACKOFF))
            return None
        if failed is not None and failed.policy == "ExitCode":
            exit_code = failed.exit_code if failed.exit_code is not None else 0
            if exit_code < 128:  # not retryable, util/train/train_util.go:24-26
                # common/pod.go:366-371 sets Failed but no completionTime, and CleanupJob
                # (common/job.go:428-430) then never applies the TTL: the job stays.
                self.nodes.job[NO_COMPLETION_TIME] = True
                self.fail(self.text(FAILING, rtype=failed.rtype))
                if self.run_policy.get("ttlSecondsAfterFinished") is not None:
                    self.nodes.jobdir.add_event("Warning", "TTLNotApplied", NO_TTL, self.nodes.name)
                return None
            message = self.text(RECREATING, rtype=failed.rtype)
            self.nodes.jobdir.add_event("Warning", "PyTorchJobRestarting", message, self.nodes.name)
            self.set_condition("Restarting", "True", "PyTorchJobRestarting", message)
            return failed  # common/pod.go:350-366: its pod deleted and created again
        self.update_status()
        return None

    def update_status(self) -> None:
        """UpdateJobStatus, pytorchjob_controller.go:343-447, Master first."""
        by_type: dict[str, list[Replica]] = {}
        for replica in self.nodes.replicas.values():
            by_type.setdefault(replica.rtype, []).append(replica)
        has_master = "Master" in by_type
        elastic = self.nodes.spec.get("elasticPolicy") is not None
        for rtype in sorted(by_type, key=lambda t: t != "Master"):
            replicas = by_type[rtype]
            succeeded, running, failed = (
                sum(r.phase == phase for r in replicas)
                for phase in ("Succeeded", "Running", "Failed")
            )
            expected = len(replicas) - succeeded
            if has_master:
                if rtype == "Master":
                    if running > 0:
                        self.set_condition(
                            "Running", "True", "PyTorchJobRunning", self.text(RUNNING)
                        )
                    if expected == 0:
                        self.set_condition(
                            "Succeeded", "True", "PyTorchJobSucceeded", self.text(SUCCEEDED)
                        )
                        return
            elif expected == 0 or (elastic and succeeded > 0):
                self.set_condition(
                    "Succeeded", "True", "PyTorchJobSucceeded", self.text(SUCCEEDED_WORKERS)
                )
            elif running > 0:
                self.set_condition(
                    "Running", "True", "PyTorchJobRunning", self.text(RUNNING_WORKERS)
                )
            if failed > 0 and len(replicas) > succeeded + running:
                if replicas[0].policy != "Never":
                    message = self.text(RESTARTING, count=failed, rtype=rtype)
                    self.set_condition("Restarting", "True", "PyTorchJobRestarting", message)
                else:
                    self.fail(self.text(FAILED, count=failed, rtype=rtype))
        self.nodes.save()

    def check_deadline(self, now: float) -> None:
        """activeDeadlineSeconds, counted from the (last) start."""
        deadline = self.run_policy.get("activeDeadlineSeconds")
        started = self.nodes.job.get("started")
        if (
            deadline is not None
            and started is not None
            and not self.nodes.suspended
            and not self.state.finished
            and now - started >= deadline
        ):
            self.fail(self.text(DEADLINE))  # core/job.go:82-91; cleanPodPolicy follows

    def pod_cleanup(self) -> PodCleanup:
        """cleanPodPolicy (common/job.go:41-69): None keeps every node; Running stops the
        running ones; All stops every one and its logs go."""
        policy = self.run_policy.get("cleanPodPolicy", "None")
        if policy == "Running":
            return PodCleanup(stop="CleanPodPolicy")
        if policy == "All":
            return PodCleanup(stop="CleanPodPolicy", ended_too=True, remove_logs=True)
        return PodCleanup(settle_back_off=True)

    # -- suspend / resume (common/job.go:146-173) --------------------------------------

    def on_suspended(self) -> None:
        """Running False, Suspended True."""
        conditions = self.nodes.job.get("conditions") or []
        if any(c["type"] == "Running" and c["status"] == "True" for c in conditions):
            self.set_condition("Running", "False", "PyTorchJobSuspended", self.text(SUSPENDED))
        self.set_condition("Suspended", "True", "PyTorchJobSuspended", self.text(SUSPENDED))
        self.nodes.jobdir.add_event(
            "Normal", "PyTorchJobSuspended", self.text(SUSPENDED), self.nodes.name
        )

    def on_resumed(self) -> None:
        """Suspended False (the supervisor resets the start time)."""
        self.set_condition("Suspended", "False", "PyTorchJobResumed", self.text(RESUMED))
        self.nodes.jobdir.add_event(
            "Normal", "PyTorchJobResumed", self.text(RESUMED), self.nodes.name
        )


def set_condition(
    conditions: list[dict[str, Any]], type_: str, status: str, reason: str, message: str, now: float
) -> bool:
    """setCondition, util/status.go:100-149, on ``conditions`` in place; whether it changed
    them. Nothing once Failed; a repeat of the same type, status and reason changes
    nothing (the old message and time stay); else the condition replaces its type (the
    transition time kept when only the reason changed),
    Running and Restarting remove each other, and Succeeded/Failed turn Running False."""
    if any(c["type"] == "Failed" and c["status"] == "True" for c in conditions):
        return False
    current = next((c for c in conditions if c["type"] == type_), None)
    if current is not None and (current["status"], current["reason"]) == (status, reason):
        return False
    if current is not None and current["status"] == status:
        now = current["last_transition"]  # :116-119: the status did not change
    kept = []
    for c in conditions:
        if c["type"] == type_ or {type_, c["type"]} == {"Running", "Restarting"}:
            continue
        if type_ in ("Succeeded", "Failed") and c["type"] == "Running":
            c = {**c, "status": "False"}
        kept.append(c)
    new = {"type": type_, "status": status, "reason": reason, "message": message}
    conditions[:] = [*kept, {**new, "last_transition": now}]
    return True
