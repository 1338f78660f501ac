"""``LocalBackend``: the backend contract over local processes and their on-disk state.

Listing and reading jobs (``list_jobs_blocking``, ``get_job_blocking``: ``ptjob list``
and ``status``) read JSON files only; what submitting, logs, events and deleting need
(the job model's validation, the kinds' manifest code, planning, processes, the log
archive) is imported by the methods that use it, so those commands start without it
(``tests/test_cli.py`` checks their imports)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import untrusted_files
from ...job.failure import JobFailure, JobWaiting, job_waiting
from ...job.k8s_rules import check_dns1035_label
from ...job.messages import Message, coded_from_wire, msg
from ...kinds import kind_named
from ...kinds.pytorchjob import PYTORCHJOB
from ...processes import ProcessIdentity
from ..base import (
    Backend,
    BackendError,
    Condition,
    Event,
    JobExists,
    JobInfo,
    JobNotFound,
    JobState,
    LogChunk,
    ReplicaInfo,
    Volume,
    finished_error,
    in_thread,
    unknown_replica,
)
from . import index
from .controller import job_settled
from .controllers import CONTROLLERS, FAILURE_KEY, MESSAGE_KEY, WAITING_KEY
from .progress import progress_of, read_history
from .store import JobDir, default_root, default_volume_root, read_json, write_json

if TYPE_CHECKING:
    from ...job.progress import JobProgress, MetricHistory
    from ...job.spec import JobSpec
    from ...kinds import JobKind
    from ..archive import ArchiveLocation

CHUNK = 65536
# A log read in one thread hop: a hop costs more than reading 256 KiB from the page cache.
BLOCK = 4 * CHUNK
READ_SHARE_MIN = CHUNK  # a replica's read in a round of several (a line or more)
FOLLOW_POLL = 0.1
# A supervisor that has not written its pid this long after submit is presumed dead.
SUPERVISOR_START_GRACE = 30.0
STOP_TIMEOUT = 10.0
MAX_EVENTS = 1000  # the newest events GET events answers with
MAX_EVENT_BYTES = 1 << 20  # read from the end of the events file
# Each node is a process (torchrun: several); more than this per CPU only thrashes.
NODES_PER_CPU = 4


def no_local_effect(spec: JobSpec) -> list[Message]:
    """What to tell a user who set fields that only a cluster uses (``JobField.local``):
    accepted, so the same job runs in both places, but changing nothing here."""
    from ...job.fields import FIELDS

    unused = [
        f"{f.wire} ({f.flag})"
        for f in FIELDS
        if not f.local and getattr(spec, f.attr) not in (None, (), {}, f.default)
    ]
    if not unused:
        return []
    return [msg("warn_no_local_effect", fields=", ".join(unused))]


class LocalBackend(Backend):
    """Jobs as local processes; see ``plan`` and ``supervisor`` for the details.

    ``root`` holds the jobs' state, ``volume_root/<claim>`` is the directory a
    claim maps to unless ``claim_dirs`` names another, and ``default_workdir`` is
    where a job without ``workdir`` starts. A job may have at most ``max_nodes`` nodes
    (default: ``NODES_PER_CPU`` per CPU of this machine). ``crash_back_off``: the
    first wait, in seconds, before a crashed node is restarted in place (OnFailure,
    Always), doubling up to 30 times that, as the kubelet's 10 s to 5 min (a test knob:
    the supervisor reads it from the job's ``job.json``; default the kubelet's
    ``CRASH_BACK_OFF``); ``alone_grace``: the seconds
    nodes restarted after all their peers exited wait before the job's message says it
    cannot complete (another test knob; default the supervisor's ``ALONE_GRACE``).
    """

    name = "local"
    reads_without_loop = True

    def __init__(
        self,
        *,
        root: str | Path | None = None,
        volume_root: str | Path | None = None,
        claim_dirs: Mapping[str, str | Path] | None = None,
        default_workdir: str | Path | None = None,
        max_nodes: int | None = None,
        crash_back_off: float | None = None,
        alone_grace: float | None = None,
    ) -> None:
        self.crash_back_off = crash_back_off
        self.alone_grace = alone_grace
        self.root = Path(root) if root else default_root()
        self.volume_root = Path(volume_root) if volume_root else default_volume_root()
        self.claim_dirs = {k: Path(v) for k, v in (claim_dirs or {}).items()}
        self.default_workdir = Path(default_workdir) if default_workdir else Path.cwd()
        self.jobs_dir = self.root / "jobs"
        # Finished jobs' JobInfo by name, with the identity of the files it was read from.
        self._finished: dict[str, tuple[tuple[int, ...], JobInfo]] = {}
        # The index's jobs, with the identity of the index file they were read from.
        self._index_cache: tuple[tuple[int, ...], dict[str, tuple[int, JobInfo]]] | None = None
        self.max_nodes_configured = bool(max_nodes)
        self.max_nodes = max_nodes or NODES_PER_CPU * (os.cpu_count() or 1)

    # -- helpers ----------------------------------------------------------------------

    def claim_dir(self, claim: str) -> Path:
        """The local directory of a claim (created on first use, like a dynamic PVC)."""
        return self.claim_dirs.get(claim, self.volume_root / claim)

    def _jobdir(self, name: str) -> JobDir:
        # Only a job's name (the job model's rule) becomes a path: "../x", "/x" or a
        # name too long for a file name cannot be a job, and reach nothing.
        if check_dns1035_label(name) is not None:
            raise JobNotFound(name)
        jobdir = JobDir(self.jobs_dir / name)
        if not jobdir.job.exists():
            raise JobNotFound(name)
        return jobdir

    # -- contract -----------------------------------------------------------------------

    async def job_kinds(self) -> list[JobKind]:
        """Every kind whose controller a local supervisor plays (``JobKind.controller``)."""
        from ...kinds import KINDS

        return [kind for kind in KINDS if kind.controller in CONTROLLERS]

    async def submit(self, spec: JobSpec) -> JobInfo:
        from ...job.errors import FieldError, JobSpecInvalid
        from ...kinds import kind_for
        from ...kinds.trainjob import TRAINJOB
        from ...kinds.trainjob.manifest import DEFAULT_RUNTIME
        from . import initializers

        kind = kind_for(spec)
        if kind is TRAINJOB and (spec.runtime or DEFAULT_RUNTIME) != DEFAULT_RUNTIME:
            raise JobSpecInvalid(
                [
                    FieldError(
                        "runtime",
                        msg("local_runtime", runtime=DEFAULT_RUNTIME, got=repr(spec.runtime)),
                    )
                ]
            )
        self._check_nodes(spec)
        initializers.local_sources(spec)  # what cannot be copied is refused before planning
        # Planning, nvidia-smi, files and the supervisor's start all block: not on the loop.
        info = await in_thread(self._create, spec)
        info.warnings[:0] = [*spec.warnings, *no_local_effect(spec)]
        return info

    def _check_nodes(self, spec: JobSpec) -> None:
        """Refuse more nodes than this machine runs, before anything is planned."""
        from ...job.errors import FieldError, JobSpecInvalid

        if spec.nodes <= self.max_nodes:
            return
        if self.max_nodes_configured:
            problem = msg("local_nodes_configured", maximum=self.max_nodes, nodes=spec.nodes)
        else:
            problem = msg(
                "local_nodes",
                maximum=self.max_nodes,
                perCpu=NODES_PER_CPU,
                cpus=os.cpu_count() or 1,
                nodes=spec.nodes,
            )
        raise JobSpecInvalid([FieldError("nodes", problem)])

    def _create(self, spec: JobSpec) -> JobInfo:
        import secrets
        import shutil
        from dataclasses import replace

        from ...kinds import kind_for
        from ...processes import free_port
        from . import initializers
        from .kubelet import CRASH_BACK_OFF
        from .plan import MARK_ENV, plan_nodes, plans_to_wire

        kind = kind_for(spec)
        manifest = kind.build(spec)
        claim_dir = {pvc.claim: self.claim_dir(pvc.claim) for pvc in spec.pvc}
        sources = initializers.local_sources(spec)
        jobdir = JobDir(self.jobs_dir / spec.name)
        port = free_port()
        plans = plan_nodes(
            spec,
            claim_dir=claim_dir,
            port=port,
            default_cwd=self.default_workdir,
            gpu_count=gpu_count() if spec.gpus else 0,
            script_path=jobdir.script,
            manifest=manifest,
            workspace=jobdir.workspace if sources else None,
        )
        # Owner only: a job's logs, script and state are nobody else's to read.
        self.jobs_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            jobdir.path.mkdir(mode=0o700)
        except FileExistsError:
            raise JobExists(spec.name) from None
        try:
            # An entry left by a delete that did not finish is not this job's (its new
            # directory may even have the old one's inode).
            index.forget(self.jobs_dir, spec.name)
        except BaseException:
            jobdir.path.rmdir()
            raise
        try:
            for directory in claim_dir.values():
                directory.mkdir(parents=True, exist_ok=True)
            jobdir.logs.mkdir()
            for part, local in initializers.initialize(jobdir.workspace, sources).items():
                jobdir.add_event(
                    "Normal",
                    "Initialized",
                    f"{part} {getattr(spec, part)} copied to {initializers.WORKSPACE}/{part} "
                    f"(here {local}), as the runtime's {part}-initializer would",
                    spec.name,
                )
            if spec.script is not None:
                jobdir.script.parent.mkdir()
                jobdir.script.write_text(spec.script, encoding="utf-8")
            now = time.time()
            created = CONTROLLERS[kind.controller].created_conditions(spec.name, now)
            write_json(jobdir.manifest, manifest)
            # Every process of the job inherits this mark, wherever it goes: DELETE finds
            # what outlived its supervisor and watchdog (killed together) by it.
            mark = secrets.token_hex(16)
            plans = [replace(p, env={**p.env, MARK_ENV: mark}) for p in plans]
            write_json(jobdir.plan, plans_to_wire(plans))
            write_json(
                jobdir.replicas,
                {p.replica: {"phase": "Pending", "restarts": 0} for p in plans},
            )
            write_json(
                jobdir.job,
                {
                    "state": "Created",
                    "created": now,
                    "kind": kind.kind,
                    "conditions": created,
                    "nodes": spec.nodes,
                    "gpus": spec.gpus,
                    "logdir": spec.logdir,
                    "port": str(port),
                    "crash_back_off": (
                        CRASH_BACK_OFF if self.crash_back_off is None else self.crash_back_off
                    ),
                    "mark": mark,
                    **({} if self.alone_grace is None else {"alone_grace": self.alone_grace}),
                },
            )
            if created:
                jobdir.add_event(
                    "Normal", "PyTorchJobCreated", f"Created job {spec.name}", spec.name
                )
            self._start_supervisor(jobdir)
        except BaseException:
            shutil.rmtree(jobdir.path, ignore_errors=True)
            raise
        return self._info(jobdir)

    def _start_supervisor(self, jobdir: JobDir) -> None:
        import subprocess
        import sys

        # The supervisor double-forks; this child exits as soon as it has detached.
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter_pytorchjob.backends.local.supervisor",
                str(jobdir.path),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )
        if child.wait(timeout=30) != 0:
            raise BackendError(msg("supervisor_failed"), status=500)

    async def list_jobs(self) -> list[JobInfo]:
        return await in_thread(self.list_jobs_blocking)

    def list_jobs_blocking(self) -> list[JobInfo]:
        """Every job, newest first. Settled jobs (finished, no node running, nobody to
        write their files) come from the index (``index``: one file for all of them,
        read again only when it changed); the others from their files. A finished job's
        files no longer change (unless a straggling node ends), so its ``JobInfo`` is
        kept, keyed by the files' identity (inode, mtime, size): a list of 1,000 mostly
        finished jobs reads only the running ones. Settled jobs missing from the index
        are added to it."""
        try:
            listing = os.scandir(self.jobs_dir)
        except FileNotFoundError:
            return []
        indexed = self._indexed()
        jobs = []
        finished: dict[str, tuple[tuple[int, ...], JobInfo]] = {}
        settled: dict[str, dict[str, Any]] = {}
        with listing:
            for entry in listing:
                name = entry.name
                if check_dns1035_label(name) is not None or not entry.is_dir():
                    continue
                known_settled = indexed.get(name)
                # The inode from the directory listing itself: no read per job.
                if known_settled is not None and known_settled[0] == entry.inode():
                    jobs.append(known_settled[1])
                    continue
                jobdir = JobDir(Path(entry.path))
                with contextlib.suppress(FileNotFoundError, json.JSONDecodeError):
                    key = (*file_key(jobdir.job), *file_key(jobdir.replicas))
                    known = self._finished.get(name)
                    if known is not None and known[0] == key:
                        info = known[1]
                    else:
                        job, replicas = read_json(jobdir.job, {}), read_json(jobdir.replicas, {})
                        info = self._info_of(jobdir, job, replicas)
                        if is_settled(info, job):
                            settled[name] = index.entry_for(
                                jobdir.path, job, replicas, entry.inode()
                            )
                    jobs.append(info)
                    if job_settled(info.state, (r.phase for r in info.replicas)):
                        finished[name] = (key, info)
        self._finished = finished
        if settled:
            with contextlib.suppress(OSError):  # a read-only root: list all the same
                index.add(self.jobs_dir, settled, recheck=True)
        return sorted(jobs, key=lambda j: j.created, reverse=True)

    def _indexed(self) -> dict[str, tuple[int, JobInfo]]:
        """The index's jobs as (directory inode, JobInfo), parsed again only when the
        index file changed."""
        try:
            key = file_key(index.index_path(self.jobs_dir))
        except FileNotFoundError:
            return {}
        if self._index_cache is not None and self._index_cache[0] == key:
            return self._index_cache[1]
        jobs = {}
        for name, entry in index.read_index(self.jobs_dir).items():
            with contextlib.suppress(TypeError, ValueError, KeyError):
                info = self._info_of(JobDir(self.jobs_dir / name), entry["job"], entry["replicas"])
                jobs[name] = (entry["inode"], info)
        self._index_cache = (key, jobs)
        return jobs

    async def get_job(self, name: str) -> JobInfo:
        return self.get_job_blocking(name)

    def get_job_blocking(self, name: str) -> JobInfo:
        return self._info(self._jobdir(name), with_manifest=True)

    def _info(self, jobdir: JobDir, *, with_manifest: bool = False) -> JobInfo:
        job = read_json(jobdir.job, {})
        replicas = read_json(jobdir.replicas, {})
        return self._info_of(jobdir, job, replicas, with_manifest=with_manifest)

    def _info_of(
        self,
        jobdir: JobDir,
        job: dict[str, Any],
        replicas: dict[str, Any],
        *,
        with_manifest: bool = False,
    ) -> JobInfo:
        """The job as its ``job.json`` and ``replicas.json`` (these contents) say."""
        kind = kind_named(job.get("kind") or PYTORCHJOB.kind)
        state = CONTROLLERS[kind.controller].state_shown(
            JobState(job.get("state", "Created")),
            [r.get("phase", "Pending") for r in replicas.values()],
        )
        conditions = [Condition(**c) for c in job.get("conditions", [])]
        lost = not state.finished and supervision_gone(job)
        if lost:
            # Supervisor and watchdog both gone (a machine restart, both killed): nobody
            # runs the job any more. Stop what may still run of it.
            from .watchdog import LOST_REASON

            stop_nodes(replicas)
            state = JobState.FAILED
            conditions.append(
                Condition(
                    "Failed",
                    "True",
                    LOST_REASON,
                    f"the supervisor of {jobdir.name} and its watchdog are gone (was the "
                    "machine restarted?); its nodes were stopped",
                    time.time(),
                )
            )
        infos = []
        for name, r in replicas.items():
            phase = r.get("phase", "Pending")
            if lost and phase in ("Pending", "Running"):
                phase = "Unknown"
            infos.append(
                ReplicaInfo(
                    name=name,
                    phase=phase,
                    restarts=r.get("restarts", 0),
                    exit_code=r.get("exit_code"),
                    reason=r.get("reason"),
                    message=coded_from_wire(r, "message") or r.get("message"),
                    node="localhost",
                )
            )
        return JobInfo(
            name=jobdir.name,
            state=state,
            replicas=infos,
            nodes=job.get("nodes", len(infos)),
            gpus=job.get("gpus", 0),
            created=job.get("created", 0.0),
            kind=kind.kind,
            started=job.get("started"),
            finished=job.get("finished"),
            conditions=conditions,
            logdir=job.get("logdir"),
            manifest=read_json(jobdir.manifest) if with_manifest else None,
            progress=progress_of(job),
            failure=failure_of(job, conditions) if state is JobState.FAILED else None,
            waiting=job_waiting(state.value, infos) or waiting_of(job, state),
            message=coded_from_wire(job, MESSAGE_KEY)
            or (job.get(MESSAGE_KEY) if isinstance(job.get(MESSAGE_KEY), str) else None),
        )

    async def progress(self, name: str) -> tuple[JobProgress | None, MetricHistory | None]:
        jobdir = self._jobdir(name)
        return await in_thread(
            lambda: (progress_of(read_json(jobdir.job, {})), read_history(jobdir))
        )

    async def delete_job(self, name: str) -> None:
        jobdir = self._jobdir(name)
        await in_thread(self._stop_everything, jobdir)
        await in_thread(index.forget, self.jobs_dir, name)
        # A second DELETE (or a PATCH) racing this one finds the job gone: 404.
        await in_thread(jobdir.remove)

    def _stop_everything(self, jobdir: JobDir) -> None:
        """SIGTERM the supervisor (it stops the nodes), then make sure of it. Only the
        recorded processes that are still those very processes are signalled: a
        finished job signals nothing."""
        from ...processes import kill_marked
        from .plan import MARK_ENV

        job = read_json(jobdir.job, {})
        end = time.monotonic() + SUPERVISOR_START_GRACE
        while "supervisor" not in job and not JobState(job.get("state", "Created")).finished:
            # It never started, or another DELETE removed it meanwhile: nothing to stop.
            if time.monotonic() > end or not jobdir.job.exists():
                break
            time.sleep(FOLLOW_POLL)  # just submitted: let it record itself first
            job = read_json(jobdir.job, {})
        supervisor = ProcessIdentity.from_wire(job.get("supervisor"))
        watchdog = ProcessIdentity.from_wire(job.get("watchdog"))
        if (
            supervisor is not None
            and supervisor.send(signal.SIGTERM)
            and not wait_gone(supervisor, STOP_TIMEOUT)
        ):
            supervisor.send(signal.SIGKILL)  # its watchdog then kills every node
        if watchdog is not None:
            wait_gone(watchdog, STOP_TIMEOUT)
        stop_nodes(read_json(jobdir.replicas, {}))  # left by a supervisor killed earlier
        mark = job.get("mark")
        if isinstance(mark, str) and len(mark) >= 32:
            # What left the nodes' groups (a new session), orphaned when the supervisor
            # and its watchdog died together: found by the job's mark.
            kill_marked(MARK_ENV, mark, timeout=STOP_TIMEOUT)

    async def suspend(self, name: str) -> JobInfo:
        return await in_thread(self._set_suspend, name, True)

    async def resume(self, name: str) -> JobInfo:
        return await in_thread(self._set_suspend, name, False)

    def _set_suspend(self, name: str, suspend: bool) -> JobInfo:
        """The kind's suspend patch (``runPolicy.suspend``, a TrainJob's ``spec.suspend``)
        merged into the job's spec (``manifest.json``, which only the backend writes), as
        in a cluster; the supervisor sees the change and stops or restarts the nodes as
        the controller does."""
        from ...kinds import kind_of
        from ...kinds.manifests import merge

        jobdir = self._jobdir(name)
        # Read, change and write under the job's lock: other threads and processes (the
        # CLI, a kernel) suspend and resume it too, and DELETE removes it only under it.
        with jobdir.lock():
            info = self._info(jobdir)
            if info.state.finished:
                raise finished_error(name, info.state, "suspended" if suspend else "resumed")
            manifest = read_json(jobdir.manifest)
            merge(manifest, kind_of(manifest).suspend_patch(suspend))
            write_json(jobdir.manifest, manifest)
            return self._info(jobdir, with_manifest=True)

    async def events(self, name: str) -> list[Event]:
        return await in_thread(self._events, self._jobdir(name))

    def _events(self, jobdir: JobDir) -> list[Event]:
        """The newest ``MAX_EVENTS`` events: a job restarting for days appends events
        for days, and the answer (and the read) stays bounded."""
        try:
            data = untrusted_files.read_tail(jobdir.events, MAX_EVENT_BYTES)
        except OSError:
            return []
        lines = data.decode("utf-8", "replace").split("\n")
        if len(data) == MAX_EVENT_BYTES:
            lines = lines[1:]  # the first may be cut
        events = []
        for line in lines[-MAX_EVENTS - 1 :]:
            with contextlib.suppress(json.JSONDecodeError, TypeError):
                events.append(Event(**json.loads(line)))
        return events[-MAX_EVENTS:]

    async def job_logdir(self, name: str) -> str:
        """The claim's local directory for the job's ``logdir`` (see ``plan.Mounts``)."""
        from ...kinds import kind_of
        from .plan import Mounts

        jobdir = self._jobdir(name)
        manifest = read_json(jobdir.manifest)
        spec = kind_of(manifest).parse(manifest)
        if not spec.logdir:
            raise BackendError(msg("no_logdir", name=repr(name)), status=400)
        claim_dir = {pvc.claim: self.claim_dir(pvc.claim) for pvc in spec.pvc}
        return Mounts.for_spec(spec, claim_dir).rewrite_path(spec.logdir)

    def readable_roots(self) -> list[str]:
        return [str(self.volume_root), *(str(p) for p in self.claim_dirs.values())]

    async def warm_up(self) -> None:
        """Import what a log stream uses (loaded lazily: the CLI never needs it): ~7 ms
        that would otherwise hold the server's loop at its first log stream (#28)."""
        from .. import archive, logmerge, loopshare  # noqa: F401

    async def volumes(self) -> list[Volume]:
        import shutil

        claims: dict[str, Path] = {}
        if self.volume_root.is_dir():
            claims.update({p.name: p for p in self.volume_root.iterdir() if p.is_dir()})
        claims.update(self.claim_dirs)
        volumes = []
        for claim, path in sorted(claims.items()):
            capacity = None
            with contextlib.suppress(OSError):
                capacity = f"{shutil.disk_usage(path).total // 2**30}Gi"
            volumes.append(
                Volume(
                    name=claim,
                    phase="Bound" if path.is_dir() else "Pending",
                    capacity=capacity,
                    access_modes=["ReadWriteMany"],
                    local_path=str(path),
                )
            )
        return volumes

    async def logs(
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
        from ..archive import read_archive, tail_offset
        from ..logmerge import TimeMerge
        from ..loopshare import LOG_STREAMS

        jobdir = self._jobdir(name)
        replicas = list(read_json(jobdir.replicas, {}))
        if replica is not None and replica not in replicas:
            raise unknown_replica(name, replica, replicas)
        wanted = [replica] if replica else replicas
        # A log the supervisor removed (cleanPodPolicy All, a deadline, suspended) is read
        # from the job's log archive, as a pod's that is gone.
        gone = [r for r in wanted if not jobdir.log(r, previous=previous).exists()]
        if gone and (not follow or previous or self._settled(jobdir)):
            location = await in_thread(self._archive_location, jobdir)
            if location is not None:
                async for chunk in read_archive(
                    location,
                    gone,
                    previous=previous,
                    since=since,
                    tail=tail,
                    timestamps=timestamps,
                    keep_stamps=keep_stamps,
                ):
                    yield chunk
                wanted = [r for r in wanted if r not in gone]
        offsets: dict[str, int] = {}
        for r in wanted:
            path = jobdir.log(r, previous=previous)
            if since and r in since:
                problem = await in_thread(resume_problem, path, since[r])
                if problem:
                    raise BackendError(f"since[{r}]: {problem}", status=400)
                offsets[r] = since[r]
            elif tail is not None:
                offsets[r] = await in_thread(tail_offset, path, tail)
            else:
                offsets[r] = 0
        import asyncio  # loaded by the loop running this already (see ``in_thread``)

        bases = dict(offsets)  # where the lines given out so far end
        settled = False
        if previous:
            follow = False
        merged = TimeMerge(wanted, stamped=timestamps, keep_stamps=keep_stamps)
        for r in wanted:
            merged.opened(r)
        # A round reads about BLOCK in all: what the merge holds stays small (a process
        # whose objects outgrow its arenas pays in page faults), one replica gets it all.
        share = max(READ_SHARE_MIN, BLOCK // max(1, len(wanted)))
        paths = {r: jobdir.log(r, previous=previous) for r in wanted}
        while True:
            progressed = False
            # A replica with many lines pending is later than another's backlog: it waits
            # its turn. The others are read in one thread hop (those left with a few
            # lines too: replicas printing in step leave a few each time).
            empty = [r for r in wanted if merged.pending_bytes(r) < share // 4]
            reads = [(paths[r], offsets[r]) for r in empty]
            blocks = await in_thread(read_blocks, reads, share)
            await LOG_STREAMS.turn()
            for r, (block, offsets[r], more) in zip(empty, blocks, strict=True):
                merged.add(r, block)
                progressed = progressed or bool(block)
                # Caught up with what the file holds now: live lines go out as they come.
                (merged.opened if more else merged.closed)(r)
            while (taken := merged.take()) is not None:
                for r, size in zip(taken.replicas, taken.sizes, strict=True):
                    bases[r] += size
                ends = tuple(bases[r] for r in taken.replicas)
                yield LogChunk.of_taken(taken, ends, previous)
            if progressed:
                continue
            if not follow:
                return
            # Finished and fully read: nothing more will be written.
            if not jobdir.path.exists():
                return
            if self._settled(jobdir):
                if settled:  # a last look has been taken: the final lines have landed
                    return
                settled = True
                continue
            await asyncio.sleep(FOLLOW_POLL)

    def _archive_location(self, jobdir: JobDir) -> ArchiveLocation | None:
        """Where the job's log archive is on this machine, None if it keeps none."""
        from ...job.spec import writable_mount
        from ...kinds import kind_of, log_archive
        from ..archive import ArchiveLocation
        from .plan import Mounts

        manifest = read_json(jobdir.manifest)
        spec = kind_of(manifest).parse(manifest)
        base = spec.log_archive_base
        mount = writable_mount(spec.pvc, base) if base else None
        if base is None or mount is None:
            return None
        claim_dir = {pvc.claim: self.claim_dir(pvc.claim) for pvc in spec.pvc}
        local = Mounts.for_spec(spec, claim_dir).rewrite_path(
            log_archive.archive_dir(base, jobdir.name)
        )
        created = read_json(jobdir.job, {}).get("created", 0)
        return ArchiveLocation(mount.claim, Path(local), not_before_ns=int(created) * 1_000_000_000)

    def _settled(self, jobdir: JobDir) -> bool:
        """The job is finished and no node process is left to write."""
        job = read_json(jobdir.job, {})
        state = JobState(job.get("state", "Created"))
        if not state.finished:
            return "supervisor" in job and supervision_gone(job)
        replicas = read_json(jobdir.replicas, {})
        return job_settled(state, (r.get("phase") for r in replicas.values()))


def read_blocks(reads: list[tuple[Path, int]], size: int = BLOCK) -> list[tuple[bytes, int, bool]]:
    """``read_block`` of each (path, offset)."""
    return [read_block(path, offset, size) for path, offset in reads]


def read_block(path: Path, offset: int, block: int = BLOCK) -> tuple[bytes, int, bool]:
    """Whole lines of ``path`` from ``offset`` (at most ``block`` bytes), where they end,
    and whether more may follow at once (a full read). From the start again when the
    file is shorter than ``offset`` (a restart rotated it); nothing when it is gone."""
    from ..archive import file_size, read_at

    size = file_size(path)
    if size is None:  # not yet written, deleted (cleanPodPolicy All), or no regular file
        return b"", offset, False
    if offset > size:
        offset = 0
    try:
        data = read_at(path, offset, block)
    except OSError:  # deleted meanwhile, or replaced by what is no regular file
        return b"", offset, False
    cut = data.rfind(b"\n") + 1
    if not cut and len(data) == block:
        cut = len(data)  # one enormous line (from before lines were cut): in pieces
    return data[:cut], offset + cut, len(data) == block


def resume_problem(path: Path, offset: int) -> str | None:
    """Why ``offset`` cannot be where a chunk of ``path`` ended (``since``), or None.

    Chunks end after a newline, or inside a line longer than ``CHUNK`` (passed on in
    pieces): resuming anywhere else would start with half a line (or half a character).
    """
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        return f"must be the offset (a whole number >= 0) of a log message, got {offset!r:.40}"
    from ..archive import file_size, read_at

    size = file_size(path)
    if size is None:
        return None  # nothing written yet: reading starts at the beginning
    if offset == 0 or offset > size:  # offset > size: a restart rotated the log, start over
        return None
    start = max(0, offset - CHUNK)
    try:
        window = read_at(path, start, offset - start)
    except OSError:
        return None  # gone meanwhile: read_lines starts over
    if window.endswith(b"\n") or (start > 0 and b"\n" not in window):
        return None
    return (
        f"offset {offset} is not where a line of the log starts; resume with the offset "
        "of a message received"
    )


def waiting_of(job: dict[str, Any], state: JobState) -> JobWaiting | None:
    """What the supervisor found the running job waits for (nodes alone after their
    peers ended); nothing once it is finished."""
    return None if state.finished else JobWaiting.from_wire(job.get(WAITING_KEY))


def failure_of(job: dict[str, Any], conditions: list[Condition]) -> JobFailure | None:
    """The failure the supervisor recorded; else (its watchdog or this reader saw it
    gone) the Failed condition's reason and message, no node having failed."""
    recorded = JobFailure.from_wire(job.get(FAILURE_KEY))
    failed = [c for c in conditions if c.type == "Failed" and c.status == "True"]
    if recorded is not None or not failed:
        return recorded
    return JobFailure(replica="", reason=failed[-1].reason, message=failed[-1].message)


def is_settled(info: JobInfo, job: dict[str, Any]) -> bool:
    """Nothing will write the job's files any more: finished, no node running, its
    supervisor and watchdog gone (only a delete changes it now)."""
    return (
        job_settled(info.state, (r.phase for r in info.replicas))
        and "supervisor" in job
        and supervision_gone(job)
    )


def file_key(path: Path) -> tuple[int, int, int]:
    """What changes whenever the file is rewritten (atomically: a new inode)."""
    stat = path.stat()
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def supervision_gone(job: dict[str, Any]) -> bool:
    """Neither the job's supervisor nor its watchdog runs (the watchdog records how the
    supervisor ended, so while it lives the story is still being written)."""
    supervisor = ProcessIdentity.from_wire(job.get("supervisor"))
    if supervisor is None:
        return bool(time.time() - job.get("created", 0) > SUPERVISOR_START_GRACE)
    watchdog = ProcessIdentity.from_wire(job.get("watchdog"))
    return not supervisor.alive() and (watchdog is None or not watchdog.alive())


def stop_nodes(replicas: dict[str, Any]) -> None:
    """SIGKILL each recorded node still running as that very process, with its group."""
    for record in replicas.values():
        node = ProcessIdentity.from_wire(record.get("process"))
        if node is not None:
            node.send_group(signal.SIGKILL)
            node.send(signal.SIGKILL)


def wait_gone(process: ProcessIdentity, timeout: float) -> bool:
    """Wait until ``process`` has ended; whether it did within ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while process.alive():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def gpu_count() -> int:
    """GPUs this machine has (CUDA), without importing torch when there is no driver."""
    import shutil
    import subprocess

    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        out = subprocess.run(
            ["nvidia-smi", "--list-gpus"], capture_output=True, text=True, timeout=20, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))
