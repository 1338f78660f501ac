"""``GET pytorchjob/api/jobs`` on the local backend with 10 jobs and with 1,000.

Two job roots: 10 jobs, and 1,000 jobs; in each, a few jobs run (single-node jobs that
sleep) and the rest have finished (copies of one real finished 2-node job, with its
logs). A real ``jupyter server`` (local backend) serves each root in turn; the benchmark
times ``GET jobs`` (every job's state, replicas and conditions, as the panel polls it)
and prints both figures side by side (goal: <= 300 ms with 1,000 jobs; the first request
reads every job, later ones only what changed), the 1,000-job time per job, and how long
the server's event loop stalled meanwhile. With ``--cold`` the page cache is dropped
(``/proc/sys/vm/drop_caches``, as root) once the server is up, before its first request:
the first ``GET jobs`` after a reboot (goal: <= 300 ms with 1,000 jobs); the
benchmark says when it cannot drop it.

    python benchmarks/local_jobs_list.py [--jobs 1000] [--running 10] [--requests 20] [--cold]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import aiohttp
import psutil
from log_streams import (  # this directory: the same server helpers
    free_port,
    server_argv,
    stop,
    wait_http,
)

from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.backends.local.backend import supervision_gone
from jupyter_pytorchjob.backends.local.index import read_index
from jupyter_pytorchjob.backends.local.store import read_json
from jupyter_pytorchjob.job import JobSpec

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench"
IDLE = 3.0  # seconds the server idles before the requests: the stalls' baseline


def spec(name: str, command: list[str], nodes: int = 1) -> JobSpec:
    return JobSpec.from_wire({"name": name, "nodes": nodes, "shm": "off", "command": command})


async def settled_template(backend: LocalBackend, template: str) -> None:
    """Run the 2-node job every finished job copies until it is settled: its supervisor's
    last act puts it into the index, then it and its watchdog exit. A copy taken while
    the supervisor still wrote showed a node running for ever, so none of the copies was
    ever indexed and every list read all their files: the benchmark measured that race."""
    await backend.submit(spec(template, ["python", "-c", "print('x\\n' * 1000)"], nodes=2))
    await backend.wait(template, timeout=60, interval=0.1)
    deadline = time.monotonic() + 60
    while template not in read_index(backend.jobs_dir) or not supervision_gone(
        read_json(backend.jobs_dir / template / "job.json", {})
    ):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{template} never settled")
        await asyncio.sleep(0.05)


async def seed(root: Path, jobs: int, running: int) -> LocalBackend:
    """``jobs`` jobs under ``root``, ``running`` of them running."""
    backend = LocalBackend(root=root, default_workdir=REPO)
    finished = jobs - running
    template = "done-0"
    for _ in range(5):
        await settled_template(backend, template)
        replicas = read_json(backend.jobs_dir / template / "replicas.json", {})
        if all(r.get("phase") != "Running" for r in replicas.values()):
            break
        # Its master succeeded first and the clean-up stopped the worker, whose phase
        # stayed Running: a list (unlike its supervisor) never takes such a job as
        # settled, so no copy of it would be indexed. Another run of it.
        await backend.delete_job(template)
    else:
        raise RuntimeError(f"{template} kept ending with a node shown Running")
    temp_files = shutil.ignore_patterns(".*.tmp")
    for i in range(1, finished):
        shutil.copytree(
            backend.jobs_dir / template, backend.jobs_dir / f"done-{i}", ignore=temp_files
        )
    for i in range(running):
        await backend.submit(spec(f"run-{i}", ["sleep", "600"]))
    # As a server has since the jobs finished: every finished one in the index.
    deadline = time.monotonic() + 60
    while len(read_index(backend.jobs_dir)) < finished:
        if time.monotonic() > deadline:
            indexed = len(read_index(backend.jobs_dir))
            raise RuntimeError(f"{indexed} of the {finished} finished jobs indexed")
        await backend.list_jobs()
        await asyncio.sleep(0.1)
    return backend


def drop_page_cache() -> str | None:
    """Evict the page cache (clean pages: ``sync`` first); why not, or None."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as err:
        return str(err)
    return None


async def remove(backends: list[LocalBackend], tmp: Path) -> None:
    """Stop the running jobs ``seed`` started and remove ``tmp``."""
    for backend in backends:
        for job in await backend.list_jobs():
            if job.name.startswith("run-"):
                await backend.delete_job(job.name)
    shutil.rmtree(tmp, ignore_errors=True)


def serve(
    root: Path,
    tmp: Path,
    lags: Path,
    *args: str,
    extensions: str = "{'jupyter_pytorchjob': True}",
    env: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """``jupyter server`` with the loop monitor (``server_with_loop_monitor.py``, stalls
    written to ``lags``) on the local backend's ``root``, and its port; ``args`` add to
    the command line."""
    port = free_port()
    environ = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(tmp / "rt"),
        "LOOP_MONITOR_OUT": str(lags),
        **(env or {}),
    }
    server = subprocess.Popen(
        server_argv(
            port,
            tmp,
            "--PyTorchJobApp.backend=local",
            f"--PyTorchJobApp.local_root={root}",
            f"--ServerApp.jpserver_extensions={extensions}",
            *args,
        ),
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return server, port


async def time_list(
    root: Path, tmp: Path, requests: int, cold: bool = False
) -> tuple[list[float], int, float, float, float]:
    """Latencies of ``GET jobs`` (ms), the number of jobs listed, the worst loop stall
    meanwhile, the idle server's 99th percentile stall (the machine's own noise, over
    ``IDLE`` s before the requests) and the server's CPU time (ms, user + system) during
    the first request, which other work on the machine changes less than its latency;
    ``cold``: the page cache dropped before the first request."""
    lags = tmp / f"lags-{root.name}.json"
    server, port = serve(root, tmp, lags)
    base = f"http://127.0.0.1:{port}/"
    latencies = []
    count = 0
    first_cpu = 0.0
    began = time.time()
    try:
        await wait_http(f"{base}api/status")
        idle = (time.time(), time.time() + IDLE)
        await asyncio.sleep(IDLE)
        if cold and (why := drop_page_cache()) is not None:
            print(f"(cannot drop the page cache: {why}; the first request is warm)")
        began = time.time()
        headers = {"Authorization": f"token {TOKEN}"}
        async with aiohttp.ClientSession(headers=headers) as session:
            for _ in range(requests):
                cpu = sum(psutil.Process(server.pid).cpu_times()[:2])
                start = time.perf_counter()
                async with session.get(f"{base}pytorchjob/api/jobs") as response:
                    body = await response.json()
                    assert response.status == 200, body
                latencies.append((time.perf_counter() - start) * 1000)
                if len(latencies) == 1:
                    first_cpu = (sum(psutil.Process(server.pid).cpu_times()[:2]) - cpu) * 1000
                count = len(body["jobs"]) if isinstance(body, dict) else len(body)
    finally:
        stop(server)
    samples = json.loads(lags.read_text())
    stalls = [lag for when, lag in samples if when >= began]
    quiet = sorted(lag for when, lag in samples if idle[0] <= when < idle[1]) or [0.0]
    return latencies, count, max(stalls, default=0.0), quiet[int(len(quiet) * 0.99)], first_cpu


def stats(values: list[float]) -> str:
    """The first request (nothing cached yet), then the median and p90 of the others."""
    first, rest = values[0], sorted(values[1:])
    return (
        f"first {first:7.1f} ms, then median {statistics.median(rest):7.1f} ms  "
        f"p90 {rest[int(len(rest) * 0.9)]:7.1f} ms"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--running", type=int, default=10)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--cold", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ptjob-bench-"))
    backends = []
    try:
        small = await seed(tmp / "small", 10, min(args.running, 3))
        large = await seed(tmp / "large", args.jobs, args.running)
        backends = [small, large]
        results = {}
        for label, backend in (("10 jobs", small), (f"{args.jobs} jobs", large)):
            results[label] = await time_list(backend.root, tmp, args.requests, args.cold)
        for label, (latencies, count, stall, idle_p99, first_cpu) in results.items():
            print(
                f"GET jobs, {label:>10}: {stats(latencies)}   ({count} listed; "
                f"the first took {first_cpu:.0f} ms of the server's CPU; "
                f"worst loop stall {stall:.0f} ms, {stall - idle_p99:+.0f} ms above the idle "
                f"server's p99 {idle_p99:.0f} ms)"
            )
        large_median = statistics.median(results[f"{args.jobs} jobs"][0][1:])
        print(
            f"per job at {args.jobs}: {large_median / args.jobs * 1000:.0f} us  "
            f"(goal: {args.jobs} jobs <= 300 ms)"
        )
    finally:
        await remove(backends, tmp)


if __name__ == "__main__":
    asyncio.run(main())
