"""What only the magic returns: ``Progress``, ``%ptjob wait``'s display, updated in
place in a notebook. Everything else it shows (``JobTable``, ``JobStatus``,
``JobHandle``...) is the Python API's (``sdk.handle``)."""

from __future__ import annotations

from ..backends import JobInfo
from ..frontends.formatting import failure_html, failure_lines, waiting_html, waiting_lines
from ..frontends.waiting import WaitLine


class Progress:
    """``%ptjob wait``'s display, updated in place in a notebook (``WaitLine``)."""

    def __init__(self, job: JobInfo, note: str = "") -> None:
        self.job = job
        self.line = WaitLine(job, note)

    def text(self) -> str:
        return self.line.text()

    def details(self) -> list[str]:
        """Under the line: why it failed, or what it waits for."""
        if self.job.failure is not None:
            return failure_lines(self.job.failure)
        if self.job.waiting is not None:
            return waiting_lines(self.job.waiting)
        return []

    def __repr__(self) -> str:
        return "\n".join([self.text(), *self.details()])

    def _repr_html_(self) -> str:
        line = self.line.html()
        if self.job.failure is not None:
            return f"<div>{line}{failure_html(self.job.failure)}</div>"
        if self.job.waiting is not None:
            return f"<div>{line}{waiting_html(self.job.waiting)}</div>"
        return line
