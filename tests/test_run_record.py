"""A run's record (``GET jobs/{name}/run``): what ``report(hparams=, checkpoint=,
artifact=, mode=)`` printed on rank 0, read back from the chief replica's log on both
backends (a real local job; a pod of the fake API server), and what Lightning / Hugging
Face wrote in the job's log directory. The job's words are untrusted: bounded, checked."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from jupyter_pytorchjob import report
from jupyter_pytorchjob.backends.run_files import library_files
from jupyter_pytorchjob.job.run import (
    MAX_CHECKPOINTS,
    MAX_HPARAMS,
    MAX_LINE,
    RUN_MARK,
    RunLog,
    run_wire,
)

from .both_backends import backend_name, jp_server_config
from .test_openapi import DOC, inline

__all__ = ["backend_name", "jp_server_config"]  # fixtures

API = ("pytorchjob", "api")
NS = "team-a"
RUN_SCHEMA = inline(DOC["components"]["schemas"]["RunRecord"])


def run_line(**said: Any) -> str:
    return RUN_MARK + json.dumps(said)


# -- the reporter -------------------------------------------------------------------------


def test_report_prints_one_run_line_on_rank_0_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBEFLOW_TRAINER_SERVER_URL", raising=False)
    monkeypatch.delenv("RANK", raising=False)
    assert report(hparams={"lr": 1e-3, "optim": {"name": "adam"}}) is True
    assert report(checkpoint="/ckpt/step-10", step=10, loss=0.5, acc=float("nan")) is True
    assert report(artifact="/out/model.onnx", name="model") is True
    assert report(mode={"acc": "max"}) is True
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and all(line.startswith(RUN_MARK) for line in lines)
    log = RunLog()
    log.feed(lines)
    record = log.record
    assert record.hparams == {"lr": 1e-3, "optim.name": "adam"}
    (checkpoint,) = record.checkpoints
    assert (checkpoint.path, checkpoint.step, checkpoint.metrics) == (
        "/ckpt/step-10",
        10,
        {"loss": 0.5},
    )
    assert checkpoint.time == pytest.approx(time.time(), abs=60)
    assert record.artifacts["model"].path == "/out/model.onnx"
    assert record.modes == {"acc": "max"}

    monkeypatch.setenv("RANK", "1")
    assert report(hparams={"lr": 1}) is False
    assert capsys.readouterr().out == ""


def test_report_refuses_a_line_too_long_and_never_raises(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RANK", raising=False)
    assert report(hparams={"text": "x" * MAX_LINE}) is False
    assert report(hparams={"bad": float("inf")}) is False
    assert capsys.readouterr().out == ""


# -- reading the lines back: untrusted ----------------------------------------------------


def test_hostile_run_lines_are_bounded_and_counted() -> None:
    log = RunLog()
    log.feed(
        [
            RUN_MARK + "[" * 5000 + "]" * 5000,  # nested too deep
            RUN_MARK + "not json",
            RUN_MARK + "x" * MAX_LINE,  # too long to be whole
            run_line(hparams={f"p{i}": i for i in range(MAX_HPARAMS + 5)}),
            run_line(
                hparams={"": 1, "ok": {"deep": {"deeper": {"deepest": 1}}}, "long": "y" * 1000}
            ),
            run_line(checkpoint={"path": ""}),
            run_line(checkpoint={"path": "/c\x00"}),
            run_line(artifact={"path": "/a", "name": "\n"}),
            run_line(mode={"acc": "up"}),
            "\r" + run_line(hparams={"redrawn": True}),  # a redraw line is read too
            "some other line " + run_line(hparams={"inside": 1}),  # not at the start: not ours
        ]
    )
    for i in range(MAX_CHECKPOINTS + 3):
        log.feed([run_line(checkpoint={"path": f"/c/{i}", "step": i, "time": i})])
    record = log.record
    assert len(record.hparams) == MAX_HPARAMS
    assert "inside" not in record.hparams and "redrawn" not in record.hparams  # full
    assert len(record.checkpoints) == MAX_CHECKPOINTS
    assert record.checkpoints[-1].path == f"/c/{MAX_CHECKPOINTS + 2}"  # the newest kept
    assert record.checkpoints[0].path == "/c/3"
    assert record.artifacts == {} and record.modes == {}
    # 3 bad lines, 5+3 hparams over the bound ("", "ok.deep.deeper" not a plain value
    # counts too), 2 bad checkpoints, 1 artifact, 1 mode, 2 redrawn/inside, 3 old checkpoints
    assert record.dropped >= 3 + 5 + 2 + 1 + 1 + 3


def test_hparams_are_flattened_cut_and_merged() -> None:
    log = RunLog()
    log.feed(
        [
            run_line(hparams={"lr": 0.1, "optim": {"name": "adam", "betas": [0.9, 0.99]}}),
            run_line(hparams={"lr": 0.2, "note": "z" * 1000, "obj": {"a": {"b": {"c": 1}}}}),
        ]
    )
    hparams = log.record.hparams
    assert hparams["lr"] == 0.2  # a later report wins
    assert hparams["optim.betas"] == [0.9, 0.99]
    assert len(hparams["note"]) == 256 and hparams["note"].endswith("…")
    assert "obj.a.b" not in hparams and log.record.dropped == 1  # deeper than 3 levels


# -- what libraries write ------------------------------------------------------------------


def test_lightning_and_hugging_face_files_in_the_log_directory(tmp_path: Path) -> None:
    logdir = tmp_path / "logs"
    version = logdir / "lightning_logs" / "version_0"
    (version / "checkpoints").mkdir(parents=True)
    (version / "hparams.yaml").write_text("lr: 0.01\nbatch_size: 32\nmodel:\n  layers: 4\n")
    (version / "checkpoints" / "epoch=2-step=300.ckpt").write_bytes(b"not read")
    hf = logdir / "hf" / "checkpoint-500"
    hf.mkdir(parents=True)
    (hf / "trainer_state.json").write_text(
        json.dumps(
            {
                "global_step": 500,
                "train_batch_size": 8,
                "num_train_epochs": 3,
                "log_history": [
                    {"loss": 0.9, "step": 250},
                    {"loss": 0.4, "epoch": 1.0, "step": 500},
                ],
            }
        )
    )
    (hf / "training_args.bin").write_bytes(b"\x80\x04 a pickle: never read")
    # A Python tag (an object Lightning could not write as YAML): the file is left out.
    tagged = logdir / "lightning_logs" / "version_1"
    tagged.mkdir()
    (tagged / "hparams.yaml").write_text("evil: !!python/object/apply:os.system ['true']\n")
    # A link out of the log directory is not followed.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "hparams.yaml").write_text("secret: 1\n")
    (logdir / "linked").symlink_to(outside)

    found = library_files(logdir, "/mnt/ws/runs/a")
    assert found.hparams == {
        "lr": 0.01,
        "batch_size": 32,
        "model.layers": 4,
        "train_batch_size": 8,
        "num_train_epochs": 3,
    }
    paths = {c.path: c for c in found.checkpoints}
    assert set(paths) == {
        "/mnt/ws/runs/a/lightning_logs/version_0/checkpoints/epoch=2-step=300.ckpt",
        "/mnt/ws/runs/a/hf/checkpoint-500",
    }
    lightning = paths["/mnt/ws/runs/a/lightning_logs/version_0/checkpoints/epoch=2-step=300.ckpt"]
    assert (lightning.step, lightning.source) == (300, "lightning")
    hugging = paths["/mnt/ws/runs/a/hf/checkpoint-500"]
    assert (hugging.step, hugging.metrics, hugging.source) == (500, {"loss": 0.4}, "huggingface")


def test_run_wire_holds_the_document() -> None:
    log = RunLog()
    log.feed([run_line(hparams={"lr": 1}, checkpoint={"path": "/c", "step": 1, "time": 5.0})])
    body = run_wire(
        log.record, {"metrics": {"loss": 0.5}}, {"loss": [{"time": 1.0, "step": 1, "value": 0.5}]}
    )
    assert [e.message for e in Draft202012Validator(RUN_SCHEMA).iter_errors(body)] == []
    assert body["metrics"]["final"] == {"loss": 0.5}


# -- GET jobs/{name}/run, both backends ---------------------------------------------------

SCRIPT = textwrap.dedent(
    """
    import os
    from jupyter_pytorchjob import report
    report(hparams={"lr": 0.01, "batch_size": 16}, mode={"acc": "max"})
    print("{'loss': 0.5, 'acc': 0.75, 'epoch': 1.0}", flush=True)
    report(checkpoint=os.environ.get("PTJOB_LOGDIR", "/tmp") + "/ckpt-1", step=1, loss=0.5)
    report(artifact="/tmp/model.onnx", name="model")
    """
)


async def run_of(jp_fetch: Any, name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((await jp_fetch(*API, "jobs", name, "run")).body)
    assert [e.message for e in Draft202012Validator(RUN_SCHEMA).iter_errors(body)] == []
    return body


async def test_the_run_record_over_rest(
    jp_fetch: Any, jp_serverapp: Any, backend_name: str, request: pytest.FixtureRequest
) -> None:
    backend = jp_serverapp.web_app.settings["pytorchjob_backend"]
    body = {"name": "rec", "nodes": 1, "shm": "off", "command": [sys.executable, "-c", SCRIPT]}
    await jp_fetch(*API, "jobs", method="POST", body=json.dumps(body))
    try:
        if backend_name == "kubernetes":
            fake = request.getfixturevalue("fake_kube")
            fake.operator.run(NS, "rec")
            # What the script prints, as the pod's log (the fake runs no processes).
            lines = [
                run_line(hparams={"lr": 0.01, "batch_size": 16}, mode={"acc": "max"}),
                "{'loss': 0.5, 'acc': 0.75, 'epoch': 1.0}",
                run_line(
                    checkpoint={
                        "path": "/tmp/ckpt-1",
                        "step": 1,
                        "time": 5.0,
                        "metrics": {"loss": 0.5},
                    }
                ),
                run_line(artifact={"path": "/tmp/model.onnx", "name": "model", "time": 6.0}),
            ]
            fake.append_log(NS, "rec-master-0", "pytorch", "\n".join(lines) + "\n")
            fake.operator.succeed(NS, "rec")
        await backend.wait("rec", timeout=60)
        deadline = time.monotonic() + 30
        while True:
            run = await run_of(jp_fetch, "rec")
            if run["artifacts"] or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        assert run["hparams"] == {"lr": 0.01, "batch_size": 16}
        assert run["modes"] == {"acc": "max"}
        (checkpoint,) = run["checkpoints"]
        assert checkpoint["path"].endswith("ckpt-1") and checkpoint["step"] == 1
        assert checkpoint["metrics"] == {"loss": 0.5} and checkpoint["source"] == "report"
        assert run["artifacts"] == [
            {"name": "model", "path": "/tmp/model.onnx", "time": run["artifacts"][0]["time"]}
        ]
        assert run["dropped"] == 0
    finally:
        await backend.delete_job("rec")


async def test_the_run_of_a_missing_job_is_404(jp_fetch: Any, backend_name: str) -> None:
    from tornado.httpclient import HTTPClientError

    with pytest.raises(HTTPClientError) as err:
        await jp_fetch(*API, "jobs", "nosuch", "run")
    assert err.value.code == 404


def test_lightning_files_of_a_local_job(tmp_path: Path, jp_asyncio_loop: Any) -> None:
    """A local job's log directory is its claim's directory: Lightning's files there
    are in its run, with paths as the job names its log directory."""
    from jupyter_pytorchjob.backends.local import LocalBackend
    from jupyter_pytorchjob.job import JobSpec

    backend = LocalBackend(root=tmp_path / "home", volume_root=tmp_path / "volumes")
    version = tmp_path / "volumes" / "logs" / "a" / "lightning_logs" / "version_0"
    script = (
        "import os, pathlib;"
        "d = pathlib.Path(os.environ['PTJOB_LOGDIR'], 'lightning_logs', 'version_0');"
        "d.mkdir(parents=True); (d / 'hparams.yaml').write_text('hidden_dim: 64\\n');"
        "(d / 'epoch=0-step=10.ckpt').write_bytes(b'x')"
    )
    spec = JobSpec.from_wire(
        {
            "name": "light",
            "shm": "off",
            "command": [sys.executable, "-c", script],
            "pvc": [{"claim": "logs", "mountPath": "/mnt/logs"}],
            "logdir": "/mnt/logs/a",
        }
    )

    async def scenario() -> Any:
        await backend.submit(spec)
        try:
            await backend.wait("light", timeout=60)
            return await backend.run_record("light")
        finally:
            await backend.delete_job("light")

    record = jp_asyncio_loop.run_until_complete(scenario())
    assert (version / "hparams.yaml").exists()
    assert record.hparams == {"hidden_dim": 64}
    (checkpoint,) = record.checkpoints
    assert checkpoint.path == "/mnt/logs/a/lightning_logs/version_0/epoch=0-step=10.ckpt"
    assert (checkpoint.step, checkpoint.source) == (10, "lightning")
