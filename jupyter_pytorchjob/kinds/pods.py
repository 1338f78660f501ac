"""What every kind reads from the objects the API returns (plain dicts): conditions, and
from a Pod a replica's phase, restarts, exit code and why it is not running. Pure, so the rules
are tested without a cluster; each kind names the replica and its main container."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..job.failure import JobFailure, NodeRun, signal_name
from ..job.messages import msg
from ..job.status import Condition, ReplicaInfo


def epoch(value: Any) -> float | None:
    """RFC 3339 (as the API writes it, or a datetime) -> seconds since the epoch."""
    from datetime import datetime  # here: reading local jobs parses no pod times

    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def read_conditions(status: Mapping[str, Any]) -> list[Condition]:
    """An object's ``status.conditions`` (any kind's), oldest first as the API keeps them."""
    return [
        Condition(
            type=c.get("type", ""),
            status=c.get("status", ""),
            reason=c.get("reason", ""),
            message=c.get("message", ""),
            last_transition=epoch(c.get("lastTransitionTime")) or 0.0,
        )
        for c in status.get("conditions") or []
    ]


def pod_replica(pod: Mapping[str, Any], *, name: str, container: str) -> ReplicaInfo:
    """The replica ``name`` that ``pod`` runs, read from its ``container``: a waiting
    container gives its reason (CrashLoopBackOff, ImagePullBackOff...) and the last
    run's exit code; an unschedulable pod says why it is not placed."""
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    statuses = status.get("containerStatuses") or []
    init_statuses = status.get("initContainerStatuses") or []
    restarts = sum(int(s.get("restartCount") or 0) for s in [*statuses, *init_statuses])
    info = ReplicaInfo(
        name=name,
        phase=status.get("phase") or "Unknown",
        restarts=restarts,
        node=spec.get("nodeName"),
    )
    main = next((s for s in statuses if s.get("name") == container), None)
    if main is not None:
        state = main.get("state") or {}
        last = (main.get("lastState") or {}).get("terminated") or {}
        if state.get("terminated"):
            term = state["terminated"]
            info.exit_code = term.get("exitCode")
            info.reason, info.message = term.get("reason"), term.get("message")
        elif state.get("waiting"):
            waiting = state["waiting"]
            info.reason, info.message = waiting.get("reason"), waiting.get("message")
            if last:
                info.exit_code = last.get("exitCode")
                info.message = info.message or msg(
                    "replica_last_run",
                    reason=str(last.get("reason") or "exited"),
                    exitCode=str(last.get("exitCode")),
                )
        elif last:
            info.exit_code = last.get("exitCode")
    return info


def node_run(pod: Mapping[str, Any], *, name: str, container: str) -> NodeRun:
    """The replica's current and last run from its ``container``'s status: when the
    running one started, when the last one finished, whether it is a restart in place,
    whether one is to come (waiting after a run: CrashLoopBackOff)."""
    status = pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    main: Mapping[str, Any] = next((s for s in statuses if s.get("name") == container), {})
    state = main.get("state") or {}
    last = (main.get("lastState") or {}).get("terminated") or {}
    running = state.get("running")
    return NodeRun(
        name=name,
        phase=status.get("phase") or "Unknown",
        running_since=epoch(running.get("startedAt")) if running else None,
        ended=epoch((state.get("terminated") or {}).get("finishedAt") or last.get("finishedAt")),
        restarted=int(main.get("restartCount") or 0) > 0,
        restarting=bool(state.get("waiting")) and bool(last),
    )


def unschedulable(pod: Mapping[str, Any], info: ReplicaInfo) -> None:
    """A pod the scheduler cannot place: its reason wins over everything else."""
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            info.reason = condition.get("reason") or "Unschedulable"
            info.message = condition.get("message")


def init_running(pod: Mapping[str, Any], init_container: str) -> bool:
    """Whether ``init_container`` has not finished yet."""
    statuses = (pod.get("status") or {}).get("initContainerStatuses") or []
    init = next((s for s in statuses if s.get("name") == init_container), None)
    return init is not None and not (init.get("state") or {}).get("terminated")


# The failure summary kept on a failed job (``job/failure.py``'s wire shape, JSON): read
# once from the failing run's log, so it outlives the pods, their logs and the server.
FAILURE_ANNOTATION = "pytorchjob.jupyter.org/failure"
# A Failed condition's message -> the platform's reason, where the controller words the
# cause only in its message (Training Operator v1.9.4, common/job.go: its reason is
# <Kind>Failed); a TrainJob's reasons (DeadlineExceeded, FailedJobs) say it themselves.
_CAUSE_IN_MESSAGE = (
    ("active longer than specified deadline", "DeadlineExceeded"),
    ("reached the specified backoff limit", "BackoffLimitExceeded"),
)


@dataclass(frozen=True)
class FailedRun:
    """Where a failed job's failure is: the summary the objects give (no output yet), and
    the pod and run whose log holds the rest (``pod`` None: no pod has it any more)."""

    failure: JobFailure
    pod: str | None = None
    previous: bool = False  # the container's previous run (restarted or in back-off)


def first_failed_run(
    job: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    *,
    container_of: Callable[[Mapping[str, Any]], str],
    replica_of: Callable[[Mapping[str, Any]], str],
) -> FailedRun:
    """The replica that failed first among ``pods`` (by when its failed run finished; a
    crash-looping container is dated by its latest crash, the only one its status keeps),
    its exit code, signal and reason (the kubelet's: Error, OOMKilled...; an evicted pod's
    Evicted); without one (pods gone, a deadline), the job's Failed condition."""
    found: list[tuple[float, FailedRun]] = []
    for pod in pods:
        status = pod.get("status") or {}
        name = str((pod.get("metadata") or {}).get("name", ""))
        replica = replica_of(pod)
        if status.get("reason") == "Evicted":
            failure = JobFailure(replica, "Evicted", str(status.get("message") or ""))
            found.append((_finished(status), FailedRun(failure, name)))
            continue
        container = container_of(pod)
        main: Mapping[str, Any] = next(
            (s for s in status.get("containerStatuses") or [] if s.get("name") == container), {}
        )
        current = (main.get("state") or {}).get("terminated") or {}
        last = (main.get("lastState") or {}).get("terminated") or {}
        for run, previous in ((current, False), (last, True)):
            code = run.get("exitCode")
            if isinstance(code, int) and code != 0:
                failure = JobFailure(
                    replica,
                    str(run.get("reason") or "Error"),
                    str(run.get("message") or "").strip(),
                    exit_code=code,
                    signal=signal_name(code),
                )
                when = epoch(run.get("finishedAt")) or float("inf")
                found.append((when, FailedRun(failure, name, previous)))
                break
    if found:
        return min(found, key=lambda item: item[0])[1]
    failed = [c for c in read_conditions(job.get("status") or {}) if c.type == "Failed"]
    condition = failed[-1] if failed else None
    reason = condition.reason if condition else "Failed"
    message = condition.message if condition else ""
    for words, cause in _CAUSE_IN_MESSAGE:
        if words in message:
            reason = cause
    return FailedRun(JobFailure("", reason, message))


def _finished(status: Mapping[str, Any]) -> float:
    """When an evicted pod ended: its newest container's end, else never known."""
    ends = [
        epoch(((s.get("state") or {}).get("terminated") or {}).get("finishedAt"))
        for s in status.get("containerStatuses") or []
    ]
    return min((e for e in ends if e is not None), default=float("inf"))
