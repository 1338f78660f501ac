"""The kubernetes backend against a fake that answers like a real API server: logs
through 204/404, errors as the server means them, timeouts, fields the server drops."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from jupyter_pytorchjob.backends import BackendError, JobNotFound, JobState, LogChunk
from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend
from jupyter_pytorchjob.job import JobSpec
from jupyter_pytorchjob.kinds.pytorchjob.status import OPERATOR_GRACE

from .fake_kube import FakeKube
from .fake_kube.logs import rfc3339
from .test_fake_apiserver_rules import require_crd_schema

NS = "team-a"


@pytest.fixture
def backend(fake_kube: FakeKube, jp_asyncio_loop: Any) -> Iterator[KubernetesBackend]:
    backend = KubernetesBackend()
    yield backend
    jp_asyncio_loop.run_until_complete(backend.close())


def spec(name: str = "demo", **body: Any) -> JobSpec:
    return JobSpec.from_wire({"name": name, "command": ["python", "train.py"], **body})


async def until(check: Any, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def log_requests(fake: FakeKube, pod: str) -> list[dict[str, str]]:
    return [q for _, path, q in fake.access_log if path.endswith(f"/pods/{pod}/log")]


async def drain(stream: AsyncIterator[LogChunk], into: list[LogChunk]) -> None:
    async for chunk in stream:
        into.append(chunk)


async def test_logs_are_read_with_an_accept_header_the_server_takes(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """The fake refuses ``Accept: text/plain`` with 406 like a real server."""
    await backend.submit(spec(nodes=2))
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", b"master line\n")
    fake_kube.append_log(NS, "demo-worker-0", "pytorch", b"worker line\n")
    chunks: list[LogChunk] = []
    await drain(backend.logs("demo"), chunks)
    text = {replica: text for c in chunks for replica, text in c.runs()}
    assert text == {"master-0": "master line\n", "worker-0": "worker line\n"}


async def test_follow_waits_through_204_until_the_pod_is_scheduled(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    await backend.submit(spec(nodes=1))
    fake_kube.operator.create_pods(NS, "demo")
    fake_kube.operator.set_unschedulable(NS, "demo-master-0")
    chunks: list[LogChunk] = []
    follow = asyncio.create_task(drain(backend.logs("demo", follow=True), chunks))
    try:
        # The server answered 204 (no node) at least twice: the stream kept asking.
        await until(lambda: len(log_requests(fake_kube, "demo-master-0")) >= 2, "two log reads")
        fake_kube.operator.run(NS, "demo")
        fake_kube.append_log(NS, "demo-master-0", "pytorch", b"step 1\nstep 2\n")
        await until(lambda: chunks, "the first line after scheduling")
        fake_kube.operator.succeed(NS, "demo")
        await asyncio.wait_for(follow, 20)
    finally:
        follow.cancel()
    assert "".join(c.text for c in chunks) == "step 1\nstep 2\n"


async def test_a_pod_whose_node_is_gone_says_so(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    await backend.submit(spec(nodes=2))
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", b"master line\n")
    node = fake_kube.get("pods", NS, "demo-worker-0")["spec"]["nodeName"]  # type: ignore[index]
    fake_kube.remove_node(node)
    fake_kube.nodes.add("node-2")
    master = fake_kube.get("pods", NS, "demo-master-0")
    assert master is not None
    master["spec"]["nodeName"] = "node-2"  # the master lives elsewhere
    chunks: list[LogChunk] = []
    await drain(backend.logs("demo"), chunks)
    notices = [c for c in chunks if c.notice]
    assert [c.replica for c in notices] == ["worker-0"]
    assert f"node {node}" in notices[0].text and "cannot be read" in notices[0].text
    assert notices[0].display(prefix=True).startswith("ptjob: worker-0: the log of pod")
    assert [c.text for c in chunks if not c.notice] == ["master line\n"]


async def test_a_dead_kubelet_stops_only_its_replicas_log(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """The worker's kubelet does not answer (the API server's 500 ``dial tcp
    ...:10250``): the master's log goes on streaming, the worker gets one notice naming
    its node, and nothing blames the API server (#29 item 2)."""
    await backend.submit(spec(nodes=2))
    fake_kube.operator.run(NS, "demo")
    fake_kube.nodes.add("node-2")
    master = fake_kube.get("pods", NS, "demo-master-0")
    assert master is not None
    master["spec"]["nodeName"] = "node-2"  # the master lives elsewhere
    node = fake_kube.get("pods", NS, "demo-worker-0")["spec"]["nodeName"]  # type: ignore[index]
    fake_kube.append_log(NS, "demo-master-0", "pytorch", b"step 1\n")
    fake_kube.stop_kubelet(node)
    chunks: list[LogChunk] = []
    follow = asyncio.create_task(drain(backend.logs("demo", follow=True), chunks))
    try:
        await until(lambda: any(c.notice for c in chunks), "the worker's notice")
        fake_kube.append_log(NS, "demo-master-0", "pytorch", b"step 2\n")
        await until(lambda: "step 2" in "".join(c.text for c in chunks), "the master goes on")
        fake_kube.operator.succeed(NS, "demo")
        await asyncio.wait_for(follow, 20)
    finally:
        follow.cancel()
    (notice,) = [c for c in chunks if c.notice]
    assert notice.replica == "worker-0" and f"the kubelet on node {node}" in notice.text
    assert "connection refused" in notice.text and "try again" not in notice.text
    assert "overloaded" not in notice.text and "unavailable" not in notice.text
    master_text = "".join(t for c in chunks if not c.notice for r, t in c.runs() if r == "master-0")
    assert master_text == "step 1\nstep 2\n"


async def test_a_container_that_cannot_start_says_why_in_the_kubelets_words(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """ErrImagePull: logs end in an error with the kubelet's words (the CLI exits 1);
    following says once what it waits for, then streams once the container runs (#29 5)."""
    await backend.submit(spec(nodes=1))
    fake_kube.operator.create_pods(NS, "demo")
    fake_kube.set_waiting(NS, "demo-master-0", "pytorch", "ErrImagePull")
    with pytest.raises(BackendError) as info:
        await drain(backend.logs("demo"), [])
    assert info.value.message == (
        'the log of master-0 cannot be read: container "pytorch" in pod "demo-master-0" is '
        "waiting to start: image can't be pulled"
    )
    chunks: list[LogChunk] = []
    follow = asyncio.create_task(drain(backend.logs("demo", follow=True), chunks))
    try:
        await until(lambda: chunks, "what the follow waits for")
        fake_kube.set_waiting(NS, "demo-master-0", "pytorch", "ImagePullBackOff")
        await until(lambda: len(chunks) == 2, "the new reason")
        fake_kube.operator.run(NS, "demo")
        fake_kube.append_log(NS, "demo-master-0", "pytorch", b"pulled at last\n")
        fake_kube.operator.succeed(NS, "demo")
        await asyncio.wait_for(follow, 20)
    finally:
        follow.cancel()
    assert [c.notice for c in chunks] == [True, True, False]
    assert "image can't be pulled; still waiting for it to start" in chunks[0].text
    assert "trying and failing to pull image" in chunks[1].text
    assert chunks[2].text == "pulled at last\n"


async def test_previous_without_an_earlier_run_is_an_error(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """``--previous`` with no earlier run: the kubelet's words, not silence (#29 item 9)."""
    await backend.submit(spec(nodes=1))
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", b"first run\n")
    with pytest.raises(BackendError) as info:
        await drain(backend.logs("demo", previous=True), [])
    assert info.value.status == 409
    assert info.value.message == (
        'the log of master-0 cannot be read: previous terminated container "pytorch" in '
        'pod "demo-master-0" not found'
    )


async def test_a_follow_error_shows_at_once_not_when_the_job_ends(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    await backend.submit(spec(nodes=1))
    fake_kube.operator.run(NS, "demo")
    fake_kube.deny("get", "pods/log")
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        await asyncio.wait_for(drain(backend.logs("demo", follow=True), []), 15)
    assert time.monotonic() - started < 5  # the job is still Running
    assert info.value.status == 403 and "pods/log" in info.value.message
    # Our guidance around the cluster's words, with its code for JupyterLab to translate.
    assert info.value.problem is not None and info.value.problem.code == "k8s_forbidden"
    assert (await backend.get_job("demo")).state is JobState.RUNNING


async def test_a_namespace_that_does_not_exist_is_named(fake_kube: FakeKube) -> None:
    backend = KubernetesBackend(namespace="nowhere")
    try:
        with pytest.raises(BackendError) as info:
            await backend.submit(spec())
        assert info.value.status == 404
        assert "namespace 'nowhere' does not exist" in info.value.message
        assert "not found" in info.value.message and "job" not in info.value.message.split()[0]
    finally:
        await backend.close()


async def test_a_missing_namespace_is_named_not_a_missing_job(fake_kube: FakeKube) -> None:
    """The API answers a job in a namespace that does not exist 404 and its list empty:
    get, logs, delete and list name the namespace (#29 item 7); a user who may not read
    namespaces gets the plain answers."""
    backend = KubernetesBackend(namespace="nowhere")
    try:
        calls = {
            "get": lambda: backend.get_job("demo"),
            "delete": lambda: backend.delete_job("demo"),
            "logs": lambda: drain(backend.logs("demo"), []),
            "list": backend.list_jobs,
        }
        for what, call in calls.items():
            with pytest.raises(BackendError) as info:
                await call()
            assert info.value.status == 404, what
            assert "namespace 'nowhere' does not exist" in info.value.message, what
        fake_kube.deny("get", "namespaces")
        with pytest.raises(JobNotFound):
            await backend.get_job("demo")
        assert await backend.list_jobs() == []
    finally:
        await backend.close()


async def test_an_empty_namespace_is_read_once_not_per_list(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    for _ in range(3):
        assert await backend.list_jobs() == []
    reads = [p for _, p, _ in fake_kube.access_log if p == f"/api/v1/namespaces/{NS}"]
    assert len(reads) == 1


async def test_a_job_no_operator_touched_is_submitted_then_explained(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    fake_kube.operator.disable()
    await backend.submit(spec())
    job = await backend.get_job("demo")
    assert job.state is JobState.SUBMITTED and job.message is None
    stored = fake_kube.get("pytorchjobs", NS, "demo")
    assert stored is not None
    stored["metadata"]["creationTimestamp"] = rfc3339(
        time.time_ns() - int(OPERATOR_GRACE + 5) * 10**9
    )
    job = await backend.get_job("demo")
    assert job.state is JobState.SUBMITTED
    assert job.message is not None and "no operator has picked this job up" in str(job.message)
    assert job.to_wire()["messageCode"] == "no_operator"
    assert job.to_wire()["state"] == "Submitted"
    fake_kube.operator.create_pods(NS, "demo")
    job = await backend.get_job("demo")
    assert job.state is JobState.CREATED and job.message is None


async def test_jobs_not_started_cost_one_events_request_per_list(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    """A list of jobs nothing was made for yet reads the kind's Warning events once, not
    once per job (1000 such jobs made 1001 requests per refresh, #29 item 6); each job
    still gets its own newest Warning as its message."""
    fake_kube.operator.disable()
    for i in range(20):
        await backend.submit(spec(f"job-{i:02d}"))
    fake_kube.add_event(NS, "PyTorchJob", "job-03", "FailedCreate", "old trouble", "Warning")
    fake_kube.add_event(NS, "PyTorchJob", "job-03", "FailedCreate", "quota exceeded", "Warning")
    fake_kube.add_event(NS, "PyTorchJob", "job-07", "Created", "fine", "Normal")
    del fake_kube.access_log[:]
    jobs = {j.name: j for j in await backend.list_jobs()}
    assert len(jobs) == 20 and {j.state for j in jobs.values()} == {JobState.SUBMITTED}
    events = [q for _, p, q in fake_kube.access_log if p.endswith("/events")]
    assert len(events) == 1  # of PyTorchJobs; no TrainJob waits
    assert jobs["job-03"].message == "FailedCreate: quota exceeded"
    assert jobs["job-07"].message is None
    assert (await backend.get_job("job-03")).message == "FailedCreate: quota exceeded"


@contextlib.asynccontextmanager
async def silent_server(tls: bool) -> AsyncIterator[int]:
    """Accepts connections and never answers (nor finishes a TLS handshake)."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        with contextlib.suppress(Exception):
            await reader.read()  # read everything, answer nothing

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("tls", [True, False], ids=["tls-handshake", "no-answer"])
async def test_a_hung_api_server_fails_fast_saying_it_did_not_answer(
    tls: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with silent_server(tls) as port:
        scheme = "https" if tls else "http"
        cluster: dict[str, Any] = {"server": f"{scheme}://127.0.0.1:{port}"}
        if tls:
            cluster["insecure-skip-tls-verify"] = True
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "hung", "cluster": cluster}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "hung", "context": {"cluster": "hung", "user": "u"}}],
            "current-context": "hung",
        }
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump(config))
        monkeypatch.setenv("KUBECONFIG", str(path))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        backend = KubernetesBackend(connect_timeout=0.5, request_timeout=0.5)
        started = time.monotonic()
        try:
            with pytest.raises(BackendError) as info:
                await backend.list_jobs()
        finally:
            await backend.close()
    assert time.monotonic() - started < 5
    assert info.value.status == 504
    assert f"127.0.0.1:{port} did not answer within 0.5 s" in info.value.message


async def test_fields_the_server_drops_are_named_after_submit(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    require_crd_schema(fake_kube)
    container = {"name": "pytorch", "shmSize": "8Gi"}
    master = {"template": {"spec": {"containers": [container]}}}
    extras = {"spec": {"runPolicy": {"backofLimit": 5}, "pytorchReplicaSpecs": {"Master": master}}}
    job = await backend.submit(spec(extras=extras))
    warning = str(*job.warnings)
    assert job.warnings[0].code == "warn_dropped_fields" and "dropped 2 field(s)" in warning
    assert "spec.runPolicy.backofLimit" in warning
    assert "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].shmSize" in warning
    stored = fake_kube.get("pytorchjobs", NS, "demo")
    assert stored is not None and "backofLimit" not in stored["spec"]["runPolicy"]
    # Before submitting (the form's YAML preview): the same through a dry run, even
    # though the name is now taken, and nothing is created.
    from jupyter_pytorchjob.kinds.pytorchjob.manifest import build_manifest

    manifest = build_manifest(spec(extras=extras))
    dropped = await backend.dropped_fields(manifest)
    assert sorted(dropped) == sorted(
        ["spec.runPolicy.backofLimit",
         "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].shmSize"]
    )  # fmt: skip
    assert len(fake_kube.list("pytorchjobs", NS)) == 1
    clean = await backend.submit(spec("clean"))
    assert clean.warnings == []


async def test_invalid_jobs_are_refused_in_the_servers_words(
    backend: KubernetesBackend, fake_kube: FakeKube
) -> None:
    require_crd_schema(fake_kube)
    extras = {"spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": "two"}}}}
    with pytest.raises(BackendError) as info:
        await backend.submit(spec(extras=extras))
    assert info.value.status == 400
    assert info.value.message == (
        'the API server rejected the job: PyTorchJob.kubeflow.org "demo" is invalid: '
        'spec.runPolicy.schedulingPolicy.minAvailable: Invalid value: "string": '
        "spec.runPolicy.schedulingPolicy.minAvailable in body must be of type integer: "
        '"string"'
    )
    assert fake_kube.get("pytorchjobs", NS, "demo") is None
