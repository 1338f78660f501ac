"""The fake API server, driven by the real ``kubernetes_asyncio`` client through a kubeconfig,
so every shape it serves is one the production client accepts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import socket
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.watch import Watch

from jupyter_pytorchjob.job import JobSpec
from jupyter_pytorchjob.kinds.pytorchjob.manifest import build_manifest

from .fake_kube import FakeKube
from .fake_kube.logs import parse_rfc3339, rfc3339
from .fake_kube.selectors import SelectorError, labels_match, parse_labels
from .fake_kube.server import parse_bool
from .waiting import until

NS = "team-a"
GROUP, VERSION, PLURAL = "kubeflow.org", "v1", "pytorchjobs"
JOB_LABEL = "training.kubeflow.org/job-name"
MERGE = "application/merge-patch+json"
# Raw HTTP calls carry the kubeconfig's token: without one the server treats a request
# as system:anonymous and RBAC refuses it.
AUTH = {"Authorization": "Bearer dummy-token"}


def manifest(name: str = "job1", nodes: int = 3, **body: Any) -> dict[str, Any]:
    wire = {"name": name, "image": "python:3.11", "nodes": nodes, "command": ["python", "train.py"]}
    spec = JobSpec.from_wire(wire | body)
    return build_manifest(spec)


@contextlib.asynccontextmanager
async def apis() -> AsyncIterator[tuple[client.CustomObjectsApi, client.CoreV1Api]]:
    await config.load_kube_config(config_file=os.environ["KUBECONFIG"])
    async with client.ApiClient() as api:
        yield client.CustomObjectsApi(api), client.CoreV1Api(api)


async def create(custom: client.CustomObjectsApi, body: dict[str, Any], **kw: Any) -> Any:
    return await custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, body, **kw)


async def expect_status(coro: Any, code: int, reason: str) -> dict[str, Any]:
    with pytest.raises(ApiException) as info:
        await coro
    assert info.value.status == code
    body = json.loads(info.value.body)
    assert body["kind"] == "Status" and body["status"] == "Failure"
    assert body["code"] == code and body["reason"] == reason, body
    return body  # type: ignore[no-any-return]


async def streams_open(fake: FakeKube, count: int) -> None:
    """Wait until the fake holds ``count`` open watch/follow streams."""
    for _ in range(500):
        if len(fake.streams) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(fake.streams)} streams open, expected {count}")


async def settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


# -- unit: the grammar ------------------------------------------------------------------


def test_parse_bool_is_go_parse_bool() -> None:
    assert all(parse_bool(v) for v in ("1", "t", "T", "true", "TRUE", "True"))
    assert not any(parse_bool(v) for v in ("0", "f", "F", "false", "FALSE", "False", None))
    with pytest.raises(Exception, match="ParseBool"):
        parse_bool("yes")


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("a=1", {"a": "1"}, True),
        ("a==1,b!=2", {"a": "1"}, True),
        ("a in (1, 2),c notin (3)", {"a": "2", "c": "4"}, True),
        ("a in (1,2)", {"a": "3"}, False),
        ("a notin (1)", {}, True),
        ("!a", {"a": ""}, False),
        ("a,!b", {"a": "x"}, True),
        ("a>3,a<10", {"a": "5"}, True),
        ("x.io/k in (v)", {"x.io/k": "v"}, True),
        ("a=", {"a": ""}, True),
        ("", {"a": "1"}, True),
    ],
)
def test_label_selector_grammar(selector: str, labels: dict[str, str], expected: bool) -> None:
    assert labels_match(parse_labels(selector), labels) is expected


@pytest.mark.parametrize(
    "bad", ["a in b", "a in ()", "=x", "a,", "!a=b", "a b", "Bad Key=x", "a>x"]
)
def test_label_selector_errors(bad: str) -> None:
    with pytest.raises(SelectorError, match=r"^unable to parse requirement"):
        parse_labels(bad)


# -- PyTorchJobs --------------------------------------------------------------------------


async def test_create_get_list_with_server_fields(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        body = manifest()
        dry = await create(custom, body, dry_run="All")
        assert dry["metadata"]["uid"] and fake_kube.get(PLURAL, NS, "job1") is None
        made = await create(custom, body)
        assert isinstance(made, dict)
        meta = made["metadata"]
        assert meta["namespace"] == NS and meta["generation"] == 1 and meta["uid"]
        assert meta["creationTimestamp"].endswith("Z") and int(meta["resourceVersion"]) > 0
        got = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "job1")
        assert got["metadata"]["uid"] == meta["uid"]
        assert got["status"]["conditions"][0]["type"] == "Created"
        listed = await custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
        assert listed["kind"] == "PyTorchJobList" and [
            i["metadata"]["name"] for i in listed["items"]
        ] == ["job1"]
        assert int(listed["metadata"]["resourceVersion"]) >= int(got["metadata"]["resourceVersion"])
        named = await custom.list_namespaced_custom_object(
            GROUP, VERSION, NS, PLURAL, field_selector="metadata.name=other"
        )
        assert named["items"] == []
        other = await custom.list_namespaced_custom_object(GROUP, VERSION, "team-b", PLURAL)
        assert other["items"] == []
        # generateName
        gen = manifest()
        gen["metadata"] = {"generateName": "job-"}
        made = await create(custom, gen)
        assert made["metadata"]["name"].startswith("job-") and len(made["metadata"]["name"]) == 9


async def test_create_errors_are_status_bodies(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        await create(custom, manifest())
        body = await expect_status(create(custom, manifest()), 409, "AlreadyExists")
        assert body["message"] == 'pytorchjobs.kubeflow.org "job1" already exists'
        assert body["details"] == {"name": "job1", "group": GROUP, "kind": PLURAL}

        bad = manifest()
        bad["metadata"]["name"] = "Bad_Name"
        body = await expect_status(create(custom, bad), 422, "Invalid")
        assert body["message"].startswith(
            'PyTorchJob.kubeflow.org "Bad_Name" is invalid: '
            'metadata.name: Invalid value: "Bad_Name": '
            "a lowercase RFC 1123 subdomain"
        )
        assert body["details"]["kind"] == "PyTorchJob"
        assert body["details"]["causes"][0]["field"] == "metadata.name"

        webhook = manifest("job2")
        webhook["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = 2
        body = await expect_status(create(custom, webhook), 422, "Invalid")
        assert body["message"].startswith('PyTorchJob.kubeflow.org "job2" is invalid: ')
        # The webhook's field path and words (pytorchjob_webhook.go:151-154)
        assert "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1" in body["message"]

        nameless = manifest()
        del nameless["metadata"]["name"]
        body = await expect_status(create(custom, nameless), 422, "Invalid")
        assert "metadata.name: Required value: name or generateName is required" in body["message"]

        wrong_ns = manifest("job3")
        wrong_ns["metadata"]["namespace"] = "elsewhere"
        body = await expect_status(create(custom, wrong_ns), 400, "BadRequest")
        assert "does not match the namespace sent on the request" in body["message"]

        body = await expect_status(
            custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "nope"), 404, "NotFound"
        )
        assert body["message"] == 'pytorchjobs.kubeflow.org "nope" not found'
        assert body["details"] == {"name": "nope", "group": GROUP, "kind": PLURAL}


async def test_patch_put_delete(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        made = await create(custom, manifest(nodes=1))
        # kubernetes_asyncio 36 sends a dict body as application/json-patch+json, which a
        # real API server refuses: the caller must ask for merge-patch explicitly.
        body = await expect_status(
            custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "job1", {"spec": {}}),
            400,
            "BadRequest",
        )
        assert (
            body["message"] == "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
        )
        patched = await custom.patch_namespaced_custom_object(
            GROUP,
            VERSION,
            NS,
            PLURAL,
            "job1",
            {"metadata": {"labels": {"a": "b"}}},
            _content_type=MERGE,
        )
        assert (
            patched["metadata"]["labels"] == {"a": "b"} and patched["metadata"]["generation"] == 1
        )
        assert int(patched["metadata"]["resourceVersion"]) > int(
            made["metadata"]["resourceVersion"]
        )
        patched = await custom.patch_namespaced_custom_object(
            GROUP,
            VERSION,
            NS,
            PLURAL,
            "job1",
            {"spec": {"runPolicy": {"suspend": True}}},
            _content_type=MERGE,
        )
        assert patched["metadata"]["generation"] == 2 and patched["spec"]["runPolicy"]["suspend"]
        json_patched = await custom.patch_namespaced_custom_object(
            GROUP, VERSION, NS, PLURAL, "job1", [{"op": "remove", "path": "/metadata/labels/a"}]
        )
        assert json_patched["metadata"]["labels"] == {}
        await expect_status(
            custom.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                NS,
                PLURAL,
                "job1",
                {},
                _content_type="application/strategic-merge-patch+json",
            ),
            415,
            "UnsupportedMediaType",
        )

        stale = dict(made)
        body = await expect_status(
            custom.replace_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "job1", stale),
            409,
            "Conflict",
        )
        assert body["message"].startswith(
            'Operation cannot be fulfilled on pytorchjobs.kubeflow.org "job1": '
            "the object has been modified"
        )
        no_rv = json.loads(json.dumps(json_patched))
        del no_rv["metadata"]["resourceVersion"]
        body = await expect_status(
            custom.replace_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "job1", no_rv),
            422,
            "Invalid",
        )
        assert (
            "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
            in body["message"]
        )
        current = json.loads(json.dumps(json_patched))
        current["metadata"]["annotations"] = {"x": "y"}
        replaced = await custom.replace_namespaced_custom_object(
            GROUP, VERSION, NS, PLURAL, "job1", current
        )
        assert replaced["metadata"]["annotations"] == {"x": "y"}
        assert replaced["status"]["conditions"]  # the status subresource survives a PUT

        status = await custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "job1")
        assert status["kind"] == "Status" and status["status"] == "Success"
        assert status["details"]["uid"] == made["metadata"]["uid"]
        await expect_status(
            custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "job1"),
            404,
            "NotFound",
        )


async def test_forbidden_unauthorized_and_crd_missing(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        fake_kube.deny("create", "pytorchjobs", NS)
        body = await expect_status(create(custom, manifest()), 403, "Forbidden")
        assert body["message"] == (
            "pytorchjobs.kubeflow.org is forbidden: "
            'User "system:serviceaccount:team-a:default-editor" cannot create resource '
            '"pytorchjobs" in API group "kubeflow.org" in the namespace "team-a"'
        )
        fake_kube.allow_all()
        await create(custom, manifest())
        fake_kube.deny("get", "pods/log")
        body = await expect_status(
            core.read_namespaced_pod_log("job1-master-0", NS), 403, "Forbidden"
        )
        assert body["message"].startswith('pods "job1-master-0" is forbidden: User "')
        assert (
            'cannot get resource "pods/log" in API group "" in the namespace "team-a"'
            in body["message"]
        )

        fake_kube.require_token("other-token")
        body = await expect_status(core.list_namespaced_pod(NS), 401, "Unauthorized")
        assert body["message"] == "Unauthorized"
        fake_kube.require_token("dummy-token")
        await core.list_namespaced_pod(NS)

        fake_kube.remove_crd()
        # No API group serves the path any more: the mux's plain-text 404, not a Status.
        with pytest.raises(ApiException) as info:
            await custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
        assert (info.value.status, info.value.body) == (404, "404 page not found\n")
        fake_kube.restore_crd()
        await custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)


async def test_injected_errors_and_discovery(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        fake_kube.inject_error(r"/pytorchjobs$", 500, times=1)
        await expect_status(
            custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL), 500, "InternalError"
        )
        await custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
        fake_kube.inject_error(r"/pods$", 429, retry_after=3)
        with pytest.raises(ApiException) as info:
            await core.list_namespaced_pod(NS)
        assert info.value.status == 429 and info.value.headers["Retry-After"] == "3"
        assert json.loads(info.value.body)["details"] == {"retryAfterSeconds": 3}

    async with aiohttp.ClientSession(fake_kube.url, headers=AUTH) as http:
        for path in ("/version", "/version/"):
            async with http.get(path) as resp:
                assert resp.status == 200 and (await resp.json())["major"] == "1"
        async with http.get("/apis/kubeflow.org/v1") as resp:
            names = [r["name"] for r in (await resp.json())["resources"]]
            assert "pytorchjobs" in names
        fake_kube.remove_crd()
        async with http.get("/apis/kubeflow.org/v1") as resp:
            assert resp.status == 404
        async with http.get("/apis") as resp:
            groups = {g["name"] for g in (await resp.json())["groups"]}
            assert "kubeflow.org" not in groups and "batch" in groups
        async with http.get("/no/such/path") as resp:
            assert (resp.status, await resp.text()) == (404, "404 page not found\n")


# -- watch --------------------------------------------------------------------------------


async def test_watch_added_modified_deleted(fake_kube: FakeKube) -> None:
    async with apis() as (custom, _):
        await create(custom, manifest("early", nodes=1))
        listed = await custom.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
        seen: list[tuple[str, str]] = []

        async def watch(**kw: Any) -> None:
            async with Watch() as w:
                async for event in w.stream(
                    custom.list_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, **kw
                ):
                    seen.append((event["type"], event["object"]["metadata"].get("name", "")))

        task = asyncio.create_task(watch(timeout_seconds=1, allow_watch_bookmarks=True))
        await streams_open(fake_kube, 1)
        await create(custom, manifest("job1", nodes=1))
        await custom.patch_namespaced_custom_object(
            GROUP,
            VERSION,
            NS,
            PLURAL,
            "job1",
            {"metadata": {"labels": {"x": "y"}}},
            _content_type=MERGE,
        )
        await custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "job1")
        await asyncio.wait_for(task, 5)  # ends on timeoutSeconds
        assert seen[0] == ("ADDED", "early")
        assert ("ADDED", "job1") in seen and ("DELETED", "job1") in seen
        assert (
            seen.index(("ADDED", "job1"))
            < seen.index(("MODIFIED", "job1"))
            < seen.index(("DELETED", "job1"))
        )
        assert seen[-1][0] == "BOOKMARK"

        # Resuming from the list's resourceVersion replays only what came later.
        seen.clear()
        rv = listed["metadata"]["resourceVersion"]
        await watch(resource_version=rv, timeout_seconds=1, label_selector="x=y")
        # job1 starts matching x=y with the patch: a selector watch sees that as ADDED.
        assert seen == [("ADDED", "job1"), ("DELETED", "job1")]
        seen.clear()
        await watch(resource_version=rv, timeout_seconds=1)
        assert seen[0] == ("ADDED", "job1") and seen[-1] == ("DELETED", "job1")
        assert {t for t, _ in seen[1:-1]} == {"MODIFIED"}

        fake_kube.expire_history()
        with pytest.raises(ApiException) as info:
            await watch(resource_version=rv, timeout_seconds=1)
        assert info.value.status == 410 and "too old resource version" in info.value.reason


async def test_pod_watch_is_typed_and_filtered(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        events: list[tuple[str, str, str]] = []

        async def watch() -> None:
            async with Watch() as w:
                async for event in w.stream(
                    core.list_namespaced_pod,
                    NS,
                    label_selector="training.kubeflow.org/replica-type=worker",
                    timeout_seconds=1,
                ):
                    pod = event["object"]
                    assert isinstance(pod, client.V1Pod)
                    events.append((event["type"], pod.metadata.name, pod.status.phase))

        task = asyncio.create_task(watch())
        await streams_open(fake_kube, 1)
        await create(custom, manifest(nodes=2))
        fake_kube.operator.run(NS, "job1")
        await asyncio.wait_for(task, 5)
        assert events[0] == ("ADDED", "job1-worker-0", "Pending")
        assert ("MODIFIED", "job1-worker-0", "Running") in events
        assert all(name == "job1-worker-0" for _, name, _ in events)


# -- pods, events, PVCs ---------------------------------------------------------------------


async def test_operator_creates_pods_like_the_training_operator(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        job = await create(custom, manifest(nodes=3))
        pods = (await core.list_namespaced_pod(NS, label_selector=f"{JOB_LABEL}=job1")).items
        assert [p.metadata.name for p in pods] == [
            "job1-master-0",
            "job1-worker-0",
            "job1-worker-1",
        ]
        for rank, pod in enumerate(pods):
            labels = pod.metadata.labels
            rtype = "master" if rank == 0 else "worker"
            assert labels["training.kubeflow.org/operator-name"] == "pytorchjob-controller"
            assert labels["training.kubeflow.org/replica-type"] == rtype
            assert labels["training.kubeflow.org/replica-index"] == str(max(rank - 1, 0))
            assert ("training.kubeflow.org/job-role" in labels) == (rank == 0)
            owner = pod.metadata.owner_references[0]
            assert (owner.kind, owner.uid, owner.controller) == (
                "PyTorchJob",
                job["metadata"]["uid"],
                True,
            )
            (container,) = pod.spec.containers
            env = {e.name: e.value for e in container.env}
            assert env["WORLD_SIZE"] == "3" and env["RANK"] == str(rank) == env["PET_NODE_RANK"]
            assert env["MASTER_ADDR"] == "job1-master-0" and env["MASTER_PORT"] == "23456"
            assert env["PET_NNODES"] == "3" and env["PYTHONUNBUFFERED"] == "1"
            assert any(p.name == "pytorchjob-port" for p in container.ports)
            assert pod.status.phase == "Pending"
            waiting = pod.status.container_statuses[0].state.waiting.reason
            assert waiting == ("ContainerCreating" if rank == 0 else "PodInitializing")
            if rank:
                assert [c.name for c in pod.spec.init_containers] == ["init-pytorch"]
                assert pod.status.init_container_statuses[0].name == "init-pytorch"
        selected = await core.list_namespaced_pod(
            NS,
            label_selector=f"{JOB_LABEL}=job1,training.kubeflow.org/replica-type in (worker),"
            "training.kubeflow.org/replica-index notin (0)",
        )
        assert [p.metadata.name for p in selected.items] == ["job1-worker-1"]
        masters = await core.list_namespaced_pod(
            NS, label_selector="!training.kubeflow.org/replica-index,x"
        )
        assert masters.items == []
        role = await core.list_namespaced_pod(NS, label_selector="training.kubeflow.org/job-role")
        assert [p.metadata.name for p in role.items] == ["job1-master-0"]
        await expect_status(
            core.list_namespaced_pod(NS, label_selector="a in b"), 400, "BadRequest"
        )
        body = await expect_status(
            core.list_namespaced_pod(NS, field_selector="spec.foo=1"), 400, "BadRequest"
        )
        assert body["message"] == "field label not supported: spec.foo"
        pending = await core.list_namespaced_pod(
            NS, field_selector="status.phase=Pending,metadata.name!=job1-master-0"
        )
        assert len(pending.items) == 2

        events = await core.list_namespaced_event(
            NS,
            field_selector="involvedObject.kind=PyTorchJob,involvedObject.name=job1,reason=SuccessfulCreatePod",
        )
        assert sorted(e.message for e in events.items) == [
            "Created pod: job1-master-0",
            "Created pod: job1-worker-0",
            "Created pod: job1-worker-1",
        ]
        assert events.items[0].involved_object.uid == job["metadata"]["uid"]

        fake_kube.operator.run(NS, "job1")
        got = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "job1")
        assert [c["type"] for c in got["status"]["conditions"]] == ["Created", "Running"]
        assert got["status"]["replicaStatuses"]["Worker"]["active"] == 2
        running = await core.read_namespaced_pod("job1-worker-1", NS)
        assert running.status.phase == "Running"
        assert running.status.init_container_statuses[0].state.terminated.exit_code == 0

        fake_kube.operator.succeed(NS, "job1")
        got = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "job1")
        conditions = [(c["type"], c["status"]) for c in got["status"]["conditions"]]
        assert conditions == [("Created", "True"), ("Running", "False"), ("Succeeded", "True")]

        # Deleting the job garbage-collects its pods.
        await custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "job1")
        await settle()
        assert (await core.list_namespaced_pod(NS)).items == []


async def test_operator_failure_and_unschedulable(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        # Never: a failed replica fails the job (OnFailure would recreate the pod).
        await create(custom, manifest(nodes=2, restartPolicy="Never"))
        fake_kube.operator.set_unschedulable(NS, "job1-master-0")
        pod = await core.read_namespaced_pod("job1-master-0", NS)
        (cond,) = pod.status.conditions
        assert (cond.type, cond.status, cond.reason) == ("PodScheduled", "False", "Unschedulable")
        # Not on a node: no kubelet to ask, so 204 with an empty body (a real server's answer).
        url = f"/api/v1/namespaces/{NS}/pods/job1-master-0/log"
        session = aiohttp.ClientSession(fake_kube.url, headers=AUTH)
        async with session as http, http.get(url) as resp:
            assert (resp.status, await resp.read()) == (204, b"")
        events = await core.list_namespaced_event(
            NS, field_selector="involvedObject.name=job1-master-0"
        )
        (event,) = events.items
        assert (event.reason, event.type) == ("FailedScheduling", "Warning")
        assert "Insufficient nvidia.com/gpu" in event.message

        fake_kube.operator.run(NS, "job1")
        fake_kube.operator.fail(NS, "job1", "worker-0", exit_code=137, reason="OOMKilled")
        got = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "job1")
        last = got["status"]["conditions"][-1]
        assert (last["type"], last["reason"]) == ("Failed", "PyTorchJobFailed")
        assert last["message"] == "PyTorchJob job1 is failed because 1 Worker replica(s) failed."
        pod = await core.read_namespaced_pod("job1-worker-0", NS)
        terminated = pod.status.container_statuses[0].state.terminated
        assert (terminated.exit_code, terminated.reason, pod.status.phase) == (
            137,
            "OOMKilled",
            "Failed",
        )
        exited = await core.list_namespaced_event(NS, field_selector="reason=ExitedWithCode")
        assert exited.items[0].message == "Pod: team-a.job1-worker-0 exited with code 137"


async def test_pvc_and_seeded_lists_deserialize(fake_kube: FakeKube) -> None:
    fake_kube.seed_pvc(NS, "data", capacity="50Gi")
    fake_kube.seed_pvc(NS, "pending", phase="Pending", access_modes=("ReadWriteOnce",))
    fake_kube.add_event(
        NS, "Pod", "ghost", "BackOff", "Back-off restarting failed container", "Warning"
    )
    async with apis() as (_, core):
        pvcs = await core.list_namespaced_persistent_volume_claim(NS)
        assert [(p.metadata.name, p.status.phase) for p in pvcs.items] == [
            ("data", "Bound"),
            ("pending", "Pending"),
        ]
        assert pvcs.items[0].status.capacity == {"storage": "50Gi"}
        assert pvcs.items[0].spec.access_modes == ["ReadWriteMany"]
        events = await core.list_namespaced_event(NS, field_selector="type=Warning")
        assert events.items[0].involved_object.name == "ghost"
        page = await core.list_namespaced_persistent_volume_claim(NS, limit=1)
        assert len(page.items) == 1 and page.metadata._continue
        rest = await core.list_namespaced_persistent_volume_claim(
            NS, limit=1, _continue=page.metadata._continue
        )
        assert [p.metadata.name for p in rest.items] == ["pending"]


# -- logs -----------------------------------------------------------------------------------


async def test_logs_waiting_errors_and_container_choice(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        await create(custom, manifest(nodes=2))
        body = await expect_status(
            core.read_namespaced_pod_log("job1-master-0", NS), 400, "BadRequest"
        )
        assert (
            body["message"]
            == 'container "pytorch" in pod "job1-master-0" is waiting to start: ContainerCreating'
        )
        body = await expect_status(
            core.read_namespaced_pod_log("job1-worker-0", NS), 400, "BadRequest"
        )
        assert body["message"].endswith("is waiting to start: PodInitializing")
        body = await expect_status(
            core.read_namespaced_pod_log("job1-worker-0", NS, container="nope"), 400, "BadRequest"
        )
        assert body["message"] == "container nope is not valid for pod job1-worker-0"
        await expect_status(core.read_namespaced_pod_log("ghost", NS), 404, "NotFound")
        fake_kube.set_waiting(NS, "job1-master-0", "pytorch", "ImagePullBackOff")
        body = await expect_status(
            core.read_namespaced_pod_log("job1-master-0", NS), 400, "BadRequest"
        )
        assert body["message"].endswith("is waiting to start: trying and failing to pull image")

        fake_kube.add({
            "kind": "Pod",
            "metadata": {"name": "two", "namespace": NS},
            "spec": {"nodeName": "node-1", "initContainers": [{"name": "i", "image": "x"}],
                     "containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "x"}]},
        })  # fmt: skip
        body = await expect_status(core.read_namespaced_pod_log("two", NS), 400, "BadRequest")
        assert body["message"] == (
            "a container name must be specified for pod two, choose one of: [a b] "
            "or one of the init containers: [i]"
        )
        fake_kube.append_log(NS, "two", "b", "from b\n")
        assert await core.read_namespaced_pod_log("two", NS, container="b") == "from b\n"
        fake_kube.append_log(NS, "job1-worker-0", "init-pytorch", "waiting for master\n")
        assert await core.read_namespaced_pod_log(
            "job1-worker-0", NS, container="init-pytorch"
        ) == ("waiting for master\n")


async def test_a_log_client_gone_before_the_answer_is_no_error(
    fake_kube: FakeKube, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that closes its connection right after asking for a log (a stream
    cancelled as it reconnects) gets no answer, and the fake logs no error: the API
    server's ``StreamObject`` (apiserver/pkg/endpoints/handlers/responsewriters/
    writers.go, v1.20.2) writes the headers and ``io.Copy``s the log, discarding the
    error of a write to a connection that is gone."""
    async with apis() as (custom, _):
        await create(custom, manifest(nodes=1))
        fake_kube.append_log(NS, "job1-master-0", "pytorch", "one\n")
    path = f"/api/v1/namespaces/{NS}/pods/job1-master-0/log?follow=true"
    request = f"GET {path} HTTP/1.1\r\nHost: fake\r\nAuthorization: {AUTH['Authorization']}\r\n\r\n"
    server = fake_kube._runner.server  # type: ignore[union-attr]
    # Sent and closed without giving the loop a turn: the fake reads the request, then
    # the close, before its handler writes the headers.
    with socket.create_connection((fake_kube.host, fake_kube.port)) as sock:
        sock.sendall(request.encode())
    await until(lambda: fake_kube.access_log and not server.connections, "the request handled")
    assert fake_kube.access_log[-1][1] == path.partition("?")[0]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    async with apis() as (_, core):
        assert await core.read_namespaced_pod_log("job1-master-0", NS) == "one\n"


async def test_log_backlog_options(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        await create(custom, manifest(nodes=1))
        pod = "job1-master-0"
        fake_kube.append_log(NS, pod, "pytorch", b"one\ntwo\n")
        await asyncio.sleep(1.05)
        stamp = rfc3339(nano=True)
        fake_kube.append_log(NS, pod, "pytorch", "three\nfour")
        assert await core.read_namespaced_pod_log(pod, NS) == "one\ntwo\nthree\nfour"
        assert await core.read_namespaced_pod_log(pod, NS, tail_lines=2) == "three\nfour"
        assert await core.read_namespaced_pod_log(pod, NS, tail_lines=0) == ""
        assert await core.read_namespaced_pod_log(pod, NS, limit_bytes=5) == "one\nt"
        assert await core.read_namespaced_pod_log(pod, NS, since_seconds=1) == "three\nfour"
        # kubernetes_asyncio has no since_time parameter: ask over plain HTTP.
        async with aiohttp.ClientSession(fake_kube.url, headers=AUTH) as http:
            url = f"/api/v1/namespaces/{NS}/pods/{pod}/log"
            async with http.get(url, params={"sinceTime": stamp}) as resp:
                assert await resp.text() == "three\nfour"
        stamped = await core.read_namespaced_pod_log(pod, NS, timestamps=True)
        lines = stamped.split("\n")
        assert len(lines) == 4 and lines[3].endswith("Z four") and lines[0].endswith("Z one")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z one", lines[0])
        await expect_status(core.read_namespaced_pod_log(pod, NS, tail_lines=-1), 422, "Invalid")

        fake_kube.restart(NS, pod, "pytorch")
        fake_kube.append_log(NS, pod, "pytorch", "second run\n")
        assert await core.read_namespaced_pod_log(pod, NS) == "second run\n"
        assert await core.read_namespaced_pod_log(pod, NS, previous=True) == "one\ntwo\nthree\nfour"
        status = (await core.read_namespaced_pod(pod, NS)).status.container_statuses[0]
        assert status.restart_count == 1 and status.last_state.terminated.exit_code == 1
        fake_kube.set_waiting(NS, pod, "pytorch", "CrashLoopBackOff", "back-off 10s")
        # Waiting to restart: the current log is the last run's.
        assert await core.read_namespaced_pod_log(pod, NS) == "second run\n"

        await create(custom, manifest("job2", nodes=1))
        fake_kube.append_log(NS, "job2-master-0", "pytorch", "x\n")
        body = await expect_status(
            core.read_namespaced_pod_log("job2-master-0", NS, previous=True), 400, "BadRequest"
        )
        assert (
            body["message"]
            == 'previous terminated container "pytorch" in pod "job2-master-0" not found'
        )


async def test_a_line_is_stamped_when_it_is_complete(fake_kube: FakeKube) -> None:
    """The container runtime stamps a line when it has read all of it (containerd's CRI
    logger reads a whole line, then takes the time), not when its first byte came: a line
    written in two pieces carries the second piece's time."""
    async with apis() as (custom, core):
        await create(custom, manifest(nodes=1))
        pod = "job1-master-0"
        fake_kube.append_log(NS, pod, "pytorch", "first\nhal")
        between = parse_rfc3339(rfc3339(nano=True))
        fake_kube.append_log(NS, pod, "pytorch", "f\nnext\n")
        stamped = await core.read_namespaced_pod_log(pod, NS, timestamps=True)
        stamps = {
            text: parse_rfc3339(stamp)
            for stamp, _, text in (line.partition(" ") for line in stamped.splitlines())
        }
        assert list(stamps) == ["first", "half", "next"]
        assert stamps["first"] < between < stamps["half"] == stamps["next"]
        # sinceTime finds it by that time too: the whole line, not its second piece.
        async with aiohttp.ClientSession(fake_kube.url, headers=AUTH) as http:
            url = f"/api/v1/namespaces/{NS}/pods/{pod}/log"
            since = rfc3339(between, nano=True)
            async with http.get(url, params={"sinceTime": since}) as resp:
                assert await resp.text() == "half\nnext\n"


async def test_log_follow_streams_in_chunks_until_terminated(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        await create(custom, manifest(nodes=1))
        pod = "job1-master-0"
        fake_kube.append_log(NS, pod, "pytorch", "a" * 10 + "\n")
        resp = await core.read_namespaced_pod_log(
            pod, NS, container="pytorch", follow=True, tail_lines=5, _preload_content=False
        )
        received = bytearray()
        try:
            chunks = resp.content.iter_chunked(65536)
            received += await asyncio.wait_for(chunks.__anext__(), 2)
            assert received == b"a" * 10 + b"\n"
            fake_kube.append_log(NS, pod, "pytorch", b"b" * 100_000 + b"\n")
            fake_kube.append_log(NS, pod, "pytorch", "last\n")
            fake_kube.terminate(NS, pod, "pytorch", 0)
            async for chunk in chunks:
                received += chunk
        finally:
            resp.release()
        assert received == b"a" * 10 + b"\n" + b"b" * 100_000 + b"\nlast\n"
        method, path, query = fake_kube.access_log[-1]
        assert (method, path) == ("GET", f"/api/v1/namespaces/{NS}/pods/{pod}/log")
        assert query["follow"] == "True" and query["tailLines"] == "5"
        # A terminated container's follow answers the backlog and ends at once.
        assert await core.read_namespaced_pod_log(pod, NS, follow=True, tail_lines=1) == "last\n"


async def test_drop_streams_cuts_logs_and_watches(fake_kube: FakeKube) -> None:
    async with apis() as (custom, core):
        await create(custom, manifest(nodes=1))
        fake_kube.append_log(NS, "job1-master-0", "pytorch", "hello\n")
        resp = await core.read_namespaced_pod_log(
            "job1-master-0", NS, follow=True, _preload_content=False
        )

        async def watch() -> None:
            async with Watch() as w:
                lister = custom.list_namespaced_custom_object
                async for _ in w.stream(lister, GROUP, VERSION, NS, PLURAL, timeout_seconds=30):
                    pass

        task = asyncio.create_task(watch())
        try:
            assert await asyncio.wait_for(resp.content.readany(), 2) == b"hello\n"
            await streams_open(fake_kube, 2)
            assert fake_kube.drop_streams() == 2
            with pytest.raises(aiohttp.ClientPayloadError):
                await asyncio.wait_for(resp.content.read(), 2)
            with pytest.raises(aiohttp.ClientPayloadError):
                await asyncio.wait_for(task, 2)
        finally:
            resp.release()
        assert not fake_kube.streams


# -- standalone -------------------------------------------------------------------------------


def test_standalone_process_with_control_hooks(tmp_path: Any) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fake_kube",
            "--port",
            "0",
            "--kubeconfig",
            str(kubeconfig),
            "--operator",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.rsplit(" ", 1)[-1].strip()
        assert line.startswith("fake-kube listening on http://127.0.0.1:")
        assert url in kubeconfig.read_text()

        def call(path: str, body: Any = None) -> Any:
            data = None if body is None else json.dumps(body).encode()
            request = urllib.request.Request(
                url + path, data=data, method="POST" if data else "GET"
            )
            request.add_header("Content-Type", "application/json")
            request.add_header(*next(iter(AUTH.items())))
            # the first create reads the CRD (about 2 s, more on a busy machine)
            with urllib.request.urlopen(request, timeout=30) as resp:
                return json.loads(resp.read())

        assert call("/version/")["gitVersion"].startswith("v1.")
        call("/_fake/seed_pvc", {"args": [NS, "data"]})
        items = call(f"/api/v1/namespaces/{NS}/persistentvolumeclaims")["items"]
        assert [i["metadata"]["name"] for i in items] == ["data"]
        job = manifest(nodes=2)
        call(f"/apis/kubeflow.org/v1/namespaces/{NS}/pytorchjobs", job)
        call("/_fake/operator/run", {"args": [NS, "job1"]})
        pods = call(
            f"/api/v1/namespaces/{NS}/pods?labelSelector=training.kubeflow.org/job-role%3Dmaster"
        )
        assert [p["status"]["phase"] for p in pods["items"]] == ["Running"]
    finally:
        proc.terminate()
        proc.wait(5)
