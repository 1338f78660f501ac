"""``GET pytorchjob/api/jobs`` on the kubernetes backend with every job's progress read
from the cluster (master pod logs through the API, event files through the notebook's
PVC mount), against the same list with those sources off.

Set-up: the fake Kubernetes API (tests/fake_kube, its own process, operator on), a
notebook pod ``nb-0`` mounting PVC ``workspace`` at a directory of this machine, and N
running PyTorchJobs whose master pods' logs hold 1 GB in all (tqdm redraws, Hugging Face
dict lines, plain output) and whose log directories on that PVC 100 MB of event files.
Two real ``jupyter server`` processes on the same fake: one reads progress
(``kubernetes_progress_interval``, default 5 s), one does not (0).

Prints: how long the reading server took until every job showed its progress from both
sources (a first read takes each log's tail, event files are read from the start); the
medians of ``GET jobs`` on both, requests alternating (goal: ratio <= 1.2 and < 300 ms);
the time from a new tqdm line in a master's log to ``GET jobs`` showing it, against the
poll interval (goal: at most one poll behind), written at a random moment of the
interval so that the figures are its distribution, not the time right after a poll;
the CPU each server (with its parser process) uses while somebody looks and nothing is
new, as a share of one core.

    python benchmarks/progress_list_kubernetes.py [--jobs 100] [--log-mb 1024]
        [--events-mb 100] [--interval 5] [--requests 20] [--cpu-window 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import psutil
from kubernetes_asyncio import client, config
from log_streams import NS, free_port, hook, server_argv, stop, wait_http
from progress_list import STEPS, events_blob, log_blob

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench"


def plain_log(size: int) -> bytes:
    """``log_blob``'s lines without its timestamps: the kubelet stamps a pod's lines."""
    return b"\n".join(line.partition(b" ")[2] for line in log_blob(size).split(b"\n")[:-1]) + b"\n"


async def seed(
    fake: str, kubeconfig: Path, ws: Path, jobs: int, log_mb: float, ev_mb: float
) -> None:
    await config.load_kube_config(config_file=str(kubeconfig))
    api = client.ApiClient()
    custom = client.CustomObjectsApi(api)
    sys.path.insert(0, str(REPO))
    from jupyter_pytorchjob.job import JobSpec
    from jupyter_pytorchjob.kinds.pytorchjob.manifest import build_manifest

    log = plain_log(int(log_mb * (1 << 20) / jobs))
    events = events_blob(int(ev_mb * (1 << 20) / jobs))
    block = 1 << 20
    notebook = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "nb-0", "namespace": NS, "labels": {"notebook-name": "nb"}},
        "spec": {
            "containers": [
                {
                    "name": "nb",
                    "image": "nb",
                    "volumeMounts": [{"name": "ws", "mountPath": str(ws)}],
                }
            ],
            "volumes": [{"name": "ws", "persistentVolumeClaim": {"claimName": "workspace"}}],
        },
        "status": {"phase": "Running"},
    }
    async with aiohttp.ClientSession() as session:
        await hook(session, fake, "add", notebook)
        for i in range(jobs):
            name = f"run-{i}"
            spec = JobSpec.from_wire(
                {
                    "name": name,
                    "command": ["python", "train.py"],
                    "pvc": [{"claim": "workspace", "mountPath": "/mnt/ws"}],
                    "logdir": f"/mnt/ws/runs/{name}",
                }
            )
            await custom.create_namespaced_custom_object(
                "kubeflow.org", "v1", NS, "pytorchjobs", build_manifest(spec)
            )
            await hook(session, fake, "operator/run", NS, name)
            for start in range(0, len(log), block):
                cut = log.rfind(b"\n", start, start + block) + 1 or len(log)
                text = log[start:cut].decode()
                await hook(session, fake, "append_log", NS, f"{name}-master-0", "pytorch", text)
            (ws / "runs" / name).mkdir(parents=True)
            (ws / "runs" / name / "events.out.tfevents.1.bench").write_bytes(events)
    await api.close()


def serve(
    tmp: Path, kubeconfig: Path, interval: float, tag: str
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "KUBECONFIG": str(kubeconfig),
        "JUPYTER_RUNTIME_DIR": str(tmp / f"rt-{tag}"),
    }
    env.pop("KUBERNETES_SERVICE_HOST", None)
    env["LOOP_MONITOR_OUT"] = str(tmp / f"lags-{tag}.json")
    server = subprocess.Popen(
        server_argv(
            port,
            tmp,
            "--PyTorchJobApp.backend=kubernetes",
            "--PyTorchJobApp.notebook_pod=nb-0",
            f"--PyTorchJobApp.kubernetes_progress_interval={interval}",
            "--ServerApp.jpserver_extensions={'jupyter_pytorchjob': True}",
        ),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return server, f"http://127.0.0.1:{port}/"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--log-mb", type=float, default=1024)
    parser.add_argument("--events-mb", type=float, default=100)
    parser.add_argument("--interval", type=float, default=5.0)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--tries", type=int, default=8)
    parser.add_argument("--cpu-window", type=float, default=30.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ptjob-kprogress-"))
    kubeconfig, ws = tmp / "kubeconfig", tmp / "ws"
    fake_port = free_port()
    fake = subprocess.Popen(
        [
            *(sys.executable, "-m", "tests.fake_kube", "--port", str(fake_port)),
            *("--operator", "--kubeconfig", str(kubeconfig)),
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
    )
    servers: list[subprocess.Popen[bytes]] = []
    catch_up = (0.0, 0.0)
    polling = [0.0, 0.0]  # the steady-state window, wall-clock
    try:
        fake_url = f"http://127.0.0.1:{fake_port}"
        await wait_http(f"{fake_url}/version")
        began = time.perf_counter()
        await seed(fake_url, kubeconfig, ws, args.jobs, args.log_mb, args.events_mb)
        print(
            f"seeded {args.jobs} running jobs in {time.perf_counter() - began:.0f} s: "
            f"{args.log_mb:.0f} MB of master logs, {args.events_mb:.0f} MB of event files"
        )
        on_server, on = serve(tmp, kubeconfig, args.interval, "on")
        off_server, off = serve(tmp, kubeconfig, 0, "off")
        servers += [on_server, off_server]
        await wait_http(f"{on}api/status", timeout=300)  # a loaded machine
        await wait_http(f"{off}api/status", timeout=300)
        headers = {"Authorization": f"token {TOKEN}"}
        async with aiohttp.ClientSession(headers=headers) as session:

            async def get(base: str, path: str = "jobs") -> tuple[float, object]:
                start = time.perf_counter()
                async with session.get(f"{base}pytorchjob/api/{path}") as response:
                    body = await response.json()
                return (time.perf_counter() - start) * 1000, body

            # Catch-up: every job's progress from both sources (loss: logs; accuracy:
            # only the event files have it).
            began, began_wall = time.perf_counter(), time.time()
            during: list[float] = []
            while True:
                ms, body = await get(on)
                during.append(ms)
                jobs = body["jobs"]  # type: ignore[index]
                if all(
                    j["progress"] and {"loss", "accuracy"} <= set(j["progress"]["metrics"])
                    for j in jobs
                ):
                    break
                assert time.perf_counter() - began < 600, "never caught up"
                await asyncio.sleep(0.5)
            later = during[1:] or during
            print(
                f"every job's progress from logs and event files after "
                f"{time.perf_counter() - began:.1f} s; GET jobs meanwhile: the server's "
                f"first {during[0]:.0f} ms (cold), then median {statistics.median(later):.0f} "
                f"ms, max {max(later):.0f} ms ({len(later)} requests)"
            )
            await get(off)  # warm
            with_progress, without = [], []
            for _ in range(args.requests):
                ms, body = await get(on)
                assert all(j["progress"] for j in body["jobs"])  # type: ignore[index]
                with_progress.append(ms)
                ms, body = await get(off)
                assert not any(j["progress"] for j in body["jobs"])  # type: ignore[index]
                without.append(ms)
                await asyncio.sleep(0.25)
            a, b = statistics.median(with_progress), statistics.median(without)
            print(
                f"GET jobs ({args.jobs} running): with progress median {a:6.1f} ms, "
                f"without {b:6.1f} ms, ratio {a / b:.2f}  (goal <= 1.2 and < 300 ms)"
            )
            catch_up = (began_wall, time.time())
            # Steady state, nothing new: what polling costs (the "off" server is the
            # baseline: the same looks, no progress sources).
            cpu = {
                tag: cpu_seconds(server) for tag, server in (("on", on_server), ("off", off_server))
            }
            window_began, polling[0] = time.perf_counter(), time.time()
            while time.perf_counter() - window_began < args.cpu_window:
                await get(on)
                await get(off)
                await asyncio.sleep(1.0)
            window = time.perf_counter() - window_began
            polling[1] = time.time()
            share = {
                tag: (cpu_seconds(server) - cpu[tag]) / window * 100
                for tag, server in (("on", on_server), ("off", off_server))
            }
            print(
                f"CPU while looked at, nothing new, {args.jobs} running jobs, over {window:.0f} s: "
                f"with progress {share['on']:.1f} % of a core, without {share['off']:.1f} % "
                f"(polling: {share['on'] - share['off']:+.1f} %)"
            )
            delays = []
            for attempt in range(args.tries):
                await asyncio.sleep(random.uniform(0, args.interval))  # any moment of a poll
                step = STEPS - 1000 + attempt
                line = f" 99%|######### | {step}/{STEPS} [01:23<00:01, 5.40it/s, loss=0.1]\n"
                await hook_line(session, fake_url, line)
                written = time.perf_counter()
                while True:
                    _, job = await get(on, "jobs/run-0")
                    if (job["progress"] or {}).get("step") == step:  # type: ignore[index]
                        break
                    assert time.perf_counter() - written < 60, "never shown"
                    await asyncio.sleep(0.05)
                delays.append(time.perf_counter() - written)
            delays.sort()
            print(
                f"new log line -> GET jobs shows it ({len(delays)} at random moments): min "
                f"{delays[0]:.2f} s, median {statistics.median(delays):.2f} s, p90 "
                f"{delays[int(len(delays) * 0.9)]:.2f} s, max {delays[-1]:.2f} s; the poll "
                f"interval is {args.interval:g} s "
                "(goal: at most one poll behind: the interval plus the poll's own time)"
            )
    finally:
        for server in servers:
            stop(server)
        stop(fake)
    lags = json.loads((tmp / "lags-on.json").read_text()) if servers else []
    if servers:  # gc.callbacks in the reading server: no full collection may pause it
        collections = json.loads((tmp / "lags-on.json.gc").read_text())
        for what, (start, end) in (("catching up", catch_up), ("polling", polling)):
            mine = [(pause, gen) for t, pause, gen in collections if start <= t <= end]
            print(
                f"the reading server's garbage collections while {what}: {len(mine)} "
                f"({sum(gen == 2 for _, gen in mine)} full), longest "
                f"{max((pause for pause, _ in mine), default=0.0):.1f} ms"
            )
    stalls = sorted(((lag, t - catch_up[0]) for t, lag in lags if catch_up[0] <= t <= catch_up[1]))
    if stalls:
        print(
            "the reading server's loop while catching up: median stall "
            f"{statistics.median(s for s, _ in stalls):.1f} ms, worst "
            + ", ".join(f"{lag:.0f} ms at +{at:.1f} s" for lag, at in stalls[-3:][::-1])
        )
    shutil.rmtree(tmp, ignore_errors=True)


def cpu_seconds(server: subprocess.Popen[bytes]) -> float:
    """CPU seconds of ``server`` and its children (the progress parser's process)."""
    process = psutil.Process(server.pid)
    total = 0.0
    for each in [process, *process.children(recursive=True)]:
        try:
            times = each.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


async def hook_line(session: aiohttp.ClientSession, fake: str, line: str) -> None:
    async with session.post(
        f"{fake}/_fake/append_log", json={"args": [NS, "run-0-master-0", "pytorch", line]}
    ) as response:
        response.raise_for_status()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
