"""The fake answers like a real kube-apiserver where they were seen to differ.

Each test is one row of the comparison made against a real API server (v1.20.2 built
from source, RBAC, the real PyTorchJob CRD): the same raw HTTP call, the server's
answer. Nothing in our other tests may rely on the fake being more lenient.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from .crd import require_crds
from .fake_kube import FakeKube

NS = "team-a"
JOBS = f"/apis/kubeflow.org/v1/namespaces/{NS}/pytorchjobs"
AUTH = {"Authorization": "Bearer dummy-token"}


def job(name: str = "raw", **spec: Any) -> dict[str, Any]:
    """A minimal valid PyTorchJob, written by hand (not by our manifest builder)."""
    container = {"name": "pytorch", "image": "python:3.11", "command": ["python", "t.py"]}
    master = {"replicas": 1, "restartPolicy": "Never",
              "template": {"spec": {"containers": [container]}}}  # fmt: skip
    body = {"pytorchReplicaSpecs": {"Master": master}} | spec
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name},
        "spec": body,
    }


def require_crd_schema(fake: FakeKube) -> None:
    """Pruning and schema errors need the real CRD (../shared/crds)."""
    require_crds()
    assert fake.schemas.get("pytorchjobs") is not None


@pytest.fixture
def http(fake_kube: FakeKube, jp_asyncio_loop: Any) -> Iterator[aiohttp.ClientSession]:
    """Raw HTTP with the kubeconfig's token, as ``curl -H 'Authorization: Bearer …'``."""

    async def session() -> aiohttp.ClientSession:
        return aiohttp.ClientSession(fake_kube.url, headers=AUTH)

    http = jp_asyncio_loop.run_until_complete(session())
    yield http
    jp_asyncio_loop.run_until_complete(http.close())


async def status_of(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    body = await resp.json()
    assert body["kind"] == "Status" and body["code"] == resp.status, body
    return body  # type: ignore[no-any-return]


async def running_pod(fake: FakeKube, http: aiohttp.ClientSession, name: str = "raw") -> str:
    async with http.post(JOBS, json=job(name)) as resp:
        assert resp.status == 201, await resp.text()
    fake.operator.run(NS, name)
    pod = f"{name}-master-0"
    fake.append_log(NS, pod, "pytorch", b"hello\n")
    return pod


async def test_pod_log_refuses_text_plain_with_406(fake_kube: FakeKube, http: Any) -> None:
    pod = await running_pod(fake_kube, http)
    url = f"/api/v1/namespaces/{NS}/pods/{pod}/log"
    async with http.get(url, headers={"Accept": "text/plain"}) as resp:
        body = await status_of(resp)
        assert (resp.status, body["reason"]) == (406, "NotAcceptable")
        assert body["message"] == (
            "only the following media types are accepted: application/json, application/yaml, "
            "application/vnd.kubernetes.protobuf"
        )
    for accept in ("*/*", "application/json", "application/json, */*"):
        async with http.get(url, headers={"Accept": accept}) as resp:
            assert (resp.status, await resp.text()) == (200, "hello\n")


async def test_log_of_a_pod_on_no_node_is_204_empty(fake_kube: FakeKube, http: Any) -> None:
    async with http.post(JOBS, json=job()) as resp:
        assert resp.status == 201
    fake_kube.operator.create_pods(NS, "raw")
    fake_kube.operator.set_unschedulable(NS, "raw-master-0")  # Pending on no node
    for follow in ("false", "true"):
        url = f"/api/v1/namespaces/{NS}/pods/raw-master-0/log?container=pytorch&follow={follow}"
        async with http.get(url) as resp:
            assert (resp.status, await resp.read()) == (204, b""), await resp.text()


async def test_log_of_a_pod_whose_node_is_gone_is_404(fake_kube: FakeKube, http: Any) -> None:
    pod = await running_pod(fake_kube, http)
    node = fake_kube.get("pods", NS, pod)["spec"]["nodeName"]  # type: ignore[index]
    fake_kube.remove_node(node)
    async with http.get(f"/api/v1/namespaces/{NS}/pods/{pod}/log") as resp:
        body = await status_of(resp)
        assert (resp.status, body["reason"], body["message"]) == (
            404,
            "NotFound",
            f'pods "{pod}" not found',
        )


async def test_unknown_fields_are_pruned_silently(fake_kube: FakeKube, http: Any) -> None:
    require_crd_schema(fake_kube)
    body = job(nprocPerNode="2", runPolicy={"backoffLimit": 2, "backofLimit": 5})
    container = body["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
    container["shmSize"] = "8Gi"
    body["spec"]["unknownTopLevel"] = {"a": 1}
    body["metadata"]["labelz"] = {"x": "y"}
    async with http.post(JOBS, json=body) as resp:
        assert resp.status == 201  # no error, no warning
        stored = await resp.json()
    spec = stored["spec"]
    assert "unknownTopLevel" not in spec and "labelz" not in stored["metadata"]
    assert spec["runPolicy"] == {"backoffLimit": 2}
    assert (
        "shmSize" not in spec["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
    )
    assert spec["nprocPerNode"] == "2"
    async with http.get(f"{JOBS}/raw") as resp:
        assert (await resp.json())["spec"] == spec


async def namespace_not_found(resp: aiohttp.ClientResponse, namespace: str) -> None:
    """The NamespaceLifecycle 404: a Status naming the namespace, details kind namespaces."""
    body = await status_of(resp)
    assert (resp.status, body["reason"], body["message"]) == (
        404,
        "NotFound",
        f'namespaces "{namespace}" not found',
    )
    assert body["details"] == {"name": namespace, "kind": "namespaces"}


async def test_a_job_in_a_namespace_that_does_not_exist_is_404(
    fake_kube: FakeKube, http: Any
) -> None:
    url = "/apis/kubeflow.org/v1/namespaces/nowhere/pytorchjobs"
    async with http.post(url, json=job()) as resp:
        await namespace_not_found(resp, "nowhere")
    assert fake_kube.get("pytorchjobs", "nowhere", "raw") is None


async def test_wrong_kind_and_bad_dry_run_are_422(fake_kube: FakeKube, http: Any) -> None:
    wrong = job() | {"kind": "TFJob"}
    async with http.post(JOBS, json=wrong) as resp:
        body = await status_of(resp)
        assert (resp.status, body["reason"]) == (422, "Invalid")
        assert body["message"] == (
            'PyTorchJob.kubeflow.org "raw" is invalid: kind: Invalid value: "TFJob": '
            "must be PyTorchJob"
        )
    async with http.post(JOBS, json=job(), params={"dryRun": "Yes"}) as resp:
        body = await status_of(resp)
        assert (resp.status, body["reason"]) == (422, "Invalid")
        assert (
            'dryRun: Unsupported value: []string{"Yes"}: supported values: "All"'
            in (body["message"])
        )
    assert fake_kube.get("pytorchjobs", NS, "raw") is None


async def test_a_request_without_credentials_is_anonymous_and_forbidden(
    fake_kube: FakeKube,
) -> None:
    async with aiohttp.ClientSession(fake_kube.url) as anonymous:
        async with anonymous.get(JOBS) as resp:
            body = await status_of(resp)
            assert (resp.status, body["reason"]) == (403, "Forbidden")
            assert body["message"] == (
                'pytorchjobs.kubeflow.org is forbidden: User "system:anonymous" cannot list '
                'resource "pytorchjobs" in API group "kubeflow.org" in the namespace "team-a"'
            )
        async with anonymous.get("/apis") as resp:
            assert resp.status == 403
        async with anonymous.get("/version") as resp:  # public info stays public
            assert resp.status == 200
    fake_kube.require_token("the-right-one")
    async with aiohttp.ClientSession(fake_kube.url, headers=AUTH) as wrong, wrong.get(JOBS) as resp:
        assert (resp.status, (await status_of(resp))["reason"]) == (401, "Unauthorized")


async def test_watch_from_a_too_old_resource_version_is_410(fake_kube: FakeKube, http: Any) -> None:
    async with http.post(JOBS, json=job()) as resp:
        assert resp.status == 201
    async with http.get(JOBS, params={"watch": "true", "resourceVersion": "1"}) as resp:
        assert resp.status == 200
        (line,) = (await resp.text()).splitlines()
    event = json.loads(line)
    assert event["type"] == "ERROR"
    assert (event["object"]["code"], event["object"]["reason"]) == (410, "Expired")
    assert event["object"]["message"].startswith("too old resource version: 1 (")


async def test_watch_with_an_unparsable_resource_version_is_500(
    fake_kube: FakeKube, http: Any
) -> None:
    async with http.get(JOBS, params={"watch": "true", "resourceVersion": "abc"}) as resp:
        body = await status_of(resp)
        assert resp.status == 500
        assert body["message"] == (
            'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": '
            "invalid syntax"
        )


async def test_annotations_over_256_kib_are_422(fake_kube: FakeKube, http: Any) -> None:
    body = job()
    body["metadata"]["annotations"] = {"big": "x" * 300_000}
    async with http.post(JOBS, json=body) as resp:
        status = await status_of(resp)
        assert resp.status == 422
        assert "metadata.annotations: Too long: must have at most 262144 bytes" in status["message"]


async def test_schema_errors_are_worded_as_the_api_server_does(
    fake_kube: FakeKube, http: Any
) -> None:
    require_crd_schema(fake_kube)
    async with http.post(JOBS, json=job(nprocPerNode=2)) as resp:
        body = await status_of(resp)
        assert resp.status == 422
        assert body["message"] == (
            'PyTorchJob.kubeflow.org "raw" is invalid: spec.nprocPerNode: Invalid value: '
            '"integer": spec.nprocPerNode in body must be of type string: "integer"'
        )
        assert body["details"]["causes"][0]["field"] == "spec.nprocPerNode"


async def test_without_the_crd_the_paths_are_a_plain_404(fake_kube: FakeKube, http: Any) -> None:
    fake_kube.remove_crd()
    for path in (JOBS, "/apis/kubeflow.org/v1"):
        async with http.get(path) as resp:
            assert resp.status == 404
            assert resp.content_type == "text/plain"
            assert await resp.text() == "404 page not found\n"


async def test_a_namespace_is_read_by_name_and_a_missing_one_is_404(
    fake_kube: FakeKube, http: Any
) -> None:
    """GET /api/v1/namespaces/{name}: the object, or 404 ``namespaces "X" not found``
    (details kind ``namespaces``); RBAC judges it in that namespace (requestinfo.go)."""
    async with http.get(f"/api/v1/namespaces/{NS}") as resp:
        body = await resp.json()
        assert (resp.status, body["kind"], body["metadata"]["name"]) == (200, "Namespace", NS)
        assert body["status"]["phase"] == "Active"
    async with http.get("/api/v1/namespaces/nowhere") as resp:
        await namespace_not_found(resp, "nowhere")
    fake_kube.deny("get", "namespaces", NS)
    async with http.get(f"/api/v1/namespaces/{NS}") as resp:
        body = await status_of(resp)
        assert resp.status == 403
        assert body["message"].endswith(
            f'cannot get resource "namespaces" in API group "" in the namespace "{NS}"'
        )


async def test_log_of_a_pod_whose_kubelet_is_down_is_500(fake_kube: FakeKube, http: Any) -> None:
    """The API server cannot dial the kubelet: 500, no reason, the transport's error
    naming the kubelet's address and port (a real v1.20.2 API server, realcluster.md)."""
    pod = await running_pod(fake_kube, http)
    node = fake_kube.get("pods", NS, pod)["spec"]["nodeName"]  # type: ignore[index]
    fake_kube.stop_kubelet(node)
    async with http.get(f"/api/v1/namespaces/{NS}/pods/{pod}/log?follow=true") as resp:
        body = await status_of(resp)
        assert resp.status == 500 and body["code"] == 500 and "reason" not in body
        assert body["message"].startswith('Get "https://')
        assert f':10250/containerLogs/{NS}/{pod}/pytorch?follow=true": dial tcp ' in body["message"]
        assert body["message"].endswith(":10250: connect: connection refused")
    async with http.get(f"/api/v1/namespaces/{NS}/pods/{pod}") as resp:
        assert resp.status == 200  # the pod and its node stay
    fake_kube.start_kubelet(node)
    async with http.get(f"/api/v1/namespaces/{NS}/pods/{pod}/log") as resp:
        assert resp.status == 200
