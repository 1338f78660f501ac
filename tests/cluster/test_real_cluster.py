"""The product against a real API server, scheduler, controller manager and kubelet.

Every test drives ``ptjob`` as a user of a cluster would (a kubeconfig, a namespace),
while the Training Operator's stand-in (``operator_player``) creates real pods that the
real scheduler places and the real kubelet runs in containerd. What is asserted is what
the user sees: states, the failure summary, the waiting reason, logs.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
import urllib.error
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from .realcluster import NODE, ROOT, RealCluster

pytestmark = pytest.mark.cluster

# Each step's lines are printed between two barriers, then a pause: the container
# runtime stamps each container's output as it reads it (a few ms apart between two
# containers), so only steps further apart than that have a time order to check.
DDP = """
import os, time, torch, torch.distributed as dist
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
for step in range(3):
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    print(f"rank {rank}/{world} step {step} sum {t.item():.0f}", flush=True)
    dist.barrier()
    time.sleep(0.5)
dist.destroy_process_group()
"""


def ptjob(
    cluster: RealCluster, *args: str, user: str = "admin", timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig(user)), "NO_COLOR": "1"}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    return subprocess.run(
        [sys.executable, "-m", "jupyter_pytorchjob.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def submit(
    cluster: RealCluster, namespace: str, name: str, *flags: str, user: str = "admin"
) -> None:
    done = ptjob(
        cluster,
        "submit",
        "--backend",
        "kubernetes",
        "--namespace",
        namespace,
        "--name",
        name,
        *flags,
        user=user,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(name)


def eventually(check: Callable[[], str | None], timeout: float, what: str) -> str:
    """Poll ``check`` (it asks the API server; there is no event to wait on from a
    subprocess CLI) until it returns text, at most ``timeout`` s."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last is not None:
            return last
        time.sleep(1)
    raise AssertionError(f"{what}: not seen in {timeout:.0f} s")


def status(cluster: RealCluster, namespace: str, name: str) -> str:
    done = ptjob(cluster, "status", "--backend", "kubernetes", "--namespace", namespace, name)
    return done.stdout + done.stderr


def status_with(
    cluster: RealCluster, namespace: str, name: str, *words: str
) -> Callable[[], str | None]:
    def check() -> str | None:
        text = status(cluster, namespace, name)
        return text if all(w in text for w in words) else None

    return check


def k8s(namespace: str, name: str) -> tuple[str, ...]:
    return ("--backend", "kubernetes", "--namespace", namespace, name)


def test_two_node_ddp_job_succeeds_with_merged_logs_from_real_containers(
    cluster: RealCluster, namespace: str
) -> None:
    submit(cluster, namespace, "ddp", "--nodes", "2", "--", "python", "-c", DDP)
    waited = ptjob(cluster, "wait", "--timeout", "240", *k8s(namespace, "ddp"))
    assert waited.returncode == 0, waited.stdout + waited.stderr + status(cluster, namespace, "ddp")
    logs = ptjob(cluster, "logs", *k8s(namespace, "ddp"))
    assert logs.returncode == 0, logs.stderr
    lines = logs.stdout.splitlines()
    # Both replicas' real container output, each line prefixed with its replica, and
    # the all-reduce really crossed pods: 1 + 2 = 3 on both ranks.
    for rank, replica in ((0, "master-0"), (1, "worker-0")):
        mine = [line for line in lines if line.startswith(replica) and f"rank {rank}/2" in line]
        assert [line.split("step ")[1] for line in mine] == ["0 sum 3", "1 sum 3", "2 sum 3"], (
            logs.stdout
        )
    # Merged in time order: every step of one rank is printed after the barrier of the
    # step before, so step 1 of either rank follows step 0 of both.
    steps = [int(line.split("step ")[1][0]) for line in lines if " step " in line]
    assert steps == sorted(steps), logs.stdout
    assert "Succeeded" in status(cluster, namespace, "ddp")


def test_a_crashing_replica_shows_the_real_crash_loop_then_its_traceback(
    cluster: RealCluster, namespace: str
) -> None:
    crash = "import sys; print('starting', flush=True); 1 / 0"
    submit(
        cluster,
        namespace,
        "crash",
        "--restart-policy",
        "OnFailure",
        "--backoff-limit",
        "2",
        "--",
        "python",
        "-c",
        crash,
    )
    # The kubelet's own back-off, as the user sees it while the job still runs.
    eventually(
        status_with(cluster, namespace, "crash", "CrashLoopBackOff"), 120, "CrashLoopBackOff"
    )
    waited = ptjob(cluster, "wait", "--timeout", "240", *k8s(namespace, "crash"))
    assert waited.returncode == 1
    text = status(cluster, namespace, "crash")
    assert "Failed" in text and "ZeroDivisionError" in text, text
    logs = ptjob(cluster, "logs", *k8s(namespace, "crash"))
    assert "ZeroDivisionError: division by zero" in logs.stdout, logs.stdout + logs.stderr


def test_an_image_that_cannot_be_pulled_says_so_and_logs_do_not_hang(
    cluster: RealCluster, namespace: str
) -> None:
    # A loopback registry port where nothing listens: the pull fails on this machine.
    submit(
        cluster,
        namespace,
        "noimage",
        "--image",
        "127.0.0.1:9/ptjob/missing:1",
        "--",
        "python",
        "-c",
        "pass",
    )
    text = eventually(
        lambda: (lambda t: t if ("ErrImagePull" in t or "ImagePullBackOff" in t) else None)(
            status(cluster, namespace, "noimage")
        ),
        120,
        "image pull failure",
    )
    assert "127.0.0.1:9/ptjob/missing:1" in text, text
    logs = ptjob(cluster, "logs", *k8s(namespace, "noimage"), timeout=60)
    assert logs.returncode != 0
    assert "pull" in (logs.stdout + logs.stderr).lower()


def test_an_unschedulable_job_says_why_it_waits_in_the_schedulers_words(
    cluster: RealCluster, namespace: str
) -> None:
    submit(cluster, namespace, "gpus", "--gpus", "1", "--", "python", "-c", "pass")
    text = eventually(
        status_with(cluster, namespace, "gpus", "Insufficient nvidia.com/gpu"),
        120,
        "scheduler's reason",
    )
    assert re.search(r"0/\d+ nodes are available: 1 Insufficient nvidia.com/gpu", text), text


def test_a_replica_over_its_memory_limit_is_reported_oom_killed(
    cluster: RealCluster, namespace: str
) -> None:
    hog = "x = bytearray(512 * 1024 * 1024); print(len(x))"
    submit(
        cluster,
        namespace,
        "oom",
        "--memory",
        "128Mi",
        "--restart-policy",
        "Never",
        "--",
        "python",
        "-c",
        hog,
    )
    waited = ptjob(cluster, "wait", "--timeout", "180", *k8s(namespace, "oom"))
    assert waited.returncode == 1
    text = status(cluster, namespace, "oom")
    assert "OOMKilled" in text, text


def test_shm_is_a_real_memory_emptydir_at_dev_shm(cluster: RealCluster, namespace: str) -> None:
    probe = (
        "mounts = [l.split() for l in open('/proc/mounts')]; "
        "print('shm', [m[2] for m in mounts if m[1] == '/dev/shm'])"
    )
    submit(cluster, namespace, "shm", "--shm", "1Gi", "--", "python", "-c", probe)
    assert ptjob(cluster, "wait", "--timeout", "180", *k8s(namespace, "shm")).returncode == 0
    logs = ptjob(cluster, "logs", *k8s(namespace, "shm")).stdout
    # A memory emptyDir is a tmpfs. Its size is half the node's RAM on 1.20 whatever the
    # sizeLimit (SizeMemoryBackedVolumes sizes it from 1.22): not asserted here.
    assert "shm ['tmpfs']" in logs, logs


def test_a_namespace_only_user_submits_and_lists_with_a_role(
    cluster: RealCluster, namespace: str
) -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "ptjob-user", "namespace": namespace},
        "rules": [
            {
                "apiGroups": ["kubeflow.org"],
                "resources": ["pytorchjobs", "pytorchjobs/status"],
                "verbs": ["get", "list", "watch", "create", "delete", "patch", "update"],
            },
            {
                "apiGroups": [""],
                "resources": ["pods", "pods/log", "events"],
                "verbs": ["get", "list", "watch"],
            },
        ],
    }
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    # Before any grant: refused, with a message that names what is missing.
    refused = ptjob(
        cluster, "list", "--backend", "kubernetes", "--namespace", namespace, user="alice"
    )
    assert refused.returncode != 0
    assert "alice" in refused.stderr or "forbidden" in refused.stderr.lower(), refused.stderr
    cluster.request("POST", f"{rbac}/roles", role)
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "ptjob-user", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "ptjob-user"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
    }
    cluster.request("POST", f"{rbac}/rolebindings", binding)
    # RBAC caches settle within a second or two on a real API server.
    eventually(
        lambda: (
            "ok"
            if ptjob(
                cluster, "list", "--backend", "kubernetes", "--namespace", namespace, user="alice"
            ).returncode
            == 0
            else None
        ),
        30,
        "the role binding to take effect",
    )
    submit(
        cluster, namespace, "mine", "--", "python", "-c", "print('hello from alice')", user="alice"
    )
    listed = ptjob(
        cluster, "list", "--backend", "kubernetes", "--namespace", namespace, user="alice"
    )
    assert "mine" in listed.stdout, listed.stdout + listed.stderr
    # Another namespace stays closed to her, and the message says so.
    other = ptjob(
        cluster, "list", "--backend", "kubernetes", "--namespace", "default", user="alice"
    )
    assert other.returncode != 0 and "default" in other.stderr, other.stderr


def test_a_kind_installed_while_a_backend_runs_is_served_without_a_restart(
    cluster: RealCluster, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyter_pytorchjob.backends.kubernetes.backend import KubernetesBackend

    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig()))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    cluster.uninstall_crd("trainjobs.trainer.kubeflow.org")

    async def scenario() -> tuple[list[str], list[str]]:
        backend = KubernetesBackend(namespace=namespace, kinds_ttl=2)
        try:
            before = [k.kind for k in await backend.job_kinds()]
            cluster.install_crds(("trainer.kubeflow.org_trainjobs.yaml",))
            deadline = time.monotonic() + 60
            after = before
            while "TrainJob" not in after and time.monotonic() < deadline:
                await asyncio.sleep(1)
                after = [k.kind for k in await backend.job_kinds()]
            return before, after
        finally:
            await backend.close()

    try:
        before, after = asyncio.run(scenario())
    finally:
        cluster.uninstall_crd("trainjobs.trainer.kubeflow.org")
    assert before == ["PyTorchJob"]
    assert after == ["PyTorchJob", "TrainJob"]


def test_a_replica_on_a_dead_kubelet_gets_a_notice_while_the_others_stream(
    cluster: RealCluster, namespace: str
) -> None:
    """A Node whose kubelet does not listen: the API server's log proxy answers 500
    for its pods. The healthy replica's lines still come, the dead one is named."""
    dead = "ptjob-dead-node"
    try:
        cluster.request(
            "POST",
            "/api/v1/nodes",
            {
                "metadata": {"name": dead},
                "status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}]},
            },
        )
    except urllib.error.HTTPError as e:
        if e.code != 409:
            raise
    try:
        logs = _logs_with_a_dead_node(cluster, namespace, dead)
    finally:
        cluster.request("DELETE", f"/api/v1/nodes/{dead}")
    assert "master-0" in logs and "alive" in logs, logs
    assert dead in logs, logs


def _logs_with_a_dead_node(cluster: RealCluster, namespace: str, dead: str) -> str:
    alive = "import time; print('alive', flush=True); time.sleep(600)"
    rendered = ptjob(
        cluster, "render", "--nodes", "2", "--name", "half", "--", "python", "-c", alive
    )
    assert rendered.returncode == 0, rendered.stderr
    job = yaml.safe_load(rendered.stdout)
    job["metadata"]["namespace"] = namespace
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["nodeName"] = dead
    cluster.request("POST", f"/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs", job)
    eventually(status_with(cluster, namespace, "half", "worker-0"), 120, "the worker's pod")

    def both() -> str | None:
        done = ptjob(cluster, "logs", *k8s(namespace, "half"), timeout=60)
        text = done.stdout + done.stderr
        return text if "alive" in done.stdout and dead in text else None

    return eventually(
        both,
        120,
        "the healthy replica's log and the dead node's notice",
    )


def test_the_kubelet_is_the_node_ptjob_uses(cluster: RealCluster) -> None:
    node = cluster.request("GET", f"/api/v1/nodes/{NODE}")
    assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.20.2"
    assert node["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")
    assert Path(cluster.kubeconfig()).exists()
