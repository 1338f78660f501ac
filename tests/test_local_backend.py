"""The local backend with real processes and real torch.distributed (gloo)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob.backends import BackendError, JobExists, JobNotFound, JobState
from jupyter_pytorchjob.backends.local import LocalBackend, index
from jupyter_pytorchjob.processes import free_port, pid_alive

from .local_jobs import EXAMPLES, backend, collect_logs, eventually, finished_with_every_node
from .local_jobs import make_spec as spec

# ``backend`` deletes every job left in teardown, also when a test fails: no supervisor
# or node outlives its test.
__all__ = ["backend"]

pytestmark = pytest.mark.slow


async def test_two_node_ddp_with_tensorboard_on_the_pvc(
    backend: LocalBackend, tmp_path: Path
) -> None:
    job = await backend.submit(
        spec(
            name="cnn",
            nodes=2,
            pvc=[{"claim": "data", "mountPath": "/mnt/data"}],
            logdir="/mnt/data/runs/cnn",
            command=["python", "mnist_cnn.py", "--epochs", "1", "--samples", "256"],
            # Our default, Running, stops a worker still tearing down when the master
            # succeeds (exit 143 on a busy machine); None lets both exit by themselves.
            cleanPodPolicy="None",
        )
    )
    assert job.state in (JobState.CREATED, JobState.RUNNING)
    assert [r.name for r in job.replicas] == ["master-0", "worker-0"]
    done = await backend.wait("cnn", timeout=120)
    assert done.state is JobState.SUCCEEDED, await collect_logs(backend, "cnn")
    # Succeeded comes with the master's exit, as in the operator; the worker may end a
    # moment later.
    for _ in range(100):
        if all(r.exit_code is not None for r in done.replicas):
            break
        await asyncio.sleep(0.1)
        done = await backend.get_job("cnn")
    assert [r.exit_code for r in done.replicas] == [0, 0]
    logs = await collect_logs(backend, "cnn")
    assert "rank 0 epoch 0" in logs["master-0"]
    assert "rank 1 epoch 0" in logs["worker-0"]
    # The job wrote to /mnt/data/runs/cnn; locally that is the claim's directory.
    events = list((tmp_path / "volumes" / "data" / "runs" / "cnn").glob("events.out.tfevents.*"))
    assert events, "tfevents under the PVC's local directory"
    assert "writing TensorBoard events to " + str(tmp_path / "volumes" / "data") in logs["master-0"]


async def test_a_service_account_is_accepted_and_said_to_do_nothing_here(
    backend: LocalBackend,
) -> None:
    """The same job runs locally and in a cluster; locally no pod runs as an account."""
    info = await backend.submit(
        spec(name="sa", command=[sys.executable, "-c", "pass"], serviceAccount="s3-reader")
    )
    assert any(
        "serviceAccount (--service-account) has no effect on the local backend" in str(w)
        for w in info.warnings
    ), info.warnings
    pulls = await backend.submit(
        spec(name="ps", command=[sys.executable, "-c", "pass"], imagePullSecrets=["regcred"])
    )
    assert any(
        "imagePullSecrets (--image-pull-secret) has no effect" in str(w) for w in pulls.warnings
    ), pulls.warnings
    assert (await backend.wait("sa", timeout=120)).state is JobState.SUCCEEDED
    plain = await backend.submit(spec(name="plain", command=[sys.executable, "-c", "pass"]))
    assert not any("no effect" in str(w) for w in plain.warnings)


async def test_torchrun_two_nodes_two_processes_each(backend: LocalBackend) -> None:
    await backend.submit(
        spec(name="tr", nodes=2, nprocPerNode=2, command=["torchrun", "train_torchrun.py"])
    )
    done = await backend.wait("tr", timeout=120)
    logs = await collect_logs(backend, "tr")
    assert done.state is JobState.SUCCEEDED, logs
    text = logs["master-0"] + logs["worker-0"]
    assert text.count("world_size 4") == 4
    assert "sum_of_ranks 6" in text


# The examples that start a process group, each as two nodes run briefly (the CNN's
# TensorBoard events onto a claim, not into examples/).
DISTRIBUTED_EXAMPLES: dict[str, dict[str, Any]] = {
    "mnist_cnn.py": {
        "command": ["python", "mnist_cnn.py", "--epochs", "1", "--samples", "256"],
        "pvc": [{"claim": "data", "mountPath": "/mnt/data"}],
        "logdir": "/mnt/data/runs/cnn",
    },
    "train_ddp.py": {"command": ["python", "train_ddp.py", "--epochs", "1", "--steps", "5"]},
    "train_torchrun.py": {"command": ["torchrun", "train_torchrun.py"]},
}


def test_every_example_with_a_process_group_is_run_below() -> None:
    found = [p.name for p in sorted(EXAMPLES.glob("*.py")) if "init_process_group" in p.read_text()]
    assert found == list(DISTRIBUTED_EXAMPLES)


@pytest.mark.parametrize("example", list(DISTRIBUTED_EXAMPLES))
async def test_a_distributed_example_ends_with_exit_0_on_every_node(
    backend: LocalBackend, example: str
) -> None:
    """#28: a rank aborting at teardown (gloo, SIGABRT after the work was done) was
    restarted by OnFailure with no peer left. restartPolicy Never makes such an end a
    failed node, not a restart; cleanPodPolicy None lets the worker end by itself."""
    name = example.removesuffix(".py").replace("_", "-")
    body = {"restartPolicy": "Never", "cleanPodPolicy": "None", **DISTRIBUTED_EXAMPLES[example]}
    await backend.submit(spec(name=name, nodes=2, **body))
    done = await finished_with_every_node(backend, name, timeout=180)
    assert [(r.name, r.exit_code, r.restarts) for r in done.replicas] == [
        ("master-0", 0, 0),
        ("worker-0", 0, 0),
    ], await collect_logs(backend, name)
    assert done.state is JobState.SUCCEEDED


async def test_an_elastic_worker_only_job_rendezvous_through_c10d(backend: LocalBackend) -> None:
    """Worker-only with elasticPolicy (the upstream imagenet example's shape): no Master,
    torchrun meets through the c10d rendezvous the operator's PET_RDZV_* set up - on this
    machine, 127.0.0.1 and a port of its own."""
    await backend.submit(
        spec(
            name="el",
            nodes=2,
            master=False,
            minNodes=2,
            maxNodes=2,
            nprocPerNode=1,
            command=["torchrun", "train_torchrun.py"],
        )
    )
    done = await backend.wait("el", timeout=120)
    logs = await collect_logs(backend, "el")
    assert done.state is JobState.SUCCEEDED, logs
    text = logs["worker-0"] + logs["worker-1"]
    assert text.count("world_size 2") == 2 and "sum_of_ranks 1" in text


async def test_script_shipped_in_the_job(backend: LocalBackend) -> None:
    script = "import os, sys\nprint('script rank', os.environ['RANK'], 'args', sys.argv[1:])\n"
    # cleanPodPolicy None: the worker may still be starting when the master succeeds.
    await backend.submit(
        spec(name="scr", nodes=2, script=script, args=["--x", "1"], cleanPodPolicy="None")
    )
    done = await backend.wait("scr", timeout=60)
    for _ in range(100):
        if all(r.exit_code is not None for r in done.replicas):
            break
        await asyncio.sleep(0.1)
        done = await backend.get_job("scr")
    logs = await collect_logs(backend, "scr")
    assert done.state is JobState.SUCCEEDED, logs
    assert "script rank 0 args ['--x', '1']" in logs["master-0"]
    assert "script rank 1 args ['--x', '1']" in logs["worker-0"]
    # The job's directory and its logs are its owner's alone.
    jobdir = backend.jobs_dir / "scr"
    assert stat.S_IMODE(jobdir.stat().st_mode) == 0o700
    logs_written = [*(jobdir / "logs").glob("*.log"), jobdir / "supervisor.log"]
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in logs_written} == {
        p.name: 0o600 for p in logs_written
    }


LINGERING_WORKER = "import os, time\nif os.environ['RANK'] != '0':\n    time.sleep(120)\n"


@pytest.mark.parametrize("policy", ["Running", "None"])
async def test_clean_pod_policy_after_the_master_succeeds(
    backend: LocalBackend, policy: str
) -> None:
    """Running (our default) stops the workers left when the master succeeds; None keeps them."""
    name = f"clean-{policy.lower()}"
    await backend.submit(spec(name=name, nodes=2, script=LINGERING_WORKER, cleanPodPolicy=policy))
    done = await backend.wait(name, timeout=60)
    assert done.state is JobState.SUCCEEDED
    for _ in range(100):
        worker = (await backend.get_job(name)).replicas[1]
        if policy == "None" or worker.phase == "Deleted":
            break
        await asyncio.sleep(0.1)
    if policy == "Running":
        assert (worker.phase, worker.reason, worker.exit_code) == (
            "Deleted",
            "CleanPodPolicy",
            143,
        )
    else:
        assert (worker.phase, worker.exit_code) == ("Running", None)
    await backend.delete_job(name)


# The master hands over to the worker only once the supervisor is recording the master's
# end: its helper in the master's process group is stopped then (a container's processes
# end with its main process), while a helper in a session of its own holds the master's
# output open until no node runs. So the worker always ends while the master's end is
# being recorded - the moment a job whose master succeeded first was last seen in.
ENDS_WHILE_THE_MASTER_IS_RECORDED = """\
import os, pathlib, subprocess, sys, time
handoff = pathlib.Path(os.environ["HANDOFF"])
sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
if os.environ["RANK"] == "0":
    in_group = subprocess.Popen(sleeper)
    subprocess.Popen(sleeper, start_new_session=True)
    (handoff / "pid.tmp").write_text(str(in_group.pid))
    (handoff / "pid.tmp").rename(handoff / "pid")
    sys.exit(0)

def stopped(pid):
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"

end = time.monotonic() + 60
while not (handoff / "pid").exists() and time.monotonic() < end:
    time.sleep(0.01)
pid = int((handoff / "pid").read_text())
while not stopped(pid) and time.monotonic() < end:
    time.sleep(0.01)
print("the master's helper was stopped", flush=True)
"""


@pytest.mark.parametrize("policy", ["None", "Running"])
async def test_a_worker_ending_while_the_masters_end_is_recorded_is_recorded(
    backend: LocalBackend, tmp_path: Path, policy: str
) -> None:
    """A job is settled (its supervisor gone, indexed) only once every node's end is
    recorded: a worker that exits by itself after the master succeeded is Succeeded,
    never left Running in the job's files and index (where a list would never see it
    settled), nor taken for a pod cleanPodPolicy Running deleted (it had completed)."""
    handoff = tmp_path / "handoff"
    handoff.mkdir()
    body = {"cleanPodPolicy": policy, "env": {"HANDOFF": str(handoff)}}
    await backend.submit(
        spec(name="handoff", nodes=2, script=ENDS_WHILE_THE_MASTER_IS_RECORDED, **body)
    )
    assert (await backend.wait("handoff", timeout=60)).state is JobState.SUCCEEDED

    def indexed() -> dict[str, Any] | None:
        return index.read_index(backend.jobs_dir).get("handoff")

    assert await eventually(indexed, timeout=60), "the supervisor never settled the job"
    entry = indexed()
    assert entry is not None
    phases = {name: (r["phase"], r["exit_code"]) for name, r in entry["replicas"].items()}
    assert phases == {"master-0": ("Succeeded", 0), "worker-0": ("Succeeded", 0)}
    [listed] = await backend.list_jobs()
    assert [(r.phase, r.exit_code) for r in listed.replicas] == [("Succeeded", 0)] * 2
    logs = await collect_logs(backend, "handoff")
    assert "the master's helper was stopped" in logs["worker-0"]


FAIL = "import sys; print('about to fail', flush=True); sys.exit(3)"


async def test_failing_script_with_restart_policy_never(backend: LocalBackend) -> None:
    await backend.submit(spec(name="bad", restartPolicy="Never", command=["python", "-c", FAIL]))
    done = await backend.wait("bad", timeout=60)
    assert done.state is JobState.FAILED
    (master,) = done.replicas
    assert (master.phase, master.exit_code, master.restarts) == ("Failed", 3, 0)
    assert str(master.message) == "exited with code 3"
    # Our words, not a kubelet's: the job view translates them by code.
    assert (master.to_wire()["messageCode"], master.to_wire()["messageParams"]) == (
        "replica_exited",
        {"exitCode": 3},
    )
    assert "about to fail" in (await collect_logs(backend, "bad"))["master-0"]
    reasons = [e.reason for e in await backend.events("bad")]
    assert "ExitedWithCode" in reasons


# OnFailure, ExitCode, Always, deadlines, TTL and suspend: tests/test_operator_fidelity.py
# (the same scenarios on the local backend and on the fake operator).


async def test_deadline_fails_the_job(backend: LocalBackend) -> None:
    await backend.submit(
        spec(name="slow", deadline=1, command=["python", "-c", "import time; time.sleep(60)"])
    )
    done = await backend.wait("slow", timeout=30)
    assert done.state is JobState.FAILED
    assert "deadline" in done.conditions[-1].message


def job_pids(backend: LocalBackend, name: str) -> list[int]:
    jobdir = backend.jobs_dir / name
    replicas = json.loads((jobdir / "replicas.json").read_text())
    job = json.loads((jobdir / "job.json").read_text())
    return [r["process"]["pid"] for r in replicas.values() if r.get("process")] + [
        job["supervisor"]["pid"]
    ]


def live_processes_matching(pattern: str) -> list[int]:
    """PIDs whose command line contains ``pattern``, zombies left out."""
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    live = []
    for pid in (int(p) for p in found.stdout.split()):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] != "Z":
                    live.append(pid)
        except FileNotFoundError:
            pass
    return live


async def test_delete_during_a_run_leaves_no_process(backend: LocalBackend) -> None:
    sleeper = "import subprocess, time; subprocess.Popen(['sleep', '317']); time.sleep(300)"
    await backend.submit(spec(name="long", nodes=2, command=["python", "-c", sleeper]))
    for _ in range(100):
        job = await backend.get_job("long")
        if all(r.phase == "Running" for r in job.replicas):
            break
        await asyncio.sleep(0.1)
    pids = job_pids(backend, "long")
    assert all(pid_alive(p) for p in pids)
    await backend.delete_job("long")
    for _ in range(50):
        if not any(pid_alive(p) for p in pids):
            break
        await asyncio.sleep(0.1)
    assert not any(pid_alive(p) for p in pids)
    # The grandchildren (`sleep 317`) were in the nodes' process groups: gone too. They
    # die with the nodes, but an orphan may take a moment (or stay a zombie until init
    # reaps it) on a busy machine.
    for _ in range(50):
        sleepers = live_processes_matching("sleep 317")
        if not sleepers:
            break
        await asyncio.sleep(0.1)
    assert sleepers == []
    assert not (backend.jobs_dir / "long").exists()
    with pytest.raises(JobNotFound):
        await backend.get_job("long")


async def test_a_new_process_sees_the_job_and_resumes_logs(backend: LocalBackend) -> None:
    ticker = (
        "import time\nfor i in range(30):\n    print('tick', i, flush=True)\n    time.sleep(0.1)\n"
    )
    await backend.submit(spec(name="tick", script=ticker))
    # Read what is there so far, remember the offset, then let another process resume.
    await asyncio.sleep(1.0)
    seen = ""
    offset = 0
    async for chunk in backend.logs("tick"):
        seen += chunk.text
        offset = chunk.offset
    program = textwrap.dedent(
        f"""
        import asyncio, json, sys
        from jupyter_pytorchjob.backends.local import LocalBackend
        async def main():
            b = LocalBackend(root={str(backend.root)!r}, volume_root={str(backend.volume_root)!r})
            names = [j.name for j in await b.list_jobs()]
            text = ""
            async for c in b.logs("tick", follow=True, since={{"master-0": {offset}}}):
                text += c.text
            job = await b.get_job("tick")
            print(json.dumps({{"names": names, "text": text, "state": job.state.value}}))
        asyncio.run(main())
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    other = json.loads(result.stdout)
    assert other["names"] == ["tick"]
    assert other["state"] == "Succeeded"
    lines = (seen + other["text"]).splitlines()
    assert lines == [f"tick {i}" for i in range(30)]  # nothing lost, nothing repeated


async def test_two_jobs_at_once(backend: LocalBackend) -> None:
    command = ["python", "train_ddp.py", "--epochs", "1", "--steps", "5"]
    first = await backend.submit(spec(name="one", nodes=2, command=command))
    second = await backend.submit(spec(name="two", nodes=2, command=command))
    del first, second
    ports = {
        json.loads((backend.jobs_dir / n / "job.json").read_text())["port"] for n in ("one", "two")
    }
    assert len(ports) == 2
    try:
        results = await asyncio.gather(
            backend.wait("one", timeout=120), backend.wait("two", timeout=120)
        )
    except TimeoutError:
        logs = {n: await collect_logs(backend, n) for n in ("one", "two")}
        states = {n: (await backend.get_job(n)).to_wire() for n in ("one", "two")}
        raise AssertionError(f"jobs did not finish: {states} {logs}") from None
    assert [r.state for r in results] == [JobState.SUCCEEDED, JobState.SUCCEEDED]
    assert [j.name for j in await backend.list_jobs()] == ["two", "one"]


EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")


def test_job_ports_are_never_ones_the_kernel_hands_out() -> None:
    """The kernel gives ports of its ephemeral range to every bind(0) and outgoing connection:
    another job's gloo pairs and store clients could take a job's master port between the pick
    and the master's bind (test_two_jobs_at_once once saw master-0 restart and then wait alone
    for a worker that had exited). A port from outside that range only an explicit bind takes."""
    # Linux's setting; elsewhere IANA's dynamic range (macOS, Windows).
    low, high = (
        (int(n) for n in EPHEMERAL.read_text().split()) if EPHEMERAL.is_file() else (49152, 65535)
    )
    ports = [free_port() for _ in range(200)]
    assert [p for p in ports if low <= p <= high] == []
    assert len(set(ports)) == len(ports), "a port was handed out twice"
    assert all(1024 <= p <= 65535 for p in ports)


async def test_name_taken_and_missing_jobs(backend: LocalBackend) -> None:
    await backend.submit(spec(name="dup", command=["python", "-c", "pass"]))
    with pytest.raises(JobExists):
        await backend.submit(spec(name="dup", command=["python", "-c", "pass"]))
    await backend.wait("dup", timeout=30)
    for call in (backend.get_job, backend.delete_job, backend.events):
        with pytest.raises(JobNotFound):
            await call("nope")


async def test_gpus_on_a_machine_without_them_are_refused(backend: LocalBackend) -> None:
    with pytest.raises(BackendError) as info:
        await backend.submit(spec(name="gpu", gpus=1, command=["python", "-c", "pass"]))
    assert "GPU" in info.value.message and info.value.status == 400
    assert not (backend.jobs_dir / "gpu").exists()


async def test_volumes_list_the_claims(backend: LocalBackend) -> None:
    await backend.submit(
        spec(
            name="vol",
            pvc=[{"claim": "home", "mountPath": "/home/me"}],
            command=["python", "-c", "pass"],
        )
    )
    volumes = await backend.volumes()
    assert [v.name for v in volumes] == ["home"]
    assert volumes[0].phase == "Bound" and volumes[0].local_path


def ptjob(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    ptjob_bin = Path(sys.executable).with_name("ptjob")
    return subprocess.run(
        [str(ptjob_bin), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=EXAMPLES,
        check=False,
    )


def test_cli_flow(tmp_path: Path) -> None:
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}
    submitted = ptjob(
        "submit",
        "--name",
        "cli",
        "--nodes",
        "2",
        "--shm",
        "off",
        "--",
        "python",
        "train_ddp.py",
        "--epochs",
        "1",
        "--steps",
        "5",
        env=env,
    )
    assert submitted.returncode == 0, submitted.stderr
    assert submitted.stdout.strip() == "cli"
    logs = ptjob("logs", "cli", "-f", env=env)
    assert logs.returncode == 0
    assert any(line.startswith("master-0 | rank 0") for line in logs.stdout.splitlines())
    assert any(line.startswith("worker-0 | rank 1") for line in logs.stdout.splitlines())
    waited = ptjob("wait", "cli", "--timeout", "60", env=env)
    assert waited.returncode == 0 and "Succeeded" in waited.stdout
    listed = ptjob("list", env=env)
    assert "cli" in listed.stdout and "Succeeded" in listed.stdout
    status = ptjob("status", "cli", env=env)
    assert "worker-0" in status.stdout and "Succeeded" in status.stdout
    one = ptjob("logs", "cli", "--replica", "worker-0", "--tail", "1", env=env)
    assert one.stdout.count("\n") == 1 and "|" not in one.stdout
    assert ptjob("delete", "cli", env=env).returncode == 0
    missing = ptjob("status", "cli", env=env)
    assert missing.returncode == 1 and "not found" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_cli_failed_job_wait_exits_1(tmp_path: Path) -> None:
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}
    ptjob("submit", "--name", "f", "--restart-policy", "Never", "--", "python", "-c", FAIL, env=env)
    waited = ptjob("wait", "f", "--timeout", "60", env=env)
    assert waited.returncode == 1 and "Failed" in waited.stdout


def test_cli_bad_input_leaves_no_job_directory(tmp_path: Path) -> None:
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}
    for args in (
        ["--name", "Bad_Name", "--", "python", "x.py"],
        ["--name", "ok", "--memory", "8 GB", "--", "python", "x.py"],
        ["--name", "ok", "--workdir", "/does/not/exist", "--", "python", "x.py"],
    ):
        result = ptjob("submit", *args, env=env)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
    assert "--name" in ptjob("submit", "--name", "Bad_Name", "--", "x", env=env).stderr
    jobs = tmp_path / "home" / "jobs"
    assert not jobs.exists() or list(jobs.iterdir()) == []
    timeout = ptjob("wait", "nothing", "--timeout", "1", env=env)
    assert timeout.returncode == 1


def test_wait_timeout(tmp_path: Path) -> None:
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}
    ptjob("submit", "--name", "sl", "--", "python", "-c", "import time; time.sleep(30)", env=env)
    start = time.monotonic()
    waited = ptjob("wait", "sl", "--timeout", "1", env=env)
    assert waited.returncode == 1 and "still" in waited.stderr
    assert time.monotonic() - start < 20
    ptjob("delete", "sl", env=env)


def test_after_warming_up_a_log_stream_imports_nothing(tmp_path: Path) -> None:
    """The server warms the backend up at start: the first log stream then loads no
    module of ours (an import holds the server's loop for milliseconds, #28). In a fresh
    process: this one has imported everything already."""
    script = textwrap.dedent(
        """
        import asyncio, json, sys
        from pathlib import Path
        from jupyter_pytorchjob.backends.local import LocalBackend

        root = Path(sys.argv[1])
        job = root / "jobs" / "done"
        (job / "logs").mkdir(parents=True)
        (job / "replicas.json").write_text(json.dumps({"master-0": {"phase": "Succeeded"}}))
        (job / "job.json").write_text(json.dumps({"state": "Succeeded", "created": 1.0}))
        (job / "manifest.json").write_text("{}")
        (job / "logs" / "master-0.log").write_text("2026-01-01T00:00:00.000000Z hello\\n")

        async def main():
            backend = LocalBackend(root=root, volume_root=root / "volumes")
            await backend.warm_up()
            before = set(sys.modules)
            text = "".join([c.text async for c in backend.logs("done")])
            assert text == "hello\\n", text
            print(json.dumps(sorted(m for m in set(sys.modules) - before if "pytorchjob" in m)))

        asyncio.run(main())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []
