"""Small process helpers shared by the local backend, TensorBoard and the CLI.

Pids are reused (``pid_max`` is 32768 on many machines and wraps within minutes under
load), so a pid written down earlier names *some* process, not necessarily ours. A
process is therefore recorded as a ``ProcessIdentity`` (pid and start time) and only
signalled while that same process is alive.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# Linux names its ephemeral range here; elsewhere IANA's dynamic range (macOS, Windows) is
# assumed, widened to Linux's default start.
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_ASSUMED_EPHEMERAL = (32768, 65535)
# Below it, ports of the registered range that a workstation rarely serves.
_LOWEST_PORT = 10000
_handed_out: deque[int] = deque(maxlen=512)


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(n) for n in _EPHEMERAL_RANGE.read_text().split())
    except (OSError, ValueError):
        return _ASSUMED_EPHEMERAL
    return low, high


def _bindable(port: int) -> bool:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (the caller's process
    binds it moments later: a job's rendezvous, a TensorBoard).

    The port comes from outside the kernel's ephemeral range: ports in it go to every
    bind(0) and every outgoing connection, so another job's gloo pairs or store clients
    could take it between this pick and the caller's bind. Outside it, only an explicit
    bind does. Ports handed out lately by this process are not handed out again."""
    # Imported here: readers of process identities (``ptjob list``) start faster.
    import secrets
    import socket

    low, high = _ephemeral_range()
    below, above = range(_LOWEST_PORT, low), range(high + 1, 65536)
    room = len(below) + len(above)
    for _ in range(200 if room else 0):
        pick = secrets.randbelow(room)
        port = below[pick] if pick < len(below) else above[pick - len(below)]
        if port not in _handed_out and _bindable(port):
            _handed_out.append(port)
            return port
    # A machine whose ephemeral range leaves no room: the kernel's pick.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pid_alive(pid: object) -> bool:
    """Whether a process with this pid exists (one we may not signal counts)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _start_and_state(pid: int) -> tuple[float, bool] | None:
    """The start time of process ``pid`` and whether it is a zombie; None if there is none.

    On Linux the start time is field 22 of ``/proc/<pid>/stat``: clock ticks since boot,
    an integer that never changes for a process (psutil's ``create_time`` adds the boot
    time, which the kernel derives from the wall clock: it may shift after a clock step).
    Elsewhere psutil's ``create_time``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
        return float(fields[19]), fields[0] == b"Z"  # fields 22 and 3 (after the name)
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return None  # Linux: no such process
    except (OSError, IndexError, ValueError):
        return None
    import psutil  # off Linux only: a command on Linux starts faster without it

    try:
        process = psutil.Process(pid)
        return process.create_time(), process.status() == psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


@dataclass(frozen=True)
class ProcessIdentity:
    """One process: its pid and its start time, which tells it apart from a later
    process given the same pid."""

    pid: int
    started: float

    @classmethod
    def of(cls, pid: int) -> ProcessIdentity | None:
        """The process now running as ``pid``; None if there is none."""
        found = _start_and_state(pid)
        return None if found is None else cls(pid, found[0])

    @classmethod
    def from_wire(cls, data: object) -> ProcessIdentity | None:
        """A recorded identity; None for anything else (a bare pid proves nothing)."""
        if not isinstance(data, dict):
            return None
        pid, started = data.get("pid"), data.get("started")
        if not isinstance(pid, int) or pid <= 0 or not isinstance(started, (int, float)):
            return None
        return cls(pid, float(started))

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)

    def alive(self) -> bool:
        """This very process still runs (a zombie has finished)."""
        found = _start_and_state(self.pid)
        return found is not None and found[0] == self.started and not found[1]

    def send(self, sig: signal.Signals) -> bool:
        """Send ``sig`` if this process is alive; whether it was sent."""
        if not self.alive():
            return False
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, sig)
            return True
        return False

    def send_group(self, sig: signal.Signals) -> bool:
        """Send ``sig`` to the process group this process leads, if it is alive and leads
        it (so the group id is still its own); whether it was sent."""
        if not self.alive():
            return False
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getpgid(self.pid) == self.pid:
                os.killpg(self.pid, sig)
                return True
        return False


def kill_marked(variable: str, value: str, *, timeout: float = 10.0) -> int:
    """SIGKILL every process of this user whose environment holds ``variable=value``
    (a job's random mark: every process the job starts inherits it, whatever group,
    session or parent it has now), and wait until they are gone; how many there were.
    Only the value's randomness ties a process to the job: make it unguessable."""
    import psutil  # only here: listing jobs need not load it

    me = os.getuid()
    marked = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if process.pid == os.getpid() or process.uids().real != me:
                continue
            if process.environ().get(variable) == value:
                marked.append(process)
    for process in marked:
        with contextlib.suppress(psutil.Error):
            process.kill()  # psutil checks first that the pid is still this process
    psutil.wait_procs(marked, timeout=timeout)
    return len(marked)


def child_pids() -> list[int]:
    """This process's children (alive or zombie), cheaply from
    ``/proc/self/task/*/children`` where the kernel has it, else through psutil."""
    tasks = Path("/proc/self/task")
    try:
        pids: set[int] = set()
        for task in tasks.iterdir():
            pids.update(int(p) for p in (task / "children").read_text().split())
        return sorted(pids)
    except OSError:
        import psutil  # off Linux only, as in _start_and_state

        return [p.pid for p in psutil.Process().children()]


# -- Linux process controls (prctl); elsewhere they do nothing -------------------------

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


_LINUX = sys.platform.startswith("linux")
_libc_prctl: Any = None  # libc's prctl, once ``load_prctl`` has found it


def load_prctl() -> None:
    """Find libc's prctl (ctypes), for ``become_subreaper`` and ``die_with_parent``: in
    the process that uses them, before it forks - a child between fork and exec must
    not load libraries. Not at import: reading process identities (``ptjob list``)
    loads no ctypes."""
    global _libc_prctl
    if _LINUX and _libc_prctl is None:
        import ctypes

        _libc_prctl = ctypes.CDLL(None, use_errno=True).prctl


def _prctl(option: int, value: int) -> bool:
    if not _LINUX:
        return False
    if _libc_prctl is None:
        # Loading it here could be between fork and exec: say so instead.
        raise RuntimeError("processes.load_prctl() was not called before prctl")
    return int(_libc_prctl(option, value, 0, 0, 0)) == 0


def become_subreaper() -> bool:
    """Orphaned descendants become our children (not init's), so we can still tell them
    apart from unrelated processes and stop them."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent(parent: int, sig: signal.Signals = signal.SIGKILL) -> None:
    """For a child (between fork and exec, or as it starts): receive ``sig`` when ``parent``
    dies (the thread that started it, in fact: start children from a long-lived one); exit at
    once if it died already."""
    _prctl(_PR_SET_PDEATHSIG, int(sig))
    if os.getppid() != parent:
        os._exit(1)
