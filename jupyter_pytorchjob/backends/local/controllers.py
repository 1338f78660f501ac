"""What a reader of a local job's files needs of the controller its supervisor plays
(``JobKind.controller``): a new job's conditions and the state shown from what was
read. Kept apart from ``supervisor`` so that listing jobs (``ptjob list``, ``GET jobs``)
loads neither the supervisor nor its status endpoint's server stack."""

from __future__ import annotations

from typing import Any

from ...job.status import JobState
from ...kinds.pytorchjob import PYTORCHJOB
from ...kinds.trainjob import TRAINJOB

# The kubelet's wait before restarting a crashed container in place (OnFailure, Always):
# 10 s, doubling after each restart, at most 5 min (the kubelet's CrashLoopBackOff). The
# backend writes the first wait into job.json (``crash_back_off``; tests shorten it),
# the longest is always 30 times the first.
CRASH_BACK_OFF = 10.0
# In job.json: why the job is in its state when no condition says so (JobInfo.message).
MESSAGE_KEY = "message"
# In job.json: the failure summary the supervisor records (job/failure.py's wire shape).
FAILURE_KEY = "failure"


class OperatorRules:
    """The Training Operator's (a PyTorchJob)."""

    @classmethod
    def created_conditions(cls, name: str, now: float) -> list[dict[str, Any]]:
        """A new job's conditions: the operator's Created."""
        message = f"PyTorchJob {name} is created."
        created = {"type": "Created", "status": "True", "reason": "PyTorchJobCreated"}
        return [{**created, "message": message, "last_transition": now}]

    @classmethod
    def state_shown(cls, stored: JobState, phases: list[str]) -> JobState:
        """The state a reader shows, from the state and node phases it read (two files,
        written one after the other): the operator's comes from conditions alone."""
        return stored


class JobSetRules(OperatorRules):
    """Kubeflow Trainer's and JobSet's (a TrainJob)."""

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


# The rules of each controller a job kind names (``JobKind.controller``); the
# supervisor plays exactly these (``supervisor.SUPERVISORS``).
CONTROLLERS: dict[str, type[OperatorRules]] = {
    PYTORCHJOB.controller: OperatorRules,
    TRAINJOB.controller: JobSetRules,
}
