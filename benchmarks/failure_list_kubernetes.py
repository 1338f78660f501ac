"""``KubernetesBackend.list_jobs`` with N failed PyTorchJobs: what the failure summaries
(#26) cost. Three lists side by side on the same fake API server (tests/fake_kube, in
this process, operator on), each job's master crash-looping past its backoff limit with a
traceback in its previous container:

- **baseline**: a backend whose failure reader does nothing (the list before #26), warm
  (its connection and API discovery done) and fresh (a new backend per list);
- **first**: a fresh backend's first list (reads every failing run's log, annotates each);
- **cached**: the same backend's next lists (memory), against the warm baseline;
- **restarted**: a fresh backend's first list once the annotations are there (no log
  read), against the fresh baseline.

Prints each one's median over ``--requests`` lists and its ratio to its baseline.

    python benchmarks/failure_list_kubernetes.py [--jobs 100] [--requests 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from jupyter_pytorchjob.backends.kubernetes import KubernetesBackend  # noqa: E402
from jupyter_pytorchjob.job import JobSpec  # noqa: E402
from tests.fake_kube import FakeKube  # noqa: E402

NS = "team-a"
TRACEBACK = "Traceback (most recent call last):\n  File 'train.py', line 9\nValueError: x\n"


async def timed(backend: KubernetesBackend) -> float:
    start = time.perf_counter()
    jobs = await backend.list_jobs()
    elapsed = time.perf_counter() - start
    assert all(j.state.value == "Failed" for j in jobs)
    return elapsed


async def alternating(
    pair: tuple[Callable[[], KubernetesBackend], Callable[[], KubernetesBackend]],
    requests: int,
    fresh: bool,
) -> tuple[float, float]:
    """The median list time of each of two backends, their lists alternating (a shared
    machine's load hits both alike); ``fresh``: a new backend for every list."""
    times: tuple[list[float], list[float]] = ([], [])
    backends = [make() for make in pair]
    for _ in range(requests):
        for i, make in enumerate(pair):
            if fresh:
                await backends[i].close()
                backends[i] = make()
            times[i].append(await timed(backends[i]))
    for backend in backends:
        await backend.close()
    return statistics.median(times[0]), statistics.median(times[1])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--requests", type=int, default=10)
    args = parser.parse_args()
    fake = await FakeKube.start(operator=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KUBECONFIG"] = str(fake.write_kubeconfig(Path(tmp) / "kubeconfig"))
        os.environ.pop("KUBERNETES_SERVICE_HOST", None)

        def backend() -> KubernetesBackend:
            return KubernetesBackend(namespace=NS, progress_interval=0)

        def baseline() -> KubernetesBackend:
            made = backend()

            async def nothing(found: object) -> None:
                return None

            made.failures.fill = nothing  # type: ignore[method-assign]
            return made

        seeder = backend()
        for i in range(args.jobs):
            name = f"job-{i:03d}"
            body = {"name": name, "command": ["python", "train.py"], "backoffLimit": 1}
            await seeder.submit(JobSpec.from_wire(body))
            fake.operator.run(NS, name)
            fake.append_log(NS, f"{name}-master-0", "pytorch", TRACEBACK)
            fake.operator.exit(NS, name, "master-0", exit_code=1)
        await seeder.close()

        warm = backend()
        first = await timed(warm)  # reads every failing run, annotates each job
        base, cached = await alternating((baseline, lambda: warm), args.requests, fresh=False)
        base_fresh, restarted = await alternating((baseline, backend), args.requests, fresh=True)
    await fake.stop()
    print(f"{args.jobs} failed jobs, median of {args.requests} alternating lists (first: one)")
    for label, value, against in (
        ("baseline, warm backend", base, base),
        ("cached (warm backend)", cached, base),
        ("baseline, fresh backend", base_fresh, base_fresh),
        ("restarted (annotations)", restarted, base_fresh),
        ("first list (reads logs)", first, base_fresh),
    ):
        print(f"  {label:<26} {value * 1000:8.1f} ms   x{value / against:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
