"""The kubernetes backend against the HTTP-level fake API (real kubernetes_asyncio client)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_pytorchjob.backends import BackendError, JobExists, JobNotFound, JobState
from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend
from jupyter_pytorchjob.backends.kubernetes.connection import CrdMissing
from jupyter_pytorchjob.job import JobSpec
from jupyter_pytorchjob.kinds import PYTORCHJOB

from .waiting import until

NS = "team-a"


@pytest.fixture
def backend(fake_kube: Any, jp_asyncio_loop: Any) -> Any:
    backend = KubernetesBackend()
    yield backend
    jp_asyncio_loop.run_until_complete(backend.close())


def spec(name: str = "demo", **body: Any) -> JobSpec:
    return JobSpec.from_wire({"name": name, "command": ["python", "train.py"], **body})


async def collect(stream: Any, until: int | None = None) -> dict[str, str]:
    text: dict[str, str] = {}
    async for chunk in stream:
        for replica, lines in chunk.runs():
            text[replica] = text.get(replica, "") + lines
    return text


async def test_warming_up_makes_every_client_a_request_or_log_stream_uses(
    backend: KubernetesBackend, fake_kube: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server warms the backend up at start: neither the first request nor the first
    log stream then builds a client (a client's TLS context costs ~20 ms on the loop)."""
    await backend.warm_up()
    await backend.submit(spec("warm"))
    fake_kube.operator.run(NS, "warm")
    fake_kube.append_log(NS, "warm-master-0", "pytorch", "hello\n")

    def no_new_client(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a client built after warming up")

    monkeypatch.setattr(
        "jupyter_pytorchjob.backends.kubernetes.backend.TimedApiClient", no_new_client
    )
    await backend.get_job("warm")
    assert (await collect(backend.logs("warm"))) == {"master-0": "hello\n"}


async def test_a_log_streams_api_requests_each_wait_for_a_share_of_the_loop(
    backend: KubernetesBackend, fake_kube: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading the job, listing its pods and opening a pod's log each wait for a share of
    a turn of the loop (``LOG_STREAMS``) first: 20 log views opening at once made all
    their requests in one turn (the worst stall of a streaming server, #28)."""
    from jupyter_pytorchjob.backends.kubernetes import logs as kube_logs
    from jupyter_pytorchjob.backends.loopshare import LOG_STREAMS

    await backend.submit(spec("shares"))
    fake_kube.operator.run(NS, "shares")
    fake_kube.append_log(NS, "shares-master-0", "pytorch", "hello\n")
    steps: list[tuple[str, Any]] = []  # (what, the task doing it)
    turn, read_job, list_pods, open_log = (
        LOG_STREAMS.turn,
        backend._job,
        backend._pods,
        kube_logs.open_log,
    )

    def recorded(what: str, call: Any) -> Any:
        async def step(*args: Any, **kwargs: Any) -> Any:
            steps.append((what, asyncio.current_task()))
            return await call(*args, **kwargs)

        return step

    monkeypatch.setattr(LOG_STREAMS, "turn", recorded("turn", turn))
    monkeypatch.setattr(backend, "_job", recorded("job", read_job))
    monkeypatch.setattr(backend, "_pods", recorded("pods", list_pods))
    monkeypatch.setattr(kube_logs, "open_log", recorded("log", open_log))
    assert (await collect(backend.logs("shares"))) == {"master-0": "hello\n"}
    requests = [i for i, (what, _) in enumerate(steps) if what != "turn"]
    assert {steps[i][0] for i in requests} == {"job", "pods", "log"}, steps
    for i in requests:  # the step of the same task just before: its share of a turn
        before = [what for what, task in steps[:i] if task is steps[i][1]]
        assert before and before[-1] == "turn", (steps[i][0], before)


async def test_submit_lifecycle_and_replicas(backend: KubernetesBackend, fake_kube: Any) -> None:
    created = await backend.submit(spec(nodes=3, gpus=1))
    assert created.name == "demo" and created.namespace == NS
    stored = fake_kube.get("pytorchjobs", NS, "demo")
    assert stored["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] == 1
    job = await backend.get_job("demo")
    assert job.state is JobState.CREATED
    assert [r.name for r in job.replicas] == ["master-0", "worker-0", "worker-1"]
    assert job.nodes == 3 and job.gpus == 1
    assert job.manifest is not None and job.manifest["kind"] == "PyTorchJob"
    fake_kube.operator.run(NS, "demo")
    job = await backend.get_job("demo")
    assert job.state is JobState.RUNNING
    assert [r.phase for r in job.replicas] == ["Running"] * 3
    fake_kube.operator.succeed(NS, "demo")
    job = await backend.get_job("demo")
    assert job.state is JobState.SUCCEEDED
    assert [r.exit_code for r in job.replicas] == [0, 0, 0]
    assert [j.name for j in await backend.list_jobs()] == ["demo"]
    await backend.delete_job("demo")
    with pytest.raises(JobNotFound):
        await backend.get_job("demo")


async def test_the_pods_account_and_pull_secrets_are_kept_and_reach_the_pods(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    """The CRD declares serviceAccountName: the API server keeps it, the pods run as it."""
    await backend.submit(spec(nodes=2, serviceAccount="s3-reader", imagePullSecrets=["regcred"]))
    assert fake_kube.pruned == []
    stored = fake_kube.get("pytorchjobs", NS, "demo")
    for replica in stored["spec"]["pytorchReplicaSpecs"].values():
        assert replica["template"]["spec"]["serviceAccountName"] == "s3-reader"
    pod = fake_kube.get("pods", NS, "demo-worker-0")
    assert pod["spec"]["serviceAccountName"] == "s3-reader"
    assert pod["spec"]["imagePullSecrets"] == [{"name": "regcred"}]
    assert (await backend.get_job("demo")).manifest is not None
    assert PYTORCHJOB.parse(stored).service_account == "s3-reader"


async def test_pending_reasons(backend: KubernetesBackend, fake_kube: Any) -> None:
    await backend.submit(spec(nodes=2, gpus=4))
    fake_kube.operator.set_unschedulable(NS, "demo-master-0")
    job = await backend.get_job("demo")
    master, worker = job.replicas
    assert master.reason == "Unschedulable"
    assert "Insufficient nvidia.com/gpu" in (master.message or "")
    assert worker.reason in ("WaitingForMaster", "ContainerCreating")
    events = await backend.events("demo")
    assert any(e.reason == "FailedScheduling" and e.object == "master-0" for e in events)


async def test_failed_job_and_restarts(backend: KubernetesBackend, fake_kube: Any) -> None:
    """OnFailure (our default): a crashing worker restarts in place, the first time at
    once, then after a back-off; the job stays Running; at the backoff limit it fails
    and cleanPodPolicy None (ours, the operator's) keeps every pod: the restarted worker
    and its previous log stay."""
    await backend.submit(spec(nodes=2, backoffLimit=2))
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-worker-0", "pytorch", "crash 1\n")
    fake_kube.operator.exit(NS, "demo", "worker-0", exit_code=3)
    job = await backend.get_job("demo")
    assert job.state is JobState.RUNNING
    assert (job.replicas[1].restarts, job.replicas[1].reason, job.replicas[1].exit_code) == (
        1,
        None,
        3,
    )
    previous = await collect(backend.logs("demo", replica="worker-0", previous=True))
    assert previous == {"worker-0": "crash 1\n"}
    fake_kube.append_log(NS, "demo-worker-0", "pytorch", "crash 2\n")
    fake_kube.operator.exit(NS, "demo", "worker-0", exit_code=3)
    job = await backend.get_job("demo")
    assert job.state is JobState.RUNNING
    worker = job.replicas[1]
    assert (worker.restarts, worker.reason, worker.exit_code) == (1, "CrashLoopBackOff", 3)
    fake_kube.operator.back_off_over(NS, "demo", "worker-0")  # the second restart
    job = await backend.get_job("demo")
    assert job.state is JobState.FAILED
    assert "backoff limit" in job.conditions[-1].message
    assert [(r.phase, r.reason, r.restarts) for r in job.replicas] == [
        ("Running", None, 0),
        ("Running", None, 2),
    ]


async def test_never_fails_at_the_first_failure(backend: KubernetesBackend, fake_kube: Any) -> None:
    await backend.submit(spec(nodes=2, restartPolicy="Never"))
    fake_kube.operator.run(NS, "demo")
    fake_kube.operator.exit(NS, "demo", "worker-0", exit_code=3)
    job = await backend.get_job("demo")
    assert job.state is JobState.FAILED
    assert job.replicas[1].exit_code == 3 and job.replicas[1].phase == "Failed"


async def test_logs_follow_pending_to_running_merged(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    await backend.submit(spec(nodes=3))
    received: dict[str, str] = {}

    async def follow() -> None:
        async for chunk in backend.logs("demo", follow=True):
            for replica, text in chunk.runs():
                received[replica] = received.get(replica, "") + text

    pods = ("demo-master-0", "demo-worker-0", "demo-worker-1")

    def asked_twice(pod: str) -> bool:
        path = f"/api/v1/namespaces/{NS}/pods/{pod}/log"
        return sum(1 for _, p, _ in fake_kube.access_log if p == path) >= 2

    task = asyncio.create_task(follow())
    # Every container is still creating: each log was asked for, refused ("waiting to
    # start"), and asked for again - the stream keeps trying and yields nothing.
    await until(lambda: all(asked_twice(p) for p in pods), "a retry of every pod's log")
    assert received == {} and not task.done()
    fake_kube.operator.run(NS, "demo")
    for pod, replica in zip(pods, ("master-0", "worker-0", "worker-1"), strict=True):
        fake_kube.append_log(NS, pod, "pytorch", f"hello from {replica}\n")
    await until(lambda: len(received) == 3, "a line from every replica")
    fake_kube.operator.succeed(NS, "demo")
    await asyncio.wait_for(task, 15)
    assert received == {r: f"hello from {r}\n" for r in ("master-0", "worker-0", "worker-1")}


async def test_logs_resume_without_duplicates_and_survive_drops(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    await backend.submit(spec())
    fake_kube.operator.run(NS, "demo")
    for i in range(5):
        fake_kube.append_log(NS, "demo-master-0", "pytorch", f"line {i}\n")
    first = [c async for c in backend.logs("demo")]
    assert "".join(c.text for c in first).splitlines() == [f"line {i}" for i in range(5)]
    offset = first[-1].offset

    lines: list[str] = []

    async def follow() -> None:
        async for chunk in backend.logs("demo", follow=True, since={"master-0": offset}):
            lines.extend(chunk.text.splitlines())

    followers = fake_kube.runtime(NS, "demo-master-0", "pytorch").followers
    log_path = f"/api/v1/namespaces/{NS}/pods/demo-master-0/log"

    def log_requests() -> int:
        return sum(1 for _, path, _ in fake_kube.access_log if path == log_path)

    task = asyncio.create_task(follow())
    await until(lambda: len(followers) == 1, "the follow stream")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "line 5\n")
    await until(lambda: lines == ["line 5"], "line 5")
    requests = log_requests()
    assert fake_kube.drop_streams() >= 1  # the connection breaks while the container runs
    await until(lambda: log_requests() > requests and len(followers) == 1, "a new stream")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "line 6\n")
    await until(lambda: len(lines) >= 2, "line 6")
    fake_kube.operator.succeed(NS, "demo")
    await asyncio.wait_for(task, 15)
    assert lines == ["line 5", "line 6"]


async def test_logs_two_replicas_come_back_in_time_order_also_after_a_resume(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    """Master and worker write alternately, stamped 1 ms apart (every 100th line ties
    with the one before: the master's comes first); the merged backlog is in time
    order, then live lines; resuming from the offsets of any prefix gives the rest."""
    await backend.submit(spec(nodes=2))
    fake_kube.operator.run(NS, "demo")
    t0 = 1_790_000_000 * 10**9
    order = []
    for i in range(3000):
        replica = "master-0" if i % 2 == 0 else "worker-0"
        at = t0 + (i - 1 if i % 100 == 1 else i) * 10**6
        text = f"line {i:05d} of {replica} " + "x" * 40
        fake_kube.append_log(NS, f"demo-{replica}", "pytorch", text + "\n", at_ns=at)
        order.append(text)
    chunks = [c async for c in backend.logs("demo")]
    assert [line for c in chunks for line in c.text.splitlines()] == order

    half = len(chunks) // 2
    assert half > 0
    since: dict[str, int] = {}
    for chunk in chunks[:half]:
        since.update(chunk.resume_offsets())
    seen = [line for c in chunks[:half] for line in c.text.splitlines()]
    lines: list[str] = []

    async def follow() -> None:
        async for chunk in backend.logs("demo", follow=True, since=since):
            lines.extend(chunk.text.splitlines())

    task = asyncio.create_task(follow())
    await until(lambda: len(seen) + len(lines) == len(order), "the rest of the backlog")
    assert seen + lines == order
    fake_kube.append_log(NS, "demo-worker-0", "pytorch", "live\n")
    await until(lambda: lines[-1:] == ["live"], "a live line")
    fake_kube.operator.succeed(NS, "demo")
    await asyncio.wait_for(task, 15)
    assert seen + lines == [*order, "live"]


async def test_logs_a_bar_redrawn_in_one_line_comes_as_redraw_lines_as_it_is_drawn(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    """The runtime splits only at newlines: the kubelet gives a bar as one long line with
    a \\r before each redraw; each redraw comes as a line of its own (the log line
    contract) once the next \\r ends it, without waiting for the line to end."""
    await backend.submit(spec())
    fake_kube.operator.run(NS, "demo")
    text = ""

    async def follow() -> None:
        nonlocal text
        async for chunk in backend.logs("demo", follow=True):
            text += chunk.text

    fake_kube.append_log(NS, "demo-master-0", "pytorch", "epoch 1\n")
    followers = fake_kube.runtime(NS, "demo-master-0", "pytorch").followers
    task = asyncio.create_task(follow())
    await until(lambda: text == "epoch 1\n" and len(followers) == 1, "the follow stream")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "\r  0%|\r 50%|")
    await until(lambda: text == "epoch 1\n  0%|\n", "the first state of the bar")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "\r100%|" + "#" * 40000 + "\r\n")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "done\n")
    fake_kube.operator.succeed(NS, "demo")
    await asyncio.wait_for(task, 15)
    bar = "100%|" + "#" * 40000
    assert text == (
        f"epoch 1\n  0%|\n\r 50%|\n\r{bar[:16384]}\n{bar[16384:32768]}\n{bar[32768:]}\ndone\n"
    )


async def test_closing_the_stream_leaves_no_task(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    await backend.submit(spec(nodes=2))
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-master-0", "pytorch", "x\n")
    before = set(asyncio.all_tasks())
    stream = backend.logs("demo", follow=True)
    chunk = await stream.__anext__()
    assert chunk.text == "x\n"
    for _ in range(100):  # one follow stream per pod (the worker's may open a moment later)
        if len(fake_kube.streams) == 2:
            break
        await asyncio.sleep(0.02)
    assert len(fake_kube.streams) == 2
    await stream.aclose()
    for _ in range(50):
        if not fake_kube.streams:
            break
        await asyncio.sleep(0.05)
    # Our tasks are gone, and the API server saw both follow streams close.
    leaked = [
        t for t in asyncio.all_tasks() - before if not t.done() and "aiohttp/web_" not in repr(t)
    ]
    assert leaked == []
    assert not fake_kube.streams


async def test_tail_and_one_replica(backend: KubernetesBackend, fake_kube: Any) -> None:
    await backend.submit(spec(nodes=2))
    fake_kube.operator.run(NS, "demo")
    fake_kube.append_log(NS, "demo-worker-0", "pytorch", "".join(f"w{i}\n" for i in range(10)))
    text = await collect(backend.logs("demo", replica="worker-0", tail=3))
    assert text == {"worker-0": "w7\nw8\nw9\n"}


async def test_errors_become_messages(backend: KubernetesBackend, fake_kube: Any) -> None:
    await backend.submit(spec())
    with pytest.raises(JobExists):
        await backend.submit(spec())
    with pytest.raises(JobNotFound):
        await backend.get_job("nope")
    with pytest.raises(JobNotFound):
        await backend.delete_job("nope")

    fake_kube.deny("create", "pytorchjobs", NS, group="kubeflow.org")
    with pytest.raises(BackendError) as info:
        await backend.submit(spec("other"))
    assert info.value.status == 403
    assert "may not" in info.value.message or "not allowed" in info.value.message
    assert "team-a" in info.value.message and "pytorchjobs" in info.value.message
    fake_kube.allow_all()

    fake_kube.inject_error(r"/pytorchjobs", 500, times=1)
    with pytest.raises(BackendError) as info:
        await backend.list_jobs()
    assert info.value.status == 503 and "try again" in info.value.message
    fake_kube.inject_error(r"/pytorchjobs", 429, times=1, retry_after=1)
    with pytest.raises(BackendError) as info:
        await backend.list_jobs()
    assert info.value.status == 503

    fake_kube.require_token("another-token")
    with pytest.raises(BackendError) as info:
        await backend.list_jobs()
    assert info.value.status == 401 and "credentials" in info.value.message
    fake_kube.require_token(None)


async def test_crd_missing_is_said_plainly(fake_kube: Any) -> None:
    fake_kube.remove_crd("pytorchjob")
    fake_kube.remove_crd("trainjob")
    backend = KubernetesBackend()
    try:
        with pytest.raises(CrdMissing) as info:
            await backend.list_jobs()
        assert "Training Operator" in info.value.message and "TrainJob" in info.value.message
        # One message, not each kind's run together ("...local backend this cluster...").
        assert info.value.message.count("this cluster") == 1
        assert info.value.message.count("local backend") == 1
        assert "pytorchjobs.kubeflow.org" in info.value.message
        assert "trainjobs.trainer.kubeflow.org" in info.value.message
        with pytest.raises(CrdMissing):
            await backend.submit(spec())
    finally:
        await backend.close()


async def test_unreachable_cluster(fake_kube: Any) -> None:
    await fake_kube.stop()
    backend = KubernetesBackend()
    try:
        with pytest.raises(BackendError) as info:
            await backend.list_jobs()
        assert info.value.status == 503 and "cannot reach" in info.value.message
    finally:
        await backend.close()
        await fake_kube.serve()


async def test_namespaces(backend: KubernetesBackend, fake_kube: Any) -> None:
    await backend.list_jobs()
    assert backend.namespace == NS  # from the kubeconfig context
    with pytest.raises(BackendError) as info:
        backend.for_namespace("team-b")
    assert info.value.status == 403 and "team-b" in info.value.message
    allowed = KubernetesBackend(allowed_namespaces=["team-b"])
    try:
        await allowed.list_jobs()
        other = allowed.for_namespace("team-b")
        await other.submit(spec("elsewhere"))
        assert fake_kube.get("pytorchjobs", "team-b", "elsewhere") is not None
    finally:
        await allowed.close()


async def test_volumes(backend: KubernetesBackend, fake_kube: Any) -> None:
    fake_kube.seed_pvc(NS, "workspace", capacity="50Gi", access_modes=("ReadWriteMany",))
    volumes = await backend.volumes()
    assert [(v.name, v.phase, v.capacity, v.access_modes) for v in volumes] == [
        ("workspace", "Bound", "50Gi", ["ReadWriteMany"])
    ]


async def test_dry_run_validates_first(fake_kube: Any) -> None:
    backend = KubernetesBackend(dry_run=True)
    try:
        await backend.submit(spec())
        posts = [entry for entry in fake_kube.access_log if entry[0] == "POST"]
        assert [("dryRun" in q) for _, _, q in posts] == [True, False]
    finally:
        await backend.close()


NOTEBOOK_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "nb-0", "namespace": NS, "labels": {"notebook-name": "nb"}},
    "spec": {
        "containers": [
            {
                "name": "nb",
                "image": "kubeflownotebookswg/jupyter-pytorch-full:v1.9.0",
                "volumeMounts": [
                    {"name": "home", "mountPath": "/home/jovyan"},
                    {"name": "data", "mountPath": "/data/sets", "subPath": "datasets"},
                    {"name": "dshm", "mountPath": "/dev/shm"},
                ],
            }
        ],
        "volumes": [
            {"name": "home", "persistentVolumeClaim": {"claimName": "workspace"}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "shared"}},
            {"name": "dshm", "emptyDir": {"medium": "Memory"}},
        ],
    },
    "status": {"phase": "Running"},
}


async def test_the_notebook_knows_itself(fake_kube: Any) -> None:
    fake_kube.add(NOTEBOOK_POD)
    backend = KubernetesBackend(self_pod="nb-0")
    try:
        defaults = await backend.form_defaults()
        assert defaults["image"] == "kubeflownotebookswg/jupyter-pytorch-full:v1.9.0"
        assert defaults["pvc"] == [
            {"claim": "workspace", "mountPath": "/home/jovyan", "subPath": "", "readOnly": False},
            {
                "claim": "shared",
                "mountPath": "/data/sets",
                "subPath": "datasets",
                "readOnly": False,
            },
        ]
        # A job that mounts the same PVC elsewhere: its logdir seen from the notebook.
        await backend.submit(
            spec(
                "tb", pvc=[{"claim": "workspace", "mountPath": "/mnt/ws"}], logdir="/mnt/ws/runs/a"
            )
        )
        assert await backend.job_logdir("tb") == "/home/jovyan/runs/a"
        # Through a subPath on both sides.
        await backend.submit(
            spec("sub", pvc=[{"claim": "shared", "mountPath": "/d"}], logdir="/d/datasets/runs/b")
        )
        assert await backend.job_logdir("sub") == "/data/sets/runs/b"
        # A PVC the notebook does not mount: said so, with the way out.
        await backend.submit(
            spec("other", pvc=[{"claim": "scratch", "mountPath": "/s"}], logdir="/s/runs")
        )
        with pytest.raises(BackendError) as info:
            await backend.job_logdir("other")
        assert "'scratch'" in info.value.message and "does not mount" in info.value.message
        await backend.submit(spec("nolog"))
        with pytest.raises(BackendError) as info:
            await backend.job_logdir("nolog")
        assert "--logdir" in info.value.message
    finally:
        await backend.close()


async def test_outside_a_pod_there_is_no_self(backend: KubernetesBackend, fake_kube: Any) -> None:
    assert await backend.form_defaults() == {"namespace": NS}
    await backend.submit(spec("tb", pvc=[{"claim": "w", "mountPath": "/w"}], logdir="/w/runs"))
    with pytest.raises(BackendError) as info:
        await backend.job_logdir("tb")
    assert "notebook pod" in info.value.message


async def test_suspend_and_resume_patch_run_policy(
    backend: KubernetesBackend, fake_kube: Any
) -> None:
    """A merge patch of ``runPolicy.suspend``: the operator deletes the pods and sets
    Suspended; resuming recreates them and resets the start time; a finished job: 409."""
    await backend.submit(spec(nodes=2))
    fake_kube.operator.run(NS, "demo")
    await backend.suspend("demo")
    stored = fake_kube.get("pytorchjobs", NS, "demo")
    assert stored["spec"]["runPolicy"]["suspend"] is True
    job = await backend.get_job("demo")
    assert job.state is JobState.SUSPENDED
    running = next(c for c in job.conditions if c.type == "Running")
    assert (running.status, running.reason) == ("False", "PyTorchJobSuspended")
    assert fake_kube.operator.pods(NS, "demo") == []
    fake_kube.operator.elapse(NS, "demo", 5)  # suspended for a while
    started = fake_kube.get("pytorchjobs", NS, "demo")["status"]["startTime"]
    await backend.resume("demo")
    job = await backend.get_job("demo")
    assert job.state is not JobState.SUSPENDED
    assert len(fake_kube.operator.pods(NS, "demo")) == 2
    assert fake_kube.get("pytorchjobs", NS, "demo")["status"]["startTime"] != started
    fake_kube.operator.run(NS, "demo")
    fake_kube.operator.succeed(NS, "demo")
    with pytest.raises(BackendError) as err:
        await backend.suspend("demo")
    assert err.value.status == 409 and "Succeeded" in err.value.message
    with pytest.raises(JobNotFound):
        await backend.resume("nothing")
