"""The local backend: a job of either kind as local processes, as its controllers run it.

* ``store``      - the on-disk state of each job (one directory per job).
* ``index``      - the settled jobs in one file, so a list need not read each job's.
* ``plan``       - JobSpec -> what each node process runs (argv, env, cwd).
* ``supervisor`` - the detached per-job process that runs, restarts and logs nodes,
  consulting the controller of the job's kind.
* ``replica``    - one node as its pod would be (process, phase, restarts, exit).
* ``kubelet``    - the kubelet's restart in place (CrashLoopBackOff's wait, its texts).
* ``controller`` - the contract between the supervisor and the controller it consults.
* ``operator_controller`` - the Training Operator v1's rules (a PyTorchJob).
* ``jobset_controller`` - Kubeflow Trainer v2's and JobSet's rules (a TrainJob).
* ``watchdog``   - the supervisor's parent: stops what it leaves, records how it died.
* ``reaping``    - stopping leftovers: only our own children and the groups they hold.
* ``logpump``    - a node's output -> its log file, one timestamped line at a time.
* ``progress``   - ``ProgressTracker``, run by the supervisor: the job's progress.
* ``progress_loop`` - the supervisor's side of it: the status endpoint, polls in a thread.
* ``reports``    - Kubeflow Trainer's status protocol, served to the job's processes.
* ``controllers`` - the controller of each kind, also what readers of a job's files use.
* ``backend``    - ``LocalBackend``, the ``Backend`` contract over the store.
"""

from __future__ import annotations

from .backend import LocalBackend

__all__ = ["LocalBackend"]
