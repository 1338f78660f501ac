"""The log archive: each replica's output also kept, line-timestamped, on the job's PVC.

A job whose archive is on starts its command through ``archive_wrapper.py`` (shipped
inline as ``python3 -c <source>``, like the script bootstrap; no shell, nothing to
install in the image). The wrapper writes ``<base>/.ptjob-logs/<job>/<replica>.log``
for a replica's first run and ``<replica>.<n>.log`` for each later one (a restarted
container or a recreated pod takes the first free suffix), each line
``<RFC 3339 ns timestamp> <text>``. It learns its replica from the env set here:
``PTJOB_REPLICA_TYPE`` (a PyTorchJob pod's replica-type label through the downward API;
``node`` in a TrainJob) and ``PTJOB_REPLICA_INDEX`` (the replica-index label), else the
Job controller's ``JOB_COMPLETION_INDEX`` (a TrainJob's node). Pure: readers live with
the backends (``backends/archive.py``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ARCHIVE_ENV = "PTJOB_LOG_ARCHIVE"
TYPE_ENV = "PTJOB_REPLICA_TYPE"
INDEX_ENV = "PTJOB_REPLICA_INDEX"
ARCHIVE_ENVS = (ARCHIVE_ENV, TYPE_ENV, INDEX_ENV)
ARCHIVE_DIR = ".ptjob-logs"

_LINES = Path(__file__).parent.parent / "job" / "loglines.py"
# The wrapper with the log line contract's DisplayLines in it (one file: `python3 -c`).
WRAPPER = (
    Path(__file__)
    .with_name("archive_wrapper.py")
    .read_text()
    .replace(
        "# <job/loglines.py>\n",
        _LINES.read_text().replace("from __future__ import annotations\n", ""),
    )
)
# How a wrapped command is recognised when a manifest is read back (any version of it).
MARKER = WRAPPER.split("\n", 1)[0]
WRAPPER_PREFIX = ("python3", "-c", WRAPPER)

# <replica>.log (run 0) or <replica>.<n>.log
RUN_FILE = re.compile(r"^(?P<replica>[a-z]+-\d+)(?:\.(?P<run>\d+))?\.log$")


def archive_dir(base: str, job: str) -> str:
    """Where a job's archive is, in its pods' file system."""
    return posixpath.join(base, ARCHIVE_DIR, job)


def base_of(directory: str) -> str | None:
    """``archive_dir`` read back (whatever the job's name was): the base directory, None
    if ``directory`` is not one."""
    parent = posixpath.dirname(posixpath.normpath(directory))
    return posixpath.dirname(parent) if posixpath.basename(parent) == ARCHIVE_DIR else None


def wrap(command: Sequence[str]) -> list[str]:
    return [*WRAPPER_PREFIX, *command]


def unwrap(command: Sequence[str]) -> tuple[list[str], bool]:
    """The user's command and whether it was wrapped."""
    wrapped = (
        len(command) >= 3
        and command[0] in ("python3", "python")
        and command[1] == "-c"
        and command[2].startswith(MARKER)
    )
    return (list(command[3:]), True) if wrapped else (list(command), False)


def archive_env(base: str, job: str, replica_type: str | None) -> list[dict[str, Any]]:
    """The wrapper's env: the directory, and the replica's type (a literal, or None:
    the pod's PyTorchJob labels through the downward API) and index."""
    env: list[dict[str, Any]] = [{"name": ARCHIVE_ENV, "value": archive_dir(base, job)}]
    if replica_type is not None:
        return [*env, {"name": TYPE_ENV, "value": replica_type}]
    labels = (("TYPE", "replica-type"), ("INDEX", "replica-index"))
    return env + [
        {
            "name": f"PTJOB_REPLICA_{key}",
            "valueFrom": {
                "fieldRef": {"fieldPath": f"metadata.labels['training.kubeflow.org/{label}']"}
            },
        }
        for key, label in labels
    ]


def run_file(replica: str, run: int) -> str:
    return f"{replica}.{run}.log" if run else f"{replica}.log"


def parse_run_file(name: str) -> tuple[str, int] | None:
    """``worker-1.2.log`` -> (``worker-1``, 2); None for any other name."""
    match = RUN_FILE.match(name)
    if match is None:
        return None
    return match["replica"], int(match["run"] or 0)
