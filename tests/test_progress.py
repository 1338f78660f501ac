"""The progress model: readings made sane, merged best source first, bounded history,
and the wire shape the OpenAPI document promises."""

from __future__ import annotations

import itertools
import math
from typing import Any

from jsonschema import Draft202012Validator

from jupyter_pytorchjob.job.progress import (
    MAX_METRICS,
    JobProgress,
    MetricHistory,
    ProgressReading,
    ProgressSource,
    merge,
    progress_wire,
)

from .test_openapi import DOC, inline

PROGRESS_SCHEMA = inline(DOC["components"]["schemas"]["Progress"])
DETAIL_SCHEMA = inline(DOC["components"]["schemas"]["ProgressDetail"])


def valid(schema: dict[str, Any], value: Any) -> list[str]:
    return [e.message for e in Draft202012Validator(schema).iter_errors(value)]


def test_a_reading_keeps_only_sane_numbers() -> None:
    reading = ProgressReading(
        ProgressSource.LOGS,
        1.0,
        percent=1e300,
        eta_seconds=-5,
        step=10**40,
        total_steps=10**40,
        epoch=math.nan,
        metrics={"loss": math.inf, "acc": True, "x" * 65: 1.0, "ok": 0.5},  # type: ignore[dict-item]
    )
    assert reading.percent is None and reading.eta_seconds is None
    assert reading.step is None and reading.total_steps is None and reading.epoch is None
    assert reading.metrics == {"ok": 0.5}


def test_percent_comes_from_steps_or_epochs_when_not_given() -> None:
    assert ProgressReading(ProgressSource.LOGS, 1, step=25, total_steps=100).percent == 25
    assert ProgressReading(ProgressSource.LOGS, 1, epoch=1.5, total_epochs=3).percent == 50
    # A step past its total is not believed as a total.
    assert ProgressReading(ProgressSource.LOGS, 1, step=7, total_steps=5).percent is None


def test_merge_takes_each_field_from_the_best_source_that_has_it() -> None:
    report = ProgressReading(ProgressSource.REPORT, 5, percent=40, metrics={"loss": 0.3})
    logs = ProgressReading(
        ProgressSource.LOGS, 9, step=45, total_steps=100, metrics={"loss": 0.9, "lr": 1e-3}
    )
    board = ProgressReading(ProgressSource.TENSORBOARD, 2, metrics={"accuracy": 0.8})
    progress = merge([board, None, logs, report])
    assert progress is not None
    assert progress.source is ProgressSource.REPORT
    assert progress.percent == 40 and progress.step == 45 and progress.total_steps == 100
    assert progress.metrics == {"accuracy": 0.8, "loss": 0.3, "lr": 1e-3}
    assert progress.updated == 9
    assert merge([None, ProgressReading(ProgressSource.LOGS, 1)]) is None


def test_key_metric_is_loss_then_eval_loss_then_accuracy_else_the_first() -> None:
    def key(metrics: dict[str, float]) -> str | None:
        return JobProgress(ProgressSource.REPORT, 1, metrics=metrics).key_metric

    assert key({"lr": 1, "accuracy": 2, "loss": 3}) == "loss"
    assert key({"lr": 1, "accuracy": 2, "eval_loss": 3}) == "eval_loss"
    assert key({"lr": 1, "accuracy": 2}) == "accuracy"
    assert key({"lr": 1, "mse": 2}) == "lr"
    assert key({}) is None


def test_the_wire_shape_is_the_documented_one_and_round_trips() -> None:
    progress = merge(
        [ProgressReading(ProgressSource.LOGS, 3, step=1, total_steps=4, metrics={"loss": 1})]
    )
    assert progress is not None
    wire = progress.to_wire()
    assert valid(PROGRESS_SCHEMA, wire) == []
    assert wire["keyMetric"] == "loss" and wire["percent"] == 25 and wire["source"] == "logs"
    assert JobProgress.from_wire(wire) == progress
    history = MetricHistory()
    history.add(3, 1, progress.metrics)
    assert valid(DETAIL_SCHEMA, progress_wire(progress, history)) == []
    assert progress_wire(None, None) == {"progress": None, "history": {}}


def test_history_is_bounded_and_thinned_evenly() -> None:
    history = MetricHistory(max_points=100)
    for step in range(10_000):
        history.add(float(step), step, {"loss": 1 / (step + 1)})
    points = history.series["loss"]
    assert len(points) <= 100
    assert points[0].step == 0 and points[-1].step == 9_999
    steps = [p.step or 0 for p in points[:-1]]
    gaps = {b - a for a, b in itertools.pairwise(steps)}
    assert len(gaps) == 1, gaps  # evenly spread (the newest may be closer)
    for index in range(2 * MAX_METRICS):
        history.add(1, 1, {f"m{index}": 1})
    assert len(history.series) == MAX_METRICS
    # The same value at the same step read again adds nothing.
    before = len(history.series["loss"])
    history.add(20_000, 9_999, {"loss": points[-1].value})
    assert len(history.series["loss"]) == before
