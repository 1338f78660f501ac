"""Progress of local jobs end to end: real jobs, their real supervisors, a real Jupyter
server. Each source (the job's reports, its log, its TensorBoard files), the status
endpoint's refusals, and hostile output that may change only its own job's progress."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.backends.local.reports import system_ca_bundle
from jupyter_pytorchjob.job import JobSpec

from .local_jobs import EXAMPLES, eventually
from .test_openapi import DOC, inline

pytestmark = pytest.mark.slow
API = ("pytorchjob", "api")
JOB_SCHEMA = inline(DOC["components"]["schemas"]["Job"])
DETAIL_SCHEMA = inline(DOC["components"]["schemas"]["ProgressDetail"])


@pytest.fixture
def server_backend(
    tmp_path: Path, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[LocalBackend]:
    """The local backend of the test server's root (conftest): jobs are submitted through
    it or the REST API, and every job left is deleted afterwards, also after a failure."""
    local = LocalBackend(
        root=tmp_path / "ptjob-home",
        volume_root=tmp_path / "ptjob-volumes",
        default_workdir=EXAMPLES,
    )
    yield local
    for job in jp_asyncio_loop.run_until_complete(local.list_jobs()):
        jp_asyncio_loop.run_until_complete(local.delete_job(job.name))


def spec(name: str, command: list[str], **body: Any) -> JobSpec:
    return JobSpec.from_wire({"name": name, "shm": "off", "command": command, **body})


async def listed(jp_fetch: Any) -> dict[str, dict[str, Any]]:
    """``GET jobs`` by name, each job checked against the document."""
    jobs = json.loads((await jp_fetch(*API, "jobs")).body)["jobs"]
    for job in jobs:
        errors = [e.message for e in Draft202012Validator(JOB_SCHEMA).iter_errors(job)]
        assert errors == [], errors
    return {job["name"]: job for job in jobs}


async def progress_of(jp_fetch: Any, name: str) -> dict[str, Any]:
    body = json.loads((await jp_fetch(*API, "jobs", name, "progress")).body)
    assert [e.message for e in Draft202012Validator(DETAIL_SCHEMA).iter_errors(body)] == []
    return body  # type: ignore[no-any-return]


async def test_each_example_shows_its_progress_while_it_runs_and_keeps_its_final_metrics(
    jp_fetch: Any, server_backend: LocalBackend
) -> None:
    """The three examples: reported (source report), tqdm only (logs), TensorBoard
    scalars only (tensorboard). Progress moves while they run; finished, they keep it."""
    steps = ["--steps", "150", "--delay", "0.03"]
    bodies = {
        "reported": [str(EXAMPLES / "progress_report.py")],
        "bar": [str(EXAMPLES / "progress_tqdm.py")],
        "board": [str(EXAMPLES / "progress_tensorboard.py")],
    }
    for name, script in bodies.items():
        extra: dict[str, Any] = {}
        if name == "board":
            extra = {
                "logdir": "/mnt/logs/board",
                "pvc": [{"claim": "logs", "mountPath": "/mnt/logs"}],
            }
        body = {"name": name, "shm": "off", "command": [sys.executable, *script, *steps], **extra}
        await jp_fetch(*API, "jobs", method="POST", body=json.dumps(body))

    seen: dict[str, set[int]] = {name: set() for name in bodies}

    async def moved() -> bool:
        for name, job in (await listed(jp_fetch)).items():
            progress = job["progress"]
            if progress is not None and progress["step"] is not None:
                seen[name].add(progress["step"])
        # Two different steps seen before the end: progress shown while running.
        return all(len({s for s in each if s < 150}) >= 2 for each in seen.values())

    assert await eventually(moved, timeout=90), seen
    for name in bodies:
        await server_backend.wait(name, timeout=90)

    async def final() -> bool:
        jobs = await listed(jp_fetch)
        return all(jobs[n]["progress"] and jobs[n]["progress"]["step"] == 150 for n in bodies)

    assert await eventually(final, timeout=30)
    jobs = await listed(jp_fetch)
    assert jobs["reported"]["progress"]["source"] == "report"
    assert jobs["reported"]["progress"]["percent"] == 100
    assert jobs["reported"]["progress"]["totalSteps"] == 150
    assert jobs["bar"]["progress"]["source"] == "logs"
    assert jobs["bar"]["progress"]["percent"] == 100
    assert jobs["board"]["progress"]["source"] == "tensorboard"
    assert set(jobs["board"]["progress"]["metrics"]) == {"loss", "lr"}
    for name in bodies:
        assert jobs[name]["progress"]["keyMetric"] == "loss"
        history = (await progress_of(jp_fetch, name))["history"]
        assert len(history["loss"]) >= 2, (name, history)
    # The whole TensorBoard run is in the history, in step order.
    board = (await progress_of(jp_fetch, "board"))["history"]["loss"]
    assert [p["step"] for p in board] == list(range(1, 151))


# A job that prints where to report, then waits for the test.
SHOW_ENDPOINT = (
    "import os, time\n"
    "print(os.environ['KUBEFLOW_TRAINER_SERVER_URL'], os.environ['KUBEFLOW_TRAINER_SERVER_TOKEN'],"
    " repr(os.environ['KUBEFLOW_TRAINER_SERVER_CA_CERT']), flush=True)\n"
    "time.sleep(120)\n"
)


async def endpoint_of(backend: LocalBackend, name: str) -> tuple[str, str, str]:
    """(URL, token file, CA variable) as the job's process got them."""
    line: list[str] = []

    async def printed() -> bool:
        async for chunk in backend.logs(name):
            line[:] = chunk.text.split()
        return len(line) >= 3

    assert await eventually(printed, timeout=30)
    return line[0], line[1], line[2]


def post(url: str, body: bytes, token: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


async def test_the_status_endpoint_takes_only_the_jobs_own_token_and_kubeflows_shape(
    jp_fetch: Any, server_backend: LocalBackend
) -> None:
    await server_backend.submit(spec("reporting", [sys.executable, "-c", SHOW_ENDPOINT]))
    await server_backend.submit(spec("other", [sys.executable, "-c", SHOW_ENDPOINT]))
    url, token_file, ca = await endpoint_of(server_backend, "reporting")
    other_url, other_token_file, _ = await endpoint_of(server_backend, "other")
    assert url.startswith("http://127.0.0.1:") and url.endswith("/trainjobs/reporting/status")
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    assert ca.strip("'") == system_ca_bundle()  # no TLS on loopback: the system's CAs
    token = Path(token_file).read_text()
    other_token = Path(other_token_file).read_text()
    assert token != other_token

    good = json.dumps(
        {"trainerStatus": {"progressPercentage": 40, "metrics": [{"name": "loss", "value": "0.5"}]}}
    ).encode()
    # 403: no token, a wrong one, the other job's.
    for given in (None, "nope", other_token):
        code, answer = await asyncio.to_thread(post, url, good, given)
        assert (code, answer.get("kind"), answer.get("code")) == (403, "Status", 403)
    # 400: not JSON, not Kubeflow's shape, out of range, too large - each named.
    refused = {
        b"{not json": "not valid JSON",
        b"[" * 60000: "nested more than",  # under 64 KiB: was a RecursionError, 500
        b"[" * 30000 + b"]" * 30000: "nested more than",
        b"[]": "trainerStatus",
        json.dumps({"progressPercentage": 4}).encode(): "trainerStatus",
        json.dumps({"trainerStatus": {"progressPercentage": 101}}).encode(): "progressPercentage",
        json.dumps({"trainerStatus": {"estimatedRemainingSeconds": -1}}).encode(): (
            "estimatedRemainingSeconds"
        ),
        json.dumps({"trainerStatus": {"metrics": [{"name": "", "value": "1"}]}}).encode(): (
            "metrics[0]"
        ),
        json.dumps({"trainerStatus": {"metrics": [{"name": "x", "value": "nan"}]}}).encode(): (
            "metrics[0]"
        ),
    }
    for body, named in refused.items():
        code, answer = await asyncio.to_thread(post, url, body, token)
        assert code == 400 and named in answer["message"], (body, answer)
    code, _ = await asyncio.to_thread(post, url, b"{" + b" " * (70 * 1024) + b"}", token)
    assert code == 400
    # Nothing of it reached the job: still running, no progress.
    job = (await listed(jp_fetch))["reporting"]
    assert job["state"] == "Running" and job["progress"] is None
    # The job's own token and Kubeflow's shape: 200, the body echoed, progress shown.
    code, answer = await asyncio.to_thread(post, url, good, token)
    assert code == 200 and answer == json.loads(good)

    async def shown() -> bool:
        progress = (await listed(jp_fetch))["reporting"]["progress"]
        return progress is not None and progress["percent"] == 40

    assert await eventually(shown)
    progress = (await listed(jp_fetch))["reporting"]["progress"]
    assert progress["source"] == "report" and progress["metrics"] == {"loss": 0.5}
    assert (await listed(jp_fetch))["other"]["progress"] is None
    # The other job's endpoint does not take this job's token either.
    code, _ = await asyncio.to_thread(post, other_url, good, token)
    assert code == 403


HOSTILE = (
    "import sys, time\n"
    "sys.stdout.write('x' * (10 * 1024 * 1024) + '\\n')\n"
    "print('100%|#| 99999999999999999999/1 [00:00<00:00, 1e300it/s, loss=1e999]', flush=True)\n"
    "print('7%|#| 7/100 [99999:00<99999999999:00, 1.0it/s, loss=nan]', flush=True)\n"
    "print(\"{'loss': 1e400, 'epoch': -3, '\" + 'a' * 100 + \"': 1}\", flush=True)\n"
    "print('Epoch 5/3 ' + '%|' * 5000, flush=True)\n"
    "print(' 30%|###       | 30/100 [00:03<00:07, 10.0it/s, loss=0.25]', flush=True)\n"
    "time.sleep(120)\n"
)
HONEST = (
    "import time\n"
    "print(' 50%|#####     | 5/10 [00:01<00:01, 5.0it/s, loss=0.5]', flush=True)\n"
    "time.sleep(120)\n"
)


async def test_hostile_output_changes_only_its_own_jobs_progress(
    jp_fetch: Any, server_backend: LocalBackend
) -> None:
    await server_backend.submit(spec("honest", [sys.executable, "-c", HONEST]))

    async def honest_shown() -> bool:
        return (await listed(jp_fetch))["honest"]["progress"] is not None

    assert await eventually(honest_shown, timeout=30)
    before = (await listed(jp_fetch))["honest"]["progress"]
    await server_backend.submit(spec("hostile", [sys.executable, "-c", HOSTILE]))

    async def hostile_read() -> bool:
        progress = (await listed(jp_fetch))["hostile"]["progress"]
        return progress is not None and progress["step"] == 30

    assert await eventually(hostile_read, timeout=60)
    jobs = await listed(jp_fetch)  # checked against the schema: every number sane
    hostile = jobs["hostile"]["progress"]
    assert hostile["percent"] == 30 and hostile["totalSteps"] == 100
    assert hostile["etaSeconds"] == 7 and hostile["metrics"]["loss"] == 0.25
    assert jobs["hostile"]["state"] == "Running"
    # The honest job's progress is what its own line said, untouched.
    assert jobs["honest"]["progress"] == before
    assert before["percent"] == 50 and before["metrics"] == {"loss": 0.5}
