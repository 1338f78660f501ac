"""The index of settled local jobs: one file, so that listing 1,000 jobs reads one file
and the jobs directory instead of two files per job (a cold ``GET jobs`` after a reboot
waited on each).

``<root>/jobs/index.json`` maps a job's name to what a list shows of its ``job.json``
and ``replicas.json`` (``LISTED_JOB_KEYS``, ``LISTED_REPLICA_KEYS``: not the
supervisor's pids, ports and marks) once nothing would write them any more, with the
inode of its directory (as ``os.scandir`` gives it, without reading the directory's
inode): an entry whose directory is gone, or is another directory now, is not that
job's. It is written without line breaks: a cold first list reads and parses all of it.

Who keeps it true: a job's supervisor adds the job as its last act, once the job has
finished and none of its nodes runs (``add``); whoever writes a job's files after that,
or removes them, forgets it first (the backend's delete, the watchdog recording a
supervisor's death, a TTL's removal): ``forget``. A reader that finds a settled job
not yet in it (its supervisor was killed, a job from before the index) adds it. Writers
lock the jobs directory (``flock``) around their read-modify-write and replace the file
atomically, so a reader never sees half of it and never needs the lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .controllers import FAILURE_KEY, MESSAGE_KEY
from .progress import PROGRESS_KEY
from .store import read_json, write_json

INDEX = "index.json"  # not a job's name: names are DNS-1035 labels, without dots
# What ``LocalBackend._info_of`` reads of a finished job's files: all the index keeps.
LISTED_JOB_KEYS = (
    "kind",
    "state",
    "conditions",
    "nodes",
    "gpus",
    "created",
    "started",
    "finished",
    "logdir",
    PROGRESS_KEY,
    FAILURE_KEY,
    MESSAGE_KEY,
)
LISTED_REPLICA_KEYS = ("phase", "restarts", "exit_code", "reason", "message")


def index_path(jobs_dir: Path) -> Path:
    return jobs_dir / INDEX


def read_index(jobs_dir: Path) -> dict[str, dict[str, Any]]:
    """The entries by job name ({} without an index, or with one that is not ours)."""
    try:
        data = read_json(index_path(jobs_dir), {})
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict) and valid(v)}


def valid(entry: Mapping[str, Any]) -> bool:
    return (
        isinstance(entry.get("inode"), int)
        and isinstance(entry.get("job"), dict)
        and isinstance(entry.get("replicas"), dict)
    )


def entry_for(
    path: Path, job: Mapping[str, Any], replicas: Mapping[str, Any], inode: int | None = None
) -> dict[str, Any]:
    """An entry for the job directory ``path`` with what a list shows of these files'
    contents (``inode``: its inode from the parent's listing, when the caller has it)."""
    inode = listed_inode(path) if inode is None else inode
    return {"inode": inode, "job": listed_job(job), "replicas": listed_replicas(replicas)}


def listed_job(job: Mapping[str, Any]) -> dict[str, Any]:
    return {key: job[key] for key in LISTED_JOB_KEYS if key in job}


def listed_replicas(replicas: Mapping[str, Any]) -> dict[str, Any]:
    return {
        name: {key: r[key] for key in LISTED_REPLICA_KEYS if key in r}
        if isinstance(r, Mapping)
        else r
        for name, r in replicas.items()
    }


def listed_inode(path: Path) -> int:
    """The directory's inode as its parent's listing gives it - what a reader compares
    with: on overlayfs a listing's inode numbers need not be ``stat``'s."""
    with os.scandir(path.parent) as listing:
        for entry in listing:
            if entry.name == path.name:
                return entry.inode()
    raise FileNotFoundError(path)


@contextlib.contextmanager
def _locked(jobs_dir: Path) -> Iterator[dict[str, dict[str, Any]]]:
    """The index to change, written back when the block ends without an error."""
    jobs_dir.mkdir(parents=True, exist_ok=True)
    # The lock is the jobs directory's own: no file of its own to leave behind.
    fd = os.open(jobs_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        entries = read_index(jobs_dir)
        before = json.dumps(entries, sort_keys=True)
        yield entries
        if json.dumps(entries, sort_keys=True) == before:
            return
        if entries:
            write_json(index_path(jobs_dir), entries, indent=None)
        else:  # no job left: nothing left of the index either
            index_path(jobs_dir).unlink(missing_ok=True)
    finally:
        os.close(fd)  # releases the lock


def add(jobs_dir: Path, entries: Mapping[str, dict[str, Any]], *, recheck: bool = False) -> None:
    """Add (or replace) settled jobs' entries. ``recheck`` (a reader's entries, read
    without the lock): only those whose directory and ``job.json`` are still the ones
    read - a job deleted and submitted again meanwhile may even have the same inode."""
    with _locked(jobs_dir) as index:
        for name, entry in entries.items():
            if recheck and not still(jobs_dir / name, entry):
                continue
            index[name] = entry


def still(path: Path, entry: Mapping[str, Any]) -> bool:
    try:
        same_dir = listed_inode(path) == entry["inode"]
        return bool(same_dir and listed_job(read_json(path / "job.json", {})) == entry["job"])
    except (OSError, ValueError):
        return False


def forget(jobs_dir: Path, name: str) -> None:
    """The job's files are about to change or go: its entry is no longer true."""
    if not index_path(jobs_dir).exists():
        return
    with _locked(jobs_dir) as index:
        index.pop(name, None)
