"""The operator's injected environment, against the Training Operator v1.9.4's Go code.

Expected values are written from ``kubeflow/trainer`` at tag v1.9.4 (commit 4445c12a),
cited as ``file:line`` under ``pkg/``: ``controller.v1/pytorch/envvar.go`` (E),
``controller.v1/pytorch/elastic.go`` (L), ``controller.v1/pytorch/master.go`` (M) and
``apis/kubeflow.org/v1/pytorch_defaults.go`` (D), and the worked table of
notes/operator.md §6.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob.backends.local.plan import plan_nodes
from jupyter_pytorchjob.job import JobSpec
from jupyter_pytorchjob.kinds.pytorchjob.environment import node_env, node_replica, replica_env
from jupyter_pytorchjob.kinds.pytorchjob.manifest import build_manifest


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
    assert env["PET_NNODES"] == "1:4"  # L:139-143
    assert env["PET_RDZV_ENDPOINT"] == "job-worker-0:23456"  # L:146-168
    assert env["PET_RDZV_BACKEND"] == "c10d"  # L:186-196
    assert env["PET_RDZV_CONF"] == "a=1,b=2"  # L:171-183
    assert env["PET_MAX_RESTARTS"] == "3"  # L:93-98
    assert "PET_STANDALONE" not in env and "PET_RDZV_ID" not in env


# elasticPolicy min/max as written -> PET_NNODES. Defaulting copies one into the other and
# fills both from Worker.replicas (D:38-55, applied before the env at
# pytorchjob_controller.go:156); the env is then always "min:max" (L:139-143).
ELASTIC_NNODES = [
    ({"minReplicas": 1, "maxReplicas": 4}, "1:4"),
    ({"maxReplicas": 5}, "5:5"),  # D:43-45
    ({"minReplicas": 2}, "2:2"),  # D:46-47
    ({}, "2:2"),  # D:48-53: both from Worker.replicas (2 here)
]


@pytest.mark.parametrize(("policy", "nnodes"), ELASTIC_NNODES)
def test_elastic_nnodes_after_defaulting(policy: dict[str, int], nnodes: str) -> None:
    manifest = three_pods("2")
    manifest["spec"]["elasticPolicy"] = policy
    for rtype, index in pods(manifest):
        assert replica_env(manifest, rtype, index)["PET_NNODES"] == nnodes


# elasticPolicy.standalone -> PET_STANDALONE: set to "" only when true (L:114-119).
@pytest.mark.parametrize(("standalone", "expected"), [(True, ""), (False, None), (None, None)])
def test_standalone_is_empty_when_true_and_absent_otherwise(
    standalone: bool | None, expected: str | None
) -> None:
    manifest = three_pods("1")
    manifest["spec"]["elasticPolicy"] = {"standalone": standalone}
    assert replica_env(manifest, "Worker", 1).get("PET_STANDALONE") == expected


def test_rdzv_id_is_set_when_present_even_if_empty() -> None:
    manifest = three_pods("1")
    manifest["spec"]["elasticPolicy"] = {"rdzvId": ""}
    assert replica_env(manifest, "Worker", 0)["PET_RDZV_ID"] == ""  # L:105-110: non-nil


def test_world_size_ignores_the_deprecated_elastic_nproc() -> None:
    """With a Master, WORLD_SIZE = replicas x spec.nprocPerNode, nil counting 1
    (E:62-64, E:132-140); defaulting leaves spec.nprocPerNode nil when the deprecated
    elasticPolicy.nProcPerNode is set (D:68-74), which becomes PET_NPROC_PER_NODE
    through the elastic env (L:99-104)."""
    manifest = three_pods(None)
    manifest["spec"]["elasticPolicy"] = {"nProcPerNode": 4}
    for rtype, index in pods(manifest):
        env = replica_env(manifest, rtype, index)
        assert env["WORLD_SIZE"] == "3"
        assert env["PET_NPROC_PER_NODE"] == "4"


def test_env_order_is_the_operators() -> None:
    """E:56-123 appends PYTHONUNBUFFERED, the master env (M:44-59), WORLD_SIZE, RANK,
    PET_NODE_RANK, PET_NPROC_PER_NODE, then the elastic env (L:78-119) or PET_NNODES."""
    manifest = three_pods("2")
    assert list(replica_env(manifest, "Worker", 0)) == [
        "PYTHONUNBUFFERED",
        "MASTER_PORT",
        "PET_MASTER_PORT",
        "MASTER_ADDR",
        "PET_MASTER_ADDR",
        "WORLD_SIZE",
        "RANK",
        "PET_NODE_RANK",
        "PET_NPROC_PER_NODE",
        "PET_NNODES",
    ]
    manifest["spec"]["elasticPolicy"] = {
        "maxRestarts": 1,
        "rdzvId": "x",
        "rdzvConf": [{"key": "a", "value": "1"}],
        "standalone": True,
    }
    assert list(replica_env(manifest, "Worker", 0))[9:] == [
        "PET_RDZV_ENDPOINT",
        "PET_RDZV_BACKEND",
        "PET_NNODES",
        "PET_MAX_RESTARTS",
        "PET_RDZV_ID",
        "PET_RDZV_CONF",
        "PET_STANDALONE",
    ]


def test_local_rendezvous_is_this_machine_whatever_the_manifest_says() -> None:
    """Locally the rendezvous is 127.0.0.1 on the job's free port; the user's rdzvHost and
    rdzvPort name cluster hosts and stay in the manifest only."""
    manifest = three_pods("1")
    manifest["spec"]["elasticPolicy"] = {"rdzvHost": "etcd.cluster.local", "rdzvPort": 2379}
    assert replica_env(manifest, "Worker", 0)["PET_RDZV_ENDPOINT"] == "etcd.cluster.local:2379"
    local = replica_env(manifest, "Worker", 0, master_addr="127.0.0.1", master_port=40123)
    assert local["PET_RDZV_ENDPOINT"] == "127.0.0.1:40123"
    assert manifest["spec"]["elasticPolicy"]["rdzvHost"] == "etcd.cluster.local"


def test_worker_only_nodes_are_workers_from_zero() -> None:
    spec = JobSpec.from_wire({"name": "w", "command": ["x"], "nodes": 2, "master": False})
    assert [node_replica(n, master=False) for n in range(2)] == [("Worker", 0), ("Worker", 1)]
    assert node_env(spec, 1) == {
        "PYTHONUNBUFFERED": "1",
        "PET_NPROC_PER_NODE": "1",
        "PET_NNODES": "2",
    }


@pytest.mark.parametrize(
    ("body", "replicas"),
    [
        ({"master": False}, ["worker-0", "worker-1"]),
        (
            {"extras": {"spec": {"pytorchReplicaSpecs": {"Worker": {"restartPolicy": "Never"}}}}},
            ["master-0", "worker-0"],
        ),
    ],
    ids=["worker-only", "per-replica-policy"],
)
def test_the_local_plan_runs_what_the_operator_runs(
    tmp_path: Path, body: dict[str, Any], replicas: list[str]
) -> None:
    """Worker-only jobs and per-replica restart policies run locally (the supervisor
    follows each replica type's policy; tests/test_operator_fidelity.py)."""
    spec = JobSpec.from_wire({"name": "j", "command": ["python", "-c", "1"], "nodes": 2, **body})
    plans = plan_nodes(spec, claim_dir={}, port=40000, default_cwd=tmp_path, gpu_count=0)
    assert [p.replica for p in plans] == replicas
    assert [p.env["HOSTNAME"] for p in plans] == [f"j-{r}" for r in replicas]


def test_local_nodes_rendezvous_on_this_machine(tmp_path: Path) -> None:
    elastic = {"rdzvHost": "rdzv.cluster.local", "rdzvPort": 2379, "minReplicas": 1}
    spec = JobSpec.from_wire(
        {
            "name": "e",
            "command": ["torchrun", "t.py"],
            "nodes": 2,
            "extras": {"spec": {"elasticPolicy": elastic}},
        }
    )
    plans = plan_nodes(spec, claim_dir={}, port=40001, default_cwd=tmp_path, gpu_count=0)
    assert [p.env["HOSTNAME"] for p in plans] == ["e-master-0", "e-worker-0"]  # the pod names
    for plan in plans:
        assert plan.env["PET_RDZV_ENDPOINT"] == "127.0.0.1:40001"
        assert plan.env["MASTER_ADDR"] == "127.0.0.1" and plan.env["MASTER_PORT"] == "40001"
        assert plan.env["PET_NNODES"] == "1:1"
    assert build_manifest(spec)["spec"]["elasticPolicy"]["rdzvHost"] == "rdzv.cluster.local"
