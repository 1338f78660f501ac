"""What every kind reads from the objects the API returns (plain dicts): conditions, and
from a Pod a replica's phase, restarts, exit code and why it is not running. Pure, so the rules
are tested without a cluster; each kind names the replica and its main container."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..job.status import Condition, ReplicaInfo


def epoch(value: Any) -> float | None:
    """RFC 3339 (as the API writes it, or a datetime) -> seconds since the epoch."""
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
                info.message = info.message or (
                    f"last run: {last.get('reason') or 'exited'} with code {last.get('exitCode')}"
                )
        elif last:
            info.exit_code = last.get("exitCode")
    return info


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
