"""Kueue v0.14.4 (API kueue.x-k8s.io/v1beta1) as far as a job waiting for admission shows
it: the job's Workload and its QuotaReserved condition, worded as Kueue's scheduler words
them (paths under kubernetes-sigs/kueue at v0.14.4).

- A job with the ``kueue.x-k8s.io/queue-name`` label is suspended by Kueue's webhook
  on creation (``pkg/controller/jobframework/defaults.go:37-44``); the fake's tests
  suspend it as that webhook would.
- Its Workload is named ``<kind>-<job>-<hash>`` (``jobframework/workload_names.go``),
  controlled by the job (``SetControllerReference``) and labelled with the job's uid
  (``kueue.x-k8s.io/job-uid``; ``jobframework/reconciler.go:966-974``).
- A workload the scheduler cannot fit gets ``QuotaReserved`` False, reason ``Pending``,
  the inadmissible message (``pkg/scheduler/scheduler.go:782``,
  ``pkg/workload/workload.go:589``); the message is ``couldn't assign flavors to pod set
  <name>: `` then each resource's ``insufficient unused quota for <resource> in flavor
  <flavor>, <n> more needed`` (``pkg/scheduler/flavorassigner/flavorassigner.go:155,929``).
- Admitted: ``QuotaReserved`` and ``Admitted`` True (``apis/kueue/v1beta1/
  workload_types.go:608-611``).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from .api import RESOURCES
from .logs import rfc3339

if TYPE_CHECKING:
    from .server import FakeKube


def insufficient_quota(pod_set: str, resource: str, flavor: str, more: str) -> str:
    """The scheduler's message for one pod set short of one resource."""
    return (
        f"couldn't assign flavors to pod set {pod_set}: "
        f"insufficient unused quota for {resource} in flavor {flavor}, {more} more needed"
    )


def pending_workload(
    fake: FakeKube, ns: str, plural: str, name: str, message: str, queue: str = "team-queue"
) -> dict[str, Any]:
    """The Workload of job ``name`` (a ``plural`` object) that Kueue could not admit."""
    job = fake.get(plural, ns, name)
    if job is None:
        raise KeyError(f"no {plural} {ns}/{name}")
    res = RESOURCES[plural]
    uid = job["metadata"]["uid"]
    digest = hashlib.sha1(f"{name}{uid}{res.kind}".encode()).hexdigest()[:5]
    condition = {
        "type": "QuotaReserved",
        "status": "False",
        "reason": "Pending",
        "message": message,
        "lastTransitionTime": rfc3339(),
    }
    return fake.add(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {
                "name": f"{res.kind.lower()}-{name}-{digest}",
                "namespace": ns,
                "labels": {"kueue.x-k8s.io/job-uid": uid},
                "ownerReferences": [
                    {
                        "apiVersion": res.api_version,
                        "kind": res.kind,
                        "name": name,
                        "uid": uid,
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": {"queueName": queue, "podSets": []},
            "status": {"conditions": [condition]},
        }
    )
