"""The supervisor's side of a job's progress: its status endpoint (``reports``) and the
polls of its ``ProgressTracker`` (``progress``), in a thread, one at a time. Kept apart
from ``progress`` so that readers of progress (listing) load no server stack."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from typing import Any

from .progress import ProgressTracker
from .reports import ReportServer
from .store import JobDir


class ProgressLoop:
    """One job's progress while its supervisor runs; ``publish`` gets each changed
    progress (wire) on the event loop, ``job.json``'s one writer."""

    def __init__(
        self,
        jobdir: JobDir,
        tracker: ProgressTracker,
        publish: Callable[[dict[str, Any] | None], None],
    ) -> None:
        self.jobdir = jobdir
        self.tracker = tracker
        self.publish = publish
        self.reports: ReportServer | None = None
        self._poll: asyncio.Task[None] | None = None

    @property
    def env(self) -> dict[str, str]:
        """What every node's environment gets to report to the status endpoint."""
        return self.reports.env if self.reports is not None else {}

    def serve(self) -> None:
        """Start the job's status endpoint; without it (no port, no room for the token
        file) the job runs all the same, its processes get no KUBEFLOW_TRAINER_* vars."""
        reports = ReportServer(self.jobdir, self.tracker.report)
        try:
            reports.start()
        except OSError as err:
            print(f"no status endpoint for the job: {err}", file=sys.stderr, flush=True)
            return
        self.reports = reports

    def poll(self) -> None:
        """Read the job's log and event files in a thread (a large catch-up never
        stalls the supervision), one poll at a time."""
        if self._poll is None or self._poll.done():
            self._poll = asyncio.ensure_future(self._step())

    async def _step(self, *, final: bool = False) -> None:
        """One poll; a changed progress is published (into ``job.json``, where
        ``GET jobs`` reads it with the rest of the job)."""
        tracker = self.tracker
        if await asyncio.to_thread(tracker.drain if final else tracker.poll):
            self.publish(tracker.wire)

    async def finish(self) -> None:
        """The job is over: read what is left, so its final metrics stay."""
        if self.reports is not None:
            self.reports.stop()
        if self._poll is not None:
            with contextlib.suppress(Exception):
                await self._poll
        with contextlib.suppress(Exception):
            await self._step(final=True)
