"""``KubernetesBackend.list_jobs`` with N failed PyTorchJobs: what the failure summaries
(#26) cost. Three lists side by side on the same fake API server (tests/fake_kube, in
this process, operator on), each job's master crash-looping past its backoff limit with a
traceback in its previous container:

- **baseline**: a backend whose failure reader does nothing (the list before #26);
- **first**: a fresh backend's first list (reads every failing run's log, annotates each);
- **cached**: the same backend's next lists (memory);
- **restarted**: a fresh backend's first list once the annotations are there (no log read).

Prints each one's median over ``--requests`` lists and its ratio to the baseline.

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


async def median(make: object, requests: int, fresh: bool) -> tuple[float, KubernetesBackend]:
    times = []
    backend = make()  # type: ignore[operator]
    for _ in range(requests):
        if fresh:
            await backend.close()
            backend = make()  # type: ignore[operator]
        times.append(await timed(backend))
    return statistics.median(times), backend


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

        base, b = await median(baseline, args.requests, fresh=False)
        await b.close()
        first, f = await median(backend, 1, fresh=False)
        cached, _ = await median(lambda: f, args.requests, fresh=False)
        await f.close()
        restarted, r = await median(backend, args.requests, fresh=True)
        await r.close()
    await fake.stop()
    print(f"{args.jobs} failed jobs, median of {args.requests} lists (first: one list)")
    for label, value in (
        ("baseline (no summaries)", base),
        ("first list (reads logs)", first),
        ("cached", cached),
        ("restarted (annotations)", restarted),
    ):
        print(f"  {label:<26} {value * 1000:8.1f} ms   x{value / base:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
