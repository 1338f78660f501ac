"""The local backend: a job of either kind as local processes, as its controllers run it.

* ``store``      - the on-disk state of each job (one directory per job).
* ``index``      - the settled jobs in one file, so a list need not read each job's.
* ``plan``       - JobSpec -> what each node process runs (argv, env, cwd).
* ``initializers`` - a TrainJob's ``file://`` dataset and model copied to its /workspace.
* ``supervisor`` - the detached per-job process that runs, restarts and logs nodes.
* ``watchdog``   - the supervisor's parent: stops what it leaves, records how it died.
* ``reaping``    - stopping leftovers: only our own children and the groups they hold.
* ``logpump``    - a node's output -> its log file, one timestamped line at a time.
* ``progress``   - ``ProgressTracker``, run by the supervisor: the job's progress.
* ``reports``    - Kubeflow Trainer's status protocol, served to the job's processes.
* ``controllers`` - what readers need of the controller a supervisor plays.
* ``backend``    - ``LocalBackend``, the ``Backend`` contract over the store.
"""

from __future__ import annotations

from .backend import LocalBackend

__all__ = ["LocalBackend"]
