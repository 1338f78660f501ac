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
import re
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
# Lines that can say anything about progress contain one of these: found in the bytes
# at C speed, so the other lines are never decoded (``parse_line`` decides on the rest).
HINT = re.compile("%\\||it \\[|•|\\{'|[Ee]poch|EPOCH".encode())
# Progress bars redraw many times a second: of those in one read, at most this many
# (evenly spread, the last always) are parsed - the history keeps fewer anyway. Every
# other candidate line (a Hugging Face dict, an epoch line) is parsed.
BARS_PER_READ = 256
BAR = re.compile("%\\||it \\[|•".encode())
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


def line_time(line: bytes) -> float:
    """The time of a log line (``<RFC 3339> text``), else now."""
    with contextlib.suppress(ValueError):
        return datetime.fromisoformat(line[:27].decode()).timestamp()
    return time.time()


def candidate_lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` (whole lines) worth parsing, in order: every line with a
    hint, but of the progress bars only ``BARS_PER_READ`` evenly spread ones (the newest
    always)."""
    hinted = [line for line in data.split(b"\n") if HINT.search(line)]
    bars = [i for i, line in enumerate(hinted) if BAR.search(line)]
    if len(bars) <= BARS_PER_READ:
        return hinted
    stride = -(-len(bars) // BARS_PER_READ)
    dropped = set(bars) - set(bars[-1::-stride])
    return [line for i, line in enumerate(hinted) if i not in dropped]


class LogFollower:
    """The new whole lines of one log file, from the last offset on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.inode: int | None = None

    def read(self, budget: int = LOG_BUDGET) -> bytes:
        """The new whole lines (``b""`` when there are none)."""
        try:
            with self.path.open("rb") as f:
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
        self.wire: dict[str, Any] | None = None  # the progress as last merged
        self._history_dirty = False
        self._history_written = 0.0

    def report(self, reading: ProgressReading) -> None:
        """What the job POSTed (``reports``): the best source, kept until the next."""
        with self._lock:
            self.reported = reading
            self.history.add(reading.updated, reading.step, reading.metrics)
            self._history_dirty = True

    def poll(self, *, budget: int = LOG_BUDGET) -> bool:
        """Read what is new in the log and the event files, merge (``wire``), write the
        history if due; whether the progress changed."""
        self._read(budget)
        return self._merge()

    def _read(self, budget: int) -> bool:
        new = self._read_log(budget)
        return self._read_board(budget) or new

    def _merge(self, *, final: bool = False) -> bool:
        with self._lock:
            self.progress = merge([self.reported, self.logs.reading, self.board_reading])
            for when, step, metrics in self.logs.take_metrics():
                self.history.add(when, step, metrics)
                self._history_dirty = True
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

    def _read_log(self, budget: int) -> bool:
        if self.log is None:
            return False
        data = self.log.read(budget)
        if not data:
            return False
        for line in candidate_lines(data):
            text = line[28:].decode("utf-8", "replace")  # after "<timestamp> "
            self.logs.feed(text, line_time(line))
        return True

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

    def _save_history(self, *, final: bool = False) -> None:
        """Write the history if it changed and is due (the caller holds the lock). A full
        disk loses an update, never the job: a later poll writes it again."""
        now = time.monotonic()
        if self._history_dirty and (final or now - self._history_written >= HISTORY_EVERY):
            with contextlib.suppress(OSError):
                write_json(history_path(self.jobdir), self.history.to_wire())
                self._history_dirty = False
                self._history_written = now
