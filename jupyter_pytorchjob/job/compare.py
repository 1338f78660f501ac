"""Comparing jobs: the hyperparameters that differ between their specs and their
final or latest metrics, the best value of each marked (``GET compare``).

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

#: The fewest and the most jobs one comparison holds (a column each).
MIN_COMPARED = 2
MAX_COMPARED = 20
#: A metric whose name holds one of these is better lower; any other, higher.
LOWER_IS_BETTER = ("loss", "error")
#: Job-body fields that are maps of the user's own keys: compared key by key.
_MAPS = ("env", "labels", "annotations", "nodeSelector")
#: Job-body fields that name the job rather than configure it.
_NOT_PARAMETERS = ("name",)


@dataclass(frozen=True)
class ComparedJob:
    """One job of a comparison: its wire form (``JobInfo.to_wire``) and its job body
    read back from its manifest (None when it cannot be)."""

    wire: Mapping[str, Any]
    spec: Mapping[str, Any] | None


def compared_names(names: Sequence[str]) -> list[str]:
    """The ``job`` query arguments of ``GET compare``: 2..20 distinct names, or
    ``JobSpecInvalid`` naming field ``job``."""
    if len(names) < MIN_COMPARED:
        raise JobSpecInvalid(
            [FieldError("job", f"name at least {MIN_COMPARED} jobs: ?job=a&job=b")]
        )
    if len(names) > MAX_COMPARED:
        raise JobSpecInvalid([FieldError("job", f"at most {MAX_COMPARED} jobs in one comparison")])
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise JobSpecInvalid([FieldError("job", f"each job once; {repeated[0]!r} is repeated")])
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


def compared_metrics(progresses: Sequence[Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    """``[{name, values, lowerIsBetter, best}]`` per metric any job has: each job's
    latest value (null when it has none) and the index of the best one (null when no
    job has a value); key metrics first, then as the jobs report them."""
    metrics = [dict((p or {}).get("metrics") or {}) for p in progresses]
    reported: dict[str, None] = {}
    for job_metrics in metrics:
        reported.update(dict.fromkeys(job_metrics))
    keys = [(p or {}).get("keyMetric") for p in progresses]
    names = dict.fromkeys([k for k in keys if isinstance(k, str) and k in reported])
    names.update(reported)
    compared = []
    for name in names:
        values = [_number(m.get(name)) for m in metrics]
        lower = lower_is_better(name)
        present = [(v, i) for i, v in enumerate(values) if v is not None]
        best = None
        if present:
            # min and max keep the first of equal values: the first job wins a tie.
            best = (min if lower else max)(present, key=lambda value_index: value_index[0])[1]
        compared.append({"name": name, "values": values, "lowerIsBetter": lower, "best": best})
    return compared


def compare_jobs(jobs: Sequence[ComparedJob]) -> dict[str, Any]:
    """The answer of ``GET compare``: ``{jobs, parameters, metrics}``, one column per
    job in the order given."""
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
        "parameters": differing_parameters([job.spec for job in jobs]),
        "metrics": compared_metrics([job.wire.get("progress") for job in jobs]),
    }
