"""How far along a job is: percent, ETA, step/epoch and the latest metrics (the wire
model of ``progress`` in ``GET jobs``), and the bounded history behind
``GET jobs/{name}/progress``. Pure data, no I/O: the sources (what the job reports,
``status.trainerStatus``, its logs, its TensorBoard files) each give a
``ProgressReading``; ``merge`` makes one ``JobProgress`` of them, best source first.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .wire import dataclass_wire

# Shown before any other metric as the job's key metric, in this order.
KEY_METRICS = ("loss", "eval_loss", "accuracy")
# Bounds on what one job may make the server keep.
MAX_METRICS = 50
MAX_POINTS = 500
MAX_METRIC_NAME = 64
# A metric's value as printed (``0.0000``) is kept up to this many characters.
MAX_METRIC_TEXT = 32
# Distinct metric names not kept that a job's progress counts (beyond: "at least").
MAX_DROPPED = 1000


class ProgressSource(str, enum.Enum):
    """Where a job's progress came from, best first (the order ``merge`` trusts)."""

    REPORT = "report"  # the job POSTed it (Kubeflow's trainer status protocol)
    TRAINER_STATUS = "trainerStatus"  # a TrainJob's status.trainerStatus
    LOGS = "logs"  # tqdm / Hugging Face / Lightning / "epoch N/M" lines
    TENSORBOARD = "tensorboard"  # scalars in the job's event files

    @property
    def rank(self) -> int:
        return list(ProgressSource).index(self)


def finite(value: Any, *, low: float | None = None, high: float | None = None) -> float | None:
    """A plain finite number within bounds, else None (NaN, inf, bools, strings and
    absurd values from a hostile line or body never reach the wire)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    if not math.isfinite(number):
        return None
    if (low is not None and number < low) or (high is not None and number > high):
        return None
    return number


def count(value: Any) -> int | None:
    """A step count: a non-negative integer below 10**15 (exact as a JSON number)."""
    number = finite(value, low=0, high=1e15)
    return None if number is None or number != int(number) else int(number)


def metric_name(name: Any) -> str | None:
    """A metric's name as Kubeflow allows it (1-64 characters), else None."""
    if not isinstance(name, str) or not 0 < len(name) <= MAX_METRIC_NAME:
        return None
    return name if name.isprintable() else None


@dataclass
class ProgressFields:
    """What a progress says: every field optional (a tqdm bar has no metrics, a
    TensorBoard file has no percent)."""

    source: ProgressSource
    updated: float
    percent: float | None = None
    eta_seconds: float | None = None
    step: int | None = None
    total_steps: int | None = None
    epoch: float | None = None
    total_epochs: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    # Distinct metric names left out (more than MAX_METRICS, or no valid name), counted
    # up to MAX_DROPPED: the progress says what it does not show.
    dropped_metrics: int = 0
    # A metric's value as the script printed it (``loss=0.0000`` -> "0.0000"), for the
    # metrics read from log lines: shown as is, its precision kept (not ``loss 0``).
    metric_texts: dict[str, str] = field(default_factory=dict)


@dataclass
class ProgressReading(ProgressFields):
    """What one source says at one time."""

    def __post_init__(self) -> None:
        # One place where every source's numbers are made sane.
        self.percent = finite(self.percent, low=0, high=100)
        self.eta_seconds = finite(self.eta_seconds, low=0, high=1e9)
        self.step = count(self.step)
        self.total_steps = count(self.total_steps)
        if self.total_steps == 0 or (
            self.step is not None and self.total_steps is not None and self.step > self.total_steps
        ):
            self.total_steps = None
        self.epoch = finite(self.epoch, low=0, high=1e9)
        self.total_epochs = finite(self.total_epochs, low=0, high=1e9) or None
        if (
            self.epoch is not None
            and self.total_epochs is not None
            and self.epoch > self.total_epochs
        ):
            self.total_epochs = None
        metrics: dict[str, float] = {}
        # The names this reading left out (not a field: the sources count them, each
        # name once, in a ``DroppedNames``).
        self.dropped_names: list[str] = []
        for name, value in self.metrics.items():
            number, key = finite(value), metric_name(name)
            if key is None or (key not in metrics and len(metrics) >= MAX_METRICS):
                self.dropped_names.append(name if isinstance(name, str) else repr(name))
            elif number is not None:
                metrics[key] = number
        self.metrics = metrics
        self.metric_texts = {
            name: text
            for name, text in self.metric_texts.items()
            if name in metrics and isinstance(text, str) and len(text) <= MAX_METRIC_TEXT
        }
        dropped = count(self.dropped_metrics) or 0
        self.dropped_metrics = min(MAX_DROPPED, max(dropped, len(set(self.dropped_names))))
        if self.percent is None:
            if self.step is not None and self.total_steps:
                self.percent = 100.0 * self.step / self.total_steps
            elif self.epoch is not None and self.total_epochs:
                self.percent = 100.0 * self.epoch / self.total_epochs

    @property
    def empty(self) -> bool:
        return not self.metrics and all(
            v is None
            for v in (self.percent, self.eta_seconds, self.step, self.epoch, self.total_steps)
        )


@dataclass
class JobProgress(ProgressFields):
    """A job's progress as the list, the job view and the CLI show it (``merge`` of the
    sources' readings)."""

    @property
    def key_metric(self) -> str | None:
        """First of loss, eval_loss, accuracy present, else the first reported."""
        for name in KEY_METRICS:
            if name in self.metrics:
                return name
        return next(iter(self.metrics), None)

    def to_wire(self) -> dict[str, Any]:
        wire = dataclass_wire(self)
        wire["keyMetric"] = self.key_metric
        return wire

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> JobProgress:
        """Back from ``to_wire``: what the local supervisor kept in ``job.json``, made
        sane when it was read from its source (``GET jobs`` reads it for every running
        job: no second check). ``KeyError``/``ValueError`` for anything else."""
        return cls(
            source=ProgressSource(wire["source"]),
            updated=float(wire["updated"]),
            percent=wire["percent"],
            eta_seconds=wire["etaSeconds"],
            step=wire["step"],
            total_steps=wire["totalSteps"],
            epoch=wire["epoch"],
            total_epochs=wire["totalEpochs"],
            metrics=dict(wire["metrics"]),
            dropped_metrics=int(wire.get("droppedMetrics", 0)),
            metric_texts=dict(wire.get("metricTexts", {})),
        )


def set_metrics(
    progress: ProgressFields, metrics: Mapping[str, float], texts: Mapping[str, str]
) -> list[str]:
    """``metrics`` into ``progress`` (at most ``MAX_METRICS`` names), each value with its
    printed text or none (an older text never stays beside a newer value); the names left
    out for want of room."""
    left_out = []
    for name, value in metrics.items():
        if name in progress.metrics or len(progress.metrics) < MAX_METRICS:
            progress.metrics[name] = value
            if name in texts:
                progress.metric_texts[name] = texts[name]
            else:
                progress.metric_texts.pop(name, None)
        else:
            left_out.append(name)
    return left_out


_FIELDS = ("percent", "eta_seconds", "step", "total_steps", "epoch", "total_epochs")


def merge(readings: Iterable[ProgressReading | None]) -> JobProgress | None:
    """One progress from every source's latest reading: each field from the best source
    that has it (a report's percent beats a tqdm bar's; the bar still gives the step
    when the report has none), each metric likewise; ``source`` is the best source that
    gave anything, ``updated`` the newest time. None when no source said anything."""
    present = sorted(
        (r for r in readings if r is not None and not r.empty), key=lambda r: r.source.rank
    )
    if not present:
        return None
    progress = JobProgress(source=present[0].source, updated=max(r.updated for r in present))
    for name in _FIELDS:
        setattr(
            progress,
            name,
            next((getattr(r, name) for r in present if getattr(r, name) is not None), None),
        )
    if progress.percent is not None and progress.percent > 100:
        progress.percent = 100.0
    for reading in reversed(present):  # best last: its values win, with their texts
        set_metrics(progress, reading.metrics, reading.metric_texts)
    # Each source counts its own distinct names: the most any left out, at least.
    progress.dropped_metrics = max(r.dropped_metrics for r in present)
    return progress


class DroppedNames:
    """The distinct metric names a source left out, counted up to ``MAX_DROPPED`` (their
    hashes kept: a hostile log's fresh names cost a bounded set, never their text)."""

    def __init__(self) -> None:
        self._hashes: set[int] = set()

    def add(self, names: Iterable[str]) -> None:
        for name in names:
            if len(self._hashes) >= MAX_DROPPED:
                return
            self._hashes.add(hash(name))

    def __len__(self) -> int:
        return len(self._hashes)


@dataclass
class MetricPoint:
    time: float
    step: int | None
    value: float

    def to_wire(self) -> dict[str, Any]:
        return dataclass_wire(self)


@dataclass
class _Series:
    """One metric's points: every ``stride``-th value seen (evenly spread over the whole
    run), then the newest one if it is not on the stride (``tail``)."""

    points: list[MetricPoint] = field(default_factory=list)
    stride: int = 1
    seen: int = 0
    tail: bool = False
    last: tuple[int | None, float] | None = None


class MetricHistory:
    """Every metric's values over time, bounded: at most ``max_metrics`` metrics and
    ``max_points`` points each. A full series keeps every other point and from then on
    every other new value (its stride doubles), so the points stay evenly spread over
    the whole run; the first and the newest are always there."""

    def __init__(self, max_points: int = MAX_POINTS, max_metrics: int = MAX_METRICS) -> None:
        self.max_points = max(4, max_points)
        self.max_metrics = max_metrics
        self._series: dict[str, _Series] = {}

    @property
    def series(self) -> dict[str, list[MetricPoint]]:
        return {name: series.points for name, series in self._series.items()}

    def add(self, when: float, step: int | None, metrics: Mapping[str, float]) -> None:
        for name, value in metrics.items():
            series = self._series.get(name)
            if series is None:
                if len(self._series) >= self.max_metrics or metric_name(name) is None:
                    continue
                series = self._series[name] = _Series()
            elif series.last == (step, value):
                continue  # the same value read again (a poll without news)
            series.last = (step, value)
            if series.tail:
                series.points.pop()
            point = MetricPoint(when, step, value)
            series.points.append(point)
            series.tail = series.seen % series.stride != 0
            series.seen += 1
            kept = len(series.points) - series.tail
            if kept > self.max_points - 1:  # room for the tail
                tail = series.points.pop() if series.tail else None
                del series.points[1::2]
                series.stride *= 2
                if tail is not None:
                    series.points.append(tail)

    def to_wire(self) -> dict[str, Any]:
        return {name: [p.to_wire() for p in series.points] for name, series in self._series.items()}


def progress_wire(progress: JobProgress | None, history: MetricHistory | None) -> dict[str, Any]:
    """The body of ``GET jobs/{name}/progress``."""
    return {
        "progress": progress.to_wire() if progress is not None else None,
        "history": history.to_wire() if history is not None else {},
    }


# Kubeflow Trainer v2.3's trainerStatus (KEP-2779, pkg/statusserver/server.go).
TRAINER_STATUS_MAX_METRICS = 256
# Metrics a script may send that are the progress's own fields, not metrics.
_FIELD_METRICS = {
    "step": "step",
    "current_step": "step",
    "total_steps": "total_steps",
    "epoch": "epoch",
    "current_epoch": "epoch",
    "total_epochs": "total_epochs",
}


class TrainerStatusInvalid(ValueError):
    """A ``trainerStatus`` that is not Kubeflow's shape; the message names the field."""


def reading_from_trainer_status(
    status: Any, source: ProgressSource, when: float, *, strict: bool = True
) -> ProgressReading:
    """A ``trainerStatus`` object (``progressPercentage`` 0-100, ``estimatedRemaining
    Seconds`` >= 0, ``metrics`` [{name, value}] with string values, ``lastUpdatedTime``)
    as a reading. ``strict`` (a job's own report): ``TrainerStatusInvalid`` naming the
    first field that is not Kubeflow's shape; else (a cluster's object) bad parts are
    skipped."""

    def bad(field_name: str, why: str) -> None:
        if strict:
            raise TrainerStatusInvalid(f"trainerStatus.{field_name}: {why}")

    if not isinstance(status, Mapping):
        raise TrainerStatusInvalid("trainerStatus: must be an object")
    percent = status.get("progressPercentage")
    if percent is not None and finite(percent, low=0, high=100) is None:
        bad("progressPercentage", "must be a number from 0 to 100")
    eta = status.get("estimatedRemainingSeconds")
    if eta is not None and finite(eta, low=0) is None:
        bad("estimatedRemainingSeconds", "must be a number of seconds >= 0")
    metrics: dict[str, float] = {}
    fields_: dict[str, Any] = {}
    raw_metrics = status.get("metrics") or []
    if not isinstance(raw_metrics, list) or len(raw_metrics) > TRAINER_STATUS_MAX_METRICS:
        bad("metrics", f"must be a list of at most {TRAINER_STATUS_MAX_METRICS} {{name, value}}")
        raw_metrics = []
    for index, metric in enumerate(raw_metrics):
        name = metric.get("name") if isinstance(metric, Mapping) else None
        value = metric.get("value") if isinstance(metric, Mapping) else None
        number = _metric_number(value)
        if metric_name(name) is None or number is None:
            bad(f"metrics[{index}]", "must be {name: 1-64 characters, value: a number}")
            continue
        assert isinstance(name, str)
        if name in _FIELD_METRICS:
            fields_[_FIELD_METRICS[name]] = number
        else:
            metrics[name] = number
    return ProgressReading(
        source, when, percent=percent, eta_seconds=eta, metrics=metrics, **fields_
    )


def _metric_number(value: Any) -> float | None:
    """Kubeflow's metric values are strings (``"0.23"``); numbers are taken too."""
    if isinstance(value, str) and 0 < len(value) <= MAX_METRIC_NAME:
        try:
            return finite(float(value))
        except ValueError:
            return None
    return finite(value)


def chief_replica(replicas: Iterable[str]) -> str | None:
    """The replica whose log tells the job's progress: the master, else rank 0 (``worker-0``,
    a TrainJob's ``node-0``, never its ``dataset-initializer-0``); None for none. Rank 0
    is the process training scripts print progress on."""

    def order(name: str) -> tuple[bool, bool, str, int]:
        prefix, _, index = name.rpartition("-")
        return (
            not name.startswith("master-"),
            prefix.endswith("-initializer"),
            prefix,
            int(index) if index.isdigit() else 0,
        )

    return min(replicas, key=order, default=None)
