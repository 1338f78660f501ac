"""What a function's result costs through rank 0's log (no volume) vs through the PVC.

The same 1-node function job on the local backend returns ``--mib`` MiB (a pickle of
bytes); timed from ``submit`` until ``result()`` has returned the value. Baseline: the
PVC path (the value as a signed file in the job's log directory, as every result went
before); product: the log path (signed base64 lines in rank 0's log, read back through
``Backend.logs``). The PVC run is forced by lowering the log's limit for that submit.
Runs alternate, so both see the same machine; prints each pair and the median ratio.

    python benchmarks/result_channel.py [--runs 5] [--mib 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_pytorchjob import Job, submit
from jupyter_pytorchjob.function import script as result_script


def payload(n: int) -> bytes:
    return b"r" * n


def one_job(name: str, size: int, *, through_log: bool) -> tuple[float, float]:
    """Seconds from submit to the value back, and of ``result()`` alone."""
    saved = result_script.LOG_RESULT_MAX_BYTES
    if not through_log:
        result_script.LOG_RESULT_MAX_BYTES = 0  # every value goes to the PVC
    try:
        start = time.perf_counter()
        job = submit(payload, name=name, pvc=["data:/mnt/data"], args={"n": size})
    finally:
        result_script.LOG_RESULT_MAX_BYTES = saved
    try:
        if job.wait(timeout=300) != "Succeeded":
            raise RuntimeError(f"{name} did not succeed")
        reading = time.perf_counter()
        value = job.result()
        done = time.perf_counter()
        elapsed, read = done - start, done - reading
    finally:
        Job(name).delete()
    if value != b"r" * size:
        raise RuntimeError(f"{name}: wrong result")
    return elapsed, read


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mib", type=float, default=1.0)
    options = parser.parse_args()
    size = int(options.mib * 1024 * 1024)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PTJOB_HOME"] = str(Path(tmp))
        os.environ.pop("PTJOB_BACKEND", None)
        ratios, read_ratios = [], []
        for index in range(options.runs):
            pvc, pvc_read = one_job(f"pvc-{index}", size, through_log=False)
            log, log_read = one_job(f"log-{index}", size, through_log=True)
            ratios.append(log / pvc)
            read_ratios.append(log_read / pvc_read)
            print(
                f"run {index}: submit to value: PVC {pvc:.2f} s, log {log:.2f} s "
                f"(ratio {log / pvc:.3f}); result() alone: PVC {pvc_read * 1000:.0f} ms, "
                f"log {log_read * 1000:.0f} ms (ratio {log_read / pvc_read:.2f})",
                flush=True,
            )
        print(
            f"median ratio log/PVC for {options.mib:g} MiB: submit to value "
            f"{statistics.median(ratios):.3f}, result() alone {statistics.median(read_ratios):.2f}"
        )


if __name__ == "__main__":
    main()
