"""The Jupyter server that runs this kernel or terminal, as the CLI and the magic reach it.

``ptjob tensorboard`` and ``%ptjob tensorboard`` open TensorBoard through that server
(``POST pytorchjob/api/tensorboards``) so that it shows in JupyterLab; they find it
from the ``jpserver-<pid>.json`` file the server writes.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from ..backends import Backend, BackendError
from ..processes import pid_alive


class ServerError(Exception):
    """The Jupyter server refused a request; ``str()`` is its message."""

    def __init__(self, message: str, *, status: int = 0, field: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.field = field


def running_server() -> dict[str, Any] | None:
    """The ``jpserver-<pid>.json`` info of the Jupyter server running this process.

    A kernel knows its server from ``JPY_PARENT_PID`` (set by jupyter_client's
    launcher); a JupyterLab terminal from ``JUPYTER_SERVER_URL``. None when there is
    no such server, it is gone, or it listens on a Unix socket only.
    """
    from jupyter_core.paths import jupyter_runtime_dir

    runtime = Path(jupyter_runtime_dir())
    candidates: list[Path] = []
    parent = os.environ.get("JPY_PARENT_PID", "")
    if parent.isdigit():
        candidates.append(runtime / f"jpserver-{parent}.json")
    url = os.environ.get("JUPYTER_SERVER_URL")
    if url:
        candidates += sorted(runtime.glob("jpserver-*.json"))
    for path in candidates:
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(info, dict) or not str(info.get("url", "")).startswith("http"):
            continue
        if path.name != f"jpserver-{parent}.json" and info.get("url") != url:
            continue
        if pid_alive(info.get("pid")):
            return info
    return None


def server_token(server: dict[str, Any]) -> str:
    """The server's token, or JupyterHub's API token when the file has none."""
    return str(server.get("token") or os.environ.get("JUPYTERHUB_API_TOKEN", ""))


def post_to_server(
    server: dict[str, Any], path: str, body: dict[str, Any], *, timeout: float = 90.0
) -> dict[str, Any]:
    """POST JSON to ``<server url><path>`` with the token; ``ServerError`` unless 2xx."""
    url = server["url"].rstrip("/") + "/" + path.lstrip("/")
    headers = {"Content-Type": "application/json"}
    token = server_token(server)
    if token:
        headers["Authorization"] = f"token {token}"
    request = urllib.request.Request(  # noqa: S310 - the URL is the server's own http(s) URL
        url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            answer = json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as err:
        try:
            detail = json.loads(err.read() or b"{}")
        except ValueError:
            detail = {}
        if not isinstance(detail, dict):
            detail = {}
        message = str(detail.get("message") or err.reason)
        raise ServerError(message, status=err.code, field=str(detail.get("field", ""))) from err
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise ServerError(f"cannot reach the Jupyter server at {url}: {err}") from err
    if not isinstance(answer, dict):
        raise ServerError(f"unexpected answer from {url}: {answer!r}")
    return answer


async def server_tensorboard(server: dict[str, Any], name: str, backend: Backend) -> dict[str, Any]:
    """``POST pytorchjob/api/tensorboards {"job": name}`` on the server: ``{id, url, logdir}``.

    When the server cannot resolve a job to its log directory (400 on ``job``: a
    server without a resolver), ask again by the log directory this side's backend
    reports.
    """
    path = "pytorchjob/api/tensorboards"
    try:
        return await asyncio.to_thread(post_to_server, server, path, {"job": name})
    except ServerError as err:
        if err.status != 400 or err.field != "job":
            raise
        first = err
    try:
        logdir = await backend.job_logdir(name)
    except BackendError as err:
        raise ServerError(f"{first}; {err.message}", status=first.status) from err
    return await asyncio.to_thread(post_to_server, server, path, {"logdir": logdir})
