"""One node of a local job as its pod would be: its process, phase, restarts, exit."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...job.messages import Message, coded_wire, msg
from ...processes import ProcessIdentity

if TYPE_CHECKING:  # the supervisor's; readers of a job's files (``ptjob list``) load neither
    import asyncio

    from .plan import NodePlan


@dataclass
class Replica:
    plan: NodePlan
    policy: str = "OnFailure"  # its replica type's restartPolicy
    process: asyncio.subprocess.Process | None = None
    identity: ProcessIdentity | None = None
    pump: asyncio.Task[None] | None = None
    phase: str = "Pending"
    restarts: int = 0
    exit_code: int | None = None
    reason: str | None = None
    message: str | Message | None = None  # ours, or the kubelet's words as it says them
    started: float | None = None
    ended: float | None = None  # when its last run ended
    # In CrashLoopBackOff: when the kubelet would start the container again.
    back_off_until: float | None = None
    # The kubelet's back-off entry for the container (flowcontrol.Backoff): the wait
    # before the next restart (None: no entry, the next crash restarts at once) and when
    # it was last moved on (the restart). A new pod has none.
    back_off: float | None = None
    back_off_updated: float = 0.0

    @property
    def rtype(self) -> str:
        return "Master" if self.plan.replica.startswith("master-") else "Worker"

    @property
    def alive(self) -> bool:
        """Its process is not yet reaped."""
        return self.process is not None and self.process.returncode is None

    @property
    def end_unrecorded(self) -> bool:
        """Its process has exited and its end is not yet recorded: still Running, not
        waiting out a back-off (asyncio reaps a process whenever the loop runs)."""
        return (
            self.process is not None
            and self.process.returncode is not None
            and self.phase == "Running"
            and self.back_off_until is None
        )

    def to_wire(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "process": self.identity.to_wire() if self.identity else None,
            "restarts": self.restarts,
            "exit_code": self.exit_code,
            "reason": self.reason,
            **coded_wire("message", self.message),
            "started": self.started,
        }


def settle(replica: Replica, code: int) -> None:
    """The node's process ended with ``code``: phase, reason and message as a pod's."""
    replica.back_off_until = None
    replica.ended = time.time()
    replica.exit_code = code
    replica.phase = "Succeeded" if code == 0 else "Failed"
    replica.reason = None if code == 0 else ("Error" if code < 128 else f"Signal{code - 128}")
    replica.message = None if code == 0 else msg("replica_exited", exitCode=code)


def exit_code(returncode: int) -> int:
    """Shell-style exit code: a signal N becomes 128 + N, as in a container."""
    return 128 - returncode if returncode < 0 else returncode
