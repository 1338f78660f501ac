"""A failed cluster job's failure summary (``job/failure.py``), read once and kept.

A running job's crashed replica (restarting in place) is read once per crash and kept
in memory: where the job then fails at the backoff limit and its pods are deleted with
it (a TrainJob's Job controller does; cleanPodPolicy Running) that crash is the failure.
The first time a job is seen Failed, its kind names the replica that failed first and
the run whose log holds its output (``JobKind.failed_run``: the container's current run
or, restarted or in back-off, its previous one); that log's last lines are read through
the API server, else (the pod gone: cleanPodPolicy, the Job controller, a TTL) the
replica's runs in the job's log archive where this notebook mounts its PVC. The summary
is then kept in memory and written onto the job as the annotation ``FAILURE_ANNOTATION``
(a merge patch; best effort: without the right to patch, only this server keeps it), so
it survives the pods, their logs and a server restart: a server reads the annotation
before any log.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ...job.failure import JobFailure, failure_hint, failure_message, failure_tail
from ...job.progress import chief_replica
from ...job.status import JobInfo, JobState
from ...kinds import JobKind
from ...kinds.pods import FAILURE_ANNOTATION, FailedRun

LOGGER = logging.getLogger(__name__)

SCAN_LINES = 400  # of the failing run's log, searched for its traceback
SCAN_BYTES = 256 << 10
KEPT = 2000  # failures kept in memory (by job uid), the oldest forgotten first
PARALLEL = 4  # failing runs read at once (a first list of many failed jobs)

ReadLog = Callable[[str, dict[str, Any]], Awaitable[bytes | None]]
ReadArchive = Callable[[JobKind, dict[str, Any], str], Awaitable[list[str]]]
# A job as the backend read it: its kind, object, pods and JobInfo.
Found = tuple[JobKind, dict[str, Any], list[dict[str, Any]], JobInfo]
Annotate = Callable[[JobKind, str, dict[str, str]], Awaitable[None]]


def _decode(data: bytes) -> list[str]:
    return [line for line in data.decode("utf-8", errors="replace").split("\n") if line]


class FailureReader:
    """Fills ``JobInfo.failure`` of failed jobs: from memory, the job's annotation, else
    the failing run's log (then written as the annotation)."""

    def __init__(self, read_log: ReadLog, read_archive: ReadArchive, annotate: Annotate) -> None:
        self._read_log = read_log
        self._read_archive = read_archive
        self._annotate = annotate
        self._known: OrderedDict[str, JobFailure] = OrderedDict()
        # Running jobs' latest crash (by uid): (pod/restarts, its failure).
        self._crashes: OrderedDict[str, tuple[str, JobFailure]] = OrderedDict()
        self._reading: dict[str, asyncio.Task[JobFailure]] = {}
        self._parallel = asyncio.Semaphore(PARALLEL)

    async def fill(self, found: list[Found]) -> None:
        await asyncio.gather(*(self._fill(*item) for item in found))

    async def _fill(
        self, kind: JobKind, job: dict[str, Any], pods: list[dict[str, Any]], info: JobInfo
    ) -> None:
        meta = job.get("metadata") or {}
        uid = str(meta.get("uid") or info.name)
        if not info.state.finished:
            await self._crash_looping((kind, job, pods, info), uid)
            return
        if info.state is not JobState.FAILED:
            return
        failure = self._known.get(uid) or stored_failure(meta)
        if failure is None:
            # One read per job, however many requests ask at once.
            task = self._reading.get(uid)
            if task is None:
                task = self._reading[uid] = asyncio.ensure_future(
                    self._summarise((kind, job, pods, info), uid)
                )
                task.add_done_callback(lambda _: self._reading.pop(uid, None))
            failure = await asyncio.shield(task)
        self._keep(self._known, uid, failure)
        info.failure = failure

    @staticmethod
    def _keep(store: OrderedDict[str, Any], key: str, value: Any) -> None:
        store[key] = value
        store.move_to_end(key)
        while len(store) > KEPT:
            store.popitem(last=False)

    async def _crash_looping(self, found: Found, uid: str) -> None:
        """A running job with a crashed replica: its crash read now (once per crash),
        in case the job fails at the backoff limit and its pods go with it (a TrainJob's
        Job controller deletes them; cleanPodPolicy Running) before anyone looks."""
        kind, job, pods, info = found
        run = kind.failed_run(job, pods)
        if run.pod is None:
            return
        restarts = {r.name: r.restarts for r in info.replicas}.get(run.failure.replica, 0)
        key = f"{run.pod}/{restarts}"
        if self._crashes.get(uid, (None,))[0] == key:
            return
        async with self._parallel:
            failure = await self._read(kind, job, pods, run, info)
        self._keep(self._crashes, uid, (key, failure))

    async def _summarise(self, found: Found, uid: str) -> JobFailure:
        kind, job, pods, info = found
        async with self._parallel:
            run = kind.failed_run(job, pods)
            crash = self._crashes.pop(uid, None)
            if run.pod is None and crash is not None:
                # The pods are gone; the crash read while the job still ran is the failure.
                failure = crash[1]
                lines = await self._read_archive(kind, job, failure.replica)
                failure.log_source = "archive" if lines else None
                if lines:
                    failure.tail = failure_tail(lines)
            else:
                failure = await self._read(kind, job, pods, run, info)
        name = str((job.get("metadata") or {}).get("name", ""))
        try:
            await self._annotate(kind, name, {FAILURE_ANNOTATION: json.dumps(failure.to_wire())})
        except Exception as err:  # best effort: the summary stands without it
            LOGGER.debug("failure: could not annotate %s: %r", name, err)
        return failure

    async def _read(
        self,
        kind: JobKind,
        job: dict[str, Any],
        pods: list[dict[str, Any]],
        run: FailedRun,
        info: JobInfo,
    ) -> JobFailure:
        """``run``'s failure with its output: the run's log through the API, else the
        replica's newest run in the log archive."""
        failure = run.failure
        lines: list[str] = []
        if run.pod is not None:
            pod = next((p for p in pods if p["metadata"]["name"] == run.pod), None)
            query = {
                "container": kind.container if pod is None else kind.container_of_pod(pod),
                "previous": run.previous,
                "tailLines": SCAN_LINES,
                "limitBytes": SCAN_BYTES,
            }
            lines = _decode(await self._read_log(run.pod, query) or b"")
            failure.log_source = ("previous" if run.previous else "current") if lines else None
        no_replica = run.pod is None and not failure.replica
        if no_replica:
            # No replica failed (a deadline): the chief's last lines, where it stood;
            # the condition's message stays the failure's.
            lines = await self._chief_lines(kind, pods, failure)
        if not lines and failure.replica:
            lines = await self._read_archive(kind, job, failure.replica)
            failure.log_source = "archive" if lines else None
        failure.tail = failure_tail(lines)
        if not no_replica:
            failure.message = failure_message(lines) or failure.message
        others = [r.name for r in info.replicas if r.name != failure.replica and r.exit_code]
        failure.hint = failure_hint(
            failure.reason, failure.exit_code, lines, other_failed=", ".join(others) or None
        )
        return failure

    async def _chief_lines(
        self, kind: JobKind, pods: list[dict[str, Any]], failure: JobFailure
    ) -> list[str]:
        """The chief replica's last lines (its pod's current run), the chief then named
        as the failure's replica; none without its pod."""
        by_replica = {kind.replica_of_pod(p): p for p in pods}
        chief = chief_replica(by_replica)
        if chief is None:
            return []
        query = {"container": kind.container, "tailLines": SCAN_LINES, "limitBytes": SCAN_BYTES}
        name = str(by_replica[chief]["metadata"]["name"])
        lines = _decode(await self._read_log(name, query) or b"")
        if lines:
            failure.replica, failure.log_source = chief, "current"
        return lines


def stored_failure(meta: Mapping[str, Any]) -> JobFailure | None:
    """The summary an earlier read wrote onto the job, if it is one."""
    text = (meta.get("annotations") or {}).get(FAILURE_ANNOTATION)
    if not isinstance(text, str):
        return None
    try:
        return JobFailure.from_wire(json.loads(text))
    except ValueError:
        return None
