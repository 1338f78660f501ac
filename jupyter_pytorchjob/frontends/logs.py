"""A job's logs as ``ptjob logs`` and ``%ptjob logs`` show them: as the backend gives
them, and for a failed job whose failing replica printed nothing in its current run (a
container restarted in place after the crash, or waiting in back-off) that replica's
previous run after them, the run its failure summary was read from, with one line
saying so. The log viewer opens that run itself (``failure.logSource``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ..backends import Backend, JobState, LogChunk

FAILING_RUN_NOTICE = (
    "its current run has no output; below is its previous run, the one that failed (--previous)"
)


def requested_logs(backend: Backend, options: Any) -> AsyncIterator[LogChunk]:
    """``job_logs`` as a ``logs`` command asked for them (``ptjob logs``, ``%ptjob logs``:
    the parsed options of the one parser, ``arguments.parse``)."""
    return job_logs(
        backend,
        options.job,
        replica=options.replica,
        follow=options.follow,
        tail=options.tail,
        previous=options.previous,
    )


async def job_logs(
    backend: Backend,
    name: str,
    *,
    replica: str | None = None,
    follow: bool = False,
    tail: int | None = None,
    previous: bool = False,
) -> AsyncIterator[LogChunk]:
    """``backend.logs`` with the failing run added where the current one is empty."""
    printed: set[str] = set()
    async for chunk in backend.logs(
        name, replica=replica, follow=follow, tail=tail, previous=previous
    ):
        if not chunk.notice and chunk.text:
            printed.update(chunk.resume_offsets())
        yield chunk
    if previous:
        return
    job = await backend.get_job(name)
    failure = job.failure
    if (
        job.state is not JobState.FAILED
        or failure is None
        or failure.log_source != "previous"
        or failure.replica in printed
        or (replica is not None and replica != failure.replica)
    ):
        return
    yield LogChunk(failure.replica, FAILING_RUN_NOTICE, 0, notice=True)
    async for chunk in backend.logs(name, replica=failure.replica, tail=tail, previous=True):
        yield chunk
