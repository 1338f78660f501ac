"""A job body as ``ptjob submit``: parsed back by the CLI's own parser, the same job."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from jupyter_pytorchjob.arguments import parse
from jupyter_pytorchjob.job.command_line import submit_command
from jupyter_pytorchjob.job.spec import JobSpec

BODIES: list[dict[str, Any]] = [
    {"name": "plain", "command": ["python", "train.py"]},
    {
        "name": "every-kind-of-flag",
        "kind": "PyTorchJob",
        "image": "repo/img:1",
        "command": ["python", "train.py", "--lr", "1e-3", "--note", "it's $HOME"],
        "nodes": 3,
        "master": False,
        "gpus": 2,
        "cpu": "4",
        "memory": "16Gi",
        "shm": "8Gi",
        "workdir": "/work",
        "env": {"A": "1", "B": "x=y"},
        "pvc": [
            {"claim": "data", "mountPath": "/mnt/data", "readOnly": False},
            {"claim": "ro", "mountPath": "/mnt/ro", "subPath": "sub", "readOnly": True},
        ],
        "tolerations": [
            {"key": "gpu", "operator": "Equal", "value": "a100", "effect": "NoSchedule"},
            {"key": "spot", "operator": "Exists", "value": "", "effect": ""},
        ],
        "logdir": "/mnt/data/runs",
        "labels": {"team": "ml"},
        "imagePullSecrets": ["registry-a", "registry-b"],
    },
]


@pytest.mark.parametrize("body", BODIES, ids=[b["name"] for b in BODIES])
def test_the_command_gives_back_the_job(body: dict[str, Any]) -> None:
    command = submit_command(JobSpec.from_wire(body).to_wire())
    assert command is not None
    words = shlex.split(command)
    assert words[:2] == ["ptjob", "submit"]
    again = parse(words[1:]).job
    assert again is not None
    assert JobSpec.from_wire(again).to_wire() == JobSpec.from_wire(body).to_wire()


def test_only_what_differs_from_the_field_defaults() -> None:
    body = JobSpec.from_wire({"name": "plain", "command": ["python", "t.py"]}).to_wire()
    # nprocPerNode is resolved (GPUs or 1) by the time a job is read back.
    assert submit_command(body) == "ptjob submit --name plain --nproc-per-node 1 -- python t.py"


def test_a_script_job_has_no_command_line() -> None:
    body = JobSpec.from_wire({"name": "s", "script": "print(1)\n"}).to_wire()
    assert submit_command(body) is None
