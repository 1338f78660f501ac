"""The REST API on the kubernetes backend, against the fake API server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from .log_messages import runs, unbatch

API = ("pytorchjob", "api")
NS = "team-a"


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    return {
        "ServerApp": {
            "jpserver_extensions": {"jupyter_pytorchjob": True},
            "allow_unauthenticated_access": False,
        },
        "PyTorchJobApp": {
            "backend": "kubernetes",
            "allowed_namespaces": ["team-b"],
            "notebook_pod": "nb-0",
            "max_log_streams": 2,
        },
    }


async def call(jp_fetch: Any, *path: str, method: str = "GET", body: Any = None, **kw: Any) -> Any:
    if body is not None:
        kw["body"] = json.dumps(body)
    return await jp_fetch(*API, *path, method=method, **kw)


async def error(jp_fetch: Any, *path: str, **kw: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(HTTPClientError) as info:
        await call(jp_fetch, *path, **kw)
    return info.value.code, json.loads(info.value.response.body)


JOB = {"name": "demo", "nodes": 3, "command": ["python", "train.py"]}


async def test_every_endpoint(fake_kube: Any, jp_fetch: Any, jp_ws_fetch: Any) -> None:
    fake_kube.seed_pvc(NS, "workspace")
    created = await call(jp_fetch, "jobs", method="POST", body=JOB)
    assert created.code == 201
    assert fake_kube.get("pytorchjobs", NS, "demo")["metadata"]["namespace"] == NS
    listed = json.loads((await call(jp_fetch, "jobs")).body)["jobs"]
    assert [(j["name"], j["state"], j["namespace"]) for j in listed] == [("demo", "Created", NS)]
    job = json.loads((await call(jp_fetch, "jobs", "demo")).body)
    assert [r["name"] for r in job["replicas"]] == ["master-0", "worker-0", "worker-1"]
    assert job["spec"]["nodes"] == 3  # the form body, to clone and edit
    volumes = json.loads((await call(jp_fetch, "volumes")).body)["volumes"]
    assert [v["name"] for v in volumes] == ["workspace"]

    ws = await jp_ws_fetch(*API, "jobs", "demo", "logs", params={"follow": "1"})
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "epoch 0\n")
    fake_kube.append_log(NS, "demo-worker-1", "pytorch", "epoch 0 w1\n")
    messages = []
    while sum(len(runs(m)) for m in messages) < 2:  # the two lines, merged or not
        messages.extend(unbatch(await asyncio.wait_for(ws.read_message(), 10)))
    fake_kube.operator.succeed(NS, "demo")
    while not messages[-1].get("end"):
        messages.extend(unbatch(await asyncio.wait_for(ws.read_message(), 15)))
    messages.pop()
    ws.close()
    assert {run for m in messages for run in runs(m)} == {
        ("master-0", "epoch 0\n"),
        ("worker-1", "epoch 0 w1\n"),
    }
    events = json.loads((await call(jp_fetch, "jobs", "demo", "events")).body)["events"]
    assert "PyTorchJobSucceeded" in {e["reason"] for e in events}
    assert (await call(jp_fetch, "jobs", "demo", method="DELETE")).code == 204
    code, body = await error(jp_fetch, "jobs", "demo")
    assert code == 404 and "demo" in body["message"]


async def test_errors_are_actionable(fake_kube: Any, jp_fetch: Any) -> None:
    await call(jp_fetch, "jobs", method="POST", body=JOB)
    code, body = await error(jp_fetch, "jobs", method="POST", body=JOB)
    assert code == 409 and "already exists" in body["message"]
    fake_kube.deny("create", "pytorchjobs", NS, group="kubeflow.org")
    code, body = await error(jp_fetch, "jobs", method="POST", body={**JOB, "name": "other"})
    assert code == 403
    assert "system:serviceaccount" in body["message"] and NS in body["message"]
    fake_kube.allow_all()
    code, body = await error(jp_fetch, "jobs", method="POST", body={**JOB, "nodes": 0})
    assert code == 400 and body["field"] == "nodes"
    assert fake_kube.get("pytorchjobs", NS, "other") is None


@pytest.mark.parametrize("kind", ["PyTorchJob", "TrainJob"])
async def test_an_impossible_node_count_is_a_field_error(
    fake_kube: Any, jp_fetch: Any, kind: str
) -> None:
    """As locally: a job of a million pods is refused naming the field, nothing made."""
    for field in ("nodes", "maxNodes"):
        body = {**JOB, "kind": kind, field: 1_000_000}
        code, refused = await error(jp_fetch, "jobs", method="POST", body=body)
        assert (code, refused["field"]) == (400, field), refused
        assert "at most 5000" in refused["message"]
        code, refused = await error(jp_fetch, "render", method="POST", body=body)
        assert (code, refused["field"]) == (400, field), refused
    assert fake_kube.get("pytorchjobs", NS, "demo") is None
    assert fake_kube.get("trainjobs", NS, "demo") is None


async def test_logs_of_an_unknown_replica_are_404(fake_kube: Any, jp_fetch: Any) -> None:
    """As locally and in openapi.yaml: not an empty 200."""
    await call(jp_fetch, "jobs", method="POST", body=JOB)
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-worker-1", "pytorch", "w1\n")
    ok = await call(jp_fetch, "jobs", "demo", "logs", params={"replica": "worker-1"})
    assert ok.body.decode() == "w1\n"
    code, body = await error(jp_fetch, "jobs", "demo", "logs", params={"replica": "worker-7"})
    assert code == 404
    assert "no replica 'worker-7'" in body["message"] and "master-0" in body["message"]


async def test_log_streams_beyond_the_cap_are_refused_saying_so(
    fake_kube: Any, jp_fetch: Any, jp_ws_fetch: Any
) -> None:
    """max_log_streams (2 here) followers at once; one more is a 503 naming the setting,
    the other requests still answer, and a closed stream frees its slot."""
    await call(jp_fetch, "jobs", method="POST", body=JOB)
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "hello\n")
    follow = {"follow": "1", "replica": "master-0"}

    async def follower() -> Any:
        socket = await jp_ws_fetch(*API, "jobs", "demo", "logs", params=follow)
        return socket, unbatch(await socket.read_message())[0]

    held = [await follower() for _ in range(2)]
    assert [message.get("text") for _, message in held] == ["hello\n", "hello\n"]
    socket, refused = await follower()
    assert refused["status"] == 503 and "max_log_streams" in refused["error"], refused
    assert await socket.read_message() is None  # closed
    code, body = await error(jp_fetch, "jobs", "demo", "logs", params=follow)
    assert code == 503 and "max_log_streams" in body["message"]
    assert json.loads((await call(jp_fetch, "jobs")).body)["jobs"][0]["name"] == "demo"
    held[0][0].close()
    deadline = asyncio.get_running_loop().time() + 15
    while True:  # the server sees the close a moment later
        socket, message = await follower()
        if message.get("status") != 503:
            break
        assert asyncio.get_running_loop().time() < deadline, "the slot never came back"
        await asyncio.sleep(0.05)
    assert message.get("text") == "hello\n"
    for open_socket in (socket, held[1][0]):
        open_socket.close()


async def test_namespaces(fake_kube: Any, jp_fetch: Any) -> None:
    code, body = await error(jp_fetch, "jobs", params={"namespace": "kube-system"})
    assert code == 403 and "kube-system" in body["message"]
    await call(jp_fetch, "jobs", method="POST", body=JOB, params={"namespace": "team-b"})
    assert fake_kube.get("pytorchjobs", "team-b", "demo") is not None
    listed = json.loads((await call(jp_fetch, "jobs", params={"namespace": "team-b"})).body)
    assert [j["name"] for j in listed["jobs"]] == ["demo"]
    assert json.loads((await call(jp_fetch, "jobs")).body)["jobs"] == []


async def test_crd_missing(fake_kube: Any, jp_fetch: Any) -> None:
    fake_kube.remove_crd("pytorchjob")
    fake_kube.remove_crd("trainjob")
    code, body = await error(jp_fetch, "jobs")
    assert code == 404 and "Training Operator" in body["message"]
    assert "Trainer v2" in body["message"]


async def test_config_sees_a_kind_installed_while_the_server_runs(
    fake_kube: Any, jp_fetch: Any, jp_serverapp: Any
) -> None:
    """Trainer v2 installed after the server's first look: GET config offers TrainJob
    once the discovery's KINDS_TTL has passed, without a restart (#29 item 1)."""
    import time

    from jupyter_pytorchjob.backends.kubernetes.backend import KINDS_TTL

    fake_kube.remove_crd("trainjob")
    kinds = json.loads((await call(jp_fetch, "config")).body)["kinds"]
    assert [k["kind"] for k in kinds] == ["PyTorchJob"]
    fake_kube.restore_crd("trainjob")
    backend = jp_serverapp.web_app.settings["pytorchjob_backend"]
    backend.clock = lambda: time.monotonic() + KINDS_TTL + 1  # the TTL has passed
    kinds = json.loads((await call(jp_fetch, "config")).body)["kinds"]
    assert [k["kind"] for k in kinds] == ["PyTorchJob", "TrainJob"]


@pytest.mark.slow
async def test_tensorboard_on_a_job_through_the_notebooks_pvc(
    fake_kube: Any, jp_fetch: Any, jp_root_dir: Path
) -> None:
    """The job writes /mnt/ws/runs/a on PVC 'workspace'; the notebook mounts that PVC
    as its root dir; TensorBoard reads the events there, through the proxy."""
    from torch.utils.tensorboard import SummaryWriter

    fake_kube.add(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "nb-0", "namespace": NS},
            "spec": {
                "containers": [
                    {
                        "name": "nb",
                        "image": "my/notebook:1",
                        "volumeMounts": [{"name": "home", "mountPath": str(jp_root_dir)}],
                    }
                ],
                "volumes": [{"name": "home", "persistentVolumeClaim": {"claimName": "workspace"}}],
            },
        }
    )
    config = json.loads((await call(jp_fetch, "config")).body)
    assert config["defaults"]["image"] == "my/notebook:1"
    assert config["defaults"]["pvc"][0]["claim"] == "workspace"
    job = {
        "name": "tb",
        "command": ["python", "t.py"],
        "pvc": [{"claim": "workspace", "mountPath": "/mnt/ws"}],
        "logdir": "/mnt/ws/runs/a",
    }
    created = json.loads((await call(jp_fetch, "jobs", method="POST", body=job)).body)
    assert created["name"] == "tb"
    manifest = fake_kube.get("pytorchjobs", NS, "tb")
    master = manifest["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    assert master["containers"][0]["image"] == "my/notebook:1"  # the notebook's image
    writer = SummaryWriter(str(jp_root_dir / "runs" / "a"))
    for step in range(3):
        writer.add_scalar("loss", 1.0 / (step + 1), step)
    writer.close()
    tb = json.loads((await call(jp_fetch, "tensorboards", method="POST", body={"job": "tb"})).body)
    assert tb["logdir"] == str((jp_root_dir / "runs" / "a").resolve())
    for _ in range(100):
        tags = json.loads((await jp_fetch(tb["url"] + "data/plugin/scalars/tags")).body)
        if "loss" in tags.get("tb", {}):
            break
        await asyncio.sleep(0.2)
    assert "loss" in tags["tb"]  # the run named after the job, not "." (issue 32)
    await call(jp_fetch, "tensorboards", tb["id"], method="DELETE")


async def test_applied_yaml_names_the_fields_the_cluster_would_drop(
    fake_kube: Any, jp_fetch: Any
) -> None:
    from .test_fake_apiserver_rules import require_crd_schema

    require_crd_schema(fake_kube)
    rendered = json.loads((await call(jp_fetch, "render", method="POST", body=JOB)).body)
    assert rendered["warnings"] == []
    typo = rendered["yaml"].replace("  runPolicy:\n", "  runPolicy:\n    backofLimit: 9\n", 1)
    assert typo != rendered["yaml"]
    checked = json.loads((await call(jp_fetch, "render", method="POST", body={"yaml": typo})).body)
    (warning,) = checked["warnings"]
    assert "spec.runPolicy.backofLimit" in warning and "dropped 1 field(s)" in warning
    assert checked["job"]["extras"] == {"spec": {"runPolicy": {"backofLimit": 9}}}
    assert fake_kube.list("pytorchjobs", NS) == []  # a dry run: nothing created
    submitted = json.loads((await call(jp_fetch, "jobs", method="POST", body=checked["job"])).body)
    assert "spec.runPolicy.backofLimit" in submitted["warnings"][0]


async def test_applied_yaml_says_when_the_cluster_could_not_check_it(
    fake_kube: Any, jp_fetch: Any
) -> None:
    """A user who may not create jobs: the dry run is refused, and the answer says the
    fields were not checked - not ``warnings: []``, which reads "nothing dropped" (#29 12)."""
    rendered = json.loads((await call(jp_fetch, "render", method="POST", body=JOB)).body)
    fake_kube.deny("create", "pytorchjobs")
    body = {"yaml": rendered["yaml"]}
    checked = json.loads((await call(jp_fetch, "render", method="POST", body=body)).body)
    (warning,) = checked["warnings"]
    assert warning.startswith("could not check which fields the cluster keeps: not allowed")
    assert "create pytorchjobs" in warning and "team-a" in warning
    assert checked["job"]["name"] == "demo"  # the YAML itself was read back all the same


async def test_logs_of_a_container_that_cannot_start_are_a_409(
    fake_kube: Any, jp_fetch: Any
) -> None:
    """ErrImagePull: the plain log request answers 409 in the kubelet's words (#29 5)."""
    await call(jp_fetch, "jobs", method="POST", body={**JOB, "nodes": 1})
    fake_kube.operator.create_pods(NS, "demo")
    fake_kube.set_waiting(NS, "demo-master-0", "pytorch", "ErrImagePull")
    code, body = await error(jp_fetch, "jobs", "demo", "logs")
    assert code == 409 and "image can't be pulled" in body["message"]


async def test_plain_text_logs(fake_kube: Any, jp_fetch: Any) -> None:
    """``GET jobs/{name}/logs`` without a websocket upgrade, on the kubernetes backend."""
    await call(jp_fetch, "jobs", method="POST", body={**JOB, "nodes": 2})
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "epoch 0\nepoch 1\n")
    fake_kube.append_log(NS, "demo-worker-0", "pytorch", "worker up\n")
    fake_kube.operator.succeed(NS, "demo")
    response = await call(jp_fetch, "jobs", "demo", "logs", params={"follow": "1"})
    assert response.headers["Content-Type"].startswith("text/plain")
    assert sorted(response.body.decode().splitlines()) == [
        "master-0 | epoch 0",
        "master-0 | epoch 1",
        "worker-0 | worker up",
    ]
    one = await call(jp_fetch, "jobs", "demo", "logs", params={"replica": "master-0", "tail": "1"})
    assert one.body.decode() == "epoch 1\n"
    code, body = await error(jp_fetch, "jobs", "gone", "logs")
    assert code == 404 and "gone" in body["message"]
