"""The jobs REST API and the log websocket, on the local backend, on a real server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import yaml
from tornado.httpclient import HTTPClientError

from .log_messages import offsets, runs, unbatch

API = ("pytorchjob", "api")
TICKER = (
    "import time\nfor i in range(20):\n    print('tick', i, flush=True)\n    time.sleep(0.05)\n"
)
pytestmark = pytest.mark.slow


async def call(jp_fetch: Any, *path: str, method: str = "GET", body: Any = None) -> Any:
    kwargs: dict[str, Any] = {"method": method}
    if body is not None:
        kwargs["body"] = json.dumps(body)
    response = await jp_fetch(*API, *path, **kwargs)
    return response


async def error(
    jp_fetch: Any, *path: str, method: str = "GET", body: Any = None
) -> tuple[int, Any]:
    with pytest.raises(HTTPClientError) as info:
        await call(jp_fetch, *path, method=method, body=body)
    return info.value.code, json.loads(info.value.response.body)


async def wait_finished(jp_fetch: Any, name: str, timeout: float = 60) -> dict[str, Any]:
    for _ in range(int(timeout / 0.2)):
        job = json.loads((await call(jp_fetch, "jobs", name)).body)
        if job["state"] in ("Succeeded", "Failed"):
            return job  # type: ignore[no-any-return]
        await asyncio.sleep(0.2)
    raise AssertionError(f"{name} did not finish")


async def read_ws(jp_ws_fetch: Any, name: str, **params: str) -> list[dict[str, Any]]:
    ws = await jp_ws_fetch(*API, "jobs", name, "logs", params=params)
    messages = []
    while True:
        raw = await asyncio.wait_for(ws.read_message(), 30)
        if raw is None:
            break
        messages.extend(unbatch(raw))
        if messages[-1].get("end") or messages[-1].get("error"):
            break
    ws.close()
    return messages


async def test_submit_list_get_events_logs_delete(jp_fetch: Any, jp_ws_fetch: Any) -> None:
    # cleanPodPolicy None: with Running (ours) the master's success stops a worker that
    # started a moment later before its last tick (a loaded machine).
    body = {"name": "tick", "nodes": 2, "script": TICKER, "cleanPodPolicy": "None"}
    response = await call(jp_fetch, "jobs", method="POST", body=body)
    assert response.code == 201
    assert response.headers["Location"].endswith("/pytorchjob/api/jobs/tick")
    created = json.loads(response.body)
    assert created["name"] == "tick" and [r["name"] for r in created["replicas"]] == [
        "master-0",
        "worker-0",
    ]
    # Follow the logs while the job runs: every line of both replicas, once.
    messages = await read_ws(jp_ws_fetch, "tick", follow="1")
    assert messages[-1] == {"end": True}
    text: dict[str, str] = {}
    for m in messages[:-1]:
        for replica, lines in runs(m):
            text[replica] = text.get(replica, "") + lines
    for replica in ("master-0", "worker-0"):
        assert text[replica].splitlines() == [f"tick {i}" for i in range(20)]

    job = await wait_finished(jp_fetch, "tick")
    assert job["state"] == "Succeeded"
    assert job["manifest"]["kind"] == "PyTorchJob"
    assert job["spec"]["script"] == TICKER and job["spec"]["nodes"] == 2
    # The Spec section's copies: the manifest as YAML; no command line for a script.
    assert yaml.safe_load(job["yaml"]) == job["manifest"]
    assert job["submitCommand"] is None
    listed = json.loads((await call(jp_fetch, "jobs")).body)["jobs"]
    assert [(j["name"], j["state"]) for j in listed] == [("tick", "Succeeded")]
    assert listed[0]["duration"] > 0
    events = json.loads((await call(jp_fetch, "jobs", "tick", "events")).body)["events"]
    assert {"PyTorchJobCreated", "SuccessfulCreatePod"} <= {e["reason"] for e in events}

    # Resume from an offset: only what came after it.
    first = next(m for m in messages if "master-0" in offsets(m))
    since = {"master-0": offsets(first)["master-0"]}
    resumed = await read_ws(jp_ws_fetch, "tick", replica="master-0", since=json.dumps(since))
    resumed_text = "".join(m["text"] for m in resumed if "text" in m)
    first_text = "".join(lines for replica, lines in runs(first) if replica == "master-0")
    assert first_text + resumed_text == text["master-0"]

    deleted = await call(jp_fetch, "jobs", "tick", method="DELETE")
    assert deleted.code == 204
    code, body = await error(jp_fetch, "jobs", "tick")
    assert code == 404 and "not found" in body["message"]


async def test_invalid_job_is_400_and_creates_nothing(jp_fetch: Any) -> None:
    code, body = await error(
        jp_fetch, "jobs", method="POST", body={"name": "x", "nodes": 0, "command": ["python"]}
    )
    assert code == 400 and body["field"] == "nodes"
    # The frontend translates by code: the field table's minimum and the value sent.
    assert (body["code"], body["params"]) == ("whole_number", {"minimum": 1, "got": 0})
    code, body = await error(
        jp_fetch,
        "jobs",
        method="POST",
        body={"name": "x", "workdir": "/nowhere/at/all", "command": ["python"]},
    )
    assert code == 400 and "workdir" in body["message"]
    assert body["code"] == "local_workdir" and body["params"]["workdir"] == "/nowhere/at/all"
    assert json.loads((await call(jp_fetch, "jobs")).body)["jobs"] == []


async def test_name_taken_is_409(jp_fetch: Any) -> None:
    body = {"name": "twice", "command": ["python", "-c", "pass"]}
    await call(jp_fetch, "jobs", method="POST", body=body)
    code, answer = await error(jp_fetch, "jobs", method="POST", body=body)
    assert code == 409 and "already exists" in answer["message"]
    assert (answer["code"], answer["params"]) == ("job_exists", {"name": "'twice'"})
    await wait_finished(jp_fetch, "twice")


async def test_missing_jobs_are_404(jp_fetch: Any, jp_ws_fetch: Any) -> None:
    for path, method in (
        (("jobs", "nope"), "GET"),
        (("jobs", "nope"), "DELETE"),
        (("jobs", "nope", "events"), "GET"),
    ):
        code, body = await error(jp_fetch, *path, method=method)
        assert code == 404 and "nope" in body["message"]
        assert (body["code"], body["params"]) == ("job_not_found", {"name": "'nope'"})
    messages = await read_ws(jp_ws_fetch, "nope")
    assert messages == [{"error": "job 'nope' not found", "status": 404}]


async def test_volumes(jp_fetch: Any) -> None:
    body = {
        "name": "v",
        "pvc": [{"claim": "home", "mountPath": "/home/me"}],
        "command": ["python", "-c", "pass"],
    }
    await call(jp_fetch, "jobs", method="POST", body=body)
    volumes = json.loads((await call(jp_fetch, "volumes")).body)["volumes"]
    assert [(v["name"], v["phase"]) for v in volumes] == [("home", "Bound")]
    await wait_finished(jp_fetch, "v")


async def test_render_reads_edited_yaml_back(jp_fetch: Any) -> None:
    rendered = json.loads(
        (
            await call(
                jp_fetch,
                "render",
                method="POST",
                body={"name": "y", "nodes": 2, "command": ["python", "t.py"]},
            )
        ).body
    )
    edited = rendered["yaml"].replace(
        "replicas: 1\n      restartPolicy: OnFailure\n      template:",
        "replicas: 1\n      restartPolicy: Never\n      template:",
        1,
    )
    edited = edited.replace(
        "spec:\n  nprocPerNode", "spec:\n  elasticPolicy:\n    rdzvBackend: c10d\n  nprocPerNode", 1
    )
    back = json.loads((await call(jp_fetch, "render", method="POST", body={"yaml": edited})).body)
    assert back["job"]["restartPolicy"] == "Never"
    # Only the Master was edited: the Worker keeps its own policy (issue #12).
    assert back["job"]["extras"] == {
        "spec": {"pytorchReplicaSpecs": {"Worker": {"restartPolicy": "OnFailure"}}}
    }
    # The elasticPolicy is the form's Elastic section now, not extras.
    assert back["job"]["rdzvBackend"] == "c10d"
    assert back["manifest"]["spec"]["elasticPolicy"] == {"rdzvBackend": "c10d"}
    restart = {
        k: v["restartPolicy"] for k, v in back["manifest"]["spec"]["pytorchReplicaSpecs"].items()
    }
    assert restart == {"Master": "Never", "Worker": "OnFailure"}
    code, body = await error(jp_fetch, "render", method="POST", body={"yaml": "kind: ["})
    assert code == 400 and body["field"] == "yaml"


@pytest.mark.parametrize(
    ("path", "method"),
    [
        (("jobs",), "GET"),
        (("jobs",), "POST"),
        (("jobs", "x"), "GET"),
        (("jobs", "x"), "DELETE"),
        (("jobs", "x", "events"), "GET"),
        (("volumes",), "GET"),
    ],
)
async def test_every_job_route_needs_auth(
    jp_fetch: Any, path: tuple[str, ...], method: str
) -> None:
    body = json.dumps({"name": "x", "command": ["x"]}) if method == "POST" else None
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(*API, *path, method=method, body=body, headers={"Authorization": ""})
    assert info.value.code == 403


async def test_log_websocket_needs_auth(jp_ws_fetch: Any) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_ws_fetch(*API, "jobs", "x", "logs", headers={"Authorization": ""})
    assert info.value.code == 403


async def test_closing_the_websocket_stops_the_upstream_stream(
    jp_fetch: Any, jp_ws_fetch: Any, jp_serverapp: Any
) -> None:
    slow = "import time\nfor i in range(600):\n    print(i, flush=True)\n    time.sleep(0.1)\n"
    await call(jp_fetch, "jobs", method="POST", body={"name": "slow", "script": slow})
    ws = await jp_ws_fetch(*API, "jobs", "slow", "logs", params={"follow": "1"})
    assert unbatch(await asyncio.wait_for(ws.read_message(), 30))[0]["replica"] == "master-0"

    def log_tasks() -> list[asyncio.Task[Any]]:
        return [
            t
            for t in asyncio.all_tasks()
            if "LogsHandler._stream" in repr(t.get_coro()) and not t.done()
        ]

    assert len(log_tasks()) == 1
    ws.close()
    for _ in range(50):
        if not log_tasks():
            break
        await asyncio.sleep(0.05)
    assert log_tasks() == []
    await call(jp_fetch, "jobs", "slow", method="DELETE")


async def test_apply_yaml_of_several_documents_reads_the_job_and_names_the_rest(
    jp_fetch: Any,
) -> None:
    """Upstream examples put a job beside its Kueue queues and end with ``---``."""
    rendered = json.loads(
        (
            await call(jp_fetch, "render", method="POST", body={"name": "m", "command": ["python"]})
        ).body
    )
    queue = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: q\n"
    text = f"{queue}---\n{rendered['yaml']}---\n"
    back = json.loads((await call(jp_fetch, "render", method="POST", body={"yaml": text})).body)
    assert back["job"]["name"] == "m"
    assert any("LocalQueue 'q' (document 1)" in w for w in back["warnings"])
    code, body = await error(
        jp_fetch, "render", method="POST", body={"yaml": f"{rendered['yaml']}---\n{text}"}
    )
    assert code == 400 and body["field"] == "yaml" and "document 3" in body["message"]
