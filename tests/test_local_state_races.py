"""A local job's state survives concurrent writers (issue 25, item 3): suspend/resume from
many threads of a real Jupyter server and from other processes at once (the CLI, a kernel),
and suspend/resume racing DELETE. ``manifest.json`` is always valid JSON, every answer is
200/204/404/409 and never 500, and a deleted job leaves nothing behind."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_pytorchjob.backends.local.store import write_json

API = ("pytorchjob", "api")
LONG = ["python", "-c", "import time; time.sleep(300)"]
CONCURRENT = 16

pytestmark = pytest.mark.slow


@pytest.fixture
def home(jp_serverapp: Any, jp_asyncio_loop: Any) -> Iterator[Path]:
    """The server's jobs directory; every job left is deleted afterwards."""
    backend = jp_serverapp.web_app.settings["pytorchjob_backend"]
    yield backend.jobs_dir
    for job in jp_asyncio_loop.run_until_complete(backend.list_jobs()):
        jp_asyncio_loop.run_until_complete(backend.delete_job(job.name))


async def request(jp_fetch: Any, name: str, method: str, body: Any = None) -> int:
    return (await answer(jp_fetch, name, method, body))[0]


async def answer(jp_fetch: Any, name: str, method: str, body: Any = None) -> tuple[int, Any]:
    response = await jp_fetch(
        *API,
        "jobs",
        name,
        method=method,
        body=None if body is None else json.dumps(body),
        raise_error=False,
        request_timeout=120,
    )
    if response.code >= 400:
        assert json.loads(response.body)["message"], response.body
    return int(response.code), json.loads(response.body) if response.body else None


async def toggle(jp_fetch: Any, name: str, suspend: bool) -> int:
    """PATCH ``{"suspend": suspend}``; a 200 shows the job as this request left it (the
    answer is read under the same lock as the write)."""
    code, job = await answer(jp_fetch, name, "PATCH", {"suspend": suspend})
    if code == 200:
        assert job["manifest"]["spec"]["runPolicy"]["suspend"] is suspend
    return code


async def submit(jp_fetch: Any, name: str) -> None:
    body = {"name": name, "nodes": 1, "shm": "off", "command": LONG}
    response = await jp_fetch(*API, "jobs", method="POST", body=json.dumps(body))
    assert response.code == 201


def manifest_of(home: Path, name: str) -> Any:
    """The job's manifest.json as JSON (a JSONDecodeError fails the test)."""
    return json.loads((home / name / "manifest.json").read_text())


def leftovers(home: Path) -> list[str]:
    """Anything in the jobs directory but job directories, or temporary manifest files in
    them (the manifest's writers are done; a running supervisor's job.json may be in
    flight)."""
    found = []
    for path in home.iterdir():
        if not path.is_dir() or path.name.startswith("."):
            found.append(path.name)
            continue
        found += [f"{path.name}/{p.name}" for p in path.glob(".manifest.json*")]
    return found


async def test_concurrent_suspends_and_resumes_keep_the_manifest_valid(
    jp_fetch: Any, home: Path
) -> None:
    await submit(jp_fetch, "toggled")
    answers: Counter[int] = Counter()
    for _round in range(6):
        codes = await asyncio.gather(
            *(toggle(jp_fetch, "toggled", i % 2 == 0) for i in range(CONCURRENT))
        )
        answers.update(codes)
        suspend = manifest_of(home, "toggled")["spec"]["runPolicy"]["suspend"]
        assert isinstance(suspend, bool)
        # Whatever order they landed in, the job still answers.
        assert await request(jp_fetch, "toggled", "GET") == 200
    assert answers == {200: 6 * CONCURRENT}, answers
    assert leftovers(home) == []


async def test_suspend_racing_delete_is_404_never_500(jp_fetch: Any, home: Path) -> None:
    answers: Counter[tuple[str, int]] = Counter()
    for round_ in range(4):
        name = f"doomed-{round_}"
        await submit(jp_fetch, name)
        calls = [toggle(jp_fetch, name, i % 2 == 0) for i in range(12)]
        calls.insert(6, request(jp_fetch, name, "DELETE"))
        codes = await asyncio.gather(*calls)
        answers.update(("DELETE" if i == 6 else "PATCH", code) for i, code in enumerate(codes))
        assert await request(jp_fetch, name, "GET") == 404
    assert {code for _method, code in answers} <= {200, 204, 404, 409}, answers
    assert answers["DELETE", 204] == 4, answers
    assert leftovers(home) == []


async def test_deletes_racing_each_other_one_wins_the_others_404(jp_fetch: Any, home: Path) -> None:
    await submit(jp_fetch, "twice")
    codes = await asyncio.gather(*(request(jp_fetch, "twice", "DELETE") for _ in range(4)))
    assert sorted(codes) == [204, 404, 404, 404], codes
    assert leftovers(home) == []


TOGGLER = """
import asyncio, sys
from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.backends.base import BackendError

async def main():
    backend = LocalBackend(root=sys.argv[1])
    for i in range(int(sys.argv[3])):
        if i % 2:
            await backend.resume(sys.argv[2])
        else:
            await backend.suspend(sys.argv[2])
    print("done", flush=True)

asyncio.run(main())
"""


async def test_other_processes_and_the_server_toggle_at_once(jp_fetch: Any, home: Path) -> None:
    """The CLI and a kernel write the same job as the server: the lock holds across
    processes, and a reader never catches a half-written manifest."""
    await submit(jp_fetch, "shared")
    togglers = [
        subprocess.Popen(
            [sys.executable, "-c", TOGGLER, str(home.parent), "shared", "40"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    try:
        answers: Counter[int] = Counter()
        reads = 0
        while any(t.poll() is None for t in togglers):
            codes = await asyncio.gather(
                *(toggle(jp_fetch, "shared", i % 2 == 0) for i in range(4))
            )
            answers.update(codes)
            assert isinstance(manifest_of(home, "shared")["spec"]["runPolicy"]["suspend"], bool)
            reads += 1
        for toggler in togglers:
            out, err = toggler.communicate()
            assert (toggler.returncode, out.strip()) == (0, "done"), err
    finally:
        for toggler in togglers:
            toggler.kill()
            toggler.wait()
    assert reads and set(answers) == {200}, answers
    assert leftovers(home) == []


def test_threads_writing_one_file_never_leave_it_half_written(tmp_path: Path) -> None:
    """The supervisor's threads (progress, nodes) write job.json at once: each write has
    its own temporary file, so the file is always one whole write."""
    path = tmp_path / "job.json"
    documents = [{"writer": i, "padding": "x" * (i * 5000)} for i in range(8)]
    failures: list[BaseException] = []
    start = threading.Barrier(len(documents))

    def write(document: dict[str, Any]) -> None:
        start.wait()
        try:
            for _ in range(50):
                write_json(path, document)
        except BaseException as err:  # reported below, in the test's thread
            failures.append(err)

    threads = [threading.Thread(target=write, args=(d,)) for d in documents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert json.loads(path.read_text()) in documents
    assert [p.name for p in tmp_path.iterdir()] == ["job.json"]
