"""Why a job failed and what it waits for, in one look (the wire models ``failure`` and
``waiting`` of ``GET jobs``), and the known failures recognised from the platform's reason,
the exit code and the failing run's last lines, each with a one-sentence hint naming the
flag to change. Pure: the backends hand in what they read (a replica's state, its log's
last lines, a scheduler's or Kueue's message).

Recognised: OOMKilled / exit 137, CUDA out of memory, Bus error and shm exhaustion
(DataLoader workers, NCCL's posix_fallocate), NCCL / gloo / rendezvous timeouts and
connection refused to the master (a peer failed first), ImagePullBackOff / ErrImagePull,
CreateContainerConfigError (a missing secret or config map), FailedMount and an
unbound PVC, JobSet's name-too-long event, an admission webhook's refusal, Evicted,
the deadline and the backoff limit; waiting: Unschedulable (the scheduler's message),
image pulling, ContainerCreating, Kueue not admitted, suspended, no operator yet, and
a node restarted in place waiting for peers that have all exited (``waiting_for_peers``).
"""

from __future__ import annotations

import re
import signal as signals
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .fields import FIELD
from .messages import Message, coded_from_wire, coded_wire, msg
from .wire import dataclass_wire

TAIL_LINES = 20  # the last lines kept when there is no traceback
MAX_TAIL_LINES = 60  # a traceback is kept from its first line, at most this many
MAX_LINE = 500  # characters of one kept line
MAX_MESSAGE = 300
TRACEBACK = "Traceback (most recent call last):"
LOG_SOURCES = ("current", "previous", "archive")
# The wrapper torchrun raises after a child's own traceback: never the message.
_WRAPPERS = ("ChildFailedError",)
# The lines Python puts between chained tracebacks.
_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")
# torchrun's per-rank prefix (``--tee``, ``--local-ranks-filter``): "[rank0]: ".
_RANK_PREFIX = re.compile(r"^\[(?:rank|default)\d*\]:\s?")
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure)\b")


def flag(wire: str) -> str:
    """The CLI flag of a job field, as the hint names it (``--shm``)."""
    return FIELD[wire].flag


@dataclass
class JobFailure:
    """The replica that failed first and why: its exit code or signal, the platform's
    reason, one line of message and its last lines (from the traceback on)."""

    replica: str
    reason: str
    message: str
    exit_code: int | None = None
    signal: str | None = None
    tail: list[str] = field(default_factory=list)
    log_source: str | None = None  # where ``tail`` came from: current, previous, archive
    hint: Message | None = None

    def to_wire(self) -> dict[str, Any]:
        """``hint`` in English, ``hintCode``/``hintParams`` for the frontend to translate."""
        return {**dataclass_wire(self, skip=("hint",)), **coded_wire("hint", self.hint)}

    @classmethod
    def from_wire(cls, data: Any) -> JobFailure | None:
        """A stored summary (the local job record, a job's annotation) read back; None
        if it is not one (written by another version, or by someone else)."""
        if not isinstance(data, Mapping):
            return None
        replica, reason, message = data.get("replica"), data.get("reason"), data.get("message")
        if not all(isinstance(v, str) for v in (replica, reason, message)):
            return None
        exit_code = data.get("exitCode")
        sig = data.get("signal")
        tail = data.get("tail")
        source = data.get("logSource")
        return cls(
            replica=str(replica)[:MAX_LINE],
            reason=str(reason)[:MAX_LINE],
            message=str(message)[:MAX_MESSAGE],
            exit_code=exit_code
            if isinstance(exit_code, int) and not isinstance(exit_code, bool)
            else None,
            signal=sig[:16] if isinstance(sig, str) else None,
            tail=[line[:MAX_LINE] for line in tail if isinstance(line, str)][-MAX_TAIL_LINES:]
            if isinstance(tail, list)
            else [],
            log_source=source if source in LOG_SOURCES else None,
            hint=coded_from_wire(data, "hint"),
        )

    @property
    def headline(self) -> str:
        """One line: ``master-0 exited 1: ZeroDivisionError: division by zero``."""
        if self.signal:
            how = f"was killed by {self.signal}"
        elif self.exit_code is not None:
            how = f"exited {self.exit_code}"
        else:
            how = self.reason
        if self.reason == "OOMKilled":
            how = "was OOMKilled"
        who = f"{self.replica} {how}" if self.replica else how
        return f"{who}: {self.message}" if self.message else who


@dataclass
class JobWaiting:
    """What keeps a job (or one of its replicas) from running."""

    reason: str
    message: str | Message  # the platform's words, or ours (a Message)
    hint: Message | None = None

    def to_wire(self) -> dict[str, Any]:
        """``message`` and ``hint`` in English, each with its code and parameters for the
        frontend to translate (``messageCode``: null where the words are the platform's)."""
        return {
            "reason": self.reason,
            **coded_wire("message", self.message),
            **coded_wire("hint", self.hint),
        }

    @classmethod
    def from_wire(cls, data: Any) -> JobWaiting | None:
        """A stored one (the local job record) read back; None if it is not one."""
        if not isinstance(data, Mapping):
            return None
        reason, message = data.get("reason"), data.get("message")
        if not (isinstance(reason, str) and isinstance(message, str)):
            return None
        return cls(
            reason=reason[:MAX_LINE],
            message=coded_from_wire(data, "message") or message[:MAX_MESSAGE],
            hint=coded_from_wire(data, "hint"),
        )


# -- reading a failing run's output -------------------------------------------------------


def signal_name(exit_code: int | None) -> str | None:
    """The signal an exit code says killed the process: 128+N as a container runtime
    reports it (137 -> SIGKILL), or a negative return code as Python's subprocess does."""
    if exit_code is None:
        return None
    number = -exit_code if exit_code < 0 else exit_code - 128 if 128 < exit_code < 160 else 0
    try:
        return signals.Signals(number).name if number else None
    except ValueError:
        return None


def _clean(line: str) -> str:
    return _RANK_PREFIX.sub("", line.rstrip("\r\n"))[:MAX_LINE]


def failure_tail(lines: Sequence[str], limit: int = TAIL_LINES) -> list[str]:
    """The lines to show of a failed run (``lines``: its last few hundred): from the
    traceback on when there is one (the last one not torchrun's wrapper, with the
    exceptions chained to it), else the last ``limit`` lines; never more than
    ``MAX_TAIL_LINES`` (a long traceback keeps its first line and its end)."""
    cleaned = [_clean(line) for line in lines]
    while cleaned and not cleaned[-1].strip():
        cleaned.pop()
    start = _traceback_start(cleaned)
    if start is None:
        return cleaned[-limit:] if limit > 0 else []
    tail = cleaned[start:]
    if len(tail) > MAX_TAIL_LINES:
        skipped = len(tail) - MAX_TAIL_LINES + 1
        tail = [tail[0], f"  ... ({skipped} lines)", *tail[-(MAX_TAIL_LINES - 2) :]]
    return tail


def _traceback_start(lines: Sequence[str]) -> int | None:
    """Where the traceback to show starts: the last ``Traceback`` line whose exception is
    not torchrun's wrapper, moved back over the tracebacks chained before it."""
    starts = [i for i, line in enumerate(lines) if line.strip() == TRACEBACK]
    chosen = None
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        if not any(w in line for line in lines[start:end] for w in _WRAPPERS):
            chosen = index
    if chosen is None:
        return starts[0] if starts else None
    while chosen > 0:
        between = [line.strip() for line in lines[starts[chosen - 1] : starts[chosen]]]
        if not any(line.startswith(_CHAINED) for line in between):
            break
        chosen -= 1
    return starts[chosen]


def failure_message(lines: Sequence[str]) -> str:
    """One line that says what went wrong: the exception a traceback ends with (not
    torchrun's ChildFailedError around it), else the last line that names an error,
    else the last non-empty line."""
    cleaned = [_clean(line).strip() for line in lines]
    exceptions = [
        line
        for line in cleaned
        if _EXCEPTION_LINE.match(line) and not any(w in line for w in _WRAPPERS)
    ]
    if exceptions:
        return exceptions[-1][:MAX_MESSAGE]
    for line in reversed(cleaned):
        if line and re.search(r"error|fatal|killed|exception", line, re.IGNORECASE):
            return line[:MAX_MESSAGE]
    return next((line for line in reversed(cleaned) if line), "")[:MAX_MESSAGE]


# -- known failures ---------------------------------------------------------------------

_CUDA_OOM = re.compile(r"CUDA out of memory|OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED")
_SHM = re.compile(
    r"Bus error|insufficient shared memory|posix_fallocate failed|"
    r"unable to (?:write to|allocate shared memory)|/dev/shm|No space left on device.*shm",
    re.IGNORECASE,
)
_PEER = re.compile(
    r"NCCL.*(?:timeout|timed out|Watchdog caught collective operation timeout)|"
    r"gloo.*(?:timed? ?out|Connection (?:refused|reset|closed))|"
    r"RendezvousTimeoutError|RendezvousClosedError|DistNetworkError|"
    r"(?:Connection refused|connect\(\) timed out).*(?:master|:\d+)|"
    r"Socket Timeout|failed to recv, got 0 bytes|Connection closed by peer",
    re.IGNORECASE,
)
_MISSING = re.compile(r'(persistentvolumeclaim|secret|configmap)s? "([^"]+)" not found', re.I)


def failure_hint(
    reason: str | None,
    exit_code: int | None,
    lines: Iterable[str] = (),
    *,
    other_failed: str | None = None,
) -> Message | None:
    """One sentence naming the flag to change, for a failure this module knows;
    ``other_failed``: another replica that failed (a peer of a collective timeout)."""
    text = "\n".join(lines)
    if reason == "OOMKilled" or (exit_code == 137 and reason not in ("Error", "StartError")):
        return msg("hint_oom", memory=flag("memory"))
    if _CUDA_OOM.search(text):
        return msg("hint_cuda_oom", gpus=flag("gpus"), nodes=flag("nodes"))
    if _SHM.search(text):
        return msg("hint_shm", shm=flag("shm"))
    if _PEER.search(text):
        if other_failed:
            return msg("hint_peer_failed", replica=other_failed, deadline=flag("deadline"))
        return msg("hint_peer_late", deadline=flag("deadline"))
    if reason == "Evicted":
        return msg("hint_evicted", memory=flag("memory"))
    if reason == "DeadlineExceeded":
        return msg("hint_deadline", deadline=flag("deadline"))
    if reason == "BackoffLimitExceeded":
        return msg("hint_backoff", backoffLimit=flag("backoffLimit"))
    if exit_code == 137 or signal_name(exit_code) == "SIGKILL":
        return msg("hint_sigkill", memory=flag("memory"))
    return None


def waiting_hint(reason: str, message: str, *, image: str | None = None) -> Message | None:
    """One sentence for a job or replica that cannot start yet."""
    missing = _MISSING.search(message)
    if reason in ("ImagePullBackOff", "ErrImagePull", "InvalidImageName"):
        if image:
            return msg("hint_image_named", image=image, flag=flag("image"))
        return msg("hint_image", flag=flag("image"))
    if missing and missing.group(1).lower() == "persistentvolumeclaim":
        return msg("hint_create_pvc", name=missing.group(2), pvc=flag("pvc"))
    if missing:
        return msg(
            "hint_create_object",
            kind=missing.group(1).lower(),
            name=missing.group(2),
            env=flag("env"),
        )
    if reason in ("Unschedulable", "FailedScheduling"):
        if re.search(r"Insufficient [\w./-]*gpu", message):
            return msg("hint_no_gpus", gpus=flag("gpus"))
        if "Insufficient" in message:
            return msg("hint_no_room", cpu=flag("cpu"), memory=flag("memory"))
        if "taint" in message or "node affinity" in message or "selector" in message:
            return msg(
                "hint_no_match",
                nodeSelector=flag("nodeSelector"),
                tolerations=flag("tolerations"),
            )
        if "persistentvolumeclaim" in message.lower():
            return msg("hint_pvc_unbound", pvc=flag("pvc"))
        return None
    if reason in ("QuotaReserved", "Admitted", "Inadmissible", "Pending") and "quota" in (
        message.lower()
    ):
        return msg("hint_quota", gpus=flag("gpus"))
    if reason == "Suspended":
        return msg("hint_resume")
    if "name is too long" in message:
        return msg("hint_name_too_long", name=flag("name"))
    if "admission webhook" in message and "denied the request" in message:
        return msg("hint_webhook")
    if reason == WAITING_FOR_PEERS:
        return msg("hint_waiting_for_peers")
    return None


# -- a node that waits for peers that have all exited ------------------------------------

WAITING_FOR_PEERS = "WaitingForPeers"
# Seconds restarted nodes are alone, their peers all ended, before the job says it cannot
# complete: a peer's end and a restart seconds apart are a job finishing or recovering.
ALONE_GRACE = 60.0


@dataclass(frozen=True)
class NodeRun:
    """A replica's current and last run, as its pod shows them (``waiting_for_peers``)."""

    name: str
    phase: str  # its pod's phase
    running_since: float | None  # when the running container started; None: none runs
    ended: float | None  # when its last run ended
    restarted: bool  # the running container is a restart in place (restartCount > 0)
    restarting: bool = False  # in CrashLoopBackOff: it is started again


def waiting_for_peers(runs: Sequence[NodeRun], now: float, grace: float) -> JobWaiting | None:
    """Nodes restarted in place whose peers have all ended for good (OnFailure restarts
    only the failed node: a master that failed at the end, or at its bind, while its worker
    finished) wait for a rendezvous nobody comes to, and the job stays Running for ever,
    as the operator keeps it. Said once they have been alone for ``grace`` seconds, from
    the later of their start and the last peer's end (a restart before the peers ended
    waits as long as one after). Only restarted nodes: a first run outliving its peers
    (a master saving its checkpoint) is a job finishing."""
    running = [r for r in runs if r.running_since is not None]
    peers = [r for r in runs if r.running_since is None]
    if not running or not peers or not all(r.restarted for r in running):
        return None
    if any(r.phase not in ("Succeeded", "Failed") or r.restarting for r in peers):
        return None  # a peer is still to start, or to start again
    alone_since = max([r.running_since or 0.0 for r in running] + [r.ended or 0.0 for r in peers])
    if now - alone_since < grace:
        return None
    text = msg(
        "waiting_for_peers_one" if len(running) == 1 else "waiting_for_peers",
        nodes=", ".join(r.name for r in running),
        peers=", ".join(f"{r.name} {r.phase}" for r in peers),
    )
    return JobWaiting(WAITING_FOR_PEERS, text, waiting_hint(WAITING_FOR_PEERS, str(text)))


# Replica reasons that say what a Pending replica waits for (the kubelet's and the
# scheduler's); the others (plain Pending, Suspended) say nothing of their own.
WAITING_REASONS = (
    "Unschedulable",
    "SchedulingGated",
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "ContainerCreating",
    "CreateContainerConfigError",
    "FailedMount",
    "WaitingForMaster",
)


def job_waiting(
    state: str,
    replicas: Iterable[Any],
    *,
    message: str | Message | None = None,
    admission: JobWaiting | None = None,
    image: str | None = None,
) -> JobWaiting | None:
    """What a job that is not running yet (or whose replicas are Pending) waits for:
    Kueue's verdict first (``admission``), then suspension, then the first replica the
    platform names a reason for (``replicas``: ``ReplicaInfo``s), then the job's own
    ``message`` (no operator yet). ``state``: the job's state's value."""
    if state in ("Succeeded", "Failed"):
        return None
    if admission is not None:
        return admission
    if state == "Suspended":
        return JobWaiting("Suspended", msg("waiting_suspended"), waiting_hint("Suspended", ""))
    for replica in replicas:
        reason = replica.reason or ""
        if replica.phase == "Pending" and reason in WAITING_REASONS:
            said = replica.message or reason
            text = f"{replica.name}: {said}"
            hint = waiting_hint(reason, text, image=image)
            if isinstance(said, Message):  # ours (init-pytorch waits for the master)
                return JobWaiting(
                    reason, msg("replica_said", replica=replica.name, said=said), hint
                )
            return JobWaiting(reason, text, hint)
    if message and state == "Submitted":
        # A controller's Warning event ("Reason: message"), else that none came yet.
        event = isinstance(message, str) and re.match(r"^\w+: ", message)
        reason = "NotCreated" if event else "NoOperator"
        return JobWaiting(reason, message, waiting_hint(reason, str(message)))
    return None
