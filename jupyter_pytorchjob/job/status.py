"""What a job is doing, as every backend reports it: its state, conditions and
replicas (the wire model of ``GET jobs``). Pure data, no I/O: a job kind reads it from
its API object, the local backend from its supervisor's records."""

from __future__ import annotations

import copy
import enum
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .failure import JobFailure, JobWaiting
from .messages import Message, coded_wire, warnings_wire
from .progress import JobProgress
from .wire import dataclass_wire


class JobState(str, enum.Enum):
    """A job's state: the operator's conditions (Failed and Succeeded win, then
    Suspended, then the newest of Restarting, Running, Created). ``Submitted``: stored,
    but no operator has reconciled it yet (the operator sets Created on its first pass)."""

    SUBMITTED = "Submitted"
    CREATED = "Created"
    RUNNING = "Running"
    RESTARTING = "Restarting"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    SUSPENDED = "Suspended"

    @property
    def finished(self) -> bool:
        return self in (JobState.SUCCEEDED, JobState.FAILED)


@dataclass
class Condition:
    """One entry of ``status.conditions`` (type Created, Running, ...)."""

    type: str
    status: str
    reason: str
    message: str
    last_transition: float

    def to_wire(self) -> dict[str, Any]:
        return dataclass_wire(self)


@dataclass
class ReplicaInfo:
    """One replica (a pod, or a local process): ``master-0``, ``worker-1`` ..."""

    name: str
    phase: str  # Pending, Running, Succeeded, Failed, Unknown
    restarts: int = 0
    exit_code: int | None = None
    reason: str | None = None
    message: str | Message | None = None  # the platform's words, or ours (a Message)
    node: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {**dataclass_wire(self, skip=("message",)), **coded_wire("message", self.message)}


@dataclass
class JobInfo:
    """A job as the list and the job view show it."""

    name: str
    state: JobState
    replicas: list[ReplicaInfo]
    nodes: int
    gpus: int
    created: float
    # The kind of object the job is (one read without a kind is a PyTorchJob).
    kind: str = "PyTorchJob"
    started: float | None = None
    finished: float | None = None
    conditions: list[Condition] = field(default_factory=list)
    logdir: str | None = None
    namespace: str | None = None
    manifest: Mapping[str, Any] | None = None
    # Why the job is in its state when no condition says so (e.g. no operator has
    # picked it up yet): ours (a Message), or a controller's Warning event.
    message: str | Message | None = None
    # What the user should know about the submission (fields the server dropped).
    warnings: list[Message] = field(default_factory=list)
    # How far along it is (job/progress.py); None until a source said anything.
    progress: JobProgress | None = None
    # A failed job: the replica that failed first, why, and its last lines (job/failure.py).
    failure: JobFailure | None = None
    # A job not running yet, or with Pending replicas: what it waits for.
    waiting: JobWaiting | None = None

    @property
    def topology(self) -> str:
        """``1 master + 2 workers``, or ``2 workers`` for a Worker-only job; ``2 nodes``
        for a TrainJob (``node-0``, ``node-1``: node 0 leads, none is a master)."""
        nodes = sum(r.name.startswith("node-") for r in self.replicas)
        if nodes:
            return f"{nodes} node{'' if nodes == 1 else 's'}"
        masters = sum(r.name.startswith("master-") for r in self.replicas)
        workers = sum(r.name.startswith("worker-") for r in self.replicas)
        parts = [f"{masters} master"] if masters else []
        if workers or not masters:
            parts.append(f"{workers} worker{'' if workers == 1 else 's'}")
        return " + ".join(parts)

    @property
    def duration(self) -> float | None:
        """Seconds from start to finish (or to now while it runs)."""
        if self.started is None:
            return None
        return (self.finished or time.time()) - self.started

    def to_wire(self, *, with_manifest: bool = False) -> dict[str, Any]:
        wire = dataclass_wire(self, skip=("manifest", "warnings", "message"))
        wire.update(warnings_wire(self.warnings))
        wire.update(coded_wire("message", self.message))
        wire["duration"] = self.duration
        if with_manifest:
            wire["manifest"] = copy.deepcopy(self.manifest)
        return wire

    def list_json(self) -> str:
        """``to_wire()`` as JSON, made once for a finished job: the local backend hands
        out the same ``JobInfo`` while a finished job's files are unchanged, so a list
        of 1,000 jobs serialises only the running ones (``GET jobs`` spent most of its
        time in ``json.dumps``). A running job's duration grows: never kept."""
        if self.finished is None:
            return json.dumps(self.to_wire())
        # Kept beside the fields (not one of them: to_wire and == ignore it).
        cached: str | None = self.__dict__.get("_list_json")
        if cached is None:
            cached = self.__dict__["_list_json"] = json.dumps(self.to_wire())
        return cached
