"""Comparing jobs by what the runs were: the hyperparameters they reported
(``report(hparams=...)``, Lightning's ``hparams.yaml``) that differ, then the fields of
their specs that differ, then their final or latest metrics, the best value of each
marked (``GET compare``). Best only for a metric: never for a name some run reported as
a hyperparameter (``lr`` logged as a scalar too) nor one of ``NOT_SCORED``, and never on
a tie; which way is better comes from ``report(mode={"acc": "max"})``, else the name.

Pure: it works on what the API already sends (each job's wire form and its job
body read back from the manifest), so every backend and kind compares alike.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import FieldError, JobSpecInvalid
from .messages import msg

#: The fewest and the most jobs one comparison holds (a column each).
MIN_COMPARED = 2
MAX_COMPARED = 20
#: A metric whose name holds one of these is better lower; any other, higher.
LOWER_IS_BETTER = ("loss", "error")
#: Logged like metrics, but settings or counters: no value of theirs is "best".
NOT_SCORED = frozenset(
    {"lr", "learning_rate", "epoch", "step", "global_step", "grad_norm", "total_flos"}
)
#: Job-body fields that are maps of the user's own keys: compared key by key.
_MAPS = ("env", "labels", "annotations", "nodeSelector")
#: Job-body fields that name the job rather than configure it.
_NOT_PARAMETERS = ("name",)


@dataclass(frozen=True)
class ComparedJob:
    """One job of a comparison: its wire form (``JobInfo.to_wire``), its job body read
    back from its manifest (None when it cannot be) and its run record's ``hparams`` and
    ``modes`` (``RunRecord.to_wire``; None when there is none)."""

    wire: Mapping[str, Any]
    spec: Mapping[str, Any] | None
    run: Mapping[str, Any] | None = None


def compared_names(names: Sequence[str]) -> list[str]:
    """The ``job`` query arguments of ``GET compare``: 2..20 distinct names, or
    ``JobSpecInvalid`` naming field ``job``."""
    if len(names) < MIN_COMPARED:
        raise JobSpecInvalid([FieldError("job", msg("compare_few", minimum=MIN_COMPARED))])
    if len(names) > MAX_COMPARED:
        raise JobSpecInvalid([FieldError("job", msg("compare_many", maximum=MAX_COMPARED))])
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise JobSpecInvalid([FieldError("job", msg("compare_repeated", job=repr(repeated[0])))])
    return list(names)


def lower_is_better(metric: str) -> bool:
    """Whether lower values of a metric are better (losses and errors)."""
    lowered = metric.lower()
    return any(word in lowered for word in LOWER_IS_BETTER)


def _parameters(spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """A job body flattened to comparable rows: maps key by key (``env.LR``)."""
    rows: dict[str, Any] = {}
    for field, value in (spec or {}).items():
        if field in _NOT_PARAMETERS:
            continue
        if field in _MAPS and isinstance(value, Mapping):
            for key, item in value.items():
                rows[f"{field}.{key}"] = item
        else:
            rows[field] = value
    return rows


def _same(values: Sequence[Any]) -> bool:
    first = json.dumps(values[0], sort_keys=True)
    return all(json.dumps(v, sort_keys=True) == first for v in values[1:])


def differing_hparams(runs: Sequence[Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    """``[{name, values}]`` for each reported hyperparameter whose value is not the same
    in every run (absent counts as null), in the order the runs reported them."""
    hparams = [dict((run or {}).get("hparams") or {}) for run in runs]
    names: dict[str, None] = {}
    for each in hparams:
        names.update(dict.fromkeys(each))
    rows = []
    for name in names:
        values = [each.get(name) for each in hparams]
        if not _same(values):
            rows.append({"name": name, "values": values})
    return rows


def differing_parameters(specs: Sequence[Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    """``[{field, values}]`` for each parameter whose value is not the same in every
    job (absent counts as null), in the job body's field order."""
    flat = [_parameters(spec) for spec in specs]
    fields: dict[str, None] = {}
    for rows in flat:
        fields.update(dict.fromkeys(rows))
    differing = []
    for field in fields:
        values = [rows.get(field) for rows in flat]
        if not _same(values):
            differing.append({"field": field, "values": values})
    return differing


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def compared_metrics(
    progresses: Sequence[Mapping[str, Any] | None],
    runs: Sequence[Mapping[str, Any] | None] = (),
) -> list[dict[str, Any]]:
    """``[{name, values, lowerIsBetter, scored, best}]`` per metric any job has: each
    job's latest value (null when it has none) and the index of the single best one
    (null when no job has a value, when two share it, or when the metric is not
    ``scored``: a reported hyperparameter, or one of ``NOT_SCORED``); key metrics first,
    then as the jobs report them. ``runs`` give the hyperparameters' names and each
    metric's ``mode`` (the first run that says wins)."""
    metrics = [dict((p or {}).get("metrics") or {}) for p in progresses]
    reported: dict[str, None] = {}
    for job_metrics in metrics:
        reported.update(dict.fromkeys(job_metrics))
    keys = [(p or {}).get("keyMetric") for p in progresses]
    names = dict.fromkeys([k for k in keys if isinstance(k, str) and k in reported])
    names.update(reported)
    hparams: set[str] = set()
    modes: dict[str, str] = {}
    for run in runs:
        hparams.update((run or {}).get("hparams") or {})
        for name, mode in ((run or {}).get("modes") or {}).items():
            modes.setdefault(name, mode)
    compared = []
    for name in names:
        values = [_number(m.get(name)) for m in metrics]
        lower = modes[name] == "min" if name in modes else lower_is_better(name)
        scored = name not in hparams and name not in NOT_SCORED
        present = [v for v in values if v is not None]
        best = None
        if scored and present:
            top = min(present) if lower else max(present)
            if present.count(top) == 1:  # a tie marks nobody
                best = values.index(top)
        compared.append(
            {"name": name, "values": values, "lowerIsBetter": lower, "scored": scored, "best": best}
        )
    return compared


def compare_jobs(jobs: Sequence[ComparedJob]) -> dict[str, Any]:
    """The answer of ``GET compare``: ``{jobs, hparams, parameters, metrics}``, one
    column per job in the order given."""
    return {
        "jobs": [
            {
                "name": job.wire["name"],
                "state": job.wire["state"],
                "duration": job.wire.get("duration"),
                "logdir": job.wire.get("logdir"),
            }
            for job in jobs
        ],
        "hparams": differing_hparams([job.run for job in jobs]),
        "parameters": differing_parameters([job.spec for job in jobs]),
        "metrics": compared_metrics(
            [job.wire.get("progress") for job in jobs], [job.run for job in jobs]
        ),
    }
