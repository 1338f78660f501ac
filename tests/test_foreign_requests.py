"""What a browser's credentials must not reach, and where a foreign page must not get in:
the TensorBoard proxy passes no ``Cookie``/``Authorization`` on to TensorBoard (any
process on the machine can listen on its port), and the log websocket refuses a
cookie-authenticated upgrade from another origin. ``tests/mutation_auth.py`` checks
that these tests fail when either defence is removed."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_pytorchjob.tensorboard.handlers import MANAGER_SETTING

from .test_tensorboard import login_cookie, open_tensorboard, proxied

API = ("pytorchjob", "api")

# Stands in for TensorBoard: answers every GET with the request headers it received.
HEADER_ECHO = """
import http.server, json, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
class Echo(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps(dict(self.headers.items())).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Echo).serve_forever()
"""


async def test_the_tensorboard_proxy_passes_no_credentials_on(
    jp_fetch: Any, jp_serverapp: Any
) -> None:
    manager = jp_serverapp.web_app.settings[MANAGER_SETTING]
    manager.command = [sys.executable, "-c", HEADER_ECHO]
    tb = await open_tensorboard(jp_fetch, {"logdir": "."})
    try:
        cookie = await login_cookie(jp_fetch)
        for headers in ({}, {"Cookie": cookie}, {"Authorization": "", "Cookie": cookie}):
            response = await proxied(jp_fetch, tb, "data/environment", headers=headers)
            received = {name.lower() for name in json.loads(response.body)}
            assert "cookie" not in received, headers
            assert "authorization" not in received, headers
            assert "host" in received  # the echo saw the request's headers at all
    finally:
        await jp_fetch(*API, "tensorboards", tb["id"], method="DELETE")


@pytest.mark.parametrize("origin", ["http://evil.example", "null"])
async def test_the_log_websocket_refuses_a_foreign_origin(
    jp_fetch: Any, jp_ws_fetch: Any, jp_http_port: int, origin: str
) -> None:
    """A page elsewhere opening a websocket with the user's cookie (token requests skip
    the origin check, as a script sends no cookie by itself)."""
    # The login cookie's name carries the host: jp_ws_fetch connects to localhost.
    response = await jp_fetch(*API, "config", headers={"Host": f"localhost:{jp_http_port}"})
    cookies = [c.split(";", 1)[0] for c in response.headers.get_list("Set-Cookie")]
    cookie = "; ".join(c for c in cookies if c.startswith("username-localhost"))
    assert cookie, cookies
    browser = {"Authorization": "", "Cookie": cookie}
    with pytest.raises(HTTPClientError) as info:
        await jp_ws_fetch(*API, "jobs", "nope", "logs", headers={**browser, "Origin": origin})
    assert info.value.code == 403
    # The same browser from the server's own origin gets in (the job is unknown: a 404
    # message on the open socket).
    own = f"http://localhost:{jp_http_port}"  # where jp_ws_fetch connects
    socket = await jp_ws_fetch(*API, "jobs", "nope", "logs", headers={**browser, "Origin": own})
    assert json.loads(await socket.read_message())["status"] == 404
    socket.close()
