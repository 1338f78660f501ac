"""``jobs/{name}/logs`` on a real server (local backend): the websocket's query checks,
and the same logs as plain text for curl, scripts and downloads."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from .log_messages import decode, unbatch

API = ("pytorchjob", "api")
pytestmark = pytest.mark.slow
LINES = "for i in range(5):\n    print('line', i, flush=True)\n"


async def submit(jp_fetch: Any, body: dict[str, Any]) -> None:
    await jp_fetch(*API, "jobs", method="POST", body=json.dumps(body))


async def wait_finished(jp_fetch: Any, name: str, timeout: float = 120) -> dict[str, Any]:
    """The job once it and every replica are done (a worker may end after the master)."""
    deadline = time.monotonic() + timeout
    job: dict[str, Any] = {}
    while time.monotonic() < deadline:
        job = json.loads((await jp_fetch(*API, "jobs", name)).body)
        done = all(r["phase"] not in ("Pending", "Running") for r in job["replicas"])
        if job["state"] in ("Succeeded", "Failed") and done:
            return job
        await asyncio.sleep(0.1)
    events = json.loads((await jp_fetch(*API, "jobs", name, "events")).body)
    raise AssertionError(f"{name} did not finish within {timeout} s: {job} {events}")


@pytest.fixture
def finished_job(jp_fetch: Any, jp_asyncio_loop: Any) -> str:
    """A finished 2-node job that printed ``line 0`` .. ``line 4`` on each node (clean pod
    policy None: the worker is not stopped when the master is done first)."""

    async def run() -> None:
        body = {"name": "lines", "nodes": 2, "shm": "off", "cleanPodPolicy": "None"}
        await submit(jp_fetch, {**body, "script": LINES})
        await wait_finished(jp_fetch, "lines")

    jp_asyncio_loop.run_until_complete(run())
    return "lines"


async def socket_frames(jp_ws_fetch: Any, name: str, **params: str) -> list[list[dict[str, Any]]]:
    """Every frame (its messages) until the server closes; fails if the socket hangs 10 s."""
    ws = await jp_ws_fetch(*API, "jobs", name, "logs", params=params)
    frames = []
    try:
        while (raw := await asyncio.wait_for(ws.read_message(), 10)) is not None:
            frames.append(unbatch(raw))
    finally:
        ws.close()
    return frames


async def socket_messages(jp_ws_fetch: Any, name: str, **params: str) -> list[dict[str, Any]]:
    """Every message until the server closes, batches unpacked."""
    return [m for frame in await socket_frames(jp_ws_fetch, name, **params) for m in frame]


BAD_QUERIES = [
    ({"since": json.dumps({"master-0": -5})}, "since[master-0]"),
    ({"since": "true"}, "since"),
    ({"since": "[1]"}, "since"),
    ({"since": json.dumps({"master-0": True})}, "since[master-0]"),
    ({"since": json.dumps({"master-0": 1.5})}, "since[master-0]"),
    ({"since": json.dumps({"master-0": 10**30})}, "since[master-0]"),
    ({"since": "{"}, "since"),
    ({"since": "[" * 5000}, "since"),
    ({"since": json.dumps({"master-0": 3})}, "since[master-0]"),  # inside the first line
    ({"tail": "-1"}, "tail"),
    ({"tail": "1.5"}, "tail"),
    ({"tail": json.dumps({"a": 1})}, "tail"),
    ({"tail": "9" * 400}, "tail"),
    ({"follow": "maybe"}, "follow"),
    ({"timestamps": "maybe"}, "timestamps"),
]


async def test_a_bad_query_gets_an_error_and_a_close(jp_ws_fetch: Any, finished_job: str) -> None:
    for params, field in BAD_QUERIES:
        messages = await socket_messages(jp_ws_fetch, finished_job, **params)
        assert len(messages) == 1, (params, messages)
        assert messages[0]["status"] == 400, (params, messages)
        assert messages[0]["error"].startswith(field + ":"), (params, messages[0])


async def test_resuming_at_every_message_offset_repeats_nothing(
    jp_ws_fetch: Any, finished_job: str
) -> None:
    messages = await socket_messages(jp_ws_fetch, finished_job, replica="master-0")
    whole = "".join(m["text"] for m in messages if "text" in m)
    assert whole.splitlines() == [f"line {i}" for i in range(5)]
    for index, message in enumerate(m for m in messages if "text" in m):
        since = json.dumps({"master-0": message["offset"]})
        rest = await socket_messages(jp_ws_fetch, finished_job, replica="master-0", since=since)
        seen = "".join(m["text"] for m in messages[: index + 1] if "text" in m)
        assert seen + "".join(m["text"] for m in rest if "text" in m) == whole
        assert rest[-1] == {"end": True}


async def test_timestamps_give_each_line_its_time(jp_ws_fetch: Any, finished_job: str) -> None:
    """``timestamps=1``: each chunk's ``times``, one per line (the log's own stamps, in
    seconds since the epoch; merged chunks too); without it, none (the viewer's toggle)."""
    messages = await socket_messages(jp_ws_fetch, finished_job, timestamps="1")
    chunks = [m for m in messages if "text" in m]
    assert chunks
    seen: dict[str, list[float]] = {}
    for chunk in chunks:
        assert len(chunk["times"]) == len(chunk["text"].splitlines()), chunk
        owners = chunk.get("owners") or "0" * len(chunk["times"])
        replicas = chunk.get("replicas") or [chunk["replica"]]
        for owner, when in zip(owners, chunk["times"], strict=True):
            seen.setdefault(replicas[ord(owner) - ord("0")], []).append(when)
    assert set(seen) == {"master-0", "worker-0"}
    for times in seen.values():
        assert len(times) == 5
        assert times == sorted(times)  # each replica's lines in its own time order
        assert time.time() - 300 < times[0] <= times[-1] <= time.time()
    untimed = await socket_messages(jp_ws_fetch, finished_job)
    assert not any("times" in m for m in untimed)
    assert [m["text"] for m in untimed if "text" in m] == [c["text"] for c in chunks]


# -- plain HTTP --------------------------------------------------------------------------


async def plain(jp_fetch: Any, name: str, **params: str) -> Any:
    return await jp_fetch(*API, "jobs", name, "logs", params=params, raise_error=False)


async def test_plain_text_logs_of_a_finished_job(jp_fetch: Any, finished_job: str) -> None:
    response = await plain(jp_fetch, finished_job)
    assert response.code == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    lines = response.body.decode().splitlines()
    for replica in ("master-0", "worker-0"):
        assert [line for line in lines if line.startswith(replica)] == [
            f"{replica} | line {i}" for i in range(5)
        ]
    one = await plain(jp_fetch, finished_job, replica="worker-0")
    assert one.body.decode().splitlines() == [f"line {i}" for i in range(5)]
    # With timestamps: each line after its time, as `kubectl logs --timestamps` prints it.
    stamped = await plain(jp_fetch, finished_job, replica="worker-0", timestamps="1")
    stamped_lines = stamped.body.decode().splitlines()
    assert len(stamped_lines) == 5
    for i, line in enumerate(stamped_lines):
        stamp, _, text = line.partition(" ")
        assert text == f"line {i}" and stamp.endswith("Z"), line
        assert abs(datetime.fromisoformat(stamp).timestamp() - time.time()) < 300
    tail = await plain(jp_fetch, finished_job, tail="2")
    assert sorted(tail.body.decode().splitlines()) == [
        "master-0 | line 3",
        "master-0 | line 4",
        "worker-0 | line 3",
        "worker-0 | line 4",
    ]


async def test_plain_text_previous_run(jp_fetch: Any, tmp_path: Path) -> None:
    marker = tmp_path / "ran-once"
    script = (
        "import pathlib, sys\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "if not marker.exists():\n"
        "    marker.touch()\n"
        "    print('first run', flush=True)\n"
        "    sys.exit(3)\n"
        "print('second run', flush=True)\n"
    )
    await submit(
        jp_fetch, {"name": "again", "shm": "off", "restartPolicy": "OnFailure", "script": script}
    )
    assert (await wait_finished(jp_fetch, "again"))["state"] == "Succeeded"
    previous = await plain(jp_fetch, "again", previous="1")
    current = await plain(jp_fetch, "again")
    assert previous.body.decode() == "master-0 | first run\n"
    assert current.body.decode() == "master-0 | second run\n"


async def test_plain_text_follow_streams_until_the_job_ends(jp_fetch: Any) -> None:
    ticker = (
        "import time\nfor i in range(20):\n    print('tick', i, flush=True)\n    time.sleep(0.1)\n"
    )
    await submit(jp_fetch, {"name": "ticker", "shm": "off", "script": ticker})
    arrivals: list[tuple[float, bytes]] = []
    response = await jp_fetch(
        *API,
        "jobs",
        "ticker",
        "logs",
        params={"follow": "1"},
        streaming_callback=lambda data: arrivals.append((time.monotonic(), data)),
        request_timeout=60,
    )
    assert response.code == 200
    assert response.headers.get("Transfer-Encoding") == "chunked"
    text = b"".join(data for _, data in arrivals).decode()
    assert text.splitlines() == [f"master-0 | tick {i}" for i in range(20)]
    # Streamed as the job printed, not in one piece at the end.
    assert len(arrivals) > 1
    assert (await wait_finished(jp_fetch, "ticker", timeout=5))["state"] == "Succeeded"


async def test_plain_text_errors_are_json(jp_fetch: Any, finished_job: str) -> None:
    for name, params, status, field in [
        ("nope", {}, 404, None),
        ("lines", {"replica": "worker-7"}, 404, None),
        ("lines", {"tail": "x"}, 400, "tail"),
        ("lines", {"since": json.dumps({"master-0": 3})}, 400, None),
        ("Not_A_Name", {}, 400, "name"),
    ]:
        response = await plain(jp_fetch, name, **params)
        assert response.code == status, (name, params, response.body)
        assert response.headers["Content-Type"].startswith("application/json")
        body = json.loads(response.body)
        assert body["message"]
        if field:
            assert body["field"] == field


def log_tasks() -> list[asyncio.Task[Any]]:
    return [
        t
        for t in asyncio.all_tasks()
        if "LogsHandler._write_plain" in repr(t.get_coro()) and not t.done()
    ]


async def test_a_client_going_away_stops_the_stream(
    jp_fetch: Any, jp_http_port: int, jp_base_url: str, jp_auth_header: dict[str, str]
) -> None:
    slow = "import time\nfor i in range(600):\n    print(i, flush=True)\n    time.sleep(0.1)\n"
    await submit(jp_fetch, {"name": "slow", "shm": "off", "script": slow})
    reader, writer = await asyncio.open_connection("127.0.0.1", jp_http_port)
    try:
        headers = "".join(f"{k}: {v}\r\n" for k, v in jp_auth_header.items())
        path = f"{jp_base_url}pytorchjob/api/jobs/slow/logs?follow=1"
        writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n{headers}\r\n".encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        assert head.startswith(b"HTTP/1.1 200")
        assert b"master-0 | 0" in await asyncio.wait_for(reader.readuntil(b"master-0 | 0"), 30)
        assert len(log_tasks()) == 1
    finally:
        writer.close()
    deadline = time.monotonic() + 10
    while log_tasks() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert log_tasks() == []
    await jp_fetch(*API, "jobs", "slow", method="DELETE")


async def test_merged_logs_come_in_time_order_batched_on_the_websocket_and_as_text(
    jp_fetch: Any, jp_ws_fetch: Any, jp_serverapp: Any, finished_job: str
) -> None:
    """Two replicas' lines alternating in time: the websocket and the plain text give them
    in time order, each with its replica; merged chunks carry both replicas' lines (not a
    chunk per line) and where each replica's log was read up to."""
    from jupyter_pytorchjob.backends.local.store import JobDir

    from .test_log_order import alternate

    master, worker, order = alternate(4000)
    jobdir = JobDir(jp_serverapp.web_app.settings["pytorchjob_backend"].jobs_dir / finished_job)
    jobdir.log("master-0").write_bytes(master)
    jobdir.log("worker-0").write_bytes(worker)
    frames = await socket_frames(jp_ws_fetch, finished_job)
    chunks = [m for frame in frames for m in frame if "text" in m]
    assert [line for m in chunks for line in m["text"].splitlines()] == order
    assert len(chunks) < 10 and all(len(m["owners"]) == m["text"].count("\n") for m in chunks)
    owners = [m["replicas"][ord(o) - ord("0")] for m in chunks for o in m["owners"]]
    assert owners == [line.split()[3] for line in order]
    assert chunks[-1]["offsets"] == {"master-0": len(master), "worker-0": len(worker)}
    text = (await plain(jp_fetch, finished_job)).body.decode()
    assert [line.split(" | ", 1) for line in text.splitlines()] == [
        [line.split()[3], line] for line in order
    ]


async def test_log_lines_come_as_binary_batches_and_the_end_as_json(
    jp_ws_fetch: Any, finished_job: str
) -> None:
    """A batch is a binary message whose texts are bytes after a JSON header (no JSON
    escaping of the log: #28), each line still with its stamp (``stamped``: the browser
    removes it, the server does nothing per line); the end and errors stay JSON text
    messages."""
    ws = await jp_ws_fetch(*API, "jobs", finished_job, "logs")
    raws = []
    try:
        while (raw := await asyncio.wait_for(ws.read_message(), 10)) is not None:
            raws.append(raw)
    finally:
        ws.close()
    assert raws and all(isinstance(raw, bytes) for raw in raws[:-1]), raws
    assert json.loads(raws[-1]) == {"end": True}
    sent = [m for raw in raws[:-1] for m in decode(raw)["chunks"]]
    assert all(m["stamped"] for m in sent)
    stamps = [line.split(" ")[0] for m in sent for line in m["text"].splitlines()]
    assert len(stamps) == 10 and all(stamp.endswith("Z") for stamp in stamps), stamps
    lines = [line for raw in raws[:-1] for m in unbatch(raw) for line in m["text"].splitlines()]
    assert sorted(lines) == sorted(f"line {i}" for i in range(5) for _ in range(2))


async def test_a_log_websocket_handshake_waits_for_its_share_of_the_loop(
    jp_ws_fetch: Any, finished_job: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The handshake (authentication, the upgrade) takes a share of a turn of the loop
    like the stream's steps (``LOG_STREAMS``): 20 log views opening at once held the loop
    12-20 ms for their handshakes (#28). The first share asked for is withheld until the
    test gives it: the socket opens only then."""
    from jupyter_pytorchjob.backends.loopshare import LOG_STREAMS
    from jupyter_pytorchjob.handlers import LogsHandler

    asked, given, opened = asyncio.Event(), asyncio.Event(), asyncio.Event()
    turn, open_socket = LOG_STREAMS.turn, LogsHandler.open

    async def withheld_once() -> None:
        if not asked.is_set():
            asked.set()
            await given.wait()
        await turn()

    def recording_open(handler: LogsHandler, name: str) -> None:
        opened.set()
        open_socket(handler, name)

    monkeypatch.setattr(LOG_STREAMS, "turn", withheld_once)
    monkeypatch.setattr(LogsHandler, "open", recording_open)
    connecting = asyncio.ensure_future(jp_ws_fetch(*API, "jobs", finished_job, "logs"))
    await asyncio.wait_for(asked.wait(), 10)
    assert not opened.is_set()  # the share was asked for before the upgrade
    given.set()
    ws = await asyncio.wait_for(connecting, 10)
    try:
        messages = []
        while (raw := await asyncio.wait_for(ws.read_message(), 10)) is not None:
            messages.extend(unbatch(raw))
    finally:
        ws.close()
    assert opened.is_set() and messages[-1] == {"end": True}
