"""Log streaming under load: N followed logs through our server vs reading them directly,
a baseline server's code and the working tree's side by side, on both backends.

Set-up per backend: N single-node jobs whose master replica holds a backlog of L lines,
and one real ``jupyter server`` per code (``--base REV`` / ``--server-code DIR``: the
baseline, e.g. ``main``; the working tree: the product), each with an event-loop lag
monitor (``server_with_loop_monitor.py``).

* kubernetes: the fake Kubernetes API (tests/fake_kube, its own process, operator on);
  ``direct`` is N concurrent follow reads with kubernetes_asyncio in this process
  (chunked, the recommended way) until every stream has delivered L lines;
* local: finished jobs in a ``$PTJOB_HOME`` both servers share, their logs as the local
  pump writes them (stamped lines); ``direct`` is N concurrent ``LocalBackend.logs``
  (``follow``) in this process - what ``ptjob logs`` does without a server.

Then, per run, ``direct`` and each server (their order alternating run by run): N log
websockets (``follow=1``) until L lines each. Meanwhile a probe process requests
``GET pytorchjob/api/tensorboards`` every 20 ms (its latency: what a user of the server
waits; an answer that costs next to nothing, unlike ``GET config``'s ~2 ms, so that the
probe itself adds little to the server's CPU)
and the server's own monitor records how late its 10 ms sleeps wake (the loop's stalls).

Prints per run and server: the throughput ratio server/direct (goal >= 0.9), the worst
loop stall above the idle server's 99th percentile (goal <= 10 ms; a single idle sample is
at the mercy of the machine's other work), the CPU the server used per 1,000 lines
(and the fake API server's), and the server's garbage collections (``gc.callbacks``: how
many, how many full, the longest pause); then min / median / max over the runs.

    python benchmarks/log_streams.py [--backend kubernetes|local|both] [--streams 20]
        [--lines 100000] [--runs 3] [--base REV | --server-code DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import psutil
from kubernetes_asyncio import client, config

REPO = Path(__file__).resolve().parent.parent
NS = "team-a"
TOKEN = "bench"
LINE = "step {i:07d} loss 0.123456 accuracy 0.987654 throughput 1234.5 samples/s\n"
IDLE_SECONDS = 3.0


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


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 30 s (a loaded machine)."""
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def server_argv(port: int, tmp: Path, *args: str) -> list[str]:
    """``jupyter server`` with the loop monitor (``server_with_loop_monitor.py``) on
    loopback, token ``TOKEN``, rooted in ``tmp``; ``args`` add to the command line."""
    return [
        sys.executable,
        str(REPO / "benchmarks" / "server_with_loop_monitor.py"),
        "--no-browser",
        "--allow-root",
        f"--port={port}",
        "--ip=127.0.0.1",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={tmp}",
        *args,
    ]


def package_of(revision: str, into: Path) -> Path:
    """``into`` holding the ``jupyter_pytorchjob`` of a git revision (``git archive``): a
    ``PYTHONPATH`` entry for a baseline run."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "jupyter_pytorchjob"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (all its threads) so far."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


# -- seeding ----------------------------------------------------------------------------


async def seed_kubernetes(fake: str, kubeconfig: Path, streams: int, lines: int) -> list[str]:
    await config.load_kube_config(config_file=str(kubeconfig))
    api = client.ApiClient()
    custom = client.CustomObjectsApi(api)
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


def seed_local(root: Path, streams: int, lines: int) -> list[str]:
    """Finished single-node jobs as the local backend keeps them, their master's log as
    the pump writes it (a stamp per line, microseconds, the lines of 1 ms sharing one)."""
    from jupyter_pytorchjob.backends.local.store import timestamp

    names = [f"bench-{i}" for i in range(streams)]
    start = time.time() - lines / 1000
    body = []
    for i in range(lines):
        body.append(f"{timestamp(start + i / 1000)} {LINE.format(i=i)}")
    log = "".join(body).encode()
    for name in names:
        jobdir = root / "jobs" / name
        (jobdir / "logs").mkdir(parents=True)
        (jobdir / "replicas.json").write_text(json.dumps({"master-0": {"phase": "Succeeded"}}))
        (jobdir / "job.json").write_text(json.dumps({"state": "Succeeded", "created": start}))
        (jobdir / "manifest.json").write_text("{}")
        (jobdir / "logs" / "master-0.log").write_bytes(log)
    return names


# -- reading ----------------------------------------------------------------------------


async def direct_kubernetes(kubeconfig: Path, names: list[str], lines: int) -> float:
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


async def direct_local(root: Path, names: list[str], lines: int) -> float:
    from jupyter_pytorchjob.backends.local.backend import LocalBackend

    backend = LocalBackend(root=root, volume_root=root / "volumes")

    async def one(name: str) -> None:
        seen = 0
        async for chunk in backend.logs(name, follow=True):
            seen += chunk.text.count("\n")
            if seen >= lines:
                break

    start = time.perf_counter()
    await asyncio.gather(*(one(n) for n in names))
    return time.perf_counter() - start


async def probe(
    base: str, started: asyncio.Event, stop_probe: asyncio.Event, out: list[float]
) -> None:
    """Latency of ``GET tensorboards`` every 20 ms until ``stop_probe``, from a separate process,
    so that this process's own work (decoding websocket messages) is not measured."""
    prober = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--probe",
        base,
        stdout=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.PIPE,
    )
    assert prober.stdout is not None
    await prober.stdout.readline()  # its first answer: it pings from now on
    started.set()
    await stop_probe.wait()
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
            async with session.get(f"{base}pytorchjob/api/tensorboards") as r:
                await r.read()
            latencies.append((time.perf_counter() - t) * 1000)
            if len(latencies) == 1:
                print("pinging", flush=True)
            await asyncio.sleep(0.02)
    print(json.dumps(latencies))


async def through_server(
    base: str, names: list[str], lines: int
) -> tuple[float, list[float], float]:
    """How long N websockets took to deliver L lines each, the probe's latencies meanwhile
    and the wall-clock time they started."""
    ws_base = base.replace("http://", "ws://")
    headers = {"Authorization": f"token {TOKEN}"}
    latencies: list[float] = []
    stop_probe = asyncio.Event()

    async def one(session: aiohttp.ClientSession, name: str) -> None:
        url = f"{ws_base}pytorchjob/api/jobs/{name}/logs?follow=1"
        async with session.ws_connect(url, max_msg_size=0) as ws:
            seen = 0
            async for message in ws:
                if isinstance(message.data, bytes):  # a binary batch: header, then texts
                    size = int.from_bytes(message.data[:4], "big")
                    data = json.loads(message.data[4 : 4 + size])
                    seen += message.data.count(b"\n", 4 + size)
                else:  # JSON: the end, an error (or, before binary batches, chunks)
                    data = json.loads(message.data)
                    for chunk in data.get("chunks", [data]):
                        if "text" in chunk:
                            seen += chunk["text"].count("\n")
                if seen >= lines or "end" in data or "error" in data:
                    assert "error" not in data, data
                    break
        assert seen >= lines, f"{name}: {seen} of {lines} lines"

    async with aiohttp.ClientSession(headers=headers) as session:
        started = asyncio.Event()
        prober = asyncio.create_task(probe(base, started, stop_probe, latencies))
        await started.wait()
        began = time.time()
        start = time.perf_counter()
        await asyncio.gather(*(one(session, n) for n in names))
        elapsed = time.perf_counter() - start
        stop_probe.set()
        await prober
    return elapsed, latencies, began


# -- servers and figures ----------------------------------------------------------------


@dataclass
class Server:
    """One ``jupyter server`` (a code's) and what was measured on it."""

    label: str
    code: Path
    process: subprocess.Popen[bytes]
    base: str
    lags: Path
    idle: tuple[float, float] = (0.0, 0.0)
    windows: list[tuple[float, float]] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    cpu_per_kline: list[float] = field(default_factory=list)  # ms of CPU per 1,000 lines
    fake_cpu_per_kline: list[float] = field(default_factory=list)


def start_server(label: str, code: Path, tmp: Path, env: dict[str, str], args: list[str]) -> Server:
    port = free_port()
    lags = tmp / f"lags-{label}.json"
    server_env = {
        **env,
        "PYTHONPATH": str(code),
        "JUPYTER_RUNTIME_DIR": str(tmp / f"rt-{label}"),
        "LOOP_MONITOR_OUT": str(lags),
    }
    if os.environ.get("LOOP_MONITOR_PROFILE"):
        server_env["LOOP_MONITOR_PROFILE"] = f"{os.environ['LOOP_MONITOR_PROFILE']}.{label}"
    process = subprocess.Popen(
        server_argv(
            port,
            tmp,
            "--ServerApp.jpserver_extensions={'jupyter_pytorchjob': True}",
            *args,
        ),
        env=server_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return Server(label, code, process, f"http://127.0.0.1:{port}/", lags)


def percentile(values: list[float], share: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * share))]


def stats(values: list[float]) -> str:
    p99 = percentile(values, 0.99)
    values = sorted(values)
    return f"p50 {statistics.median(values):6.1f}  p99 {p99:6.1f}  max {values[-1]:6.1f} ms"


def spread(values: list[float], unit: str = "", digits: int = 2) -> str:
    """min / median / max."""
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{low:.{digits}f} / {mid:.{digits}f} / {high:.{digits}f}{unit}"


async def measure(
    backend: str,
    servers: list[Server],
    names: list[str],
    args: argparse.Namespace,
    read_direct: Callable[[], Awaitable[float]],
    fake_pid: int | None,
) -> None:
    total = args.streams * args.lines
    for server in servers:
        idle: list[float] = []
        stop_probe = asyncio.Event()
        began = time.time()
        started = asyncio.Event()
        idler = asyncio.create_task(probe(server.base, started, stop_probe, idle))
        await started.wait()
        await asyncio.sleep(IDLE_SECONDS)
        stop_probe.set()
        await idler
        server.idle = (began, time.time())
        print(f"{backend} {server.label}: idle probe {stats(idle)}")
    for run in range(args.runs):
        order = servers if run % 2 == 0 else servers[::-1]
        for server in order:
            client_cpu = time.process_time()
            t_direct = await read_direct()
            direct_cpu = time.process_time() - client_cpu
            cpu = cpu_seconds(server.process.pid)
            client_cpu = time.process_time()
            fake_cpu = cpu_seconds(fake_pid) if fake_pid else 0.0
            t_server, loaded, began = await through_server(server.base, names, args.lines)
            server.windows.append((began, time.time()))
            cpu = cpu_seconds(server.process.pid) - cpu
            client_cpu = time.process_time() - client_cpu
            server.cpu_per_kline.append(cpu / total * 1e6)
            if fake_pid:
                server.fake_cpu_per_kline.append((cpu_seconds(fake_pid) - fake_cpu) / total * 1e6)
            ratio = t_direct / t_server
            server.ratios.append(ratio)
            print(
                f"{backend} run {run} {server.label:>7}: direct {total / t_direct:8.0f} lines/s"
                f"  server {total / t_server:8.0f} lines/s  ratio {ratio:.2f}"
                f"  server CPU {cpu:.2f} s  (client CPU: direct {direct_cpu:.2f} s, through "
                f"the server {client_cpu:.2f} s)  probe under load {stats(loaded)}"
            )


def report(backend: str, servers: list[Server]) -> None:
    """The servers' loop stalls and collections (from their monitors, after they exit),
    each run against the idle window, and the spread over the runs."""
    for server in servers:
        samples = json.loads(server.lags.read_text())
        collections = json.loads(server.lags.with_name(server.lags.name + ".gc").read_text())

        def within(start: float, end: float, samples: list[list[float]] = samples) -> list[float]:
            return [lag for t, lag in samples if start <= t <= end]

        floor = within(*server.idle)
        print(f"{backend} {server.label}: loop lag idle {stats(floor)}")
        above = []
        for i, (start, end) in enumerate(server.windows):
            loaded = within(start, end)
            above.append(max(loaded) - percentile(floor, 0.99))
            when = max((lag, t) for t, lag in samples if start <= t <= end)[1] - start
            mine = [(pause, gen) for t, pause, gen in collections if start <= t <= end]
            full = sum(1 for _, gen in mine if gen == 2)
            longest = max((pause for pause, _ in mine), default=0.0)
            print(
                f"{backend} {server.label} run {i}: loop lag {stats(loaded)}, worst above the "
                f"idle p99 {above[-1]:.1f} ms (at +{when:.2f} s of {end - start:.2f} s); "
                f"GC {len(mine)} ({full} full), longest "
                f"{longest:.1f} ms"
            )
        slow_file = server.lags.with_name(server.lags.name + ".slow")
        if slow_file.exists():  # LOOP_MONITOR_SLOW: the callbacks that held the loop
            held: dict[str, list[float]] = {}
            for t, took, what in json.loads(slow_file.read_text()):
                if any(start <= t <= end for start, end in server.windows):
                    held.setdefault(what.rpartition(" at ")[2], []).append(took)
            for what, times in sorted(held.items(), key=lambda kv: -max(kv[1]))[:8]:
                print(f"   held the loop {len(times):4d}x, worst {max(times):6.1f} ms: {what}")
        fake = (
            f"; fake API server CPU {spread(server.fake_cpu_per_kline, ' ms', 1)}"
            if server.fake_cpu_per_kline
            else ""
        )
        print(
            f"== {backend} {server.label}: ratio server/direct {spread(server.ratios)} "
            f"(goal >= 0.9); worst stall above the idle p99 {spread(above, ' ms', 1)} "
            "(goal <= 10); "
            f"server CPU per 1,000 lines {spread(server.cpu_per_kline, ' ms')}{fake}"
            "  (min / median / max)"
        )


async def bench_kubernetes(args: argparse.Namespace, codes: dict[str, Path], tmp: Path) -> None:
    kubeconfig = tmp / "kubeconfig"
    fake_port = free_port()
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
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    servers: list[Server] = []
    try:
        fake_url = f"http://127.0.0.1:{fake_port}"
        await wait_http(f"{fake_url}/version")
        servers = [
            start_server(f"k-{label}", code, tmp, env, ["--PyTorchJobApp.backend=kubernetes"])
            for label, code in codes.items()
        ]
        for server in servers:
            await wait_http(f"{server.base}api/status")
        names = await seed_kubernetes(fake_url, kubeconfig, args.streams, args.lines)
        print(f"kubernetes: {args.streams} streams x {args.lines} lines")

        async def read_direct() -> float:
            return await direct_kubernetes(kubeconfig, names, args.lines)

        await measure("kubernetes", servers, names, args, read_direct, fake.pid)
    finally:
        for server in servers:
            stop(server.process)
        stop(fake)
    report("kubernetes", servers)


async def bench_local(args: argparse.Namespace, codes: dict[str, Path], tmp: Path) -> None:
    root = tmp / "ptjob-home"
    names = seed_local(root, args.streams, args.lines)
    env = {**os.environ, "PTJOB_HOME": str(root)}
    servers = [
        start_server(f"l-{label}", code, tmp, env, ["--PyTorchJobApp.backend=local"])
        for label, code in codes.items()
    ]
    try:
        for server in servers:
            await wait_http(f"{server.base}api/status")
        print(f"local: {args.streams} streams x {args.lines} lines")

        async def read_direct() -> float:
            return await direct_local(root, names, args.lines)

        await measure("local", servers, names, args, read_direct, None)
    finally:
        for server in servers:
            stop(server.process)
    report("local", servers)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("kubernetes", "local", "both"), default="both")
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    baseline = parser.add_mutually_exclusive_group()
    baseline.add_argument(
        "--base", help="a git revision whose server code is the baseline (e.g. main)"
    )
    baseline.add_argument(
        "--server-code",
        type=Path,
        help="a directory holding the baseline server's jupyter_pytorchjob (e.g. a `git "
        "archive` of an earlier revision)",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    tmp = Path(tempfile.mkdtemp(prefix="ptjob-bench-"))
    try:
        codes = {}
        if args.base:
            codes["base"] = package_of(args.base, tmp / "base")
        elif args.server_code:
            codes["base"] = args.server_code
        codes["product"] = REPO
        if args.backend in ("kubernetes", "both"):
            await bench_kubernetes(args, codes, tmp)
        if args.backend in ("local", "both"):
            await bench_local(args, codes, tmp)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--probe"]:
        asyncio.run(probe_process(sys.argv[2]))
    else:
        asyncio.run(main())
