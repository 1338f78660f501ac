"""``PtjobMagics``: the ``%ptjob`` / ``%%ptjob`` magic.

It parses its line with the very parser of the ``ptjob`` CLI (``arguments.parse``)
and talks to the same backends (``frontends.backend_choice``: ``--backend``, else
``$PTJOB_BACKEND``, else local, whose jobs live under ``$PTJOB_HOME``), so the magic,
the CLI and the JupyterLab panel see the same jobs and give the same messages.
It is built on the Python API (``sdk``): submission, the job handle and what it
returns, log following, TensorBoard; backend calls run on the instance's ``Runner``
(``sdk.runner``), never on the kernel's own loop.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
import time
from collections.abc import Iterator
from typing import Any

from IPython.core.error import UsageError as IPythonUsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from .. import arguments
from ..arguments import Invocation, build_parser, describe, parse
from ..backends import Backend, BackendError
from ..frontends.ansi import colour_wanted
from ..frontends.backend_choice import backend_name
from ..frontends.logs import requested_logs
from ..job.errors import JobSpecInvalid
from ..job.manifest_yaml import manifest_to_yaml
from ..job.spec import SCRIPT_MAX_BYTES, JobSpec
from ..kinds import kind_for
from ..sdk import JobHandle, JobStatus, JobTable, Runner, RuntimeTable, RunView
from ..sdk.handle import display, follow_chunks
from ..sdk.submission import print_warnings, submit_spec
from .results import Progress

#: Seconds between two looks at a job in ``%ptjob wait``.
WAIT_INTERVAL = 0.5


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

    def _where(self, options: Any) -> tuple[str, str | None]:
        return backend_name(options.backend), options.namespace

    def _backend(self, options: Any) -> Backend:
        return self.runner.backend(*self._where(options))

    def _handle(self, options: Any) -> JobHandle:
        """The handle of the job the options name (``sdk.JobHandle``)."""
        where, namespace = self._where(options)
        return JobHandle(options.job, backend=where, namespace=namespace, runner=self.runner)

    # -- subcommands ---------------------------------------------------------------

    def _do_render(self, invocation: Invocation) -> None:
        spec = JobSpec.from_wire(invocation.job)
        sys.stdout.write(
            manifest_to_yaml(kind_for(spec).build(spec, namespace=invocation.options.namespace))
        )
        for warning in spec.warnings:
            print(f"Warning: {warning}", file=sys.stderr)

    def _do_submit(self, invocation: Invocation) -> JobHandle:
        """Ship the cell (or the command after ``--``) as a job and return its handle."""
        spec = JobSpec.from_wire(invocation.job)
        where, namespace = self._where(invocation.options)
        job, handle = submit_spec(spec, backend=where, namespace=namespace, runner=self.runner)
        print(f"Submitted {job.name}: {job.nodes} node(s) ({job.topology}) on the {where} backend.")
        # The next steps are the handle's display (the cell's result): said once.
        print_warnings(job)
        return handle

    def _do_list(self, invocation: Invocation) -> JobTable:
        where, namespace = self._where(invocation.options)
        return JobHandle.list(backend=where, namespace=namespace, runner=self.runner)

    def _do_runtimes(self, invocation: Invocation) -> RuntimeTable:
        return RuntimeTable(self.runner.run(self._backend(invocation.options).runtimes()))

    def _do_status(self, invocation: Invocation) -> JobStatus:
        return self._handle(invocation.options).status()

    def _do_delete(self, invocation: Invocation) -> None:
        self._handle(invocation.options).delete()
        print(f"deleted {invocation.options.job}")

    def _do_suspend(self, invocation: Invocation) -> None:
        self._handle(invocation.options).suspend()
        print(f"suspended {invocation.options.job}")

    def _do_resume(self, invocation: Invocation) -> None:
        self._handle(invocation.options).resume()
        print(f"resumed {invocation.options.job}")

    def _do_logs(self, invocation: Invocation) -> None:
        """Stream the logs into the output; an interrupt stops following, quietly."""
        options = invocation.options
        backend = self._backend(options)
        prefix = options.replica is None
        chunks = self.runner.stream(
            lambda: requested_logs(backend, options), name=f"ptjob-logs:{options.job}"
        )
        # In a notebook the output area redraws a line on "\r", as a terminal does.
        overwrite = True if self.in_kernel else None
        follow_chunks(
            chunks,
            options.job,
            prefix=prefix,
            raw=options.raw,
            overwrite=overwrite,
            colour=colour_wanted(options.no_color),
        )

    def _do_wait(self, invocation: Invocation) -> str:
        """Show the job as it goes: in a notebook one display updated at every look
        (bar, percent, ETA, key metric, time so far); elsewhere a plain line whenever
        the state, a replica or the next ``PLAIN_STEP`` percent changes. Returns the
        final state (also on Failed)."""
        options = invocation.options
        name = options.job
        backend = self._backend(options)
        deadline = None if options.timeout is None else time.monotonic() + options.timeout
        handle = None
        shown: object = None
        job = self.runner.run(backend.get_job(name))
        try:
            while True:
                done = job.state.finished
                timed_out = not done and deadline is not None and time.monotonic() >= deadline
                note = ""
                if done and job.state.value == "Failed":
                    note = f"- see %ptjob logs {name} and %ptjob status {name}"
                elif timed_out:
                    note = f"- still going after {options.timeout:g} s; stopped waiting"
                progress = Progress(job, note)
                if not self.in_kernel:
                    if progress.line.key() != shown:
                        shown = progress.line.key()
                        print(repr(progress))
                else:
                    if handle is None:
                        handle = display(progress, display_id=True)
                    elif repr(progress) != shown:
                        handle.update(progress)
                    shown = repr(progress)
                if done or timed_out:
                    return job.state.value
                time.sleep(WAIT_INTERVAL)
                job = self.runner.run(backend.get_job(name))
        except KeyboardInterrupt:
            print(f"(stopped waiting for {name}; the job goes on: {job.state.value})")
            return job.state.value

    def _do_run(self, invocation: Invocation) -> RunView:
        return self._handle(invocation.options).run()

    def _do_clone(self, invocation: Invocation) -> JobHandle:
        options = invocation.options
        clone = self._handle(options).clone(
            name=options.new_name, from_checkpoint=options.from_checkpoint
        )
        print(f"Submitted {clone.name}, a copy of {options.job}.")
        return clone

    def _do_tensorboard(self, invocation: Invocation) -> None:
        """TensorBoard inline, through the Jupyter server that runs this kernel."""
        self._handle(invocation.options).tensorboard()


PtjobMagics.ptjob.__doc__ = (
    "Submit and watch Kubeflow PyTorchJobs and TrainJobs (or local process jobs) from IPython.\n\n"
    "The same subcommands and flags as the ``ptjob`` command line:\n\n"
    "    %%ptjob submit [JOB FLAGS]            the cell is the training script\n"
    "    %ptjob submit [JOB FLAGS] -- COMMAND ... a script on the PVC\n"
    "    %ptjob logs NAME [-f] [--replica R] [--tail N] [--previous]\n"
    "    %ptjob wait NAME [--timeout S]        %ptjob list | status NAME | delete NAME\n"
    "    %ptjob suspend NAME | resume NAME     stop the replicas, keep the job; start again\n"
    "    %ptjob runtimes                       Kubeflow Trainer runtimes (--kind trainjob)\n"
    "    %ptjob tensorboard NAME               TensorBoard inline, via the Jupyter server\n"
    "    %ptjob run NAME                       hyperparameters, metrics, checkpoints, artifacts\n"
    "    %ptjob clone NAME [--from-checkpoint PATH]  a copy ($PTJOB_RESUME_FROM=PATH)\n\n"
    "``%%ptjob submit`` ships the cell inside the job itself (an environment variable\n"
    "of every replica), so the job never depends on the notebook's files. A script\n"
    f"may be at most {SCRIPT_MAX_BYTES // 1024} KiB ({SCRIPT_MAX_BYTES} bytes: one environment\n"
    "string must stay under Linux's 128 KiB limit). A larger cell is refused before\n"
    "anything is created, with a message saying to put the code on a PVC and run it\n"
    "with ``%ptjob submit [JOB FLAGS] --pvc CLAIM:MOUNT -- python MOUNT/train.py``.\n\n"
    "``submit`` returns a JobHandle (``job = _``): ``job.status()``, ``job.logs()``,\n"
    "``job.wait(timeout=None)``, ``job.result()``, ``job.delete()`` - the handle\n"
    "``jupyter_pytorchjob.submit(function, ...)`` returns. ``%ptjob logs NAME -f`` follows the\n"
    "logs until the job ends; interrupt the kernel to stop following (the job goes on).\n"
    "The backend is ``--backend``, else $PTJOB_BACKEND, else local ($PTJOB_HOME).\n\n"
    + build_parser("%ptjob").format_help()
    + "\n``%ptjob SUBCOMMAND -h`` shows the flags of one subcommand (the job flags: submit -h).\n"
)
