"""TrainJobs on the local backend, with real processes: each node gets the environment
Trainer v2.3's torch plugin gives its pod (shared/notes/trainjob.md §3), the same command
starts through torchrun, and the job's conditions are the TrainJob's (§5). The failure
semantics against the fake Trainer are in test_trainjob_fidelity.py."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob.backends import JobState
from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.backends.local.plan import plan_nodes
from jupyter_pytorchjob.job import JobSpecInvalid
from jupyter_pytorchjob.kinds import TRAINJOB
from jupyter_pytorchjob.kinds.trainjob.environment import local_nodes, nproc_per_node

from .fake_kube import trainer as fake_trainer
from .local_jobs import backend, collect_logs, make_spec, python

__all__ = ["backend"]  # the fixture

pytestmark = pytest.mark.slow

ALL_REDUCE = """\
import json, os
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
total = torch.tensor([dist.get_rank() + 1.0])
dist.all_reduce(total)
print(json.dumps({"rank": dist.get_rank(), "world": dist.get_world_size(),
                  "sum": total.item()}), flush=True)
dist.destroy_process_group()
"""

DUMP_ENV = "import json, os; print(json.dumps(dict(os.environ)), flush=True)"


def trainjob(**body: Any) -> Any:
    return make_spec(name="tj", kind="TrainJob", **body)


async def test_two_nodes_all_reduce_through_torchrun(backend: LocalBackend) -> None:
    """A shipped script starts through torchrun on each node, as in a cluster; the
    ``PET_*`` rendezvous joins the two nodes into one world and the job is Complete."""
    info = await backend.submit(trainjob(nodes=2, script=ALL_REDUCE))
    assert info.kind == "TrainJob"
    assert [r.name for r in info.replicas] == ["node-0", "node-1"]
    job = await backend.wait("tj", timeout=120)
    assert job.state is JobState.SUCCEEDED, await collect_logs(backend, "tj")
    assert [(c.type, c.status, c.reason, c.message) for c in job.conditions] == [
        ("Complete", "True", "AllJobsCompleted", "jobset completed successfully")
    ]
    assert [(r.phase, r.restarts, r.exit_code) for r in job.replicas] == [("Succeeded", 0, 0)] * 2
    logs = await collect_logs(backend, "tj")
    results = {r: json.loads(text.strip().splitlines()[-1]) for r, text in logs.items()}
    assert results == {
        "node-0": {"rank": 0, "world": 2, "sum": 3.0},
        "node-1": {"rank": 1, "world": 2, "sum": 3.0},
    }
    assert (await backend.list_jobs())[0].kind == "TrainJob"


async def test_each_node_gets_the_torch_plugin_env(backend: LocalBackend, tmp_path: Path) -> None:
    """PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR=127.0.0.1 and one
    free PET_MASTER_PORT; the spec's env (mount paths made local) and PYTHONUNBUFFERED;
    none of v1's MASTER_ADDR, WORLD_SIZE or RANK; the pod's hostname."""
    info = await backend.submit(
        trainjob(
            nodes=2,
            nprocPerNode=3,
            command=python(DUMP_ENV),
            env={"DATA": "/workspace/data/train"},
            pvc=[{"claim": "team", "mountPath": "/workspace/data"}],
        )
    )
    assert info.state is not JobState.FAILED
    job = await backend.wait("tj", timeout=60)
    assert job.state is JobState.SUCCEEDED
    logs = await collect_logs(backend, "tj")
    envs = [json.loads(logs[f"node-{i}"].strip().splitlines()[-1]) for i in (0, 1)]
    port = envs[0]["PET_MASTER_PORT"]
    assert port.isdigit() and port != "29500"  # a free one: jobs side by side never clash
    for rank, env in enumerate(envs):
        assert {k: v for k, v in env.items() if k.startswith("PET_")} == {
            "PET_NNODES": "2",
            "PET_NPROC_PER_NODE": "3",
            "PET_NODE_RANK": str(rank),
            "PET_MASTER_ADDR": "127.0.0.1",
            "PET_MASTER_PORT": port,
        }
        assert env["PYTHONUNBUFFERED"] == "1"
        assert env["DATA"] == str(tmp_path / "volumes" / "team" / "train")
        assert env["HOSTNAME"] == f"tj-node-0-{rank}"
        assert not {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"} & set(env)
        assert "PTJOB_SCRIPT" not in env


def test_the_plan_comes_from_the_trainjob_manifest(tmp_path: Path) -> None:
    """What the manifest says, not the form: an env var added to ``trainer.env`` (YAML
    only) reaches the node; the script starts through torchrun even with one process."""
    spec = make_spec(
        name="tj",
        kind="TrainJob",
        script="print(1)",
        extras={"spec": {"trainer": {"env": [{"name": "EXTRA", "value": "yes"}]}}},
    )
    plans = plan_nodes(
        spec,
        claim_dir={},
        port=40000,
        default_cwd=tmp_path,
        gpu_count=0,
        script_path=tmp_path / "main.py",
    )
    (plan,) = plans
    assert plan.argv[1:4] == ["-m", "torch.distributed.run", str(tmp_path / "main.py")]
    assert plan.env["EXTRA"] == "yes" and plan.env["PET_MASTER_PORT"] == "40000"


@pytest.mark.parametrize(
    ("trainer", "expected"),
    [
        ({"numProcPerNode": 4}, "4"),
        ({"resourcesPerNode": {"limits": {"nvidia.com/gpu": 1, "cpu": "8"}}}, "auto"),
        ({"resourcesPerNode": {"requests": {"cpu": "500m"}}}, "1"),
        ({"resourcesPerNode": {"requests": {"cpu": "3"}, "limits": {"cpu": "4"}}}, "3"),
        ({"resourcesPerNode": {"limits": {"cpu": "2500m"}}}, "3"),
        ({}, "1"),
        ({"resourcesPerNode": {"limits": {"nvidia.com/gpu": 0, "cpu": "4"}}}, "4"),
        ({"resourcesPerNode": {"limits": {"nvidia.com/gpu": "0"}}}, "1"),
        (
            {"resourcesPerNode": {"requests": {"amd.com/gpu": "0"}, "limits": {"amd.com/gpu": 2}}},
            "auto",
        ),
        ({"resourcesPerNode": {"requests": {"cpu": "0"}, "limits": {"cpu": "4"}}}, "4"),
    ],
    ids=[
        "set",
        "gpu",
        "half-cpu",
        "requests-first",
        "rounded-up",
        "nothing",
        "zero-gpus-cpu",
        "zero-gpus",
        "zero-requested-gpus",
        "zero-requested-cpu",
    ],
)
def test_nproc_per_node_follows_the_torch_plugin(trainer: dict[str, Any], expected: str) -> None:
    """numProcPerNode, else auto with a GPU count above 0, else the CPU rounded up: the
    same answer as the fake Trainer, written from the plugin's Go code (Trainer v2.3.0
    pkg/runtime/framework/plugins/torch/torch.go:121-134: ``auto`` only when
    ``GetNumGPUPerNode`` > 0, which reads the requests' GPU count and the limits' when
    that is 0, pkg/runtime/runtime.go:280-289; CPU: the request unless zero, else the
    limit, torch.go:228-240)."""
    resources = trainer.get("resourcesPerNode") or {}
    assert nproc_per_node(trainer, resources) == expected
    manifest = {"metadata": {"name": "tj"}, "spec": {"trainer": trainer}}
    assert fake_trainer.nproc_per_node(manifest, resources) == expected
    (node,) = local_nodes(manifest, master_addr="127.0.0.1", master_port=1)
    assert node.env["PET_NPROC_PER_NODE"] == expected


async def test_the_local_backend_lists_both_kinds(backend: LocalBackend) -> None:
    kinds = await backend.job_kinds()
    assert [k.kind for k in kinds] == ["PyTorchJob", "TrainJob"] and TRAINJOB in kinds


async def test_the_state_is_read_with_the_nodes_it_comes_from(backend: LocalBackend) -> None:
    """A TrainJob's Created/Running come from its nodes: a reader that catches the
    supervisor between its two writes (nodes, then job) shows the nodes' state, not
    the older one beside them (a race the fidelity test met under load)."""
    jobdir = backend.jobs_dir / "tj"
    (jobdir / "logs").mkdir(parents=True)
    manifest = TRAINJOB.build(trainjob(command=["true"]))
    (jobdir / "manifest.json").write_text(json.dumps(manifest))
    job = {"state": "Created", "created": time.time(), "kind": "TrainJob", "conditions": []}
    (jobdir / "job.json").write_text(json.dumps(job))
    (jobdir / "replicas.json").write_text(json.dumps({"node-0": {"phase": "Running"}}))
    info = await backend.get_job("tj")
    assert (info.kind, info.state) == ("TrainJob", JobState.RUNNING)
    (jobdir / "replicas.json").write_text(json.dumps({"node-0": {"phase": "Pending"}}))
    job["state"] = "Running"
    (jobdir / "job.json").write_text(json.dumps(job))
    assert (await backend.get_job("tj")).state is JobState.CREATED
    job["state"] = "Suspended"  # from the spec and conditions: as written
    (jobdir / "job.json").write_text(json.dumps(job))
    assert (await backend.get_job("tj")).state is JobState.SUSPENDED
    shutil.rmtree(jobdir)  # no supervisor to stop: the fixture's delete would wait for one


READ_WORKSPACE = """\
import os, sys
data, model = sys.argv[1], os.environ["MODEL_DIR"]
print(open(os.path.join(data, "train.txt")).read().strip(), os.listdir(model), flush=True)
"""


async def test_file_initializers_fill_the_jobs_workspace(
    backend: LocalBackend, tmp_path: Path
) -> None:
    """``file://`` dataset and model are copied where Trainer's initializers put theirs
    (/workspace/dataset, /workspace/model: v2.3.0 pkg/initializers/utils/utils.py:27-33),
    and /workspace in the job's arguments and env is that copy, as a PVC mount is."""
    data = tmp_path / "my data"
    data.mkdir()
    (data / "train.txt").write_text("hello\n")
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"w")
    info = await backend.submit(
        trainjob(
            command=[*python(READ_WORKSPACE), "/workspace/dataset"],
            env={"MODEL_DIR": "/workspace/model"},
            dataset=data.as_uri(),
            model=weights.as_uri(),
        )
    )
    assert info.state is not JobState.FAILED
    job = await backend.wait("tj", timeout=60)
    logs = await collect_logs(backend, "tj")
    assert job.state is JobState.SUCCEEDED, logs
    assert logs["node-0"].strip().splitlines()[-1] == "hello ['weights.bin']"
    events = [e.message for e in await backend.events("tj") if e.reason == "Initialized"]
    assert len(events) == 2 and "copied to /workspace/dataset" in events[0]


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("hf://tatsu-lab/alpaca", "the local backend downloads nothing: hf:// is fetched"),
        ("s3://bucket/data", "s3:// is fetched by the runtime's dataset-initializer"),
        ("file:///no/such/dir", "/no/such/dir does not exist"),
        ("file://host/data", "must be file:///absolute/path"),
    ],
)
async def test_other_initializer_uris_are_refused_naming_the_scheme(
    backend: LocalBackend, uri: str, expected: str
) -> None:
    with pytest.raises(JobSpecInvalid) as info:
        await backend.submit(trainjob(command=["true"], dataset=uri))
    (error,) = info.value.errors
    assert error.field == "dataset" and expected in error.message
    assert await backend.list_jobs() == []  # nothing half-created


async def test_an_initializer_secret_is_refused_locally(
    backend: LocalBackend, tmp_path: Path
) -> None:
    with pytest.raises(JobSpecInvalid) as info:
        await backend.submit(
            trainjob(command=["true"], dataset=tmp_path.as_uri(), datasetSecret="creds")
        )
    assert [e.field for e in info.value.errors] == ["datasetSecret"]
    assert await backend.list_jobs() == []
