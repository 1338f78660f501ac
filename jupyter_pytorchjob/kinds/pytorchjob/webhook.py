"""The Training Operator's admission rules that the CRD schema does not check.

From ``pkg/webhooks/pytorch/pytorchjob_webhook.go`` of kubeflow/trainer at v1.9.4
(``validatePyTorchJob``: a DNS-1035 job name, only Master and Worker replicas, a
Master with ``replicas: 1``, a container named ``pytorch`` in every replica, a Worker
whenever ``elasticPolicy`` is set, its deprecated ``nProcPerNode`` never together with
``spec.nprocPerNode``, a known ``managedBy``), plus the pod/Service name-length rule
that the webhook forgets and that hangs a job with a long name (trainer#1101).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...job import k8s_rules as rules
from ...job.errors import FieldError
from ...job.messages import msg

REPLICA_TYPES = ("Master", "Worker")
CONTAINER_NAME = "pytorch"
MANAGED_BY = ("kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue")


def check_manifest(manifest: Mapping[str, Any]) -> list[FieldError]:
    """Every webhook rule the manifest breaks, each naming its JSON path."""
    errors: list[FieldError] = []
    metadata = manifest.get("metadata") or {}
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        errors.append(FieldError("metadata.name", msg("required")))
    else:
        problem = rules.check_dns1035_label(name)
        if problem:
            errors.append(FieldError("metadata.name", problem))
    spec = manifest.get("spec") or {}
    managed_by = (spec.get("runPolicy") or {}).get("managedBy")
    if managed_by and managed_by not in MANAGED_BY:
        errors.append(
            FieldError("spec.runPolicy.managedBy", msg("choices", choices=", ".join(MANAGED_BY)))
        )
    replicas = spec.get("pytorchReplicaSpecs")
    if not isinstance(replicas, Mapping) or not replicas:
        errors.append(FieldError("spec.pytorchReplicaSpecs", msg("required")))
        return errors
    elastic = spec.get("elasticPolicy")
    if elastic is not None:
        if "Worker" not in replicas:
            errors.append(FieldError("spec.pytorchReplicaSpecs.Worker", msg("worker_for_elastic")))
        if elastic.get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
            errors.append(FieldError("spec.elasticPolicy.nProcPerNode", msg("nproc_twice")))
    for rtype, rspec in replicas.items():
        path = f"spec.pytorchReplicaSpecs.{rtype}"
        if rtype not in REPLICA_TYPES:
            errors.append(FieldError(path, msg("replica_type", choices=str(REPLICA_TYPES))))
            continue
        errors.extend(_check_replica(path, rtype, rspec or {}))
    if isinstance(name, str) and name:
        workers = (replicas.get("Worker") or {}).get("replicas") or 0
        longest = f"{name}-worker-{workers - 1}" if workers else f"{name}-master-0"
        if len(longest) > rules.LABEL_MAX:
            errors.append(
                FieldError(
                    "metadata.name",
                    msg("pod_name_length", pod=repr(longest), maximum=rules.LABEL_MAX),
                )
            )
    return errors


def _check_replica(path: str, rtype: str, rspec: Mapping[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    count = rspec.get("replicas")
    if rtype == "Master" and count != 1:
        errors.append(FieldError(f"{path}.replicas", msg("master_replicas")))
    if rtype == "Worker" and count is not None and (not isinstance(count, int) or count < 1):
        errors.append(FieldError(f"{path}.replicas", msg("at_least_one")))
    containers = ((rspec.get("template") or {}).get("spec") or {}).get("containers") or []
    cpath = f"{path}.template.spec.containers"
    if not containers:
        errors.append(FieldError(cpath, msg("no_container")))
        return errors
    for index, container in enumerate(containers):
        if not (container or {}).get("image"):
            errors.append(FieldError(f"{cpath}[{index}].image", msg("required")))
    if not any((c or {}).get("name") == CONTAINER_NAME for c in containers):
        errors.append(FieldError(cpath, msg("container_named", name=repr(CONTAINER_NAME))))
    return errors
