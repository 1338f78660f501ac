"""Merging replicas' backlogs in time order (#27) vs reading them unmerged, side by side.

``--replicas`` replicas each hold ``--lines`` backlog lines (~80 bytes) stamped so that
they interleave: ``--burst`` lines of one replica, then the next (1: every line of the
merged log comes from another replica than the one before, the worst case). Timed, runs
alternating, the whole backlog read (``follow`` off) through:

* local: ``LocalBackend.logs`` of a finished job whose log files are these; ``before``
  is the code of ``--base`` (a git revision: replica after replica, unmerged), ``merged``
  the working tree's;
* kubernetes: ``LogMerger`` over pods whose logs a local HTTP server serves with these
  stamps (``timestamps=true`` format), ``before`` vs ``merged`` likewise; its CPU time
  includes the server's (the same on both sides), in the same process.

Prints the medians and the ratio merged / unmerged (goal <= 1.3), wall and CPU time.

    python benchmarks/log_merge.py [--replicas 8] [--lines 200000] [--burst 1] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from aiohttp import web  # noqa: E402
from log_streams import package_of  # noqa: E402
from pod_logs import merger, old_module  # noqa: E402

from jupyter_pytorchjob.backends.kubernetes import logs as new_logs  # noqa: E402

T0 = 1_790_000_000
LINE = "step {j:07d} loss 0.123456 accuracy 0.987654 throughput 1234.5 samples/s"


def replica_names(count: int) -> list[str]:
    return ["master-0", *(f"worker-{i}" for i in range(count - 1))]


def logs(count: int, lines: int, burst: int, *, nanos: bool) -> list[bytes]:
    """Each replica's log: line j of replica i at the (burst-interleaved) microsecond."""
    out = []
    for i in range(count):
        rows = []
        for j in range(lines):
            us = ((j // burst) * count + i) * burst + j % burst
            when = datetime.fromtimestamp(T0 + us // 1_000_000, tz=timezone.utc)
            head = when.strftime("%Y-%m-%dT%H:%M:%S")
            frac = f"{us % 1_000_000:06d}000" if nanos else f"{us % 1_000_000:06d}"
            rows.append(f"{head}.{frac}Z {LINE.format(j=j)}\n")
        out.append("".join(rows).encode())
    return out


async def consume(stream: Any) -> tuple[int, int]:
    chunks = lines = 0
    async for chunk in stream:
        chunks += 1
        lines += chunk.text.count("\n")
    return chunks, lines


def local_job(root: Path, data: list[bytes]) -> None:
    """A finished job as the local backend keeps it, with these logs."""
    jobdir = root / "jobs" / "merge"
    (jobdir / "logs").mkdir(parents=True)
    names = replica_names(len(data))
    replicas = {r: {"phase": "Succeeded"} for r in names}
    (jobdir / "replicas.json").write_text(json.dumps(replicas))
    (jobdir / "job.json").write_text(json.dumps({"state": "Succeeded", "created": T0}))
    (jobdir / "manifest.json").write_text("{}")
    for name, log in zip(names, data, strict=True):
        (jobdir / "logs" / f"{name}.log").write_bytes(log)


# A child interpreter's program: the whole backlog through ``LocalBackend.logs`` of the
# ``jupyter_pytorchjob`` on its PYTHONPATH, wall and CPU time (all threads) as JSON.
READ_LOCAL = """
import asyncio, json, sys, time
from pathlib import Path
from jupyter_pytorchjob.backends.local.backend import LocalBackend

async def consume(stream):
    chunks = lines = 0
    async for chunk in stream:
        chunks += 1
        lines += chunk.text.count("\\n")
    return chunks, lines

root = Path(sys.argv[1])
backend = LocalBackend(root=root, volume_root=root / "v")
start, cpu = time.perf_counter(), time.process_time()
chunks, lines = asyncio.run(consume(backend.logs("merge")))
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"wall": wall, "cpu": cpu, "chunks": chunks, "lines": lines}))
"""


def run_local(code: Path, root: Path) -> dict[str, Any]:
    """``READ_LOCAL`` in a fresh interpreter importing the package from ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    argv = [sys.executable, "-c", READ_LOCAL, str(root)]
    out = subprocess.run(
        argv, env=env, cwd=root, capture_output=True, text=True, timeout=600, check=True
    )
    return dict(json.loads(out.stdout.splitlines()[-1]))


def bench_local(args: argparse.Namespace) -> dict[str, list[float]]:
    """The base revision's package (``git archive``: the unmerged reading) and the working
    tree's, each in its own interpreter, runs alternating."""
    data = logs(args.replicas, args.lines, args.burst, nanos=False)
    times: dict[str, list[float]] = {
        k: [] for k in ("before", "merged", "before cpu", "merged cpu")
    }
    with tempfile.TemporaryDirectory() as tmp:
        local_job(Path(tmp), data)
        base = package_of(args.base, Path(tmp) / "base")
        for _ in range(args.runs):
            for label, code in (("before", base), ("merged", REPO)):
                result = run_local(code, Path(tmp))
                assert result["lines"] == args.replicas * args.lines, (label, result)
                times[label].append(result["wall"])
                times[f"{label} cpu"].append(result["cpu"])
                print(
                    f"  local {label}: {result['wall']:.2f} s, {result['cpu']:.2f} s CPU, "
                    f"{result['chunks']} chunks"
                )
    return times


async def kube_read(merger_class: Any, data: list[bytes]) -> tuple[float, float]:
    names = replica_names(len(data))
    by_pod = {f"merge-{r}": log for r, log in zip(names, data, strict=True)}

    async def write(pod: str, response: web.StreamResponse) -> None:
        body = by_pod[pod]
        for at in range(0, len(body), 1 << 20):
            await response.write(body[at : at + (1 << 20)])

    async with merger(merger_class, "merge", names, write) as reader:
        start, cpu = time.perf_counter(), time.process_time()
        _, lines = await consume(reader.chunks())
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert lines == sum(d.count(b"\n") for d in data), lines
    return elapsed, cpu


def bench_kube(args: argparse.Namespace, old: types.ModuleType) -> dict[str, list[float]]:
    data = logs(args.replicas, args.lines, args.burst, nanos=True)
    times: dict[str, list[float]] = {
        k: [] for k in ("before", "merged", "before cpu", "merged cpu")
    }
    for _ in range(args.runs):
        for label, module in (("before", old), ("merged", new_logs)):
            wall, cpu = asyncio.run(kube_read(module.LogMerger, data))
            times[label].append(wall)
            times[f"{label} cpu"].append(cpu)
            print(f"  kubernetes {label}: {wall:.2f} s, {cpu:.2f} s CPU (with the log server's)")
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replicas", type=int, default=8)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--burst", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--base", default="07df0b5", help="the revision measured as before")
    parser.add_argument("--only", choices=["local", "kubernetes"])
    args = parser.parse_args()
    results = {}
    package = "jupyter_pytorchjob.backends"
    if args.only in (None, "local"):
        results["local"] = bench_local(args)
    if args.only in (None, "kubernetes"):
        path = "jupyter_pytorchjob/backends/kubernetes/logs.py"
        results["kubernetes"] = bench_kube(
            args, old_module(args.base, path, f"{package}.kubernetes")
        )
    print(f"{args.replicas} replicas x {args.lines} lines, bursts of {args.burst}:")
    for backend, times in results.items():
        before, merged = (statistics.median(times[k]) for k in ("before", "merged"))
        print(
            f"  {backend}: unmerged (before) {before:.2f} s, merged {merged:.2f} s, "
            f"ratio {merged / before:.2f} (goal <= 1.3)"
        )
        if "before cpu" in times:
            before, merged = (statistics.median(times[k]) for k in ("before cpu", "merged cpu"))
            print(
                f"  {backend} CPU time (process_time, all threads): unmerged (before) "
                f"{before:.2f} s, merged {merged:.2f} s, ratio {merged / before:.2f} (goal <= 1.3)"
            )


if __name__ == "__main__":
    main()
