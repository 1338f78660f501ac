"""``JobHandle`` (``jupyter_pytorchjob.Job``): a submitted job for use from Python, and
what its calls return - ``JobTable``, ``JobStatus``, ``RuntimeTable``, ``RunView`` (HTML
in a notebook, text elsewhere) and ``JobFailed``. Plain Python: IPython is imported only
when it already runs this process (to show TensorBoard inline)."""

from __future__ import annotations

import contextlib
import functools
import html
import sys
from collections.abc import Generator, Iterator
from typing import Any

from ..backends import Backend, BackendError, JobInfo, JobState, LogChunk
from ..frontends.backend_choice import backend_name
from ..frontends.formatting import (
    LogWriter,
    format_jobs,
    format_run,
    format_runtimes,
    format_status,
    jobs_html,
    run_html,
    runtimes_html,
    status_html,
)
from ..frontends.logs import job_logs
from ..frontends.server import ServerError, running_server, server_tensorboard
from ..function import (
    ResultError,
    ResultLines,
    read_result_file,
    result_key_of,
    signed_as_of,
)
from ..job.errors import JobSpecInvalid
from ..job.progress import chief_replica
from ..kinds import kind_of
from ..kinds.trainjob.runtimes import Runtime
from .runner import Runner, default_runner

#: The lines of each failed replica's log that ``JobFailed`` carries.
FAILED_TAIL_LINES = 20
#: The failed replicas whose lines ``JobFailed`` carries, at most.
FAILED_REPLICAS_SHOWN = 4
#: The last lines of rank 0's log searched for its result first (the whole log after).
RESULT_TAIL_LINES = 4000


def _ipython() -> Any:
    """The IPython shell that runs this process, or None (a plain Python script, or
    IPython not even installed: never imported here)."""
    module = sys.modules.get("IPython")
    return module.get_ipython() if module is not None else None


def display(obj: Any, **kwargs: Any) -> Any:
    """``IPython.display.display`` (untyped upstream), only where IPython runs."""
    from IPython.display import display as ipython_display

    return ipython_display(obj, **kwargs)  # type: ignore[no-untyped-call]


class JobFailed(Exception):
    """``JobHandle.wait()``: the job ended Failed. ``info`` is the job, ``failure`` its
    failure summary (``JobFailure``: the replica that failed first, its exit code or
    signal, the reason, the message, the hint, the last lines - None where the backend
    has none), and ``lines`` maps failed replicas to their last lines."""

    def _render_traceback_(self) -> list[str]:
        """IPython shows the failure (it names the replica, the exit, the hint), not a
        traceback into ``wait()``."""
        return [f"{type(self).__name__}: {self}"]

    def __init__(self, info: JobInfo, lines: dict[str, str]) -> None:
        self.info = info
        self.lines = lines
        self.failure = info.failure
        head = f"job {info.name} Failed"
        if self.failure is not None:
            head += f": {self.failure.headline}"
            if self.failure.hint:
                head += f"\n{self.failure.hint}"
        elif info.message:
            head += f": {info.message}"
        for replica, text in lines.items():
            head += f"\n--- the last lines of {replica}:\n{text.rstrip() or '(no output)'}"
        super().__init__(head)

    @property
    def replica(self) -> str | None:
        """The first failed replica (None when no replica is known to have failed)."""
        if self.failure is not None and self.failure.replica:
            return self.failure.replica
        return next(iter(self.lines), None)


def follow_chunks(
    chunks: Generator[LogChunk, None, None],
    job: str,
    *,
    prefix: bool,
    raw: bool = False,
    overwrite: bool | None = None,
    colour: bool = True,
) -> None:
    """Print each log chunk as it comes (``%ptjob logs``, ``Job.logs(follow=True)``), as a
    terminal shows it (``LogWriter``; ``overwrite``: a notebook's output redraws on
    ``\\r`` too; it shows the colours, unless not ``colour``); Ctrl-C stops following,
    never the job."""
    writer = LogWriter(prefix=prefix, raw=raw, overwrite=overwrite, colour=colour)
    try:
        with contextlib.closing(chunks):
            for chunk in chunks:
                writer.write(chunk)
        writer.close()
    except KeyboardInterrupt:
        writer.close()
        print(f"(stopped following {job}; the job goes on)")


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
        return jobs_html(self.jobs)


class RuntimeTable:
    """``%ptjob runtimes``: the Kubeflow Trainer runtimes, as a table."""

    def __init__(self, runtimes: list[Runtime]) -> None:
        self.runtimes = runtimes

    def __iter__(self) -> Iterator[Runtime]:
        return iter(self.runtimes)

    def __len__(self) -> int:
        return len(self.runtimes)

    def __repr__(self) -> str:
        return format_runtimes(self.runtimes)

    def _repr_html_(self) -> str:
        return runtimes_html(self.runtimes)


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
        return status_html(self.info)


class RunView(dict):  # type: ignore[type-arg]
    """``job.run()`` / ``%ptjob run``: the run record (``GET jobs/{name}/run``) as a dict
    - ``hparams``, ``metrics`` (``final``, ``history``), ``checkpoints``, ``artifacts``,
    ``modes`` - shown as tables."""

    def __init__(self, name: str, run: dict[str, Any]) -> None:
        super().__init__(run)
        self.name = name

    def __repr__(self) -> str:
        return format_run(self.name, self)

    def _repr_html_(self) -> str:
        return run_html(self.name, self)


class JobHandle:
    """A submitted job, for use from Python (``jupyter_pytorchjob.Job`` is this class):
    ``status()``, ``logs()``, ``wait()``, ``result()``, ``run()``, ``clone()``,
    ``tensorboard()``, ``suspend()``, ``resume()``, ``delete()``; ``JobHandle.list()``
    lists the jobs.

    Holds only the job's name and where it runs (backend - default ``$PTJOB_BACKEND``,
    else local - and namespace); every call asks the backend afresh, on a private event
    loop, so it works in a plain Python script and in a notebook cell alike.
    """

    def __init__(
        self,
        name: str,
        *,
        backend: str | None = None,
        namespace: str | None = None,
        runner: Runner | None = None,
    ) -> None:
        self.name = name
        self.backend = backend_name(backend)
        self.namespace = namespace
        self._runner = runner
        # The key rank 0 signs its result with: set by ``submit``; a handle made later
        # by name reads it from the job's script.
        self.result_key: bytes | None = None
        # Whether the next steps were printed already (``submit``): the rich display
        # then does not say them again.
        self.guided = False

    @classmethod
    def list(
        cls,
        *,
        backend: str | None = None,
        namespace: str | None = None,
        runner: Runner | None = None,
    ) -> JobTable:
        """Every job of the backend (a table in a notebook, text elsewhere)."""
        runner = runner or default_runner()
        return JobTable(runner.run(runner.backend(backend_name(backend), namespace).list_jobs()))

    @property
    def runner(self) -> Runner:
        return self._runner or default_runner()

    def _backend(self) -> Backend:
        return self.runner.backend(self.backend, self.namespace)

    def info(self) -> JobInfo:
        """The job as the backend reports it now."""
        return self.runner.run(self._backend().get_job(self.name))

    def status(self) -> JobStatus:
        """The job's state and replicas now (``.state`` is the state as a string)."""
        return JobStatus(self.info())

    def logs(
        self,
        *,
        follow: bool = False,
        replica: str | None = None,
        tail: int | None = None,
        previous: bool = False,
    ) -> str | None:
        """The logs so far, every replica merged with ``master-0 | `` prefixes (or one).

        ``follow=True`` prints them as they come until the job ends (interrupt the
        kernel to stop following; the job goes on) and returns None.
        """
        backend = self._backend()
        chunks = self.runner.stream(
            lambda: job_logs(
                backend, self.name, replica=replica, follow=follow, tail=tail, previous=previous
            ),
            name=f"ptjob-logs:{self.name}",
        )
        prefix = replica is None
        if not follow:
            # As a terminal shows them: each progress bar's latest state.
            writer = LogWriter(prefix=prefix, overwrite=False)
            with contextlib.closing(chunks):
                text = [
                    chunk.display(prefix=True) if chunk.notice else writer.text(chunk)
                    for chunk in chunks
                ]
            return "".join(text) + writer.terminal.end()
        follow_chunks(chunks, self.name, prefix=prefix)
        return None

    def wait(self, timeout: float | None = None, *, check: bool = True) -> str:
        """Wait until the job is Succeeded or Failed and return that state.

        ``TimeoutError`` when it is still going after ``timeout`` seconds. A Failed job
        raises ``JobFailed`` carrying the failing replica's last lines (``check=False``:
        return ``"Failed"`` instead).
        """
        job = self.runner.run(self._backend().wait(self.name, timeout=timeout))
        if check and job.state is JobState.FAILED:
            raise self._failure(job)
        return job.state.value

    def run(self) -> RunView:
        """What the run was: the hyperparameters, checkpoints and artifacts its script
        reported (``report(hparams=, checkpoint=, artifact=)``) or Lightning/Hugging Face
        wrote in its log directory, each metric's final value and history (a dict)."""
        return RunView(self.name, self.runner.run(self._backend().run(self.name)))

    def clone(self, *, name: str | None = None, from_checkpoint: str | None = None) -> JobHandle:
        """Submit a copy of this job (``name``: default ``<name>-2``, ``-3``...), with
        ``$PTJOB_RESUME_FROM`` set to ``from_checkpoint`` (a function job's function gets
        it as ``resume_from=`` when it takes that parameter); the new job's handle."""
        job = self.runner.run(
            self._backend().clone(self.name, new_name=name, resume_from=from_checkpoint)
        )
        handle = JobHandle(
            job.name, backend=self.backend, namespace=self.namespace, runner=self._runner
        )
        handle.result_key = self.result_key
        return handle

    def error(self) -> JobFailed | None:
        """Why the job failed (``JobFailed``, not raised: its ``failure`` summary and the
        failing replica's last lines), or None while it has not failed."""
        job = self.info()
        return self._failure(job) if job.state is JobState.FAILED else None

    def _failure(self, job: JobInfo) -> JobFailed:
        summary = job.failure
        if summary is not None and summary.replica and summary.tail:
            # The backend kept the failing run's lines: they outlive its pods.
            return JobFailed(job, {summary.replica: "\n".join(summary.tail) + "\n"})
        failed = [r.name for r in job.replicas if r.phase == "Failed" or (r.exit_code or 0)]
        lines: dict[str, str] = {}
        for replica in failed[:FAILED_REPLICAS_SHOWN]:
            with contextlib.suppress(BackendError):  # a pod already gone has no log
                lines[replica] = self.logs(replica=replica, tail=FAILED_TAIL_LINES) or ""
        return JobFailed(job, lines)

    def result(self) -> Any:
        """What the submitted function returned on rank 0 (``jupyter_pytorchjob.submit``).

        It comes back signed with the job's key: from rank 0's own log (through the
        API server in a cluster, the log archive once the pods are gone, the job's log
        locally), or for a value over 4 MiB from the job's log directory on its PVC.
        Nothing is decoded before its signature checks out. ``ResultError`` says why
        not: the job is not Succeeded (yet), it is not a function job, nothing was
        sent, or what was found is not this job's.
        """
        job = self.info()
        if job.state is not JobState.SUCCEEDED:
            hint = (
                "wait() raises with the failing replica's lines"
                if (job.state is JobState.FAILED)
                else "call wait() first"
            )
            raise ResultError(f"job {self.name} is {job.state.value}, so it has no result: {hint}")
        script = self._script(job)
        key = self.result_key or self._key_from_script(script)
        # A clone (``clone()``) runs its original's script: signed with that one's name.
        signed_as = signed_as_of(script) or self.name
        found = self._result_lines(job, key, signed_as)
        if found.file is None:
            return found.value(self._log_name(job))
        try:
            logdir = self.runner.run(self._backend().job_logdir(self.name))
        except BackendError as err:
            raise ResultError(
                f"the result of {self.name} is too big for its log and was written to the "
                f"job's log directory on its PVC, which cannot be read here ({err.message}); "
                "in a cluster, run this notebook with the same PVC mounted"
            ) from None
        return read_result_file(logdir, signed_as, key)

    @staticmethod
    def _script(job: JobInfo) -> str | None:
        if job.manifest is not None:
            with contextlib.suppress(JobSpecInvalid):
                return kind_of(job.manifest).parse(job.manifest).script
        return None

    def _key_from_script(self, script: str | None) -> bytes:
        key = result_key_of(script)
        if key is None:
            raise ResultError(
                f"job {self.name} was not submitted with submit() (or by an older version "
                "that did not sign results), so it has no result to read back"
            )
        return key

    @staticmethod
    def _log_name(job: JobInfo) -> str:
        chief = chief_replica(r.name for r in job.replicas)
        return f"the log of {chief}" if chief else "the job's logs"

    def _result_lines(self, job: JobInfo, key: bytes, signed_as: str) -> ResultLines:
        """The result block(s) found in rank 0's log: its last lines first, then (not
        found there: other processes of that node wrote much after it) the whole log."""
        chief = chief_replica(r.name for r in job.replicas)
        backend = self._backend()
        for tail in (RESULT_TAIL_LINES, None):
            found = ResultLines(signed_as, key)
            chunks = self.runner.stream(
                functools.partial(backend.logs, self.name, replica=chief, tail=tail),
                name=f"ptjob-result:{self.name}",
            )
            try:
                with contextlib.closing(chunks):
                    for chunk in chunks:
                        if not chunk.notice:
                            found.feed(chunk.text.splitlines())
            except BackendError as err:
                raise ResultError(
                    f"the result of {self.name} travels in the log of rank 0, which cannot be "
                    f"read: {err.message}"
                ) from None
            if found.found:
                break
        return found

    def tensorboard(self) -> str | None:
        """TensorBoard on the job's log directory, through the Jupyter server of this
        kernel (shown inline in a notebook); returns its URL, or None (printing why
        and what to run instead) when no Jupyter server runs this process."""
        return show_tensorboard(self.name, self._backend(), self.runner)

    def suspend(self) -> str:
        """Stop every replica but keep the job (``runPolicy.suspend``); the new state."""
        return self.runner.run(self._backend().suspend(self.name)).state.value

    def resume(self) -> str:
        """Start a suspended job's replicas again, from scratch; the new state."""
        return self.runner.run(self._backend().resume(self.name)).state.value

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
        if self.guided:
            return f"<p>Job <b>{name}</b> ({where} backend).</p>"
        if self.result_key is not None:  # a function's job: its handle is the way in
            follow = (
                "<code>job.logs(follow=True)</code>, <code>job.wait()</code>, then "
                "<code>job.result()</code>"
            )
        else:
            follow = f"<code>%ptjob logs {name} -f</code>, <code>%ptjob wait {name}</code>"
        return (
            f"<p>Job <b>{name}</b> ({where} backend). Follow it with {follow}, or in "
            "the <i>PyTorch Jobs</i> panel.</p>"
        )


def show_tensorboard(name: str, backend: Backend, runner: Runner) -> str | None:
    """TensorBoard for job ``name`` through the Jupyter server that runs this process,
    shown inline (``%ptjob tensorboard``, ``JobHandle.tensorboard()``); its URL, or
    None after printing why not and what to do instead."""
    runner.run(backend.get_job(name))  # JobNotFound before anything else
    server = running_server()
    if server is None:
        print(
            f"No Jupyter server runs this kernel, so TensorBoard cannot be shown here. "
            f"Open it from a terminal with:\n    ptjob tensorboard {name}\n"
            "or in JupyterLab: PyTorch Jobs panel -> the job -> Open TensorBoard."
        )
        return None
    try:
        tb = runner.run(server_tensorboard(server, name, backend))
    except ServerError as err:
        print(
            f"The Jupyter server could not open TensorBoard for {name}: {err}\n"
            f"Try the PyTorch Jobs panel, or `ptjob tensorboard {name}` in a terminal.",
            file=sys.stderr,
        )
        return None
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
    if _ipython() is None:
        print(f"TensorBoard for {name}: {full}")
        return full
    display(
        {
            "text/plain": f"TensorBoard for {name}: {full}",
            "text/html": f"<p>TensorBoard for <b>{html.escape(name)}</b> "
            f'(<a href="{html.escape(src)}" target="_blank">open in a new tab</a>; '
            f"logdir <code>{html.escape(str(tb.get('logdir', '')))}</code>)</p>{iframe}",
        },
        raw=True,
    )
    return full
