"""A local job's progress, kept by its supervisor (the one process that lives exactly
as long as the job, whether a Jupyter server runs or not, and already the only writer
of the job's files).

Sources, best first (``job.progress.merge``): what the job reports (``reports``), the
master's (else worker-0's) log - read from the last offset on, never again from the
start; a new log (a restarted node) is read from its start - and the scalars of the
TensorBoard event files in its log directory (``backends.tfevents``: byte offsets per
file). Each ``poll`` reads at most a budget of new bytes from each, so catching up with
a 1 GB log spreads over polls. The result goes to ``progress.json`` (what ``GET jobs``
reads: one small file) and the history to ``progress-history.json`` (read only by
``GET jobs/{name}/progress``), each written atomically and only when it changed.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from ...job.progress import (
    JobProgress,
    MetricHistory,
    ProgressReading,
    ProgressSource,
    merge,
)
from ...job.progress_logs import LogProgress
from ..tfevents import LogdirScalars
from .store import JobDir, read_json, write_json

LOG_BUDGET = 4 << 20  # bytes of new log read per poll
# Lines that can say anything about progress contain one of these (a cheap first look;
# ``parse_line`` decides).
HINTS = ("%|", "it [", "•", "{'", "poch", "POCH")
HISTORY_EVERY = 2.0  # seconds between writes of the history while nothing else changes


def progress_path(jobdir: JobDir) -> Path:
    return jobdir.path / "progress.json"


def history_path(jobdir: JobDir) -> Path:
    return jobdir.path / "progress-history.json"


def read_progress(jobdir: JobDir) -> JobProgress | None:
    """What the supervisor last wrote; None before any source said anything."""
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        wire = read_json(progress_path(jobdir))
        if wire:
            return JobProgress.from_wire(wire)
    return None


def read_history(jobdir: JobDir) -> MetricHistory:
    history = MetricHistory()
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        for name, points in (read_json(history_path(jobdir)) or {}).items():
            for point in points:
                history.add(point["time"], point["step"], {name: point["value"]})
    return history


def line_time(line: bytes) -> float:
    """The time of a log line (``<RFC 3339> text``), else now."""
    with contextlib.suppress(ValueError):
        return datetime.fromisoformat(line[:27].decode()).timestamp()
    return time.time()


class LogFollower:
    """The new whole lines of one log file, from the last offset on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.inode: int | None = None

    def read(self, budget: int = LOG_BUDGET) -> list[bytes]:
        try:
            with self.path.open("rb") as f:
                stat = os.fstat(f.fileno())
                if stat.st_ino != self.inode or stat.st_size < self.offset:
                    self.inode, self.offset = stat.st_ino, 0  # a new log: a restarted node
                if stat.st_size == self.offset:
                    return []
                f.seek(self.offset)
                data = f.read(budget)
        except OSError:
            return []
        end = data.rfind(b"\n") + 1
        if end == 0:
            # No whole line within the budget: the log pump cuts lines at 16 KiB, so
            # this is no log of ours; skip it rather than stall.
            self.offset += len(data) if len(data) == budget else 0
            return []
        self.offset += end
        return data[:end].split(b"\n")[:-1]


class ProgressTracker:
    """The progress of one job from every local source; ``poll`` may run in a thread
    while ``report`` is called from the supervisor's event loop."""

    def __init__(self, jobdir: JobDir, log_replica: str | None, logdir: str | None) -> None:
        self.jobdir = jobdir
        self.log = LogFollower(jobdir.log(log_replica)) if log_replica else None
        self.logs = LogProgress()
        self.board = LogdirScalars(Path(logdir)) if logdir else None
        self.board_reading: ProgressReading | None = None
        self.reported: ProgressReading | None = None
        self.history = MetricHistory()
        self.progress: JobProgress | None = None
        self._lock = threading.Lock()
        self._written: dict[str, Any] | None = None
        self._history_dirty = False
        self._history_written = 0.0

    def report(self, reading: ProgressReading) -> None:
        """What the job POSTed (``reports``): the best source, kept until the next."""
        with self._lock:
            self.reported = reading
            self.history.add(reading.updated, reading.step, reading.metrics)
            self._history_dirty = True

    def poll(self, *, budget: int = LOG_BUDGET) -> bool:
        """Read what is new in the log and the event files, merge, and write the files
        that changed; whether anything was new."""
        new = self._read_log(budget)
        new = self._read_board(budget) or new
        with self._lock:
            self.progress = merge([self.reported, self.logs.reading, self.board_reading])
            for when, step, metrics in self.logs.take_metrics():
                self.history.add(when, step, metrics)
                self._history_dirty = True
            self._save()
        return new

    def drain(self, *, budget: int = LOG_BUDGET, limit: float = 30.0) -> None:
        """Read everything there is (the job finished: its final metrics stay)."""
        end = time.monotonic() + limit
        while self.poll(budget=budget) and time.monotonic() < end:
            pass
        with self._lock:
            self._save(final=True)

    def _read_log(self, budget: int) -> bool:
        if self.log is None:
            return False
        lines = self.log.read(budget)
        for line in lines:
            text = line[28:].decode("utf-8", "replace")  # after "<timestamp> "
            if any(hint in text for hint in HINTS):
                self.logs.feed(text, line_time(line))
        return bool(lines)

    def _read_board(self, budget: int) -> bool:
        if self.board is None:
            return False
        scalars = self.board.read(budget)
        if not scalars:
            return False
        latest = {s.tag: s for s in scalars}
        previous = self.board_reading.metrics if self.board_reading else {}
        newest = max(scalars, key=lambda s: (s.step, s.wall_time))
        self.board_reading = ProgressReading(
            ProgressSource.TENSORBOARD,
            max(s.wall_time for s in scalars),
            step=max(newest.step, self.board_reading.step or 0)
            if self.board_reading
            else newest.step,
            metrics={**previous, **{tag: s.value for tag, s in latest.items()}},
        )
        with self._lock:
            for scalar in scalars:
                self.history.add(scalar.wall_time, scalar.step, {scalar.tag: scalar.value})
            self._history_dirty = True
        return True

    def _save(self, *, final: bool = False) -> None:
        """Write what changed (the caller holds the lock). A full disk loses an update,
        never the job: the next poll writes it again."""
        wire = self.progress.to_wire() if self.progress is not None else None
        with contextlib.suppress(OSError):
            if wire is not None and wire != self._written:
                write_json(progress_path(self.jobdir), wire)
                self._written = wire
            now = time.monotonic()
            if self._history_dirty and (final or now - self._history_written >= HISTORY_EVERY):
                write_json(history_path(self.jobdir), self.history.to_wire())
                self._history_dirty = False
                self._history_written = now
