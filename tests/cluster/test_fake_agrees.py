"""The fake API server (tests/fake_kube) against the real one: same requests, same answers.

The fast tier trusts the fake; this holds it to what a real kube-apiserver and kubelet
answer for the requests our product makes where the answers matter most (pod logs in
each state a container can be in, and the log options' validation). Where the two
disagree, the fake is what changes.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from ..fake_kube import FakeKube
from .realcluster import JOB_IMAGE, RealCluster

pytestmark = pytest.mark.cluster

PODS: dict[str, dict[str, Any]] = {
    "run": {
        "containers": [
            {
                "name": "c",
                "image": JOB_IMAGE,
                "command": [
                    "python",
                    "-c",
                    "import time; print('hi', flush=True); time.sleep(600)",
                ],
            }
        ]
    },
    "pull": {
        "containers": [{"name": "c", "image": "127.0.0.1:9/x/missing:1", "command": ["true"]}]
    },
    "crash": {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": JOB_IMAGE, "command": ["python", "-c", "1/0"]}],
    },
}

QUERIES = [
    "run/log",
    "run/log?container=nope",
    "run/log?previous=true",
    "run/log?sinceSeconds=0",
    "run/log?tailLines=-1",
    "run/log?limitBytes=0",
    "pull/log",
    "crash/log?previous=true",
    "ghost/log",
]


def answer(server: str, token: str, path: str, context: Any = None) -> tuple[int, str]:
    """(status, message or body) of one GET."""
    req = urllib.request.Request(server + path)
    req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, context=context, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()).get("message", "")


def real_answers(cluster: RealCluster, namespace: str) -> dict[str, tuple[int, str]]:
    for name, spec in PODS.items():
        cluster.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/pods",
            {"metadata": {"name": name}, "spec": spec},
        )

    def settled() -> bool:
        pods = {
            p["metadata"]["name"]: p
            for p in cluster.request("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
        }
        states = {
            n: (p["status"].get("containerStatuses") or [{}])[0].get("state", {})
            for n, p in pods.items()
        }
        return (
            "running" in states.get("run", {})
            and states.get("pull", {}).get("waiting", {}).get("reason") == "ImagePullBackOff"
            and "terminated" in states.get("crash", {})
        )

    deadline = time.monotonic() + 120
    while not settled():
        assert time.monotonic() < deadline, "the real pods did not reach their states"
        time.sleep(1)
    base = f"{cluster.server}/api/v1/namespaces/{namespace}/pods/"
    return {q: answer(base, cluster.tokens["admin"], q, cluster._tls()) for q in QUERIES}


async def fake_answers(namespace: str) -> dict[str, tuple[int, str]]:
    fake = await FakeKube.start(operator=False)
    try:
        fake.add_namespace(namespace)
        base = f"{fake.url}/api/v1/namespaces/{namespace}/pods"
        for name, spec in PODS.items():
            body = {"metadata": {"name": name}, "spec": {**spec, "nodeName": "node-a"}}
            req = urllib.request.Request(base, data=json.dumps(body).encode(), method="POST")
            req.add_header("Authorization", "Bearer dummy-token")
            req.add_header("Content-Type", "application/json")
            await asyncio.to_thread(urllib.request.urlopen, req)
        # The same states, by the fake's kubelet hooks.
        fake.append_log(namespace, "run", "c", "hi\n")
        fake.set_waiting(
            namespace,
            "pull",
            "c",
            "ImagePullBackOff",
            'Back-off pulling image "127.0.0.1:9/x/missing:1"',
        )
        fake.append_log(
            namespace, "crash", "c", "Traceback (most recent call last):\nZeroDivisionError\n"
        )
        fake.terminate(namespace, "crash", "c", 1)
        return {q: await asyncio.to_thread(answer, base + "/", "dummy-token", q) for q in QUERIES}
    finally:
        await fake.stop()


def test_pod_log_answers_of_the_fake_are_the_real_servers(
    cluster: RealCluster, namespace: str
) -> None:
    real = real_answers(cluster, namespace)
    fake = asyncio.run(fake_answers(namespace))
    # Bodies of successful reads differ by what each container printed; statuses and
    # every error message must be the same.
    for query in QUERIES:
        real_status, real_text = real[query]
        fake_status, fake_text = fake[query]
        assert fake_status == real_status, (query, real, fake)
        if real_status != 200:
            assert fake_text == real_text, (query, real_text, fake_text)
