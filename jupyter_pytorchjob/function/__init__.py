"""A Python function as a job: what ``jupyter_pytorchjob.submit`` ships (pure; no I/O
but reading the function's own source).

* ``capture.py``   - the function's source with the notebook-level names it uses made
  explicit (imports, constants, small picklable values, other notebook functions and
  classes), or ``CaptureError`` saying why it cannot travel.
* ``bootstrap.py`` - what runs in every process of the job (standard library and torch
  only): the process group, the call, rank 0's signed result (in its log, or a file on
  the PVC when too big). Shipped as source text.
* ``script.py``    - the job's script (bootstrap + captured code + the call + the
  job's result key), and the result read back: found in rank 0's log lines or the
  result file, decoded only once its signature checks out.
"""

from __future__ import annotations

from .capture import CapturedFunction, CaptureError, capture
from .script import (
    LOG_RESULT_MAX_BYTES,
    RESULT_MAX_BYTES,
    ResultError,
    ResultLines,
    job_script,
    new_result_key,
    read_result_file,
    result_file_name,
    result_key_of,
    signed_as_of,
)

__all__ = [
    "LOG_RESULT_MAX_BYTES",
    "RESULT_MAX_BYTES",
    "CaptureError",
    "CapturedFunction",
    "ResultError",
    "ResultLines",
    "capture",
    "job_script",
    "new_result_key",
    "read_result_file",
    "result_file_name",
    "result_key_of",
    "signed_as_of",
]
