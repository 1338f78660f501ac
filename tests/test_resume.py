"""Resuming from a checkpoint: ``ptjob clone NAME --from-checkpoint PATH``,
``job.clone(from_checkpoint=)``, ``%ptjob clone`` make a new job with
``PTJOB_RESUME_FROM``; a function job's function gets it as ``resume_from=``. And the
run record from the command line and Python (``ptjob run``, ``job.run()``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob import submit
from jupyter_pytorchjob.job.clone import RESUME_ENV, clone_body, clone_name
from jupyter_pytorchjob.job.errors import JobSpecInvalid

from .test_function_api import cell_module, local_home  # noqa: F401 - fixture

PTJOB = Path(sys.executable).with_name("ptjob")

CELL = """
from jupyter_pytorchjob import report


def resumable(lr=0.1, resume_from=None):
    report(hparams={"lr": lr, "optimizer": "sgd"})
    report(checkpoint="/ckpt/epoch-1", step=10, loss=0.5)
    return resume_from


def no_parameter():
    import os

    return os.environ.get("PTJOB_RESUME_FROM")
"""


@pytest.fixture(scope="module")
def cell(tmp_path_factory: pytest.TempPathFactory) -> types.ModuleType:
    return cell_module(tmp_path_factory.mktemp("cell"), "ptjob_resume_cell", CELL)


def test_clone_names_count_up_past_taken_ones() -> None:
    assert clone_name("train", []) == "train-2"
    assert clone_name("train", ["train-2", "train-3"]) == "train-4"
    assert clone_name("train-2", ["train-2"]) == "train-3"


def test_a_clone_body_moves_the_log_directory_and_sets_the_checkpoint() -> None:
    body = {"name": "a", "logdir": "/mnt/logs/a/tb", "env": {"X": "1"}, "nodes": 2}
    clone = clone_body(body, name="a-2", resume_from="/mnt/logs/a/ckpt")
    assert clone == {
        "name": "a-2",
        "logdir": "/mnt/logs/a-2/tb",
        "env": {"X": "1", RESUME_ENV: "/mnt/logs/a/ckpt"},
        "nodes": 2,
    }
    assert body["env"] == {"X": "1"}  # the original untouched
    # A log directory that does not hold the name as a part stays.
    assert clone_body({"name": "a", "logdir": "/mnt/ab"}, name="a-2")["logdir"] == "/mnt/ab"
    with pytest.raises(JobSpecInvalid) as err:
        clone_body(body, name="a-2", resume_from="bad\npath")
    assert err.value.errors[0].field == "fromCheckpoint"


def test_a_function_clone_gets_resume_from_and_the_run_record(
    cell: types.ModuleType,
    local_home: Path,  # noqa: F811 - the fixture
) -> None:
    job = submit(cell.resumable, args={"lr": 0.25})
    assert job.wait(timeout=120) == "Succeeded"
    assert job.result() is None
    run = job.run()
    assert run["hparams"] == {"lr": 0.25, "optimizer": "sgd"}
    (checkpoint,) = run["checkpoints"]
    assert (checkpoint["path"], checkpoint["step"]) == ("/ckpt/epoch-1", 10)
    assert "Hyperparameters:" in repr(run) and "/ckpt/epoch-1" in repr(run)
    assert "<table>" in run._repr_html_()

    clone = job.clone(from_checkpoint=checkpoint["path"])
    assert clone.name == f"{job.name}-2"
    assert clone.wait(timeout=120) == "Succeeded"
    assert clone.result() == "/ckpt/epoch-1"  # handed to the function as resume_from=


def test_a_function_without_the_parameter_finds_the_variable(
    cell: types.ModuleType,
    local_home: Path,  # noqa: F811 - the fixture
) -> None:
    job = submit(cell.no_parameter)
    assert job.wait(timeout=120) == "Succeeded"
    clone = job.clone(name="plain-resumed", from_checkpoint="/ckpt/x")
    assert clone.wait(timeout=120) == "Succeeded"
    assert clone.result() == "/ckpt/x"


def ptjob(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PTJOB_HOME": str(home), "PTJOB_BACKEND": "local"}
    return subprocess.run(
        [str(PTJOB), *args], capture_output=True, text=True, timeout=120, env=env, check=False
    )


SCRIPT = (
    "import os; from jupyter_pytorchjob import report; "
    "report(hparams={'lr': 0.5}); report(checkpoint='/ckpt/one', step=3, loss=0.25); "
    "print('resumed from', os.environ.get('PTJOB_RESUME_FROM'))"
)


def test_ptjob_run_and_clone_from_a_checkpoint(tmp_path: Path) -> None:
    home = tmp_path / "home"
    try:
        done = ptjob(
            home, "submit", "--name", "cli", "--shm", "off", "--", sys.executable, "-c", SCRIPT
        )
        assert done.returncode == 0, done.stderr
        assert ptjob(home, "wait", "cli", "--timeout", "100").returncode == 0
        shown = ptjob(home, "run", "cli")
        assert shown.returncode == 0, shown.stderr
        assert "Hyperparameters:" in shown.stdout and "lr    0.5" in shown.stdout
        assert "/ckpt/one" in shown.stdout and "loss=0.25" in shown.stdout
        assert "ptjob clone cli --from-checkpoint PATH" in shown.stdout

        cloned = ptjob(home, "clone", "cli", "--from-checkpoint", "/ckpt/one")
        assert cloned.returncode == 0, cloned.stderr
        assert cloned.stdout.strip() == "cli-2"
        assert ptjob(home, "wait", "cli-2", "--timeout", "100").returncode == 0
        assert "resumed from /ckpt/one" in ptjob(home, "logs", "cli-2").stdout

        refused = ptjob(home, "clone", "cli", "--from-checkpoint", "a\tb")
        assert refused.returncode == 2
        assert "from" in refused.stderr.lower() and "printable" in refused.stderr
        missing = ptjob(home, "run", "nosuch")
        assert missing.returncode == 1 and "nosuch" in missing.stderr
    finally:
        for name in ("cli", "cli-2"):
            ptjob(home, "delete", name)


def test_a_cluster_clone_carries_the_checkpoint(fake_kube: Any, jp_asyncio_loop: Any) -> None:
    from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend
    from jupyter_pytorchjob.job import JobSpec

    backend = KubernetesBackend()

    async def scenario() -> dict[str, Any]:
        try:
            await backend.submit(
                JobSpec.from_wire(
                    {
                        "name": "kc",
                        "command": ["python", "train.py"],
                        "pvc": [{"claim": "ws", "mountPath": "/mnt/ws"}],
                        "logdir": "/mnt/ws/kc",
                    }
                )
            )
            clone = await backend.clone("kc", resume_from="/mnt/ws/kc/ckpt-9")
            assert clone.name == "kc-2"
            info = await backend.get_job("kc-2")
            assert info.manifest is not None
            return dict(info.manifest)
        finally:
            await backend.close()

    manifest = jp_asyncio_loop.run_until_complete(scenario())
    container = manifest["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][
        0
    ]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env[RESUME_ENV] == "/mnt/ws/kc/ckpt-9"
    assert env["PTJOB_LOGDIR"] == "/mnt/ws/kc-2"
    assert json.dumps(manifest).count("/mnt/ws/kc/") == 1  # only the checkpoint's path


def test_ptjob_run_and_clone_magics(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``%ptjob run NAME`` returns the record (tables); ``%ptjob clone NAME
    --from-checkpoint PATH`` submits the copy and returns its handle."""
    from IPython.core.interactiveshell import InteractiveShell

    from jupyter_pytorchjob.backends.local import LocalBackend
    from jupyter_pytorchjob.frontends import backend_choice

    from .test_magics import runner_of

    shell = InteractiveShell.instance()
    backend = LocalBackend(root=tmp_path / "home")
    monkeypatch.setattr(backend_choice, "open_backend", lambda name, namespace=None: backend)
    shell.run_line_magic("load_ext", "jupyter_pytorchjob")
    runner = runner_of(shell)
    script = SCRIPT.replace('"', "'")
    try:
        shell.run_line_magic(
            "ptjob", f'submit --name mag --shm off -- {sys.executable} -c "{script}"'
        )
        runner.run(backend.wait("mag", timeout=60))
        run = shell.run_line_magic("ptjob", "run mag")
        assert run["hparams"] == {"lr": 0.5}
        assert "/ckpt/one" in run._repr_html_()
        capsys.readouterr()
        clone = shell.run_line_magic("ptjob", "clone mag --from-checkpoint /ckpt/one")
        assert clone.name == "mag-2"
        assert capsys.readouterr().out == "Submitted mag-2, a copy of mag.\n"
        runner.run(backend.wait("mag-2", timeout=60))
        assert "resumed from /ckpt/one" in clone.logs()
    finally:
        for job in runner.run(backend.list_jobs()):
            runner.run(backend.delete_job(job.name))
        shell.run_line_magic("unload_ext", "jupyter_pytorchjob")
