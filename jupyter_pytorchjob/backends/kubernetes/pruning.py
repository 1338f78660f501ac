"""Which fields of a manifest the API server dropped.

The API server prunes every field a CRD's structural schema does not declare, silently:
the object is stored without it and no error or warning is returned (servers before
1.25 send no ``Warning`` header either). A misspelt or misplaced field therefore just
has no effect. Comparing what we sent with what the server stored (or would store, in
a dry run) names those fields, so the user is told instead of losing them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

# Root metadata is ObjectMeta, filled in by the server; only what users write counts.
USER_METADATA = ("name", "labels", "annotations")


def _path(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


def _missing(sent: Any, stored: Any, at: str) -> Iterator[str]:
    if isinstance(sent, Mapping):
        if not isinstance(stored, Mapping):
            return
        for key, value in sent.items():
            if key not in stored:
                yield _path(at, key)
            else:
                yield from _missing(value, stored[key], _path(at, key))
    elif isinstance(sent, list) and isinstance(stored, list):
        for index, (a, b) in enumerate(zip(sent, stored, strict=False)):
            yield from _missing(a, b, _path(at, index))


def dropped_fields(sent: Mapping[str, Any], stored: Mapping[str, Any]) -> list[str]:
    """Paths (``spec.pytorchReplicaSpecs.Master.template.spec.containers[0].foo``) of the
    fields in ``sent`` that ``stored`` lacks; status and server-set metadata are ignored.
    Fields the server added (defaults) are not reported."""
    out: list[str] = []
    meta = sent.get("metadata") or {}
    stored_meta = stored.get("metadata") or {}
    for key in USER_METADATA:
        if key in meta:
            out += _missing({key: meta[key]}, stored_meta, "metadata")
    for key, value in sent.items():
        if key in ("apiVersion", "kind", "metadata", "status"):
            continue
        out += _missing({key: value}, stored, "")
    return out
