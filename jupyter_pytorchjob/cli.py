"""``ptjob``: the command line over the shared parser, job model and backends.

Exit status: 0 on success, 2 on invalid input (one line per problem, naming the
flag), 1 on any other failure with a message a person can act on - never a
traceback; 141 (as a tool killed by SIGPIPE) when the reader of its output went
away, as in ``ptjob logs JOB | head``.

``ptjob list`` and ``ptjob status`` of a backend that reads without an event loop (the
local one: ``Backend.reads_without_loop``) import no asyncio: it and ssl would be most
of their start-up. Modules only some commands need are imported by those.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

from .arguments import Invocation, UsageError, describe, parse
from .backends import Backend, BackendError
from .frontends.ansi import colour_wanted
from .frontends.backend_choice import open_backend, reads_without_loop
from .frontends.formatting import (
    LogWriter,
    failure_lines,
    format_jobs,
    format_run,
    format_runtimes,
    format_status,
)
from .job.errors import JobSpecInvalid

EXIT_INVALID = 2
EXIT_FAILED = 1
EXIT_BROKEN_PIPE = 128 + 13  # 128 + SIGPIPE, what a shell reports for `yes | head -1`


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
        if invocation.command in ("list", "status") and reads_without_loop(
            invocation.options.backend
        ):
            return _read_without_loop(invocation)
        import asyncio  # every other command runs on an event loop

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


def _read_without_loop(invocation: Invocation) -> int:
    """``list``/``status`` of a backend whose reads need no event loop."""
    options = invocation.options
    backend = open_backend(options.backend, options.namespace)
    if invocation.command == "list":
        print(format_jobs(backend.list_jobs_blocking()))
    else:
        print(format_status(backend.get_job_blocking(options.job)))
    return 0


async def _run(invocation: Invocation) -> int:
    options = invocation.options
    if invocation.command in ("render", "submit"):
        return await _create(invocation)
    backend = open_backend(options.backend, options.namespace)
    try:
        return await _inspect(invocation, backend)
    finally:
        await backend.close()


async def _create(invocation: Invocation) -> int:
    """``render`` and ``submit``: the only commands that need the job model's validation
    and the kinds' manifest code."""
    from .job.spec import JobSpec
    from .kinds import kind_for

    options = invocation.options
    if invocation.command == "render":
        spec = JobSpec.from_wire(invocation.job)
        manifest = kind_for(spec).build(spec, namespace=options.namespace)
        for warning in spec.warnings:
            print(f"ptjob: warning: {warning}", file=sys.stderr)
        if options.output == "json":
            print(json.dumps(manifest, indent=2))
        else:
            from .job.manifest_yaml import manifest_to_yaml  # PyYAML: for render only

            sys.stdout.write(manifest_to_yaml(manifest))
        return 0
    spec = JobSpec.from_wire(invocation.job)
    backend = open_backend(options.backend, options.namespace)
    try:
        job = await backend.submit(spec)
    finally:
        await backend.close()
    print(job.name)
    for warning in job.warnings:
        print(f"ptjob: warning: {warning}", file=sys.stderr)
    print(f"follow it with: ptjob logs {job.name} -f", file=sys.stderr)
    return 0


async def _inspect(invocation: Invocation, backend: Backend) -> int:
    options = invocation.options
    if invocation.command == "list":
        print(format_jobs(await backend.list_jobs()))
        return 0
    if invocation.command == "status":
        print(format_status(await backend.get_job(options.job)))
        return 0
    if invocation.command == "runtimes":
        print(format_runtimes(await backend.runtimes()))
        return 0
    if invocation.command == "logs":
        from .frontends.logs import requested_logs

        writer = LogWriter(
            prefix=options.replica is None,
            raw=options.raw,
            colour=colour_wanted(options.no_color),
        )
        try:
            async for chunk in requested_logs(backend, options):
                writer.write(chunk)
        finally:
            writer.close()
        return 0
    if invocation.command == "wait":
        import shutil

        from .frontends.waiting import TerminalWait

        progress = TerminalWait(
            sys.stdout, tty=sys.stdout.isatty(), width=shutil.get_terminal_size().columns
        )
        try:
            job = await backend.wait(options.job, timeout=options.timeout, watch=progress)
        finally:
            progress.close()
        print(f"{job.name}: {job.state.value}")
        if job.failure is not None:
            print("\n".join(failure_lines(job.failure)))
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
    if invocation.command == "run":
        print(format_run(options.job, await backend.run(options.job)))
        return 0
    if invocation.command == "clone":
        job = await backend.clone(
            options.job, new_name=options.new_name, resume_from=options.from_checkpoint
        )
        print(job.name)
        print(f"follow it with: ptjob logs {job.name} -f", file=sys.stderr)
        return 0
    if invocation.command == "tensorboard":
        return await _tensorboard(options.job, backend)
    raise UsageError(f"unknown command {invocation.command!r}")  # pragma: no cover


async def _tensorboard(name: str, backend: Backend) -> int:
    """Through the Jupyter server of this terminal, else a local TensorBoard until Ctrl-C."""
    # Imported here: the other commands start faster without an HTTP client stack.
    from .frontends.server import ServerError, running_server, server_tensorboard

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
        import asyncio

        await asyncio.Event().wait()  # until Ctrl-C cancels this task
    except TensorBoardError as err:
        raise BackendError(f"{err.field}: {err.message}", status=err.status) from err
    finally:
        await manager.stop_all()
    return 0  # pragma: no cover - only Ctrl-C ends the wait


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
