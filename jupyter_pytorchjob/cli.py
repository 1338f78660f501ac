"""``ptjob``: the command line over the shared parser, job model and backends.

Exit status: 0 on success, 2 on invalid input (one line per problem, naming the
flag), 1 on any other failure with a message a person can act on - never a
traceback; 141 (as a tool killed by SIGPIPE) when the reader of its output went
away, as in ``ptjob logs JOB | head``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .arguments import Invocation, UsageError, describe, parse
from .backends import Backend, BackendError, JobInfo, create_backend
from .job.errors import JobSpecInvalid
from .job.manifest_yaml import manifest_to_yaml
from .job.spec import JobSpec
from .kinds import DEFAULT_KIND
from .processes import pid_alive

EXIT_INVALID = 2
EXIT_FAILED = 1
EXIT_BROKEN_PIPE = 128 + 13  # 128 + SIGPIPE, what a shell reports for `yes | head -1`
BACKEND_ENV = "PTJOB_BACKEND"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ptjob`` console script."""
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away: stop quietly. stdout now leads to /dev/null, so the
        # interpreter's final flush of what is still buffered cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        invocation = parse(args)
    except UsageError as err:
        print(str(err), file=sys.stderr)
        return EXIT_INVALID
    prog = f"ptjob {invocation.command}"
    try:
        return asyncio.run(_run(invocation))
    except JobSpecInvalid as err:
        for line in describe(err).splitlines():
            print(f"{prog}: error: {line}", file=sys.stderr)
        return EXIT_INVALID
    except UsageError as err:
        print(str(err), file=sys.stderr)
        return EXIT_INVALID
    except BackendError as err:
        print(f"{prog}: error: {err.message}", file=sys.stderr)
        return EXIT_INVALID if err.status == 400 else EXIT_FAILED
    except TimeoutError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130


def backend_for(invocation: Invocation) -> Backend:
    """The backend named by --backend, else $PTJOB_BACKEND, else local."""
    name = invocation.options.backend or os.environ.get(BACKEND_ENV) or "local"
    namespace = invocation.options.namespace
    if name == "kubernetes":
        # The person's own kubeconfig decides which namespaces they may use.
        return create_backend(name, namespace=namespace)
    return create_backend(name).for_namespace(namespace)


async def _run(invocation: Invocation) -> int:
    options = invocation.options
    if invocation.command == "render":
        spec = JobSpec.from_wire(invocation.job)
        manifest = DEFAULT_KIND.build(spec, namespace=options.namespace)
        if options.output == "json":
            print(json.dumps(manifest, indent=2))
        else:
            sys.stdout.write(manifest_to_yaml(manifest))
        return 0
    if invocation.command == "submit":
        spec = JobSpec.from_wire(invocation.job)
        backend = backend_for(invocation)
        try:
            job = await backend.submit(spec)
        finally:
            await backend.close()
        print(job.name)
        for warning in job.warnings:
            print(f"ptjob: warning: {warning}", file=sys.stderr)
        print(f"follow it with: ptjob logs {job.name} -f", file=sys.stderr)
        return 0
    backend = backend_for(invocation)
    try:
        return await _inspect(invocation, backend)
    finally:
        await backend.close()


async def _inspect(invocation: Invocation, backend: Backend) -> int:
    options = invocation.options
    if invocation.command == "list":
        print(format_jobs(await backend.list_jobs()))
        return 0
    if invocation.command == "status":
        print(format_status(await backend.get_job(options.job)))
        return 0
    if invocation.command == "logs":
        prefix = options.replica is None
        async for chunk in backend.logs(
            options.job,
            replica=options.replica,
            follow=options.follow,
            tail=options.tail,
            previous=options.previous,
        ):
            out = sys.stderr if chunk.notice else sys.stdout
            out.write(chunk.display(prefix=prefix))
            out.flush()
        return 0
    if invocation.command == "wait":
        job = await backend.wait(options.job, timeout=options.timeout)
        print(f"{job.name}: {job.state.value}")
        return 0 if job.state.value == "Succeeded" else EXIT_FAILED
    if invocation.command == "delete":
        await backend.delete_job(options.job)
        print(f"deleted {options.job}")
        return 0
    if invocation.command == "suspend":
        await backend.suspend(options.job)
        print(f"suspended {options.job}")
        return 0
    if invocation.command == "resume":
        await backend.resume(options.job)
        print(f"resumed {options.job}")
        return 0
    if invocation.command == "tensorboard":
        return await _tensorboard(options.job, backend)
    raise UsageError(f"unknown command {invocation.command!r}")  # pragma: no cover


async def _tensorboard(name: str, backend: Backend) -> int:
    """Through the Jupyter server of this terminal, else a local TensorBoard until Ctrl-C."""
    server = running_server()
    if server is not None:
        try:
            tb = await server_tensorboard(server, name, backend)
        except ServerError as err:
            print(f"ptjob tensorboard: error: the Jupyter server says: {err}", file=sys.stderr)
            return EXIT_FAILED
        print(server["url"].rstrip("/") + "/" + tb["url"].lstrip("/"))
        return 0
    from .tensorboard.manager import TensorBoardError, TensorBoardManager

    logdir = await backend.job_logdir(name)
    manager = TensorBoardManager(roots=[logdir], base_url="/")
    try:
        instance = await manager.start(logdir, job=name)
        print(f"http://127.0.0.1:{instance.port}{instance.prefix}/", flush=True)
        print(f"TensorBoard on {logdir}; Ctrl-C stops it", file=sys.stderr)
        await asyncio.Event().wait()  # until Ctrl-C cancels this task
    except TensorBoardError as err:
        raise BackendError(f"{err.field}: {err.message}", status=err.status) from err
    finally:
        await manager.stop_all()
    return 0  # pragma: no cover - only Ctrl-C ends the wait


# -- the Jupyter server of this kernel or terminal (shared with the magic) ------------


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


def human_duration(seconds: float | None) -> str:
    """``42s``, ``3m05s``, ``2h01m``, ``-`` for none."""
    if seconds is None:
        return "-"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def format_jobs(jobs: list[JobInfo]) -> str:
    rows = [["NAME", "STATE", "NODES", "GPUS", "AGE", "DURATION"]]
    now = time.time()
    for job in jobs:
        rows.append(
            [
                job.name,
                job.state.value,
                str(job.nodes),
                str(job.gpus * job.nodes),
                human_duration(now - job.created),
                human_duration(job.duration),
            ]
        )
    return table(rows) if jobs else "no jobs"


def format_status(job: JobInfo) -> str:
    lines = [
        f"Name:     {job.name}",
        f"State:    {job.state.value}",
        f"Nodes:    {job.nodes} ({job.topology})",
        f"Duration: {human_duration(job.duration)}",
    ]
    if job.message:
        lines.append(f"Note:     {job.message}")
    if job.logdir:
        lines.append(f"Logdir:   {job.logdir}")
    if job.conditions:
        lines.append("Conditions:")
        lines += [f"  {c.type:<11}{c.status:<6}{c.message}" for c in job.conditions]
    rows = [["REPLICA", "PHASE", "RESTARTS", "EXIT", "REASON"]]
    for r in job.replicas:
        reason = " ".join(x for x in (r.reason, r.message) if x)
        exit_code = "-" if r.exit_code is None else str(r.exit_code)
        rows.append([r.name, r.phase, str(r.restarts), exit_code, reason])
    lines += ["Replicas:", table(rows)]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
