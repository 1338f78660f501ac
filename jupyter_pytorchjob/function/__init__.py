"""A Python function as a job: what ``jupyter_pytorchjob.submit`` ships (pure; no I/O
but reading the function's own source).

* ``capture.py``   - the function's source with the notebook-level names it uses made
  explicit (imports, constants, small picklable values, other notebook functions and
  classes), or ``CaptureError`` saying why it cannot travel.
* ``bootstrap.py`` - what runs in every process of the job (standard library and torch
  only): the process group, the call, rank 0's result file. Shipped as source text.
* ``script.py``    - the job's script (bootstrap + captured code + the call), the name
  of the result file and reading it back.
"""

from __future__ import annotations

from .capture import CapturedFunction, CaptureError, capture
from .script import RESULT_MAX_BYTES, ResultError, job_script, read_result, result_file_names

__all__ = [
    "RESULT_MAX_BYTES",
    "CaptureError",
    "CapturedFunction",
    "ResultError",
    "capture",
    "job_script",
    "read_result",
    "result_file_names",
]
