"""``ptjob``: the command line over the shared parser, job model and backends.

Exit status: 0 on success, 2 on invalid input (one line per problem, naming the
flag), 1 on any other failure with a message a person can act on - never a
traceback.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Sequence

from .arguments import Invocation, UsageError, describe, parse
from .backends import Backend, BackendError, JobInfo, create_backend
from .job.errors import JobSpecInvalid
from .job.manifest import build_manifest, manifest_to_yaml
from .job.spec import JobSpec

EXIT_INVALID = 2
EXIT_FAILED = 1
BACKEND_ENV = "PTJOB_BACKEND"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ptjob`` console script."""
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
    return create_backend(name)


async def _run(invocation: Invocation) -> int:
    options = invocation.options
    if invocation.command == "render":
        spec = JobSpec.from_wire(invocation.job)
        manifest = build_manifest(spec, namespace=options.namespace)
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
            text = chunk.text
            if prefix:
                tag = f"{chunk.replica} | "
                text = "".join(tag + line for line in text.splitlines(keepends=True))
            sys.stdout.write(text)
            sys.stdout.flush()
        return 0
    if invocation.command == "wait":
        job = await backend.wait(options.job, timeout=options.timeout)
        print(f"{job.name}: {job.state.value}")
        return 0 if job.state.value == "Succeeded" else EXIT_FAILED
    if invocation.command == "delete":
        await backend.delete_job(options.job)
        print(f"deleted {options.job}")
        return 0
    raise UsageError(f"unknown command {invocation.command!r}")  # pragma: no cover


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
        f"Nodes:    {job.nodes} (1 master + {job.nodes - 1} workers)",
        f"Duration: {human_duration(job.duration)}",
    ]
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
