"""A clone of a job: its job body for a new run (Clone & edit, *Resume from here*,
``ptjob clone``, ``%ptjob clone``, ``JobHandle.clone``, ``GET jobs/{name}/clone``).

The clone is named after the job with the next free ``-N`` (``train`` -> ``train-2``,
``train-2`` -> ``train-3``), cut to the kind's name limit; a log directory naming the job
(a whole word: ``runs/train/tb`` or ``train-logs``, not ``strain``) gets the clone's name,
so the two runs never write one TensorBoard run. A clone may resume from a checkpoint:
``PTJOB_RESUME_FROM`` set to its path (a function job's function gets it as
``resume_from=``). Pure, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import FieldError, JobSpecInvalid
from .messages import msg
from .run import MAX_PATH, written_path

#: The variable a resumed clone's processes find the checkpoint's path in
#: (``spec.USER_PTJOB_ENV``: the one ``PTJOB_`` variable a job body may set).
RESUME_ENV = "PTJOB_RESUME_FROM"
_NUMBERED = re.compile(r"^(?P<base>.+?)-(?P<n>\d{1,4})$")


def clone_name(name: str, taken: Iterable[str], max_length: int = 63) -> str:
    """``<job>-N`` with the smallest N >= 2 (after the job's own number: ``a-2``'s clone
    is ``a-3``) not taken, the base cut to fit ``max_length``."""
    numbered = _NUMBERED.match(name)
    base, n = (numbered["base"], int(numbered["n"]) + 1) if numbered else (name, 2)
    taken = set(taken)
    while True:
        suffix = f"-{n}"
        candidate = base[: max_length - len(suffix)].rstrip("-") + suffix
        if candidate not in taken:
            return candidate
        n += 1


def clone_body(
    body: Mapping[str, Any], *, name: str, resume_from: str | None = None
) -> dict[str, Any]:
    """A job body (``JobSpec.to_wire``) as the new job ``name``: the old name in its log
    directory, as a whole word, replaced with the new one; ``resume_from`` sets
    ``PTJOB_RESUME_FROM``. ``JobSpecInvalid`` naming ``fromCheckpoint`` for a path that is
    no path. The job's own body is left alone."""
    old = str(body.get("name") or "")
    clone = {**body, "name": name}
    logdir = body.get("logdir")
    if isinstance(logdir, str) and old:
        word = re.compile(rf"(?<![a-z0-9]){re.escape(old)}(?![a-z0-9])")
        clone["logdir"] = word.sub(lambda _: name, logdir)
    if resume_from is not None:
        if written_path(resume_from) is None:
            raise JobSpecInvalid(
                [FieldError("fromCheckpoint", msg("checkpoint_path", maximum=MAX_PATH))]
            )
        clone["env"] = {**dict(body.get("env") or {}), RESUME_ENV: resume_from}
    return clone
