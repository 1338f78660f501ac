"""``%ptjob`` / ``%%ptjob``: the ``ptjob`` command inside IPython and Jupyter.

``%load_ext jupyter_pytorchjob`` registers one line-and-cell magic:

* ``magic.py``   - ``PtjobMagics``: parsing, the subcommands, errors as UsageError lines.
* ``runner.py``  - ``Runner``: the private event loop backend calls run on (a kernel's
  own loop is busy), log streaming with cancellation.
* ``results.py`` - what the magic returns: ``JobTable``, ``JobStatus`` (HTML in a
  notebook, text elsewhere) and ``JobHandle`` for use from Python.
"""

from __future__ import annotations

from typing import Any

from .magic import PtjobMagics
from .results import JobHandle, JobStatus, JobTable
from .runner import Runner

__all__ = [
    "JobHandle",
    "JobStatus",
    "JobTable",
    "PtjobMagics",
    "Runner",
    "load_ipython_extension",
    "unload_ipython_extension",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_pytorchjob``."""
    ipython.register_magics(PtjobMagics)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext jupyter_pytorchjob``: stop the background loop."""
    magics = ipython.magics_manager.registry.get("PtjobMagics")
    if isinstance(magics, PtjobMagics):
        magics.runner.close()
