"""HTTP glue for TensorBoard: the REST API and the authenticated proxy.

REST (``<base_url>pytorchjob/api/tensorboards``), XSRF-checked like every API route:

* ``GET tensorboards`` → 200 ``[instance, …]``
* ``POST tensorboards`` with ``{"logdir": PATH}``, ``{"job": NAME}`` or
  ``{"jobs": [NAME, …]}`` (one TensorBoard, a run per job named after it) → 201 instance
  (``{id, url, logdir, jobs, runs, pid, port, started, last_access}``; ``url`` is
  relative to the base URL and ends with ``/``; ``jobs``: the jobs it was opened
  for). Answers once TensorBoard is ready. 404 for a ``logdir`` that does not
  exist, 429 (naming one to stop) when ``tensorboard_max_instances`` are busy.
* ``GET tensorboards/<id>`` → 200 instance, 404 unknown
* ``GET jobs/<name>/tensorboard`` → 200 ``{logdir, problem}``: the job's log directory as
  TensorBoard would open it, or why it cannot (the message ``POST`` would answer); 404
  for an unknown job
* ``DELETE tensorboards/<id>`` → 204, 404 unknown

Errors are JSON ``{field, message}``.

Proxy (``<base_url>pytorchjob/tensorboard/<id>/…``): jupyter-server-proxy's
``LocalProxyHandler`` with the port looked up per request, the full path kept
(TensorBoard runs with the matching ``--path_prefix``), and XSRF deferred to
TensorBoard, whose POSTs carry no XSRF token. Unauthenticated requests get 403.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Awaitable, Callable
from typing import Any, cast
from urllib.parse import urlparse, urlunparse

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server_proxy.handlers import LocalProxyHandler, RewritableResponse
from tornado import web

from ..job.errors import JobSpecInvalid
from ..job.messages import Message, coded_wire, msg
from ..rest import AUTH_RESOURCE, job_name_problem, json_object_body
from .manager import PROXY_PATH, TensorBoardError, TensorBoardManager

API = "pytorchjob/api/tensorboards"
#: settings key of the ``TensorBoardManager``
MANAGER_SETTING = "pytorchjob_tensorboards"
#: settings key of an optional ``async (job_name) -> logdir`` resolver. It raises
#: ``TensorBoardError`` (its own status) or ``LookupError`` (404, field ``job``).
RESOLVER_SETTING = "pytorchjob_logdir_resolver"

LogdirResolver = Callable[[str], Awaitable[str]]
#: the most jobs one TensorBoard compares (``{"jobs": […]}``)
MAX_RUNS = 20


#: TensorBoard's page loads its fonts from ``/font-roboto/…``, the server's root rather
#: than its ``--path_prefix``; made relative, they resolve under the proxy.
_ROOT_FONTS = b"url(/font-roboto/"
_RELATIVE_FONTS = b"url(font-roboto/"


def relative_fonts(response: RewritableResponse, path: str) -> None:
    """Rewrite the root-absolute font URLs of TensorBoard's page (gzip or not)."""
    if path not in ("", "/", "/index.html") or response.code != 200:
        return
    if not str(response.headers.get("Content-Type", "")).startswith("text/html"):
        return
    gzipped = response.headers.get("Content-Encoding", "").lower() == "gzip"
    body = gzip.decompress(response.body) if gzipped else response.body
    if _ROOT_FONTS not in body:
        return
    body = body.replace(_ROOT_FONTS, _RELATIVE_FONTS)
    response.body = gzip.compress(body, compresslevel=6) if gzipped else body


def _manager(handler: JupyterHandler) -> TensorBoardManager:
    manager = handler.settings.get(MANAGER_SETTING)
    if manager is None:  # pragma: no cover - the extension always sets it
        raise web.HTTPError(503, "TensorBoard support is not initialised")
    return cast(TensorBoardManager, manager)


class _TensorBoardAPIHandler(APIHandler):
    auth_resource = AUTH_RESOURCE

    def _error(self, err: TensorBoardError) -> None:
        self.set_status(err.status)
        self.finish(json.dumps(err.to_wire()))

    async def _job_logdir(self, job: str, field: str) -> str:
        """A job's log directory through the server's resolver; errors name ``field``."""
        invalid = job_name_problem(job)  # before the name becomes part of a path
        if invalid is not None:
            raise TensorBoardError(field, invalid.errors[0].problem)
        resolver = cast("LogdirResolver | None", self.settings.get(RESOLVER_SETTING))
        if resolver is None:
            raise TensorBoardError(field, msg("tb_no_resolver"))
        try:
            return await resolver(job)
        except LookupError as err:
            # The backend's JobNotFound, its Message passed along (app.job_logdir).
            said = err.args[0] if err.args and isinstance(err.args[0], Message) else str(err)
            problem = msg("tb_job_logdir", job=repr(job), problem=said)
            raise TensorBoardError(field, problem, 404) from err
        except TensorBoardError as err:
            raise TensorBoardError(field, err.problem or err.message, err.status) from err


class TensorBoardsHandler(_TensorBoardAPIHandler):
    """``GET`` lists, ``POST`` starts (or reuses) a TensorBoard."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """Answer the running instances."""
        self.finish(json.dumps([i.to_wire() for i in _manager(self).list()]))

    @web.authenticated
    @authorized
    async def post(self) -> None:
        """Start a TensorBoard for ``{"logdir"}`` or ``{"job"}``; 201 with the instance."""
        try:
            body = self._json_body()
            if "jobs" in body:
                instance = await _manager(self).start_runs(await self._runs(body))
            else:
                logdir = await self._logdir(body)
                instance = await _manager(self).start(logdir, job=body.get("job"))
        except TensorBoardError as err:
            self._error(err)
            return
        self.set_status(201)
        self.set_header("Location", self.request.path.rstrip("/") + "/" + instance.id)
        self.finish(json.dumps(instance.to_wire()))

    async def _runs(self, body: dict[str, Any]) -> dict[str, str]:
        """``{"jobs": [NAME, …]}`` -> each job's log directory, by job name."""
        unknown = sorted(set(body) - {"jobs"})
        if unknown:
            raise TensorBoardError(unknown[0], msg("tb_jobs_alone"))
        jobs = body["jobs"]
        if not isinstance(jobs, list) or not jobs or not all(isinstance(j, str) for j in jobs):
            raise TensorBoardError("jobs", msg("tb_jobs_list"))
        if len(jobs) > MAX_RUNS:
            raise TensorBoardError("jobs", msg("tb_jobs_many", maximum=MAX_RUNS))
        if len(set(jobs)) != len(jobs):
            raise TensorBoardError("jobs", msg("tb_jobs_once"))
        return {job: await self._job_logdir(job, "jobs") for job in jobs}

    async def _logdir(self, body: dict[str, Any]) -> str:
        unknown = sorted(set(body) - {"logdir", "job"})
        if unknown:
            raise TensorBoardError(unknown[0], msg("tb_unknown_field"))
        if ("logdir" in body) == ("job" in body):
            raise TensorBoardError("logdir", msg("tb_one_of"))
        if "logdir" in body:
            logdir = body["logdir"]
            if not isinstance(logdir, str) or not logdir.strip():
                raise TensorBoardError("logdir", msg("tb_logdir_string"))
            return logdir
        job = body["job"]
        if not isinstance(job, str) or not job.strip():
            raise TensorBoardError("job", msg("tb_job_string"))
        return await self._job_logdir(job, "job")

    def _json_body(self) -> dict[str, Any]:
        try:
            return json_object_body(self)
        except JobSpecInvalid as err:
            raise TensorBoardError(err.field, err.errors[0].problem) from err


class JobTensorBoardHandler(_TensorBoardAPIHandler):
    """``GET jobs/<name>/tensorboard``: whether TensorBoard can open the job's log
    directory, and why not - asked before a button offers it (a job writing to a host
    path outside ``tensorboard_roots`` would otherwise be refused only once clicked)."""

    @web.authenticated
    @authorized
    async def get(self, name: str) -> None:
        """200 ``{logdir, problem}`` (exactly one of them null); 404 for an unknown job."""
        invalid = job_name_problem(name)
        if invalid is not None:
            self._error(TensorBoardError("name", invalid.errors[0].problem))
            return
        try:
            logdir = await self._job_logdir(name, "job")
            resolved = str(_manager(self).resolve(logdir))
        except TensorBoardError as err:
            if err.status == 404:  # no such job
                self._error(err)
                return
            said = err.problem or err.message
            self.finish(json.dumps({"logdir": None, **coded_wire("problem", said)}))
            return
        self.finish(json.dumps({"logdir": resolved, **coded_wire("problem", None)}))


class TensorBoardHandler(_TensorBoardAPIHandler):
    """``GET`` one instance, ``DELETE`` stops it."""

    @web.authenticated
    @authorized
    async def get(self, tb_id: str) -> None:
        """Answer one instance or 404."""
        instance = _manager(self).get(tb_id)
        if instance is None:
            self._error(TensorBoardError("id", msg("tb_not_found", id=repr(tb_id)), 404))
            return
        self.finish(json.dumps(instance.to_wire()))

    @web.authenticated
    @authorized
    async def delete(self, tb_id: str) -> None:
        """Stop one instance: 204, or 404 when unknown."""
        if not await _manager(self).stop(tb_id):
            self._error(TensorBoardError("id", msg("tb_not_found", id=repr(tb_id)), 404))
            return
        self.set_status(204)
        self.finish()


class TensorBoardProxyHandler(LocalProxyHandler):  # type: ignore[misc]
    """``pytorchjob/tensorboard/<id>/…`` → ``127.0.0.1:<port of id>``, path kept.

    Inherits authentication (``prepare``), websocket bridging and the XSRF
    deferral (``check_xsrf_cookie`` is a no-op: TensorBoard's POSTs carry no
    token) from jupyter-server-proxy. Every verb is also decorated, so the
    server's auth check (``JupyterServerAuthWarning``) sees them as protected.
    """

    auth_resource = AUTH_RESOURCE

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The backend sees the full browser path (``_get_context_path`` below).
        self.absolute_url = True
        self.rewrite_response = (relative_fonts,)
        self._prefix = ""

    def get_login_url(self) -> str:
        """403 instead of a login redirect, as for the API (and for iframes)."""
        if not self.current_user:
            raise web.HTTPError(403)
        return cast(str, super().get_login_url())

    def _get_context_path(self, host: str, port: int) -> str:
        return self._prefix

    def proxy_request_headers(self) -> Any:
        """The browser's headers minus the Jupyter credentials."""
        headers = super().proxy_request_headers()
        for name in ("Authorization", "Cookie"):
            if name in headers:
                del headers[name]
        return headers

    def _port(self, tb_id: str) -> int:
        instance = _manager(self).touch(tb_id)
        if instance is None:
            raise web.HTTPError(404, f"no TensorBoard {tb_id!r}")
        self._prefix = instance.prefix
        return instance.port

    def _add_slash(self) -> bool:
        """Redirect ``…/<id>`` to ``…/<id>/``: TensorBoard resolves ``data/…`` from it."""
        if self.request.method not in ("GET", "HEAD"):
            return False
        src = urlparse(self.request.uri)
        self.redirect(urlunparse(src._replace(path=src.path + "/")))
        return True

    async def _forward(self, tb_id: str, proxied_path: str) -> None:
        port = self._port(tb_id)
        if not proxied_path and self._add_slash():
            return
        await super().proxy(port, proxied_path or "/")

    @web.authenticated
    @authorized
    async def get(self, tb_id: str, proxied_path: str) -> None:
        """HTTP GET, or a websocket upgrade (``open``)."""
        self._port(tb_id)  # 404 before a websocket handshake, too
        await super().get(tb_id=tb_id, proxied_path=proxied_path)

    async def http_get(self, tb_id: str, proxied_path: str) -> None:
        """Non-websocket GET (called by ``get``)."""
        await self._forward(tb_id, proxied_path)

    async def open(self, tb_id: str, proxied_path: str) -> None:
        """A websocket to the same path on TensorBoard."""
        await self.proxy_open("localhost", self._port(tb_id), proxied_path or "/")

    @web.authenticated
    @authorized
    async def post(self, tb_id: str, proxied_path: str) -> None:
        """Proxied POST (TensorBoard's own, without an XSRF token)."""
        await self._forward(tb_id, proxied_path)

    @web.authenticated
    @authorized
    async def put(self, tb_id: str, proxied_path: str) -> None:
        """Proxied PUT."""
        await self._forward(tb_id, proxied_path)

    @web.authenticated
    @authorized
    async def delete(self, tb_id: str, proxied_path: str) -> None:
        """Proxied DELETE."""
        await self._forward(tb_id, proxied_path)

    @web.authenticated
    @authorized
    async def head(self, tb_id: str, proxied_path: str) -> None:
        """Proxied HEAD."""
        await self._forward(tb_id, proxied_path)

    @web.authenticated
    @authorized
    async def patch(self, tb_id: str, proxied_path: str) -> None:
        """Proxied PATCH."""
        await self._forward(tb_id, proxied_path)

    @web.authenticated
    @authorized
    async def options(self, tb_id: str, proxied_path: str) -> None:
        """Proxied OPTIONS."""
        await self._forward(tb_id, proxied_path)


#: (path, handler) rules relative to the server's base URL, for ``route_handlers()``.
ROUTES: list[tuple[str, type[JupyterHandler]]] = [
    (rf"/{API}", TensorBoardsHandler),
    (r"/pytorchjob/api/jobs/(?P<name>[^/]+)/tensorboard", JobTensorBoardHandler),
    (rf"/{API}/(?P<tb_id>[^/]+)", TensorBoardHandler),
    (rf"/{PROXY_PATH}/(?P<tb_id>[^/]+)(?P<proxied_path>/.*|)", TensorBoardProxyHandler),
]
