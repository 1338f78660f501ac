"""Clone & edit: a job body for a new run of a job.

The clone is named after the job with the next free ``-N`` (``train`` -> ``train-2``,
``train-2`` -> ``train-3``), and a log directory naming the job is moved along
(``/mnt/logs/train`` -> ``/mnt/logs/train-2``), so the two runs do not write one
TensorBoard run.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

_NUMBERED = re.compile(r"^(?P<base>.+?)-(?P<n>\d+)$")


def clone_name(name: str, taken: Collection[str], max_length: int = 63) -> str:
    """``<job>-N`` with the smallest N >= 2 (after the job's own number) not taken,
    the base cut to fit ``max_length``."""
    numbered = _NUMBERED.match(name)
    base, n = (numbered["base"], int(numbered["n"]) + 1) if numbered else (name, 2)
    while True:
        suffix = f"-{n}"
        candidate = base[: max_length - len(suffix)].rstrip("-") + suffix
        if candidate not in taken:
            return candidate
        n += 1


def clone_body(
    body: Mapping[str, Any], taken: Collection[str], max_length: int = 63
) -> dict[str, Any]:
    """The job body of a clone: the next free name, and the job's name in its log
    directory (a whole word: ``runs/train`` or ``train-logs``, not ``strain``) replaced
    with the clone's."""
    old = body["name"]
    new = clone_name(old, taken, max_length)
    clone = {**body, "name": new}
    logdir = body.get("logdir")
    if logdir:
        word = re.compile(rf"(?<![a-z0-9]){re.escape(old)}(?![a-z0-9])")
        clone["logdir"] = word.sub(new, logdir)
    return clone
