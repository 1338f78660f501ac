"""The environment the Training Operator injects into each replica's containers.

``pkg/controller.v1/pytorch/{envvar,master,elastic}.go`` of kubeflow/trainer at
v1.9.4 (``setPodEnv``, ``EnvVarGenerator``): PYTHONUNBUFFERED, MASTER_ADDR/PORT,
WORLD_SIZE, RANK and the ``PET_*`` variables of torchrun. The local backend gives each node process
exactly this environment, so a script behaves the same here and in a cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...job.spec import JobSpec

DEFAULT_PORT = 23456
PORT_NAME = "pytorchjob-port"


def replica_env(
    manifest: Mapping[str, Any],
    replica_type: str,
    index: int,
    *,
    master_addr: str | None = None,
    master_port: int | None = None,
) -> dict[str, str]:
    """The env vars the operator appends for pod ``<job>-<replica_type>-<index>``, in its
    order (``envvar.go:49-123``: master, rank, nproc, then the elastic or plain nnodes).

    ``master_addr``/``master_port`` replace the in-cluster addresses: the local backend
    runs every node on 127.0.0.1 with a free port per job, for the Master and for the
    elastic rendezvous alike (a user's ``rdzvHost``/``rdzvPort`` name cluster hosts and
    stay only in the manifest).
    """
    name = manifest["metadata"]["name"]
    spec = manifest["spec"]
    replicas: Mapping[str, Any] = spec["pytorchReplicaSpecs"]
    rtype = replica_type.capitalize()
    if rtype not in replicas:
        raise KeyError(f"the job has no {rtype} replicas")
    total = sum(_replicas(r) for r in replicas.values())
    elastic: Mapping[str, Any] | None = spec.get("elasticPolicy")
    # Defaulting (pytorch_defaults.go:68-74) writes "auto" only when the deprecated
    # elasticPolicy.nProcPerNode is unset; WORLD_SIZE reads spec.nprocPerNode alone, nil
    # counting 1 (envvar.go:132-140), whatever the deprecated field says.
    nproc = spec.get("nprocPerNode")
    if nproc is None and (elastic or {}).get("nProcPerNode") is None:
        nproc = "auto"
    env: dict[str, str] = {"PYTHONUNBUFFERED": "1"}
    if "Master" in replicas:
        addr = master_addr or f"{name}-master-0"
        port = str(master_port or _port(replicas["Master"]))
        env["MASTER_PORT"] = env["PET_MASTER_PORT"] = port
        env["MASTER_ADDR"] = env["PET_MASTER_ADDR"] = addr
        # nprocPerNode that is not a number ('auto', 'gpu', 'cpu') counts as 1 here,
        # so WORLD_SIZE counts nodes while torchrun later counts processes.
        text = "" if nproc is None else str(nproc)
        env["WORLD_SIZE"] = str(total * (int(text) if text.isdigit() else 1))
        rank = index if rtype == "Master" else index + 1
        env["RANK"] = env["PET_NODE_RANK"] = str(rank)
    if nproc is not None:
        env["PET_NPROC_PER_NODE"] = str(nproc)
    if elastic is None:
        env["PET_NNODES"] = str(total)
    else:
        env.update(_elastic_env(name, replicas, elastic, master_addr, master_port))
    return env


def node_env(
    spec: JobSpec,
    node: int,
    *,
    master_addr: str | None = None,
    master_port: int | None = None,
) -> dict[str, str]:
    """``replica_env`` for node ``node`` of a ``JobSpec`` (see ``node_replica``)."""
    from .manifest import build_manifest

    if not 0 <= node < spec.nodes:
        raise IndexError(f"node {node} out of range for {spec.nodes} node(s)")
    rtype, index = node_replica(node, master=spec.master)
    return replica_env(
        build_manifest(spec), rtype, index, master_addr=master_addr, master_port=master_port
    )


def node_replica(node: int, *, master: bool = True) -> tuple[str, int]:
    """Node 0 is the Master, node i Worker i-1; without a Master node i is Worker i."""
    if not master:
        return ("Worker", node)
    return ("Master", 0) if node == 0 else ("Worker", node - 1)


def _port(replica: Mapping[str, Any]) -> int:
    """The container port named ``pytorchjob-port`` of ``pytorch``, else 23456."""
    for container in ((replica.get("template") or {}).get("spec") or {}).get("containers") or []:
        if container.get("name") != "pytorch":
            continue
        for port in container.get("ports") or []:
            if port.get("name") == PORT_NAME:
                return int(port["containerPort"])
    return DEFAULT_PORT


def _replicas(replica: Mapping[str, Any] | None) -> int:
    """``replicas``, defaulting to 1 as the operator's defaulting does."""
    count = (replica or {}).get("replicas")
    return 1 if count is None else int(count)


def _elastic_env(
    name: str,
    replicas: Mapping[str, Any],
    elastic: Mapping[str, Any],
    local_addr: str | None,
    local_port: int | None,
) -> dict[str, str]:
    """``elastic.go:68-122`` after the defaulting of ``pytorch_defaults.go:38-55``."""
    worker = replicas.get("Worker") or {}
    workers = _replicas(worker)
    low, high = elastic.get("minReplicas"), elastic.get("maxReplicas")
    low = (workers if high is None else high) if low is None else low
    high = low if high is None else high
    host = local_addr or elastic.get("rdzvHost") or f"{name}-worker-0"
    port = local_port or elastic.get("rdzvPort") or _port(worker)
    env = {
        "PET_RDZV_ENDPOINT": f"{host}:{port}",
        "PET_RDZV_BACKEND": str(elastic.get("rdzvBackend") or "c10d"),
        "PET_NNODES": f"{low}:{high}",
    }
    if elastic.get("maxRestarts") is not None:
        env["PET_MAX_RESTARTS"] = str(elastic["maxRestarts"])
    if elastic.get("nProcPerNode") is not None:  # deprecated; forbidden with spec.nprocPerNode
        env["PET_NPROC_PER_NODE"] = str(elastic["nProcPerNode"])
    if elastic.get("rdzvId") is not None:
        env["PET_RDZV_ID"] = str(elastic["rdzvId"])
    if elastic.get("rdzvConf"):
        env["PET_RDZV_CONF"] = ",".join(f"{c['key']}={c['value']}" for c in elastic["rdzvConf"])
    if elastic.get("standalone"):
        # Set, and empty, only when true. torchrun (2.13) parses it with int() and fails
        # on "": in a cluster and here alike (see README, "Differences").
        env["PET_STANDALONE"] = ""
    return env
