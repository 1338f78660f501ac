"""On-disk state of local jobs.

``<root>/jobs/<name>/`` holds ``manifest.json`` (what was submitted), ``plan.json``
(what each node runs), ``job.json`` (state, conditions, times, the supervisor's and its
watchdog's process identity, the job's ``progress``), ``replicas.json`` (process
identity, exit code, restarts per replica), ``events.jsonl``, ``progress-history.json``,
``report-token`` (the token of the job's status endpoint, mode 0600),
``logs/<replica>.log`` (each line ``<RFC 3339 timestamp> <text>``; the previous
container's log is ``<replica>.previous.log``) and a
shipped script in ``script/main.py``. The supervisor is the only writer of the job's
state once the job runs (its watchdog writes only after it died); the backend only
rewrites ``manifest.json``'s ``runPolicy.suspend`` (suspend/resume), which the supervisor
reads again when it changes. Every write is atomic (a temporary file of its own + fsync +
rename), so readers in other processes never see half a file and two writers never share
a temporary file. Read-modify-writes of the job (suspend/resume in the server, the CLI
or a kernel) and its removal hold the job's ``.lock`` (``JobDir.lock``, ``flock``)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base import JobNotFound

# What only writers and log readers use (tempfile, shutil, secrets, datetime, the archive)
# is imported where they use it: a list of the jobs (``ptjob list``) reads JSON only.

ROOT_ENV = "PTJOB_HOME"
#: In each job's directory: what ``JobDir.lock`` locks.
LOCK_FILE = ".lock"
VOLUMES_ENV = "PTJOB_VOLUMES"


def default_root() -> Path:
    """Where local jobs live: ``$PTJOB_HOME``, else ``<jupyter data dir>/pytorchjob``."""
    env = os.environ.get(ROOT_ENV)
    if env:
        return Path(env)
    from jupyter_core.paths import jupyter_data_dir  # only then: a command starts faster

    return Path(jupyter_data_dir()) / "pytorchjob"


def default_volume_root() -> Path:
    """Where claims map to directories: ``$PTJOB_VOLUMES``, else ``<root>/volumes``."""
    env = os.environ.get(VOLUMES_ENV)
    return Path(env) if env else default_root() / "volumes"


def timestamp(when: float | None = None) -> str:
    """RFC 3339 with microseconds, as the kubelet prefixes log lines."""
    from datetime import datetime, timezone

    moment = datetime.fromtimestamp(time.time() if when is None else when, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def strip_stamp(line: str) -> str:
    """A log line without the ``<timestamp> `` prefix the supervisor writes."""
    width = len(timestamp()) + 1
    return line[width:] if len(line) >= width and line[width - 1] == " " else line


def read_log_tail(path: Path, lines: int) -> list[str]:
    """The last ``lines`` lines of a job's log file, without their timestamps; none if
    it is gone."""
    from ..archive import tail_offset

    try:
        with path.open("rb") as f:
            f.seek(tail_offset(path, lines))
            data = f.read()
    except OSError:
        return []
    text = data.decode("utf-8", errors="replace")
    return [strip_stamp(line) for line in text.split("\n") if line]


def write_json(path: Path, data: Any, *, indent: int | None = 1) -> None:
    """Replace ``path`` with ``data`` at once. The temporary file is this call's own
    (threads of one process wrote each other's halves into a shared one), and is on
    disk before the rename, so a crash leaves the old file or the new one. ``indent``
    None: no line breaks (a file read far more often than by a person)."""
    import tempfile

    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w") as file:
            file.write(json.dumps(data, indent=indent))
            file.flush()
            os.fsync(file.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk: no half file left behind
        raise


def read_json(path: Path, default: Any = None) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return default


@dataclass(frozen=True)
class JobDir:
    """The files of one job."""

    path: Path

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def manifest(self) -> Path:
        return self.path / "manifest.json"

    @property
    def plan(self) -> Path:
        return self.path / "plan.json"

    @property
    def job(self) -> Path:
        return self.path / "job.json"

    @property
    def replicas(self) -> Path:
        return self.path / "replicas.json"

    @property
    def workspace(self) -> Path:
        """A TrainJob's initializer volume (its ``/workspace``): the dataset and model."""
        return self.path / "workspace"

    @property
    def events(self) -> Path:
        return self.path / "events.jsonl"

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    @property
    def script(self) -> Path:
        """A shipped script (``--script``, the magic's cell), run from here."""
        return self.path / "script" / "main.py"

    @property
    def supervisor_log(self) -> Path:
        return self.path / "supervisor.log"

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the job's lock, against every thread and process of this machine (each
        call opens the lock file afresh: ``flock`` is per open file). ``JobNotFound``
        when the job is gone, or went while waiting: ``remove`` moves the directory away
        under the lock, so a waiter then holds the lock of a file no longer there."""
        try:
            fd = os.open(
                self.path / LOCK_FILE,
                os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                0o600,
            )
        except (FileNotFoundError, NotADirectoryError):
            raise JobNotFound(self.name) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                current = (self.path / LOCK_FILE).lstat()
            except FileNotFoundError:
                raise JobNotFound(self.name) from None
            held = os.fstat(fd)
            if (current.st_dev, current.st_ino) != (held.st_dev, held.st_ino):
                raise JobNotFound(self.name)  # removed, and a new job took the name
            yield
        finally:
            os.close(fd)  # releases the lock

    def remove(self) -> None:
        """Remove the job's files; ``JobNotFound`` if another remover was first. The
        directory is renamed away under the lock first, so no writer waiting for the
        lock writes into it afterwards, and no lock file is created in it again while
        it is being emptied (that left a directory the name could not be reused for)."""
        import secrets
        import shutil

        with self.lock():
            grave = self.path.with_name(f".removed-{self.name}-{secrets.token_hex(4)}")
            self.path.rename(grave)
        shutil.rmtree(grave, ignore_errors=True)

    def log(self, replica: str, *, previous: bool = False) -> Path:
        return self.logs / (f"{replica}.previous.log" if previous else f"{replica}.log")

    def add_event(self, type_: str, reason: str, message: str, obj: str) -> None:
        line = json.dumps(
            {
                "type": type_,
                "reason": reason,
                "message": message,
                "object": obj,
                "time": time.time(),
            }
        )
        # Events are best effort, as in Kubernetes: a full disk loses them, never the job.
        with contextlib.suppress(OSError), self.events.open("a") as f:
            f.write(line + "\n")
