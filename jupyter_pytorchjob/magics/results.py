"""What ``%ptjob`` returns: rich results that show as HTML in a notebook and as text
elsewhere, and ``JobHandle``, a submitted job for use from Python."""

from __future__ import annotations

import contextlib
import html
from collections.abc import Iterator

from ..backends import Backend, JobInfo
from ..frontends.formatting import (
    format_jobs,
    format_runtimes,
    format_status,
    human_duration,
    jobs_html,
    runtimes_html,
    state_html,
    status_html,
)
from ..kinds.trainjob.runtimes import Runtime
from .runner import Runner, default_runner


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


class Progress:
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
            f"<code>{html.escape(self.job.name)}</code>: {state_html(self.job.state.value)}"
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
