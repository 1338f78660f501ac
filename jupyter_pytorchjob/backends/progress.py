"""What a job's logs and TensorBoard files say about its progress - the part both backends
share. The local supervisor feeds it the master's log file from the last offset
(``local/progress.py``); the Kubernetes backend feeds it the chief pod's log from the
last timestamp, fetched through the API, and points it at the job's log directory as
the notebook mounts it (``kubernetes/progress.py``). Either way the bytes are
``<RFC 3339 time> <text>`` lines, read once each, and event files are read from kept
byte offsets (``tfevents``): nothing is parsed twice.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from ..job.progress import (
    DroppedNames,
    JobProgress,
    MetricHistory,
    ProgressReading,
    ProgressSource,
    merge,
)
from ..job.progress_logs import LogProgress
from .tfevents import READ_BUDGET, LogdirScalars

# Lines that can say anything about progress contain one of these: found in the bytes
# at C speed, so the other lines are never decoded (``parse_line`` decides on the rest).
HINT = re.compile("%\\||it \\[|•|\\{'|[Ee]poch|EPOCH".encode())
# Progress bars redraw many times a second: of those in one read, at most this many
# (evenly spread, the last always) are parsed - the history keeps fewer anyway. Every
# other candidate line (a Hugging Face dict, an epoch line) is parsed.
BARS_PER_READ = 256
BAR = re.compile("%\\||it \\[|•".encode())


def line_time(stamp: bytes) -> float:
    """The time of a log line's ``<RFC 3339>`` prefix (ours: microseconds and an offset;
    the kubelet's: nanoseconds and ``Z``), else now."""
    try:
        return datetime.fromisoformat(stamp.decode("ascii")).timestamp()
    except (UnicodeDecodeError, ValueError):
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


def as_reading(progress: JobProgress | None) -> ProgressReading | None:
    """A progress another source already merged (a TrainJob's ``trainerStatus``) as one
    reading among the others."""
    if progress is None:
        return None
    return ProgressReading(
        progress.source,
        progress.updated,
        percent=progress.percent,
        eta_seconds=progress.eta_seconds,
        step=progress.step,
        total_steps=progress.total_steps,
        epoch=progress.epoch,
        total_epochs=progress.total_epochs,
        metrics=dict(progress.metrics),
        dropped_metrics=progress.dropped_metrics,
        metric_texts=dict(progress.metric_texts),
    )


class ProgressSources:
    """One job's log and TensorBoard sources, and the metric history they make.

    Not thread-safe: the caller serialises ``feed_log``/``read_board``/``merged`` (the
    local tracker holds a lock, the Kubernetes watcher reads each job in one task)."""

    def __init__(self, logdir: Path | None) -> None:
        self.logs = LogProgress()
        self.board = LogdirScalars(logdir) if logdir is not None else None
        self.board_reading: ProgressReading | None = None
        self.board_dropped = DroppedNames()  # tags beyond MAX_METRICS, or not a name
        self.history = MetricHistory()
        self.history_changed = False

    def feed_log(self, data: bytes) -> bool:
        """Whole ``<time> <text>`` lines, new ones only; whether there were any."""
        if not data:
            return False
        for line in candidate_lines(data):
            stamp, _, text = line.partition(b" ")
            # A bar redrawn with "\r" and no newline is one line in a container's log
            # (our log pump splits it): what it shows last is its last part.
            text = text.rstrip(b"\r").rpartition(b"\r")[2]
            self.logs.feed(text.decode("utf-8", "replace"), line_time(stamp))
        return True

    def read_board(self, budget: int = READ_BUDGET) -> bool:
        """Read what is new in the event files (at most ``budget`` bytes); whether
        anything was."""
        if self.board is None:
            return False
        scalars = self.board.read(budget)
        if not scalars:
            return False
        latest = {s.tag: s.value for s in scalars}
        before = self.board_reading
        newest = max(scalars, key=lambda s: (s.step, s.wall_time))
        self.board_reading = ProgressReading(
            ProgressSource.TENSORBOARD,
            max(s.wall_time for s in scalars),
            step=max(newest.step, before.step or 0) if before else newest.step,
            metrics={**(before.metrics if before else {}), **latest},
        )
        self.board_dropped.add(self.board_reading.dropped_names)
        self.board_reading.dropped_metrics = len(self.board_dropped)
        for scalar in scalars:
            self.history.add(scalar.wall_time, scalar.step, {scalar.tag: scalar.value})
        self.history_changed = True
        return True

    def add_history(self, reading: ProgressReading) -> None:
        """A better source's reading (a report, a ``trainerStatus``) in the history."""
        self.history.add(reading.updated, reading.step, reading.metrics)
        self.history_changed = True

    def merged(self, better: Iterable[ProgressReading | None] = ()) -> JobProgress | None:
        """The job's progress: ``better`` sources first, then the logs, then TensorBoard;
        the metrics the log lines gave since the last call go into the history."""
        for when, step, metrics in self.logs.take_metrics():
            self.history.add(when, step, metrics)
            self.history_changed = True
        return merge([*better, self.logs.reading, self.board_reading])
