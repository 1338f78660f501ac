"""The backend contract: what the server, the CLI and the magic may ask of a backend.

Modelled on jupyter-scheduler's ``BaseScheduler`` and the Kubeflow SDK's backends:
REST-shaped verbs on a job name, wire models as dataclasses with ``to_wire`` (the
convention of ``job/wire.py``: camelCase keys, times in seconds since the epoch).
Every backend maps its own world (processes, pods) onto these models, so the
views never know where a job runs.
"""

from __future__ import annotations

import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from ..job.errors import JobSpecInvalid
from ..job.loglines import OWNER_BASE, owner_runs, tagged
from ..job.messages import Message, msg
from ..job.progress import JobProgress, MetricHistory, chief_replica
from ..job.status import Condition, JobInfo, JobState, ReplicaInfo
from ..job.wire import dataclass_wire

# What only some verbs use (a run record, a clone, the kinds' manifest code) is imported
# by them: ``ptjob list`` loads the contract and the status models alone.
if TYPE_CHECKING:
    from ..job.run import RunRecord
    from ..job.spec import JobSpec
    from ..kinds import JobKind
    from ..kinds.trainjob.runtimes import Runtime
    from .logmerge import Taken

# The status models live with the job model (a job kind reads them from its API object);
# named here too because every backend answers with them.
__all__ = [
    "Backend",
    "BackendError",
    "Condition",
    "Event",
    "JobExists",
    "JobInfo",
    "JobNotFound",
    "JobState",
    "LogChunk",
    "ReplicaInfo",
    "Volume",
    "dropped_warning",
    "in_thread",
]

T = TypeVar("T")
P = ParamSpec("P")


async def in_thread(function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``asyncio.to_thread``. A coroutine runs on a loop, so asyncio is loaded by then:
    importing it here, not at the top, lets a backend module load without it, and
    ``ptjob list`` read the local backend's files without an event loop (asyncio with
    ssl is most of a bare command's start-up)."""
    import asyncio

    return await asyncio.to_thread(function, *args, **kwargs)


class BackendError(Exception):
    """A failure a person can act on; ``status`` is the HTTP status to answer with.
    ``problem``: the ``Message`` (code and parameters) JupyterLab translates, where
    our own words say it (None: the text is the platform's, e.g. Kubernetes')."""

    status = 500

    def __init__(self, message: str | Message, *, status: int | None = None) -> None:
        super().__init__(str(message))
        self.message = str(message)
        self.problem = message if isinstance(message, Message) else None
        if status is not None:
            self.status = status

    def to_wire(self) -> dict[str, Any]:
        """The error body: ``{message}``, with ``code`` and ``params`` where known."""
        return self.problem.to_wire() if self.problem else {"message": self.message}


class JobNotFound(BackendError):
    """No job of that name (in this namespace)."""

    status = 404

    def __init__(self, name: str) -> None:
        super().__init__(msg("job_not_found", name=repr(name)))
        self.name = name


class JobExists(BackendError):
    """The name is taken."""

    status = 409

    def __init__(self, name: str) -> None:
        super().__init__(msg("job_exists", name=repr(name)))
        self.name = name


@dataclass
class Event:
    """Something that happened to a job or one of its replicas."""

    type: str  # Normal or Warning
    reason: str
    message: str
    object: str  # the job name, a replica name, or kind/name of an object made for it
    time: float
    count: int = 1

    def to_wire(self) -> dict[str, Any]:
        return dataclass_wire(self)


@dataclass
class Volume:
    """A PersistentVolumeClaim (or, locally, the directory a claim maps to)."""

    name: str
    phase: str
    capacity: str | None
    access_modes: list[str]
    local_path: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return dataclass_wire(self)


@dataclass
class LogChunk:
    """Some complete lines of one replica's log, or of several replicas' merged in time
    order.

    ``offset`` is where the chunk ends in that replica's log (for the current
    container unless ``previous``); giving it back as ``since`` resumes after the
    chunk without repeating a line. A merged chunk (``owners`` not empty) names each
    line's replica with a character, ``chr(OWNER_BASE + i)`` for ``replicas[i]``, and
    ends in ``replicas[i]``'s log at ``offsets[i]``; its ``replica`` and ``offset`` are
    its last line's.
    """

    replica: str
    text: str
    offset: int
    previous: bool = False
    # True: ``text`` is a message about this replica's log (e.g. it can no longer be
    # read), not log output; shown apart and never stored with the lines.
    notice: bool = False
    replicas: tuple[str, ...] = ()
    owners: str = ""
    offsets: tuple[int, ...] = ()
    # Each line's time in seconds since the epoch (None for a line without a stamp) when
    # the log is read with its times (``Backend.logs(timestamps=True)``).
    times: list[float | None] | None = None
    # True: each line of ``text`` still starts with its stamp and a space (the line is
    # what follows the first space), for a reader that removes them
    # (``Backend.logs(keep_stamps=True)``).
    stamped: bool = False

    @classmethod
    def merged(
        cls,
        replicas: tuple[str, ...],
        text: str,
        owners: str,
        offsets: tuple[int, ...],
        previous: bool = False,
        times: list[float | None] | None = None,
        stamped: bool = False,
    ) -> LogChunk:
        """The lines of ``replicas`` (``owners``: each line's; empty: all the first's)."""
        if not owners:
            return cls(replicas[0], text, offsets[0], previous, times=times, stamped=stamped)
        last = ord(owners[-1]) - OWNER_BASE
        return cls(
            replicas[last],
            text,
            offsets[last],
            previous,
            False,
            replicas,
            owners,
            offsets,
            times,
            stamped,
        )

    @classmethod
    def of_taken(cls, taken: Taken, ends: tuple[int, ...], previous: bool = False) -> LogChunk:
        """What a ``TimeMerge`` gave, ending at ``ends`` in its replicas' logs."""
        return cls.merged(
            taken.replicas, taken.text, taken.owners, ends, previous, taken.times, taken.stamped
        )

    def resume_offsets(self) -> dict[str, int]:
        """Where the chunk ends in the log of each replica it holds lines of."""
        if self.owners:
            return dict(zip(self.replicas, self.offsets, strict=True))
        return {self.replica: self.offset}

    def runs(self) -> list[tuple[str, str]]:
        """Its lines in runs of one replica's, in order: (replica, lines)."""
        if not self.owners:
            return [(self.replica, self.text)]
        return [(self.replicas[i], run) for i, run in owner_runs(self.text, self.owners)]

    def to_wire(self) -> dict[str, Any]:
        # By hand, not dataclass_wire: one per chunk of a busy stream (100x cheaper).
        wire = {
            "replica": self.replica,
            "text": self.text,
            "offset": self.offset,
            "previous": self.previous,
            "notice": self.notice,
        }
        if self.owners:
            wire["replicas"] = list(self.replicas)
            wire["owners"] = self.owners
            wire["offsets"] = self.resume_offsets()
        if self.times is not None:
            wire["times"] = self.times
        if self.stamped:
            wire["stamped"] = True
        return wire

    def display(self, *, prefix: bool) -> str:
        """The text as the CLI and the magic print it: each line tagged ``master-0 | ``
        when several replicas are merged, after its time when read with times (RFC 3339,
        as ``kubectl logs --timestamps``); a notice as one tagged ``ptjob:`` line."""
        if self.notice:
            return f"ptjob: {self.replica}: {self.text}\n"
        if self.times is not None:
            return self._timed(prefix)
        if not prefix:
            return self.text
        if self.owners:
            return tagged(self.text, [f"{r} | " for r in self.replicas], self.owners)
        return tagged(self.text, [f"{self.replica} | "])

    def _timed(self, prefix: bool) -> str:
        """Each line after its time (and its replica's tag with ``prefix``)."""
        times = self.times or []
        if not prefix:
            tags = [""] * max(1, len(self.replicas))
        elif self.owners:
            tags = [f"{r} | " for r in self.replicas]
        else:
            tags = [f"{self.replica} | "]
        owners = self.owners or chr(OWNER_BASE) * len(times)
        lines = self.text.split("\n")[:-1]  # each ends with a newline (not ``\r``)
        out = []
        for when, owner, line in zip(times, owners, lines, strict=True):
            # After a redraw's ``\r`` too, so that a terminal shows it on the line redrawn.
            tag = (f"{_utc(when)} " if when is not None else "") + tags[ord(owner) - OWNER_BASE]
            out.append(tag + line.replace("\r", "\r" + tag) + "\n")
        return "".join(out)


def _utc(seconds: float) -> str:
    """``2026-11-22T04:25:01.123Z``: a line's time as RFC 3339 (UTC, milliseconds)."""
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def finished_error(name: str, state: JobState, action: str) -> BackendError:
    """The 409 of ``suspend``/``resume`` on a job that has already ended."""
    return BackendError(
        msg(f"finished_{action}", name=repr(name), state=state.value),
        status=409,
    )


def unknown_replica(name: str, replica: str, replicas: list[str]) -> BackendError:
    """404 for a log request naming a replica the job does not have (both backends)."""
    no_such = msg("no_replica", name=repr(name), replica=repr(replica), has=", ".join(replicas))
    return BackendError(no_such, status=404)


def dropped_warning(paths: list[str], kind: str = "PyTorchJob") -> Message:
    return msg("warn_dropped_fields", count=len(paths), kind=kind, paths=", ".join(paths))


class Backend(ABC):
    """Submit, inspect and remove jobs of every kind it runs (``job_kinds``); one
    implementation per place jobs run."""

    name: str = ""
    #: Whether ``list_jobs_blocking`` and ``get_job_blocking`` answer without an event
    #: loop and hold nothing ``close`` releases (the local backend reads files):
    #: ``ptjob list``/``status`` then need no asyncio.
    reads_without_loop = False

    @abstractmethod
    async def submit(self, spec: JobSpec) -> JobInfo:
        """Create the job; ``JobExists`` if the name is taken. Nothing is left
        behind when it fails."""

    @abstractmethod
    async def list_jobs(self) -> list[JobInfo]:
        """Every job, newest first."""

    @abstractmethod
    async def get_job(self, name: str) -> JobInfo:
        """One job with its replicas; ``JobNotFound`` if absent."""

    def list_jobs_blocking(self) -> list[JobInfo]:
        """``list_jobs`` without an event loop, where ``reads_without_loop``."""
        raise NotImplementedError(f"the {self.name} backend lists jobs on an event loop")

    def get_job_blocking(self, name: str) -> JobInfo:
        """``get_job`` without an event loop, where ``reads_without_loop``."""
        raise NotImplementedError(f"the {self.name} backend reads jobs on an event loop")

    @abstractmethod
    async def delete_job(self, name: str) -> None:
        """Stop every replica and remove the job; ``JobNotFound`` if absent."""

    @abstractmethod
    async def suspend(self, name: str) -> JobInfo:
        """Pause the job as ``runPolicy.suspend: true`` does: its replicas are stopped
        (pods deleted), the job stays, state Suspended. ``JobNotFound``; ``BackendError``
        (409) when the job is finished."""

    @abstractmethod
    async def resume(self, name: str) -> JobInfo:
        """Continue a suspended job as ``runPolicy.suspend: false`` does: its replicas
        start again from scratch and the start time is reset. ``JobNotFound``;
        ``BackendError`` (409) when the job is finished."""

    @abstractmethod
    async def events(self, name: str) -> list[Event]:
        """Events of the job and its replicas, oldest first."""

    @abstractmethod
    async def volumes(self) -> list[Volume]:
        """The claims a job can mount."""

    @abstractmethod
    def logs(
        self,
        name: str,
        *,
        replica: str | None = None,
        follow: bool = False,
        tail: int | None = None,
        previous: bool = False,
        since: Mapping[str, int] | None = None,
        timestamps: bool = False,
        keep_stamps: bool = False,
    ) -> AsyncIterator[LogChunk]:
        """The logs of every replica (or one), as chunks of whole lines.

        ``tail`` limits each replica's backlog to its last lines; ``since`` maps a
        replica to the ``offset`` of the last chunk seen, to resume without
        duplicates; ``follow`` keeps going until the job is finished and every log
        is read, picking up replicas that start later; ``timestamps`` gives each
        chunk its lines' ``times``; ``keep_stamps`` (unless ``timestamps``) leaves each
        line its ``<stamp> `` for the reader to remove (chunks ``stamped``: the log
        websocket's, whose browser removes them).
        """

    async def progress(self, name: str) -> tuple[JobProgress | None, MetricHistory | None]:
        """The job's progress and each metric's bounded history (``GET
        jobs/{name}/progress``); ``JobNotFound``. By default the progress ``get_job``
        gives and no history."""
        return (await self.get_job(name)).progress, None

    async def run(self, name: str) -> dict[str, Any]:
        """The run record (``GET jobs/{name}/run``, ``job.run()``, ``ptjob run``): what
        ``run_record`` found, each metric's final value and history; ``JobNotFound``."""
        from ..job.run import run_wire

        record = await self.run_record(name)
        progress, history = await self.progress(name)
        return run_wire(
            record,
            progress.to_wire() if progress is not None else None,
            history.to_wire() if history is not None else {},
        )

    async def run_record(self, name: str) -> RunRecord:
        """What the run reported: the lines ``report`` printed in the
        chief replica's log (every backend reads its logs, also once its pods are gone:
        the archive), then what Lightning/Hugging Face wrote in its log directory where
        this server reads it; ``JobNotFound``."""
        from ..job.run import RunLog

        info = await self.get_job(name)
        chief = chief_replica(r.name for r in info.replicas)
        found = RunLog()
        with contextlib.suppress(BackendError):  # no log (yet, or any more): no reports
            async for chunk in self.logs(name, replica=chief):
                if not chunk.notice:
                    found.feed(chunk.text.splitlines())
        record = found.record
        if info.logdir:
            try:
                logdir = await self.job_logdir(name)
            except BackendError:
                return record  # not readable from here: what the job reported
            from .run_files import library_files  # PyYAML: for a run record only

            record.add_files(await in_thread(library_files, Path(logdir), info.logdir))
        return record

    async def clone_spec(
        self,
        name: str,
        *,
        new_name: str | None = None,
        resume_from: str | None = None,
        gpu_resource: str | None = None,
    ) -> dict[str, Any]:
        """The job body of a copy of job ``name`` (read back from its manifest) as
        ``new_name`` (default ``<name>-2``, ``-3``...: the first free one, cut to the
        kind's name limit), resuming from the checkpoint ``resume_from`` if given
        (``PTJOB_RESUME_FROM``); ``JobNotFound``, ``JobSpecInvalid`` naming
        ``fromCheckpoint``, ``BackendError`` (409) when the job cannot be read back."""
        from ..job.clone import clone_body, clone_name
        from ..kinds import kind_of

        info = await self.get_job(name)
        if info.manifest is None:
            raise BackendError(msg("clone_no_manifest", name=name), status=409)
        kind = kind_of(info.manifest)
        try:
            spec = kind.parse(info.manifest, gpu_resource=gpu_resource)
        except JobSpecInvalid as error:
            unreadable = msg("clone_unreadable", name=name, problem=str(error))
            raise BackendError(unreadable, status=409) from error
        if new_name is None:
            taken = (job.name for job in await self.list_jobs())
            new_name = clone_name(name, taken, kind.max_name_length(spec))
        return clone_body(spec.to_wire(), name=new_name, resume_from=resume_from)

    async def clone(
        self, name: str, *, new_name: str | None = None, resume_from: str | None = None
    ) -> JobInfo:
        """Submit ``clone_spec``'s copy of job ``name``."""
        from ..job.spec import JobSpec

        body = await self.clone_spec(name, new_name=new_name, resume_from=resume_from)
        return await self.submit(JobSpec.from_wire(body))

    async def wait(
        self,
        name: str,
        *,
        timeout: float | None = None,
        interval: float = 0.5,
        watch: Callable[[JobInfo], None] | None = None,
    ) -> JobInfo:
        """Poll until the job is Succeeded or Failed; ``TimeoutError`` past ``timeout``.
        ``watch`` sees the job at every look (``ptjob wait``'s progress line)."""
        import asyncio  # loaded by the loop running this already (see ``in_thread``)

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = await self.get_job(name)
            if watch is not None:
                watch(job)
            if job.state.finished:
                return job
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"job {name!r} is still {job.state.value} after {timeout} s")
            await asyncio.sleep(interval)

    def for_namespace(self, namespace: str | None) -> Backend:
        """This backend on ``namespace`` (None: the default one); ``BackendError`` (403)
        when the configuration does not allow it."""
        if namespace is None:
            return self
        raise BackendError(msg("no_namespaces", backend=self.name), status=400)

    async def dropped_fields(self, manifest: Mapping[str, Any]) -> list[str]:
        """Paths of the fields of ``manifest`` that the place jobs run would drop
        silently (a cluster prunes what its CRD schema does not declare); ``BackendError``
        when that cannot be checked. The local backend has no schema and keeps every
        field: nothing."""
        return []

    async def job_kinds(self) -> list[JobKind]:
        """The job kinds this backend can run, preferred first (by default only the
        default kind)."""
        from ..kinds import DEFAULT_KIND

        return [DEFAULT_KIND]

    async def runtimes(self) -> list[Runtime]:
        """The Kubeflow Trainer runtimes a TrainJob can name here (none where TrainJobs
        are not run)."""
        return []

    async def form_defaults(self) -> dict[str, Any]:
        """Defaults for a new job that depend on where the server runs (in a cluster:
        the notebook's own image and PVC mounts, the namespace)."""
        return {}

    async def job_logdir(self, name: str) -> str:
        """The job's TensorBoard log directory as a path this server can read
        (the same PVC, seen from here); ``BackendError`` saying why not."""
        raise BackendError(f"the {self.name} backend cannot locate log directories", status=501)

    def readable_roots(self) -> list[str]:
        """Directories outside the server's root where job data lands (TensorBoard
        may read them)."""
        return []

    async def warm_up(self) -> None:  # noqa: B027 - optional hook
        """Get ready to answer fast (connect, check the API); called at server start."""

    async def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release connections; the backend is not used afterwards."""
