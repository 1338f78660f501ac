"""Run TensorBoard so that it dies with the Jupyter server, even on SIGKILL.

``python -m jupyter_pytorchjob.tensorboard._launch <tensorboard flags>`` asks
Linux to send SIGTERM to this process when its parent dies (``PR_SET_PDEATHSIG``,
kept across the module run below), then runs ``tensorboard.main`` in the same
process, so the PID the manager records is TensorBoard's own. TensorBoard handles
SIGTERM by running its atexit cleanup, which also stops its Rust data server.

The normal stop path is ``TensorBoardManager.stop_all()`` from the extension's
``stop_extension``; this is the safety net for a server that is killed hard.
Elsewhere than Linux it only runs TensorBoard.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys

PARENT_ENV = "JUPYTER_PYTORCHJOB_PARENT_PID"
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - exotic libc
        return
    # The parent may have died before prctl: then we were re-parented already.
    expected = os.environ.get(PARENT_ENV)
    if expected and str(os.getppid()) != expected:
        sys.exit(0)


def main() -> None:
    """Arm the parent-death signal, then become ``tensorboard``."""
    _die_with_parent()
    sys.argv = ["tensorboard", *sys.argv[1:]]
    runpy.run_module("tensorboard.main", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
