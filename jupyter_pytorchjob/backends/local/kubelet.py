"""The kubelet's restart in place: at once, then CrashLoopBackOff's growing wait, its texts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the supervisor's nodes: readers of a job's files load no replica code
    from .replica import Replica


# The kubelet's wait before restarting a crashed container in place (OnFailure, Always):
# 10 s, doubling after each restart, at most 5 min (the kubelet's CrashLoopBackOff). The
# backend writes the first wait into job.json (``crash_back_off``; tests shorten it),
# the longest is always 30 times the first.
CRASH_BACK_OFF = 10.0
CRASH_BACK_OFF_GROWTH = 30


@dataclass(frozen=True)
class CrashLoopBackOff:
    """The back-off of one job's nodes, ``first`` seconds doubling to 30 times that."""

    first: float = CRASH_BACK_OFF

    @property
    def longest(self) -> float:
        return self.first * CRASH_BACK_OFF_GROWTH

    def enter(self, replica: Replica, code: int, container: str, pod: str, now: float) -> float:
        """The node's container exited with ``code`` and restarts in place: the pod stays
        Running, restartCount + 1; the wait before the restart is returned. As the kubelet
        decides it (``doBackOff``, pkg/kubelet/kuberuntime/kuberuntime_manager.go, over
        client-go util/flowcontrol/backoff.go, kubelet v1.20): a container without a
        back-off entry restarts at once and gets one of ``first``; with one it waits it
        out in CrashLoopBackOff and the entry doubles (at most ``longest``); an entry not
        moved on for twice the longest wait (``hasExpired``: a run of 10 min) counts as
        none."""
        replica.restarts += 1
        if replica.back_off is None or now - replica.back_off_updated > 2 * self.longest:
            delay, replica.back_off = 0.0, self.first
        else:
            delay = replica.back_off
            replica.back_off = min(2 * delay, self.longest)
        replica.back_off_updated = now + delay  # Backoff.Next runs at the restart
        replica.phase = "Running"
        replica.exit_code = code
        replica.back_off_until = now + delay
        if delay:
            replica.reason = "CrashLoopBackOff"
            replica.message = (
                f"back-off {go_duration(delay)} restarting failed container={container} pod={pod}"
            )
        return delay

    @staticmethod
    def over(replica: Replica, now: float) -> bool:
        """The node's wait is over: the kubelet starts its container again."""
        return replica.back_off_until is not None and now >= replica.back_off_until


def go_duration(seconds: float) -> str:
    """A duration as Go prints it (the kubelet's back-off text): 10s, 1m20s, 5m0s, 200ms."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest}s" if minutes else f"{rest}s"
