"""The supervisor's watchdog: the supervisor's parent, which outlives it.

``supervisor.main`` detaches, then forks: this process stays, the supervisor is its
child. Both are child subreapers, so a process the job leaves behind is adopted by the
supervisor while it lives and by the watchdog afterwards - never by init, where it could
no longer be told apart from unrelated processes. Every node also receives SIGKILL the
moment the supervisor dies (``processes.die_with_parent``), so none runs unsupervised
or dies of a broken pipe first.

When the supervisor exits, the watchdog kills whatever is left (every child, and every
process adopted meanwhile, until none is left). If the supervisor died before the job
finished - a signal, a crash - it records what happened: the job Failed with reason
``SupervisorLost`` and a message saying how the supervisor ended (the signal, or the
last line of its error output in ``supervisor.log``); the nodes it stopped Failed with
their exit codes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from types import FrameType
from typing import Any

from ... import untrusted_files
from ...processes import ProcessIdentity
from ..base import JobState
from . import index
from .reaping import kill_all_children
from .store import JobDir, read_json, write_json

LOST_REASON = "SupervisorLost"


def identities() -> dict[str, Any]:
    """For the supervisor to record in ``job.json``: itself and its watchdog."""
    recorded = {}
    for key, pid in (("supervisor", os.getpid()), ("watchdog", os.getppid())):
        identity = ProcessIdentity.of(pid)
        if identity is not None:
            recorded[key] = identity.to_wire()
    return recorded


def watch(jobdir: JobDir, supervisor: int) -> int:
    """Wait for the supervisor (our child); then stop what is left and, if the job was
    not finished, record how the supervisor ended. The supervisor's exit status."""
    reaped = False

    def forward(signum: int, frame: FrameType | None) -> None:
        # Stop requests reach the supervisor, which stops the nodes gracefully.
        if not reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(supervisor, signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    while True:
        pid, status = os.waitpid(supervisor, 0)
        if pid == supervisor:
            reaped = True
            break
    exits = kill_all_children()
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        with contextlib.suppress(OSError):  # deleted meanwhile, or no room to write
            record_loss(jobdir, supervisor, status, exits)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def how_it_ended(jobdir: JobDir, status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(ValueError):
            return f"was killed by signal {number} ({signal.Signals(number).name})"
        return f"was killed by signal {number}"
    how = f"exited with code {os.WEXITSTATUS(status)}"
    last = last_line(jobdir.supervisor_log)
    return f"{how}: {last}" if last else how


def last_line(path: Path, size: int = 4096) -> str:
    """The last non-empty line of ``path`` (at most ``size`` bytes read)."""
    try:
        lines = untrusted_files.read_tail(path, size).decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return next((line.strip() for line in reversed(lines) if line.strip()), "")


def record_loss(jobdir: JobDir, supervisor: int, status: int, exits: dict[int, int]) -> None:
    """The nodes killed after the supervisor died become Failed with their exit code; the
    job Failed with reason SupervisorLost, unless it had finished already."""
    index.forget(jobdir.path.parent, jobdir.name)  # its files change: no longer settled
    now = time.time()
    replicas = read_json(jobdir.replicas, {})
    stopped = []
    for name, record in replicas.items():
        identity = ProcessIdentity.from_wire(record.get("process"))
        if record.get("phase") != "Running" or identity is None:
            continue
        wait_status = exits.get(identity.pid)
        if wait_status is None:
            # Reaped by the dying supervisor itself (its threads die one by one, a node
            # killed by PR_SET_PDEATHSIG when the first one goes may be waited for by
            # another): SIGKILL is what ended it.
            code = 128 + signal.SIGKILL
        elif os.WIFSIGNALED(wait_status):
            code = 128 + os.WTERMSIG(wait_status)
        else:
            code = os.WEXITSTATUS(wait_status)
        record.update(
            phase="Failed",
            exit_code=code,
            reason=LOST_REASON,
            message="stopped because the job's supervisor died",
        )
        stopped.append(name)
    write_json(jobdir.replicas, replicas)
    job = read_json(jobdir.job, {})
    if JobState(job.get("state", "Created")).finished:
        return
    message = f"the supervisor of job {jobdir.name} (pid {supervisor}) " + how_it_ended(
        jobdir, status
    )
    if stopped:
        message += f"; its nodes {', '.join(stopped)} were stopped"
    for condition in job.get("conditions", []):
        if condition.get("type") in ("Running", "Restarting"):
            condition["status"] = "False"
    job.setdefault("conditions", []).append(
        {
            "type": "Failed",
            "status": "True",
            "reason": LOST_REASON,
            "message": message,
            "last_transition": now,
        }
    )
    job.update(state="Failed", finished=now)
    write_json(jobdir.job, job)
    jobdir.add_event("Warning", LOST_REASON, message, jobdir.name)
