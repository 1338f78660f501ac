"""The job script of a submitted function, and its result file read back.

The script is what ``--script`` and ``%%ptjob submit`` ship (``JobSpec.script``: one
environment variable of every replica, run by ``python`` or ``torchrun``), so a
function job is an ordinary job on every backend and kind. It holds, in order: the
bootstrap (``bootstrap.py``), the captured code (``capture.py``), and the call with
the keyword arguments written as a JSON literal (or a pickle when they are not plain
JSON). Rank 0's return value lands in the job's log directory as
``ptjob-result-<job>.json`` (or ``.pickle``), which ``read_result`` reads.
"""

from __future__ import annotations

import base64
import json
import pickle
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from .capture import PICKLE_MAX_BYTES, CapturedFunction

#: The largest return value that comes back through ``result()``.
RESULT_MAX_BYTES = 16 * 1024 * 1024

_STEM = "ptjob-result-"


class ResultError(Exception):
    """The result cannot be read back; ``str()`` says why."""


def result_file_names(job: str) -> tuple[str, str]:
    """The JSON and the pickle file names of ``job``'s result (one of them is written)."""
    return f"{_STEM}{job}.json", f"{_STEM}{job}.pickle"


def encode_kwargs(kwargs: Mapping[str, Any]) -> str:
    """A Python expression that gives ``kwargs`` back in the job: JSON text when it
    round-trips exactly, else a pickle (a copy made now); ``ValueError`` if neither."""
    plain = dict(kwargs)
    try:
        text = json.dumps(plain, allow_nan=False)
        if json.loads(text) == plain:
            return f"__import__('json').loads({text!r})"
    except (TypeError, ValueError):
        pass
    try:
        data = pickle.dumps(plain, protocol=4)
    except Exception as err:
        raise ValueError(f"cannot be sent to the job: neither JSON nor picklable ({err})") from None
    if b"__main__" in data:
        raise ValueError(
            "cannot be sent to the job: a value's pickle needs something defined in the notebook"
        )
    if len(data) > PICKLE_MAX_BYTES:
        raise ValueError(
            f"are {len(data)} bytes pickled; at most {PICKLE_MAX_BYTES} travel inside the job "
            "(put data on a PVC and pass its path)"
        )
    encoded = base64.b64encode(data).decode("ascii")
    return f"__import__('pickle').loads(__import__('base64').b64decode({encoded!r}))"


def job_script(captured: CapturedFunction, kwargs: Mapping[str, Any], *, job: str) -> str:
    """The Python script that runs ``captured`` with ``kwargs`` in every process of ``job``."""
    bootstrap = resources.files(__package__).joinpath("bootstrap.py").read_text(encoding="utf-8")
    stem = result_file_names(job)[0].removesuffix(".json")
    return (
        f"# The function {captured.name!r}, submitted with jupyter_pytorchjob.submit; "
        "it runs once per process.\n"
        f"{bootstrap.rstrip()}\n\n\n"
        "# ---- the function and the notebook names it uses\n"
        f"{captured.source.rstrip()}\n\n\n"
        "# ---- the call\n"
        'if __name__ == "__main__":\n'
        f"    _ptjob_main({captured.name}, {encode_kwargs(kwargs)}, {stem!r}, "
        f"{RESULT_MAX_BYTES})\n"
    )


def read_result(directory: str | Path, job: str, *, not_before: float | None = None) -> Any:
    """Rank 0's return value as ``job`` left it in its log directory ``directory``;
    ``ResultError`` when it is not there, or older than ``not_before`` (seconds since
    the epoch: then an earlier job of the same name wrote it)."""
    folder = Path(directory)
    json_name, pickle_name = result_file_names(job)
    for name in (json_name, pickle_name):
        path = folder / name
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        size = stat.st_size
        if not_before is not None and stat.st_mtime < not_before:
            raise ResultError(
                f"{path} is older than the job: an earlier job called {job} wrote it, and "
                "this one has not returned (yet)"
            )
        if size > RESULT_MAX_BYTES:
            raise ResultError(f"{path} is {size} bytes; a result is at most {RESULT_MAX_BYTES}")
        data = path.read_bytes()
        if name == json_name:
            return json.loads(data)["value"]
        # The file was written by this job's own rank 0, on the user's own volume.
        return pickle.loads(data)  # noqa: S301
    raise ResultError(
        f"no result of {job} in {folder} ({json_name} or {pickle_name}): the function "
        "has not returned on rank 0 (yet), or the job ran before with another log directory"
    )
