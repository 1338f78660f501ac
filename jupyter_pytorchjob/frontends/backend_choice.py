"""Which backend a ``ptjob``/``%ptjob`` command means: ``--backend``, else
``$PTJOB_BACKEND``, else local (whose jobs live under ``$PTJOB_HOME``)."""

from __future__ import annotations

import os

from ..backends import Backend, backend_class, create_backend

BACKEND_ENV = "PTJOB_BACKEND"
PROGRESS_WAIT = 3.0  # seconds a ptjob/%ptjob command waits for the first progress reads


def backend_name(flag: str | None) -> str:
    """The backend named by the flag, else by ``$PTJOB_BACKEND``, else ``local``."""
    return flag or os.environ.get(BACKEND_ENV) or "local"


def reads_without_loop(flag: str | None) -> bool:
    """Whether the backend the flag means lists and reads jobs without an event loop
    (``Backend.reads_without_loop``)."""
    return backend_class(backend_name(flag)).reads_without_loop


def open_backend(flag: str | None, namespace: str | None = None) -> Backend:
    """A new backend for the command's ``--backend`` and ``--namespace``."""
    name = backend_name(flag)
    if name == "kubernetes":
        # The person's own kubeconfig decides which namespaces they may use. A command
        # may wait a little for the jobs' progress: no later poll of its shows it.
        return create_backend(name, namespace=namespace, progress_wait=PROGRESS_WAIT)
    return create_backend(name).for_namespace(namespace)
