"""Clones: the name and log directory (pure), and GET jobs/{name}/clone (Clone & edit,
Resume from here)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_pytorchjob.job.clone import RESUME_ENV, clone_body, clone_name
from jupyter_pytorchjob.job.spec import max_name_length


@pytest.mark.parametrize(
    ("name", "taken", "expected"),
    [
        ("train", [], "train-2"),
        ("train", ["train-2", "train-3"], "train-4"),
        ("train-2", ["train"], "train-3"),
        ("train-9", [], "train-10"),
        ("a" * 63, [], "a" * 61 + "-2"),
    ],
)
def test_the_clone_takes_the_next_free_number(name: str, taken: list[str], expected: str) -> None:
    assert clone_name(name, taken) == expected


@pytest.mark.parametrize(
    ("logdir", "expected"),
    [
        ("/mnt/logs/board", "/mnt/logs/board-2"),
        ("/mnt/board/runs", "/mnt/board-2/runs"),
        ("/mnt/logs/board-tb", "/mnt/logs/board-2-tb"),
        ("/mnt/logs/keyboard", "/mnt/logs/keyboard"),  # not the job's name
        ("/mnt/logs/shared", "/mnt/logs/shared"),
    ],
)
def test_a_log_directory_naming_the_job_moves_with_it(logdir: str, expected: str) -> None:
    body = {"name": "board", "command": ["python", "t.py"], "logdir": logdir}
    clone = clone_body(body, name="board-2")
    assert clone == {**body, "name": "board-2", "logdir": expected}
    assert body["name"] == "board", "the job's own body is left alone"


async def test_get_clone_names_it_after_the_jobs_that_exist(jp_fetch: Any) -> None:
    created = []
    try:
        for name, logdir in (("board", "/mnt/logs/board"), ("board-2", None)):
            body = {"name": name, "shm": "off", "command": ["python", "-c", "pass"]}
            body.update(
                {"pvc": [{"claim": "logs", "mountPath": "/mnt/logs"}], "logdir": logdir}
                if logdir
                else {}
            )
            await jp_fetch("pytorchjob", "api", "jobs", method="POST", body=json.dumps(body))
            created.append(name)
        answer = json.loads((await jp_fetch("pytorchjob", "api", "jobs", "board", "clone")).body)
        assert answer["spec"]["name"] == "board-3"
        assert answer["spec"]["logdir"] == "/mnt/logs/board-3"
        assert answer["spec"]["command"] == ["python", "-c", "pass"]
        resumed = json.loads(
            (
                await jp_fetch(
                    "pytorchjob", "api", "jobs", "board", "clone", params={"resumeFrom": "/ck/7"}
                )
            ).body
        )
        assert resumed["spec"]["name"] == "board-3"
        assert resumed["spec"]["env"] == {RESUME_ENV: "/ck/7"}
        with pytest.raises(HTTPClientError) as info:
            await jp_fetch(
                "pytorchjob", "api", "jobs", "board", "clone", params={"resumeFrom": "a\nb"}
            )
        assert info.value.code == 400
        assert "fromCheckpoint" in info.value.response.body.decode()
        with pytest.raises(HTTPClientError) as info:
            await jp_fetch("pytorchjob", "api", "jobs", "nope", "clone")
        assert info.value.code == 404
    finally:
        for name in created:
            await jp_fetch("pytorchjob", "api", "jobs", name, method="DELETE")


async def test_a_clone_of_a_job_named_at_the_limit_fits_the_kinds_limit(jp_fetch: Any) -> None:
    # One node: pods are <job>-master-0, so a PyTorchJob name may be 63 - 9 characters.
    longest = max_name_length(1, master=True)
    name = "n" * longest
    body = {"name": name, "shm": "off", "command": ["python", "-c", "pass"]}
    await jp_fetch("pytorchjob", "api", "jobs", method="POST", body=json.dumps(body))
    try:
        answer = json.loads((await jp_fetch("pytorchjob", "api", "jobs", name, "clone")).body)
        assert answer["spec"]["name"] == "n" * (longest - 2) + "-2"
    finally:
        await jp_fetch("pytorchjob", "api", "jobs", name, method="DELETE")
