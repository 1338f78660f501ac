"""The contract between the process supervisor and the controller it plays.

The supervisor (``supervisor``) runs, stops and restarts processes; a ``Controller``
(``operator_controller``: the Training Operator v1's, ``jobset_controller``: Kubeflow
Trainer v2's over JobSet) decides what a job's conditions say about them, when the job
has failed, which node is created again and what happens to the nodes once it is over.
The controller sees the supervisor only as ``Nodes``: the job's record, its nodes, and
the two writes it may ask for. Readers of a job's files (listing) use the controllers'
class methods alone, without a supervisor."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ...job.status import JobState
from .store import JobDir

if TYPE_CHECKING:  # the supervisor's nodes: readers of a job's files load no replica code
    from .replica import Replica


class Nodes(Protocol):
    """What a controller reads and asks of the supervisor that consults it."""

    jobdir: JobDir
    job: dict[str, Any]  # job.json's contents, written by ``save``
    spec: dict[str, Any]  # the manifest's spec, as last read
    replicas: dict[str, Replica]
    suspended: bool

    @property
    def name(self) -> str: ...

    def save(self) -> bool: ...

    def summarise_failure(self, reason: str, message: str) -> None: ...


def job_settled(state: JobState, phases: Iterable[str]) -> bool:
    """The job is finished and no node is Running: every node's end is recorded (a
    process that exited is Running until its supervisor has recorded it; one in back-off
    settles or stops in the clean-up), so nothing but a delete changes its files. The one
    criterion: the supervisor ends (and indexes the job) on it, readers take the job as
    settled on it."""
    return state.finished and all(phase != "Running" for phase in phases)


@dataclass(frozen=True)
class PodCleanup:
    """What happens to every node once the job is finished: a node in back-off settles
    as it last ended (never restarted now), nodes are stopped as their pods are deleted
    (``stop``: the reason; ``ended_too``: also those already ended), their logs removed."""

    settle_back_off: bool = False
    stop: str | None = None
    ended_too: bool = False
    remove_logs: bool = False


class Controller(ABC):
    """One job's controller, consulted by its supervisor after every change."""

    kind_name: str  # the job's kind, as the controller's texts name it
    container: str  # the main container, as the kubelet's texts name it

    def __init__(self, nodes: Nodes) -> None:
        self.nodes = nodes

    # -- for readers of a job's files (no supervisor) --------------------------------

    @classmethod
    @abstractmethod
    def created_conditions(cls, name: str, now: float) -> list[dict[str, Any]]:
        """A new job's conditions."""

    @classmethod
    def state_shown(cls, stored: JobState, phases: list[str]) -> JobState:
        """The state a reader shows, from the state and node phases it read (two files,
        written one after the other)."""
        return stored

    # -- for the supervisor --------------------------------------------------------

    @property
    @abstractmethod
    def state(self) -> JobState:
        """The job's state now."""

    @abstractmethod
    def restart_policy(self, rtype: str) -> str:
        """The restartPolicy of a replica type's pods."""

    @abstractmethod
    def suspend_requested(self) -> bool:
        """The job's spec asks for it to be suspended."""

    def ttl_after_finished(self) -> float | None:
        """Seconds from completion until the job is deleted; None: kept."""
        return None

    @abstractmethod
    def record_state(self) -> None:
        """Put the state into the job's record before it is written (when it does not
        follow the conditions alone)."""

    @abstractmethod
    def set_condition(self, type_: str, status: str, reason: str, message: str) -> None:
        """Set a condition as the controller does (then the record is saved)."""

    @abstractmethod
    def fail(self, message: str) -> None:
        """A failure only this machine has (a node that cannot start, the supervisor's
        own error), worded by the caller."""

    def failure_reason(self, reason: str, message: str) -> str:
        """The platform's reason for a failure no node made."""
        return reason

    @abstractmethod
    def reconcile(self, failed: Replica | None = None) -> Replica | None:
        """One pass after ``failed`` ended in phase Failed (or a restart in place); the
        node to create again as a new pod, if any."""

    @abstractmethod
    def update_status(self) -> None:
        """The job's conditions from its nodes."""

    @abstractmethod
    def check_deadline(self, now: float) -> None:
        """Fail the job once it ran past its deadline."""

    @abstractmethod
    def pod_cleanup(self) -> PodCleanup:
        """What happens to the nodes now that the job is finished."""

    @abstractmethod
    def on_suspended(self) -> None:
        """Every node has been stopped for a suspend."""

    @abstractmethod
    def on_resumed(self) -> None:
        """The job resumes (its nodes start next)."""

    def past_limit(self, limit: int) -> bool:
        """Restarts of the running pods of replica types whose policy is not Never
        reach ``limit`` (any restart when it is 0)."""
        restarts = sum(
            r.restarts
            for r in self.nodes.replicas.values()
            if r.policy != "Never" and r.phase == "Running"
        )
        return restarts > 0 if limit == 0 else restarts >= limit
