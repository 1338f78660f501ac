"""``%ptjob`` / ``%%ptjob``: the ``ptjob`` command inside IPython and Jupyter.

``%load_ext jupyter_pytorchjob`` registers one line-and-cell magic, built on the
Python API (``sdk``: submission, ``JobHandle`` and its tables, the ``Runner``):

* ``magic.py``   - ``PtjobMagics``: parsing, the subcommands, errors as UsageError lines.
* ``results.py`` - what only the magic shows: ``Progress``, ``%ptjob wait``'s display.
"""

from __future__ import annotations

from typing import Any

from ..sdk import JobHandle, JobStatus, JobTable, Runner
from .magic import PtjobMagics

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
