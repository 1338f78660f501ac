"""What progress costs the side panel: its first render and ``GET jobs`` with and
without a ``progress`` on every job, side by side (local backend, this checkout's built
extension: run ``jlpm build`` first).

Seeds one job root as ``panel_first_render.py`` does (1,000 jobs, 10 running), measures
it, then gives every job a progress (in ``job.json``, as a job's supervisor writes it:
percent, ETA, step, epoch and three metrics) and measures again with a fresh server and
fresh pages. Prints both and their ratio; goal: the panel's first render within 1.2x.

    python benchmarks/panel_progress_render.py [--jobs 1000] [--running 10] [--runs 5]

Figures (2-core development machine shared with other work, so +-30 %; Debian Chromium
headless; medians of 5 fresh pages). Two runs: the first with progress in its own
``progress.json``, the second after it moved into ``job.json``:

                        (ms)  |  run 1: none / progress / ratio | run 2: none / progress / ratio
              GET jobs, first |        1676 /   1850 / 1.10  |        1380 /    550 / 0.40
             GET jobs, median |         248 /    307 / 1.24  |          87 /     78 / 0.90
   panel first render, median |         350 /    263 / 0.75  |         147 /    174 / 1.18
  of which after the response |         138 /    111 / 0.80  |          75 /     87 / 1.16
                rows rendered |          50 /     50         |          50 /     50

A row's progress is five small elements (the bar and its fill, percent, ETA, metric) and
no chart; the first page's 50 rows render within the goal (1.2x) in both runs, the
difference below the machine's noise.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from local_jobs_list import remove, seed  # this directory: the same roots and server
from panel_first_render import measure

from jupyter_pytorchjob.backends.local import LocalBackend, index
from jupyter_pytorchjob.backends.local.progress import PROGRESS_KEY
from jupyter_pytorchjob.backends.local.store import JobDir, read_json, write_json


def give_every_job_progress(backend: LocalBackend) -> int:
    """Write a progress into every job's directory; how many jobs got one."""
    count = 0
    for path in sorted(backend.jobs_dir.iterdir()):
        if not path.is_dir():
            continue  # the index of settled jobs
        wire = {
            "percent": 42.0,
            "etaSeconds": 95.0,
            "step": 420,
            "totalSteps": 1000,
            "epoch": 1.3,
            "totalEpochs": 3.0,
            "metrics": {"loss": 0.2314, "accuracy": 0.91, "learning_rate": 2e-5},
            "keyMetric": "loss",
            "source": "report",
            "updated": time.time(),
        }
        job = JobDir(path).job
        write_json(job, {**read_json(job), PROGRESS_KEY: wire})
        count += 1
    # Written behind the supervisors' backs: the index no longer says what the files do;
    # the server's first list makes it again from them.
    index.index_path(backend.jobs_dir).unlink(missing_ok=True)
    return count


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--running", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ptjob-bench-progress-"))
    backends: list[LocalBackend] = []
    try:
        backend = await seed(tmp / "jobs", args.jobs, args.running)
        backends.append(backend)
        without, stall_without = await measure(backend.root, tmp, args.jobs, args.runs)
        given = give_every_job_progress(backend)
        listed = await backend.list_jobs()
        shown = sum(job.progress is not None for job in listed)
        assert shown == given == args.jobs, (shown, given)
        with_progress, stall_with = await measure(backend.root, tmp, args.jobs, args.runs)
        keys = (
            ("getJobsFirstMs", "GET jobs, first"),
            ("getJobsMedianMs", "GET jobs, median"),
            ("firstRenderMedianMs", "panel first render, median"),
            ("afterResponseMedianMs", "of which after the response"),
            ("longestTaskMs", "longest task"),
        )
        print(f"{args.jobs} jobs ({args.running} running), {args.runs} fresh pages each")
        print(f"{'':>30} | {'no progress':>12} | {'progress':>12} | ratio")
        for key, label in keys:
            a, b = float(without[key]), float(with_progress[key])  # type: ignore[arg-type]
            print(f"{label:>30} | {a:>9.0f} ms | {b:>9.0f} ms | {b / a if a else 0:.2f}")
        print(f"{'server loop stall':>30} | {stall_without:>9.0f} ms | {stall_with:>9.0f} ms |")
        rows = (str(without["rowsRendered"]), str(with_progress["rowsRendered"]))
        print(f"{'rows rendered':>30} | {rows[0]:>12} | {rows[1]:>12} |")
        print("(goal: the panel's first render with progress within 1.2x of without)")
    finally:
        await remove(backends, tmp)


if __name__ == "__main__":
    asyncio.run(main())
