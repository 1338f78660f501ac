"""The kubelet's restart in place: CrashLoopBackOff's growing wait and its texts."""

from __future__ import annotations

from dataclasses import dataclass

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

    def delay(self, restarts: int) -> float:
        """The wait before the ``restarts``-th restart (1 for the first)."""
        return min(self.first * 2.0 ** (restarts - 1), self.first * CRASH_BACK_OFF_GROWTH)

    def enter(self, replica: Replica, code: int, container: str, pod: str, now: float) -> None:
        """The node's container exited with ``code`` and restarts in place: the pod stays
        Running, restartCount + 1, CrashLoopBackOff until the wait is over."""
        replica.restarts += 1
        delay = self.delay(replica.restarts)
        replica.phase = "Running"
        replica.exit_code = code
        replica.reason = "CrashLoopBackOff"
        replica.message = (
            f"back-off {go_duration(delay)} restarting failed container={container} pod={pod}"
        )
        replica.back_off_until = now + delay

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
