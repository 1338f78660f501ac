"""Why a cluster's jobs wait, read beside them: the controller's newest Warning event of
a job nothing was made for yet, Kueue's verdict on a queued job's Workload, a pod's
FailedMount event, nodes restarted after their peers ended (from the pods read anyway).
Every read is best effort: what cannot be read (RBAC, no Kueue) leaves the job's state
and message as they are."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from kubernetes_asyncio import client

from ...job.failure import ALONE_GRACE, JobWaiting, job_waiting, waiting_for_peers, waiting_hint
from ...job.messages import msg
from ...kinds import JobKind
from ...kinds.manifests import QUEUE_LABEL
from ...kinds.pods import epoch, read_conditions
from ..base import BackendError, Event, JobInfo, JobState

LOGGER = logging.getLogger(__name__)

# Kueue's Workloads (kueue.x-k8s.io/v1beta1): why a queued job is not admitted yet.
WORKLOADS = ("kueue.x-k8s.io", "v1beta1", "workloads")


def event_of(event: Any, source: str) -> Event:
    """A core/v1 Event of ``source`` (as the views name it). The Trainer records through
    events.k8s.io, whose events have only ``eventTime``."""
    when = event.last_timestamp or event.event_time or event.first_timestamp
    return Event(
        type=event.type or "Normal",
        reason=event.reason or "",
        message=event.message or "",
        object=source,
        time=epoch(when) or 0.0,
        count=event.count or 1,
    )


class WaitingReader:
    """The reads behind ``JobInfo.message`` (a job not made) and ``JobInfo.waiting``.
    ``core``/``custom``: the backend's API objects; ``call``: its call, API errors turned
    into ``BackendError``s; ``namespace``: its namespace, asked at each read."""

    def __init__(
        self,
        core: Callable[[], Awaitable[client.CoreV1Api]],
        custom: Callable[[], Awaitable[client.CustomObjectsApi]],
        call: Callable[..., Awaitable[Any]],
        namespace: Callable[[], str],
    ) -> None:
        self.core = core
        self.custom = custom
        self._call = call
        self.namespace = namespace

    async def why_not_made(self, kind: JobKind, infos: Sequence[JobInfo]) -> None:
        """Jobs nothing was made for yet (no status, no pods): their controller's newest
        Warning event as their message - e.g. a TrainJob whose name is too long for JobSet
        stays so for ever, and only its events say why. One events request for them all
        (the kind's Warnings in the namespace), not one per job: a list of 1000 such jobs
        made 1001 requests on every refresh."""
        waiting = {info.name: info for info in infos if info.state is JobState.SUBMITTED}
        if not waiting:
            return
        core = await self.core()
        selector = f"involvedObject.kind={kind.kind},type=Warning"
        if len(waiting) == 1:
            selector += f",involvedObject.name={next(iter(waiting))}"
        try:
            found = await self._call(
                "list events", core.list_namespaced_event(self.namespace(), field_selector=selector)
            )
        except BackendError:
            return  # events unreadable (RBAC): the state and the waiting message stand
        # Newest by time, then (within a second) by resourceVersion, as ``events`` orders.
        newest: dict[str, tuple[float, int, Event]] = {}
        for item in found.items:
            name = item.involved_object.name
            if name in waiting:
                event = event_of(item, name)
                order = (event.time, int(item.metadata.resource_version or 0), event)
                if name not in newest or order[:2] >= newest[name][:2]:
                    newest[name] = order
        for name, (_, _, event) in newest.items():
            waiting[name].message = f"{event.reason}: {event.message}"

    async def fill(
        self,
        found: Sequence[tuple[JobKind, dict[str, Any], list[dict[str, Any]], JobInfo]],
        *,
        events: bool = False,
    ) -> None:
        """``waiting`` of each job not running yet or with Pending replicas: Kueue's
        verdict on its Workload (a job with a queue label), else its pods' reasons (a
        pod still creating: its newest FailedMount event when ``events``, one job's
        read), else its message; of a running one whose restarted nodes wait for peers
        that have all ended (the operator keeps it Running for ever), that, also as its
        message."""
        verdicts = await self._admission(
            [(job, info) for _, job, _, info in found if not info.state.finished]
        )
        now = time.time()
        for kind, job, pods, info in found:
            uid = str((job.get("metadata") or {}).get("uid", ""))
            info.waiting = job_waiting(
                info.state.value, info.replicas, message=info.message, admission=verdicts.get(uid)
            )
            if info.waiting is None and info.state is JobState.RUNNING:
                info.waiting = waiting_for_peers(kind.node_runs(pods), now, ALONE_GRACE)
                if info.waiting is not None:
                    info.message = info.message or info.waiting.message
            if events and info.waiting is not None and info.waiting.reason == "ContainerCreating":
                info.waiting = await self._mount_problem(kind, pods, info) or info.waiting

    async def _admission(
        self, jobs: Sequence[tuple[dict[str, Any], JobInfo]]
    ) -> dict[str, JobWaiting]:
        """Why Kueue has not admitted each queued job (by uid): its Workload's
        QuotaReserved (else Admitted) condition when False; no Workload yet, said so.
        Nothing where Kueue is not installed or its Workloads cannot be read."""
        queued = {
            str(job["metadata"].get("uid")): (job, info)
            for job, info in jobs
            if QUEUE_LABEL in ((job.get("metadata") or {}).get("labels") or {})
            and info.state in (JobState.SUBMITTED, JobState.CREATED, JobState.SUSPENDED)
        }
        if not queued:
            return {}
        try:
            custom = await self.custom()
            listed = await self._call(
                "list workloads",
                custom.list_namespaced_custom_object(
                    *WORKLOADS[:2], self.namespace(), WORKLOADS[2]
                ),
            )
        except BackendError as err:
            LOGGER.debug("waiting: cannot read Kueue's workloads: %s", err)
            return {}  # no Kueue here, or no right to read its Workloads
        by_owner: dict[str, dict[str, Any]] = {}
        for workload in listed.get("items", []):
            for owner in (workload.get("metadata") or {}).get("ownerReferences") or []:
                if owner.get("controller"):
                    by_owner[str(owner.get("uid"))] = workload
        verdicts = {}
        for uid, (job, _) in queued.items():
            queue = job["metadata"]["labels"][QUEUE_LABEL]
            workload = by_owner.get(uid)
            if workload is None:
                verdicts[uid] = JobWaiting(
                    "NoWorkload", msg("waiting_no_workload", queue=repr(queue))
                )
                continue
            conditions = {c.type: c for c in read_conditions(workload.get("status") or {})}
            if conditions.get("Admitted") and conditions["Admitted"].status == "True":
                continue
            blocking = next(
                (conditions[t] for t in ("QuotaReserved", "Admitted") if t in conditions), None
            )
            if blocking is None or blocking.status == "True":
                admission = msg("waiting_admission", queue=repr(queue))
                verdicts[uid] = JobWaiting("QuotaReserved", admission)
                continue
            message = f"Kueue ({blocking.reason}): {blocking.message}"
            verdicts[uid] = JobWaiting(
                "QuotaReserved", message, waiting_hint("QuotaReserved", blocking.message)
            )
        return verdicts

    async def _mount_problem(
        self, kind: JobKind, pods: Sequence[Mapping[str, Any]], info: JobInfo
    ) -> JobWaiting | None:
        """A replica still creating because a volume cannot be mounted (a missing
        secret or claim): the kubelet's newest FailedMount event on its pod says it."""
        creating = {r.name for r in info.replicas if r.reason == "ContainerCreating"}
        core = await self.core()
        for pod in pods:
            replica = kind.replica_of_pod(pod)
            if replica not in creating:
                continue
            selector = f"involvedObject.name={pod['metadata']['name']},type=Warning"
            try:
                found = await self._call(
                    "list events",
                    core.list_namespaced_event(self.namespace(), field_selector=selector),
                )
            except BackendError:
                return None
            mounts = [e for e in found.items if e.reason == "FailedMount"]
            if mounts:
                newest = max(mounts, key=lambda e: event_of(e, replica).time)
                text = f"{replica}: {newest.message}"
                return JobWaiting("FailedMount", text, waiting_hint("FailedMount", text))
        return None
