"""TensorBoard for job log directories: one subprocess per directory, proxied.

* ``manager`` owns the processes (start, reuse, readiness, idle culling, stop)
  and confines log directories to configured roots.
* ``handlers`` is the HTTP glue: the REST API under ``pytorchjob/api/tensorboards``
  and the authenticated proxy under ``pytorchjob/tensorboard/<id>/``.

Only the manager is imported here, so that ``jupyter_server_proxy`` (needed by
the proxy handler) is imported with the handlers, not with the package.
"""

from __future__ import annotations

from .manager import TensorBoardError, TensorBoardInstance, TensorBoardManager

__all__ = ["TensorBoardError", "TensorBoardInstance", "TensorBoardManager"]
