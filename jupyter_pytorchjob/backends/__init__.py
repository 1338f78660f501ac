"""Where jobs run, behind one contract (``base.Backend``).

* ``local``      - each node a local process with the operator's environment.
* ``kubernetes`` - Kubeflow Training Operator v1 PyTorchJobs (kubernetes_asyncio).

The server, the ``ptjob`` CLI and the ``%ptjob`` magic get a backend from
``create_backend`` and never know which one it is.
"""

from __future__ import annotations

from typing import Any

from .base import (
    Backend,
    BackendError,
    Event,
    JobExists,
    JobInfo,
    JobNotFound,
    JobState,
    LogChunk,
    ReplicaInfo,
    Volume,
)

#: The backends ``create_backend`` knows (``--backend``, ``c.PyTorchJobApp.backend``).
BACKENDS = ("local", "kubernetes")

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendError",
    "Event",
    "JobExists",
    "JobInfo",
    "JobNotFound",
    "JobState",
    "LogChunk",
    "ReplicaInfo",
    "Volume",
    "create_backend",
]


def create_backend(name: str = "local", **options: Any) -> Backend:
    """The backend called ``name``, configured with ``options``."""
    if name == "local":
        from .local import LocalBackend

        return LocalBackend(**options)
    if name == "kubernetes":
        from .kubernetes import KubernetesBackend

        return KubernetesBackend(**options)
    raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}", status=400)
