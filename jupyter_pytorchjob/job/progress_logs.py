"""Progress from what a training script already prints, line by line (pure, no I/O):

* tqdm bars - ``45%|████▌     | 450/1000 [01:23<01:42, 5.40it/s, loss=0.23]``, also
  each ``\\r`` redraw (the local log pump makes each its own line), also with a
  ``desc`` prefix such as Lightning's ``Epoch 3:``;
* Hugging Face Trainer's dict lines - ``{'loss': 0.23, 'learning_rate': 2e-05,
  'epoch': 1.5}`` (read with a regular expression, never ``eval``: a hostile line costs
  linear time at most);
* Lightning's rich progress bar - ``Epoch 3/9 ━━━━━━ 450/1000 0:01:23 • 0:01:42
  5.40it/s v_num: 0 loss: 0.23``;
* ``epoch N/M``-style lines - ``Epoch 2/10``, ``[epoch 2 of 10] loss=0.5``.

A line longer than ``MAX_LINE`` is not read at all; what a line says is bounded by
``ProgressReading`` (absurd numbers dropped), so a hostile line changes nothing but that
job's own progress.
"""

from __future__ import annotations

import re
from typing import Any

from .progress import DroppedNames, ProgressReading, ProgressSource, count, set_metrics

MAX_LINE = 16 * 1024
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_CLOCK = r"(?:\d+:)?\d+:\d+"

# tqdm's default bar: "[desc: ] 45%|bar| 450/1000 [01:23<01:42, 5.40it/s, postfix]"
TQDM = re.compile(
    rf"(?P<percent>\d{{1,3}})%\|[^|]{{0,200}}\|\s*(?P<n>\d+(?:\.\d+)?)[a-zA-Z]*/"
    rf"(?P<total>\d+(?:\.\d+)?)[a-zA-Z]*\s*\[(?P<elapsed>{_CLOCK})<(?P<left>{_CLOCK}|\?)"
    r"(?P<rest>[^\]]{0,2000})\]"
)
# tqdm without a total: "450it [01:23, 5.40it/s]"
TQDM_OPEN = re.compile(rf"(?P<n>\d+)it \[(?P<elapsed>{_CLOCK})(?P<rest>[^\]]{{0,2000}})\]")
# Lightning's rich bar: "Epoch 3/9 ━━━ 450/1000 0:01:23 • 0:01:42 5.40it/s loss: 0.23"
RICH = re.compile(
    rf"(?P<n>\d+)/(?P<total>\d+)\s+(?P<elapsed>{_CLOCK})\s+•\s+(?P<left>{_CLOCK}|-:--:--)"
    r"(?P<rest>.{0,2000})$"
)
# Hugging Face Trainer: "{'loss': 0.23, 'learning_rate': 2e-05, 'epoch': 1.5}"
HF_LINE = re.compile(r"^\s*\{\s*'[^']{1,64}':\s*[-+.\d]")
HF_PAIR = re.compile(rf"'(?P<name>[^'\s]{{1,64}})':\s*(?P<value>{NUMBER})(?=\s*[,}}])")
# "Epoch 2/10", "epoch 2 of 10", "Epoch [2/10]", and Lightning's "Epoch 3:" (0-based)
EPOCH = re.compile(r"\bepoch\s*\[?\s*(?P<n>\d+)\s*(?:/|\bof\b)\s*(?P<total>\d+)\]?", re.IGNORECASE)
LIGHTNING_EPOCH = re.compile(r"^\s*Epoch (?P<n>\d+):")
# "name=0.5" / "name: 0.5" pairs after a bar or on an epoch line
PAIR = re.compile(rf"(?P<name>[A-Za-z_][\w/.-]{{0,63}})\s*[=:]\s*(?P<value>{NUMBER})(?![\w:])")
# Pairs that describe the bar itself, not the model.
NOT_METRICS = frozenset({"v_num", "it", "s"})


def clock_seconds(text: str) -> float | None:
    """``01:42`` / ``1:02:03`` -> seconds; ``?`` -> None."""
    parts = text.split(":")
    if not all(p.isdigit() for p in parts):
        return None
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + int(part)
    return seconds


def pairs(text: str) -> dict[str, str]:
    """``loss=0.23, acc: 0.9`` -> each metric's value as printed (the bar's own rate and
    counters left out)."""
    return {m["name"]: m["value"] for m in PAIR.finditer(text) if m["name"] not in NOT_METRICS}


def printed(metrics: dict[str, str], when: float, **fields: Any) -> ProgressReading:
    """A log line's reading: its printed metrics as numbers, and as printed."""
    return ProgressReading(
        ProgressSource.LOGS,
        when,
        metrics={name: float(text) for name, text in metrics.items()},
        metric_texts=metrics,
        **fields,
    )


def parse_line(text: str, when: float) -> ProgressReading | None:
    """What one log line says about progress, or None when it says nothing."""
    if len(text) > MAX_LINE:
        return None
    if HF_LINE.match(text):
        texts = {m["name"]: m["value"] for m in HF_PAIR.finditer(text)}
        hf_epoch, step = texts.pop("epoch", None), texts.pop("step", None)
        hf = printed(
            texts,
            when,
            epoch=None if hf_epoch is None else float(hf_epoch),
            step=None if step is None else count(float(step)),
        )
        return None if hf.empty else hf
    reading = _bar(text, when)
    epoch = EPOCH.search(text)
    if epoch is not None:
        # Also an "Epoch 2/10 ... loss=0.5" line with no bar: its pairs are metrics.
        reading = reading or printed(pairs(text[epoch.end() :]), when)
        reading.epoch = float(epoch["n"])
        reading.total_epochs = float(epoch["total"])
    elif reading is not None and (lightning := LIGHTNING_EPOCH.match(text)):
        reading.epoch = float(lightning["n"])
    if reading is None:
        return None
    # Made sane again: the epoch fields were set after construction.
    reading.__post_init__()
    return None if reading.empty else reading


def _bar(text: str, when: float) -> ProgressReading | None:
    """A tqdm or rich progress bar on the line, if any."""
    if "|" in text and (bar := TQDM.search(text)) is not None:
        return printed(
            pairs(bar["rest"]),
            when,
            percent=float(bar["percent"]),
            eta_seconds=clock_seconds(bar["left"]),
            step=_int(bar["n"]),
            total_steps=_int(bar["total"]),
        )
    if "•" in text and (bar := RICH.search(text)) is not None:
        return printed(
            pairs(bar["rest"]),
            when,
            eta_seconds=clock_seconds(bar["left"]),
            step=int(bar["n"]),
            total_steps=int(bar["total"]),
        )
    if "it [" in text and (bar := TQDM_OPEN.search(text)) is not None:
        return printed(pairs(bar["rest"]), when, step=int(bar["n"]))
    return None


def _int(text: str) -> int | None:
    number = float(text)
    return int(number) if number.is_integer() else None


class LogProgress:
    """The latest progress a log's lines gave, line after line (``feed``)."""

    def __init__(self) -> None:
        self.reading: ProgressReading | None = None
        # (time, step, metrics) of each line with metrics since the last
        # ``take_metrics`` (for the history).
        self.metric_lines: list[tuple[float, int | None, dict[str, float]]] = []
        # A log printing fresh names line after line keeps its first MAX_METRICS and
        # counts the others.
        self.dropped = DroppedNames()

    def feed(self, text: str, when: float) -> bool:
        """Read one line; whether it said anything."""
        reading = parse_line(text, when)
        if reading is None:
            return False
        previous = self.reading
        own = dict(reading.metrics)
        if previous is not None:
            # A dict line without a step keeps the bar's step; metrics accumulate.
            if reading.step is None and reading.total_steps is None:  # no bar on it
                # What the line says itself stands: an "Epoch 5/5" line's own percent
                # (from its epochs) is newer than the bar's before it.
                for name in ("percent", "eta_seconds", "step", "total_steps"):
                    if getattr(reading, name) is None:
                        setattr(reading, name, getattr(previous, name))
            for name in ("epoch", "total_epochs"):
                if getattr(reading, name) is None:
                    setattr(reading, name, getattr(previous, name))
            fresh, fresh_texts = reading.metrics, reading.metric_texts
            reading.metrics = dict(previous.metrics)
            reading.metric_texts = dict(previous.metric_texts)
            reading.dropped_names.extend(set_metrics(reading, fresh, fresh_texts))
        self.dropped.add(reading.dropped_names)
        reading.dropped_metrics = len(self.dropped)
        if own:
            self.metric_lines.append((when, reading.step, own))
            del self.metric_lines[:-1000]  # bounded between two takes
        self.reading = reading
        return True

    def take_metrics(self) -> list[tuple[float, int | None, dict[str, float]]]:
        taken, self.metric_lines = self.metric_lines, []
        return taken
