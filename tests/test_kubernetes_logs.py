"""The kubernetes log path under load: a 1 GB log with bounded memory, and late pods.

The 1 GB test talks to a minimal log server (aiohttp, in this process) that
generates timestamped lines on the fly, because the fake API server keeps every
log in memory and would itself dominate the measurement; the path measured is
the production one: kubernetes_asyncio's ApiClient, chunked reads, the merger's
bounded queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from kubernetes_asyncio import client

from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend
from jupyter_pytorchjob.backends.kubernetes.logs import LogMerger
from jupyter_pytorchjob.job import JobSpec
from jupyter_pytorchjob.kinds import PYTORCHJOB

from .waiting import until

NS = "team-a"
LINE = b"step 000000 loss 0.123456 accuracy 0.987654 " + b"x" * 40 + b"\n"
STAMP = b"2026-11-22T04:25:01.123456789Z "


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


@pytest.mark.slow
async def test_a_1gb_log_streams_with_bounded_memory() -> None:
    total = 1 << 30
    block = (STAMP + LINE) * 4096  # ~500 KB of whole lines
    lines_per_block = 4096
    blocks = total // len(block) + 1

    async def log(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        for _ in range(blocks):
            await response.write(block)
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/api/v1/namespaces/{ns}/pods/{name}/log", log)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    configuration = client.Configuration(host=f"http://127.0.0.1:{port}")
    api = client.ApiClient(configuration=configuration)
    pod = {
        "metadata": {
            "name": "big-master-0",
            "uid": "1",
            "labels": {
                "training.kubeflow.org/replica-type": "master",
                "training.kubeflow.org/replica-index": "0",
            },
        },
        "status": {},
    }

    async def pods() -> list[dict[str, Any]]:
        return [pod]

    async def finished() -> bool:
        return True

    merger = LogMerger(
        api,
        NS,
        "big",
        kind=PYTORCHJOB,
        list_pods=pods,
        finished=finished,
        replica=None,
        follow=False,
        tail=None,
        previous=False,
        since=None,
    )
    baseline = rss_bytes()
    peak = baseline
    received = 0
    newlines = 0
    start = time.perf_counter()
    try:
        async for i, chunk in _enumerate(merger.chunks()):
            received += len(chunk.text)
            newlines += chunk.text.count("\n")
            if i % 200 == 0:
                peak = max(peak, rss_bytes())
    finally:
        await api.close()
        await runner.cleanup()
    elapsed = time.perf_counter() - start
    assert newlines == blocks * lines_per_block
    assert received == blocks * lines_per_block * len(LINE)
    growth = peak - baseline
    print(
        f"\n1 GiB log: {received / 2**20:.0f} MiB of text in {elapsed:.1f} s, "
        f"RSS growth {growth / 2**20:.1f} MiB"
    )
    assert growth < 96 * 2**20, f"RSS grew by {growth / 2**20:.0f} MiB"


async def _enumerate(stream: Any) -> Any:
    i = 0
    async for item in stream:
        yield i, item
        i += 1


async def test_timestamps_are_the_kubelets_stamps(fake_kube: Any, jp_asyncio_loop: Any) -> None:
    """``timestamps``: each chunk's ``times`` are its lines' stamps as the kubelet gave
    them (``timestamps=true``), in seconds since the epoch, in the merged order of two
    replicas' lines; none without."""
    backend = KubernetesBackend()
    at_ns = 1_795_321_501_123_456_789  # 2026-11-22T04:25:01.123456789Z
    try:
        body = {"name": "stamps", "nodes": 2, "command": ["x"]}
        await backend.submit(JobSpec.from_wire(body))
        fake_kube.operator.run(NS, "stamps")
        fake_kube.append_log(NS, "stamps-master-0", "pytorch", "one\ntwo\n", at_ns=at_ns)
        fake_kube.append_log(NS, "stamps-worker-0", "pytorch", "w\n", at_ns=at_ns + 5 * 10**8)
        fake_kube.append_log(NS, "stamps-master-0", "pytorch", "three\n", at_ns=at_ns + 10**9)
        chunks = [c async for c in backend.logs("stamps", timestamps=True)]
        lines = [(r, t) for c in chunks for r, run in c.runs() for t in run.splitlines()]
        assert lines == [
            ("master-0", "one"),
            ("master-0", "two"),
            ("worker-0", "w"),
            ("master-0", "three"),
        ]
        times = [t for c in chunks for t in c.times or []]
        base = 1_795_321_501.123
        assert times == [base, base, base + 0.5, base + 1]
        untimed = [c async for c in backend.logs("stamps")]
        assert untimed and all(c.times is None for c in untimed)
    finally:
        await backend.close()


async def test_a_pod_created_later_is_picked_up(fake_kube: Any, jp_asyncio_loop: Any) -> None:
    backend = KubernetesBackend()
    try:
        await backend.submit(JobSpec.from_wire({"name": "late", "nodes": 2, "command": ["x"]}))
        fake_kube.operator.run(NS, "late")
        # worker-0 is deleted and re-created, as the operator does after an ExitCode restart:
        # a new pod (new uid) with new logs.
        old = copy.deepcopy(fake_kube.get("pods", NS, "late-worker-0"))
        fake_kube.append_log(NS, "late-worker-0", "pytorch", "first pod\n")
        received: list[tuple[str, str]] = []

        async def follow() -> None:
            async for chunk in backend.logs("late", follow=True):
                for replica, text in chunk.runs():
                    received.extend((replica, line) for line in text.splitlines())

        task = asyncio.create_task(follow())
        # Read before the pod goes: a deleted pod's log is gone with it.
        await until(lambda: ("worker-0", "first pod") in received, "the first pod's line")
        fake_kube.terminate(NS, "late-worker-0", "pytorch", 137)
        fake_kube.delete("pods", NS, "late-worker-0")
        for key in ("uid", "resourceVersion", "creationTimestamp"):
            old["metadata"].pop(key, None)
        old["status"] = {"phase": "Pending"}
        fake_kube.add(old)
        fake_kube.append_log(NS, "late-worker-0", "pytorch", "second pod\n")
        fake_kube.append_log(NS, "late-master-0", "pytorch", "master\n")
        await until(lambda: ("master-0", "master") in received, "the master's line")
        fake_kube.operator.succeed(NS, "late")
        await asyncio.wait_for(task, 15)
        assert ("worker-0", "first pod") in received
        assert ("worker-0", "second pod") in received
        assert ("master-0", "master") in received
    finally:
        await backend.close()


async def test_followed_logs_leave_the_api_pool_to_other_requests(
    fake_kube: Any, jp_asyncio_loop: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Followers hold a connection per replica for as long as a job runs: with a pool
    of 3 (100 in production) three followed replicas took every connection and the job
    list waited for one until it timed out. Log streams have their own pool."""
    from jupyter_pytorchjob.backends.kubernetes import backend as backend_module

    load = backend_module.load_configuration

    async def small_pool() -> Any:
        configuration, namespace = await load()
        configuration.connection_pool_maxsize = 3
        return configuration, namespace

    monkeypatch.setattr(backend_module, "load_configuration", small_pool)
    backend = KubernetesBackend(connect_timeout=3, request_timeout=3)
    received: set[str] = set()

    async def follow() -> None:
        async for chunk in backend.logs("busy", follow=True):
            received.update(chunk.resume_offsets())

    try:
        await backend.submit(JobSpec.from_wire({"name": "busy", "nodes": 3, "command": ["x"]}))
        fake_kube.operator.run(NS, "busy")
        for replica in ("master-0", "worker-0", "worker-1"):
            fake_kube.append_log(NS, f"busy-{replica}", "pytorch", "started\n")
        task = asyncio.create_task(follow())
        await until(lambda: len(received) == 3, "a line of every replica: 3 held connections")
        for _ in range(3):  # each answers, instead of waiting for a free connection
            jobs = await asyncio.wait_for(backend.list_jobs(), 10)
            assert [job.name for job in jobs] == ["busy"]
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    finally:
        await backend.close()
