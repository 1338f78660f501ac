"""The progress model: readings made sane, merged best source first, bounded history,
and the wire shape the OpenAPI document promises."""

from __future__ import annotations

import itertools
import math
import os
import struct
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from jupyter_pytorchjob import report
from jupyter_pytorchjob.backends.progress import BARS_PER_READ, ProgressSources, candidate_lines
from jupyter_pytorchjob.backends.tfevents import EventFileReader, LogdirScalars, masked_crc32c
from jupyter_pytorchjob.job.progress import (
    MAX_DROPPED,
    MAX_METRICS,
    JobProgress,
    MetricHistory,
    ProgressReading,
    ProgressSource,
    merge,
    progress_wire,
)
from jupyter_pytorchjob.job.progress_logs import LogProgress, parse_line

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


# -- log lines --------------------------------------------------------------------------

LINES = {
    " 45%|████▌     | 450/1000 [01:23<01:42, 5.40it/s, loss=0.23]": dict(
        percent=45, step=450, total_steps=1000, eta_seconds=102, metrics={"loss": 0.23}
    ),
    "Epoch 3:  45%|████▌     | 450/1000 [01:23<01:42, 5.40it/s, v_num=0, train_loss=0.230]": dict(
        epoch=3, step=450, metrics={"train_loss": 0.23}
    ),
    "{'loss': 0.23, 'learning_rate': 2e-05, 'epoch': 1.5}": dict(
        epoch=1.5, metrics={"loss": 0.23, "learning_rate": 2e-05}
    ),
    "Epoch 3/9 ━━━━━━━━━ 450/1000 0:01:23 • 0:01:42 5.40it/s v_num: 0 loss: 0.23": dict(
        epoch=3, total_epochs=9, step=450, eta_seconds=102, metrics={"loss": 0.23}
    ),
    "Epoch 2/10 loss=0.5 acc: 0.8": dict(percent=20, epoch=2, metrics={"loss": 0.5, "acc": 0.8}),
    "450it [01:23, 5.40it/s]": dict(step=450, percent=None),
}


def test_log_lines_of_tqdm_hugging_face_lightning_and_epochs() -> None:
    for line, expected in LINES.items():
        reading = parse_line(line, 1.0)
        assert reading is not None, line
        for name, value in expected.items():
            assert getattr(reading, name) == value, (line, name, getattr(reading, name))
    for line in ("hello", "Epoch 1: validation done", "took 3 s, 5 s/it", "50% done"):
        assert parse_line(line, 1.0) is None, line


def test_hostile_log_lines_say_nothing_absurd() -> None:
    """A 10 MB line, absurd numbers, NaN and deep nesting: nothing insane comes out
    (and nothing takes more than linear time: a backtracking regex would hang here)."""
    hostile = [
        "x" * (10 << 20),
        "%|" * 8000,
        "{'" * 8000,
        "1%|" + "|" * 5000 + " 1/" + "9" * 5000,
        "100%|#| 99999999999999999999/1 [00:00<00:00, 1e300it/s, loss=1e999]",
        "7%|#| 7/100 [99999:00<99999999999:00, 1.0it/s, loss=nan]",
        "{'loss': 1e400, 'epoch': -3, '" + "a" * 100 + "': 1}",
        "epoch 99999999999999999999/1",
        "Epoch 5/3 " + "loss=1" * 5000,
    ]
    for line in hostile:
        for chunk in (line, line[: 16 * 1024]):
            reading = parse_line(chunk, 1.0)
            if reading is None:
                continue
            assert reading.percent is None or 0 <= reading.percent <= 100
            assert reading.eta_seconds is None or 0 <= reading.eta_seconds <= 1e9
            assert reading.step is None or reading.step <= 1e15
            assert all(math.isfinite(v) for v in reading.metrics.values())
            assert len(reading.metrics) <= MAX_METRICS


def test_a_log_keeps_the_bar_while_dict_lines_add_metrics() -> None:
    log = LogProgress()
    assert log.feed(" 10%|#  | 10/100 [00:01<00:09, 10it/s]", 1.0)
    assert log.feed("{'loss': 0.5, 'epoch': 0.1}", 2.0)
    assert not log.feed("some other output", 3.0)
    assert log.reading is not None
    assert (log.reading.step, log.reading.percent, log.reading.metrics) == (10, 10, {"loss": 0.5})
    assert log.take_metrics() == [(2.0, 10, {"loss": 0.5})]
    assert log.take_metrics() == []


def test_a_printed_metric_keeps_its_text_through_the_merge_and_the_wire() -> None:
    """``loss=0.0000`` stays ``0.0000``: the frontend shows a log metric as printed,
    not as the number it parses to (issue 32)."""
    log = LogProgress()
    assert log.feed(" 10%|#  | 10/100 [00:01<00:09, 10it/s, loss=0.0000, lr=2e-05]", 1.0)
    assert log.feed("{'eval_loss': 0.2500, 'epoch': 0.1}", 2.0)
    assert log.feed("Epoch 2/10 acc=0.900", 3.0)
    assert log.reading is not None
    assert log.reading.metrics == {"loss": 0.0, "lr": 2e-05, "eval_loss": 0.25, "acc": 0.9}
    texts = {"loss": "0.0000", "lr": "2e-05", "eval_loss": "0.2500", "acc": "0.900"}
    assert log.reading.metric_texts == texts
    # A newer line's value brings its own text.
    assert log.feed(" 20%|##  | 20/100 [00:02<00:08, 10it/s, loss=0.10]", 4.0)
    assert log.reading.metric_texts["loss"] == "0.10"
    # The best source's value wins with its text, or none: a report's number has none.
    report_reading = ProgressReading(ProgressSource.REPORT, 5, metrics={"loss": 0.3})
    progress = merge([log.reading, report_reading])
    assert progress is not None
    assert progress.metrics["loss"] == 0.3 and "loss" not in progress.metric_texts
    assert progress.metric_texts["eval_loss"] == "0.2500"
    wire = progress.to_wire()
    assert wire["metricTexts"] == {"lr": "2e-05", "eval_loss": "0.2500", "acc": "0.900"}
    assert valid(PROGRESS_SCHEMA, wire) == []
    assert JobProgress.from_wire(wire) == progress
    # What job.json kept before texts existed still reads.
    del wire["metricTexts"]
    assert JobProgress.from_wire(wire).metric_texts == {}


def test_a_metric_text_is_kept_only_for_a_kept_metric_and_short() -> None:
    reading = ProgressReading(
        ProgressSource.LOGS,
        1.0,
        metrics={"loss": 0.5, "acc": math.nan, "x" * 65: 1.0},
        metric_texts={"loss": "0.5000", "acc": "nan", "x" * 65: "1", "gone": "3"},
    )
    assert reading.metric_texts == {"loss": "0.5000"}
    long = "0." + "0" * 40
    assert parse_line(f"Epoch 1/2 loss={long}", 1.0).metric_texts == {}  # type: ignore[union-attr]


def test_epoch_lines_move_the_percent_on() -> None:
    """Each "Epoch N/M" line says its own percent; none is stuck at the first one's."""
    log = LogProgress()
    for epoch in range(1, 6):
        assert log.feed(f"Epoch {epoch}/5 loss={1 / epoch:.2f}", float(epoch))
    assert log.reading is not None
    assert (log.reading.epoch, log.reading.total_epochs, log.reading.percent) == (5, 5, 100)
    # After a bar too: the epoch line's percent, the bar's step kept.
    assert log.feed(" 10%|#  | 10/100 [00:01<00:09, 10it/s]", 6.0)
    assert log.feed("Epoch 2/5", 7.0)
    assert (log.reading.percent, log.reading.step) == (40, 10)


# -- TensorBoard event files --------------------------------------------------------------


def write_events(path: Path, scalars: list[tuple[str, int, float]]) -> None:
    """Event records as TensorBoard's writer frames them (TFRecord: length, its masked
    CRC32C, data, data CRC), the Event and Summary protobufs built with tensorboard's own
    generated classes (the reader under test is ours)."""
    from tensorboard.compat.proto.event_pb2 import Event

    with path.open("ab") as f:
        for tag, step, value in scalars:
            event = Event(wall_time=1000.0 + step, step=step)
            event.summary.value.add(tag=tag, simple_value=value)
            data = event.SerializeToString()
            header = struct.pack("<Q", len(data))
            f.write(header + struct.pack("<I", masked_crc32c(header)) + data + b"\0\0\0\0")


def test_event_files_are_read_from_the_last_offset_and_a_torn_record_waits(
    tmp_path: Path,
) -> None:
    run = tmp_path / "train"
    run.mkdir()
    events = run / "events.out.tfevents.1.host"
    write_events(events, [("loss", 1, 0.5), ("loss", 2, 0.25)])
    scalars = LogdirScalars(tmp_path, rescan_every=1)
    assert [(s.tag, s.step, s.value) for s in scalars.read()] == [
        ("train/loss", 1, 0.5),
        ("train/loss", 2, 0.25),
    ]
    assert scalars.read() == []  # nothing new: nothing read again
    whole = events.read_bytes()
    write_events(events, [("acc", 3, 0.75)])
    added = events.read_bytes()[len(whole) :]
    events.write_bytes(whole + added[:7])  # a record still being written
    assert scalars.read() == []
    events.write_bytes(whole + added)
    assert [(s.tag, s.value) for s in scalars.read()] == [("train/acc", 0.75)]
    # A new reader at a kept offset reads only what came after it.
    reader = EventFileReader(events, offset=len(whole))
    assert [s.step for s in reader.read()] == [3]


def test_a_file_that_is_no_tfrecord_stops_only_itself(tmp_path: Path) -> None:
    (tmp_path / "events.out.tfevents.bad").write_bytes(os.urandom(4096))
    write_events(tmp_path / "events.out.tfevents.good", [("loss", 1, 0.5)])
    scalars = LogdirScalars(tmp_path)
    assert [(s.tag, s.value) for s in scalars.read()] == [("loss", 0.5)]
    bad = scalars.readers[tmp_path / "events.out.tfevents.bad"]
    assert bad.broken is not None and scalars.read() == []


# -- the reporter ---------------------------------------------------------------------------


def test_the_reporter_is_silent_without_an_endpoint_and_never_raises(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("KUBEFLOW_TRAINER_SERVER_URL", "KUBEFLOW_TRAINER_SERVER_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert report(progress=10, loss=0.5) is False
    # An endpoint nobody serves, a token file that is missing, values that are no numbers.
    monkeypatch.setenv("KUBEFLOW_TRAINER_SERVER_URL", "http://127.0.0.1:9/x")
    monkeypatch.setenv("KUBEFLOW_TRAINER_SERVER_TOKEN", str(tmp_path / "missing"))
    assert report(progress=100, loss="not a number") is False
    (tmp_path / "token").write_text("t")
    monkeypatch.setenv("KUBEFLOW_TRAINER_SERVER_TOKEN", str(tmp_path / "token"))
    assert report(progress=100, eta=float("nan")) is False
    monkeypatch.setenv("RANK", "1")
    assert report(progress=100) is False


def test_a_read_parses_every_dict_line_and_a_bounded_spread_of_bar_redraws() -> None:
    stamp = b"2026-01-01T00:00:00.000000Z "
    bars = [
        stamp + f" {i // 100}%|#| {i}/10000 [00:01<00:09, 9it/s]".encode() for i in range(10_000)
    ]
    lines = [*bars[:5000], stamp + b"{'loss': 0.5}", stamp + b"plain", *bars[5000:]]
    chosen = candidate_lines(b"\n".join(lines) + b"\n")
    assert stamp + b"{'loss': 0.5}" in chosen and stamp + b"plain" not in chosen
    assert chosen[-1] == bars[-1]  # the newest redraw is always read
    assert len(chosen) <= BARS_PER_READ + 1
    assert chosen == sorted(chosen, key=lines.index)  # in the log's order


def test_the_first_event_file_is_found_by_the_next_read(tmp_path: Path) -> None:
    """A run's first scalars show at once, not only at the next periodic rescan."""
    scalars = LogdirScalars(tmp_path)  # rescans every 10 reads once it has files
    assert scalars.read() == []
    write_events(tmp_path / "events.out.tfevents.late", [("loss", 1, 0.5)])
    assert [(s.tag, s.value) for s in scalars.read()] == [("loss", 0.5)]


# -- bounded per job (#25 item 5) -------------------------------------------------------


def test_a_log_printing_fresh_metric_names_keeps_the_first_and_counts_the_rest() -> None:
    """A job printing a dict with fresh names on every line: its progress keeps the first
    MAX_METRICS names (their latest values), its history no more, and it says how many
    distinct names it left out - each counted once, up to MAX_DROPPED."""
    sources = ProgressSources(None)
    lines = [f"{{'loss': {1 / (i + 1)}, 'name_{i}': {i}}}" for i in range(3 * MAX_METRICS)]
    lines += lines[-10:]  # the same dropped names again: not counted twice
    data = "".join(f"2026-11-26T09:00:00.000000001Z {line}\n" for line in lines).encode()
    sources.feed_log(data)
    progress = sources.merged()
    assert progress is not None
    assert len(progress.metrics) == MAX_METRICS
    assert progress.metrics["loss"] == pytest.approx(1 / (3 * MAX_METRICS))
    assert "name_0" in progress.metrics and f"name_{MAX_METRICS}" not in progress.metrics
    assert progress.dropped_metrics == 3 * MAX_METRICS - (MAX_METRICS - 1)
    assert len(sources.history.series) == MAX_METRICS
    wire = progress.to_wire()
    assert wire["droppedMetrics"] == progress.dropped_metrics
    assert valid(PROGRESS_SCHEMA, wire) == []
    assert JobProgress.from_wire(wire) == progress
    # Past MAX_DROPPED the count stays there ("at least"), and so does the memory.
    many = "".join(
        f"2026-11-26T09:00:01.000000001Z {{'fresh_{i}': 1.0}}\n" for i in range(2 * MAX_DROPPED)
    )
    sources.feed_log(many.encode())
    progress = sources.merged()
    assert progress is not None and progress.dropped_metrics == MAX_DROPPED
    assert len(sources.logs.dropped) == MAX_DROPPED


def test_event_file_tags_are_bounded_in_number_and_length(tmp_path: Path) -> None:
    long_tag = "x" * 1000
    tags = [("loss", 1, 0.5), (long_tag, 1, 1.0)]
    tags += [(f"tag_{i}", 1, float(i)) for i in range(2 * MAX_METRICS)]
    write_events(tmp_path / "events.out.tfevents.many", tags)
    sources = ProgressSources(tmp_path)
    assert sources.read_board()
    progress = sources.merged()
    assert progress is not None
    assert len(progress.metrics) == MAX_METRICS and long_tag not in progress.metrics
    assert progress.dropped_metrics == 2 * MAX_METRICS + 2 - MAX_METRICS
    assert long_tag not in sources.history.series
    assert len(sources.history.series) == MAX_METRICS
    assert all(len(name) <= 64 for name in sources.history.series)
