"""The Python API: ``from jupyter_pytorchjob import Job, submit``. Plain Python - it
needs no IPython (the ``%ptjob`` magic, ``magics``, is built on it):

    from jupyter_pytorchjob import Job, submit

    job = submit(train, nodes=2, gpus=1, shm="8Gi", pvc=["data:/mnt/data"],
                 args={"lr": 1e-3, "epochs": 3})
    job.logs(follow=True); job.wait(); job.result(); job.run(); job.tensorboard()
    job.clone(from_checkpoint="/mnt/data/ckpt/last.ckpt")
    Job.list(); Job("name").status(); job.suspend(); job.delete()

* ``submission`` - ``submit`` (a function as a job; its keyword arguments are the
  field table's) and ``submit_spec`` (any validated job).
* ``handle`` - ``JobHandle`` (= ``Job``): status, logs, wait/``JobFailed``, result,
  run, clone, tensorboard, suspend, resume, delete; ``JobTable``, ``JobStatus``,
  ``RuntimeTable``, ``RunView``.
* ``runner`` - ``Runner``: the private event loop backend calls run on (a kernel's own
  loop is busy), log streaming with cancellation.
"""

from __future__ import annotations

from ..function import CaptureError, ResultError
from .handle import JobFailed, JobHandle, JobStatus, JobTable, RuntimeTable, RunView
from .runner import Runner, default_runner
from .submission import InvalidArguments, submit, submit_spec

__all__ = [
    "CaptureError",
    "InvalidArguments",
    "Job",
    "JobFailed",
    "JobHandle",
    "JobStatus",
    "JobTable",
    "ResultError",
    "RunView",
    "Runner",
    "RuntimeTable",
    "default_runner",
    "submit",
    "submit_spec",
]

#: A submitted job (``Job("name")`` for one submitted earlier).
Job = JobHandle
