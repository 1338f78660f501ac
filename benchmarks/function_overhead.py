"""What a function job costs over a script job: the same 2-node DDP training (Ray Train's
quick start, ``examples/train_function.py``) on the local backend.

Baseline: the job script that ``submit`` would write, submitted as a plain ``script`` job
(``JobSpec``, as ``ptjob submit --script`` does), timed until ``wait`` returns. Function:
``submit(train_func, ...)`` (capture, keyword checks, the script) until ``wait`` and
``result()`` return. Runs alternate, so both see the same machine; prints each pair, the
median ratio (goal <= 1.05) and the capture time alone.

    python benchmarks/function_overhead.py [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_pytorchjob import Job, submit
from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.function import capture, job_script, new_result_key
from jupyter_pytorchjob.job import JobSpec

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "train_function.py"


def _load_example() -> object:
    """The example as a notebook holds it: a module nobody can import by name."""
    spec = importlib.util.spec_from_file_location("ptjob_example_cell", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.train_func


train_func = _load_example()

PVC = [{"claim": "data", "mountPath": "/mnt/data"}]


def script_job(home: Path, index: int) -> float:
    name = f"script-{index}"
    script = job_script(capture(train_func), {"epochs": 3}, job=name, key=new_result_key())
    spec = JobSpec.from_wire(
        {"name": name, "nodes": 2, "script": script, "pvc": PVC, "logdir": f"/mnt/data/runs/{name}"}
    )

    async def run() -> None:
        backend = LocalBackend(root=home)
        await backend.submit(spec)
        try:
            job = await backend.wait(name, timeout=300)
        finally:
            await backend.delete_job(name)  # stops whatever still runs of it
        if job.state.value != "Succeeded":
            raise RuntimeError(f"{name}: {job.state.value}")

    start = time.perf_counter()
    asyncio.run(run())
    return time.perf_counter() - start


def function_job(index: int) -> float:
    start = time.perf_counter()
    job = submit(
        train_func, name=f"function-{index}", nodes=2, pvc=["data:/mnt/data"], args={"epochs": 3}
    )
    job.wait(timeout=300)
    result = job.result()
    elapsed = time.perf_counter() - start
    if result["world_size"] != 2:
        raise RuntimeError(f"unexpected result {result!r}")
    Job(job.name).delete()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ptjob-bench-") as tmp:
        home = Path(tmp)
        os.environ["PTJOB_HOME"] = str(home)
        os.environ.pop("PTJOB_BACKEND", None)
        started = time.perf_counter()
        for _ in range(20):
            capture(train_func)
        capture_ms = (time.perf_counter() - started) / 20 * 1000
        ratios = []
        for index in range(options.runs):
            if index % 2:  # which goes first alternates: both see the same machine
                ours = function_job(index)
                base = script_job(home, index)
            else:
                base = script_job(home, index)
                ours = function_job(index)
            ratios.append(ours / base)
            print(
                f"run {index}: script job {base:.2f} s, function job {ours:.2f} s, "
                f"ratio {ours / base:.3f}",
                flush=True,
            )
        print(f"capture(train_func): {capture_ms:.1f} ms")
        print(f"median ratio function/script: {statistics.median(ratios):.3f} (goal <= 1.05)")


if __name__ == "__main__":
    main()
