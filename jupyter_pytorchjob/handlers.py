"""REST handlers: HTTP glue only, every verb authenticated.

The logic lives in ``jupyter_pytorchjob.job``; a handler parses the request,
calls it, and maps its typed errors to status codes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from .backends import Backend, BackendError, JobInfo, LogChunk
from .backends.base import dropped_warning
from .backends.loopshare import LOG_STREAMS
from .job.command_line import submit_command
from .job.compare import ComparedJob, compare_jobs, compared_names
from .job.errors import FieldError, JobSpecInvalid
from .job.manifest_yaml import manifest_to_yaml, read_job_yaml
from .job.messages import Message, msg, warnings_wire
from .job.progress import progress_wire
from .job.shape import load_json
from .job.spec import JobSpec
from .kinds import KINDS, JobKind, kind_for, kind_of
from .rest import (
    AUTH_RESOURCE,
    LOG_STREAMS_SETTING,
    LogStreamSlots,
    job_name_problem,
    json_object_body,
)

API = "pytorchjob/api"
# Any path segment: a name no job can have is answered 400 naming the field (below),
# rather than the server's 404 page.
NAME = r"(?P<name>[^/]+)"


def api_errors(
    method: Callable[..., Awaitable[None]],
) -> Callable[..., Awaitable[None]]:
    """Answer typed errors as JSON a person can act on: 400 ``{field, message,
    errors}`` for invalid input, the backend's status and message otherwise."""

    @functools.wraps(method)
    async def wrapper(self: JobAPIHandler, *args: Any, **kwargs: Any) -> None:
        try:
            invalid = job_name_problem(kwargs["name"]) if "name" in kwargs else None
            if invalid is not None:
                raise invalid
            await method(self, *args, **kwargs)
        except JobSpecInvalid as err:
            self.set_status(400)
            self.finish(json.dumps(err.to_wire()))
        except BackendError as err:
            self.set_status(err.status)
            self.finish(json.dumps(err.to_wire()))

    return wrapper


class JobAPIHandler(APIHandler):
    """Shared plumbing of the job API (jobs of either kind): the backend, the form
    defaults, JSON bodies."""

    def spec_wire(self, job: JobInfo) -> dict[str, Any] | None:
        """The job body read back from the job's manifest through its kind's parse;
        None when it has none or it cannot be read back."""
        if job.manifest is None:
            return None
        with contextlib.suppress(JobSpecInvalid):
            kind = kind_of(job.manifest)
            return kind.parse(job.manifest, gpu_resource=self.defaults["gpuResource"]).to_wire()
        return None

    auth_resource = AUTH_RESOURCE

    @property
    def backend(self) -> Backend:
        """The backend, on the ``?namespace=`` of the request if it names one (only
        namespaces the server's configuration allows)."""
        backend: Backend = self.settings["pytorchjob_backend"]
        return backend.for_namespace(self.get_argument("namespace", None))

    @property
    def defaults(self) -> dict[str, Any]:
        return self.settings["pytorchjob_config"]["defaults"]  # type: ignore[no-any-return]

    async def job_defaults(self) -> dict[str, Any]:
        """The configured defaults, overridden by what the backend discovers."""
        return {**self.defaults, **await self.backend.form_defaults()}

    async def job_kinds(self) -> list[JobKind]:
        """The kinds the backend runs; every kind this server can build when the
        backend cannot tell now (a cluster out of reach: the submit will say why)."""
        try:
            return await self.backend.job_kinds()
        except BackendError:
            return list(KINDS)

    def json_body(self) -> dict[str, Any]:
        return json_object_body(self)

    def write_json(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(data))


class ConfigHandler(JobAPIHandler):
    """``GET config``: backend and form defaults (in a cluster, the notebook's own
    image and PVC mounts)."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        """Answer the effective configuration."""
        config = dict(self.settings["pytorchjob_config"])
        config["defaults"] = await self.job_defaults()
        config["kinds"] = [kind.to_wire() for kind in await self.job_kinds()]
        self.write_json(config)


class RenderHandler(JobAPIHandler):
    """``POST render``: a job body -> its manifest, or edited YAML -> the job body.

    Creates nothing. With ``{"yaml": TEXT}`` the YAML (the preview editor's text)
    is read back into a job body, keeping unknown fields in ``extras``; ``warnings``
    then names the fields the cluster would drop (not in its CRD schema), found by a
    server-side dry run on the kubernetes backend, and the file's other documents (left
    alone: only the one job document is read).
    """

    @web.authenticated
    @authorized
    @api_errors
    async def post(self) -> None:
        """Answer ``{job, manifest, yaml, warnings}`` or 400 ``{field, message, errors}``."""
        body = self.json_body()
        edited = set(body) == {"yaml"} and isinstance(body["yaml"], str)
        others: list[Message] = []
        if edited:
            read = read_job_yaml(body["yaml"])
            kind = kind_of(read.manifest)
            spec = kind.parse(read.manifest, gpu_resource=self.defaults["gpuResource"])
            others = read.others
        else:
            spec = JobSpec.from_wire(body, defaults=await self.job_defaults())
            kind = kind_for(spec)
        manifest = kind.build(spec)
        warnings = [*spec.warnings, *others]
        if edited:
            try:
                dropped = await self.backend.dropped_fields(manifest)
            except BackendError as err:
                # Said, not an empty list: that would read as "nothing is dropped".
                warnings.append(msg("warn_cannot_check", error=err.message))
            else:
                if dropped:
                    warnings.append(dropped_warning(dropped, kind.kind))
        self.write_json(
            {
                "job": spec.to_wire(),
                "manifest": manifest,
                "yaml": manifest_to_yaml(manifest),
                **warnings_wire(warnings),
            }
        )


class JobsHandler(JobAPIHandler):
    """``GET jobs`` (the list) and ``POST jobs`` (submit)."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        """Answer ``{jobs: [...]}``, newest first."""
        jobs = await self.backend.list_jobs()
        self.finish('{"jobs": [' + ", ".join(job.list_json() for job in jobs) + "]}")

    @web.authenticated
    @authorized
    @api_errors
    async def post(self) -> None:
        """Submit a job body; 201 with the job and its ``Location``."""
        spec = JobSpec.from_wire(self.json_body(), defaults=await self.job_defaults())
        job = await self.backend.submit(spec)
        self.set_header("Location", url_path_join(self.base_url, API, "jobs", job.name))
        self.write_json(job.to_wire(), status=201)


class JobHandler(JobAPIHandler):
    """``GET jobs/{name}`` (with its manifest and form body), ``PATCH`` (suspend or
    resume) and ``DELETE``."""

    def detail(self, job: JobInfo) -> dict[str, Any]:
        """The job, its manifest (also as YAML), the job body to clone it and the
        ``ptjob submit`` line that gives it back (the job view's Spec section)."""
        wire = job.to_wire(with_manifest=True)
        if job.manifest is not None:
            wire["yaml"] = manifest_to_yaml(job.manifest)
        spec = self.spec_wire(job)
        if spec is not None:
            wire["spec"] = spec
            wire["submitCommand"] = submit_command(spec)
        return wire

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, name: str) -> None:
        """Answer the job, its manifest and the job body to clone it."""
        self.write_json(self.detail(await self.backend.get_job(name)))

    @web.authenticated
    @authorized
    @api_errors
    async def patch(self, name: str) -> None:
        """``{"suspend": true}`` suspends the job (``runPolicy.suspend``: its replicas
        stop, the job stays), ``{"suspend": false}`` resumes it; answers the job as
        ``GET`` does. 409 when the job has finished."""
        if suspend_requested(self.json_body()):
            job = await self.backend.suspend(name)
        else:
            job = await self.backend.resume(name)
        self.write_json(self.detail(job))

    @web.authenticated
    @authorized
    @api_errors
    async def delete(self, name: str) -> None:
        """Stop every replica and remove the job; 204."""
        await self.backend.delete_job(name)
        self.set_status(204)
        self.finish()


def suspend_requested(body: dict[str, Any]) -> bool:
    """The ``suspend`` of a ``PATCH jobs/{name}`` body, the one field it may change;
    ``JobSpecInvalid`` naming the field otherwise."""
    for field in body:
        if field != "suspend":
            shown = field if len(field) <= 40 else field[:37] + "..."
            raise JobSpecInvalid([FieldError(shown, msg("patch_suspend_only"))])
    suspend = body.get("suspend")
    if not isinstance(suspend, bool):
        raise JobSpecInvalid(
            [FieldError("suspend", msg("true_or_false", got=json.dumps(suspend)[:40]))]
        )
    return suspend


class EventsHandler(JobAPIHandler):
    """``GET jobs/{name}/events``."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, name: str) -> None:
        """Answer ``{events: [...]}``, oldest first."""
        events = await self.backend.events(name)
        self.write_json({"events": [e.to_wire() for e in events]})


class ProgressHandler(JobAPIHandler):
    """``GET jobs/{name}/progress``."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, name: str) -> None:
        """Answer ``{progress, history}``: the job's progress (null until a source said
        anything) and each metric's bounded history."""
        self.write_json(progress_wire(*await self.backend.progress(name)))


class CloneHandler(JobAPIHandler):
    """``GET jobs/{name}/clone[?resumeFrom=path]``: the job body Clone & edit and *Resume
    from here* open the form with."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, name: str) -> None:
        """Answer ``{spec}``: the job's body named ``<name>-N`` (the next N no job has)
        with its log directory moved along and ``PTJOB_RESUME_FROM`` set to ``resumeFrom``;
        400 naming ``fromCheckpoint``, 409 when the job cannot be read back."""
        spec = await self.backend.clone_spec(
            name,
            resume_from=self.get_argument("resumeFrom", None),
            gpu_resource=self.defaults["gpuResource"],
        )
        self.write_json({"spec": spec})


class RunHandler(JobAPIHandler):
    """``GET jobs/{name}/run``."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, name: str) -> None:
        """Answer the run record: hparams, metrics (final, history), checkpoints,
        artifacts, modes."""
        self.write_json(await self.backend.run(name))


class CompareHandler(JobAPIHandler):
    """``GET compare?job=a&job=b``: the jobs' differing hyperparameters and metrics."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        """Answer ``{jobs, hparams, parameters, metrics}``; 400 naming ``job`` for fewer than
        two, repeated or impossible names, 404 for a job that does not exist."""
        names = compared_names(self.get_arguments("job"))
        for name in names:
            invalid = job_name_problem(name)
            if invalid is not None:
                raise JobSpecInvalid([FieldError("job", invalid.errors[0].problem)])
        jobs = await asyncio.gather(*(self.backend.get_job(name) for name in names))
        runs = await asyncio.gather(*(self.backend.run_record(name) for name in names))
        compared = [
            ComparedJob(job.to_wire(), self.spec_wire(job), run.to_wire())
            for job, run in zip(jobs, runs, strict=True)
        ]
        self.write_json(compare_jobs(compared))


class VolumesHandler(JobAPIHandler):
    """``GET volumes``: the claims a job can mount."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        """Answer ``{volumes: [...]}``."""
        volumes = await self.backend.volumes()
        self.write_json({"volumes": [v.to_wire() for v in volumes]})


class RuntimesHandler(JobAPIHandler):
    """``GET runtimes``: the Kubeflow Trainer runtimes a TrainJob can run on here."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        """Answer ``{runtimes: [...]}`` (empty where TrainJobs are not served)."""
        runtimes = await self.backend.runtimes()
        self.write_json({"runtimes": [r.to_wire() for r in runtimes]})


_FLAGS = {"": False, "0": False, "false": False, "no": False, "1": True, "true": True, "yes": True}
_INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class LogQuery:
    """The query of ``jobs/{name}/logs``, checked (``from_arguments``)."""

    replica: str | None = None
    follow: bool = False
    tail: int | None = None
    previous: bool = False
    since: dict[str, int] | None = None
    timestamps: bool = False

    @classmethod
    def from_arguments(cls, argument: Callable[[str], str | None]) -> LogQuery:
        """``JobSpecInvalid`` naming the parameter when one is not what it must be."""
        flags = {}
        for name in ("follow", "previous", "timestamps"):
            value = (argument(name) or "").lower()
            if value not in _FLAGS:
                raise _query_error(name, msg("query_flag", got=repr(value[:20])))
            flags[name] = _FLAGS[value]
        tail_arg = argument("tail")
        tail = None
        if tail_arg:
            if not re.fullmatch("[0-9]{1,18}", tail_arg):
                raise _query_error("tail", msg("query_tail", got=repr(tail_arg[:20])))
            tail = int(tail_arg)
        since_arg = argument("since")
        return cls(
            replica=argument("replica") or None,
            follow=flags["follow"],
            tail=tail,
            previous=flags["previous"],
            since=_since(since_arg) if since_arg else None,
            timestamps=flags["timestamps"],
        )


def _query_error(name: str, problem: Message) -> JobSpecInvalid:
    return JobSpecInvalid([FieldError(name, problem)])


def _since(text: str) -> dict[str, int]:
    """``since``: JSON ``{replica: offset}`` with offsets as the log messages gave them."""
    since = load_json(text.encode("utf-8", "surrogatepass"), field="since", what="the_value")
    if not isinstance(since, dict):
        raise _query_error("since", msg("query_since"))
    for replica, offset in since.items():
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= _INT64_MAX:
            raise _query_error(f"since[{replica}]", msg("query_offset", got=f"{offset!r:.40}"))
    return since


BATCH_CHUNKS = 256  # log chunks in one websocket message at most
# Log text in one websocket message, beyond which no further chunk joins it: a message
# is encoded and written in one step of the event loop, which this keeps to about 1 ms.
BATCH_BYTES = 256 * 1024


class LogsHandler(WebSocketMixin, WebSocketHandler, JupyterHandler):
    """``GET jobs/{name}/logs``: the job's log, as a websocket or as plain text.

    Query: ``follow`` (1/0), ``tail`` (lines per replica), ``replica``, ``previous``
    (1/0), ``since`` (JSON ``{replica: offset}`` of the last message seen, to
    resume after a disconnect without duplicates) and ``timestamps`` (1/0: each
    chunk's ``times``, each plain-text line after its time).

    Websocket: binary messages of chunks ``{replica, text, offset, previous}`` for log
    lines (batched: ``send_batches``, framed: ``batch_frame``; ``stamped``: each line
    still starts with its stamp, the browser removes it), then
    ``{end: true}``; ``{error, status}`` (then a close) for a bad query or a job or
    replica that does not exist. Without the upgrade: ``text/plain``, each line
    prefixed ``<replica> | `` (unless ``replica`` picks one) as ``ptjob logs`` prints
    them, streamed until the job ends with ``follow=1``; errors as JSON with their
    status. Either way the upstream stream stops when the client goes away.
    """

    auth_resource = AUTH_RESOURCE
    _task: asyncio.Task[None] | None = None
    _slot: LogStreamSlots | None = None  # the slot this stream holds, given back once

    async def prepare(self, *args: Any, **kwargs: Any) -> None:
        """Authenticate in a share of a turn of the loop (``LOG_STREAMS``): a page of log
        views opening at once would otherwise hold it for all their handshakes (20: 12-20
        ms, the worst stall of a streaming server, #28)."""
        await LOG_STREAMS.turn()
        result = super().prepare(*args, **kwargs)
        if result is not None:
            await result

    async def pre_get(self) -> None:
        """Refuse users the authorizer does not let read jobs."""
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, "read", AUTH_RESOURCE)
        )
        if not allowed:
            raise web.HTTPError(403)

    @ws_authenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        """Authenticate and authorize, then upgrade to a websocket (or answer text)."""
        await self.pre_get()
        if self.request.headers.get("Upgrade", "").lower() != "websocket":
            refusal = self._take_slot()
            try:
                if refusal is not None:
                    self._plain_error(503, {"message": refusal})
                else:
                    await self._plain(kwargs["name"])
            finally:
                self._give_slot()
            return
        result = super().get(*args, **kwargs)
        if result is not None:
            await result

    def open(self, name: str) -> None:
        """Start the keep-alive pings and the stream."""
        super().open(name)
        refusal = self._take_slot()
        if refusal is not None:
            self._task = asyncio.ensure_future(self._refuse(refusal))
            return
        self._task = asyncio.ensure_future(self._stream(name))

    async def _refuse(self, message: str) -> None:
        with contextlib.suppress(WebSocketClosedError):
            await self.write_message(json.dumps({"error": message, "status": 503}))
        self.close()

    def _take_slot(self) -> str | None:
        """A slot for this stream (given back when it ends), else why there is none."""
        slots: LogStreamSlots = self.settings[LOG_STREAMS_SETTING]
        if not slots.take():
            return slots.full_message()
        self._slot = slots
        return None

    def _give_slot(self) -> None:
        if self._slot is not None:
            self._slot.give()
            self._slot = None

    def on_message(self, message: str | bytes) -> None:
        """Clients only listen."""

    def on_close(self) -> None:
        """Stop reading the upstream logs as soon as the client is gone (a websocket's,
        or a plain request's connection)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._give_slot()

    def _chunks(self, name: str, *, keep_stamps: bool = False) -> AsyncIterator[LogChunk]:
        """The backend's stream for this request; ``JobSpecInvalid`` for a bad query.
        ``keep_stamps``: the lines keep their stamps for the browser to remove, which
        walks every line anyway (the server then does nothing per line of a replica
        alone: #28)."""
        invalid = job_name_problem(name)
        if invalid is not None:
            raise invalid
        query = LogQuery.from_arguments(lambda arg: self.get_argument(arg, None))
        backend: Backend = self.settings["pytorchjob_backend"]
        backend = backend.for_namespace(self.get_argument("namespace", None))
        return backend.logs(
            name,
            replica=query.replica,
            follow=query.follow,
            tail=query.tail,
            previous=query.previous,
            since=query.since,
            timestamps=query.timestamps,
            keep_stamps=keep_stamps,
        )

    async def _stream(self, name: str) -> None:
        error: dict[str, Any] | None = None
        try:
            await send_batches(self._chunks(name, keep_stamps=True), self._write_binary)
            await self.write_message(json.dumps({"end": True}))
        except WebSocketClosedError:
            return
        except JobSpecInvalid as err:
            error = {"error": f"{err.field}: {err.errors[0].message}", "status": 400}
            error["field"] = err.field
        except BackendError as err:
            error = {"error": err.message, "status": err.status}
        except Exception as err:  # never a socket left open without a word
            self.log.exception("jupyter_pytorchjob: the log stream of %s failed", name)
            error = {"error": f"reading the log failed: {err}", "status": 500}
        if error is not None:
            with contextlib.suppress(WebSocketClosedError):
                await self.write_message(json.dumps(error))
        self.close()

    async def _write_binary(self, message: bytes) -> None:
        await self.write_message(message, binary=True)

    async def _plain(self, name: str) -> None:
        """The log as ``text/plain``, in a task the connection's close cancels."""
        self._task = asyncio.ensure_future(self._write_plain(name))
        with contextlib.suppress(asyncio.CancelledError, StreamClosedError):
            await self._task

    def _plain_error(self, status: int, body: dict[str, Any]) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    async def _write_plain(self, name: str) -> None:
        try:
            stream = self._chunks(name)
        except JobSpecInvalid as err:
            self._plain_error(400, err.to_wire())
            return
        except BackendError as err:
            self._plain_error(err.status, {"message": err.message})
            return
        try:
            # The first chunk decides the status: a missing job is a 404, not a 200.
            chunk = await anext(stream, None)
        except BackendError as err:
            await _close(stream)
            self._plain_error(err.status, {"message": err.message})
            return
        prefixed = self.get_argument("replica", None) is None
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        try:
            while chunk is not None:
                self.write(chunk.display(prefix=prefixed))
                await self.flush()
                chunk = await anext(stream, None)
        except BackendError as err:
            self.write(f"\nerror: {err.message}\n")
        finally:
            await _close(stream)
        self.finish()


async def send_batches(
    stream: AsyncIterator[LogChunk], write: Callable[[bytes], Awaitable[None]]
) -> None:
    """A log stream's chunks as binary batch messages (``batch_frame``) to ``write``:
    what arrives while a message is being written goes in the next one (at most
    ``BATCH_CHUNKS`` chunks, ``BATCH_BYTES`` of text), so a fast stream costs a frame per
    batch, not per chunk, and a slow one sends each chunk at once. Reading a chunk and
    writing a message each take their share of a turn of the loop (``LOG_STREAMS``): a
    backend with much buffered never holds it for long, nor do many streams together."""
    batch: list[LogChunk] = []
    size = [0]  # the text in ``batch``
    added = asyncio.Event()
    taken = asyncio.Event()

    async def read() -> None:
        try:
            async for chunk in stream:
                while len(batch) >= BATCH_CHUNKS or size[0] >= BATCH_BYTES:
                    taken.clear()
                    await taken.wait()
                batch.append(chunk)
                size[0] += len(chunk.text)
                added.set()
                await LOG_STREAMS.turn()
        finally:
            await _close(stream)

    reader = asyncio.ensure_future(read())
    try:
        while True:
            if not batch:
                if reader.done():
                    reader.result()  # what the stream raised
                    return
                added.clear()
                waiter = asyncio.ensure_future(added.wait())
                await asyncio.wait({waiter, reader}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                continue
            await LOG_STREAMS.turn()
            message = batch_frame(batch)
            batch.clear()
            size[0] = 0
            taken.set()
            await write(message)
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


_HEADER_SIZE = struct.Struct(">I")


def batch_frame(chunks: list[LogChunk]) -> bytes:
    """Chunks as one binary websocket message: the length of a JSON header (4 bytes, big
    endian), the header ``{"chunks": [...]}`` whose chunks give their text's length in
    UTF-8 (``bytes``) in place of the text, then the texts one after another. Not JSON
    for the texts: escaping and parsing them cost the server and the client more than
    everything else they do with a line."""
    wires = []
    texts = []
    for chunk in chunks:
        wire = chunk.to_wire()
        text = wire.pop("text").encode("utf-8", "replace")
        wire["bytes"] = len(text)
        wires.append(wire)
        texts.append(text)
    header = json.dumps({"chunks": wires}).encode()
    return b"".join((_HEADER_SIZE.pack(len(header)), header, *texts))


async def _close(stream: AsyncIterator[LogChunk]) -> None:
    """Stop a backend's log stream now (its tasks and upstream connections), not when
    it is garbage-collected; the backends' streams are async generators."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


def route_handlers() -> list[tuple[str, type[JupyterHandler]]]:
    """The (path, handler) table, relative to the server's base URL."""
    from .tensorboard.handlers import ROUTES as TENSORBOARD_ROUTES

    return [
        (rf"/{API}/config", ConfigHandler),
        (rf"/{API}/render", RenderHandler),
        (rf"/{API}/jobs", JobsHandler),
        (rf"/{API}/jobs/{NAME}", JobHandler),
        (rf"/{API}/jobs/{NAME}/events", EventsHandler),
        (rf"/{API}/jobs/{NAME}/progress", ProgressHandler),
        (rf"/{API}/jobs/{NAME}/clone", CloneHandler),
        (rf"/{API}/jobs/{NAME}/run", RunHandler),
        (rf"/{API}/jobs/{NAME}/logs", LogsHandler),
        (rf"/{API}/volumes", VolumesHandler),
        (rf"/{API}/runtimes", RuntimesHandler),
        (rf"/{API}/compare", CompareHandler),
        *TENSORBOARD_ROUTES,
    ]
