"""Every replica's log, merged in time order, followed through Pending, restarts and
late pods.

One task per pod reads the ``pytorch`` container with ``timestamps=true`` in 64 KiB
chunks (never an await per line): first its backlog (``follow=false``), then, following,
what comes after (``sinceTime``). The lines become display lines (``StampedLines``: a
bar's ``\\r`` redraws, which the runtime leaves in one long line, each its own line as it
completes; 16 KiB at most) and go into one ``TimeMerge``: the backlogs of the pods found
at the start come out merged by their stamps, live lines as they arrive. Each replica
holds at most ``PENDING_LINES`` lines not yet given out, so memory stays bounded whatever
the log size and a slow client slows the reads instead of filling memory. A chunk's
``offset`` is the timestamp (ns since the epoch) of its last line: resuming with it asks
the API for ``sinceTime`` and drops the lines already seen, so nothing repeats.

Following: a pod not on a node yet (204, empty) or a container still waiting to
start (400 "is waiting to start") is retried; pods created later and containers
that restart are picked up by a periodic re-listing; the stream ends when the job
is finished and every pod's stream has ended. A pod whose node is gone answers 404
while the pod still exists, one whose kubelet does not answer 500 naming the kubelet's
``/containerLogs/``: that replica's stream ends with a notice naming the node, the others
go on. A container that cannot start (ErrImagePull...) is a notice in the kubelet's words
while following; without following, a replica whose log the kubelet refuses (not
started, no previous run) ends the stream with an error in its words, after the others.
Any other error ends the whole stream at once (not when the job ends).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import aiohttp
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ...job.loglines import StampedLines
from ...kinds import JobKind
from ..base import BackendError, LogChunk
from ..logmerge import TimeMerge, lines_after
from ..loopshare import LOG_STREAMS
from ..timestamps import format_timestamp_ns, parse_timestamp_ns
from .connection import status_body

CHUNK = 65536
PENDING_LINES = 4096  # per replica, read but not given out yet
READY_CHUNKS = 64  # notices and archived chunks not given out yet
REDISCOVER = 1.0
WAITING_RETRY = 1.0
# The API server refuses ``Accept: text/plain`` on pods/log with 406 (only JSON, YAML
# and protobuf are negotiable); any type is accepted and the body is the plain log.
LOG_ACCEPT = "*/*"

PodLister = Callable[[], Awaitable[list[dict[str, Any]]]]
FinishedCheck = Callable[[], Awaitable[bool]]
# The replicas whose pods are gone, and where each was read up to -> their archived logs.
ArchiveReader = Callable[[list[str], Mapping[str, int]], AsyncIterator[LogChunk]]


def since_time(ns: int) -> str:
    """The ``sinceTime`` (whole seconds) at or before ``ns``."""
    moment = datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# Waiting reasons that pass by themselves: followed silently. Any other (ErrImagePull,
# ImagePullBackOff, CreateContainerConfigError...) is said while following.
PASSING_WAITS = ("ContainerCreating", "PodInitializing", "no logs yet", "host assigned")


def server_words(err: ApiException) -> str:
    """The message of the API server's (or the kubelet's) answer, else its body."""
    body = status_body(err)
    raw = err.body.decode(errors="replace") if isinstance(err.body, bytes) else err.body
    return str(body.get("message") or raw or err.reason or "").strip()


def kubelet_unreachable(err: ApiException) -> bool:
    """The API server could not reach the pod's kubelet: a 500 carrying the failed
    ``/containerLogs/`` request (``dial tcp ...:10250: connect: connection refused``)."""
    return err.status == 500 and "/containerLogs/" in server_words(err)


def is_waiting(err: ApiException) -> bool:
    """The container has not started yet (still creating, initialising, or the pod
    is not scheduled): retry, it is not a failure."""
    body = err.body or ""
    return err.status == 400 and (
        "waiting to start" in body or "does not have a host assigned" in body
    )


async def open_log(
    api: client.ApiClient,
    namespace: str,
    pod: str,
    query: dict[str, Any],
    timeout: aiohttp.ClientTimeout | None = None,
) -> Any:
    """GET the pod log unparsed (a streaming aiohttp response); None when the server
    answers 204 (the pod is on no node yet: there is nothing to read).

    Called directly because kubernetes_asyncio's ``read_namespaced_pod_log`` has no
    ``sinceTime``, which an exact resume needs; and because with unparsed content
    the client raises nothing for an error status, this does."""
    params = [(k, str(v).lower() if isinstance(v, bool) else v) for k, v in query.items()]
    response = await api.call_api(
        "/api/v1/namespaces/{namespace}/pods/{name}/log",
        "GET",
        {"namespace": namespace, "name": pod},
        params,
        {"Accept": LOG_ACCEPT},
        auth_settings=["BearerToken"],
        response_types_map={200: "str"},
        _return_http_data_only=True,
        _preload_content=False,
        _request_timeout=timeout,
    )
    if response.status == 204:
        response.release()
        return None
    if response.status >= 400:
        try:
            body = await response.text()
        finally:
            response.release()
        err = ApiException(status=response.status, reason=response.reason)
        err.body = body
        raise err
    return response


def skip_line_by_line(data: bytes, last: int, seen: int | None) -> bytes:
    """``lines_after`` for stamps that are not the kubelet's: each line's parsed."""
    left = len(data) if seen is None else seen
    start = 0
    while start < len(data):
        end = data.index(b"\n", start) + 1
        ns = parse_timestamp_ns(data[start : data.find(b" ", start, end)])
        if ns is None or ns > last or (ns == last and not left):
            break
        left -= ns == last
        start = end
    return data[start:]


class LogMerger:
    """The merged log of one job, as an async iterator of ``LogChunk``."""

    def __init__(
        self,
        api: client.ApiClient,
        namespace: str,
        job: str,
        *,
        kind: JobKind,
        list_pods: PodLister,
        finished: FinishedCheck,
        replica: str | None,
        follow: bool,
        tail: int | None,
        previous: bool,
        since: Mapping[str, int] | None,
        timeout: aiohttp.ClientTimeout | None = None,
        archive: ArchiveReader | None = None,
        replicas: Sequence[str] = (),
        timestamps: bool = False,
        keep_stamps: bool = False,
    ) -> None:
        self.api = api
        # The job's replicas; those without a pod at the end are read from ``archive``.
        self.archive = archive
        self.replicas = list(replicas)
        # Connecting may time out; reading a followed log may not (a quiet job is fine).
        self.timeout = timeout
        self.core = client.CoreV1Api(api)
        self.namespace = namespace
        self.job = job
        self.kind = kind
        self.list_pods = list_pods
        self.finished = finished
        self.replica = replica
        self.follow = follow and not previous
        self.tail = tail
        self.previous = previous
        self.last_ns: dict[str, int] = dict(since or {})
        # per replica: still dropping lines already seen (after a resume or reconnect)
        self.skipping: dict[str, bool] = {}
        # per replica: how many lines stamped ``last_ns`` were given (unknown: all)
        self.seen_at_last: dict[str, int] = {}
        self.merged = TimeMerge(self.replicas, stamped=timestamps, keep_stamps=keep_stamps)
        self.seconds: dict[bytes, int] = {}  # whole seconds of stamps, parsed
        # Notices and archived chunks, given out as they come (they are not merged).
        self.ready: deque[LogChunk] = deque()
        # replica -> why the kubelet refused its log (400), raised after the others' logs
        self.unreadable: dict[str, str] = {}
        # replica -> the waiting message last said while following
        self.waiting_said: dict[str, str] = {}
        # Set when something was added; readers wait on ``room`` when they are ahead.
        self.changed = asyncio.Event()
        self.room = asyncio.Event()
        # pod uid + restart count -> the task streaming that container instance
        self.tasks: dict[tuple[str, int], asyncio.Task[None]] = {}
        # Set when a stream fails: the error is raised at once, not when the job ends.
        self.failed: asyncio.Event = asyncio.Event()

    async def chunks(self) -> AsyncIterator[LogChunk]:
        discoverer = asyncio.create_task(self._discover())
        try:
            while True:
                self.changed.clear()
                while self.ready:
                    yield self.ready.popleft()
                    self.room.set()
                await LOG_STREAMS.turn()
                taken = self.merged.take()
                if taken is not None:
                    ends = tuple(
                        self._stamp_ns(stamp) or self.last_ns.get(replica, 0)
                        for replica, stamp in zip(taken.replicas, taken.stamps, strict=True)
                    )
                    yield LogChunk.of_taken(taken, ends, self.previous)
                    self.room.set()
                    continue
                if self.ready or self.changed.is_set():
                    continue
                if discoverer.done():
                    discoverer.result()  # raises what the discoverer raised
                    if not self.ready and not any(
                        self.merged.pending(r) for r in list(self.merged.lines)
                    ):
                        if self.unreadable:
                            raise BackendError(
                                "; ".join(
                                    f"the log of {replica} cannot be read: {why}"
                                    for replica, why in sorted(self.unreadable.items())
                                ),
                                status=409,
                            )
                        return
                    for replica in list(self.merged.reading):
                        self.merged.closed(replica)
                    continue
                waiter = asyncio.ensure_future(self.changed.wait())
                await asyncio.wait({waiter, discoverer}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
        finally:
            discoverer.cancel()
            for task in self.tasks.values():
                task.cancel()
            await asyncio.gather(discoverer, *self.tasks.values(), return_exceptions=True)

    def _stamp_ns(self, stamp: bytes) -> int | None:
        """``parse_timestamp_ns`` of the kubelet's fixed-width stamps, the whole seconds
        parsed once each (a merged log has a chunk, so a stamp, per run of lines)."""
        whole, dot, frac = stamp[:19], stamp[19:20], stamp[20:29]
        seconds = self.seconds.get(whole)
        if seconds is None:
            seconds = parse_timestamp_ns(whole + b"Z")
            if seconds is None:
                return None
            if len(self.seconds) > 256:
                self.seconds.clear()
            self.seconds[whole] = seconds
        if dot == b"." and len(frac) == 9 and frac.isdigit():
            return seconds + int(frac)
        return parse_timestamp_ns(stamp)

    async def _discover(self) -> None:
        """Start a stream per pod (and per restart); end when all is read."""
        while True:
            # Each API request (built, sent, its answer read) takes a share of a turn of
            # the loop: many log views opening at once would otherwise make theirs in one.
            await LOG_STREAMS.turn()
            pods = [p for p in await self.list_pods() if self._wanted(p)]
            for pod in pods:
                key = (pod["metadata"]["uid"], self._restarts(pod))
                if key not in self.tasks:
                    # Its backlog is merged into place: nothing later goes out before it.
                    self.merged.opened(self.kind.replica_of_pod(pod))
                    task = asyncio.create_task(self._stream(pod))
                    task.add_done_callback(self._on_stream_done)
                    self.tasks[key] = task
            if not self.follow:
                await asyncio.gather(*self.tasks.values())
                await self._archived(pods)
                return
            self._raise_failure()
            if all(t.done() for t in self.tasks.values()) and await self.finished():
                # A last listing: a stream that ended just now may have a successor.
                pods = [p for p in await self.list_pods() if self._wanted(p)]
                if all((p["metadata"]["uid"], self._restarts(p)) in self.tasks for p in pods):
                    self._raise_failure()
                    await self._archived(pods)
                    return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.failed.wait(), REDISCOVER)
            self._raise_failure()

    async def _archived(self, pods: list[dict[str, Any]]) -> None:
        """The archived logs of the replicas whose pods are gone, after what their pods
        gave (only at the end: a pod that comes back would repeat lines stamped later)."""
        live = {self.kind.replica_of_pod(p) for p in pods}
        gone = [r for r in self.replicas if r not in live and self.replica in (None, r)]
        if self.archive is None or not gone:
            return
        async for chunk in self.archive(gone, dict(self.last_ns)):
            if not chunk.notice:
                self.last_ns.update(chunk.resume_offsets())
            await self._give(chunk)

    def _on_stream_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.failed.set()

    def _raise_failure(self) -> None:
        for task in self.tasks.values():
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    def _wanted(self, pod: Mapping[str, Any]) -> bool:
        return self.replica is None or self.kind.replica_of_pod(pod) == self.replica

    def _restarts(self, pod: Mapping[str, Any]) -> int:
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            if status.get("name") == self.kind.container_of_pod(pod):
                return int(status.get("restartCount") or 0)
        return 0

    async def _stream(self, pod: Mapping[str, Any]) -> None:
        replica = self.kind.replica_of_pod(pod)
        try:
            await self._read(pod, replica)
        finally:
            self.merged.closed(replica)
            self.changed.set()

    async def _read(self, pod: Mapping[str, Any], replica: str) -> None:
        name = pod["metadata"]["name"]
        container = self.kind.container_of_pod(pod)
        first = True
        # Following, the backlog is read first on its own: where it ends is where the
        # merge stops holding the other replicas' lines back.
        backlog = self.follow
        while True:
            last = self.last_ns.get(replica)
            query: dict[str, Any] = {
                "container": container,
                "follow": self.follow and not backlog,
                "timestamps": True,
                "previous": self.previous,
            }
            if last is not None:
                query["sinceTime"] = since_time(last)
            elif first and self.tail is not None:
                query["tailLines"] = self.tail
            try:
                await LOG_STREAMS.turn()
                response = await open_log(self.api, self.namespace, name, query, self.timeout)
            except ApiException as err:
                if is_waiting(err) and self.follow:
                    await self._say_waiting(replica, server_words(err))
                    self._caught_up(replica)
                    await asyncio.sleep(WAITING_RETRY)
                    continue
                if err.status == 404:
                    await self._node_gone(name, replica)
                    return
                if err.status == 400:  # never started, no previous run: the kubelet's words
                    self.unreadable[replica] = server_words(err)
                    return
                if kubelet_unreachable(err):
                    await self._kubelet_unreachable(name, replica, server_words(err))
                    return
                raise
            if response is None:  # 204: not on a node yet
                if not self.follow:
                    return
                self._caught_up(replica)
                await asyncio.sleep(WAITING_RETRY)
                continue
            self.skipping[replica] = True
            try:
                # The backlog's end may be in the middle of a line: the next read gives
                # all of that line again, and the pieces seen are skipped then.
                await self._pump(response, replica, final=not backlog)
            finally:
                response.release()
            if backlog:
                backlog = False
                self._caught_up(replica)
                continue
            first = False
            if not self.follow or not await self._still_running(name, container):
                return
            # The stream broke while the container runs (a dropped connection): resume.

    def _caught_up(self, replica: str) -> None:
        """The replica's backlog is all read (or it has none yet): from now on its lines
        go out as they arrive."""
        self.merged.closed(replica)
        self.changed.set()

    async def _node_gone(self, pod_name: str, replica: str) -> None:
        """A 404 for the log of a pod that still exists: its node is gone (deleted or
        lost), so its log can no longer be read. Say so; a pod that is gone says
        nothing (it was deleted, e.g. by the clean-pod policy)."""
        node = await self._node_of(pod_name)
        if node is not None:
            await self._notice(
                replica,
                f"the log of pod {pod_name} cannot be read: the API server no longer finds it "
                f"on node {node or '?'} (the node was removed or lost); its output is gone",
            )

    async def _kubelet_unreachable(self, pod_name: str, replica: str, words: str) -> None:
        """The API server cannot reach the kubelet of the pod's node (500): that node is
        down or cut off, not the API server; the other replicas' logs go on."""
        node = await self._node_of(pod_name)
        await self._notice(
            replica,
            f"the log of pod {pod_name} cannot be read: the kubelet on node {node or '?'} does "
            f"not answer (the node may be down or unreachable; the API server says: {words}); "
            "the other replicas' logs go on",
        )

    async def _say_waiting(self, replica: str, words: str) -> None:
        """While following: what a container that does not start waits for, in the
        kubelet's words, once per change (a passing wait, e.g. ContainerCreating, quietly)."""
        if any(w in words for w in PASSING_WAITS) or self.waiting_said.get(replica) == words:
            return
        self.waiting_said[replica] = words
        await self._notice(replica, f"{words}; still waiting for it to start")

    async def _node_of(self, pod_name: str) -> str | None:
        """The node of a pod that still exists ("" for none), None once it is gone."""
        try:
            pod = await self.core.read_namespaced_pod(pod_name, self.namespace)
        except ApiException:
            return None
        return (pod.spec.node_name if pod.spec else None) or ""

    async def _notice(self, replica: str, text: str) -> None:
        offset = self.last_ns.get(replica, 0)
        await self._give(LogChunk(replica, text, offset, self.previous, notice=True))

    async def _still_running(self, pod_name: str, container: str) -> bool:
        try:
            pod = await self.core.read_namespaced_pod(pod_name, self.namespace)
        except ApiException:
            return False
        for status in pod.status.container_statuses or []:
            if status.name == container:
                return bool(status.state and status.state.running)
        return False

    async def _give(self, chunk: LogChunk) -> None:
        """A chunk given out as it is (a notice, an archived run), in its turn."""
        while len(self.ready) >= READY_CHUNKS:
            self.room.clear()
            await self.room.wait()
        self.ready.append(chunk)
        self.changed.set()

    async def _pump(self, response: Any, replica: str, *, final: bool) -> None:
        lines = StampedLines()
        try:
            async for data in response.content.iter_chunked(CHUNK):
                # Buffered data is read without suspending: a backlog of many chunks
                # would hold the loop; each read takes its share of a turn.
                await LOG_STREAMS.turn()
                await self._forward(lines.feed(data), replica)
        except aiohttp.ClientError:
            return  # the connection broke: the caller resumes if the container still runs
        if final:
            await self._forward(lines.close(), replica)

    async def _forward(self, data: bytes, replica: str) -> None:
        """Stamped display lines -> the merge, once there is room for them.

        After a reconnect or a resume the API answers from the whole second: lines
        stamped before the last one seen are dropped, and of those stamped at it as many
        as were seen (all of them when resuming from an offset), until the first new
        line: by comparing the kubelet's stamps as bytes (``lines_after``), else line by
        line."""
        if not data:
            return
        last = self.last_ns.get(replica)
        if last is not None and self.skipping.get(replica, True):
            seen = self.seen_at_last.get(replica)
            rest = lines_after(data, format_timestamp_ns(last), seen)
            data = skip_line_by_line(data, last, seen) if rest is None else rest
            if not data:
                return
        self.skipping[replica] = False
        final = data.rfind(b"\n", 0, len(data) - 1) + 1
        stamp = data[final : data.find(b" ", final) + 1]
        newest = parse_timestamp_ns(stamp[:-1])
        if newest is not None:
            # How many lines stamped ``newest`` were given: a stream that breaks in the
            # middle of a redrawn line is read again from the line's start.
            count = data.count(b"\n" + stamp) + data.startswith(stamp)
            if newest == last:
                count += self.seen_at_last.get(replica, 0)
            self.last_ns[replica], self.seen_at_last[replica] = newest, count
        while self.merged.pending(replica) >= PENDING_LINES:
            self.room.clear()
            await self.room.wait()
        self.merged.add(replica, data)
        self.changed.set()
