"""jupyter-pytorchjob: submit and watch Kubeflow PyTorchJobs and TrainJobs from JupyterLab.

One package holds five entry points, each imported lazily so that
``import jupyter_pytorchjob`` stays cheap (the CLI and the magic do not need
tornado or jupyter_server):

* the Jupyter server extension (``_jupyter_server_extension_points``),
* the prebuilt JupyterLab extension (``_jupyter_labextension_paths``),
* ``report(progress=, eta=, **metrics)``: a training script's progress, in Kubeflow
  Trainer's status protocol (``report``, standard library only),
* the IPython extension (``load_ipython_extension``): ``%load_ext jupyter_pytorchjob``
  registers the ``%ptjob`` / ``%%ptjob`` magic (``magics``),
* the Python API (``sdk``): ``from jupyter_pytorchjob import Job, submit`` trains a
  function on N nodes (``submit(train, nodes=2, args={...})``) and returns its ``Job``.
"""

from __future__ import annotations

from typing import Any

from .package_version import __version__
from .report import report

__all__ = [
    "CaptureError",
    "InvalidArguments",
    "Job",
    "JobFailed",
    "ResultError",
    "__version__",
    "report",
    "submit",
]

# The Python API, imported on first use (``from jupyter_pytorchjob import submit``).
_SDK_NAMES = ("CaptureError", "InvalidArguments", "Job", "JobFailed", "ResultError", "submit")


def __getattr__(name: str) -> Any:
    if name in _SDK_NAMES:
        from . import sdk

        return getattr(sdk, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyter-pytorchjob"}]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from .app import PyTorchJobApp

    return [{"module": "jupyter_pytorchjob", "app": PyTorchJobApp}]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_pytorchjob``: register ``%ptjob`` and ``%%ptjob``."""
    from .magics import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext jupyter_pytorchjob``: stop the magic's background event loop."""
    from .magics import unload_ipython_extension as unload

    unload(ipython)
