"""``ptjob render`` end to end, as a subprocess through the installed console script."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from jupyter_pytorchjob.frontends.logs import FAILING_RUN_NOTICE
from jupyter_pytorchjob.kinds.pytorchjob.manifest import parse_manifest

from . import crd_trainjob
from .crd import crds_available, manifest_errors

PTJOB = Path(sys.executable).with_name("ptjob")


@contextlib.contextmanager
def cluster_ptjob(tmp_path: Path) -> Iterator[tuple[Any, Callable[..., Any]]]:
    """A fake cluster in a thread and ``run(*args)``: ``ptjob`` on the kubernetes backend
    against it (its kubeconfig; no in-cluster config)."""
    from .test_magics import FakeKubeThread

    kube = FakeKubeThread()
    try:
        config = kube.fake.write_kubeconfig(tmp_path / "kubeconfig")
        env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
        env.update(KUBECONFIG=str(config), PTJOB_BACKEND="kubernetes")

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [str(PTJOB), *args], env=env, capture_output=True, text=True, timeout=60
            )

        yield kube, run
    finally:
        kube.stop()


def ptjob(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PTJOB), *args], capture_output=True, text=True, timeout=60, cwd=cwd, check=False
    )


def test_console_script_is_installed() -> None:
    assert PTJOB.exists(), "pip install -e . creates the ptjob console script"


def test_render_the_done_when_example() -> None:
    result = ptjob(
        "render",
        "--name",
        "demo",
        "--nodes",
        "3",
        "--gpus",
        "2",
        "--pvc",
        "data:/mnt/data",
        "--shm",
        "8Gi",
        "--",
        "python",
        "train.py",
    )
    assert result.returncode == 0, result.stderr
    manifest = yaml.safe_load(result.stdout)
    assert manifest_errors(manifest) == []
    spec = parse_manifest(manifest)
    assert (spec.name, spec.nodes, spec.gpus, spec.shm) == ("demo", 3, 2, "8Gi")
    assert spec.command == ("python", "train.py")
    assert spec.pvc[0].claim == "data" and spec.pvc[0].mount_path == "/mnt/data"


@pytest.mark.parametrize(
    ("flags", "key", "value"),
    [
        (["--priority-class", "high"], "priorityClassName", "high"),
        (["--service-account", "s3-reader"], "serviceAccountName", "s3-reader"),
        (
            ["--image-pull-secret", "regcred", "--image-pull-secret", "ghcr"],
            "imagePullSecrets",
            [{"name": "regcred"}, {"name": "ghcr"}],
        ),
    ],
)
def test_render_a_pod_field(flags: list[str], key: str, value: Any) -> None:
    result = ptjob("render", "--name", "p", *flags, "--", "python", "t.py")
    assert result.returncode == 0, result.stderr
    master = yaml.safe_load(result.stdout)["spec"]["pytorchReplicaSpecs"]["Master"]
    assert master["template"]["spec"][key] == value


def test_render_a_trainjob() -> None:
    """``--kind trainjob`` (any case): a TrainJob the published v2.3 models and the real
    CRD take; what a TrainJob cannot express is refused by its flag."""
    result = ptjob(
        "render", "--kind", "trainjob", "--name", "t", "--nodes", "2", "--runtime", "my-torch",
        "--", "torchrun", "t.py",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    manifest = yaml.safe_load(result.stdout)
    assert (manifest["kind"], manifest["spec"]["trainer"]["numNodes"]) == ("TrainJob", 2)
    assert manifest["spec"]["runtimeRef"]["name"] == "my-torch"
    # --runtime without --image: the runtime's image and process rule, not ours.
    assert not {"image", "numProcPerNode"} & set(manifest["spec"]["trainer"])
    assert crd_trainjob.model_errors(manifest) == []
    if crds_available():
        assert crd_trainjob.schema_errors(manifest) == []
    refused = ptjob("render", "--kind", "TrainJob", "--name", "t", "--restart-policy", "Never",
                    "--", "x")  # fmt: skip
    assert refused.returncode == 2 and "--restart-policy" in refused.stderr


def test_render_a_torchtune_job_with_its_initializers() -> None:
    """``--runtime`` of a torchtune runtime: ``tune run`` and the config overrides (the
    runtime completes the rest), or nothing at all (the runtime's own command);
    ``--dataset``/``--model`` are the initializers' URIs, a bad one named by its flag."""
    tune = ("render", "--kind", "trainjob", "--runtime", "torchtune-llama3.2-1b")
    result = ptjob(*tune, "--dataset", "hf://tatsu-lab/alpaca", "--", "tune", "run", "epochs=1")
    assert result.returncode == 0, result.stderr
    spec = yaml.safe_load(result.stdout)["spec"]
    assert (spec["trainer"]["command"], spec["trainer"]["args"]) == (["tune", "run"], ["epochs=1"])
    assert spec["initializer"] == {"dataset": {"storageUri": "hf://tatsu-lab/alpaca"}}
    own = ptjob(*tune)
    assert own.returncode == 0, own.stderr
    assert "command" not in yaml.safe_load(own.stdout)["spec"]["trainer"]
    assert ptjob("render", "--kind", "trainjob").returncode == 2  # torch-distributed: no command
    bad = ptjob(*tune, "--model", "Llama-3.2-1B")
    assert bad.returncode == 2 and "--model" in bad.stderr and "scheme://" in bad.stderr


def test_render_an_elastic_job() -> None:
    args = ["--name", "e", "--no-master", "--nodes", "2", "--min-nodes", "1", "--max-nodes", "3"]
    result = ptjob("render", *args, "--max-restarts", "10", "--", "python", "t.py")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout)["spec"]["elasticPolicy"] == {
        "rdzvBackend": "c10d",
        "minReplicas": 1,
        "maxReplicas": 3,
        "maxRestarts": 10,
    }
    bad = ptjob("render", *args, "--rdzv-backend", "zk", "--", "python", "t.py")
    assert bad.returncode == 2 and "--rdzv-backend" in bad.stderr


def test_render_a_worker_only_job() -> None:
    result = ptjob("render", "--name", "w", "--nodes", "2", "--no-master", "--", "python", "t.py")
    assert result.returncode == 0, result.stderr
    manifest = yaml.safe_load(result.stdout)
    assert manifest_errors(manifest) == []
    assert list(manifest["spec"]["pytorchReplicaSpecs"]) == ["Worker"]
    assert manifest["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 2
    long = ptjob("render", "--name", "a" * 55, "--nodes", "2", "--no-master", "--", "x")
    assert long.returncode == 2 and "--name" in long.stderr and "-worker-1" in long.stderr


def test_render_every_flag(tmp_path: Path) -> None:
    script = tmp_path / "train_ddp.py"
    script.write_text("import torch\nprint('hello')\n")
    result = ptjob(
        "render",
        "--namespace",
        "team-a",
        "--image",
        "my/img:1",
        "--nodes",
        "2",
        "--gpus",
        "1",
        "--gpu-resource",
        "amd.com/gpu",
        "--cpu",
        "4",
        "--memory",
        "16Gi",
        "--pvc",
        "home:/home/jovyan",
        "--pvc",
        "data:/data:sets/a:ro",
        "--shm",
        "1Gi",
        "--nproc-per-node",
        "1",
        "--env",
        "A=1",
        "--env",
        "B=x=y",
        "--workdir",
        "/home/jovyan",
        "--restart-policy",
        "Never",
        "--backoff-limit",
        "0",
        "--deadline",
        "3600",
        "--ttl",
        "600",
        "--clean-pod-policy",
        "All",
        "--node-selector",
        "gpu=a100",
        "--toleration",
        "nvidia.com/gpu:NoSchedule",
        "--toleration",
        "team=a:NoExecute",
        "--label",
        "team=a",
        "--annotation",
        "note=hi there",
        "--queue",
        "team-a",
        "--logdir",
        "/home/jovyan/runs",
        "--script",
        str(script),
        "--",
        "--epochs",
        "2",
    )
    assert result.returncode == 0, result.stderr
    manifest = yaml.safe_load(result.stdout)
    assert manifest_errors(manifest) == []
    assert manifest["metadata"]["namespace"] == "team-a"
    assert manifest["metadata"]["name"].startswith("train-ddp-")
    spec = parse_manifest(manifest)
    assert spec.script == script.read_text() and spec.args == ("--epochs", "2")
    assert spec.env == {"A": "1", "B": "x=y"}
    assert spec.pvc[1].sub_path == "sets/a" and spec.pvc[1].read_only
    assert [(t.key, t.operator, t.value, t.effect) for t in spec.tolerations] == [
        ("nvidia.com/gpu", "Exists", "", "NoSchedule"),
        ("team", "Equal", "a", "NoExecute"),
    ]
    assert (spec.restart_policy, spec.backoff_limit, spec.deadline, spec.ttl) == (
        "Never",
        0,
        3600,
        600,
    )
    assert spec.gpu_resource == "amd.com/gpu" and spec.queue == "team-a"


def test_render_json() -> None:
    result = ptjob("render", "--name", "j", "-o", "json", "--", "python", "t.py")
    assert result.returncode == 0
    assert '"kind": "PyTorchJob"' in result.stdout


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--nodes", "0"], "--nodes"),
        (["--nodes", "two"], "--nodes"),
        (["--gpus", "-1"], "--gpus"),
        (["--name", "Bad_Name"], "--name"),
        (["--name", "a" * 60, "--nodes", "3"], "--name"),
        (["--memory", "8 GB"], "--memory"),
        (["--cpu", "-1"], "--cpu"),
        (["--shm", "lots"], "--shm"),
        (["--pvc", "data"], "--pvc"),
        (["--pvc", "Data:/mnt"], "--pvc #1 (claim)"),
        (["--pvc", "data:/dev/shm"], "--pvc #1 (mountPath)"),
        (["--pvc", "a:/m", "--pvc", "b:/m"], "--pvc #2 (mountPath)"),
        (["--env", "NOEQUALS"], "--env"),
        (["--env", "1BAD=x"], "--env 1BAD"),
        (["--env", "RANK=3"], "--env RANK"),
        (["--restart-policy", "Sometimes"], "--restart-policy"),
        (["--clean-pod-policy", "Some"], "--clean-pod-policy"),
        (["--label", "bad key=x"], "--label bad key"),
        (["--toleration", "gpu:NoRun"], "--toleration #1 (effect)"),
        (["--nproc-per-node", "auto"], "--nproc-per-node"),
        (["--workdir", "relative"], "--workdir"),
        (["--logdir", "/a/../b"], "--logdir"),
        (["--queue", "bad queue"], "--queue"),
        (["--priority-class", "Not_A_Name"], "--priority-class"),
        (["--service-account", "Not_A_Name"], "--service-account"),
        (["--image-pull-secret", "Not_A_Name"], "--image-pull-secret"),
        (["--nodez", "3"], "--nodez"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(args: list[str], flag: str) -> None:
    result = ptjob("render", *args, "--", "python", "train.py")
    assert result.returncode == 2, result.stdout
    assert result.stdout == ""
    assert flag in result.stderr
    assert "Traceback" not in result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith("ptjob")


def test_missing_command_and_unreadable_script() -> None:
    result = ptjob("render", "--name", "x")
    assert result.returncode == 2 and "COMMAND" in result.stderr
    result = ptjob("render", "--script", "/does/not/exist.py")
    assert result.returncode == 2 and "--script" in result.stderr
    assert "Traceback" not in result.stderr


def test_every_error_is_reported_each_on_one_line() -> None:
    result = ptjob("render", "--nodes", "0", "--memory", "1 G", "--", "python", "t.py")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2
    assert any("--nodes" in line for line in lines) and any("--memory" in line for line in lines)


def test_a_reader_going_away_is_no_traceback(tmp_path: Path) -> None:
    """``ptjob logs JOB | head -1`` and ``ptjob list`` into a closed pipe: a quiet end
    (exit 141, as a tool killed by SIGPIPE), never a BrokenPipeError traceback."""
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}
    lines = "for i in range(20000):\n    print('line', i)\n"
    submit = [str(PTJOB), "submit", "--name", "many", "--shm", "off", "--", "python", "-c", lines]
    subprocess.run(submit, env=env, check=True, capture_output=True, timeout=60)
    subprocess.run(
        [str(PTJOB), "wait", "many", "--timeout", "60"], env=env, check=True, capture_output=True
    )
    # 20,000 lines are more than a pipe holds: ptjob is still writing when head exits.
    pipeline = subprocess.run(
        f"'{PTJOB}' logs many | head -1; exit ${{PIPESTATUS[0]}}",
        shell=True,  # the pipeline is the point; no user input in it
        executable="/bin/bash",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert pipeline.stdout == "master-0 | line 0\n"
    assert pipeline.stderr == "" and pipeline.returncode == 141
    for args in (["list"], ["logs", "many", "-f"], ["status", "many"]):
        process = subprocess.Popen(
            [str(PTJOB), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # the reader is gone before ptjob writes a byte
        stderr = process.stderr.read().decode()
        assert process.wait(timeout=60) == 141, (args, stderr)
        assert stderr == "", (args, stderr)
    subprocess.run([str(PTJOB), "delete", "many"], env=env, check=True, capture_output=True)


def test_suspend_and_resume(tmp_path: Path) -> None:
    """``ptjob suspend|resume NAME`` set ``runPolicy.suspend`` of a running job; a job that
    does not exist or has finished is an error on one line (exit 1), never a traceback."""
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}
    manifest = tmp_path / "home" / "jobs" / "pausable" / "manifest.json"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(PTJOB), *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    def suspended() -> object:
        return json.loads(manifest.read_text())["spec"].get("runPolicy", {}).get("suspend")

    sleep = ["--", "python", "-c", "import time; time.sleep(120)"]
    try:
        assert run("submit", "--name", "pausable", "--shm", "off", *sleep).returncode == 0
        done = run("suspend", "pausable")
        assert (done.returncode, done.stdout, done.stderr) == (0, "suspended pausable\n", "")
        assert suspended() is True
        done = run("resume", "pausable")
        assert (done.returncode, done.stdout, done.stderr) == (0, "resumed pausable\n", "")
        assert suspended() is False

        missing = run("suspend", "nobody")
        assert missing.returncode == 1 and missing.stdout == ""
        assert "nobody" in missing.stderr and len(missing.stderr.splitlines()) == 1

        assert run("submit", "--name", "over", "--shm", "off", "--", "true").returncode == 0
        assert run("wait", "over", "--timeout", "60").returncode == 0
        finished = run("resume", "over")
        assert finished.returncode == 1
        assert "is Succeeded" in finished.stderr and len(finished.stderr.splitlines()) == 1
    finally:
        for name in ("pausable", "over"):
            run("delete", name)


def test_restart_policy_always_is_matched_and_warned_about() -> None:
    """The operator passes Always to the pods, so the kubelet restarts a Master that
    exited 0 until the backoff limit fails the job: we build it as asked, and say so."""
    result = ptjob("render", "--name", "a", "--restart-policy", "Always", "--", "python", "t.py")
    assert result.returncode == 0, result.stderr
    master = yaml.safe_load(result.stdout)["spec"]["pytorchReplicaSpecs"]["Master"]
    assert master["restartPolicy"] == "Always"
    assert "warning" in result.stderr and "never succeeds" in result.stderr
    quiet = ptjob("render", "--name", "a", "--", "python", "t.py")
    assert "warning" not in quiet.stderr


def test_runtimes_table_from_the_cluster(tmp_path: Path) -> None:
    """``ptjob runtimes`` prints the fake Trainer's runtimes: usable torch ones, and why
    the others are not."""
    from .crd import TRAINJOB_CRD, require_crds
    from .test_magics import FakeKubeThread

    require_crds(TRAINJOB_CRD)
    kube = FakeKubeThread()
    try:
        config = kube.fake.write_kubeconfig(tmp_path / "kubeconfig")
        env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
        result = subprocess.run(
            [str(PTJOB), "runtimes", "--backend", "kubernetes"],
            capture_output=True,
            text=True,
            env={**env, "KUBECONFIG": str(config)},
            timeout=60,
        )
    finally:
        kube.stop()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "SCOPE", "FRAMEWORK", "NODES", "IMAGE", "USABLE"]
    torch = next(line for line in lines if line.startswith("torch-distributed "))
    assert torch.split()[1:3] == ["cluster", "torch"] and torch.endswith(" yes")
    assert any("no: runs mpi jobs" in line for line in lines)


def test_list_and_status_show_progress_and_metrics(tmp_path: Path) -> None:
    """``ptjob list`` has PROGRESS and ETA columns, ``ptjob status`` the metrics: read
    from the job's tqdm bar by its supervisor, with no Jupyter server anywhere."""
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(PTJOB), *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    # loss=0.2500: shown as printed, not as 0.25 (issue 32).
    bar = "print(' 30%|###       | 30/100 [00:03<00:07, 10.0it/s, loss=0.2500]', flush=True)"
    code = f"import time\n{bar}\ntime.sleep(120)"
    try:
        submitted = run("submit", "--name", "barred", "--shm", "off", "--", "python", "-c", code)
        assert submitted.returncode == 0, submitted.stderr
        deadline = time.monotonic() + 30
        while "30% loss 0.2500" not in (listing := run("list").stdout):
            assert time.monotonic() < deadline, listing
            time.sleep(0.2)
        header, row = listing.splitlines()
        assert header.split()[-2:] == ["PROGRESS", "ETA"]
        assert row.split()[-4:] == ["30%", "loss", "0.2500", "7s"]
        status = run("status", "barred").stdout
        assert "Progress: 30%, step 30/100, ETA 7s (from logs, " in status
        assert "Metrics:\n  loss  0.2500\n" in status
    finally:
        run("delete", "barred")


def test_wait_and_status_say_why_a_job_failed(tmp_path: Path) -> None:
    """``ptjob wait`` exits 1 with the failure under the state; ``ptjob status`` shows
    it first: the replica, its exit, the exception and the traceback; ``ptjob logs``
    shows the failing run, the crash-looping master's previous one (#26)."""
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(PTJOB), *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    code = "print('step 1', flush=True)\n1 / 0"
    try:
        submitted = run(
            "submit", "--name", "oops", "--shm", "off", "--backoff-limit", "1",
            "--", "python", "-c", code,
        )  # fmt: skip
        assert submitted.returncode == 0, submitted.stderr
        waited = run("wait", "oops")
        assert waited.returncode == 1
        lines = waited.stdout.splitlines()
        # Progress while it still ran (a line per change, not a terminal), then the end.
        assert "oops: Failed" in lines, lines
        progress, lines = lines[: lines.index("oops: Failed")], lines[lines.index("oops: Failed") :]
        assert all(line.startswith("oops: ") for line in progress), progress
        assert lines[:2] == [
            "oops: Failed",
            "Failure:  master-0 exited 1: ZeroDivisionError: division by zero",
        ]
        assert lines[-1] == "  ZeroDivisionError: division by zero"
        status = run("status", "oops").stdout
        assert "State:    Failed\nFailure:  master-0 exited 1: ZeroDivisionError" in status
        assert "Output (master-0, from its previous run (logs --previous)):\n  Traceback" in status
        logs = run("logs", "oops")
        assert logs.stderr.splitlines() == [f"ptjob: master-0: {FAILING_RUN_NOTICE}"]
        assert logs.stdout.splitlines()[0] == "master-0 | step 1"
        assert logs.stdout.splitlines()[-1] == "master-0 | ZeroDivisionError: division by zero"
    finally:
        run("delete", "oops")


def test_list_shows_a_cluster_jobs_progress_on_its_one_call(tmp_path: Path) -> None:
    """On the kubernetes backend ``ptjob list`` runs once and exits: it reads the master
    pod's log for the progress before it prints (no server polled it before)."""
    with cluster_ptjob(tmp_path) as (kube, run):
        submitted = run("submit", "--name", "kprog", "--nodes", "2", "--", "python", "t.py")
        assert submitted.returncode == 0, submitted.stderr
        kube.call(kube.fake.operator.run, "team-a", "kprog")
        bar = " 40%|####      | 40/100 [00:04<00:06, 10.0it/s]\n{'loss': 0.50}\n"
        kube.call(kube.fake.append_log, "team-a", "kprog-master-0", "pytorch", bar)
        listing = run("list")
        status = run("status", "kprog")
    assert listing.returncode == 0, listing.stderr
    header, row = listing.stdout.splitlines()
    assert header.split()[-2:] == ["PROGRESS", "ETA"]
    assert row.split()[-4:] == ["40%", "loss", "0.50", "6s"], row
    assert "Progress: 40%, step 40/100, ETA 6s (from logs, " in status.stdout
    assert "Metrics:\n  loss  0.50\n" in status.stdout


ALL_REDUCE = """\
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
total = torch.tensor([dist.get_rank() + 1.0])
dist.all_reduce(total)
print("rank", dist.get_rank(), "sum", total.item(), flush=True)
dist.destroy_process_group()
"""


def test_submit_a_trainjob_locally(tmp_path: Path) -> None:
    """``ptjob submit --kind trainjob --backend local``: two nodes all-reduce through
    torchrun, ``status`` shows the TrainJob's condition and its nodes, ``logs`` both."""
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}
    script = tmp_path / "all_reduce.py"
    script.write_text(ALL_REDUCE)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(PTJOB), *args], env=env, capture_output=True, text=True, timeout=150, check=False
        )

    try:
        submitted = run(
            "submit", "--kind", "trainjob", "--backend", "local", "--name", "tj",
            "--nodes", "2", "--shm", "off", "--script", str(script),
        )  # fmt: skip
        assert submitted.returncode == 0, submitted.stderr
        waited = run("wait", "tj", "--timeout", "120")
        why = [run(*args).stdout for args in (["status", "tj"], ["logs", "tj", "--previous"])]
        # progress lines while it runs (into a pipe: one per change), then the state
        assert (waited.returncode, waited.stdout.splitlines()[-1]) == (0, "tj: Succeeded"), (
            waited,
            why,
        )
        status = run("status", "tj").stdout
        assert "Nodes:    2 (2 nodes)" in status
        assert "Complete   True  jobset completed successfully" in status
        assert [line.split()[:2] for line in status.splitlines()[-2:]] == [
            ["node-0", "Succeeded"],
            ["node-1", "Succeeded"],
        ]
        logs = run("logs", "tj").stdout.splitlines()
        # Only the result lines: torch may warn on stderr when one node's store goes away
        # while the other still leaves the group (seen under load; the job succeeds).
        sums = sorted(line for line in logs if " sum " in line)
        assert sums == ["node-0 | rank 0 sum 3.0", "node-1 | rank 1 sum 3.0"]
    finally:
        run("delete", "tj")


def test_a_missing_kubeconfig_is_named_in_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-kubeconfig"
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    env |= {"KUBECONFIG": str(missing), "PTJOB_BACKEND": "kubernetes"}
    result = subprocess.run(
        [str(PTJOB), "list"], capture_output=True, text=True, timeout=60, env=env, check=False
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"ptjob list: error: no Kubernetes configuration: not in a pod, and the kubeconfig "
        f"{missing} does not exist. Set KUBECONFIG to a kubeconfig file, or use the local backend"
    ]


def test_logs_of_a_pod_that_cannot_start_exit_1_with_the_kubelets_words(
    tmp_path: Path,
) -> None:
    """ErrImagePull (and ``--previous`` with no earlier run): the kubelet's words on
    stderr and exit 1, not an empty output and 0 (#29 items 5, 9)."""
    with cluster_ptjob(tmp_path) as (kube, run):
        assert run("submit", "--name", "pull", "--", "python", "t.py").returncode == 0
        kube.call(kube.fake.operator.create_pods, "team-a", "pull")
        waiting = (kube.fake.set_waiting, "team-a", "pull-master-0", "pytorch", "ErrImagePull")
        kube.call(*waiting)
        logs = run("logs", "pull")
        assert (logs.returncode, logs.stdout) == (1, "")
        assert logs.stderr == (
            'ptjob logs: error: the log of master-0 cannot be read: container "pytorch" in pod '
            '"pull-master-0" is waiting to start: image can\'t be pulled\n'
        )
        kube.call(kube.fake.operator.run, "team-a", "pull")
        kube.call(kube.fake.append_log, "team-a", "pull-master-0", "pytorch", "up\n")
        previous = run("logs", "pull", "--previous")
        assert previous.returncode == 1 and "previous terminated container" in previous.stderr


def test_logs_show_a_progress_bar_as_a_terminal_does_unless_raw(tmp_path: Path) -> None:
    """``ptjob logs`` into a pipe: each bar's last state once its line is done, as a
    terminal would have shown it; ``--raw`` gives the carriage returns as written."""
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}
    script = (
        "import sys\n"
        "print('epoch 1')\n"
        "for p in (0, 50, 100): sys.stdout.write('\\r%3d%%|' % p); sys.stdout.flush()\n"
        "print('\\ndone')\n"
    )
    submit = [str(PTJOB), "submit", "--name", "bar", "--shm", "off", "--", "python", "-c", script]
    try:
        subprocess.run(submit, env=env, check=True, capture_output=True, timeout=60)
        subprocess.run(
            [str(PTJOB), "wait", "bar", "--timeout", "60"], env=env, check=True, capture_output=True
        )

        def logs(*flags: str) -> str:  # bytes: text mode would turn "\r" into "\n"
            return subprocess.run(
                [str(PTJOB), "logs", "bar", *flags],
                env=env, check=True, capture_output=True, timeout=60,
            ).stdout.decode()  # fmt: skip

        assert logs() == "master-0 | epoch 1\nmaster-0 | 100%|\nmaster-0 | done\n"
        assert logs("--raw") == (
            "master-0 | epoch 1\nmaster-0 |   0%|\r 50%|\r100%|\nmaster-0 | done\n"
        )
    finally:
        subprocess.run([str(PTJOB), "delete", "bar"], env=env, capture_output=True, timeout=60)


# What a command that serves nothing must not load: an event loop (asyncio, and ssl with
# it: most of a bare command's start-up), the Jupyter server's stack (tornado), the
# cluster's client, PyYAML, the supervisor and its status endpoint, the event-file parser,
# the server client.
NOT_FOR_LIST = (
    "asyncio",
    "ssl",
    "tornado",
    "kubernetes_asyncio",
    "yaml",
    "jupyter_server",
    "jupyter_pytorchjob.backends.local.supervisor",
    "jupyter_pytorchjob.backends.local.reports",
    "jupyter_pytorchjob.backends.tfevents",
    "jupyter_pytorchjob.frontends.server",
)


def test_list_imports_no_server_stack_and_no_supervisor(tmp_path: Path) -> None:
    """``ptjob list`` and ``ptjob status`` of the local backend start fast: they import
    only what reading a job's files needs, no event loop (checked on their import graph,
    with a running job to list)."""
    env = {**os.environ, "PTJOB_HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*args], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    listing = (
        "import json, sys\n"
        "from jupyter_pytorchjob.cli import main\n"
        "code = main(['list']) or main(['status', 'sleeper'])\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    try:
        submitted = run(str(PTJOB), "submit", "--name", "sleeper", "--shm", "off", "--",
                        "sleep", "120")  # fmt: skip
        assert submitted.returncode == 0, submitted.stderr
        result = run(sys.executable, "-c", listing)
        assert result.returncode == 0, result.stderr
        tables, _, last = result.stdout.rstrip("\n").rpartition("\n")
        assert "sleeper  Running" in tables and "Name:     sleeper" in tables, tables
        code, modules = json.loads(last)
        assert code == 0
        loaded = [m for m in modules if any(m == n or m.startswith(f"{n}.") for n in NOT_FOR_LIST)]
        assert loaded == []
    finally:
        run(str(PTJOB), "delete", "sleeper")
