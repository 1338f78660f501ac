"""Stopping what a job's processes leave behind, without ever touching anyone else's.

The supervisor and its watchdog are child subreapers: a process whose parent dies is
adopted by the nearest of them still alive. Our children cannot be confused with
unrelated processes (a child's pid is not reused before we reap it), and a process group
one of our children is in belongs to the job: groups never span sessions, and every
session here was made by a job process. So these helpers signal only our own children
and the groups they hold.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Collection

from ...processes import child_pids


def _kill_with_group(pid: int) -> None:
    """SIGKILL our child ``pid`` and the process group it is in (unless that is ours)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        group = os.getpgid(pid)
        if group != os.getpgid(0):
            os.killpg(group, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def stop_strays(running: Collection[int], ended: Collection[int]) -> None:
    """Kill what finished nodes left behind (adopted by us), then reap what has exited.

    ``running`` are the pids of the nodes still running, ``ended`` those of the nodes
    that have finished (each node leads its own process group). An adopted process in
    an ended node's group is killed, as a container's processes end with its main
    process; one that left for a session of its own cannot be told apart by node, so it
    is killed once no node runs. The nodes themselves are never reaped here (asyncio
    does)."""
    for pid in child_pids():
        if pid in running:
            continue
        with contextlib.suppress(ProcessLookupError):
            if not running or os.getpgid(pid) in ended:
                _kill_with_group(pid)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def kill_all_children() -> dict[int, int]:
    """Kill every child, and every process adopted meanwhile, until none is left; the
    wait status of each, by pid. Blocks until they are all gone."""
    statuses: dict[int, int] = {}
    while True:
        for pid in child_pids():
            _kill_with_group(pid)
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return statuses
        statuses[pid] = status
