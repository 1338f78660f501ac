"""TensorBoard on a real Jupyter server: REST API, proxy, auth, confinement, shutdown.

Every test runs the real ``tensorboard`` (2.21, without TensorFlow) on event files
written by ``torch.utils.tensorboard.SummaryWriter``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_pytorchjob.tensorboard.handlers import MANAGER_SETTING, RESOLVER_SETTING
from jupyter_pytorchjob.tensorboard.manager import TensorBoardManager

API = ("pytorchjob", "api", "tensorboards")
LOSS = [1.0, 0.5, 0.25]


@pytest.fixture(scope="session")
def events_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log directory with a few ``loss`` scalars, written once per session."""
    from torch.utils.tensorboard import SummaryWriter

    path = tmp_path_factory.mktemp("events")
    writer = SummaryWriter(log_dir=str(path))
    for step, value in enumerate(LOSS):
        writer.add_scalar("loss", value, step)
    writer.close()
    return path


@pytest.fixture
def logdir(jp_root_dir: Path, events_dir: Path) -> Path:
    """``<root>/runs/exp`` holding the events."""
    target = jp_root_dir / "runs" / "exp"
    shutil.copytree(events_dir, target)
    return target


@pytest.fixture
def manager(jp_serverapp: Any) -> TensorBoardManager:
    manager = jp_serverapp.web_app.settings[MANAGER_SETTING]
    assert isinstance(manager, TensorBoardManager)
    return manager


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def open_tensorboard(jp_fetch: Any, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    response = await jp_fetch(*API, method="POST", body=json.dumps(body), **kwargs)
    assert response.code == 201
    answer: dict[str, Any] = json.loads(response.body)
    return answer


async def proxied(jp_fetch: Any, tb: dict[str, Any], path: str, **kwargs: Any) -> Any:
    return await jp_fetch(tb["url"] + path, **kwargs)


async def login_cookie(jp_fetch: Any) -> str:
    """The login cookie the server sets on a token request, as a browser gets it."""
    response = await jp_fetch("pytorchjob", "api", "config")
    cookies = [c.split(";", 1)[0] for c in response.headers.get_list("Set-Cookie")]
    cookie = "; ".join(c for c in cookies if not c.startswith("_xsrf="))
    assert cookie
    return cookie


@pytest.mark.slow
async def test_open_read_reuse_and_stop(
    jp_fetch: Any, jp_base_url: str, logdir: Path, manager: TensorBoardManager
) -> None:
    tb = await open_tensorboard(jp_fetch, {"logdir": "runs/exp"})
    assert tb["logdir"] == str(logdir.resolve())
    assert tb["url"] == f"pytorchjob/tensorboard/{tb['id']}/"
    assert alive(tb["pid"])

    # Through the proxy, under the base URL, with the token.
    tags = json.loads((await proxied(jp_fetch, tb, "data/plugin/scalars/tags")).body)
    assert "loss" in tags["."]
    response = await proxied(
        jp_fetch, tb, "data/plugin/scalars/scalars", params={"run": ".", "tag": "loss"}
    )
    points = json.loads(response.body)
    assert [p[1] for p in points] == [0, 1, 2]
    assert [p[2] for p in points] == pytest.approx(LOSS)
    # The UI's index page.
    index = await proxied(jp_fetch, tb, "")
    assert b"<tf-tensorboard" in index.body or b"tensorboard" in index.body.lower()
    # TensorBoard's page names its fonts root-absolute (``url(/font-roboto/…)``),
    # outside the proxy: the proxy makes them relative, and they load.
    for accept in ("gzip", "identity"):
        page = await proxied(
            jp_fetch, tb, "", headers={"Accept-Encoding": accept}, decompress_response=True
        )
        assert b"url(/font-roboto/" not in page.body
        assert b"url(font-roboto/" in page.body
    font = page.body.split(b"url(font-roboto/", 1)[1].split(b")", 1)[0].decode()
    response = await proxied(jp_fetch, tb, f"font-roboto/{font}")
    assert response.code == 200 and len(response.body) > 100

    # The same directory, named another way: the same instance.
    again = await open_tensorboard(jp_fetch, {"logdir": str(logdir)})
    assert (again["id"], again["pid"]) == (tb["id"], tb["pid"])
    listed = json.loads((await jp_fetch(*API)).body)
    assert [i["id"] for i in listed] == [tb["id"]]
    one = json.loads((await jp_fetch(*API, tb["id"])).body)
    assert one["pid"] == tb["pid"]

    response = await jp_fetch(*API, tb["id"], method="DELETE")
    assert response.code == 204
    assert await wait_gone(tb["pid"])
    assert manager.list() == []
    for fetch in (
        lambda: proxied(jp_fetch, tb, "data/plugin/scalars/tags"),
        lambda: jp_fetch(*API, tb["id"], method="DELETE"),
        lambda: jp_fetch(*API, tb["id"]),
    ):
        with pytest.raises(HTTPClientError) as info:
            await fetch()
        assert info.value.code == 404


@pytest.mark.slow
async def test_auth_xsrf_and_redirect(
    jp_fetch: Any, jp_base_url: str, logdir: Path, manager: TensorBoardManager
) -> None:
    tb = await open_tensorboard(jp_fetch, {"logdir": "runs/exp"})
    no_auth = {"Authorization": ""}
    for path, method in [("data/plugin/scalars/tags", "GET"), ("", "GET"), ("x", "POST")]:
        with pytest.raises(HTTPClientError) as info:
            body = "" if method == "POST" else None
            await proxied(jp_fetch, tb, path, method=method, body=body, headers=no_auth)
        assert info.value.code == 403, path
    for parts, method in [((), "GET"), ((), "POST"), ((tb["id"],), "DELETE")]:
        body = json.dumps({"logdir": "runs/exp"}) if method == "POST" else None
        with pytest.raises(HTTPClientError) as info:
            await jp_fetch(*API, *parts, method=method, body=body, headers=no_auth)
        assert info.value.code == 403
    assert alive(tb["pid"])

    # TensorBoard's own POST, cookie-authenticated, without an XSRF token: proxied.
    cookie = await login_cookie(jp_fetch)
    response = await proxied(
        jp_fetch,
        tb,
        "data/plugin/scalars/scalars_multirun",
        method="POST",
        body="tag=loss&runs=.",
        headers={
            "Authorization": "",
            "Cookie": cookie,
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    multirun = json.loads(response.body)
    assert [p[2] for p in multirun["."]] == pytest.approx(LOSS)
    # Our own API still wants the XSRF token from a cookie-authenticated client.
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(
            *API, tb["id"], method="DELETE", headers={"Authorization": "", "Cookie": cookie}
        )
    assert info.value.code == 403
    assert alive(tb["pid"])

    # The bare id redirects to the slash, which TensorBoard needs for relative URLs.
    response = await proxied(jp_fetch, tb, "", follow_redirects=False, raise_error=False)
    bare = await jp_fetch(
        *API[:1], "tensorboard", tb["id"], follow_redirects=False, raise_error=False
    )
    assert response.code == 200
    assert bare.code == 302
    assert (
        bare.headers["Location"].split("?")[0] == f"{jp_base_url}pytorchjob/tensorboard/{tb['id']}/"
    )


async def test_unknown_id_is_404(jp_fetch: Any) -> None:
    for fetch in (
        lambda: jp_fetch("pytorchjob", "tensorboard", "0123456789ab", "data", "environment"),
        lambda: jp_fetch("pytorchjob", "tensorboard", "nope"),
        lambda: jp_fetch(*API, "0123456789ab", method="DELETE"),
    ):
        with pytest.raises(HTTPClientError) as info:
            await fetch()
        assert info.value.code == 404


@pytest.mark.parametrize(
    ("logdir", "status"),
    [
        ("../outside", 400),
        ("runs/../../outside", 400),
        ("escape", 403),  # a symlink to a directory outside the root
        ("escape/sub", 403),
        ("/", 403),
        ("notes.txt", 400),
        ("", 400),
    ],
)
async def test_logdir_outside_roots_is_refused(
    jp_fetch: Any,
    jp_root_dir: Path,
    tmp_path: Path,
    manager: TensorBoardManager,
    logdir: str,
    status: int,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (jp_root_dir / "escape").symlink_to(outside, target_is_directory=True)
    (jp_root_dir / "notes.txt").write_text("not a directory")
    with pytest.raises(HTTPClientError) as info:
        await open_tensorboard(jp_fetch, {"logdir": logdir})
    assert info.value.code == status
    assert json.loads(info.value.response.body)["field"] == "logdir"
    assert manager.list() == []
    assert manager._starting == {}
    assert not (outside / "sub").exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "logdir"),
        ({"logdir": "a", "job": "b"}, "logdir"),
        ({"logdir": 3}, "logdir"),
        ({"job": ""}, "job"),
        ({"colour": "red"}, "colour"),
        ([1], "body"),
    ],
)
async def test_bad_bodies(jp_fetch: Any, body: Any, field: str) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(*API, method="POST", body=json.dumps(body))
    assert info.value.code == 400
    answer = json.loads(info.value.response.body)
    assert answer["field"] == field
    assert answer["message"]


@pytest.mark.slow
async def test_job_resolver_missing_dir_and_stop_extension(
    jp_fetch: Any, jp_serverapp: Any, jp_root_dir: Path, manager: TensorBoardManager
) -> None:
    async def resolver(name: str) -> str:
        if name != "demo":
            raise LookupError("no such job")
        return "jobs/demo/tb"  # not written yet: TensorBoard starts empty

    jp_serverapp.web_app.settings[RESOLVER_SETTING] = resolver
    with pytest.raises(HTTPClientError) as info:
        await open_tensorboard(jp_fetch, {"job": "other"})
    assert info.value.code == 404
    assert json.loads(info.value.response.body)["field"] == "job"
    tb = await open_tensorboard(jp_fetch, {"job": "demo"})
    assert tb["logdir"] == str((jp_root_dir / "jobs" / "demo" / "tb").resolve())
    assert not (jp_root_dir / "jobs").exists(), "nothing is created"
    assert json.loads((await proxied(jp_fetch, tb, "data/plugin/scalars/tags")).body) == {}

    # Idle culling stops it once idle for longer than the timeout.
    culled = await manager.cull_idle(now=time.time() + manager.idle_timeout + 1)
    assert culled == [tb["id"]]
    assert await wait_gone(tb["pid"])

    # The extension's stop path (server shutdown) stops whatever is left.
    tb = await open_tensorboard(jp_fetch, {"job": "demo"})
    extension = jp_serverapp.extension_manager.extension_apps["jupyter_pytorchjob"]
    for app in extension:
        await app.stop_extension()
    assert await wait_gone(tb["pid"], timeout=10)
    assert manager.list() == []
    with pytest.raises(HTTPClientError) as info:
        await open_tensorboard(jp_fetch, {"job": "demo"})
    assert info.value.code == 503


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _request(url: str, token: str, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url,
        data=data,
        headers={"Authorization": f"token {token}"},
        method="POST" if data else "GET",
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_stopping_jupyter_server_stops_tensorboard(
    tmp_path: Path, events_dir: Path, sig: signal.Signals
) -> None:
    """SIGTERM: stop_extension stops it. SIGKILL: the parent-death signal does."""
    root = tmp_path / "root"
    shutil.copytree(events_dir, root / "logs")
    port, token = _free_port(), "secret-token"
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter_server",
            "--ServerApp.jpserver_extensions={'jupyter_pytorchjob': True}",
            f"--IdentityProvider.token={token}",
            "--ServerApp.allow_root=True",
            "--ServerApp.open_browser=False",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.base_url=/base/",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}/base/"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                _request(base + "pytorchjob/api/config", token)
                break
            except (urllib.error.URLError, ConnectionError):
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        tb = _request(base + "pytorchjob/api/tensorboards", token, {"logdir": "logs"})
        tags = _request(base + tb["url"] + "data/plugin/scalars/tags", token)
        assert "loss" in tags["."]
        assert alive(tb["pid"])
        server.send_signal(sig)
        server.wait(timeout=20)
        deadline = time.monotonic() + 5
        while alive(tb["pid"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(tb["pid"])
        if sig == signal.SIGTERM:
            stderr = server.stderr.read().decode() if server.stderr else ""
            assert f"TensorBoard {tb['id']} (pid {tb['pid']}) stopped" in stderr
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


@pytest.mark.parametrize("encoding", ["gzip", None])
def test_font_rewrite_keeps_the_encoding(encoding: str | None) -> None:
    """The font rewrite on a gzipped page (as TensorBoard may answer) stays gzipped."""
    import gzip
    from io import BytesIO

    from jupyter_server_proxy.handlers import RewritableResponse
    from tornado.httpclient import HTTPRequest, HTTPResponse
    from tornado.httputil import HTTPHeaders

    from jupyter_pytorchjob.tensorboard.handlers import relative_fonts

    page = b"<style>src: url(/font-roboto/a.woff2) format('woff2');</style>"
    headers = HTTPHeaders({"Content-Type": "text/html; charset=utf-8"})
    if encoding:
        headers["Content-Encoding"] = encoding
    body = gzip.compress(page) if encoding else page
    original = HTTPResponse(HTTPRequest("http://127.0.0.1/"), 200, headers, BytesIO(body))
    response = RewritableResponse(orig_response=original)
    relative_fonts(response, "/")
    out = gzip.decompress(response.body) if encoding else response.body
    assert out == page.replace(b"url(/font-roboto/", b"url(font-roboto/")
    # Anything but the page itself passes untouched.
    other = RewritableResponse(orig_response=original)
    relative_fonts(other, "/data/environment")
    assert other.body == body


@pytest.mark.slow
async def test_at_most_max_instances_run(
    jp_fetch: Any, jp_root_dir: Path, logdir: Path, manager: TensorBoardManager
) -> None:
    """Beyond the limit the least recently used idle one makes room; when every one is
    in use the request is refused with 429 naming the one to stop."""
    (jp_root_dir / "runs" / "other").mkdir()
    manager.max_instances = 1
    first = await open_tensorboard(jp_fetch, {"logdir": "runs/exp"})
    with pytest.raises(HTTPClientError) as info:
        await open_tensorboard(jp_fetch, {"logdir": "runs/other"})
    assert info.value.code == 429
    refusal = json.loads(info.value.response.body)
    assert first["id"] in refusal["message"] and "tensorboard_max_instances" in refusal["message"]
    assert [i.id for i in manager.list()] == [first["id"]] and alive(first["pid"])
    # The same directory again is no new instance: no room needed.
    assert (await open_tensorboard(jp_fetch, {"logdir": "runs/exp"}))["id"] == first["id"]

    manager.busy_window = 0.0  # the first one counts as idle now
    second = await open_tensorboard(jp_fetch, {"logdir": "runs/other"})
    assert await wait_gone(first["pid"])
    assert [i.id for i in manager.list()] == [second["id"]]
    await jp_fetch(*API, second["id"], method="DELETE")


def group_members(pgid: int) -> list[int]:
    """Live processes of process group ``pgid`` (TensorBoard and its data server)."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and alive(int(entry.name)):
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid:
                members.append(int(entry.name))
    return members


async def scalar_tags(jp_fetch: Any, tb: dict[str, Any]) -> dict[str, Any]:
    """The scalar tags per run TensorBoard shows now; the proxy never answers 500."""
    response = await proxied(jp_fetch, tb, "data/plugin/scalars/tags", raise_error=False)
    assert response.code == 200, response.body
    tags: dict[str, Any] = json.loads(response.body)
    return tags


async def until_tags(jp_fetch: Any, tb: dict[str, Any], expected: dict[str, list[str]]) -> None:
    deadline = time.monotonic() + 30
    while True:
        shown = {run: sorted(tags) for run, tags in (await scalar_tags(jp_fetch, tb)).items()}
        if shown == expected:
            return
        assert time.monotonic() < deadline, f"TensorBoard still shows {shown}, not {expected}"
        await asyncio.sleep(0.2)


@pytest.mark.slow
@pytest.mark.parametrize("load_fast", ["auto", "false"])
async def test_logdir_deleted_while_tensorboard_runs(
    jp_fetch: Any, logdir: Path, manager: TensorBoardManager, load_fast: str
) -> None:
    """TensorBoard shows the directory as it is (empty, then the new run), never a 500;
    its entry stays true (listed while it runs), and stopping it leaves no process."""
    from torch.utils.tensorboard import SummaryWriter

    manager.load_fast = load_fast  # the Rust data server and the Python loader
    tb = await open_tensorboard(jp_fetch, {"logdir": "runs/exp"})
    await until_tags(jp_fetch, tb, {".": ["loss"]})
    shutil.rmtree(logdir)

    await until_tags(jp_fetch, tb, {})
    for path in ("data/runs", "data/environment", ""):
        response = await proxied(jp_fetch, tb, path, raise_error=False)
        assert response.code == 200, (path, response.body)
    listed = json.loads((await jp_fetch(*API)).body)
    assert [(i["id"], i["pid"]) for i in listed] == [(tb["id"], tb["pid"])]
    assert alive(tb["pid"])

    # A recreated directory: the same TensorBoard serves its new run, and only that.
    writer = SummaryWriter(log_dir=str(logdir))
    writer.add_scalar("accuracy", 0.5, 0)
    writer.close()
    again = await open_tensorboard(jp_fetch, {"logdir": "runs/exp"})
    assert again["id"] == tb["id"]
    await until_tags(jp_fetch, again, {".": ["accuracy"]})

    members = group_members(again["pid"])
    assert again["pid"] in members
    response = await jp_fetch(*API, again["id"], method="DELETE")
    assert response.code == 204
    for pid in members:
        assert await wait_gone(pid)
    assert group_members(again["pid"]) == []
    assert json.loads((await jp_fetch(*API)).body) == []


async def test_a_jobs_tensorboard_says_whether_it_can_open(
    jp_fetch: Any, tmp_path: Path, manager: TensorBoardManager
) -> None:
    """``GET jobs/{name}/tensorboard``: the directory TensorBoard would open, or why not
    (a host path outside the roots: the view disables its button and shows this), and
    nothing is started by asking."""
    command = ["python", "-c", "pass"]
    jobs = {
        "on-pvc": {"pvc": [{"claim": "logs", "mountPath": "/mnt/logs"}], "logdir": "/mnt/logs/b"},
        "on-host": {"logdir": "/mnt/logs/b"},
        "no-logdir": {},
    }
    try:
        for name, fields in jobs.items():
            body = {"name": name, "shm": "off", "command": command, **fields}
            await jp_fetch("pytorchjob", "api", "jobs", method="POST", body=json.dumps(body))

        async def check(name: str) -> dict[str, Any]:
            response = await jp_fetch("pytorchjob", "api", "jobs", name, "tensorboard")
            answer: dict[str, Any] = json.loads(response.body)
            return answer

        assert await check("on-pvc") == {
            "logdir": str((tmp_path / "ptjob-volumes" / "logs" / "b").resolve()),
            "problem": None,
            "problemCode": None,
            "problemParams": None,
        }
        on_host = await check("on-host")
        assert on_host["logdir"] is None
        assert "'/mnt/logs/b'" in on_host["problem"]
        assert "outside the TensorBoard roots" in on_host["problem"]
        # The job view says why in the user's language: the code beside the English.
        assert on_host["problemCode"] == "tb_outside_roots"
        assert on_host["problemParams"]["path"] == "'/mnt/logs/b'"
        no_logdir = await check("no-logdir")
        assert no_logdir["logdir"] is None
        assert "has no TensorBoard log directory" in no_logdir["problem"]
        assert no_logdir["problemCode"] == "no_logdir"
        for name, status in (("nope", 404), ("Bad_Name", 400)):
            with pytest.raises(HTTPClientError) as info:
                await jp_fetch("pytorchjob", "api", "jobs", name, "tensorboard")
            assert info.value.code == status
        assert manager.list() == []
    finally:
        for name in jobs:
            with contextlib.suppress(HTTPClientError):
                await jp_fetch("pytorchjob", "api", "jobs", name, method="DELETE")
