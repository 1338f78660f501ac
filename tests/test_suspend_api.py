"""``PATCH jobs/{name}`` (suspend / resume) on a real Jupyter server, on both backends: the
local one with real processes, the kubernetes one against the fake API server and its
operator."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from .both_backends import backend_name, jp_server_config

__all__ = ["backend_name", "jp_server_config"]  # fixtures

API = ("pytorchjob", "api")
NS = "team-a"  # the fake API server's kubeconfig namespace
LONG = ["python", "-c", "import time; time.sleep(120)"]


@pytest.fixture
def jobs(
    jp_serverapp: Any, backend_name: str, request: pytest.FixtureRequest, jp_asyncio_loop: Any
) -> Iterator[Callable[..., Any]]:
    """``await jobs(name, command)``: a job submitted and running (kubernetes: the fake
    operator starts its pods); every job is deleted afterwards."""
    backend = jp_serverapp.web_app.settings["pytorchjob_backend"]

    async def submit(jp_fetch: Any, name: str, command: list[str], running: bool = True) -> None:
        body = {"name": name, "nodes": 1, "command": command}
        await jp_fetch(*API, "jobs", method="POST", body=json.dumps(body))
        if backend_name == "kubernetes" and running:
            request.getfixturevalue("fake_kube").operator.run(NS, name)
        if running:
            await until(jp_fetch, name, lambda job: job["state"] == "Running")

    yield submit
    for job in jp_asyncio_loop.run_until_complete(backend.list_jobs()):
        jp_asyncio_loop.run_until_complete(backend.delete_job(job.name))


async def until(
    jp_fetch: Any, name: str, condition: Callable[[dict[str, Any]], bool], timeout: float = 30
) -> dict[str, Any]:
    """The job (``GET jobs/{name}``) once ``condition`` holds; fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        job: dict[str, Any] = json.loads((await jp_fetch(*API, "jobs", name)).body)
        if condition(job):
            return job
        assert time.monotonic() < deadline, f"still waiting: {job['state']} {job['replicas']}"
        await asyncio.sleep(0.1)


async def patch(jp_fetch: Any, name: str, body: Any, **kwargs: Any) -> Any:
    return await jp_fetch(*API, "jobs", name, method="PATCH", body=json.dumps(body), **kwargs)


async def refusal(jp_fetch: Any, name: str, body: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(HTTPClientError) as info:
        await patch(jp_fetch, name, body)
    return info.value.code, json.loads(info.value.response.body)


def suspended_in_spec(job: dict[str, Any]) -> Any:
    return job["manifest"]["spec"].get("runPolicy", {}).get("suspend")


async def test_suspend_then_resume_answers_the_job(jp_fetch: Any, jobs: Any) -> None:
    await jobs(jp_fetch, "pausable", LONG)
    response = await patch(jp_fetch, "pausable", {"suspend": True})
    assert response.code == 200
    job = json.loads(response.body)
    assert job["name"] == "pausable"
    assert suspended_in_spec(job) is True
    assert job["spec"]["name"] == "pausable"  # the form body, as GET answers it
    assert suspended_in_spec(await until(jp_fetch, "pausable", lambda _job: True)) is True

    job = json.loads((await patch(jp_fetch, "pausable", {"suspend": False})).body)
    assert suspended_in_spec(job) is False


async def test_a_suspended_job_shows_suspended_and_runs_again_when_resumed(
    jp_fetch: Any, jobs: Any
) -> None:
    await jobs(jp_fetch, "pausable", LONG)
    await patch(jp_fetch, "pausable", {"suspend": True})
    job = await until(jp_fetch, "pausable", lambda job: job["state"] == "Suspended", timeout=20)
    assert all(r["phase"] != "Running" for r in job["replicas"])
    await patch(jp_fetch, "pausable", {"suspend": False})
    await until(jp_fetch, "pausable", lambda job: job["state"] not in ("Suspended",), timeout=20)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "suspend"),
        ({"suspend": "yes"}, "suspend"),
        ({"suspend": 1}, "suspend"),
        ({"suspend": None}, "suspend"),
        ({"suspend": True, "nodes": 3}, "nodes"),
        ({"state": "Suspended"}, "state"),
        ([True], "body"),
    ],
)
async def test_anything_but_a_suspend_flag_is_400_naming_the_field(
    jp_fetch: Any, jobs: Any, body: Any, field: str
) -> None:
    await jobs(jp_fetch, "steady", LONG)
    code, answer = await refusal(jp_fetch, "steady", body)
    assert (code, answer["field"]) == (400, field)
    assert answer["message"]
    job = await until(jp_fetch, "steady", lambda _job: True)
    assert suspended_in_spec(job) in (None, False)  # nothing changed


async def test_a_missing_job_is_404_and_a_finished_one_409(
    jp_fetch: Any, jobs: Any, backend_name: str, request: pytest.FixtureRequest
) -> None:
    code, answer = await refusal(jp_fetch, "nobody", {"suspend": True})
    assert code == 404 and "nobody" in answer["message"]

    # Not waited for as Running: `python -c pass` may end between two looks.
    await jobs(jp_fetch, "over", ["python", "-c", "pass"], running=False)
    if backend_name == "kubernetes":
        request.getfixturevalue("fake_kube").operator.succeed(NS, "over")
    await until(jp_fetch, "over", lambda job: job["state"] == "Succeeded")
    for suspend in (True, False):
        code, answer = await refusal(jp_fetch, "over", {"suspend": suspend})
        assert code == 409
        assert "is Succeeded" in answer["message"] and "clone it" in answer["message"]
        code_name = "finished_suspended" if suspend else "finished_resumed"
        assert (answer["code"], answer["params"]) == (
            code_name,
            {"name": "'over'", "state": "Succeeded"},
        )


@pytest.mark.parametrize("backend_name", ["local"])
async def test_a_cookie_authenticated_patch_needs_xsrf(jp_fetch: Any, jobs: Any) -> None:
    await jobs(jp_fetch, "guarded", LONG)
    response = await jp_fetch(*API, "config")
    cookies = [c.split(";", 1)[0] for c in response.headers.get_list("Set-Cookie")]
    login = "; ".join(c for c in cookies if not c.startswith("_xsrf="))
    with pytest.raises(HTTPClientError) as info:
        await patch(
            jp_fetch, "guarded", {"suspend": True}, headers={"Authorization": "", "Cookie": login}
        )
    assert info.value.code == 403
    assert suspended_in_spec(await until(jp_fetch, "guarded", lambda _job: True)) in (None, False)
