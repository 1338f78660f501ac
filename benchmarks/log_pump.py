"""The local supervisor's output pump vs the same program writing to /dev/null.

A child process writes its output as fast as it can, in one of three shapes:

* ``lines``: N lines of ~80 bytes (ordinary training output);
* ``progress``: N tqdm-style updates of ~210 bytes, each starting with ``\\r`` and no
  newline at all (a progress bar);
* ``long``: N lines of 1 MiB each (a dumped tensor).

Timed from launch until the child has exited and its output is in the log: through
``logpump.pump`` (the supervisor's own code, reading the pipe into a log file) and
with the child's stdout on /dev/null, and through ``cat`` into a file (the floor for
any pump: a pipe and a disk write). Runs alternate; prints each, the pump's own CPU
time and the median ratios. The pump must stay linear in bytes: doubling ``--count``
doubles its CPU time, whatever the shape.

    python benchmarks/log_pump.py [--shape progress] [--count 400000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyter_pytorchjob.backends.local.logpump import pump

WRITERS = {
    "lines": (
        "import sys\nw = sys.stdout.write\n"
        "for i in range({count}):\n"
        "    w('step %09d loss 0.123456 accuracy 0.987654 throughput 1234.5 samples/s\\n' % i)\n"
    ),
    "progress": (
        "import sys\nw = sys.stdout.write\nbar = '#' * 150\n"
        "for i in range({count}):\n"
        "    w('\\r%9d/{count} |%s| 12.34it/s [00:01<00:02, loss=0.1234]' % (i, bar))\n"
    ),
    "long": (
        "import sys\nline = 'x' * (1 << 20) + '\\n'\n"
        "for i in range({count}):\n"
        "    sys.stdout.write(line)\n"
    ),
}


def program(shape: str, count: int) -> list[str]:
    return [sys.executable, "-c", WRITERS[shape].format(count=count)]


def to_devnull(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def through_cat(argv: list[str], log: Path) -> float:
    """The floor for any pump: the same bytes through a pipe into a file by ``cat``."""
    start = time.perf_counter()
    with log.open("wb") as out:
        writer = subprocess.Popen(argv, stdout=subprocess.PIPE)
        subprocess.run(["cat"], stdin=writer.stdout, stdout=out, check=True)
        assert writer.stdout is not None
        writer.stdout.close()
        writer.wait()
    return time.perf_counter() - start


async def through_pump(argv: list[str], log: Path) -> tuple[float, float, int]:
    """Wall time, the pump's own CPU time (this process runs nothing else), log size."""
    log.unlink(missing_ok=True)
    start, cpu = time.perf_counter(), time.process_time()
    process = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    assert process.stdout is not None
    await asyncio.gather(pump(process.stdout, log), process.wait())
    elapsed = time.perf_counter() - start
    return elapsed, time.process_time() - cpu, log.stat().st_size


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(WRITERS), default="progress")
    parser.add_argument("--count", type=int, default=400_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    argv = program(args.shape, args.count)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "master-0.log"
        print(f"{args.shape} x {args.count}")
        print(
            f"{'run':>3}  {'/dev/null s':>11}  {'cat s':>6}  {'pump s':>7}  {'/null':>6}  "
            f"{'/cat':>5}  {'pump CPU s':>10}  {'log MB':>7}"
        )
        to_null, to_cat = [], []
        for i in range(args.runs):
            null = to_devnull(argv)
            cat = through_cat(argv, log)
            ours, cpu, size = await through_pump(argv, log)
            to_null.append(ours / null)
            to_cat.append(ours / cat)
            print(
                f"{i:>3}  {null:>11.3f}  {cat:>6.3f}  {ours:>7.3f}  {ours / null:>6.2f}  "
                f"{ours / cat:>5.2f}  {cpu:>10.3f}  {size / 1e6:>7.1f}"
            )
        print(
            f"median ratio vs /dev/null {statistics.median(to_null):.2f}, "
            f"vs cat {statistics.median(to_cat):.2f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
