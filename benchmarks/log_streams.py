"""Log streaming under load: 20 followed logs through our server vs the client directly.

Set-up: the fake Kubernetes API (tests/fake_kube, its own process, operator on), N
single-node jobs whose master pods each hold a backlog of L lines. Then:

* direct: N concurrent follow reads with kubernetes_asyncio in this process
  (chunked, the recommended way), until every stream has delivered L lines;
* server: a real ``jupyter server`` (kubernetes backend on the fake) and N log
  websockets (``follow=1``) reading the same logs, until L lines each. Meanwhile a
  probe requests ``GET pytorchjob/api/config`` every 20 ms: its latency shows how
  long the server's event loop stalls (compared with the same probe on the idle
  server).

Prints both throughputs, their ratio (goal >= 0.9) and the probe latencies
(goal: worst under load <= 10 ms above the idle floor).

Also the server's garbage collections while each run streams (``gc.callbacks``): how
many, how many full, the longest pause.

    python benchmarks/log_streams.py [--streams 20] [--lines 50000] [--runs 3]
                                     [--server-code DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from kubernetes_asyncio import client, config

REPO = Path(__file__).resolve().parent.parent
NS = "team-a"
TOKEN = "bench"
LINE = "step {i:07d} loss 0.123456 accuracy 0.987654 throughput 1234.5 samples/s\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_http(url: str, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < end:
            try:
                async with session.get(url) as r:
                    if r.status < 500:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
    raise TimeoutError(url)


async def hook(session: aiohttp.ClientSession, fake: str, name: str, *args: object) -> None:
    async with session.post(f"{fake}/_fake/{name}", json={"args": list(args)}) as r:
        r.raise_for_status()


async def seed(fake: str, kubeconfig: Path, streams: int, lines: int) -> list[str]:
    await config.load_kube_config(config_file=str(kubeconfig))
    api = client.ApiClient()
    custom = client.CustomObjectsApi(api)
    sys.path.insert(0, str(REPO))
    from jupyter_pytorchjob.job import JobSpec
    from jupyter_pytorchjob.kinds.pytorchjob.manifest import build_manifest

    names = [f"bench-{i}" for i in range(streams)]
    async with aiohttp.ClientSession() as session:
        for name in names:
            spec = JobSpec.from_wire({"name": name, "command": ["python", "train.py"]})
            await custom.create_namespaced_custom_object(
                "kubeflow.org", "v1", NS, "pytorchjobs", build_manifest(spec)
            )
            await hook(session, fake, "operator/run", NS, name)
        block = 2000
        for name in names:
            for start in range(0, lines, block):
                text = "".join(LINE.format(i=i) for i in range(start, min(lines, start + block)))
                await hook(session, fake, "append_log", NS, f"{name}-master-0", "pytorch", text)
    await api.close()
    return names


async def direct(kubeconfig: Path, names: list[str], lines: int) -> float:
    await config.load_kube_config(config_file=str(kubeconfig))
    api = client.ApiClient()
    core = client.CoreV1Api(api)

    async def one(name: str) -> None:
        response = await core.read_namespaced_pod_log(
            f"{name}-master-0",
            NS,
            container="pytorch",
            follow=True,
            timestamps=True,  # as our server asks, so both read the same bytes
            _preload_content=False,
        )
        seen = 0
        async for chunk in response.content.iter_chunked(65536):
            seen += chunk.count(b"\n")
            if seen >= lines:
                break
        response.release()

    start = time.perf_counter()
    await asyncio.gather(*(one(n) for n in names))
    elapsed = time.perf_counter() - start
    await api.close()
    return elapsed


async def probe(base: str, stop: asyncio.Event, out: list[float]) -> None:
    """Latency of ``GET config`` every 20 ms until ``stop``, from a separate process,
    so that this process's own work (decoding websocket messages) is not measured."""
    prober = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--probe",
        base,
        stdout=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.PIPE,
    )
    await stop.wait()
    assert prober.stdin is not None
    prober.stdin.close()
    data, _ = await prober.communicate()
    out.extend(json.loads(data))


async def probe_process(base: str) -> None:
    """``--probe URL``: ping until stdin closes, then print the latencies (ms) as JSON."""
    loop = asyncio.get_running_loop()
    closed = loop.run_in_executor(None, sys.stdin.read)
    headers = {"Authorization": f"token {TOKEN}"}
    latencies: list[float] = []
    async with aiohttp.ClientSession(headers=headers) as session:
        while not closed.done():
            t = time.perf_counter()
            async with session.get(f"{base}pytorchjob/api/config") as r:
                await r.read()
            latencies.append((time.perf_counter() - t) * 1000)
            await asyncio.sleep(0.02)
    print(json.dumps(latencies))


async def through_server(base: str, names: list[str], lines: int) -> tuple[float, list[float]]:
    ws_base = base.replace("http://", "ws://")
    headers = {"Authorization": f"token {TOKEN}"}
    latencies: list[float] = []
    stop = asyncio.Event()

    async def one(session: aiohttp.ClientSession, name: str) -> None:
        url = f"{ws_base}pytorchjob/api/jobs/{name}/logs?follow=1"
        async with session.ws_connect(url, max_msg_size=0) as ws:
            seen = 0
            async for message in ws:
                data = json.loads(message.data)
                for chunk in data.get("chunks", [data]):  # batched, or (before) one
                    if "text" in chunk:
                        seen += chunk["text"].count("\n")
                if seen >= lines or "end" in data or "error" in data:
                    break

    async with aiohttp.ClientSession(headers=headers) as session:
        prober = asyncio.create_task(probe(base, stop, latencies))
        start = time.perf_counter()
        await asyncio.gather(*(one(session, n) for n in names))
        elapsed = time.perf_counter() - start
        stop.set()
        await prober
    return elapsed, latencies


def stats(values: list[float]) -> str:
    values = sorted(values)
    p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
    return f"p50 {statistics.median(values):6.1f}  p99 {p99:6.1f}  max {values[-1]:6.1f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--server-code",
        type=Path,
        default=REPO,
        help="where the server's jupyter_pytorchjob comes from (e.g. `git archive` of an "
        "earlier revision, to measure before and after)",
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ptjob-bench-"))
    kubeconfig = tmp / "kubeconfig"
    fake_port, lab_port = free_port(), free_port()
    fake = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fake_kube",
            "--port",
            str(fake_port),
            "--operator",
            "--kubeconfig",
            str(kubeconfig),
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
    )
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "JUPYTER_RUNTIME_DIR": str(tmp / "rt")}
    env["PYTHONPATH"] = str(args.server_code)
    env.pop("KUBERNETES_SERVICE_HOST", None)
    lag_file = tmp / "lags.json"
    env["LOOP_MONITOR_OUT"] = str(lag_file)
    server = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "benchmarks" / "server_with_loop_monitor.py"),
            "--no-browser",
            "--allow-root",
            f"--port={lab_port}",
            "--ip=127.0.0.1",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={tmp}",
            "--PyTorchJobApp.backend=kubernetes",
            "--ServerApp.jpserver_extensions={'jupyter_pytorchjob': True}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{lab_port}/"
    try:
        fake_url = f"http://127.0.0.1:{fake_port}"
        await wait_http(f"{fake_url}/version")
        await wait_http(f"{base}api/status")
        names = await seed(fake_url, kubeconfig, args.streams, args.lines)
        idle: list[float] = []
        stop = asyncio.Event()
        idle_window = [time.time()]
        idler = asyncio.create_task(probe(base, stop, idle))
        await asyncio.sleep(3)
        stop.set()
        await idler
        idle_window.append(time.time())
        windows: list[tuple[float, float]] = []
        total = args.streams * args.lines
        print(f"{args.streams} streams x {args.lines} lines ({total} lines)")
        print(f"idle probe:        {stats(idle)}")
        ratios = []
        for run in range(args.runs):
            t_direct = await direct(kubeconfig, names, args.lines)
            began = time.time()
            t_server, loaded = await through_server(base, names, args.lines)
            windows.append((began, time.time()))
            ratio = t_direct / t_server
            ratios.append(ratio)
            print(
                f"run {run}: direct {total / t_direct:9.0f} lines/s   "
                f"server {total / t_server:9.0f} lines/s   ratio {ratio:.2f}   "
                f"probe under load: {stats(loaded)}"
            )
            worst_above_idle = max(loaded) - statistics.median(idle)
            print(f"        worst probe above the idle median: {worst_above_idle:.1f} ms")
        print(
            f"median throughput ratio (server / direct): {statistics.median(ratios):.2f}"
            "  (goal >= 0.9)"
        )
    finally:
        server.terminate()
        fake.terminate()
        server.wait(10)
        fake.wait(10)
    report_lags(lag_file, (idle_window[0], idle_window[1]), windows)


def report_lags(path: Path, idle: tuple[float, float], windows: list[tuple[float, float]]) -> None:
    """The server's own event-loop stalls (10 ms sleeps waking late), idle vs loaded."""
    samples = json.loads(path.read_text())

    def within(start: float, end: float) -> list[float]:
        return [lag for t, lag in samples if start <= t <= end]

    collections = json.loads(path.with_name(path.name + ".gc").read_text())

    def pauses(start: float, end: float) -> str:
        mine = [(pause, gen) for t, pause, gen in collections if start <= t <= end]
        full = [pause for pause, gen in mine if gen == 2]
        worst = max((pause for pause, _ in mine), default=0.0)
        return f"{len(mine)} collections ({len(full)} full), longest {worst:.1f} ms"

    floor = within(*idle)
    print(f"server loop lag, idle:      {stats(floor)}")
    for i, (start, end) in enumerate(windows):
        loaded = within(start, end)
        above = max(loaded) - max(floor)
        print(
            f"server loop lag, run {i}:     {stats(loaded)}   "
            f"worst above the idle worst: {above:.1f} ms  (goal <= 10)"
        )
        print(f"server GC, run {i}:           {pauses(start, end)}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--probe"]:
        asyncio.run(probe_process(sys.argv[2]))
    else:
        asyncio.run(main())
