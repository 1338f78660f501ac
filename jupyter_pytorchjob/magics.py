"""``%ptjob`` / ``%%ptjob``: the ``ptjob`` command inside IPython and Jupyter.

``%load_ext jupyter_pytorchjob`` registers one line-and-cell magic. It parses its
line with the very parser of the ``ptjob`` CLI (``arguments.parse``) and talks to
the same backends (``cli.backend_for``: ``--backend``, else ``$PTJOB_BACKEND``,
else local, whose jobs live under ``$PTJOB_HOME``), so the magic, the CLI and the
JupyterLab panel see the same jobs and give the same messages.

Event loops. A Jupyter kernel already runs an asyncio loop in the main thread, so
the magic never calls ``asyncio.run``. Each ``PtjobMagics`` owns a ``Runner``: a
private event loop in a daemon thread. Backend coroutines run there and the main
thread waits on their ``concurrent.futures`` result; a kernel interrupt
(``KeyboardInterrupt`` in the main thread) cancels the task on that loop. Logs are
pumped from the backend's async generator into a bounded queue the main thread
reads; when following stops (end of the job, an error, or an interrupt) the pump
task is cancelled, the generator is closed with ``aclose()``, and the main thread
waits for both before it returns. The same code works in plain IPython, where no
loop is running.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import html
import os
import queue
import shlex
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterator
from typing import Any, TypeVar

from IPython.core.error import UsageError as IPythonUsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.display import display as _display

from . import arguments
from .arguments import Invocation, build_parser, describe, parse
from .backends import Backend, BackendError, JobInfo, LogChunk
from .cli import (
    BACKEND_ENV,
    ServerError,
    backend_for,
    format_jobs,
    format_status,
    human_duration,
    running_server,
    server_tensorboard,
)
from .job.errors import JobSpecInvalid
from .job.manifest_yaml import manifest_to_yaml
from .job.spec import SCRIPT_MAX_BYTES, JobSpec
from .kinds import DEFAULT_KIND

__all__ = ["JobHandle", "JobStatus", "JobTable", "PtjobMagics", "Runner"]

T = TypeVar("T")

#: Seconds between two looks at a job in ``%ptjob wait``.
WAIT_INTERVAL = 0.5
#: Chunks the log pump may get ahead of the cell output.
QUEUE_CHUNKS = 64

_DONE = object()


def display(obj: Any, **kwargs: Any) -> Any:
    """``IPython.display.display`` (untyped upstream)."""
    return _display(obj, **kwargs)  # type: ignore[no-untyped-call]


# -- the background event loop -------------------------------------------------------


class Runner:
    """A private asyncio loop in a daemon thread, and the backends that live on it.

    ``run(coro)`` blocks the calling thread until ``coro`` is done on the loop;
    ``stream(...)`` iterates a backend's log generator from the calling thread.
    Backends are created on the loop (a Kubernetes client binds to the loop that
    creates it) and reused per (backend, namespace).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._backends: dict[tuple[str, str | None], Backend] = {}

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop, started on first use."""
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="ptjob-magic-loop", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it.

        A ``KeyboardInterrupt`` while waiting cancels the task and waits (a few
        seconds at most) until it has finished, so no ``finally`` of the coroutine
        is still running when the interrupt reaches the caller.
        """
        loop = self.loop
        result: concurrent.futures.Future[T] = concurrent.futures.Future()
        settled = threading.Event()
        tasks: list[asyncio.Task[T]] = []

        def done(task: asyncio.Task[T]) -> None:
            if task.cancelled():
                result.cancel()
            elif (err := task.exception()) is not None:
                result.set_exception(err)
            else:
                result.set_result(task.result())
            settled.set()

        def start() -> None:
            task = loop.create_task(coro)
            task.add_done_callback(done)
            tasks.append(task)

        def cancel() -> None:
            for task in tasks:
                task.cancel()

        loop.call_soon_threadsafe(start)
        try:
            while True:  # short waits: the interrupt is seen however it is delivered
                try:
                    return result.result(timeout=0.1)
                except concurrent.futures.TimeoutError:
                    if result.done():  # the coroutine's own TimeoutError
                        raise
        except KeyboardInterrupt:
            loop.call_soon_threadsafe(cancel)  # runs after start(): callbacks are FIFO
            settled.wait(5)
            raise

    def backend(self, name: str, namespace: str | None = None) -> Backend:
        """The backend called ``name`` (created on the loop once, then reused)."""
        key = (name, namespace)
        backend = self._backends.get(key)
        if backend is None:
            options = argparse.Namespace(backend=name, namespace=namespace)
            backend = self.run(_create(Invocation("", options)))
            self._backends[key] = backend
        return backend

    def stream(
        self, open_logs: Callable[[], AsyncIterator[LogChunk]], *, name: str = "ptjob-logs"
    ) -> Generator[LogChunk, None, None]:
        """The chunks of ``open_logs()`` (called on the loop), as they arrive.

        Close the iterator (or leave it by an exception, a ``KeyboardInterrupt``
        included) and the pump task is cancelled and the generator closed before
        ``close()`` returns.
        """
        chunks: queue.Queue[object] = queue.Queue(maxsize=QUEUE_CHUNKS)
        task = self.run(_start(_pump(open_logs, chunks), name))
        try:
            while True:
                try:
                    item = chunks.get(timeout=0.1)
                except queue.Empty:
                    continue
                if item is _DONE:
                    return
                if isinstance(item, BaseException):
                    raise item
                assert isinstance(item, LogChunk)
                yield item
        finally:
            self.loop.call_soon_threadsafe(task.cancel)
            self.run(_settle(task))

    def tasks(self) -> list[str]:
        """Names of the tasks pending on the loop (diagnostics and tests)."""
        if self._loop is None or self._loop.is_closed():
            return []
        return self.run(_pending())

    def close(self) -> None:
        """Close the backends and stop the loop."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or loop.is_closed():
            return
        backends = list(self._backends.values())
        self._backends.clear()
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(_close_all(backends), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=10)
        if not loop.is_running():
            loop.close()


async def _create(invocation: Invocation) -> Backend:
    return backend_for(invocation)


async def _start(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
    return asyncio.get_running_loop().create_task(coro, name=name)


async def _settle(task: asyncio.Task[None]) -> None:
    await asyncio.wait({task})


async def _pending() -> list[str]:
    me = asyncio.current_task()
    return sorted(t.get_name() for t in asyncio.all_tasks() if t is not me)


async def _close_all(backends: list[Backend]) -> None:
    for backend in backends:
        with contextlib.suppress(Exception):
            await backend.close()


async def _put(chunks: queue.Queue[object], item: object) -> None:
    """Queue ``item`` without blocking the loop; wait while the reader is behind."""
    while True:
        try:
            chunks.put_nowait(item)
            return
        except queue.Full:
            await asyncio.sleep(0.02)


async def _pump(
    open_logs: Callable[[], AsyncIterator[LogChunk]], chunks: queue.Queue[object]
) -> None:
    logs = open_logs()
    try:
        async for chunk in logs:
            await _put(chunks, chunk)
        await _put(chunks, _DONE)
    except asyncio.CancelledError:
        raise
    except Exception as err:  # handed to the reader, which raises it
        await _put(chunks, err)
    finally:
        aclose = getattr(logs, "aclose", None)
        if aclose is not None:
            await aclose()


_DEFAULT_RUNNER: Runner | None = None


def default_runner() -> Runner:
    """The runner of handles made outside a magic (``JobHandle("name")``)."""
    global _DEFAULT_RUNNER
    if _DEFAULT_RUNNER is None:
        _DEFAULT_RUNNER = Runner()
    return _DEFAULT_RUNNER


# -- rich results --------------------------------------------------------------------

_STATE_COLOR = {
    "Succeeded": "var(--jp-success-color1, #388e3c)",
    "Failed": "var(--jp-error-color1, #d32f2f)",
    "Restarting": "var(--jp-warn-color1, #f57c00)",
    "Running": "var(--jp-brand-color1, #1976d2)",
}


def _state_html(state: str) -> str:
    color = _STATE_COLOR.get(state, "inherit")
    return f'<span style="color: {color}; font-weight: bold">{html.escape(state)}</span>'


def _html_table(rows: list[list[str]], *, raw_columns: tuple[int, ...] = ()) -> str:
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in rows[0])
    body = "".join(
        "<tr>"
        + "".join(
            f"<td>{cell if i in raw_columns else html.escape(cell)}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows[1:]
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class JobTable:
    """``%ptjob list``: the jobs, as a table (HTML in a notebook, text elsewhere)."""

    def __init__(self, jobs: list[JobInfo]) -> None:
        self.jobs = jobs

    def __iter__(self) -> Iterator[JobInfo]:
        return iter(self.jobs)

    def __len__(self) -> int:
        return len(self.jobs)

    def __repr__(self) -> str:
        return format_jobs(self.jobs)

    def _repr_html_(self) -> str:
        if not self.jobs:
            return "<p>no jobs</p>"
        now = time.time()
        rows = [["NAME", "STATE", "NODES", "GPUS", "AGE", "DURATION"]]
        for job in self.jobs:
            rows.append(
                [
                    html.escape(job.name),
                    _state_html(job.state.value),
                    str(job.nodes),
                    str(job.gpus * job.nodes),
                    human_duration(now - job.created),
                    human_duration(job.duration),
                ]
            )
        return _html_table(rows, raw_columns=(0, 1))


class JobStatus:
    """``%ptjob status``: one job's state, conditions and replicas."""

    def __init__(self, info: JobInfo) -> None:
        self.info = info

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def state(self) -> str:
        """``Created``, ``Running``, ``Restarting``, ``Succeeded``, ``Failed`` or ``Suspended``."""
        return self.info.state.value

    def __repr__(self) -> str:
        return format_status(self.info)

    def _repr_html_(self) -> str:
        job = self.info
        parts = [
            f"<p><b>{html.escape(job.name)}</b> {_state_html(job.state.value)} &middot; "
            f"{job.nodes} node(s) ({html.escape(job.topology)}) &middot; "
            f"duration {human_duration(job.duration)}"
            + (f" &middot; logdir <code>{html.escape(job.logdir)}</code>" if job.logdir else "")
            + "</p>"
        ]
        if job.message:
            parts.append(f"<p><i>{html.escape(job.message)}</i></p>")
        rows = [["REPLICA", "PHASE", "RESTARTS", "EXIT", "REASON"]]
        for r in job.replicas:
            reason = " ".join(x for x in (r.reason, r.message) if x)
            exit_code = "-" if r.exit_code is None else str(r.exit_code)
            rows.append([r.name, r.phase, str(r.restarts), exit_code, reason])
        parts.append(_html_table(rows))
        if job.conditions:
            rows = [["CONDITION", "STATUS", "REASON", "MESSAGE"]]
            rows += [[c.type, c.status, c.reason, c.message] for c in job.conditions]
            parts.append(_html_table(rows))
        return "".join(parts)


class _Progress:
    """One line of ``%ptjob wait``, updated in place in a notebook."""

    def __init__(self, job: JobInfo, note: str = "") -> None:
        self.job = job
        self.note = note

    def text(self) -> str:
        job = self.job
        replicas = ", ".join(
            f"{r.name} {r.phase}" + (f" ({r.reason})" if r.reason else "") for r in job.replicas
        )
        line = f"{job.name}: {job.state.value}"
        if replicas:
            line += f" [{replicas}]"
        line += f" {human_duration(job.duration)}"
        return f"{line} {self.note}".rstrip()

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        rest = self.text().removeprefix(f"{self.job.name}: {self.job.state.value}")
        return (
            f"<code>{html.escape(self.job.name)}</code>: {_state_html(self.job.state.value)}"
            f"{html.escape(rest)}"
        )


class JobHandle:
    """A submitted job, for use from Python: ``job.status()``, ``job.logs()``,
    ``job.wait()``, ``job.delete()``.

    Holds only the job's name and where it runs (backend and namespace); every call
    asks the backend afresh.
    """

    def __init__(
        self,
        name: str,
        *,
        backend: str = "local",
        namespace: str | None = None,
        runner: Runner | None = None,
    ) -> None:
        self.name = name
        self.backend = backend
        self.namespace = namespace
        self._runner = runner

    @property
    def runner(self) -> Runner:
        return self._runner or default_runner()

    def _backend(self) -> Backend:
        return self.runner.backend(self.backend, self.namespace)

    def status(self) -> JobStatus:
        """The job's state and replicas now (``.state`` is the state as a string)."""
        return JobStatus(self.runner.run(self._backend().get_job(self.name)))

    def logs(
        self, *, replica: str | None = None, tail: int | None = None, previous: bool = False
    ) -> str:
        """The logs so far, every replica merged with ``master-0 | `` prefixes (or one)."""
        backend = self._backend()
        chunks = self.runner.stream(
            lambda: backend.logs(self.name, replica=replica, tail=tail, previous=previous)
        )
        with contextlib.closing(chunks):
            return "".join(chunk.display(prefix=replica is None) for chunk in chunks)

    def wait(self, timeout: float | None = None) -> str:
        """Wait until the job is Succeeded or Failed and return that state.

        ``TimeoutError`` when it is still going after ``timeout`` seconds; a failed
        job is not an exception (look at ``logs()``).
        """
        job = self.runner.run(self._backend().wait(self.name, timeout=timeout))
        return job.state.value

    def delete(self) -> None:
        """Stop every replica and remove the job."""
        self.runner.run(self._backend().delete_job(self.name))

    def __repr__(self) -> str:
        where = f"backend={self.backend!r}"
        if self.namespace:
            where += f", namespace={self.namespace!r}"
        return f"JobHandle({self.name!r}, {where})"

    def _repr_html_(self) -> str:
        name = html.escape(self.name)
        where = html.escape(self.backend) + (
            f", namespace {html.escape(self.namespace)}" if self.namespace else ""
        )
        return (
            f"<p>PyTorchJob <b>{name}</b> ({where} backend). Follow it with "
            f"<code>%ptjob logs {name} -f</code>, <code>%ptjob wait {name}</code>, or in "
            "the <i>PyTorch Jobs</i> panel.</p>"
        )


# -- the magic -----------------------------------------------------------------------


@magics_class
class PtjobMagics(Magics):
    """The ``%ptjob`` magic; one ``Runner`` (background loop) per instance."""

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.runner = Runner()

    @line_cell_magic
    def ptjob(self, line: str, cell: str | None = None) -> Any:
        # The docstring is set below from the shared parser's help.
        try:
            invocation = parse(shlex.split(line), prog="%ptjob", script_text=cell)
        except arguments.UsageError as err:
            raise IPythonUsageError(str(err)) from None
        except ValueError as err:  # shlex: unbalanced quotes
            raise IPythonUsageError(f"%ptjob: error: {err}") from None
        except SystemExit:  # -h / --help printed the help
            return None
        command = invocation.command
        if cell is not None and command not in arguments.JOB_COMMANDS:
            raise IPythonUsageError(
                f"%%ptjob {command}: error: only %%ptjob submit and %%ptjob render take a "
                f"cell (the training script); use %ptjob {command} on one line"
            )
        with self._errors(f"%ptjob {command}", cell=cell is not None):
            return getattr(self, f"_do_{command}")(invocation)

    @contextlib.contextmanager
    def _errors(self, prog: str, *, cell: bool = False) -> Iterator[None]:
        """Errors a person can act on, as one ``UsageError`` line each (no traceback)."""
        try:
            yield
        except JobSpecInvalid as err:
            lines = describe(err).splitlines()
            if cell:
                lines = [
                    "the cell" + line.removeprefix("--script")
                    if line.startswith("--script")
                    else line
                    for line in lines
                ]
            raise IPythonUsageError("\n".join(f"{prog}: error: {x}" for x in lines)) from None
        except arguments.UsageError as err:
            raise IPythonUsageError(str(err)) from None
        except BackendError as err:
            raise IPythonUsageError(f"{prog}: error: {err.message}") from None

    # -- helpers -------------------------------------------------------------------

    @property
    def in_kernel(self) -> bool:
        """Whether a Jupyter frontend shows the output (display updates and HTML)."""
        return getattr(self.shell, "kernel", None) is not None

    def _where(self, options: argparse.Namespace) -> tuple[str, str | None]:
        return options.backend or os.environ.get(BACKEND_ENV) or "local", options.namespace

    def _backend(self, options: argparse.Namespace) -> Backend:
        return self.runner.backend(*self._where(options))

    # -- subcommands ---------------------------------------------------------------

    def _do_render(self, invocation: Invocation) -> None:
        spec = JobSpec.from_wire(invocation.job)
        sys.stdout.write(
            manifest_to_yaml(DEFAULT_KIND.build(spec, namespace=invocation.options.namespace))
        )

    def _do_submit(self, invocation: Invocation) -> JobHandle:
        """Ship the cell (or the command after ``--``) as a job and return its handle."""
        spec = JobSpec.from_wire(invocation.job)
        backend_name, namespace = self._where(invocation.options)
        backend = self._backend(invocation.options)
        job = self.runner.run(backend.submit(spec))
        print(
            f"Submitted {job.name}: {job.nodes} node(s) ({job.topology}) "
            f"on the {backend_name} backend."
        )
        print(
            f"Follow it with %ptjob logs {job.name} -f, %ptjob wait {job.name}, "
            "or in the PyTorch Jobs panel."
        )
        for warning in job.warnings:
            print(f"Warning: {warning}", file=sys.stderr)
        return JobHandle(job.name, backend=backend_name, namespace=namespace, runner=self.runner)

    def _do_list(self, invocation: Invocation) -> JobTable:
        return JobTable(self.runner.run(self._backend(invocation.options).list_jobs()))

    def _do_status(self, invocation: Invocation) -> JobStatus:
        backend = self._backend(invocation.options)
        return JobStatus(self.runner.run(backend.get_job(invocation.options.job)))

    def _do_delete(self, invocation: Invocation) -> None:
        name = invocation.options.job
        self.runner.run(self._backend(invocation.options).delete_job(name))
        print(f"deleted {name}")

    def _do_suspend(self, invocation: Invocation) -> None:
        name = invocation.options.job
        self.runner.run(self._backend(invocation.options).suspend(name))
        print(f"suspended {name}")

    def _do_resume(self, invocation: Invocation) -> None:
        name = invocation.options.job
        self.runner.run(self._backend(invocation.options).resume(name))
        print(f"resumed {name}")

    def _do_logs(self, invocation: Invocation) -> None:
        """Stream the logs into the output; an interrupt stops following, quietly."""
        options = invocation.options
        backend = self._backend(options)
        prefix = options.replica is None
        chunks = self.runner.stream(
            lambda: backend.logs(
                options.job,
                replica=options.replica,
                follow=options.follow,
                tail=options.tail,
                previous=options.previous,
            ),
            name=f"ptjob-logs:{options.job}",
        )
        try:
            with contextlib.closing(chunks):
                for chunk in chunks:
                    out = sys.stderr if chunk.notice else sys.stdout
                    out.write(chunk.display(prefix=prefix))
                    out.flush()
        except KeyboardInterrupt:
            sys.stdout.flush()
            print(f"(stopped following {options.job}; the job goes on)")

    def _do_wait(self, invocation: Invocation) -> str:
        """Show the state as it changes; return the final state (also on Failed)."""
        options = invocation.options
        name = options.job
        backend = self._backend(options)
        deadline = None if options.timeout is None else time.monotonic() + options.timeout
        handle = None
        seen: object = None
        job = self.runner.run(backend.get_job(name))
        try:
            while True:
                key = (job.state, [(r.name, r.phase, r.restarts, r.reason) for r in job.replicas])
                done = job.state.finished
                timed_out = not done and deadline is not None and time.monotonic() >= deadline
                note = ""
                if done and job.state.value == "Failed":
                    note = f"- see %ptjob logs {name} and %ptjob status {name}"
                elif timed_out:
                    note = f"- still going after {options.timeout:g} s; stopped waiting"
                if key != seen or done or timed_out:
                    seen = key
                    progress = _Progress(job, note)
                    if not self.in_kernel:
                        print(progress.text())
                    elif handle is None:
                        handle = display(progress, display_id=True)
                    else:
                        handle.update(progress)
                if done or timed_out:
                    return job.state.value
                time.sleep(WAIT_INTERVAL)
                job = self.runner.run(backend.get_job(name))
        except KeyboardInterrupt:
            print(f"(stopped waiting for {name}; the job goes on: {job.state.value})")
            return job.state.value

    def _do_tensorboard(self, invocation: Invocation) -> None:
        """TensorBoard inline, through the Jupyter server that runs this kernel."""
        name = invocation.options.job
        backend = self._backend(invocation.options)
        self.runner.run(backend.get_job(name))  # JobNotFound before anything else
        server = running_server()
        if server is None:
            print(
                f"No Jupyter server runs this kernel, so TensorBoard cannot be shown here. "
                f"Open it from a terminal with:\n    ptjob tensorboard {name}\n"
                "or in JupyterLab: PyTorch Jobs panel -> the job -> Open TensorBoard."
            )
            return
        try:
            tb = self.runner.run(server_tensorboard(server, name, backend))
        except ServerError as err:
            print(
                f"The Jupyter server could not open TensorBoard for {name}: {err}\n"
                f"Try the PyTorch Jobs panel, or `ptjob tensorboard {name}` in a terminal.",
                file=sys.stderr,
            )
            return
        path = str(tb["url"]).lstrip("/")
        if not path.endswith("/"):
            path += "/"  # TensorBoard resolves data/... against it
        base = str(server.get("base_url") or "/")
        src = base.rstrip("/") + "/" + path
        full = str(server["url"]).rstrip("/") + "/" + path
        iframe = (
            f'<iframe src="{html.escape(src)}" width="100%" height="800" frameborder="0" '
            "allowfullscreen></iframe>"
        )
        display(
            {
                "text/plain": f"TensorBoard for {name}: {full}",
                "text/html": f"<p>TensorBoard for <b>{html.escape(name)}</b> "
                f'(<a href="{html.escape(src)}" target="_blank">open in a new tab</a>; '
                f"logdir <code>{html.escape(str(tb.get('logdir', '')))}</code>)</p>{iframe}",
            },
            raw=True,
        )


PtjobMagics.ptjob.__doc__ = (
    "Submit and watch Kubeflow PyTorchJobs (or local process jobs) from IPython.\n\n"
    "The same subcommands and flags as the ``ptjob`` command line:\n\n"
    "    %%ptjob submit [JOB FLAGS]            the cell is the training script\n"
    "    %ptjob submit [JOB FLAGS] -- COMMAND ... a script on the PVC\n"
    "    %ptjob logs NAME [-f] [--replica R] [--tail N] [--previous]\n"
    "    %ptjob wait NAME [--timeout S]        %ptjob list | status NAME | delete NAME\n"
    "    %ptjob suspend NAME | resume NAME     stop the replicas, keep the job; start again\n"
    "    %ptjob tensorboard NAME               TensorBoard inline, via the Jupyter server\n\n"
    "``%%ptjob submit`` ships the cell inside the job itself (an environment variable\n"
    "of every replica), so the job never depends on the notebook's files. A script\n"
    f"may be at most {SCRIPT_MAX_BYTES // 1024} KiB ({SCRIPT_MAX_BYTES} bytes: one environment\n"
    "string must stay under Linux's 128 KiB limit). A larger cell is refused before\n"
    "anything is created, with a message saying to put the code on a PVC and run it\n"
    "with ``%ptjob submit [JOB FLAGS] --pvc CLAIM:MOUNT -- python MOUNT/train.py``.\n\n"
    "``submit`` returns a JobHandle (``job = _``): ``job.status()``, ``job.logs()``,\n"
    "``job.wait(timeout=None)``, ``job.delete()``. ``%ptjob logs NAME -f`` follows the\n"
    "logs until the job ends; interrupt the kernel to stop following (the job goes on).\n"
    "The backend is ``--backend``, else $PTJOB_BACKEND, else local ($PTJOB_HOME).\n\n"
    + build_parser("%ptjob").format_help()
    + "\n``%ptjob SUBCOMMAND -h`` shows the flags of one subcommand (the job flags: submit -h).\n"
)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_pytorchjob``."""
    ipython.register_magics(PtjobMagics)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext jupyter_pytorchjob``: stop the background loop."""
    magics = ipython.magics_manager.registry.get("PtjobMagics")
    if isinstance(magics, PtjobMagics):
        magics.runner.close()
