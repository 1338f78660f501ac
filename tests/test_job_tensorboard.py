"""TensorBoard on a real example job's log directory: job -> PVC -> local path -> proxy."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
pytestmark = pytest.mark.slow


async def post(jp_fetch: Any, path: str, body: Any) -> Any:
    return await jp_fetch("pytorchjob", "api", path, method="POST", body=json.dumps(body))


async def test_tensorboard_on_a_finished_jobs_logdir(jp_fetch: Any, tmp_path: Path) -> None:
    job = {
        "name": "cnn",
        "nodes": 2,
        "shm": "off",
        "workdir": str(EXAMPLES),
        "pvc": [{"claim": "data", "mountPath": "/mnt/data"}],
        "logdir": "/mnt/data/runs/cnn",
        "command": ["python", "mnist_cnn.py", "--epochs", "1", "--samples", "256"],
    }
    await post(jp_fetch, "jobs", job)
    for _ in range(300):
        state = json.loads((await jp_fetch("pytorchjob", "api", "jobs", "cnn")).body)["state"]
        if state in ("Succeeded", "Failed"):
            break
        await asyncio.sleep(0.2)
    assert state == "Succeeded"

    tb = json.loads((await post(jp_fetch, "tensorboards", {"job": "cnn"})).body)
    # The job wrote /mnt/data/runs/cnn; the server reads the claim's local directory.
    assert tb["logdir"] == str((tmp_path / "ptjob-volumes" / "data" / "runs" / "cnn").resolve())
    assert tb["jobs"] == ["cnn"]
    # Opened again by its directory: the same instance, still listed for the job.
    again = json.loads((await post(jp_fetch, "tensorboards", {"logdir": tb["logdir"]})).body)
    assert (again["id"], again["jobs"]) == (tb["id"], ["cnn"])
    listed = json.loads((await jp_fetch("pytorchjob", "api", "tensorboards")).body)
    assert [(i["id"], i["jobs"]) for i in listed] == [(tb["id"], ["cnn"])]
    for _ in range(100):
        tags = json.loads((await jp_fetch(tb["url"] + "data/plugin/scalars/tags")).body)
        if "loss" in tags.get("cnn", {}):
            break
        await asyncio.sleep(0.2)
    # The run is named after the job, not "." (issue 32).
    assert {"loss", "accuracy"} <= set(tags["cnn"])
    points = json.loads(
        (
            await jp_fetch(
                tb["url"] + "data/plugin/scalars/scalars", params={"run": "cnn", "tag": "loss"}
            )
        ).body
    )
    assert points and all(len(p) == 3 for p in points)
    await jp_fetch("pytorchjob", "api", "tensorboards", tb["id"], method="DELETE")


async def test_job_without_logdir_or_missing_job(jp_fetch: Any) -> None:
    await post(
        jp_fetch, "jobs", {"name": "plain", "shm": "off", "command": ["python", "-c", "pass"]}
    )
    with pytest.raises(HTTPClientError) as info:
        await post(jp_fetch, "tensorboards", {"job": "plain"})
    body = json.loads(info.value.response.body)
    assert info.value.code == 400 and body["field"] == "job"
    assert "--logdir" in body["message"]
    with pytest.raises(HTTPClientError) as info:
        await post(jp_fetch, "tensorboards", {"job": "nope"})
    assert info.value.code == 404
