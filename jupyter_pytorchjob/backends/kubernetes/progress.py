"""The progress of a cluster's jobs from their logs and TensorBoard files (a TrainJob's
``status.trainerStatus`` comes with the object itself: ``kinds/trainjob/status.py``).

``ProgressWatcher`` polls while somebody looks: every list or read of jobs
(``GET jobs``, ``ptjob status``, ``%ptjob list``...) ``track``s the jobs it read and
gets their progress as last read; a task reads what is new every ``interval`` seconds
and stops ``IDLE`` seconds after the last look, so a server nobody watches asks the API
server nothing. Per poll, for each running job (``PARALLEL`` at a time):

- **the chief pod's log** (the master, else rank 0: ``chief_replica``) from the newest
  line already read: ``sinceTime`` (whole seconds; the lines at or before the newest
  seen are dropped), at most ``LOG_BUDGET`` bytes (``limitBytes``); once the newest
  line's second has ended (``SECOND_OVER`` before the read began), from the next second,
  so that a poll with nothing new reads nothing rather than that second again. The first read of a
  job takes only its last ``TAIL_LINES`` lines - the progress now, without pulling a log
  of gigabytes through the API server and the kubelet; so does the read after one that
  filled its budget (the job writes faster than we read: the newest progress matters
  more than every point of the history).
- **the event files** of its log directory where this notebook mounts the job's PVC (as
  TensorBoard reads them: ``NotebookPod.local_path``), from kept byte offsets, at most
  ``BOARD_BUDGET`` bytes per poll - a 100 MB file is caught up with over polls and never
  parsed again.

Parsing runs apart from the loop (``ProgressParser``: one worker process for a server,
a thread for a command). A job seen finished gets reads until nothing is new
(``FINISHING`` jobs per poll at most), then keeps its final progress for as long as
the server runs; a job gone from the list is forgotten. The history of each job's
metrics (``GET jobs/{name}/progress``) is kept in memory, bounded like the local one.
"""

from __future__ import annotations

import asyncio
import bisect
import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio.client.exceptions import ApiException

from ...job.errors import JobSpecInvalid
from ...job.progress import (
    JobProgress,
    MetricHistory,
    ProgressReading,
    ProgressSource,
    chief_replica,
    merge,
)
from ...job.status import JobInfo, JobState
from ...kinds import JobKind
from ...processes import die_with_parent, load_prctl
from ..archive import ArchiveLocation, chief_tail
from ..base import BackendError
from ..progress import ProgressSources, as_reading
from ..timestamps import parse_timestamp_ns
from .connection import TimedApiClient
from .logs import is_waiting, open_log, since_time

LOGGER = logging.getLogger(__name__)

INTERVAL = 5.0  # seconds between polls while somebody looks
IDLE = 60.0  # seconds after the last look until polling stops
PARALLEL = 8  # jobs read at once
FINISHING = 8  # finished jobs given their last reads per poll
LOG_BUDGET = 4 << 20  # bytes of log per job per poll (limitBytes)
TAIL_LINES = 200  # a job's first read; 200 lines of the CRI's 16 KiB fit the budget
# Seconds after a log line's second began before no line can be stamped in it any more:
# its own second, and room for the node's clock to be behind this one's.
SECOND_OVER = 5.0
BOARD_BUDGET = 4 << 20  # bytes of event files per job per poll
MAX_JOBS = 1000  # jobs whose progress is kept
NEWLINE = re.compile(b"\n")

# (pod, query) -> the log's bytes, None when there is none to read (gone, not started).
LogReader = Callable[[str, dict[str, Any]], Awaitable[bytes | None]]
# (kind, manifest) -> the chief replica's archived log (its pods are gone), None for none.
ArchiveReader = Callable[[JobKind, Mapping[str, Any]], Awaitable[bytes | None]]
# (kind, manifest) -> the job's log directory in this notebook, None when it has none here.
LogdirFinder = Callable[[JobKind, Mapping[str, Any]], Awaitable[Path | None]]


class ProgressReads:
    """What the watcher (and the failure reader) read of a job through the API server
    and this notebook's mounts: a pod's log, the job's log directory, the chief replica's
    archived log. ``api``/``namespace``: the backend's connection and namespace, asked at
    each read (both are known only once the configuration is loaded); ``logdir_here``:
    the job's log directory as this notebook sees it (``BackendError`` saying why not);
    ``archive_location``: where this notebook reads the job's log archive."""

    def __init__(
        self,
        api: Callable[[], Awaitable[TimedApiClient]],
        namespace: Callable[[], str],
        logdir_here: Callable[[JobKind, Mapping[str, Any]], Awaitable[str]],
        archive_location: Callable[[JobKind, dict[str, Any]], Awaitable[ArchiveLocation | None]],
    ) -> None:
        self.api = api
        self.namespace = namespace
        self.logdir_here = logdir_here
        self.archive_location = archive_location

    async def read_log(self, pod: str, query: dict[str, Any]) -> bytes | None:
        """At most ``LOG_BUDGET`` bytes of a pod's log; None when there is nothing to
        read (not started, gone) or the read fails - progress is worth no error in a
        job list."""
        try:
            api = await self.api()
            response = await open_log(api, self.namespace(), pod, query, api.stream_timeout)
        except ApiException as err:
            if not (is_waiting(err) or err.status in (400, 404)):
                log_read_failure(pod, err)
            return None
        except (OSError, TimeoutError, aiohttp.ClientError, BackendError) as err:
            log_read_failure(pod, err)
            return None
        if response is None:
            return None
        data = bytearray()
        try:
            # Bounded even where a server ignores limitBytes.
            async for chunk in response.content.iter_chunked(65536):
                data += chunk
                if len(data) >= LOG_BUDGET:
                    break
        except (aiohttp.ClientError, TimeoutError) as err:
            log_read_failure(pod, err)
        finally:
            response.release()
        return bytes(data[:LOG_BUDGET])

    async def find_logdir(self, kind: JobKind, job: Mapping[str, Any]) -> Path | None:
        """Where the job's event files are read; None where this notebook cannot see
        them (no logdir, no notebook pod, a PVC it does not mount)."""
        try:
            return Path(await self.logdir_here(kind, job))
        except (BackendError, JobSpecInvalid):
            return None

    async def read_archive(self, kind: JobKind, job: Mapping[str, Any]) -> bytes | None:
        """The chief replica's archived log once the job's pods are gone (its tail, at
        most ``LOG_BUDGET`` bytes); None where the job keeps none, empty where this
        notebook cannot read it."""
        location = await self.archive_location(kind, dict(job))
        if location is None:
            return None
        return await asyncio.to_thread(chief_tail, location, TAIL_LINES, LOG_BUDGET)


def log_read_failure(pod: str, err: BaseException) -> None:
    LOGGER.debug("progress: reading the log of pod %s failed: %r", pod, err)


@dataclass
class WatchedJob:
    """What the watcher knows of one job (one object: a job made again under the same
    name is another)."""

    uid: str
    kind: JobKind
    manifest: Mapping[str, Any]
    state: JobState
    pod: str | None = None  # the chief replica's pod
    trainer: JobProgress | None = None  # status.trainerStatus, as last listed
    key: str = ""  # its sources' key in the parser (set on the first read)
    logs: ProgressReading | None = None  # what its log said, as last parsed
    board: ProgressReading | None = None  # what its event files said
    last_ns: int | None = None  # the newest log line read
    tail_next: bool = True
    # No read starts before this second (ns): its lines were all read or skipped, and
    # one over the budget, or one that has ended, would be read again in full at every
    # poll (see _read_log).
    floor_ns: int = 0
    done: bool = False  # finished and read to the end
    trainer_recorded: float | None = None
    # The readings the last merge was made of, and its result (a list of 100 jobs
    # merges only what changed).
    merged_from: tuple[Any, ...] = ()
    merged: JobProgress | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def progress(self) -> JobProgress | None:
        logs, board = self.logs, self.board
        parts = (self.trainer, logs, board)
        if len(parts) != len(self.merged_from) or any(
            a is not b for a, b in zip(parts, self.merged_from, strict=True)
        ):
            self.merged_from = parts
            self.merged = merge([as_reading(self.trainer), logs, board])
        return self.merged


def stamp_ns(data: bytes, start: int) -> int | None:
    """The time of the timestamped line starting at ``start``."""
    return parse_timestamp_ns(data[start : data.find(b" ", start, start + 40)])


def new_lines(data: bytes, last_ns: int | None) -> tuple[bytes, int | None, int | None]:
    """Of a timestamped log read: the whole lines after ``last_ns`` (the API answers
    ``sinceTime`` from the whole second), the newest whole line's time, and the time of
    the first line after ``last_ns`` or of the line ``limitBytes`` cut (None: none)."""
    start = 0
    if last_ns is not None and data:
        # Lines come in time order: a binary search parses a few dozen stamps, not the
        # tens of thousands of lines a busy second may hold.
        starts = [0, *(m.end() for m in NEWLINE.finditer(data, 0, len(data) - 1))]

        def stamp_at(index: int) -> int:
            ns = stamp_ns(data, starts[index])
            return last_ns + 1 if ns is None else ns

        index = bisect.bisect_right(range(len(starts)), last_ns, key=stamp_at)
        if index == len(starts) and not data.endswith(b"\n"):
            return b"", last_ns, stamp_ns(data, starts[-1])  # cut inside a line seen
        start = starts[index] if index < len(starts) else len(data)
    first = stamp_ns(data, start) if start < len(data) else None
    cut = data.rfind(b"\n") + 1
    if cut <= start:
        return b"", last_ns, first
    data = data[start:cut]
    final = data.rfind(b"\n", 0, len(data) - 1) + 1
    newest = stamp_ns(data, final)
    return data, newest if newest is not None else last_ns, first


class ProgressWatcher:
    """The progress of one namespace's jobs (see the module's text)."""

    def __init__(
        self,
        read_log: LogReader,
        find_logdir: LogdirFinder,
        *,
        read_archive: ArchiveReader | None = None,
        interval: float = INTERVAL,
        wait_first: float = 0.0,
        parse_in_process: bool = False,
    ) -> None:
        self.read_log = read_log
        self.find_logdir = find_logdir
        self.read_archive = read_archive
        self.interval = interval
        # 0: poll in the background while somebody looks (a server). Else the seconds a
        # look waits for a read made for it, with no polling between looks (a command:
        # a one-shot ``ptjob list`` has no later look, and a kernel keeps no task).
        self.wait_first = wait_first
        self.jobs: dict[str, WatchedJob] = {}
        self.parser = ProgressParser(in_process=parse_in_process)
        self._task: asyncio.Task[None] | None = None
        self._last_look = 0.0
        self._limit = asyncio.Semaphore(PARALLEL)

    @property
    def enabled(self) -> bool:
        return self.interval > 0

    async def track(
        self,
        found: Sequence[tuple[JobKind, Mapping[str, Any], Sequence[Mapping[str, Any]], JobInfo]],
        *,
        complete: bool = False,
    ) -> None:
        """Jobs just read (kind, object, pods, info): their progress goes into their
        ``info``, and the watcher reads them from now on. ``complete``: these are all
        the jobs there are (a list): the others are forgotten."""
        if not self.enabled:
            return
        self._last_look = time.monotonic()
        seen = set()
        replaced: list[str] = []
        for kind, job, pods, info in found:
            meta = job.get("metadata") or {}
            seen.add(info.name)
            watched = self.jobs.get(info.name)
            if watched is None or watched.uid != meta.get("uid"):
                if watched is not None and watched.key:
                    replaced.append(watched.key)  # deleted and made again: another job
                if len(self.jobs) >= MAX_JOBS and info.state.finished:
                    continue
                watched = self.jobs[info.name] = WatchedJob(
                    str(meta.get("uid")), kind, job, info.state
                )
            watched.manifest, watched.state = job, info.state
            if not info.state.finished:
                watched.done = False  # a resumed job (or a restarted one) reads on
            chiefs = {kind.replica_of_pod(pod): pod for pod in pods}
            chief = chief_replica(chiefs)
            watched.pod = str(chiefs[chief]["metadata"]["name"]) if chief else None
            if info.progress is not None and info.progress.source is ProgressSource.TRAINER_STATUS:
                watched.trainer = info.progress
            info.progress = watched.progress() or info.progress
        if complete:
            replaced += [w.key for w in map(self.jobs.pop, set(self.jobs) - seen) if w.key]
        if replaced:
            await self.parser.forget(replaced)
        polling = self._task is not None and not self._task.done()
        if self.wait_first:
            # A command (``ptjob``, ``%ptjob``): read now, boundedly, and leave nothing
            # running after it - the next command reads on from here.
            if not polling:
                self._task = asyncio.create_task(self.poll())
            assert self._task is not None
            await asyncio.wait({self._task}, timeout=self.wait_first)
            for _, _, _, info in found:
                watched = self.jobs.get(info.name)
                if watched is not None:
                    info.progress = watched.progress() or info.progress
        elif not polling:
            self._task = asyncio.create_task(self._run())

    async def history(self, name: str) -> MetricHistory | None:
        watched = self.jobs.get(name)
        if watched is None or not watched.key:
            return None
        try:
            return await self.parser.history(watched.key)
        except ParserLost:
            return None

    async def _run(self) -> None:
        # At a fixed rate: a poll starts ``interval`` after the last one started (a line
        # written just after a read shows at the next, one interval later at most).
        while time.monotonic() - self._last_look < IDLE:
            began = time.monotonic()
            await self.poll()
            await asyncio.sleep(max(0.0, began + self.interval - time.monotonic()))

    async def close(self) -> None:
        """Stop polling (the backend is closing)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await asyncio.to_thread(self.parser.close)

    async def poll(self) -> None:
        """Read what is new for every job that may have something new."""
        running = [w for w in self.jobs.values() if not w.state.finished]
        finishing = [w for w in self.jobs.values() if w.state.finished and not w.done]
        await asyncio.gather(*[self._read(w) for w in running + finishing[:FINISHING]])

    async def _read(self, watched: WatchedJob) -> None:
        if watched.lock.locked():
            return  # being read (a slow read outlasted the interval)
        async with self._limit, watched.lock:
            if not watched.key:
                logdir = await self.find_logdir(watched.kind, watched.manifest)
                watched.key = f"{watched.uid}"
                await self.parser.start(watched.key, str(logdir) if logdir else None)
            finished = watched.state.finished
            data = await self._read_log(watched)
            trainer = watched.trainer
            reading = None
            if trainer is not None and trainer.updated != watched.trainer_recorded:
                watched.trainer_recorded = trainer.updated
                reading = as_reading(trainer)
            try:
                watched.logs, watched.board, new = await self.parser.digest(
                    watched.key, data, reading
                )
            except ParserLost:
                # Its process died (killed, out of memory): a new one starts with the
                # next read, from the logs' tails and the event files' starts.
                for job in self.jobs.values():
                    job.key, job.last_ns, job.tail_next, job.floor_ns = "", None, True, 0
                return
            if finished and not new:
                watched.done = True

    async def _read_log(self, watched: WatchedJob) -> bytes:
        if watched.pod is None:
            if not watched.state.finished or self.read_archive is None:
                return b""
            # Its pods are gone (cleanPodPolicy): the chief's log archive, which grows no
            # more - its tail, read until nothing is new like a pod's log.
            data = await self.read_archive(watched.kind, watched.manifest)
            lines, newest, _ = new_lines(data or b"", watched.last_ns)
            watched.last_ns = newest
            return lines
        query: dict[str, Any] = {
            "container": watched.kind.container,
            "timestamps": True,
            "limitBytes": LOG_BUDGET,
        }
        tail = watched.tail_next or watched.last_ns is None
        if tail and watched.floor_ns <= (watched.last_ns or 0):
            query["tailLines"] = TAIL_LINES
        else:
            tail = False
            query["sinceTime"] = since_time(max(watched.last_ns or 0, watched.floor_ns))
        began_ns = time.time_ns()
        data = await self.read_log(watched.pod, query)
        if data is None:
            return b""
        full = len(data) >= LOG_BUDGET
        if watched.floor_ns:
            watched.last_ns = max(watched.last_ns or 0, watched.floor_ns - 1)
        lines, newest, first = new_lines(data, watched.last_ns)
        if full and not lines:
            # More than the budget of lines already read (or one line longer than it)
            # comes next: nothing to learn from them, and every read from their second
            # would stop inside them again. Go on after that second, for good (its other
            # lines are lost to the progress, not to the log).
            stuck = first if first is not None else watched.last_ns or 0
            watched.floor_ns = (stuck // 1_000_000_000 + 1) * 1_000_000_000
            watched.tail_next = False
            return b""
        watched.last_ns = newest
        # A full read behind the log's end: the next one takes the tail (the newest
        # progress); after a full tail, follow from it (its end may be a long line).
        watched.tail_next = full and not tail
        if not full and newest is not None and began_ns - newest >= SECOND_OVER * 1e9:
            # Every line of the newest one's second was there for this read: the next
            # starts after it (sinceTime has whole seconds: it would read it all again).
            watched.floor_ns = max(watched.floor_ns, (newest // 1_000_000_000 + 1) * 1_000_000_000)
        return lines


class ParserLost(Exception):
    """The parser's process is gone, and with it every job's sources."""


# The sources of every job, by key, where the parsing runs (this process or the worker).
_SOURCES: dict[str, ProgressSources] = {}


def _start(store: dict[str, ProgressSources], key: str, logdir: str | None) -> None:
    store.setdefault(key, ProgressSources(Path(logdir) if logdir else None))


def _digest(
    store: dict[str, ProgressSources], key: str, log: bytes, trainer: ProgressReading | None
) -> Digest:
    """Feed one read to a job's sources: what its log and its event files say now, and
    whether anything was new."""
    sources = store[key]
    new = sources.feed_log(log)
    new = sources.read_board(BOARD_BUDGET) or new
    if trainer is not None:
        sources.add_history(trainer)
    sources.merged()  # moves the log lines' metrics into the history
    return sources.logs.reading, sources.board_reading, new


def _forget(store: dict[str, ProgressSources], keys: list[str]) -> None:
    for key in keys:
        store.pop(key, None)


def _history(store: dict[str, ProgressSources], key: str) -> MetricHistory | None:
    sources = store.get(key)
    return sources.history if sources else None


def _die_with(server: int) -> None:
    """The worker process ends with the server, even one killed with SIGKILL (which
    runs no shutdown): nothing is left reading for nobody. Its multiprocessing resource
    tracker then sees its pipe close and ends too. (A spawned process: no fork lies
    between it and its exec, so it may load libc's prctl here.)"""
    load_prctl()
    die_with_parent(server)


def _in_worker(function: Callable[..., Any], *args: Any) -> Any:
    """``function`` on the worker process's own sources."""
    return function(_SOURCES, *args)


Digest = tuple[ProgressReading | None, ProgressReading | None, bool]


class ProgressParser:
    """Where log lines and event files are parsed: in a worker thread of this process
    (a command: nothing else waits on its loop), or in one worker process (a server:
    parsing 100 MB of event files holds the GIL for seconds, and every ``GET jobs`` on
    the server's loop would wait for it at each await)."""

    def __init__(self, *, in_process: bool) -> None:
        self.in_process = in_process
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._store: dict[str, ProgressSources] = {}

    async def _call(self, function: Callable[..., Any], *args: Any) -> Any:
        if not self.in_process:
            return await asyncio.to_thread(function, self._store, *args)
        if self._pool is None:
            # spawn: a fork of a server running threads could inherit a held lock.
            context = multiprocessing.get_context("spawn")
            self._pool = concurrent.futures.ProcessPoolExecutor(
                1, mp_context=context, initializer=_die_with, initargs=(os.getpid(),)
            )
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, _in_worker, function, *args)
        except concurrent.futures.process.BrokenProcessPool as err:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            raise ParserLost() from err

    async def start(self, key: str, logdir: str | None) -> None:
        await self._call(_start, key, logdir)

    async def digest(self, key: str, log: bytes, trainer: ProgressReading | None) -> Digest:
        result: Digest = await self._call(_digest, key, log, trainer)
        return result

    async def history(self, key: str) -> MetricHistory | None:
        result: MetricHistory | None = await self._call(_history, key)
        return result

    async def forget(self, keys: list[str]) -> None:
        with contextlib.suppress(ParserLost):
            await self._call(_forget, keys)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._store.clear()
