"""The log archive wrapper's cost: a job printing lines, with and without it.

The job writes ``--mb`` MiB of ~80-byte lines as fast as Python can (a worst case: a
real training job computes between its prints). Its output goes, as in a container,
through a pipe to a reader that stores it (``cat`` into a file plays the container
runtime). Timed from launch until the job has exited and its output is stored:

* ``plain``:   python job.py | cat > container.log
* ``wrapped``: python -c WRAPPER python job.py | cat > container.log, the wrapper also
  writing the timestamped archive file.

Runs alternate; prints each run, then the median ratios of wall time (goal: <= 1.05) and
of CPU time (job + wrapper + reader: what the wrapper costs a busy node). Then the start
time: ``python -c pass`` with and without the wrapper (median of ``--starts`` runs), the
wrapper's fixed cost per container start.

    python benchmarks/log_archive.py [--mb 1024] [--runs 3] [--starts 20]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyter_pytorchjob.kinds.log_archive import WRAPPER

JOB = (
    "import sys\nw = sys.stdout.write\n"
    "for i in range({count}):\n"
    "    w('step %09d loss 0.123456 accuracy 0.987654 throughput 1234.5 samples/s\\n' % i)\n"
)
LINE = 80


def cpu() -> float:
    """CPU seconds of every child waited for so far (job, wrapper, cat)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], env: dict[str, str], log: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one run."""
    start, used = time.perf_counter(), cpu()
    with log.open("wb") as out:
        job = subprocess.Popen(command, stdout=subprocess.PIPE, env=env)
        runtime = subprocess.Popen(["cat"], stdin=job.stdout, stdout=out)
        assert job.stdout is not None
        job.stdout.close()
        if job.wait() != 0 or runtime.wait() != 0:
            raise SystemExit(f"{command[:3]} failed")
    return time.perf_counter() - start, cpu() - used


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--starts", type=int, default=20)
    args = parser.parse_args()
    count = args.mb * 2**20 // LINE
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        archive = root / "archive"
        env = {
            **os.environ,
            "PTJOB_LOG_ARCHIVE": str(archive),
            "PTJOB_REPLICA_TYPE": "master",
            "PTJOB_REPLICA_INDEX": "0",
        }
        job = [sys.executable, "-c", JOB.format(count=count)]
        wrapper = [sys.executable, "-c", WRAPPER]
        ratios, cpu_ratios = [], []
        print(f"job: {count} lines, {count * LINE / 2**20:.0f} MiB")
        for run in range(args.runs):
            plain, plain_cpu = timed(job, env, root / "plain.log")
            (root / "plain.log").unlink()
            wrapped, wrapped_cpu = timed([*wrapper, *job], env, root / "wrapped.log")
            stored = sum(p.stat().st_size for p in archive.iterdir())
            for path in [root / "wrapped.log", *archive.iterdir()]:
                path.unlink()
            ratios.append(wrapped / plain)
            cpu_ratios.append(wrapped_cpu / plain_cpu)
            print(
                f"run {run}: plain {plain:.2f} s ({plain_cpu:.1f} s CPU), wrapped {wrapped:.2f} s "
                f"({wrapped_cpu:.1f} s CPU, archive {stored / 2**20:.0f} MiB), "
                f"ratio {wrapped / plain:.3f}"
            )
        print(
            f"wall time ratio (median): {statistics.median(ratios):.3f}; CPU time ratio "
            f"(median): {statistics.median(cpu_ratios):.3f}"
        )

        starts: dict[str, list[float]] = {"plain": [], "wrapped": []}
        for _ in range(args.starts):
            for label, command in (
                ("plain", [sys.executable, "-c", "pass"]),
                ("wrapped", [*wrapper, sys.executable, "-c", "pass"]),
            ):
                start = time.perf_counter()
                subprocess.run(command, env=env, check=True)
                starts[label].append(time.perf_counter() - start)
        plain_ms = statistics.median(starts["plain"]) * 1000
        wrapped_ms = statistics.median(starts["wrapped"]) * 1000
        print(
            f"start (median of {args.starts}): plain {plain_ms:.1f} ms, wrapped "
            f"{wrapped_ms:.1f} ms, +{wrapped_ms - plain_ms:.1f} ms"
        )


if __name__ == "__main__":
    main()
