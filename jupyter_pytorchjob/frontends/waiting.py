"""What ``ptjob wait`` and ``%ptjob wait`` show while they wait: the state, the
replicas, a tqdm-like bar with the percent, the step, the key metric, the ETA and the
time so far - as one line of text (a terminal redraws it in place) or as HTML (a
notebook's display, updated in place). Output that is no terminal gets plain lines,
one when something a reader cares about changed (``WaitLine.key``)."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import TextIO

from ..backends import JobInfo
from .formatting import human_duration, metric, state_html, step_and_epoch

#: Cells of the text bar; each holds eighths, as tqdm's does.
BAR_CELLS = 20
_EIGHTHS = " ▏▎▍▌▋▊▉"
#: A plain (non-terminal) line is printed at most once per this many percent.
PLAIN_STEP = 10


def progress_bar(percent: float, cells: int = BAR_CELLS) -> str:
    """``|█████▌    |``: ``percent`` (clamped to 0-100) of ``cells`` cells."""
    filled = max(0.0, min(100.0, percent)) / 100 * cells
    full = math.floor(filled)
    bar = "█" * full
    if full < cells:
        bar += _EIGHTHS[math.floor((filled - full) * 8)]
    return f"|{bar.ljust(cells)}|"


@dataclass(frozen=True)
class WaitLine:
    """One look at a waited-for job; ``note`` says why the wait ends, if it does."""

    job: JobInfo
    note: str = ""

    def _replicas(self) -> str:
        return ", ".join(
            f"{r.name} {r.phase}" + (f" ({r.reason})" if r.reason else "")
            for r in self.job.replicas
        )

    def _details(self) -> list[str]:
        """Step, key metric and ETA, each when known."""
        progress = self.job.progress
        if progress is None:
            return []
        details = step_and_epoch(progress)
        key = progress.key_metric
        if key is not None:
            details.append(f"{key} {metric(progress, key)}")
        if progress.eta_seconds is not None and not self.job.state.finished:
            details.append(f"ETA {human_duration(progress.eta_seconds)}")
        return details

    def _elapsed(self) -> list[str]:
        duration = self.job.duration
        return [] if duration is None else [human_duration(duration)]

    @property
    def percent(self) -> float | None:
        progress = self.job.progress
        return None if progress is None else progress.percent

    def text(self, width: int | None = None) -> str:
        """``demo: Running [master-0 Running] 42% |████████▍   | step 420/1000 · loss
        0.12 · ETA 1m20s · 2m03s``; cut to ``width`` characters when given (a terminal
        redraws only a line that does not wrap)."""
        job = self.job
        line = f"{job.name}: {job.state.value}"
        replicas = self._replicas()
        if replicas:
            line += f" [{replicas}]"
        if self.percent is not None:
            line += f" {self.percent:.0f}% {progress_bar(self.percent)}"
        line += " " + " · ".join(self._details() + self._elapsed())
        line = f"{line} {self.note}".rstrip()
        if width is not None and len(line) > width:
            line = line[: max(0, width - 1)] + "…"
        return line

    def html(self) -> str:
        """The same, with a ``<progress>`` bar and the state in its colour."""
        job = self.job
        parts = [f"<code>{html.escape(job.name)}</code>: {state_html(job.state.value)}"]
        replicas = self._replicas()
        if replicas:
            parts.append(html.escape(f"[{replicas}]"))
        if self.percent is not None:
            value = max(0.0, min(100.0, self.percent))
            parts.append(
                f'<progress max="100" value="{value:.1f}" style="vertical-align: middle">'
                f"</progress> {value:.0f}%"
            )
        rest = " · ".join(self._details() + self._elapsed())
        parts.append(html.escape(f"{rest} {self.note}".rstrip()))
        return " ".join(parts)

    def key(self) -> tuple[object, ...]:
        """What a plain line is printed for: the state, each replica's phase, and every
        ``PLAIN_STEP`` percent (a log file gets a dozen lines, not one per poll)."""
        bucket = None if self.percent is None else int(self.percent // PLAIN_STEP)
        return (
            self.job.state,
            tuple((r.name, r.phase, r.restarts, r.reason) for r in self.job.replicas),
            bucket,
            self.note,
        )


class TerminalWait:
    """``ptjob wait``'s output: on a terminal one line redrawn at every look (``\\r``,
    then erase to the end of the line), else a plain line per ``WaitLine.key`` while
    the job runs."""

    def __init__(self, out: TextIO, *, tty: bool, width: int = 80) -> None:
        self.out = out
        self.tty = tty
        self.width = width
        self._shown: object = None
        self._drawn = False

    def __call__(self, job: JobInfo) -> None:
        line = WaitLine(job)
        if self.tty:
            # One column short: a line filling the last column wraps in some terminals.
            self.out.write(f"\r{line.text(self.width - 1)}\x1b[K")
            self._drawn = True
        elif line.key() != self._shown and not job.state.finished:
            # The caller's last line says how it ended.
            self._shown = line.key()
            self.out.write(line.text() + "\n")
        else:
            return
        self.out.flush()

    def close(self) -> None:
        """End the redrawn line, so that what follows starts on its own."""
        if self.tty and self._drawn:
            self.out.write("\n")
            self.out.flush()
