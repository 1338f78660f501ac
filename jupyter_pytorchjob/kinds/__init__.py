"""Job kinds: the Kubernetes objects a job can be, behind one contract (``JobKind``).

Registered here, in the order a backend prefers them when a cluster serves several.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..job.errors import FieldError, JobSpecInvalid
from ..job.messages import msg
from .base import JobKind
from .pytorchjob import PYTORCHJOB
from .trainjob import TRAINJOB

if TYPE_CHECKING:
    from ..job.spec import JobSpec

KINDS: tuple[JobKind, ...] = (PYTORCHJOB, TRAINJOB)
DEFAULT_KIND: JobKind = PYTORCHJOB


def kind_of(manifest: Mapping[str, Any]) -> JobKind:
    """The kind of ``manifest`` (its apiVersion and kind); the default kind when none
    matches, whose ``parse`` then says what it expected."""
    return next((kind for kind in KINDS if kind.owns(manifest)), DEFAULT_KIND)


def none_served_message() -> str:
    """What to tell a user whose cluster serves none of the kinds (one sentence, not
    each kind's message run together)."""
    crds = " nor ".join(f"{k.kind}s ({k.installed_by}'s CRD {k.crd})" for k in KINDS)
    return (
        f"this cluster serves no kind of job this extension can run: neither {crds} is "
        "installed. Ask your administrator to install one of them (recent Kubeflow "
        "releases install Trainer v2), or use the local backend"
    )


def kind_for(spec: JobSpec) -> JobKind:
    """The kind ``spec`` is to become (its ``kind`` field)."""
    return kind_named(spec.kind)


def kind_named(name: str) -> JobKind:
    """The kind called ``name`` (``PyTorchJob``, any case); ``JobSpecInvalid`` naming
    ``kind`` otherwise."""
    for kind in KINDS:
        if kind.kind.lower() == name.lower():
            return kind
    choices = ", ".join(k.kind for k in KINDS)
    raise JobSpecInvalid([FieldError("kind", msg("one_of", choices=choices, got=repr(name)))])


__all__ = [
    "DEFAULT_KIND",
    "KINDS",
    "PYTORCHJOB",
    "JobKind",
    "kind_named",
    "kind_of",
    "none_served_message",
]
