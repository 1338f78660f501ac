"""A local job's progress, kept by its supervisor (the one process that lives exactly
as long as the job, whether a Jupyter server runs or not, and already the only writer
of the job's files).

Sources, best first (``job.progress.merge``): what the job reports (``reports``), the
master's (else worker-0's) log - read from the last offset on, never again from the
start; a new log (a restarted node) is read from its start - and the scalars of the
TensorBoard event files in its log directory (``backends.tfevents``: byte offsets per
file). Each ``poll`` reads at most a budget of new bytes from each, so catching up with
a 1 GB log spreads over polls. The supervisor puts the result into ``job.json`` under
``progress`` (which ``GET jobs`` reads anyway: no file more per job); the history goes
to ``progress-history.json`` (read only by ``GET jobs/{name}/progress``), written
atomically, at most every ``HISTORY_EVERY`` seconds while it changes.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

from ... import untrusted_files
from ...job.progress import JobProgress, MetricHistory, ProgressReading
from .store import JobDir, read_json, write_json

LOG_BUDGET = 4 << 20  # bytes of new log read per poll
HISTORY_EVERY = 2.0  # seconds between writes of the history while nothing else changes


PROGRESS_KEY = "progress"  # in job.json


def progress_of(job: dict[str, Any]) -> JobProgress | None:
    """The progress a job's ``job.json`` holds; None before any source said anything
    (or if it is not what the supervisor writes)."""
    wire = job.get(PROGRESS_KEY)
    if not isinstance(wire, dict):
        return None
    with contextlib.suppress(KeyError, ValueError, TypeError):
        return JobProgress.from_wire(wire)
    return None


def history_path(jobdir: JobDir) -> Path:
    return jobdir.path / "progress-history.json"


def read_history(jobdir: JobDir) -> MetricHistory:
    history = MetricHistory()
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        for name, points in (read_json(history_path(jobdir)) or {}).items():
            for point in points:
                history.add(point["time"], point["step"], {name: point["value"]})
    return history


class LogFollower:
    """The new whole lines of one log file, from the last offset on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.inode: int | None = None

    def read(self, budget: int = LOG_BUDGET) -> bytes:
        """The new whole lines (``b""`` when there are none)."""
        try:
            with untrusted_files.opened(self.path) as f:
                stat = os.fstat(f.fileno())
                if stat.st_ino != self.inode or stat.st_size < self.offset:
                    self.inode, self.offset = stat.st_ino, 0  # a new log: a restarted node
                if stat.st_size == self.offset:
                    return b""
                f.seek(self.offset)
                data = f.read(budget)
        except OSError:
            return b""
        end = data.rfind(b"\n") + 1
        if end == 0:
            # No whole line within the budget: the log pump cuts lines at 16 KiB, so
            # this is no log of ours; skip it rather than stall.
            self.offset += len(data) if len(data) == budget else 0
            return b""
        self.offset += end
        return data[:end]


class ProgressTracker:
    """The progress of one job from every local source. ``poll``/``drain`` run in one
    thread at a time; ``report`` is called from the supervisor's event loop and only
    hands its reading over (under a lock held for no more than that), so a report never
    waits for a read of the log."""

    def __init__(self, jobdir: JobDir, log_replica: str | None, logdir: str | None) -> None:
        self.jobdir = jobdir
        self.log = LogFollower(jobdir.log(log_replica)) if log_replica else None
        # Imported here: a reader of job.json (``progress_of``, ``ptjob list``) needs
        # neither the log parsers nor TensorBoard's event protobufs.
        from ..progress import ProgressSources

        self.sources = ProgressSources(Path(logdir) if logdir else None)
        self.reported: ProgressReading | None = None
        self._unrecorded: list[ProgressReading] = []  # reports not in the history yet
        self.progress: JobProgress | None = None
        import threading  # the supervisor's: readers of job.json (``ptjob list``) need none

        self._lock = threading.Lock()
        self.wire: dict[str, Any] | None = None  # the progress as last merged
        self._history_written = 0.0

    @property
    def history(self) -> MetricHistory:
        return self.sources.history

    def report(self, reading: ProgressReading) -> None:
        """What the job POSTed (``reports``): the best source, kept until the next."""
        with self._lock:
            self.reported = reading
            self._unrecorded.append(reading)

    def poll(self, *, budget: int = LOG_BUDGET) -> bool:
        """Read what is new in the log and the event files, merge (``wire``), write the
        history if due; whether the progress changed."""
        self._read(budget)
        return self._merge()

    def _read(self, budget: int) -> bool:
        new = self.sources.feed_log(self.log.read(budget)) if self.log else False
        return self.sources.read_board(budget) or new

    def _merge(self, *, final: bool = False) -> bool:
        with self._lock:
            reported, unrecorded, self._unrecorded = self.reported, self._unrecorded, []
        for reading in unrecorded:
            self.sources.add_history(reading)
        self.progress = self.sources.merged([reported])
        self._save_history(final=final)
        wire = self.progress.to_wire() if self.progress is not None else None
        changed, self.wire = wire != self.wire, wire
        return changed

    def drain(self, *, budget: int = LOG_BUDGET, limit: float = 30.0) -> bool:
        """Read everything there is (the job finished: its final metrics stay); whether
        the progress changed."""
        end = time.monotonic() + limit
        while self._read(budget) and time.monotonic() < end:
            pass
        return self._merge(final=True)

    def _save_history(self, *, final: bool = False) -> None:
        """Write the history if it changed and is due. A full
        disk loses an update, never the job: a later poll writes it again."""
        now = time.monotonic()
        if self.sources.history_changed and (final or now - self._history_written >= HISTORY_EVERY):
            with contextlib.suppress(OSError):
                write_json(history_path(self.jobdir), self.history.to_wire())
                self.sources.history_changed = False
                self._history_written = now
