"""REST handlers: HTTP glue only, every verb authenticated.

The logic lives in ``jupyter_pytorchjob.job``; a handler parses the request,
calls it, and maps its typed errors to status codes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from .backends import Backend, BackendError
from .backends.base import dropped_warning
from .job.errors import JobSpecInvalid
from .job.manifest import build_manifest, manifest_from_yaml, manifest_to_yaml, parse_manifest
from .job.spec import JobSpec

API = "pytorchjob/api"
NAME = r"(?P<name>[a-z0-9][-a-z0-9]*)"
# The resource name authorizers (e.g. JupyterHub's RBAC) see for our routes.
AUTH_RESOURCE = "pytorchjob"


def api_errors(
    method: Callable[..., Awaitable[None]],
) -> Callable[..., Awaitable[None]]:
    """Answer typed errors as JSON a person can act on: 400 ``{field, message,
    errors}`` for invalid input, the backend's status and message otherwise."""

    @functools.wraps(method)
    async def wrapper(self: PyTorchJobHandler, *args: Any, **kwargs: Any) -> None:
        try:
            await method(self, *args, **kwargs)
        except JobSpecInvalid as err:
            self.set_status(400)
            self.finish(json.dumps(err.to_wire()))
        except BackendError as err:
            self.set_status(err.status)
            self.finish(json.dumps({"message": err.message}))

    return wrapper


class PyTorchJobHandler(APIHandler):
    """Shared plumbing: the backend, the form defaults, JSON bodies."""

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

    def json_body(self) -> dict[str, Any]:
        try:
            body = json.loads(self.request.body or b"{}")
        except json.JSONDecodeError as err:
            raise web.HTTPError(400, f"the request body is not JSON: {err}") from err
        if not isinstance(body, dict):
            raise web.HTTPError(400, "the request body must be a JSON object")
        return body

    def write_json(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(data))


class ConfigHandler(PyTorchJobHandler):
    """``GET config``: backend and form defaults (in a cluster, the notebook's own
    image and PVC mounts)."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        """Answer the effective configuration."""
        config = dict(self.settings["pytorchjob_config"])
        config["defaults"] = await self.job_defaults()
        self.write_json(config)


class RenderHandler(PyTorchJobHandler):
    """``POST render``: a job body -> its manifest, or edited YAML -> the job body.

    Creates nothing. With ``{"yaml": TEXT}`` the YAML (the preview editor's text)
    is read back into a job body, keeping unknown fields in ``extras``; ``warnings``
    then names the fields the cluster would drop (not in its CRD schema), found by a
    server-side dry run on the kubernetes backend.
    """

    @web.authenticated
    @authorized
    @api_errors
    async def post(self) -> None:
        """Answer ``{job, manifest, yaml, warnings}`` or 400 ``{field, message, errors}``."""
        body = self.json_body()
        edited = set(body) == {"yaml"} and isinstance(body["yaml"], str)
        if edited:
            spec = parse_manifest(
                manifest_from_yaml(body["yaml"]), gpu_resource=self.defaults["gpuResource"]
            )
        else:
            spec = JobSpec.from_wire(body, defaults=await self.job_defaults())
        manifest = build_manifest(spec)
        warnings = []
        if edited:
            dropped = await self.backend.dropped_fields(manifest)
            if dropped:
                warnings.append(dropped_warning(dropped))
        self.write_json(
            {
                "job": spec.to_wire(),
                "manifest": manifest,
                "yaml": manifest_to_yaml(manifest),
                "warnings": warnings,
            }
        )


class JobsHandler(PyTorchJobHandler):
    """``GET jobs`` (the list) and ``POST jobs`` (submit)."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        """Answer ``{jobs: [...]}``, newest first."""
        jobs = await self.backend.list_jobs()
        self.write_json({"jobs": [j.to_wire() for j in jobs]})

    @web.authenticated
    @authorized
    @api_errors
    async def post(self) -> None:
        """Submit a job body; 201 with the job and its ``Location``."""
        spec = JobSpec.from_wire(self.json_body(), defaults=await self.job_defaults())
        job = await self.backend.submit(spec)
        self.set_header("Location", url_path_join(self.base_url, API, "jobs", job.name))
        self.write_json(job.to_wire(), status=201)


class JobHandler(PyTorchJobHandler):
    """``GET jobs/{name}`` (with its manifest and form body) and ``DELETE``."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, name: str) -> None:
        """Answer the job, its manifest and the job body to clone it."""
        job = await self.backend.get_job(name)
        wire = job.to_wire(with_manifest=True)
        if job.manifest is not None:
            with contextlib.suppress(JobSpecInvalid):
                spec = parse_manifest(job.manifest, gpu_resource=self.defaults["gpuResource"])
                wire["spec"] = spec.to_wire()
        self.write_json(wire)

    @web.authenticated
    @authorized
    @api_errors
    async def delete(self, name: str) -> None:
        """Stop every replica and remove the job; 204."""
        await self.backend.delete_job(name)
        self.set_status(204)
        self.finish()


class EventsHandler(PyTorchJobHandler):
    """``GET jobs/{name}/events``."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, name: str) -> None:
        """Answer ``{events: [...]}``, oldest first."""
        events = await self.backend.events(name)
        self.write_json({"events": [e.__dict__ for e in events]})


class VolumesHandler(PyTorchJobHandler):
    """``GET volumes``: the claims a job can mount."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        """Answer ``{volumes: [...]}``."""
        volumes = await self.backend.volumes()
        self.write_json({"volumes": [v.__dict__ for v in volumes]})


class LogsHandler(WebSocketMixin, WebSocketHandler, JupyterHandler):
    """``GET jobs/{name}/logs`` (websocket): the job's log as JSON messages.

    Query: ``follow`` (1/0), ``tail`` (lines per replica), ``replica``, ``previous``
    (1/0) and ``since`` (JSON ``{replica: offset}`` of the last message seen, to
    resume after a disconnect without duplicates). Messages: ``{replica, text,
    offset, previous}`` for log lines, then ``{end: true}``; ``{error, status}`` if
    the job or replica does not exist. The upstream stream stops when the client
    goes away.
    """

    auth_resource = AUTH_RESOURCE
    _task: asyncio.Task[None] | None = None

    async def pre_get(self) -> None:
        """Refuse the upgrade to users the authorizer does not let read jobs."""
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, "read", AUTH_RESOURCE)
        )
        if not allowed:
            raise web.HTTPError(403)

    @ws_authenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        """Authenticate and authorize, then upgrade to a websocket."""
        await self.pre_get()
        result = super().get(*args, **kwargs)
        if result is not None:
            await result

    def open(self, name: str) -> None:
        """Start the keep-alive pings and the stream."""
        super().open(name)
        self._task = asyncio.ensure_future(self._stream(name))

    def on_message(self, message: str | bytes) -> None:
        """Clients only listen."""

    def on_close(self) -> None:
        """Stop reading the upstream logs as soon as the client is gone."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def _arg_flag(self, name: str) -> bool:
        return self.get_argument(name, "0").lower() in ("1", "true", "yes")

    async def _stream(self, name: str) -> None:
        try:
            backend: Backend = self.settings["pytorchjob_backend"]
            backend = backend.for_namespace(self.get_argument("namespace", None))
            tail_arg = self.get_argument("tail", None)
            since_arg = self.get_argument("since", None)
            since = json.loads(since_arg) if since_arg else None
            stream = backend.logs(
                name,
                replica=self.get_argument("replica", None),
                follow=self._arg_flag("follow"),
                tail=int(tail_arg) if tail_arg else None,
                previous=self._arg_flag("previous"),
                since=since,
            )
            async for chunk in stream:
                await self.write_message(json.dumps(chunk.__dict__))
            await self.write_message(json.dumps({"end": True}))
        except (ValueError, TypeError) as err:
            with contextlib.suppress(WebSocketClosedError):
                await self.write_message(json.dumps({"error": f"bad query: {err}", "status": 400}))
        except BackendError as err:
            with contextlib.suppress(WebSocketClosedError):
                await self.write_message(json.dumps({"error": err.message, "status": err.status}))
        except WebSocketClosedError:
            return
        self.close()


def route_handlers() -> list[tuple[str, type[JupyterHandler]]]:
    """The (path, handler) table, relative to the server's base URL."""
    from .tensorboard.handlers import ROUTES as TENSORBOARD_ROUTES

    return [
        (rf"/{API}/config", ConfigHandler),
        (rf"/{API}/render", RenderHandler),
        (rf"/{API}/jobs", JobsHandler),
        (rf"/{API}/jobs/{NAME}", JobHandler),
        (rf"/{API}/jobs/{NAME}/events", EventsHandler),
        (rf"/{API}/jobs/{NAME}/logs", LogsHandler),
        (rf"/{API}/volumes", VolumesHandler),
        *TENSORBOARD_ROUTES,
    ]
