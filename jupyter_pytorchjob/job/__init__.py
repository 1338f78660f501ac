"""The job model and everything derived from it, with no I/O.

* ``fields``      - the field table: wire name, flag, reader, default, choices, help.
* ``spec``        - ``JobSpec``: every field of the job form, validated.
* ``k8s_rules``   - the Kubernetes naming and quantity rules the spec checks.
* ``errors``      - ``FieldError`` / ``JobSpecInvalid``: errors naming the field.
* ``messages``    - every message the server sends about a request: a stable code,
  its English template, named parameters (the frontend translates the code).
* ``wire``        - the one wire convention (camelCase keys, epoch seconds).
* ``wire_types``  - ``JobBody``/``IJobBody`` generated from the field table, and
  ``SERVER_MESSAGES`` from the message table (``make fields``).
* ``status``      - ``JobInfo``: what a job is doing (state, replicas, conditions).
* ``failure``     - why a job failed and what it waits for, known failures' hints.
* ``progress``    - ``JobProgress``, readings per source, their merge, metric history.
* ``progress_logs`` - progress from log lines (tqdm, Hugging Face, Lightning, epochs).
* ``compare``     - comparing jobs: differing fields, metrics, the best.
* ``command_line`` - a job body as the ``ptjob submit`` line that gives it back.
* ``run``         - a run's record (hparams, checkpoints, artifacts) from its run lines.
* ``clone``       - a clone's body: the next free ``<job>-N``, its log directory moved,
  the checkpoint it resumes from.
* ``shape``       - untrusted input made safe to read.
* ``manifest_yaml`` - manifests as YAML text and back.
* ``loglines``    - the log line contract: output as display lines (``\\r`` redraws),
  and display lines as a terminal shows them.

What depends on the kind of object a job is (PyTorchJob's manifest, webhook rules,
environment, status) lives in ``jupyter_pytorchjob.kinds``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import FieldError, JobSpecInvalid

if TYPE_CHECKING:
    from .spec import JobSpec, PvcMount, Toleration

__all__ = [
    "FieldError",
    "JobSpec",
    "JobSpecInvalid",
    "PvcMount",
    "Toleration",
    "manifest_from_yaml",
    "manifest_to_yaml",
]


def __getattr__(name: str) -> Any:
    # Loaded on first use: ``ptjob list`` reads jobs, it validates none (``spec``) and
    # writes no YAML (PyYAML).
    if name in ("JobSpec", "PvcMount", "Toleration"):
        from . import spec

        return getattr(spec, name)
    if name in ("manifest_from_yaml", "manifest_to_yaml"):
        from . import manifest_yaml

        return getattr(manifest_yaml, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
