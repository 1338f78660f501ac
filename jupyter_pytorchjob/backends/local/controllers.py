"""The controller each job kind names (``JobKind.controller``), which its supervisor
plays, and the keys of ``job.json`` both the supervisor and readers use. Readers of a
job's files (``ptjob list``, ``GET jobs``) take a new job's conditions and the state
shown from the controllers' class methods: this loads neither the supervisor nor its
status endpoint's server stack."""

from __future__ import annotations

from ...kinds.pytorchjob import PYTORCHJOB
from ...kinds.trainjob import TRAINJOB
from .controller import Controller
from .jobset_controller import JobSetController
from .operator_controller import OperatorController

# In job.json: why the job is in its state when no condition says so (JobInfo.message).
MESSAGE_KEY = "message"
# In job.json: what a running job waits for that its replicas do not say (JobInfo.waiting:
# nodes restarted after their peers ended, job/failure.py's wire shape).
WAITING_KEY = "waiting"
# In job.json: the failure summary the supervisor records (job/failure.py's wire shape).
FAILURE_KEY = "failure"

CONTROLLERS: dict[str, type[Controller]] = {
    PYTORCHJOB.controller: OperatorController,
    TRAINJOB.controller: JobSetController,
}
