"""The local backend: a PyTorchJob as local processes, exactly as the operator runs it.

* ``store``      - the on-disk state of each job (one directory per job).
* ``index``      - the settled jobs in one file, so a list need not read each job's.
* ``plan``       - JobSpec -> what each node process runs (argv, env, cwd).
* ``supervisor`` - the detached per-job process that runs, restarts and logs nodes.
* ``controllers`` - what readers need of the controller a supervisor plays.
* ``backend``    - ``LocalBackend``, the ``Backend`` contract over the store.
"""

from __future__ import annotations

from .backend import LocalBackend

__all__ = ["LocalBackend"]
