"""What the torch runtime gives each node of a TrainJob, for a local run.

Trainer v2.3.0's torch plugin (``EnforceMLPolicy``, ``pkg/runtime/framework/plugins/torch/
torch.go``) gives container ``node`` the runtime's env, then the TrainJob's
``trainer.env``, then torchrun's ``PET_*`` variables (``torch-distributed`` sets no env of
its own). torchrun reads ``PET_<FLAG>`` as the default of ``--<flag>``, so the same
``torchrun train.py`` starts the same rendezvous here (127.0.0.1 and a free port instead
of ``<job>-node-0-0.<job>:29500``) and in a cluster.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ...job import k8s_rules as rules
from ..base import LocalNode
from .status import NODE

MASTER_PORT = 29500  # constants.ContainerTrainerPort
# A Job's pods count toward its backoffLimit; the shipped runtimes leave it at the Job
# controller's default (kubernetes batch/v1), and set no JobSet failurePolicy: JobSet
# fails the TrainJob as soon as its one Job fails.
BACKOFF_LIMIT = 6


def nproc_per_node(trainer: Mapping[str, Any], resources: Mapping[str, Any]) -> str:
    """``PET_NPROC_PER_NODE``: ``numProcPerNode``; else ``auto`` when more than 0 GPUs are
    asked for (the first resource name containing ``gpu`` in the requests, the limits' when
    that gives 0; only ``resourcesPerNode`` is looked at when the TrainJob sets it:
    ``GetNumGPUPerNode``, Trainer v2.3.0 pkg/runtime/runtime.go:280, so ``nvidia.com/gpu:
    0`` is a CPU job); else the CPU (the request unless 0, else the limit) rounded up, at
    least 1 (torch.go:228). ``resources``: the ``node`` container's, after the runtime's
    and ``resourcesPerNode`` merged."""
    if trainer.get("numProcPerNode") is not None:
        return str(trainer["numProcPerNode"])
    inspected = trainer.get("resourcesPerNode") or resources
    if _gpus(inspected.get("requests")) or _gpus(inspected.get("limits")):
        return "auto"
    for part in ("requests", "limits"):
        cpu = _ceil((resources.get(part) or {}).get("cpu"))
        if cpu:
            return str(max(1, cpu))
    return "1"


def _gpus(needs: Mapping[str, Any] | None) -> int:
    """The count of the first resource whose name contains ``gpu`` (``numGPU``)."""
    for key, value in (needs or {}).items():
        if "gpu" in str(key).lower():
            return _ceil(value)
    return 0


def _ceil(quantity: Any) -> int:
    """A quantity rounded up as ``Quantity.Value()`` does; 0 for none or a bad one."""
    if quantity is None or isinstance(quantity, bool):
        return 0
    try:
        return math.ceil(rules.parse_quantity(str(quantity)))
    except ValueError:
        return 0


def node_count(trainer: Mapping[str, Any]) -> int:
    """``trainer.numNodes``, else the runtime's ``mlPolicy.numNodes`` (1 for the shipped
    torch runtimes)."""
    nodes = trainer.get("numNodes")
    return nodes if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes >= 1 else 1


def local_nodes(
    manifest: Mapping[str, Any], *, master_addr: str, master_port: int
) -> list[LocalNode]:
    """Node ``i`` of the TrainJob: replica ``node-<i>``, the hostname JobSet gives its pod
    (``<job>-node-0-<i>``), and its env: ``trainer.env`` (plain values; the script travels
    in a file locally, not in ``PTJOB_SCRIPT``), then ``PET_*`` with ``PET_NODE_RANK`` the
    completion index."""
    from ..manifests import SCRIPT_ENV

    name = manifest["metadata"]["name"]
    trainer: Mapping[str, Any] = (manifest.get("spec") or {}).get("trainer") or {}
    nodes = node_count(trainer)
    env = {
        e["name"]: e["value"]
        for e in trainer.get("env") or []
        if isinstance(e, Mapping) and isinstance(e.get("value"), str) and e["name"] != SCRIPT_ENV
    }
    env["PET_NNODES"] = str(nodes)
    env["PET_NPROC_PER_NODE"] = nproc_per_node(trainer, trainer.get("resourcesPerNode") or {})
    env["PET_MASTER_ADDR"] = master_addr
    env["PET_MASTER_PORT"] = str(master_port)
    return [
        LocalNode(
            replica=f"{NODE}-{i}",
            hostname=f"{name}-{NODE}-0-{i}",
            env={**env, "PET_NODE_RANK": str(i)},
        )
        for i in range(nodes)
    ]
