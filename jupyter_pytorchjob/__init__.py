"""jupyter-pytorchjob: submit and watch Kubeflow PyTorchJobs from JupyterLab.

One package holds three entry points, each imported lazily so that
``import jupyter_pytorchjob`` stays cheap (the CLI and the magic do not need
tornado or jupyter_server):

* the Jupyter server extension (``_jupyter_server_extension_points``),
* the prebuilt JupyterLab extension (``_jupyter_labextension_paths``),
* ``report(progress=, eta=, **metrics)``: a training script's progress, in Kubeflow
  Trainer's status protocol (``report``, standard library only),
* the IPython extension (``load_ipython_extension``): ``%load_ext jupyter_pytorchjob``
  registers the ``%ptjob`` / ``%%ptjob`` magic (``magics``).
"""

from __future__ import annotations

from typing import Any

from .package_version import __version__
from .report import report

__all__ = ["__version__", "report"]


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
