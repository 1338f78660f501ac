"""What the log benchmarks share: the code of an earlier revision (the "before" side),
and pod logs served over HTTP to a real kubernetes_asyncio client, as the API server
serves them, for ``LogMerger``."""

from __future__ import annotations

import subprocess
import types
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from aiohttp import web
from kubernetes_asyncio import client

REPO = Path(__file__).resolve().parent.parent

# Writes one pod's log (timestamps=true) into the response.
LogWriter = Callable[[str, web.StreamResponse], Awaitable[None]]


def git_show(rev: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:{path}"], check=True, capture_output=True
    ).stdout.decode()


def old_module(rev: str, path: str, package: str) -> types.ModuleType:
    """A module's code at ``rev``, run inside the working tree's ``package``."""
    module = types.ModuleType(f"{package}._before")
    module.__package__ = package
    exec(compile(git_show(rev, path), f"{rev}:{path}", "exec"), module.__dict__)
    return module


def pod(replica: str, job: str) -> dict[str, Any]:
    kind, index = replica.split("-")
    return {
        "metadata": {
            "name": f"{job}-{replica}",
            "uid": replica,
            "labels": {
                "training.kubeflow.org/replica-type": kind,
                "training.kubeflow.org/replica-index": index,
            },
        },
        "status": {},
    }


@asynccontextmanager
async def merger(
    merger_class: Any, job: str, replicas: list[str], write: LogWriter
) -> AsyncIterator[Any]:
    """A ``merger_class`` (a ``LogMerger``) reading the backlog of ``replicas``' pods,
    whose logs ``write`` gives, from a local HTTP server."""

    async def log(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        await write(request.match_info["name"], response)
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/api/v1/namespaces/{ns}/pods/{name}/log", log)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    api = client.ApiClient(configuration=client.Configuration(host=f"http://127.0.0.1:{port}"))
    pods = [pod(r, job) for r in replicas]

    async def list_pods() -> list[dict[str, Any]]:
        return pods

    async def finished() -> bool:
        return True

    from jupyter_pytorchjob.kinds import PYTORCHJOB

    try:
        yield merger_class(
            api, "ns", job, kind=PYTORCHJOB, list_pods=list_pods, finished=finished,
            replica=None, follow=False, tail=None, previous=False, since=None,
        )  # fmt: skip
    finally:
        await api.close()
        await runner.cleanup()
