"""Local backend overhead: the same 2-node DDP job by hand vs through the backend.

By hand: two ``python train_ddp.py`` processes given the operator's env vars
(MASTER_ADDR/PORT, WORLD_SIZE, RANK), timed from launch until both exit. Through
the backend: ``LocalBackend.submit`` until ``wait`` returns Succeeded (supervisor
start, log capture and the state polling included). Runs alternate (and which goes
first alternates too), so both see the same machine; prints each pair and the median
ratio (goal <= 1.05). Each run is given ``--timeout`` seconds, then stopped (and the
benchmark fails): nothing it started is left running, its job root is removed.

    python benchmarks/local_overhead.py [--runs 5] [--steps 20] [--timeout 300]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.job import JobSpec
from jupyter_pytorchjob.processes import free_port

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def by_hand(steps: int, timeout: float) -> float:
    port = free_port()
    base = {
        **os.environ,
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "WORLD_SIZE": "2",
        "PYTHONUNBUFFERED": "1",
        "CUDA_VISIBLE_DEVICES": "",
    }
    command = [sys.executable, "train_ddp.py", "--epochs", "1", "--steps", str(steps)]
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            command,
            env={**base, "RANK": str(rank)},
            cwd=EXAMPLES,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for rank in (0, 1)
    ]
    try:
        outputs = [p.communicate(timeout=max(1.0, start + timeout - time.perf_counter()))[1]
                   for p in procs]  # fmt: skip
    finally:
        for p in procs:  # a timeout or an interrupt: stop both
            if p.poll() is None:
                p.kill()
                p.wait()
    elapsed = time.perf_counter() - start
    codes = [p.returncode for p in procs]
    if codes != [0, 0]:
        raise RuntimeError(f"by-hand run failed {codes}: {outputs[0][-400:]!r}")
    return elapsed


async def through_backend(backend: LocalBackend, name: str, steps: int, timeout: float) -> float:
    spec = JobSpec.from_wire(
        {
            "name": name,
            "nodes": 2,
            "shm": "off",
            "command": ["python", "train_ddp.py", "--epochs", "1", "--steps", str(steps)],
        }
    )
    start = time.perf_counter()
    try:
        await backend.submit(spec)
        job = await backend.wait(name, interval=0.05, timeout=timeout)
        elapsed = time.perf_counter() - start
    finally:
        await backend.delete_job(name)  # stops whatever still runs of it
    assert job.state.value == "Succeeded", job
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ptjob-bench-") as tmp:
        backend = LocalBackend(root=Path(tmp) / "home", default_workdir=EXAMPLES)
        by_hand(args.steps, args.timeout)  # warm the page cache once, for both sides
        print(f"{'run':>3}  {'by hand s':>10}  {'backend s':>10}  {'ratio':>6}")
        ratios, hands, ours = [], [], []
        for i in range(args.runs):
            if i % 2:
                ours_s = await through_backend(backend, f"bench-{i}", args.steps, args.timeout)
                hand = by_hand(args.steps, args.timeout)
            else:
                hand = by_hand(args.steps, args.timeout)
                ours_s = await through_backend(backend, f"bench-{i}", args.steps, args.timeout)
            hands.append(hand)
            ours.append(ours_s)
            ratios.append(ours_s / hand)
            print(f"{i:>3}  {hand:>10.3f}  {ours_s:>10.3f}  {ours_s / hand:>6.3f}")
        print(
            f"median  {statistics.median(hands):>8.3f}  {statistics.median(ours):>10.3f}  "
            f"{statistics.median(ratios):>6.3f}   (goal <= 1.05)"
        )


if __name__ == "__main__":
    asyncio.run(main())
