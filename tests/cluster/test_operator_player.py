"""The operator player's decisions, without a cluster: pods, env, conditions and policies.

Expected values come from the Training Operator v1.9.4 code and ``shared/notes/operator.md``
(the env table of §6, the reasons and messages of §8, the backoff rules of §9).
"""

from __future__ import annotations

import asyncio
import urllib.error
from datetime import UTC, datetime, timedelta
from typing import Any

from .operator_player import (
    OperatorPlayer,
    Plan,
    default_job,
    plan_reconcile,
    replica_pod,
    update_conditions,
)

NOW = datetime(2026, 11, 27, 9, 0, 0, tzinfo=UTC)


def job(
    workers: int = 2,
    master: bool = True,
    restart: str | None = None,
    run_policy: dict[str, Any] | None = None,
    nproc: str | None = "1",
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    def replica(n: int) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "replicas": n,
            "template": {
                "metadata": {"labels": {"team": "a"}},
                "spec": {"containers": [{"name": "pytorch", "image": "img", "env": []}]},
            },
        }
        if restart:
            spec["restartPolicy"] = restart
        return spec

    replicas: dict[str, Any] = {}
    if master:
        replicas["Master"] = replica(1)
    if workers:
        replicas["Worker"] = replica(workers)
    body: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "j", "namespace": "ns", "uid": "u-1", "resourceVersion": "7"},
        "spec": {"pytorchReplicaSpecs": replicas, "runPolicy": run_policy or {}},
    }
    if nproc is not None:
        body["spec"]["nprocPerNode"] = nproc
    if status is not None:
        body["status"] = status
    return body


def pod(
    rtype: str,
    index: int,
    phase: str = "Running",
    ip: str | None = "10.1.0.5",
    restarts: int = 0,
    exit_code: int | None = None,
    owner: str = "u-1",
) -> dict[str, Any]:
    state: dict[str, Any] = {"running": {}}
    if exit_code is not None:
        state = {"terminated": {"exitCode": exit_code, "containerID": f"c://{rtype}{index}"}}
    status: dict[str, Any] = {
        "phase": phase,
        "containerStatuses": [{"name": "pytorch", "restartCount": restarts, "state": state}],
    }
    if ip:
        status["podIP"] = ip
    return {
        "metadata": {
            "name": f"j-{rtype.lower()}-{index}",
            "namespace": "ns",
            "uid": f"p-{rtype}{index}",
            "labels": {
                "training.kubeflow.org/replica-type": rtype.lower(),
                "training.kubeflow.org/replica-index": str(index),
            },
            "ownerReferences": [{"controller": True, "uid": owner, "kind": "PyTorchJob"}],
        },
        "status": status,
    }


def service(rtype: str, index: int) -> dict[str, Any]:
    return {k: v for k, v in pod(rtype, index).items() if k == "metadata"}


def services(workers: int = 2) -> list[dict[str, Any]]:
    return [service("Master", 0)] + [service("Worker", i) for i in range(workers)]


def actions(plan: Plan, kind: str) -> list[Any]:
    return [arg for action, arg in plan.actions if action == kind]


def env_of(body: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in body["spec"]["containers"][0]["env"]}


def condition(status: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions", []) if c["type"] == kind), None)


def states(status: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["type"], c["status"]) for c in status["conditions"]]


RUNNING_PODS = [pod("Master", 0), pod("Worker", 0), pod("Worker", 1)]


def run_to_running() -> dict[str, Any]:
    """A default job's status after its second reconcile, its three pods running."""
    first = plan_reconcile(job(), [], [], NOW)
    running = plan_reconcile(job(status=first.status), RUNNING_PODS, services(), NOW)
    assert running.status is not None
    return running.status


def worker_0_exits(restart: str, code: int) -> Plan:
    """A job's reconcile once its worker-0 pod has failed with ``code``, the others running."""
    first = plan_reconcile(job(restart=restart), [], [], NOW)
    broken = [pod("Master", 0), pod("Worker", 0, "Failed", exit_code=code), pod("Worker", 1)]
    return plan_reconcile(job(restart=restart, status=first.status), broken, services(), NOW)


def failed_message(plan: Plan) -> str:
    assert plan.status is not None
    failure = condition(plan.status, "Failed")
    assert failure is not None, plan.status
    return str(failure["message"])


# --- pods, env, services ---------------------------------------------------------------------


def test_pods_carry_the_operators_env_labels_port_and_owner() -> None:
    defaulted = default_job(job(workers=2, nproc="4"))
    master = replica_pod(defaulted, "Master", 0, None)
    worker = replica_pod(defaulted, "Worker", 1, "10.1.0.5")

    assert master["metadata"]["name"] == "j-master-0"
    assert env_of(master) == {
        "PYTHONUNBUFFERED": "1",
        "MASTER_PORT": "23456",
        "PET_MASTER_PORT": "23456",
        "MASTER_ADDR": "j-master-0",
        "PET_MASTER_ADDR": "j-master-0",
        "WORLD_SIZE": "12",  # 3 replicas x nprocPerNode 4
        "RANK": "0",
        "PET_NODE_RANK": "0",
        "PET_NPROC_PER_NODE": "4",
        "PET_NNODES": "3",
    }
    assert env_of(worker)["RANK"] == env_of(worker)["PET_NODE_RANK"] == "2"
    assert master["spec"]["containers"][0]["ports"] == [
        {"name": "pytorchjob-port", "containerPort": 23456}
    ]
    assert master["spec"]["restartPolicy"] == "OnFailure"  # the operator's default
    assert master["metadata"]["labels"] == {
        "team": "a",
        "training.kubeflow.org/operator-name": "pytorchjob-controller",
        "training.kubeflow.org/job-name": "j",
        "training.kubeflow.org/replica-type": "master",
        "training.kubeflow.org/replica-index": "0",
        "training.kubeflow.org/job-role": "master",
    }
    assert "training.kubeflow.org/job-role" not in worker["metadata"]["labels"]
    assert master["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "name": "j",
            "uid": "u-1",
            "blockOwnerDeletion": True,
            "controller": True,
        }
    ]
    # deliberate difference (b): no DNS here, so the master's name is a host alias; no init
    assert worker["spec"]["hostAliases"] == [{"ip": "10.1.0.5", "hostnames": ["j-master-0"]}]
    assert "hostAliases" not in master["spec"]
    assert "initContainers" not in worker["spec"]


def test_a_worker_only_job_has_no_master_env_and_worker_0_is_master_role() -> None:
    defaulted = default_job(job(master=False, workers=3, nproc=None))
    worker0 = replica_pod(defaulted, "Worker", 0, None)
    assert env_of(worker0) == {
        "PYTHONUNBUFFERED": "1",
        "PET_NPROC_PER_NODE": "auto",
        "PET_NNODES": "3",
    }
    assert worker0["metadata"]["labels"]["training.kubeflow.org/job-role"] == "master"


def test_exit_code_replicas_get_pod_restart_policy_never() -> None:
    defaulted = default_job(job(restart="ExitCode"))
    assert replica_pod(defaulted, "Worker", 0, "10.0.0.1")["spec"]["restartPolicy"] == "Never"


def test_first_reconcile_creates_the_master_and_all_services_and_workers_wait_for_its_ip() -> None:
    plan = plan_reconcile(job(), [], [], NOW)

    assert [p["metadata"]["name"] for p in actions(plan, "create_pod")] == ["j-master-0"]
    created = actions(plan, "create_service")
    assert [s["metadata"]["name"] for s in created] == ["j-master-0", "j-worker-0", "j-worker-1"]
    assert created[1]["spec"] == {
        "clusterIP": "None",
        "selector": {
            "training.kubeflow.org/operator-name": "pytorchjob-controller",
            "training.kubeflow.org/job-name": "j",
            "training.kubeflow.org/replica-type": "worker",
            "training.kubeflow.org/replica-index": "0",
        },
        "ports": [{"name": "pytorchjob-port", "port": 23456}],
    }
    assert plan.status is not None
    assert states(plan.status) == [("Created", "True")]
    assert condition(plan.status, "Created")["reason"] == "PyTorchJobCreated"  # type: ignore[index]
    assert plan.status["startTime"] == "2026-11-27T09:00:00Z"

    pending_master = pod("Master", 0, phase="Pending", ip=None)
    waiting = plan_reconcile(job(status=plan.status), [pending_master], services(), NOW)
    assert actions(waiting, "create_pod") == []

    with_ip = pod("Master", 0, phase="Pending", ip="10.1.0.9")
    ready = plan_reconcile(job(status=plan.status), [with_ip], services(), NOW)
    workers = actions(ready, "create_pod")
    assert [p["metadata"]["name"] for p in workers] == ["j-worker-0", "j-worker-1"]
    assert workers[0]["spec"]["hostAliases"] == [{"ip": "10.1.0.9", "hostnames": ["j-master-0"]}]


def test_running_then_master_success_completes_the_job_whatever_the_workers_do() -> None:
    running = run_to_running()
    assert states(running) == [("Created", "True"), ("Running", "True")]
    assert condition(running, "Running")["message"] == "PyTorchJob j is running."  # type: ignore[index]
    assert running["replicaStatuses"]["Worker"] == {
        "active": 2,
        "selector": "training.kubeflow.org/job-name=j,training.kubeflow.org/operator-name="
        "pytorchjob-controller,training.kubeflow.org/replica-type=worker",
    }

    later = NOW + timedelta(seconds=30)
    done_pods = [pod("Master", 0, "Succeeded", exit_code=0), pod("Worker", 0), pod("Worker", 1)]
    done = plan_reconcile(job(status=running), done_pods, services(), later)
    assert done.status is not None
    assert states(done.status) == [("Created", "True"), ("Running", "False"), ("Succeeded", "True")]
    assert condition(done.status, "Succeeded")["reason"] == "PyTorchJobSucceeded"  # type: ignore[index]
    assert done.status["completionTime"] == "2026-11-27T09:00:30Z"
    assert ("Normal", "ExitedWithCode", "Pod: ns.j-master-0 exited with code 0") in actions(
        done, "event"
    )

    # finished: cleanPodPolicy None (the default) leaves the running workers alone and counts
    # them succeeded (common/job.go:131-136)
    after = plan_reconcile(job(status=done.status), done_pods, services(), later)
    assert actions(after, "delete_pod") == []
    assert after.status is not None
    assert after.status["replicaStatuses"]["Worker"]["succeeded"] == 2
    assert "active" not in after.status["replicaStatuses"]["Worker"]


def test_clean_pod_policy_running_deletes_running_pods_and_their_services_only() -> None:
    status = {"conditions": [{"type": "Succeeded", "status": "True", "reason": "x"}]}
    finished = job(run_policy={"cleanPodPolicy": "Running"}, status=status)
    done_pods = [pod("Master", 0, "Succeeded", exit_code=0), pod("Worker", 0), pod("Worker", 1)]
    plan = plan_reconcile(finished, done_pods, services(), NOW)
    assert actions(plan, "delete_pod") == ["j-worker-0", "j-worker-1"]
    assert actions(plan, "delete_service") == ["j-worker-0", "j-worker-1"]

    every = job(run_policy={"cleanPodPolicy": "All"}, status=status)
    plan = plan_reconcile(every, done_pods, services(), NOW)
    assert actions(plan, "delete_pod") == ["j-master-0", "j-worker-0", "j-worker-1"]


def test_on_failure_crash_loop_stays_running_until_restarts_reach_the_backoff_limit() -> None:
    policy = {"backoffLimit": 2}
    first = plan_reconcile(job(restart="OnFailure", run_policy=policy), [], [], NOW)
    looping = [pod("Master", 0), pod("Worker", 0, restarts=1), pod("Worker", 1)]
    once = plan_reconcile(
        job(restart="OnFailure", run_policy=policy, status=first.status), looping, services(), NOW
    )
    assert once.status is not None
    assert not any(t in ("Restarting", "Failed") for t, _ in states(once.status))

    looping = [pod("Master", 0), pod("Worker", 0, restarts=2), pod("Worker", 1)]
    failed = plan_reconcile(
        job(restart="OnFailure", run_policy=policy, status=once.status), looping, services(), NOW
    )
    assert failed.status is not None
    failure = condition(failed.status, "Failed")
    assert failure is not None and failure["reason"] == "PyTorchJobFailed"
    assert failure["message"] == (
        "Job j has failed because it has reached the specified backoff limit"
    )
    assert failed.status["completionTime"] == "2026-11-27T09:00:00Z"
    assert actions(failed, "delete_pod") == []  # cleanPodPolicy None


def test_restarts_of_pods_that_are_not_running_do_not_count() -> None:
    policy = {"backoffLimit": 1}
    first = plan_reconcile(job(restart="OnFailure", run_policy=policy), [], [], NOW)
    pending = [pod("Master", 0), pod("Worker", 0, phase="Pending", restarts=5), pod("Worker", 1)]
    plan = plan_reconcile(
        job(restart="OnFailure", run_policy=policy, status=first.status), pending, services(), NOW
    )
    assert plan.status is not None
    assert condition(plan.status, "Failed") is None


def test_never_fails_the_job_on_a_failed_worker() -> None:
    plan = worker_0_exits("Never", 1)
    assert failed_message(plan) == "PyTorchJob j is failed because 1 Worker replica(s) failed."
    assert plan.status is not None
    assert condition(plan.status, "Running")["status"] == "False"  # type: ignore[index]
    assert actions(plan, "delete_pod") == []


def test_exit_code_retries_signals_by_recreating_the_pod_and_fails_on_other_codes() -> None:
    plan = worker_0_exits("ExitCode", 137)
    assert actions(plan, "delete_pod") == ["j-worker-0"]
    assert plan.status is not None
    restarting = condition(plan.status, "Restarting")
    assert restarting is not None
    # ReconcilePods says so first (common/pod.go:362); the master's Running then replaces it
    # and UpdateJobStatus says it again, counted (pytorchjob_controller.go:430)
    assert (
        "Warning",
        "PyTorchJobRestarting",
        "job j is restarting because Worker replica(s) failed.",
    ) in actions(plan, "event")
    assert restarting["message"] == "PyTorchJob j is restarting because 1 Worker replica(s) failed."
    assert condition(plan.status, "Running") is None  # Restarting replaces Running

    plan = worker_0_exits("ExitCode", 1)
    assert failed_message(plan) == 'job "j" is failing because "Worker" replica(s) failed.'


def test_suspend_deletes_every_pod_and_resume_resets_start_time() -> None:
    running = run_to_running()

    suspended_job = job(run_policy={"suspend": True}, status=running)
    plan = plan_reconcile(suspended_job, RUNNING_PODS, services(), NOW)
    assert actions(plan, "delete_pod") == ["j-master-0", "j-worker-0", "j-worker-1"]
    assert plan.status is not None
    assert states(plan.status) == [("Created", "True"), ("Running", "False"), ("Suspended", "True")]
    assert condition(plan.status, "Suspended")["reason"] == "PyTorchJobSuspended"  # type: ignore[index]
    assert plan.status["replicaStatuses"]["Worker"].get("active") is None

    later = NOW + timedelta(minutes=5)
    resumed = plan_reconcile(job(status=plan.status), [], services(), later)
    assert resumed.status is not None
    assert condition(resumed.status, "Suspended")["status"] == "False"  # type: ignore[index]
    assert condition(resumed.status, "Suspended")["reason"] == "PyTorchJobResumed"  # type: ignore[index]
    assert resumed.status["startTime"] == "2026-11-27T09:05:00Z"
    assert [p["metadata"]["name"] for p in actions(resumed, "create_pod")] == ["j-master-0"]


def test_active_deadline_counts_from_start_time_and_fails_the_job() -> None:
    policy = {"activeDeadlineSeconds": 60}
    first = plan_reconcile(job(run_policy=policy), [], [], NOW)
    assert first.requeue_after == 60
    late = NOW + timedelta(seconds=60)
    plan = plan_reconcile(job(run_policy=policy, status=first.status), RUNNING_PODS, [], late)
    assert plan.status is not None
    failure = condition(plan.status, "Failed")
    assert failure is not None
    assert failure["message"] == (
        "Job j has failed because it was active longer than specified deadline"
    )


def test_ttl_deletes_the_job_after_completion() -> None:
    status = {
        "conditions": [{"type": "Failed", "status": "True", "reason": "x"}],
        "completionTime": "2026-11-27T09:00:00Z",
    }
    early = plan_reconcile(
        job(run_policy={"ttlSecondsAfterFinished": 30}, status=status), [], [], NOW
    )
    assert actions(early, "delete_job") == []
    assert early.requeue_after == 30
    late = NOW + timedelta(seconds=31)
    gone = plan_reconcile(
        job(run_policy={"ttlSecondsAfterFinished": 30}, status=status), [], [], late
    )
    assert actions(gone, "delete_job") == [None]


def test_conditions_follow_the_operators_rules() -> None:
    status: dict[str, Any] = {}
    update_conditions(status, "Running", "True", "PyTorchJobRunning", "a", NOW)
    update_conditions(status, "Running", "True", "PyTorchJobRunning", "b", NOW)
    assert status["conditions"][0]["message"] == "a"  # same status and reason: no change
    update_conditions(status, "Restarting", "True", "PyTorchJobRestarting", "r", NOW)
    assert states(status) == [("Restarting", "True")]  # replaces Running
    update_conditions(status, "Failed", "True", "PyTorchJobFailed", "f", NOW)
    update_conditions(status, "Succeeded", "True", "PyTorchJobSucceeded", "s", NOW)
    assert states(status) == [("Restarting", "True"), ("Failed", "True")]  # Failed is final


def test_other_jobs_pods_and_foreign_managers_are_left_alone() -> None:
    foreign = job(run_policy={"managedBy": "kueue.x-k8s.io/multikueue"})
    plan = plan_reconcile(foreign, [], [], NOW)
    assert plan.actions == [] and plan.status is None

    stranger = pod("Master", 0, owner="someone-else")
    plan = plan_reconcile(job(), [stranger], [], NOW)
    assert [p["metadata"]["name"] for p in actions(plan, "create_pod")] == ["j-master-0"]


def test_a_change_the_watch_reports_before_the_call_returns_is_not_waited_for() -> None:
    """The watch may bring our own creation or deletion before the API call returns (seen on
    the real cluster: a job stalled for the expectation's whole lifetime)."""
    player = OperatorPlayer("unused-kubeconfig")
    parent = default_job(job())
    body = replica_pod(parent, "Master", 0, None)
    body["metadata"]["ownerReferences"][0]["kind"] = "PyTorchJob"

    async def answer_after_the_watch(method: str, path: str, *_: Any, **kw: Any) -> Any:
        if path.endswith("/pods"):
            player._observe("pods", "ADDED", body)
        if path.endswith("/pods/j-master-0"):
            player._observe("pods", "DELETED", body)
        return {}

    player._call = answer_after_the_watch  # type: ignore[method-assign]
    key = ("ns", "j")

    async def create_then_delete() -> None:
        await player._create(parent, "/api/v1/namespaces/ns/pods", body, "Pod", "create_pods")
        assert player._expectations_met(key)
        await player._delete(
            parent, "/api/v1/namespaces/ns/pods/j-master-0", "j-master-0", "Pod", "delete_pods"
        )
        assert player._expectations_met(key)

    asyncio.run(create_then_delete())


# --- on the real cluster (the session's player, a namespace per test) -------------------------

JOB_IMAGE = "docker.io/pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
DDP = (
    "import torch, torch.distributed as d; d.init_process_group('gloo');"
    "t = torch.ones(1) * (d.get_rank() + 1); d.all_reduce(t);"
    "print('rank', d.get_rank(), 'of', d.get_world_size(), 'sum', t.item(), flush=True)"
)


def live_job(
    namespace: str, name: str, master: str, worker: str | None, run_policy: dict[str, Any]
) -> dict[str, Any]:
    def replica(command: str) -> dict[str, Any]:
        container = {"name": "pytorch", "image": JOB_IMAGE, "command": ["python", "-c", command]}
        return {"replicas": 1, "template": {"spec": {"containers": [container]}}}

    replicas = {"Master": replica(master)}
    if worker is not None:
        replicas["Worker"] = replica(worker)
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"nprocPerNode": "1", "pytorchReplicaSpecs": replicas, "runPolicy": run_policy},
    }


async def watch_until(
    kubeconfig: str, list_call: str, predicate: Any, timeout: float = 240, **kwargs: Any
) -> Any:
    """The first object a watch of ``list_call`` (an API method name) reports that satisfies
    ``predicate``; objects as plain dicts."""
    from kubernetes_asyncio import client, config, watch

    configuration = client.Configuration()
    await config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    async with client.ApiClient(configuration) as api:
        owner = client.CustomObjectsApi(api) if "custom" in list_call else client.CoreV1Api(api)
        stream = watch.Watch().stream(
            getattr(owner, list_call), timeout_seconds=int(timeout), **kwargs
        )
        async with asyncio.timeout(timeout):
            async for event in stream:
                obj = event["object"]
                if not isinstance(obj, dict):
                    obj = api.sanitize_for_serialization(obj)
                if predicate(obj):
                    return obj
    raise AssertionError(f"no {list_call} object satisfied the wait")


def has_condition(kind: str) -> Any:
    return lambda job: any(
        c["type"] == kind and c["status"] == "True"
        for c in job.get("status", {}).get("conditions", [])
    )


def wait_job(cluster: Any, namespace: str, name: str, kind: str, timeout: float = 240) -> Any:
    return asyncio.run(
        watch_until(
            str(cluster.kubeconfig()),
            "list_namespaced_custom_object",
            has_condition(kind),
            timeout,
            group="kubeflow.org",
            version="v1",
            namespace=namespace,
            plural="pytorchjobs",
            field_selector=f"metadata.name={name}",
        )
    )


def test_live_two_replica_ddp_job_runs_to_succeeded(cluster: Any, namespace: str) -> None:
    jobs = f"/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs"
    cluster.request("POST", jobs, live_job(namespace, "ddp", DDP, DDP, {}))
    done = wait_job(cluster, namespace, "ddp", "Succeeded")
    assert [c["type"] for c in done["status"]["conditions"]] == ["Created", "Running", "Succeeded"]
    pods = f"/api/v1/namespaces/{namespace}/pods"
    master = cluster.request("GET", f"{pods}/ddp-master-0")
    worker = cluster.request("GET", f"{pods}/ddp-worker-0")
    assert worker["spec"]["hostAliases"] == [
        {"ip": master["status"]["podIP"], "hostnames": ["ddp-master-0"]}
    ]
    # The master's success ends the job (UpdateJobStatus); the worker's pod
    # may still be Running then, and reaches Succeeded on its own (cleanPodPolicy None).
    assert master["status"]["phase"] == "Succeeded"
    asyncio.run(
        watch_until(
            str(cluster.kubeconfig()),
            "list_namespaced_pod",
            lambda pod: pod.get("status", {}).get("phase") == "Succeeded",
            namespace=namespace,
            field_selector="metadata.name=ddp-worker-0",
        )
    )
    events = cluster.request("GET", f"/api/v1/namespaces/{namespace}/events")["items"]
    reasons = {e["reason"] for e in events if e["involvedObject"]["name"] == "ddp"}
    assert {"SuccessfulCreatePod", "SuccessfulCreateService", "PyTorchJobSucceeded"} <= reasons


def test_live_on_failure_crash_loops_then_fails_at_the_backoff_limit(
    cluster: Any, namespace: str
) -> None:
    jobs = f"/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs"
    policy = {"backoffLimit": 2, "cleanPodPolicy": "Running"}
    body = live_job(
        namespace, "crash", "import time; time.sleep(600)", "raise SystemExit(3)", policy
    )
    cluster.request("POST", jobs, body)

    def crash_looping(pod: dict[str, Any]) -> bool:
        return any(
            (s.get("state") or {}).get("waiting", {}).get("reason") == "CrashLoopBackOff"
            for s in pod.get("status", {}).get("containerStatuses") or []
        )

    asyncio.run(
        watch_until(
            str(cluster.kubeconfig()),
            "list_namespaced_pod",
            crash_looping,
            namespace=namespace,
            field_selector="metadata.name=crash-worker-0",
        )
    )
    job_now = cluster.request("GET", f"{jobs}/crash")
    assert not has_condition("Failed")(job_now)  # OnFailure: the job runs on while it loops
    failed = wait_job(cluster, namespace, "crash", "Failed")
    message = failed["status"]["conditions"][-1]["message"]
    assert message == "Job crash has failed because it has reached the specified backoff limit"


def set_suspend(cluster: Any, path: str, value: bool) -> None:
    """Read, change, replace; again when the player's status write came in between (409)."""
    for _ in range(10):
        job_now = cluster.request("GET", path)
        job_now["spec"]["runPolicy"]["suspend"] = value
        try:
            cluster.request("PUT", path, job_now)
            return
        except urllib.error.HTTPError as err:
            if err.code != 409:
                raise
    raise AssertionError(f"{path}: every replace conflicted")


def test_live_suspend_deletes_the_pods_and_resume_recreates_them(
    cluster: Any, namespace: str
) -> None:
    jobs = f"/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs"
    sleep = "import time; time.sleep(600)"
    cluster.request("POST", jobs, live_job(namespace, "pause", sleep, sleep, {}))
    wait_job(cluster, namespace, "pause", "Running")
    set_suspend(cluster, f"{jobs}/pause", True)
    wait_job(cluster, namespace, "pause", "Suspended")
    selector = "training.kubeflow.org/job-name=pause"
    pods = f"/api/v1/namespaces/{namespace}/pods?labelSelector={selector}"
    for pod in cluster.request("GET", pods)["items"]:
        assert pod["metadata"].get("deletionTimestamp"), pod["metadata"]["name"]
    set_suspend(cluster, f"{jobs}/pause", False)
    resumed = wait_job(cluster, namespace, "pause", "Running")
    suspended = next(c for c in resumed["status"]["conditions"] if c["type"] == "Suspended")
    assert (suspended["status"], suspended["reason"]) == ("False", "PyTorchJobResumed")
