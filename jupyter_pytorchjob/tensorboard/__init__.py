"""TensorBoard for job log directories: one subprocess per directory, proxied.

* ``manager`` owns the processes (start, reuse, readiness, idle culling, stop)
  and confines log directories to configured roots.
* ``handlers`` is the HTTP glue: the REST API under ``pytorchjob/api/tensorboards``
  and the authenticated proxy under ``pytorchjob/tensorboard/<id>/``.
* ``_launch`` is what each TensorBoard process runs.

Nothing is imported eagerly: every TensorBoard process imports this package on
its way to ``_launch``, and the manager's imports (asyncio, tornado's HTTP
client) would add about 0.1 s to each start (``benchmarks/tensorboard_first_scalar.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .manager import TensorBoardError, TensorBoardInstance, TensorBoardManager

__all__ = ["TensorBoardError", "TensorBoardInstance", "TensorBoardManager"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import manager

        return getattr(manager, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
