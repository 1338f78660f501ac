"""The operator's injected environment, against the worked table of notes/operator.md §6."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jupyter_pytorchjob.job import JobSpec, build_manifest
from jupyter_pytorchjob.job.environment import node_env, replica_env


def three_pods(nproc: str | None) -> dict[str, Any]:
    manifest = build_manifest(JobSpec.from_wire({"name": "job", "command": ["x"], "nodes": 3}))
    if nproc is None:
        del manifest["spec"]["nprocPerNode"]
    else:
        manifest["spec"]["nprocPerNode"] = nproc
    return manifest


def pods(manifest: dict[str, Any]) -> list[tuple[str, int]]:
    specs = manifest["spec"]["pytorchReplicaSpecs"]
    out = [("Master", 0)] if "Master" in specs else []
    out += [("Worker", i) for i in range(specs.get("Worker", {}).get("replicas", 0))]
    return out


# nprocPerNode | WORLD_SIZE | RANK (master, w0, w1) | PET_NNODES | PET_NPROC_PER_NODE
TABLE = [
    (None, "3", ["0", "1", "2"], "3", "auto"),
    ("1", "3", ["0", "1", "2"], "3", "1"),
    ("4", "12", ["0", "1", "2"], "3", "4"),
    ("gpu", "3", ["0", "1", "2"], "3", "gpu"),
]


@pytest.mark.parametrize(("nproc", "world", "ranks", "nnodes", "pet_nproc"), TABLE)
def test_worked_table_three_pods(
    nproc: str | None, world: str, ranks: list[str], nnodes: str, pet_nproc: str
) -> None:
    manifest = three_pods(nproc)
    for (rtype, index), rank in zip(pods(manifest), ranks, strict=True):
        env = replica_env(manifest, rtype, index)
        assert env == {
            "PYTHONUNBUFFERED": "1",
            "MASTER_ADDR": "job-master-0",
            "PET_MASTER_ADDR": "job-master-0",
            "MASTER_PORT": "23456",
            "PET_MASTER_PORT": "23456",
            "WORLD_SIZE": world,
            "RANK": rank,
            "PET_NODE_RANK": rank,
            "PET_NPROC_PER_NODE": pet_nproc,
            "PET_NNODES": nnodes,
        }


def test_worker_only_job_gets_no_rank() -> None:
    manifest = three_pods(None)
    specs = manifest["spec"]["pytorchReplicaSpecs"]
    del specs["Master"]
    specs["Worker"]["replicas"] = 3
    for rtype, index in pods(manifest):
        env = replica_env(manifest, rtype, index)
        assert env == {"PYTHONUNBUFFERED": "1", "PET_NPROC_PER_NODE": "auto", "PET_NNODES": "3"}


@pytest.mark.parametrize("nproc", [1, 4])
@pytest.mark.parametrize("nodes", [1, 3])
def test_node_env_from_a_spec(nodes: int, nproc: int) -> None:
    spec = JobSpec.from_wire(
        {"name": "job", "command": ["torchrun", "t.py"], "nodes": nodes, "nprocPerNode": nproc}
    )
    for node in range(nodes):
        env = node_env(spec, node)
        assert env["WORLD_SIZE"] == str(nodes * nproc)
        assert env["RANK"] == env["PET_NODE_RANK"] == str(node)
        assert env["PET_NNODES"] == str(nodes)
        assert env["PET_NPROC_PER_NODE"] == str(nproc)
        assert env["MASTER_ADDR"] == "job-master-0" and env["MASTER_PORT"] == "23456"
    with pytest.raises(IndexError):
        node_env(spec, nodes)


def test_local_backend_overrides_address_and_port() -> None:
    spec = JobSpec.from_wire({"name": "job", "command": ["x"], "nodes": 2})
    env = node_env(spec, 1, master_addr="127.0.0.1", master_port=40001)
    assert env["MASTER_ADDR"] == env["PET_MASTER_ADDR"] == "127.0.0.1"
    assert env["MASTER_PORT"] == env["PET_MASTER_PORT"] == "40001"


def test_named_port_on_the_master_is_used() -> None:
    manifest = three_pods("1")
    master = manifest["spec"]["pytorchReplicaSpecs"]["Master"]
    master["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "pytorchjob-port", "containerPort": 29500}
    ]
    assert replica_env(manifest, "Worker", 1)["MASTER_PORT"] == "29500"


def test_elastic_policy_env() -> None:
    manifest = copy.deepcopy(three_pods("2"))
    manifest["spec"]["elasticPolicy"] = {
        "minReplicas": 1,
        "maxReplicas": 4,
        "rdzvConf": [{"key": "a", "value": "1"}, {"key": "b", "value": "2"}],
        "maxRestarts": 3,
    }
    env = replica_env(manifest, "Worker", 0)
    assert env["PET_NNODES"] == "1:4"
    assert env["PET_RDZV_ENDPOINT"] == "job-worker-0:23456"
    assert env["PET_RDZV_BACKEND"] == "c10d"
    assert env["PET_RDZV_CONF"] == "a=1,b=2"
    assert env["PET_MAX_RESTARTS"] == "3"
    manifest["spec"]["elasticPolicy"] = {"maxReplicas": 5}
    assert replica_env(manifest, "Master", 0)["PET_NNODES"] == "5:5"
    manifest["spec"]["elasticPolicy"] = {}
    assert replica_env(manifest, "Master", 0)["PET_NNODES"] == "2"
