"""The notebook knows itself: its own pod's image and PVC mounts.

In a cluster JupyterLab usually runs as a notebook pod whose home is a PVC. Its
image and mounts are the best defaults for a new job (same packages, same
data), and its mounts say where a job's log directory on a shared PVC appears
in the notebook's own file system - which is where TensorBoard reads it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...job.spec import PvcMount


@dataclass(frozen=True)
class NotebookPod:
    """The parts of the notebook's pod that matter to jobs."""

    name: str
    image: str | None
    mounts: tuple[PvcMount, ...]

    @classmethod
    def from_pod(cls, pod: Mapping[str, Any], container: str | None = None) -> NotebookPod:
        """Read a Pod dict; ``container`` defaults to the notebook container (the one
        named like the pod's ``notebook-name`` label, else the first)."""
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        containers = spec.get("containers") or []
        wanted = container or (meta.get("labels") or {}).get("notebook-name")
        main = next((c for c in containers if c.get("name") == wanted), None)
        main = main or (containers[0] if containers else {})
        claims = {
            v["name"]: v["persistentVolumeClaim"]["claimName"]
            for v in spec.get("volumes") or []
            if v.get("persistentVolumeClaim")
        }
        mounts = tuple(
            PvcMount(
                claim=claims[m["name"]],
                mount_path=m["mountPath"],
                sub_path=m.get("subPath") or "",
                read_only=bool(m.get("readOnly")),
            )
            for m in main.get("volumeMounts") or []
            if m.get("name") in claims
        )
        return cls(meta.get("name", ""), main.get("image"), mounts)

    def local_path(self, job_mounts: Sequence[PvcMount], path: str) -> str | None:
        """Where ``path`` (inside a job's pods) is in this notebook, or None if the
        notebook does not mount the PVC (or the part of it) that holds ``path``."""
        for mount in sorted(job_mounts, key=lambda m: -len(m.mount_path)):
            inside = within(path, mount.mount_path)
            if inside is None:
                continue
            in_claim = posixpath.join(mount.sub_path, inside) if mount.sub_path else inside
            for own in self.mounts:
                if own.claim != mount.claim:
                    continue
                rest = within("/" + in_claim, "/" + own.sub_path) if own.sub_path else in_claim
                if rest is not None:
                    return posixpath.normpath(posixpath.join(own.mount_path, rest))
            return None
        return None


def within(path: str, base: str) -> str | None:
    """``path`` relative to ``base`` ("" for the base itself), None if outside it."""
    path, base = posixpath.normpath(path), posixpath.normpath(base)
    if path == base:
        return ""
    prefix = base.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None
