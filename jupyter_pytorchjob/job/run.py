"""What a run was: its hyperparameters, checkpoints and artifacts (``GET jobs/{name}/run``),
from what the job itself said. Pure, no I/O.

``report(hparams=..., checkpoint=..., artifact=..., mode=...)`` prints one marked line on
rank 0 (``RUN_MARK`` + a JSON object): the one channel every job already has on both
backends (the local node's log file; a pod's log through the API server, its archive once
the pods are gone), with or without Trainer's status server. ``RunLog`` reads those lines
back. They are the job's own words and untrusted: a line longer than ``MAX_LINE`` is not
read, names are checked like metric names, strings are cut, numbers must be finite, and
each list is bounded (the newest kept); what is left out is counted (``dropped``).

A clone resumes from a checkpoint through ``job.clone.clone_body``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import JobSpecInvalid
from .progress import MAX_METRICS, count, finite, metric_name
from .shape import load_json
from .wire import dataclass_wire

#: What starts a run line in rank 0's output (``report`` writes it).
RUN_MARK = "ptjob-run "
MAX_LINE = 16 * 1024  # the log pump's cut: a longer line never arrives whole
MAX_HPARAMS = 100
MAX_HPARAM_TEXT = 256  # a string value's characters kept
MAX_CHECKPOINTS = 100
MAX_ARTIFACTS = 100
MAX_PATH = 4096
MAX_CHECKPOINT_METRICS = 20
MAX_DROPPED = 100_000
HPARAM_DEPTH = 3  # nested dicts flattened to ``a.b.c`` this deep
MODES = ("min", "max")


def written_path(value: Any) -> str | None:
    """A path as the job wrote it: 1..MAX_PATH printable characters, else None."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_PATH or not value.isprintable():
        return None
    return value


def _hparam_value(value: Any) -> Any:
    """A plain, bounded value (``...`` for one that is not: left out)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        number = finite(value)
        if number is None:
            return ...
        return value if isinstance(value, int) and abs(value) < 2**53 else number
    if isinstance(value, str):
        return value if len(value) <= MAX_HPARAM_TEXT else value[: MAX_HPARAM_TEXT - 1] + "…"
    if isinstance(value, list) and len(value) <= 16:
        items = [_hparam_value(item) for item in value]
        if all(item is not ... and not isinstance(item, list) for item in items):
            text = json.dumps(items)
            return items if len(text) <= MAX_HPARAM_TEXT else ...
    return ...


def flat_hparams(
    hparams: Mapping[str, Any], prefix: str = "", depth: int = 1
) -> Iterable[tuple[str, Any]]:
    """``{"optim": {"lr": 1e-3}}`` -> ``("optim.lr", 1e-3)``; nested dicts up to
    ``HPARAM_DEPTH`` levels."""
    for key, value in hparams.items():
        name = f"{prefix}{key}" if isinstance(key, str) else None
        if name is not None and isinstance(value, Mapping) and depth < HPARAM_DEPTH:
            yield from flat_hparams(value, f"{name}.", depth + 1)
        else:
            yield (name or repr(key)), value


@dataclass
class Checkpoint:
    """A checkpoint the job wrote: where (as the job sees it), at which step, when, and
    the metrics reported with it."""

    path: str
    step: int | None = None
    time: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    source: str = "report"  # or "lightning", "huggingface": found in the log directory

    def to_wire(self) -> dict[str, Any]:
        return dataclass_wire(self)


@dataclass
class Artifact:
    """A file or directory the job named as an output."""

    name: str
    path: str
    time: float | None = None

    def to_wire(self) -> dict[str, Any]:
        return dataclass_wire(self)


@dataclass
class RunRecord:
    """What a run reported: ``hparams`` (flat names), ``checkpoints`` (oldest first),
    ``artifacts`` (by name), ``modes`` (a metric's better direction), ``dropped`` (items
    left out: over a bound, or not valid)."""

    hparams: dict[str, Any] = field(default_factory=dict)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    artifacts: dict[str, Artifact] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=dict)
    dropped: int = 0

    def _drop(self, n: int = 1) -> None:
        self.dropped = min(MAX_DROPPED, self.dropped + n)

    def add_hparams(self, hparams: Any) -> None:
        if not isinstance(hparams, Mapping):
            self._drop()
            return
        for name, raw in flat_hparams(hparams):
            value = _hparam_value(raw)
            key = metric_name(name)
            if (
                key is None
                or value is ...
                or (key not in self.hparams and len(self.hparams) >= MAX_HPARAMS)
            ):
                self._drop()
                continue
            self.hparams[key] = value

    def add_checkpoint(self, checkpoint: Any, *, source: str = "report") -> None:
        path = written_path(checkpoint.get("path")) if isinstance(checkpoint, Mapping) else None
        if path is None:
            self._drop()
            return
        assert isinstance(checkpoint, Mapping)
        metrics: dict[str, float] = {}
        raw_metrics = checkpoint.get("metrics")
        for name, value in raw_metrics.items() if isinstance(raw_metrics, Mapping) else []:
            number, key = finite(value), metric_name(name)
            if key is not None and number is not None and len(metrics) < MAX_CHECKPOINT_METRICS:
                metrics[key] = number
        self.checkpoints = [c for c in self.checkpoints if c.path != path]  # saved again
        self.checkpoints.append(
            Checkpoint(
                path,
                count(checkpoint.get("step")),
                finite(checkpoint.get("time"), low=0),
                metrics,
                source,
            )
        )
        if len(self.checkpoints) > MAX_CHECKPOINTS:
            del self.checkpoints[0]
            self._drop()

    def add_artifact(self, artifact: Any) -> None:
        path = written_path(artifact.get("path")) if isinstance(artifact, Mapping) else None
        if path is None:
            self._drop()
            return
        assert isinstance(artifact, Mapping)
        name = metric_name(artifact.get("name") or path.rstrip("/").rpartition("/")[2][:64])
        if name is None or (name not in self.artifacts and len(self.artifacts) >= MAX_ARTIFACTS):
            self._drop()
            return
        self.artifacts[name] = Artifact(name, path, finite(artifact.get("time"), low=0))

    def add_modes(self, modes: Any) -> None:
        if not isinstance(modes, Mapping):
            self._drop()
            return
        for name, mode in modes.items():
            key = metric_name(name)
            if (
                key is None
                or mode not in MODES
                or (key not in self.modes and len(self.modes) >= MAX_METRICS)
            ):
                self._drop()
                continue
            self.modes[key] = mode

    def add_files(self, found: RunRecord) -> None:
        """What the libraries wrote in the log directory, under what the job reported:
        a reported hparam wins, a checkpoint reported already is not listed twice."""
        for name, value in found.hparams.items():
            if name not in self.hparams and len(self.hparams) < MAX_HPARAMS:
                self.hparams[name] = value
        reported = {c.path for c in self.checkpoints}
        extra = [c for c in found.checkpoints if c.path not in reported]
        self.checkpoints = sorted(self.checkpoints + extra, key=lambda c: c.time or 0)[
            -MAX_CHECKPOINTS:
        ]

    def to_wire(self) -> dict[str, Any]:
        return {
            "hparams": dict(self.hparams),
            "checkpoints": [c.to_wire() for c in self.checkpoints],
            "artifacts": [a.to_wire() for a in self.artifacts.values()],
            "modes": dict(self.modes),
            "dropped": self.dropped,
        }


class RunLog:
    """A run's record from its output lines, fed in order (``feed``)."""

    def __init__(self) -> None:
        self.record = RunRecord()

    def feed(self, lines: Iterable[str]) -> None:
        for line in lines:
            text = line.lstrip("\r")
            if not text.startswith(RUN_MARK):
                continue
            if len(text) > MAX_LINE:
                self.record._drop()
                continue
            try:
                said = load_json(text[len(RUN_MARK) :].encode(), field="run", what="run_line")
            except JobSpecInvalid:  # not JSON, nested too deep, not plain
                self.record._drop()
                continue
            if not isinstance(said, dict):
                self.record._drop()
                continue
            if "hparams" in said:
                self.record.add_hparams(said["hparams"])
            if "checkpoint" in said:
                self.record.add_checkpoint(said["checkpoint"])
            if "artifact" in said:
                self.record.add_artifact(said["artifact"])
            if "mode" in said:
                self.record.add_modes(said["mode"])


def run_wire(
    record: RunRecord, progress: Mapping[str, Any] | None, history: Mapping[str, Any]
) -> dict[str, Any]:
    """The body of ``GET jobs/{name}/run``: the record, and the metrics (each one's final
    or latest value, and its history)."""
    final = dict((progress or {}).get("metrics") or {})
    return {**record.to_wire(), "metrics": {"final": final, "history": dict(history)}}
