"""The Python API (``jupyter_pytorchjob.submit`` / ``Job``): what a function takes
along and what it refuses, the job script run for real, keyword errors, a failing
function on the local backend, the example notebook on a real kernel (2 nodes, the
result returned), and PyTorchJob/TrainJob through the fake Kubernetes API."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.utils.capture import capture_output
from nbclient import NotebookClient

from jupyter_pytorchjob import CaptureError, InvalidArguments, Job, JobFailed, ResultError, submit
from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend
from jupyter_pytorchjob.frontends import backend_choice
from jupyter_pytorchjob.function import (
    LOG_RESULT_MAX_BYTES,
    ResultLines,
    capture,
    job_script,
    new_result_key,
    read_result_file,
    result_file_name,
)
from jupyter_pytorchjob.sdk import runner as runner_module

from .crd import TRAINJOB_CRD, require_crds
from .test_magics import (  # noqa: F401 - fixtures: shell, fake, jupyter_server
    FakeBackend,
    FakeKubeThread,
    _FakeServer,
    fake,
    jupyter_server,
    kernel_env,
    shell,
    text_of,
)

ROOT = Path(__file__).resolve().parent.parent

# A notebook's names, as a module that cannot be imported by name (like __main__ in a
# kernel): what the functions use must travel with them.
CELL = """\
import functools
import math
import threading
import torch
from torch import nn

SCALE = 3
NAMES = {"a": [1, 2.5, None], "b": ("x", b"y")}
LOCK = threading.Lock()
LINEAR = nn.Linear(2, 1)
BIG = ["x" * 30000] * 5


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, SCALE)

    def forward(self, x):
        return self.fc(x)


def helper(x):
    return math.sqrt(x) * SCALE


def train(n=2, tag="t"):
    import torch.distributed as dist

    out = Net()(torch.ones(1, 2)).shape[-1]
    return {"n": n, "tag": tag, "h": helper(n * n), "out": out, "names": NAMES,
            "group": dist.is_initialized(), "w": LINEAR.weight.shape[-1]}


def outer():
    k = 7

    def inner():
        return k * SCALE

    return inner


def outer_locked():
    lock = threading.Lock()

    def inner():
        return lock.locked()

    return inner


def uses_lock():
    return LOCK.locked()


def uses_missing():
    return MISSING + 1


async def coro():
    return 1


def gen():
    yield 1


def kubeflow_style():
    import torch.distributed as dist

    dist.init_process_group(backend="gloo")  # as under the Kubeflow SDK: ours is there
    total = torch.ones(1)
    dist.all_reduce(total)
    dist.destroy_process_group()
    return total.item()


def uses_big():
    return len(BIG)


def marks_its_exit():
    import atexit
    import os
    import sys

    class Teardown:
        def __del__(self, write=os.write):
            write(1, b"interpreter teardown\\n")

    sys.modules["__main__"].__dict__["_keep"] = Teardown()
    atexit.register(print, "atexit handlers ran", flush=True)
    return 1


def fails():
    raise RuntimeError("boom in the function")


def big(n):
    return b"r" * n


class Thing:
    def method(self):
        return 1


thing = Thing()
lam = lambda: 1  # noqa: E731
partial = functools.partial(helper, 2)
"""


def cell_module(directory: Path, name: str, source: str) -> types.ModuleType:
    """``source`` as a notebook cell's module: a file of its own, not in ``sys.modules``
    (not importable by name, as a notebook's ``__main__`` is not)."""
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cell(tmp_path_factory: pytest.TempPathFactory) -> types.ModuleType:
    return cell_module(tmp_path_factory.mktemp("cell"), "ptjob_test_cell", CELL)


KEY = new_result_key()


def run_script(script: str, tmp_path: Path, *launcher: str) -> tuple[str, Path]:
    """Run a job script as the processes of a job would (``python``: one, no group);
    its output and its log directory."""
    (tmp_path / "main.py").write_text(script)
    logdir = tmp_path / "logdir"
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    env["PTJOB_LOGDIR"] = str(logdir)
    done = subprocess.run(
        [sys.executable, *launcher, str(tmp_path / "main.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, logdir


def result_in(output: str, job: str, key: str = KEY) -> Any:
    """The result a job's rank 0 wrote into ``output`` (its log)."""
    found = ResultLines(job, bytes.fromhex(key))
    found.feed(output.splitlines())
    return found.value("the output")


def test_capture_takes_imports_constants_and_notebook_definitions(
    cell: types.ModuleType, tmp_path: Path
) -> None:
    captured = capture(cell.train)
    how = dict(captured.captured)
    assert how["torch"] == "import torch"
    assert how["nn"] == "from torch import nn"
    assert how["math"] == "import math"
    assert how["SCALE"] == how["NAMES"] == "constant"
    assert how["Net"] == "class source" and how["helper"] == "function source"
    assert how["LINEAR"] == "pickled copy"  # a picklable value: a copy made at submit
    assert "LOCK" not in how and "threading" not in how  # what train does not use
    output, logdir = run_script(job_script(captured, {"n": 3}, job="demo", key=KEY), tmp_path)
    assert "ptjob-result demo begin pickle " in output  # bytes, tuples: not JSON
    value = result_in(output, "demo")
    assert not logdir.exists()  # a small result needs no volume
    assert value["names"] == cell.NAMES and value["h"] == 9.0 and value["out"] == 3
    assert value["group"] is False and value["n"] == 3 and value["w"] == 2


def test_a_closure_over_plain_values_travels(cell: types.ModuleType, tmp_path: Path) -> None:
    captured = capture(cell.outer())
    assert dict(captured.captured)["k"] == "constant"
    output, _ = run_script(job_script(captured, {}, job="inner", key=KEY), tmp_path)
    assert "ptjob-result inner begin json " in output
    assert result_in(output, "inner") == 21


def test_under_torchrun_the_group_is_there_and_a_second_init_is_skipped(
    cell: types.ModuleType, tmp_path: Path
) -> None:
    torchrun = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    script = job_script(capture(cell.kubeflow_style), {}, job="kf", key=KEY)
    output, _ = run_script(script, tmp_path, *torchrun)
    assert output.count("ptjob-result kf end ") == 1  # rank 0 only
    assert result_in(output, "kf") == 2.0


class Planted:
    """A pickle that runs code when loaded: it creates ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.marker,))


def forged_block(job: str, fmt: str, data: bytes, key: str) -> list[str]:
    """Result lines as rank 0 writes them, signed with ``key``."""
    import base64
    import hashlib
    import hmac

    signed = b"ptjob-result\0" + job.encode() + b"\0" + fmt.encode() + b"\0" + data
    tag = hmac.new(bytes.fromhex(key), signed, hashlib.sha256).hexdigest()
    text = base64.b64encode(data).decode()
    return [
        f"ptjob-result {job} begin {fmt} {len(data)} 1",
        f"ptjob-result {job} 0 {text}",
        f"ptjob-result {job} end {tag}",
    ]


def test_a_distributed_rank_leaves_without_the_interpreters_teardown(
    cell: types.ModuleType, tmp_path: Path
) -> None:
    """The interpreter's teardown destroys C++ statics while gloo's threads may still be
    unwinding: about one rank in ten then aborts (SIGABRT) after its work is done, and
    OnFailure restarts it with no peers left. So a rank leaves after its atexit
    handlers, without that teardown (no object is finalised there)."""
    torchrun = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    script = job_script(capture(cell.marks_its_exit), {}, job="leave", key=KEY)
    output, _ = run_script(script, tmp_path, *torchrun)
    assert result_in(output, "leave") == 1
    assert output.count("atexit handlers ran") == 2
    assert "interpreter teardown" not in output


def test_a_result_not_signed_with_the_jobs_key_is_never_decoded(tmp_path: Path) -> None:
    """Whoever can write a log archive or the PVC cannot make the notebook unpickle: a
    block signed with any other key is refused before it is decoded."""
    import pickle

    marker = tmp_path / "ran"
    evil = pickle.dumps(Planted(marker))
    for fmt, data in (("pickle", evil), ("json", b'{"value": "forged"}')):
        lines = ResultLines("demo", bytes.fromhex(KEY))
        lines.feed(forged_block("demo", fmt, data, new_result_key()))
        with pytest.raises(ResultError, match="not signed with the job's key"):
            lines.value("the log archive")
    assert not marker.exists()
    # Signed with the job's key, the same block is the job's own.
    lines = ResultLines("demo", bytes.fromhex(KEY))
    lines.feed(["noise", *forged_block("demo", "json", b'{"value": [1, 2]}', KEY), "more"])
    assert lines.value("the log") == [1, 2]


def test_a_planted_result_file_is_refused_and_never_unpickled(tmp_path: Path) -> None:
    import pickle

    marker = tmp_path / "ran"
    folder = tmp_path / "runs"
    folder.mkdir()
    path = folder / result_file_name("demo")
    evil = pickle.dumps(Planted(marker))
    path.write_bytes(f"ptjob-result pickle {len(evil)} {'0' * 64}\n".encode() + evil)
    with pytest.raises(ResultError, match="not signed with the job's key"):
        read_result_file(folder, "demo", bytes.fromhex(KEY))
    path.write_bytes(evil)  # no header at all: not ours
    with pytest.raises(ResultError, match="not a result written by ptjob"):
        read_result_file(folder, "demo", bytes.fromhex(KEY))
    assert not marker.exists()


@pytest.mark.parametrize("what", ["fifo", "dev-zero", "symlink"])
def test_a_result_path_that_is_no_regular_file_answers_at_once(tmp_path: Path, what: str) -> None:
    """A FIFO would hang ``result()``, /dev/zero would fill the memory, a link could
    point at another job's result: each is refused, without reading."""
    folder = tmp_path / "runs"
    folder.mkdir()
    path = folder / result_file_name("demo")
    if what == "fifo":
        os.mkfifo(path)
    elif what == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        other = tmp_path / "other"
        other.write_bytes(b"ptjob-result json 2 x\n{}")
        path.symlink_to(other)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_result_file(folder, "demo", bytes.fromhex(KEY))
        except BaseException as err:  # handed to the test thread
            outcome.append(err)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert not reader.is_alive(), "result() hung on a FIFO"
    assert outcome and isinstance(outcome[0], ResultError), outcome
    assert str(path) in str(outcome[0])


def test_a_result_too_big_for_the_log_travels_through_the_pvc_signed(
    cell: types.ModuleType, tmp_path: Path
) -> None:
    size = LOG_RESULT_MAX_BYTES + 1
    script = job_script(capture(cell.big), {"n": size}, job="big", key=KEY)
    output, logdir = run_script(script, tmp_path)
    assert "ptjob-result big file pickle" in output and "ptjob-result big begin" not in output
    found = ResultLines("big", bytes.fromhex(KEY))
    found.feed(output.splitlines())
    assert found.file is not None
    assert read_result_file(logdir, "big", bytes.fromhex(KEY)) == b"r" * size
    path = logdir / result_file_name("big")
    data = bytearray(path.read_bytes())
    data[-1] ^= 1  # one byte changed on the volume
    path.write_bytes(bytes(data))
    with pytest.raises(ResultError, match="not signed with the job's key"):
        read_result_file(logdir, "big", bytes.fromhex(KEY))


def test_a_result_too_big_for_the_log_without_a_pvc_fails_with_what_to_do(
    cell: types.ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "main.py").write_text(
        job_script(capture(cell.big), {"n": LOG_RESULT_MAX_BYTES + 1}, job="big", key=KEY)
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "PTJOB_LOGDIR")}
    done = subprocess.run(
        [sys.executable, str(tmp_path / "main.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "without a PVC at most 4194304 come back through result(): submit with pvc=" in (
        done.stderr
    )


@pytest.mark.parametrize(
    ("what", "message"),
    [
        ("lam", "is a lambda"),
        ("len", "is a builtin"),
        ("thing.method", "is a bound method"),
        ("Thing.method", "is defined in a class body"),
        ("partial", "is a partial, not a function defined with def"),
        ("Thing", "is a class, not a function"),
        ("outer_locked()", "uses 'lock' (a lock), which cannot travel"),
        ("uses_lock", "uses 'LOCK' (a lock), which cannot travel"),
        ("uses_missing", "uses 'MISSING', which is not defined here"),
        ("coro", "is async"),
        ("gen", "is a generator"),
    ],
)
def test_capture_refuses_what_cannot_travel(
    cell: types.ModuleType, what: str, message: str
) -> None:
    fn = eval(what, {"len": len}, vars(cell))
    with pytest.raises(CaptureError) as info:
        capture(fn)
    assert message in str(info.value)


# -- submit on the local backend ---------------------------------------------------------


@pytest.fixture
def local_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh local backend home and a fresh default runner (its backends are cached)."""
    home = tmp_path / "home"
    monkeypatch.setenv("PTJOB_HOME", str(home))
    monkeypatch.delenv("PTJOB_BACKEND", raising=False)
    monkeypatch.setattr(runner_module, "_DEFAULT_RUNNER", None)
    yield home
    for job in Job.list():
        with contextlib.suppress(Exception):
            Job(job.name).delete()
    runner_module.default_runner().close()


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"nodes": 0}, "nodes: must be a whole number >= 1"),
        ({"gpu_resource": "no such/gpu/x"}, "gpu_resource: "),
        ({"pvc": ["no-mount"]}, "pvc: expected CLAIM:MOUNT[:SUBPATH][:ro], got 'no-mount'"),
        ({"pvc": ["data:relative"]}, "pvc[0].mountPath: "),
        ({"pvc": [{"claim": "data"}]}, "pvc[0].mountPath: "),  # a REST object, incomplete
        ({"restart_policy": "Sometimes"}, "restart_policy: "),
        ({"args": {"nope": 1}}, "args: do not fit train(n=2, tag='t')"),
        ({"args": {"n": threading.Lock()}}, "args: cannot be sent to the job"),
    ],
)
def test_bad_keywords_name_the_keyword_and_create_nothing(
    cell: types.ModuleType, local_home: Path, fields: dict[str, Any], expected: str
) -> None:
    with pytest.raises(InvalidArguments) as info:
        submit(cell.train, **fields)
    assert str(info.value).startswith(expected), str(info.value)
    assert len(Job.list()) == 0


def test_a_function_too_big_to_travel_is_refused_before_anything_is_created(
    cell: types.ModuleType, local_home: Path
) -> None:
    with pytest.raises(InvalidArguments) as info:
        submit(cell.uses_big)
    assert str(info.value).startswith("function: with what it captures, is ")
    assert "at most 122880 bytes" in str(info.value)
    assert len(Job.list()) == 0


def test_an_unknown_keyword_is_a_type_error(cell: types.ModuleType, local_home: Path) -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'nodez'.* nodes,"):
        submit(cell.train, nodez=2)


def test_a_failing_function_fails_wait_with_its_lines(
    cell: types.ModuleType, local_home: Path
) -> None:
    job = submit(cell.fails, nodes=2, pvc=["data:/mnt/data"], restart_policy="Never")
    with pytest.raises(JobFailed) as info:
        job.wait(timeout=120)
    assert set(info.value.lines) <= {"master-0", "worker-0"} and info.value.lines
    assert any("RuntimeError: boom in the function" in t for t in info.value.lines.values())
    assert "boom in the function" in str(info.value)
    # The failure summary: the replica that failed first and its exception, in one line.
    failure = info.value.failure
    assert failure is not None and failure.replica == info.value.replica
    assert failure.message == "RuntimeError: boom in the function"
    assert str(info.value).startswith(
        f"job {job.name} Failed: {failure.replica} exited 1: RuntimeError: boom in the function"
    )
    error = job.error()
    assert error is not None and error.failure == failure
    with pytest.raises(ResultError, match="is Failed, so it has no result"):
        job.result()


def test_without_a_volume_the_result_comes_back_through_the_log(
    cell: types.ModuleType, local_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = submit(cell.helper, args={"x": 4.0})
    assert "took along math (import math), SCALE (constant)" in capsys.readouterr().out
    assert job.wait(timeout=120) == "Succeeded"
    assert job.result() == 6.0
    # A handle made later by name finds the job's key in its manifest.
    assert Job(job.name).result() == 6.0


def test_a_big_result_planted_on_the_pvc_is_never_unpickled(
    cell: types.ModuleType, local_home: Path, tmp_path: Path
) -> None:
    """The local backend end to end: a result over the log's limit goes to the PVC;
    replaced there by another party's pickle, ``result()`` refuses it unread."""
    import pickle

    job = submit(cell.big, args={"n": LOG_RESULT_MAX_BYTES + 10}, pvc=["data:/mnt/data"], nodes=1)
    assert job.wait(timeout=120) == "Succeeded"
    assert job.result() == b"r" * (LOG_RESULT_MAX_BYTES + 10)
    path = Path(job.runner.run(job._backend().job_logdir(job.name))) / result_file_name(job.name)
    marker = tmp_path / "ran"
    evil = pickle.dumps(Planted(marker))
    path.write_bytes(f"ptjob-result pickle {len(evil)} {'0' * 64}\n".encode() + evil)
    with pytest.raises(ResultError, match="not signed with the job's key"):
        job.result()
    assert not marker.exists()


def test_the_handle_shows_tensorboard_and_returns_its_url(
    fake: FakeBackend,  # noqa: F811 - the fixture imported above
    jupyter_server: dict[str, Any],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The magic's TensorBoard, from the handle: inline through the server, and the URL."""
    monkeypatch.setattr(runner_module, "_DEFAULT_RUNNER", None)
    fake.logdir = "/runs/demo"
    _FakeServer.known_jobs = True
    try:
        with capture_output() as captured:
            url = Job("demo").tensorboard()
        assert url == f"{jupyter_server['url']}pytorchjob/tensorboard/abc/"
        assert (
            '<iframe src="/a%40b/pytorchjob/tensorboard/abc/"'
            in (captured.outputs[0].data["text/html"])
        )
    finally:
        runner_module.default_runner().close()


# -- the example notebook on a real kernel ------------------------------------------------


def test_the_example_notebook_trains_on_two_nodes(tmp_path: Path) -> None:
    nb = nbformat.read(ROOT / "examples" / "train_function.ipynb", as_version=4)
    client = NotebookClient(
        nb, kernel_name="python3", timeout=180, resources={"metadata": {"path": str(tmp_path)}}
    )
    env = kernel_env(tmp_path / "home")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    try:
        client.execute(env=env)
    finally:
        with contextlib.suppress(Exception):
            for job in (tmp_path / "home" / "jobs").iterdir():
                subprocess.run(
                    [sys.executable, "-m", "jupyter_pytorchjob.cli", "delete", job.name],
                    env=env,
                    check=False,
                    capture_output=True,
                    timeout=60,
                )
    code = [c for c in nb.cells if c.cell_type == "code"]
    submitted = text_of(code[2].outputs)
    assert "train_func() on 2 node(s) (1 master + 1 worker) on the local backend" in submitted
    assert "NeuralNetwork (class source)" in submitted and "NUM_SAMPLES (constant)" in submitted
    logs = text_of(code[3].outputs)
    assert "master-0 | epoch: 2, loss:" in logs and "worker-0 | epoch: 2, loss:" in logs
    assert text_of(code[4].outputs).strip() == "'Succeeded'"
    result = code[5].outputs[0]["data"]["text/plain"]
    assert result.startswith("{'world_size': 2, 'losses': [")
    assert "Succeeded" in text_of(code[6].outputs)


# -- the fake Kubernetes API --------------------------------------------------------------


def env_value(manifest: Any, name: str) -> str | None:
    """The value of env var ``name`` anywhere in a manifest."""
    if isinstance(manifest, dict):
        if manifest.get("name") == name and isinstance(manifest.get("value"), str):
            return str(manifest["value"])
        values = manifest.values()
    elif isinstance(manifest, list):
        values = manifest
    else:
        return None
    return next((v for v in map(lambda m: env_value(m, name), values) if v is not None), None)


NOTEBOOK_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "nb-0", "namespace": "team-a", "labels": {"notebook-name": "nb"}},
    "spec": {
        "containers": [{"name": "nb", "image": "nb:1", "volumeMounts": []}],
        "volumes": [{"name": "ws", "persistentVolumeClaim": {"claimName": "workspace"}}],
    },
    "status": {"phase": "Running"},
}


@pytest.mark.parametrize(
    ("kind", "plural"), [("PyTorchJob", "pytorchjobs"), ("TrainJob", "trainjobs")]
)
def test_submit_status_result_and_delete_through_the_fake_api(
    cell: types.ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    plural: str,
) -> None:
    """The fake runs no pods: this test plays rank 0 by running the job's own script
    with the PVC as a local directory - the notebook pod mounts the same claim there,
    so ``result()`` finds the file as it would in a cluster."""
    if kind == "TrainJob":
        # The fake plays Trainer v2 from the real CRDs and shipped runtimes (../shared):
        # skipped in a bare clone, a failure in CI (PTJOB_REQUIRE_CRDS=1).
        require_crds(TRAINJOB_CRD)
    kube = FakeKubeThread()
    ws = tmp_path / "ws"
    ws.mkdir()
    pod = json.loads(json.dumps(NOTEBOOK_POD))
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "ws", "mountPath": str(ws)}]
    try:
        kube.call(kube.fake.add, pod)
        kube.call(kube.fake.seed_pvc, "team-a", "workspace")
        monkeypatch.setenv("KUBECONFIG", str(kube.fake.write_kubeconfig(tmp_path / "kubeconfig")))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        monkeypatch.setattr(runner_module, "_DEFAULT_RUNNER", None)
        # The notebook's own pod is found from HOSTNAME in a cluster; here it is named.
        monkeypatch.setattr(
            backend_choice, "open_backend", lambda name, ns=None: KubernetesBackend(self_pod="nb-0")
        )
        job = submit(
            cell.train,
            backend="kubernetes",
            kind=kind,
            nodes=2,
            image="pytorch/pytorch:2.5.1",
            pvc=["workspace:/mnt/ws"],
            args={"n": 5, "tag": "kube"},
        )
        manifest = kube.fake.get(plural, "team-a", job.name)
        script = env_value(manifest, "PTJOB_SCRIPT")
        assert script is not None and "def train(" in script and "class Net(" in script
        logdir = env_value(manifest, "PTJOB_LOGDIR")
        assert logdir == f"/mnt/ws/runs/{job.name}"
        assert job.status().state in ("Created", "Submitted")
        assert job.suspend() == "Suspended"
        assert job.resume() != "Suspended"

        with pytest.raises(ResultError, match="call wait"):
            job.result()
        local_logdir = ws / "runs" / job.name
        run_dir = tmp_path / "rank0"
        run_dir.mkdir()
        (run_dir / "main.py").write_text(script)
        env = {**os.environ, "PTJOB_LOGDIR": str(local_logdir)}
        rank0 = subprocess.run(
            [sys.executable, "main.py"],
            cwd=run_dir,
            env=env,
            check=True,
            timeout=120,
            capture_output=True,
        )
        simulator = kube.fake.operator if kind == "PyTorchJob" else kube.fake.trainer
        kube.call(simulator.run, "team-a", job.name)
        # What rank 0 printed is its pod's log (every pod's here: the chief's is read).
        for pod in kube.call(simulator.pods, "team-a", job.name):
            container = pod["spec"]["containers"][0]["name"]
            kube.call(
                kube.fake.append_log, "team-a", pod["metadata"]["name"], container, rank0.stdout
            )
        kube.call(simulator.succeed, "team-a", job.name)
        assert job.wait(timeout=30) == "Succeeded"
        value = job.result()
        assert value["n"] == 5 and value["tag"] == "kube" and value["h"] == 15.0
        assert [j.name for j in Job.list(backend="kubernetes")] == [job.name]
        job.delete()
        assert kube.fake.get(plural, "team-a", job.name) is None
    finally:
        with contextlib.suppress(Exception):
            runner_module.default_runner().close()
        kube.stop()


def test_the_bootstrap_uses_only_the_standard_library_and_torch() -> None:
    source = (ROOT / "jupyter_pytorchjob" / "function" / "bootstrap.py").read_text()
    imports = {
        line.split()[1].split(".")[0]
        for line in textwrap.dedent(source).splitlines()
        if line.strip().startswith(("import ", "from "))
        for line in [line.strip()]
    }
    stdlib = {"base64", "hashlib", "hmac", "inspect", "json", "os", "pickle", "sys", "pathlib"}
    stdlib |= {"typing", "atexit", "threading"}
    assert imports <= stdlib | {"torch", "collections"}
