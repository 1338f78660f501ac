"""Progress bars that never end their line (#25 item 4): before/after, side by side.

A job redraws a tqdm-like bar ``--updates`` times with ``\\r`` and no newline (~210 bytes
each). Measured, each with the code of ``--base`` (a git revision: before) and of the
working tree (after), runs alternating:

* ``wrapper``: ``python job.py | cat`` with the log-archive wrapper around the job vs
  without it (the wrapper's cost, as a ratio to the plain job);
* ``pump``: the local log pump's line splitting of the same bytes, in this process (the
  local backend's side, already linear before: the reference);
* ``reader``: the kubernetes log reader (``LogMerger``) reading a pod log that is one
  line of ``--mb`` MiB of such redraws (the kubelet gives a bar that way), from a local
  HTTP server: wall time and the longest stall of this process's event loop (a 5 ms
  ticker).

    python benchmarks/log_redraws.py [--updates 400000] [--mb 200] [--runs 3]
                                     [--base 07df0b5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from aiohttp import web  # noqa: E402
from log_archive import timed  # noqa: E402
from pod_logs import git_show, merger, old_module  # noqa: E402

from jupyter_pytorchjob.backends.kubernetes import logs as new_logs  # noqa: E402
from jupyter_pytorchjob.job.loglines import DisplayLines  # noqa: E402
from jupyter_pytorchjob.kinds.log_archive import WRAPPER  # noqa: E402

JOB = (
    "import sys\nw = sys.stdout.write\nbar = '#' * 150\n"
    "for i in range({count}):\n"
    "    w('\\r%9d/{count} |%s| 12.34it/s [00:01<00:02, loss=0.1234]' % (i, bar))\n"
)
UPDATE = b"\r%9d/400000 |" + b"#" * 150 + b"| 12.34it/s [00:01<00:02, loss=0.1234]"
STAMP = b"2026-11-22T04:25:01.123456789Z "


def bench_wrapper(args: argparse.Namespace, old_wrapper: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {
            **os.environ,
            "PTJOB_LOG_ARCHIVE": str(root / "archive"),
            "PTJOB_REPLICA_TYPE": "master",
            "PTJOB_REPLICA_INDEX": "0",
        }
        job = [sys.executable, "-c", JOB.format(count=args.updates)]
        times: dict[str, list[float]] = {"plain": [], "before": [], "after": []}
        for _ in range(args.runs):
            times["plain"].append(timed(job, env, root / "out")[0])
            for label, text in (("before", old_wrapper), ("after", WRAPPER)):
                wrapped = [sys.executable, "-c", text, *job]
                times[label].append(timed(wrapped, env, root / "out")[0])
                for path in (root / "archive").iterdir():
                    path.unlink()
        plain = statistics.median(times["plain"])
        print(f"wrapper, {args.updates} updates (median of {args.runs}): plain {plain:.2f} s")
        for label in ("before", "after"):
            wrapped = statistics.median(times[label])
            print(f"  wrapped {label}: {wrapped:.2f} s = {wrapped / plain:.2f}x plain")


def bench_pump(args: argparse.Namespace, old_pump: types.ModuleType) -> None:
    data = b"".join(UPDATE % i for i in range(args.updates))
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(args.runs):
        for label, splitter in (("before", old_pump.LineSplitter), ("after", DisplayLines)):
            lines = splitter()
            start = time.process_time()
            count = 0
            for at in range(0, len(data), 65536):
                count += len(lines.feed(data[at : at + 65536]))
            count += len(lines.close())
            times[label].append(time.process_time() - start)
            assert count == args.updates, (label, count)
    before, after = (statistics.median(times[k]) for k in ("before", "after"))
    print(
        f"pump, {args.updates} updates, CPU (median): before {before:.3f} s, "
        f"after {after:.3f} s ({after / before:.2f}x)"
    )


async def read_log(merger_class: Any, mb: int) -> tuple[float, float, int]:
    """Wall time, the longest loop stall (ms) and the lines of one pod log of ``mb`` MiB
    that is one line of redraws."""
    block = b"".join(UPDATE % i for i in range(4096))
    blocks = mb * 2**20 // len(block) + 1

    async def write(pod: str, response: web.StreamResponse) -> None:
        await response.write(STAMP)
        for _ in range(blocks):
            await response.write(block)
        await response.write(b"\n")

    stall = 0.0
    stop = False

    async def ticker() -> None:
        nonlocal stall
        last = time.perf_counter()
        while not stop:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            stall = max(stall, now - last - 0.005)
            last = now

    lines = 0
    async with merger(merger_class, "bar", ["master-0"], write) as reader:
        tick = asyncio.create_task(ticker())
        start = time.perf_counter()
        try:
            async for chunk in reader.chunks():
                lines += chunk.text.count("\n")
        finally:
            elapsed = time.perf_counter() - start
            stop = True
            await tick
    return elapsed, stall * 1000, lines


def bench_reader(args: argparse.Namespace, old_logs: types.ModuleType) -> None:
    times: dict[str, list[tuple[float, float, int]]] = {"before": [], "after": []}
    for _ in range(args.runs):
        for label, module in (("before", old_logs), ("after", new_logs)):
            times[label].append(asyncio.run(read_log(module.LogMerger, args.mb)))
    for label in ("before", "after"):
        wall = statistics.median(t[0] for t in times[label])
        stall = max(t[1] for t in times[label])
        lines = times[label][0][2]
        print(
            f"reader, one {args.mb} MiB line of redraws, {label}: {wall:.2f} s "
            f"({args.mb / wall:.0f} MiB/s), worst loop stall {stall:.0f} ms, {lines} lines"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--updates", type=int, default=400_000)
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--base", default="07df0b5", help="the revision measured as before")
    parser.add_argument("--only", choices=["wrapper", "pump", "reader"])
    args = parser.parse_args()
    if args.only in (None, "wrapper"):
        bench_wrapper(args, git_show(args.base, "jupyter_pytorchjob/kinds/archive_wrapper.py"))
    if args.only in (None, "pump"):
        old = "jupyter_pytorchjob/backends/local/logpump.py"
        bench_pump(args, old_module(args.base, old, "jupyter_pytorchjob.backends.local"))
    if args.only in (None, "reader"):
        old = "jupyter_pytorchjob/backends/kubernetes/logs.py"
        bench_reader(args, old_module(args.base, old, "jupyter_pytorchjob.backends.kubernetes"))


if __name__ == "__main__":
    main()
