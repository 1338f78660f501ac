"""The job script of a submitted function, and its result read back.

The script is what ``--script`` and ``%%ptjob submit`` ship (``JobSpec.script``: one
environment variable of every replica, run by ``python`` or ``torchrun``), so a
function job is an ordinary job on every backend and kind. It holds, in order: the
bootstrap (``bootstrap.py``), the captured code (``capture.py``), and the call with
the keyword arguments written as a JSON literal (or a pickle when they are not plain
JSON) and the job's **result key**, a random 256-bit key made at submit.

Rank 0's return value comes back signed with that key (HMAC-SHA256 over the job's
name, the format and the bytes): up to ``LOG_RESULT_MAX_BYTES`` as marked base64
lines in rank 0's own log (``ResultLines`` finds them in what the backend's log
gives: the pod's log through the API server, the local log, or the log archive),
larger values up to ``RESULT_MAX_BYTES`` as ``ptjob-result-<job>`` in the job's log
directory on its PVC (``read_result_file``). Nothing is decoded - above all, nothing
is unpickled - before its signature checks out: a log archive or a file on a shared
volume may have been written by anyone who can write that volume, the key only by
the job.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import pickle
import re
import secrets
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .capture import PICKLE_MAX_BYTES, CapturedFunction

#: The largest return value that comes back through ``result()`` (through the PVC).
RESULT_MAX_BYTES = 16 * 1024 * 1024
#: The largest return value that comes back through rank 0's log, with no PVC.
LOG_RESULT_MAX_BYTES = 4 * 1024 * 1024
#: Base64 characters per result line (the bootstrap's; a line stays under 4 KiB).
_PART_CHARS = 3000

_MARK = "ptjob-result"
_KEY_LINE = re.compile(r"^_PTJOB_RESULT_KEY = '([0-9a-f]{64})'$", re.MULTILINE)
# The job name rank 0 signs its result with: the submitted job's, also in a clone of it
# (``ptjob clone``: same script, another name).
_SIGNED_AS_LINE = re.compile(r"^_PTJOB_SIGNED_AS = '([a-z0-9.-]{1,253})'$", re.MULTILINE)


class ResultError(Exception):
    """The result cannot be read back; ``str()`` says why."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of a traceback: the message says it all, the
        frames would only lead into this package's own ``raise``."""
        return [f"{type(self).__name__}: {self}"]


def result_file_name(job: str) -> str:
    """The name of ``job``'s result file in its log directory (a result too big for
    its log)."""
    return f"{_MARK}-{job}"


def new_result_key() -> str:
    """A fresh result key (hex) for one job."""
    return secrets.token_hex(32)


def result_key_of(script: str | None) -> bytes | None:
    """The result key written into a function job's script (``Job("name")`` made later
    finds it in the job's manifest), or None for any other script."""
    found = _KEY_LINE.search(script or "")
    return bytes.fromhex(found.group(1)) if found else None


def signed_as_of(script: str | None) -> str | None:
    """The job name a function job's script signs its result with (a clone's is the
    original's), or None for any other script (or one written before clones)."""
    found = _SIGNED_AS_LINE.search(script or "")
    return found.group(1) if found else None


def _signature(key: bytes, job: str, fmt: str, data: bytes) -> str:
    signed = b"ptjob-result\0" + job.encode() + b"\0" + fmt.encode() + b"\0" + data
    return hmac.new(key, signed, hashlib.sha256).hexdigest()


def _decode(key: bytes, job: str, fmt: str, data: bytes, tag: str, where: str) -> Any:
    """The value of a signed result, after its signature checks out."""
    if not hmac.compare_digest(_signature(key, job, fmt, data), tag):
        raise ResultError(
            f"the result of {job} in {where} is not signed with the job's key: it was not "
            "written by this job's rank 0 (another job of the same name, or somebody who "
            "can write there), so it is not read"
        )
    if fmt == "json":
        return json.loads(data)["value"]
    # Signed with a key only the submitter and this job know: rank 0 wrote these bytes.
    return pickle.loads(data)  # noqa: S301


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


def job_script(captured: CapturedFunction, kwargs: Mapping[str, Any], *, job: str, key: str) -> str:
    """The Python script that runs ``captured`` with ``kwargs`` in every process of
    ``job``, rank 0's result signed with ``key`` (``new_result_key``)."""
    bootstrap = resources.files(__package__).joinpath("bootstrap.py").read_text(encoding="utf-8")
    limits = (RESULT_MAX_BYTES, LOG_RESULT_MAX_BYTES)
    return (
        f"# The function {captured.name!r}, submitted with jupyter_pytorchjob.submit; "
        "it runs once per process.\n"
        f"{bootstrap.rstrip()}\n\n\n"
        "# ---- the function and the notebook names it uses\n"
        f"{captured.source.rstrip()}\n\n\n"
        "# ---- the call\n"
        f"_PTJOB_RESULT_KEY = {key!r}\n"
        f"_PTJOB_SIGNED_AS = {job!r}\n"
        'if __name__ == "__main__":\n'
        f"    _ptjob_main({captured.name}, {encode_kwargs(kwargs)}, _PTJOB_SIGNED_AS, "
        f"_PTJOB_RESULT_KEY, {limits!r})\n"
    )


@dataclass
class _Block:
    fmt: str
    size: int
    count: int
    parts: list[str]


class ResultLines:
    """Finds ``job``'s signed result in rank 0's log lines, fed in order (``feed``);
    ``value()`` decodes the last complete block. Memory stays bounded whatever the log
    holds: only marked lines are kept, and no more of them than the largest result."""

    _MOST_PARTS = -(-LOG_RESULT_MAX_BYTES * 4 // 3 // _PART_CHARS) + 2

    def __init__(self, job: str, key: bytes) -> None:
        self.job = job
        self.key = key
        self._prefix = f"{_MARK} {job} "
        self._open: _Block | None = None
        self._done: tuple[_Block, str] | None = None
        self.file: tuple[str, int, str] | None = None

    def feed(self, lines: Iterable[str]) -> None:
        for line in lines:
            if line.startswith(self._prefix):
                self._line(line[len(self._prefix) :].rstrip("\r\n").split(" "))

    def _line(self, words: list[str]) -> None:
        head = words[0]
        if head == "begin" and len(words) == 4 and words[2].isdigit() and words[3].isdigit():
            count = int(words[3])
            fits = int(words[2]) <= LOG_RESULT_MAX_BYTES and count <= self._MOST_PARTS
            self._open = _Block(words[1], int(words[2]), count, []) if fits else None
        elif head == "end" and len(words) == 2 and self._open is not None:
            if len(self._open.parts) == self._open.count:
                self._done, self.file = (self._open, words[1]), None
            self._open = None
        elif head == "file" and len(words) == 4 and words[2].isdigit():
            self.file, self._done = (words[1], int(words[2]), words[3]), None
        elif head.isdigit() and len(words) == 2 and self._open is not None:
            if int(head) == len(self._open.parts) < self._open.count:
                self._open.parts.append(words[1])
            else:
                self._open = None  # out of order: not a block of ours

    @property
    def found(self) -> bool:
        return self._done is not None or self.file is not None

    def value(self, where: str) -> Any:
        """The decoded value of the last complete block; ``ResultError`` if none."""
        if self._done is None:
            raise ResultError(
                f"no result of {self.job} in {where}: the function has not returned on rank 0, "
                "or that log is gone (its pods were deleted and the job keeps no log archive)"
            )
        block, tag = self._done
        try:
            data = base64.b64decode("".join(block.parts), validate=True)
        except (binascii.Error, ValueError):
            raise ResultError(f"the result of {self.job} in {where} is damaged") from None
        if len(data) != block.size:
            raise ResultError(f"the result of {self.job} in {where} is incomplete")
        return _decode(self.key, self.job, block.fmt, data, tag, where)


def read_result_file(directory: str | Path, job: str, key: bytes) -> Any:
    """Rank 0's return value from ``ptjob-result-<job>`` in the job's log directory
    ``directory`` (a result too big for the log), after its signature checks out. The
    file is opened without following links and without blocking, and must be a regular
    file of at most ``RESULT_MAX_BYTES`` (plus its header line); ``ResultError`` says
    what is wrong."""
    path = Path(directory) / result_file_name(job)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ResultError(
            f"no result of {job} in {path.parent}: the function has not returned on rank 0 "
            "(yet), or the job ran with another log directory"
        ) from None
    except OSError as err:
        raise ResultError(f"{path} cannot be read as a result ({err.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ResultError(f"{path} is not a regular file, so it is not read as a result")
        data = file.read(RESULT_MAX_BYTES + 200)
    header, _, data = data.partition(b"\n")
    words = header.decode("ascii", "replace").split(" ")
    if len(words) != 4 or words[0] != _MARK or not words[2].isdigit():
        raise ResultError(f"{path} is not a result written by ptjob")
    if int(words[2]) != len(data):
        raise ResultError(f"{path} is incomplete ({len(data)} of {words[2]} bytes)")
    return _decode(key, job, words[1], data, words[3], str(path))
