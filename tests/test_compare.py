"""Comparing jobs: ``GET compare`` on a real server with real local jobs, the pure
comparison (metrics, best values), and one TensorBoard over several jobs (``POST
tensorboards`` with ``jobs``: the real TensorBoard, a run per job)."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_pytorchjob.job.compare import (
    ComparedJob,
    compare_jobs,
    compared_metrics,
    differing_parameters,
)
from jupyter_pytorchjob.tensorboard.handlers import MANAGER_SETTING, RESOLVER_SETTING
from jupyter_pytorchjob.tensorboard.manager import TensorBoardManager

API = ("pytorchjob", "api")


def jobs_query(*names: str) -> list[tuple[str, str]]:
    """``?job=a&job=b`` (pytest-jupyter's fetch encodes a list of pairs as given)."""
    return [("job", name) for name in names]


async def get(jp_fetch: Any, *path: str, **kwargs: Any) -> Any:
    return json.loads((await jp_fetch(*API, *path, **kwargs)).body)


async def refused(jp_fetch: Any, *path: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(*API, *path, **kwargs)
    return info.value.code, json.loads(info.value.response.body)


@pytest.fixture
def jobs_deleted(jp_serverapp: Any, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Every job a test submitted is deleted afterwards, also when it fails."""
    yield
    backend = jp_serverapp.web_app.settings["pytorchjob_backend"]
    for job in jp_asyncio_loop.run_until_complete(backend.list_jobs()):
        jp_asyncio_loop.run_until_complete(backend.delete_job(job.name))


async def submit_finished(jp_fetch: Any, body: dict[str, Any]) -> None:
    body = {"shm": "off", "command": ["python", "-c", "pass"], **body}
    await jp_fetch(*API, "jobs", method="POST", body=json.dumps(body))
    deadline = time.monotonic() + 60
    while (await get(jp_fetch, "jobs", body["name"]))["state"] not in ("Succeeded", "Failed"):
        assert time.monotonic() < deadline, f"{body['name']} did not finish"
        await asyncio.sleep(0.2)


@pytest.mark.slow
async def test_compare_two_real_jobs(jp_fetch: Any, jobs_deleted: None) -> None:
    await submit_finished(
        jp_fetch, {"name": "lr-a", "args": ["--lr", "0.1"], "env": {"SEED": "1", "LR": "0.1"}}
    )
    await submit_finished(
        jp_fetch, {"name": "lr-b", "args": ["--lr", "0.01"], "env": {"SEED": "1"}, "nodes": 2}
    )
    answer = await get(jp_fetch, "compare", params=jobs_query("lr-b", "lr-a"))
    assert [job["name"] for job in answer["jobs"]] == ["lr-b", "lr-a"]
    assert [job["state"] for job in answer["jobs"]] == ["Succeeded", "Succeeded"]
    rows = {row["field"]: row["values"] for row in answer["parameters"]}
    # Only what differs, from each job's manifest read back: the same SEED is no row.
    assert rows == {
        "args": [["--lr", "0.01"], ["--lr", "0.1"]],
        "nodes": [2, 1],
        "env.LR": [None, "0.1"],
    }
    assert answer["metrics"] == []  # these jobs report nothing


async def test_compare_real_jobs_by_their_reported_hparams(
    jp_fetch: Any, jobs_deleted: None
) -> None:
    """Two real jobs that report their configuration (and log lr as a metric too): the
    reported hparams lead, lr is never "best", a tie in acc marks nobody."""
    script = (
        "import sys; from jupyter_pytorchjob import report; lr = float(sys.argv[1]); "
        "report(hparams={'lr': lr, 'model': 'mlp'}); "
        "print({'loss': lr * 2, 'lr': lr, 'acc': 0.5}, flush=True)"
    )
    for name, lr in (("hp-a", "0.1"), ("hp-b", "0.2")):
        await submit_finished(jp_fetch, {"name": name, "command": ["python", "-c", script, lr]})
    deadline = time.monotonic() + 30
    while True:  # each job's final metrics, written by its supervisor as it ends
        answer = await get(jp_fetch, "compare", params=jobs_query("hp-a", "hp-b"))
        acc = [row for row in answer["metrics"] if row["name"] == "acc"]
        if (acc and None not in acc[0]["values"]) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert answer["hparams"] == [{"name": "lr", "values": [0.1, 0.2]}]
    assert [row["field"] for row in answer["parameters"]] == ["command"]
    rows = {row["name"]: row for row in answer["metrics"]}
    assert rows["loss"]["best"] == 0
    assert rows["lr"]["scored"] is False and rows["lr"]["best"] is None
    assert rows["acc"]["best"] is None  # a tie


async def test_compare_refuses_what_it_cannot_compare(jp_fetch: Any, jobs_deleted: None) -> None:
    for names in (["one"], ["a", "a"], [], ["ok", "Not_A_Name"]):
        code, body = await refused(jp_fetch, "compare", params=jobs_query(*names))
        assert code == 400 and body["field"] == "job", (names, body)
    many = [f"j{i}" for i in range(21)]
    code, body = await refused(jp_fetch, "compare", params=jobs_query(*many))
    assert code == 400 and "at most 20" in body["message"]
    code, body = await refused(jp_fetch, "compare", params=jobs_query("nope", "neither"))
    assert code == 404 and "nope" in body["message"]


def test_metrics_mark_the_best_value_per_row() -> None:
    def progress(key: str | None, **metrics: Any) -> dict[str, Any]:
        return {"keyMetric": key, "metrics": metrics}

    rows = compared_metrics(
        [
            progress("loss", loss=0.5, accuracy=0.9, val_error=0.1),
            None,
            progress("loss", loss=0.2, accuracy=0.95, val_error=0.1, lr=1e-4),
        ]
    )
    by_name = {row["name"]: row for row in rows}
    assert [row["name"] for row in rows] == ["loss", "accuracy", "val_error", "lr"]
    assert by_name["loss"] == {
        "name": "loss",
        "values": [0.5, None, 0.2],
        "lowerIsBetter": True,
        "scored": True,
        "best": 2,
    }
    assert by_name["accuracy"]["best"] == 2 and not by_name["accuracy"]["lowerIsBetter"]
    assert by_name["val_error"]["best"] is None  # a tie marks nobody
    assert by_name["lr"]["values"] == [None, None, 1e-4]
    assert by_name["lr"]["scored"] is False and by_name["lr"]["best"] is None  # a setting
    assert compared_metrics([None, {"metrics": {"x": float("nan")}}]) == [
        {"name": "x", "values": [None, None], "lowerIsBetter": False, "scored": True, "best": None}
    ]


def test_reported_hparams_come_first_and_are_never_best() -> None:
    """What the runs reported (their run records) leads; a hyperparameter also logged as
    a scalar is not scored; a reported mode says which way a metric is better."""

    def job(name: str, metrics: dict[str, float], run: dict[str, Any] | None) -> ComparedJob:
        wire = {"name": name, "state": "Succeeded", "progress": {"metrics": metrics}}
        return ComparedJob(wire, {"name": name, "nodes": 1}, run)

    answer = compare_jobs(
        [
            job(
                "a",
                {"dropout": 0.1, "acc_err": 0.3},
                {"hparams": {"dropout": 0.1, "batch": 32}, "modes": {"acc_err": "max"}},
            ),
            job("b", {"dropout": 0.2, "acc_err": 0.4}, {"hparams": {"dropout": 0.2, "batch": 32}}),
            job("c", {"dropout": 0.3, "acc_err": 0.2}, None),
        ]
    )
    assert answer["hparams"] == [
        {"name": "dropout", "values": [0.1, 0.2, None]},
        {"name": "batch", "values": [32, 32, None]},  # c reported none
    ]
    assert answer["parameters"] == []  # the specs are the same
    rows = {row["name"]: row for row in answer["metrics"]}
    assert rows["dropout"]["scored"] is False and rows["dropout"]["best"] is None
    # "err" in the name would say lower; the run said max.
    assert rows["acc_err"]["lowerIsBetter"] is False and rows["acc_err"]["best"] == 1


def test_parameters_compare_maps_key_by_key_and_skip_the_name() -> None:
    rows = differing_parameters(
        [
            {"name": "a", "env": {"A": "1", "B": "2"}, "gpus": 1, "pvc": [{"claim": "x"}]},
            {"name": "b", "env": {"A": "1"}, "gpus": 1, "pvc": [{"claim": "y"}]},
            None,
        ]
    )
    assert rows == [
        {"field": "env.A", "values": ["1", "1", None]},
        {"field": "env.B", "values": ["2", None, None]},
        {"field": "gpus", "values": [1, 1, None]},
        {"field": "pvc", "values": [[{"claim": "x"}], [{"claim": "y"}], None]},
    ]
    answer = compare_jobs(
        [
            ComparedJob({"name": "a", "state": "Running", "duration": 3.0}, {"nodes": 1}),
            ComparedJob({"name": "b", "state": "Failed", "logdir": "/r"}, {"nodes": 1}),
        ]
    )
    assert answer["jobs"] == [
        {"name": "a", "state": "Running", "duration": 3.0, "logdir": None},
        {"name": "b", "state": "Failed", "duration": None, "logdir": "/r"},
    ]
    assert answer["parameters"] == [] and answer["metrics"] == []


@pytest.fixture
def runs(jp_root_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two jobs' log directories under the server root, each with a ``loss`` scalar."""
    from torch.utils.tensorboard import SummaryWriter

    dirs = {}
    for name, value in (("exp-a", 1.0), ("exp-b", 0.5)):
        source = tmp_path_factory.mktemp(name)
        writer = SummaryWriter(log_dir=str(source))
        writer.add_scalar("loss", value, 0)
        writer.close()
        # Directories named unlike their jobs: the run names must come from the jobs.
        dirs[name] = jp_root_dir / "runs" / f"{name}-logs"
        shutil.copytree(source, dirs[name])
    return dirs


@pytest.fixture
def resolver(jp_serverapp: Any, runs: dict[str, Path], jp_root_dir: Path) -> None:
    """Job names -> log directories, as the backend's resolver answers them."""
    where = {name: str(path) for name, path in runs.items()}
    where["outside"] = "/"
    where["twin"] = str(runs["exp-a"])

    async def logdir(name: str) -> str:
        if name not in where:
            raise LookupError("no such job")
        return where[name]

    jp_serverapp.web_app.settings[RESOLVER_SETTING] = logdir


@pytest.mark.slow
async def test_one_tensorboard_over_several_jobs(
    jp_fetch: Any, jp_serverapp: Any, runs: dict[str, Path], resolver: None
) -> None:
    manager: TensorBoardManager = jp_serverapp.web_app.settings[MANAGER_SETTING]
    body = json.dumps({"jobs": ["exp-b", "exp-a"]})
    links: Path | None = None
    try:
        tb = await get(jp_fetch, "tensorboards", method="POST", body=body)
        assert tb["runs"] == {name: str(path.resolve()) for name, path in runs.items()}
        assert tb["jobs"] == ["exp-a", "exp-b"]
        assert tb["logdir"] == str((runs["exp-a"].parent).resolve())
        # The job names are TensorBoard's run names: a job's own directory is the run
        # ``exp-a`` (never ``exp-a/.``, issue 32).
        deadline = time.monotonic() + 30
        while True:
            tags = json.loads((await jp_fetch(tb["url"] + "data/plugin/scalars/tags")).body)
            if set(tags) == {"exp-a", "exp-b"}:
                break
            assert time.monotonic() < deadline, tags
            await asyncio.sleep(0.2)
        assert all("loss" in run for run in tags.values())
        instance = manager.get(tb["id"])
        links = instance.links if instance is not None else None
        assert links is not None and links.is_dir()
        # The same jobs in another order: the same TensorBoard.
        again = await get(
            jp_fetch, "tensorboards", method="POST", body=json.dumps({"jobs": ["exp-a", "exp-b"]})
        )
        assert (again["id"], again["pid"]) == (tb["id"], tb["pid"])
    finally:
        await manager.stop_all()
    # Only the links are gone with it, never what they point to.
    assert links is not None and not links.exists()
    assert all(path.is_dir() for path in runs.values())


@pytest.mark.slow
async def test_one_jobs_tensorboard_names_its_run_after_the_job(
    jp_fetch: Any, jp_serverapp: Any, runs: dict[str, Path], resolver: None
) -> None:
    """A job's TensorBoard names its run ``exp-a``, not ``.`` (issue 32), through the
    links Compare uses; opened again by its directory or as ``jobs``, it is the same
    TensorBoard."""
    manager: TensorBoardManager = jp_serverapp.web_app.settings[MANAGER_SETTING]
    try:
        tb = await get(jp_fetch, "tensorboards", method="POST", body=json.dumps({"job": "exp-a"}))
        assert tb["jobs"] == ["exp-a"]
        assert tb["logdir"] == str(runs["exp-a"].resolve())
        assert tb["runs"] == {"exp-a": str(runs["exp-a"].resolve())}
        deadline = time.monotonic() + 30
        tags_url = tb["url"] + "data/plugin/scalars/tags"
        while not (tags := json.loads((await jp_fetch(tags_url)).body)):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.2)
        assert set(tags) == {"exp-a"} and "loss" in tags["exp-a"]
        for body in ({"logdir": str(runs["exp-a"])}, {"jobs": ["exp-a"]}):
            again = await get(jp_fetch, "tensorboards", method="POST", body=json.dumps(body))
            assert (again["id"], again["pid"], again["jobs"]) == (tb["id"], tb["pid"], ["exp-a"])
        assert [i.id for i in manager.list()] == [tb["id"]]
    finally:
        await manager.stop_all()


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"jobs": "exp-a"}, 400, "non-empty list"),
        ({"jobs": []}, 400, "non-empty list"),
        ({"jobs": ["exp-a", "exp-a"]}, 400, "each job once"),
        ({"jobs": ["exp-a"], "logdir": "runs"}, 400, "'jobs' alone"),
        ({"jobs": ["exp-a", "Bad_Name"]}, 400, "Bad_Name"),
        ({"jobs": ["exp-a", "nope"]}, 404, "nope"),
        ({"jobs": ["exp-a", "outside"]}, 403, "outside the TensorBoard roots"),
        ({"jobs": ["exp-a", "twin"]}, 400, "share the log directory"),
        ({"jobs": [f"j{i}" for i in range(21)]}, 400, "at most 20"),
    ],
)
async def test_several_jobs_refused_naming_the_field(
    jp_fetch: Any,
    jp_serverapp: Any,
    resolver: None,
    body: dict[str, Any],
    status: int,
    message: str,
) -> None:
    code, answer = await refused(jp_fetch, "tensorboards", method="POST", body=json.dumps(body))
    # The field at fault: an unknown one, else the job list.
    field = "logdir" if "logdir" in body else "jobs"
    assert (code, answer["field"]) == (status, field), answer
    assert message in answer["message"]
    assert jp_serverapp.web_app.settings[MANAGER_SETTING].list() == []


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.slow
async def test_compare_reported_metrics_of_real_jobs(jp_fetch: Any, jobs_deleted: None) -> None:
    """Two runs of the reporting example: their final losses side by side, the lower one
    marked best, and --steps the one parameter that differs."""
    for name, steps in (("short", "5"), ("long", "40")):
        await submit_finished(
            jp_fetch,
            {
                "name": name,
                "workdir": str(EXAMPLES),
                "command": ["python", "progress_report.py", "--steps", steps, "--delay", "0"],
            },
        )
    answer = await get(jp_fetch, "compare", params=jobs_query("short", "long"))
    assert [row["field"] for row in answer["parameters"]] == ["command"]
    loss = next(row for row in answer["metrics"] if row["name"] == "loss")
    assert loss["lowerIsBetter"] is True
    values = loss["values"]
    assert all(isinstance(v, float) for v in values), values
    assert loss["best"] == values.index(min(values))
