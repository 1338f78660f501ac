"""REST handlers: HTTP glue only, every verb authenticated.

The logic lives in ``jupyter_pytorchjob.job``; a handler parses the request,
calls it, and maps its typed errors to status codes.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from .job.errors import JobSpecInvalid
from .job.manifest import build_manifest, manifest_to_yaml
from .job.spec import JobSpec

API = "pytorchjob/api"
# The resource name authorizers (e.g. JupyterHub's RBAC) see for our routes.
AUTH_RESOURCE = "pytorchjob"


class ConfigHandler(APIHandler):
    """``GET config``: backend and form defaults."""

    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """Answer the effective configuration."""
        self.finish(json.dumps(self.settings["pytorchjob_config"]))


class RenderHandler(APIHandler):
    """``POST render``: validate a job body and answer its manifest; creates nothing."""

    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def post(self) -> None:
        """Answer ``{manifest, yaml}`` or 400 ``{field, message, errors}``."""
        body = self._json_body()
        defaults = self.settings["pytorchjob_config"]["defaults"]
        try:
            spec = JobSpec.from_wire(body, defaults=defaults)
            manifest = build_manifest(spec)
        except JobSpecInvalid as err:
            self.set_status(400)
            self.finish(json.dumps(err.to_wire()))
            return
        self.finish(json.dumps({"manifest": manifest, "yaml": manifest_to_yaml(manifest)}))

    def _json_body(self) -> dict[str, Any]:
        try:
            body = json.loads(self.request.body or b"{}")
        except json.JSONDecodeError as err:
            raise web.HTTPError(400, f"the request body is not JSON: {err}") from err
        if not isinstance(body, dict):
            raise web.HTTPError(400, "the request body must be a JSON object")
        return body


def route_handlers() -> list[tuple[str, type[APIHandler]]]:
    """The (path, handler) table, relative to the server's base URL."""
    return [
        (rf"/{API}/config", ConfigHandler),
        (rf"/{API}/render", RenderHandler),
    ]
