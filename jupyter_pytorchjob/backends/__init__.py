"""Where jobs run, behind one contract (``base.Backend``).

* ``base``       - the contract: ``Backend``, its errors, ``LogChunk``, ``Event``, ``Volume``.
* ``local``      - each node a local process with its controller's environment.
* ``kubernetes`` - the PyTorchJobs and TrainJobs a cluster serves (kubernetes_asyncio).
* ``archive``    - a job's log archive read as log chunks (both backends).
* ``logmerge``   - ``TimeMerge``: replicas' lines merged in time order (both backends).
* ``progress``   - ``ProgressSources``: log lines and event files -> progress (both).
* ``tfevents``   - TensorBoard scalars read incrementally from event files.
* ``run_files``  - Lightning's / Hugging Face's files in a log directory as a run's
  hyperparameters and checkpoints (both).
* ``timestamps`` - the RFC 3339 stamps that start log lines (kubelet, archive).
* ``loopshare``  - ``LoopShare``: log streams share each turn of the event loop (both,
  and the websocket that sends them).

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
    "backend_class",
    "create_backend",
]


def backend_class(name: str) -> type[Backend]:
    """The class of the backend called ``name`` (only its module is imported)."""
    if name == "local":
        from .local import LocalBackend

        return LocalBackend
    if name == "kubernetes":
        from .kubernetes import KubernetesBackend

        return KubernetesBackend
    raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}", status=400)


def create_backend(name: str = "local", **options: Any) -> Backend:
    """The backend called ``name``, configured with ``options``."""
    return backend_class(name)(**options)
