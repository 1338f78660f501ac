"""Authorization, not only authentication: a user the server's authorizer does not
allow the ``pytorchjob`` resource gets 403 on every route, verb, websocket and proxy
path - with a valid token.

The routes are read from the running application, so a route added later is covered
without touching this file. ``tests/mutation_auth.py`` checks that this test fails
when the authorization checks are removed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from jupyter_server.auth import Authorizer
from tornado.httpclient import HTTPClientError
from tornado.web import RequestHandler

from .routes import routes

RESOURCE = "pytorchjob"
BODIES = {
    "render": {"name": "demo", "command": ["python", "-c", "pass"]},
    "jobs": {"name": "demo", "command": ["python", "-c", "pass"]},
    "tensorboards": {"logdir": "."},
}


class DenyPyTorchJob(Authorizer):
    """Allows everything but this extension's resource (as JupyterHub's RBAC may)."""

    def is_authorized(self, handler: RequestHandler, user: Any, action: str, resource: str) -> bool:
        return resource != RESOURCE


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    config = {**jp_server_config, "ServerApp": dict(jp_server_config["ServerApp"])}
    config["ServerApp"]["authorizer_class"] = DenyPyTorchJob
    return config


async def test_every_route_refuses_a_user_not_authorized(
    jp_fetch: Any, jp_ws_fetch: Any, jp_serverapp: Any, jp_base_url: str
) -> None:
    table = routes(jp_serverapp.web_app, jp_base_url)
    handlers = {h.__name__ for _, _, h in table}
    # The table is the application's own; these make sure it was read at all.
    assert {"JobsHandler", "LogsHandler", "TensorBoardProxyHandler"} <= handlers, handlers
    answers = {}
    for path, method, _handler in table:
        body = BODIES.get(path.rsplit("/", 1)[-1], {})
        response = await jp_fetch(
            path,
            method=method,
            body=json.dumps(body) if method in ("POST", "PUT", "PATCH") else None,
            allow_nonstandard_methods=True,
            raise_error=False,
            follow_redirects=False,
        )
        answers[f"{method} {path}"] = response.code
    assert all(code == 403 for code in answers.values()), {
        k: v for k, v in answers.items() if v != 403
    }
    # Websockets: the log stream and TensorBoard's own, through the proxy.
    for path, _, handler in table:
        if handler.__name__ in ("LogsHandler", "TensorBoardProxyHandler"):
            with pytest.raises(HTTPClientError) as info:
                ws = await jp_ws_fetch(path)
                ws.close()
            assert info.value.code == 403, path
    # Nothing was created on the way.
    backend = jp_serverapp.web_app.settings["pytorchjob_backend"]
    assert await backend.list_jobs() == []
