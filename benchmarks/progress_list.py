"""``GET pytorchjob/api/jobs`` with every job's progress, against the same list without.

A local job root with 100 running jobs: one real job (``sleep``, its real supervisor)
and 99 copies of its directory (the same live supervisor recorded, so all count as
running). Their master logs hold 1 GB in all (tqdm redraws among other output) and their
log directories 100 MB of TensorBoard event files. Each copy's progress is read as its
supervisor would (``ProgressTracker``, from offset 0: the catch-up time is printed) and
put into its ``job.json``; the real job's own supervisor reads its own.

Then a real ``jupyter server`` answers ``GET jobs`` with every job's progress and with
the copies' progress taken out of their ``job.json`` (``progress: null``, the list as it
was before progress existed), requests alternating between the two states, and prints
the medians side by side (goal: ratio <= 1.2 and < 300 ms). Last, a tqdm line is added
to the real job's log and the time until ``GET jobs`` shows it is measured against the
supervisor's progress poll (goal: at most one poll behind).

    python benchmarks/progress_list.py [--jobs 100] [--log-mb 1024] [--events-mb 100]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from local_jobs_list import (  # this directory: the same server helpers
    REPO,
    TOKEN,
    serve,
    stop,
)
from log_streams import wait_http

from jupyter_pytorchjob.backends.local import LocalBackend
from jupyter_pytorchjob.backends.local.progress import PROGRESS_KEY, ProgressTracker
from jupyter_pytorchjob.backends.local.store import JobDir, read_json, timestamp, write_json
from jupyter_pytorchjob.backends.local.supervisor import POLL, PROGRESS_EVERY
from jupyter_pytorchjob.backends.tfevents import masked_crc32c
from jupyter_pytorchjob.job import JobSpec

STEPS = 1_000_000


def log_blob(size: int) -> bytes:
    """``size`` bytes of a master's log: tqdm redraws (one line each, as the log pump
    splits ``\\r``), a Hugging Face dict line now and then, and plain output."""
    lines = []
    total, step = 0, 0
    stamp = timestamp().encode()
    while total < size:
        step += 1
        if step % 50 == 0:
            text = f"{{'loss': {1 / step:.5f}, 'learning_rate': 2e-05, 'epoch': {step / 1e5:.4f}}}"
        elif step % 3 == 0:
            text = f"rank 0: batch {step} took 0.{step % 97:02d} s, data wait 0.001 s"
        else:
            text = (
                f" {step * 100 // STEPS:2d}%|####      | {step}/{STEPS} "
                f"[01:23<01:42, 5.40it/s, loss={1 / step:.4f}]"
            )
        line = stamp + b" " + text.encode() + b"\n"
        lines.append(line)
        total += len(line)
    return b"".join(lines)


def events_blob(size: int) -> bytes:
    """``size`` bytes of TensorBoard events: a loss and an accuracy scalar per step."""
    from tensorboard.compat.proto.event_pb2 import Event

    records = []
    total, step = 0, 0
    while total < size:
        step += 1
        event = Event(wall_time=time.time(), step=step)
        event.summary.value.add(tag="loss", simple_value=1 / step)
        event.summary.value.add(tag="accuracy", simple_value=1 - 1 / step)
        data = event.SerializeToString()
        header = struct.pack("<Q", len(data))
        record = header + struct.pack("<I", masked_crc32c(header)) + data + b"\0\0\0\0"
        records.append(record)
        total += len(record)
    return b"".join(records)


async def seed(
    root: Path, jobs: int, log_mb: float, events_mb: float
) -> tuple[LocalBackend, float]:
    """The job root; the seconds the copies' trackers took to catch up with their files."""
    backend = LocalBackend(root=root, volume_root=root / "volumes", default_workdir=REPO)
    spec = JobSpec.from_wire(
        {
            "name": "run-0",
            "shm": "off",
            "command": ["sleep", "600"],
            "logdir": "/logs/run-0",
            "pvc": [{"claim": "logs", "mountPath": "/logs"}],
        }
    )
    await backend.submit(spec)
    real = backend.jobs_dir / "run-0"
    while (
        not (real / "replicas.json").exists()
        or b'"Running"' not in (real / "replicas.json").read_bytes()
    ):
        await asyncio.sleep(0.05)
    logs = log_blob(int(log_mb * (1 << 20) / jobs))
    events = events_blob(int(events_mb * (1 << 20) / jobs))
    logdirs = backend.claim_dir("logs")
    for i in range(jobs):
        name = f"run-{i}"
        if i:
            shutil.copytree(
                real, backend.jobs_dir / name, ignore=shutil.ignore_patterns("progress*")
            )
        (backend.jobs_dir / name / "logs" / "master-0.log").write_bytes(logs)
        (logdirs / name).mkdir(parents=True, exist_ok=True)
        (logdirs / name / "events.out.tfevents.1.bench").write_bytes(events)
    began = time.perf_counter()
    for i in range(1, jobs):
        jobdir = JobDir(backend.jobs_dir / f"run-{i}")
        tracker = ProgressTracker(jobdir, "master-0", str(logdirs / jobdir.name))
        tracker.drain()
        job = read_json(jobdir.job)  # as its supervisor would: the progress into job.json
        write_json(jobdir.job, {**job, PROGRESS_KEY: tracker.wire})
    return backend, time.perf_counter() - began


async def timed_lists(root: Path, tmp: Path, requests: int) -> tuple[list[float], list[float]]:
    """``GET jobs`` latencies (ms) with each copy's progress in its ``job.json`` and
    without, in turn (the real job's supervisor keeps writing its own)."""
    server, port = serve(root, tmp, tmp / "lags.json")
    base = f"http://127.0.0.1:{port}/"
    files = [p for p in sorted(root.glob("jobs/run-*/job.json")) if p.parent.name != "run-0"]
    on = {path: read_json(path) for path in files}
    off = {path: {k: v for k, v in job.items() if k != PROGRESS_KEY} for path, job in on.items()}
    with_progress, without = [], []
    try:
        await wait_http(f"{base}api/status")
        async with aiohttp.ClientSession(headers={"Authorization": f"token {TOKEN}"}) as session:

            async def get() -> tuple[float, list[dict[str, object]]]:
                start = time.perf_counter()
                async with session.get(f"{base}pytorchjob/api/jobs") as response:
                    body = await response.json()
                return (time.perf_counter() - start) * 1000, body["jobs"]

            await get()  # warm: the first request imports and caches what it needs
            for _ in range(requests):
                ms, jobs = await get()
                assert all(j["progress"] for j in jobs), "a job without progress"
                with_progress.append(ms)
                for path in files:
                    write_json(path, off[path])
                ms, jobs = await get()
                assert sum(j["progress"] is None for j in jobs) == len(files)
                without.append(ms)
                for path in files:
                    write_json(path, on[path])
    finally:
        stop(server)
    return with_progress, without


async def staleness(root: Path, tmp: Path, tries: int) -> list[float]:
    """Seconds from a new tqdm line in the real job's log to ``GET jobs`` showing it."""
    server, port = serve(root, tmp, tmp / "lags-stale.json")
    base = f"http://127.0.0.1:{port}/"
    log = root / "jobs" / "run-0" / "logs" / "master-0.log"
    delays = []
    try:
        await wait_http(f"{base}api/status")
        async with aiohttp.ClientSession(headers={"Authorization": f"token {TOKEN}"}) as session:

            async def step_shown() -> int | None:
                async with session.get(f"{base}pytorchjob/api/jobs/run-0") as response:
                    progress = (await response.json())["progress"]
                return progress and progress["step"]  # type: ignore[no-any-return]

            deadline = time.monotonic() + 120
            while (await step_shown()) is None:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            for attempt in range(tries):
                step = STEPS - 1000 + attempt
                line = f" 99%|######### | {step}/{STEPS} [01:23<00:01, 5.40it/s, loss=0.1]"
                # The supervisor has caught up with the seeded log once the step is new.
                while True:
                    shown = await step_shown()
                    if shown is not None and shown < step:
                        break
                    await asyncio.sleep(0.05)
                # At a random moment of the supervisor's poll: the lag's distribution,
                # not the time right after a poll (the step just shown).
                await asyncio.sleep(random.uniform(0, POLL * PROGRESS_EVERY))
                with log.open("ab") as f:
                    f.write(timestamp().encode() + b" " + line.encode() + b"\n")
                written = time.perf_counter()
                while await step_shown() != step:
                    assert time.perf_counter() - written < 30, "never shown"
                    await asyncio.sleep(0.01)
                delays.append(time.perf_counter() - written)
    finally:
        stop(server)
    return delays


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--log-mb", type=float, default=1024)
    parser.add_argument("--events-mb", type=float, default=100)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ptjob-progress-bench-"))
    backend = None
    try:
        backend, catch_up = await seed(tmp / "root", args.jobs, args.log_mb, args.events_mb)
        per_job = (args.log_mb + args.events_mb) / args.jobs
        print(
            f"seeded {args.jobs} running jobs: {args.log_mb:.0f} MB of master logs, "
            f"{args.events_mb:.0f} MB of event files; a tracker caught up with one job's "
            f"{per_job:.1f} MB in {catch_up / (args.jobs - 1) * 1000:.0f} ms "
            f"({per_job * (args.jobs - 1) / catch_up:.0f} MB/s)"
        )
        with_progress, without = await timed_lists(tmp / "root", tmp, args.requests)
        on, off = statistics.median(with_progress), statistics.median(without)
        print(
            f"GET jobs ({args.jobs} running): with progress median {on:6.1f} ms, "
            f"without {off:6.1f} ms, ratio {on / off:.2f}  (goal <= 1.2 and < 300 ms)"
        )
        delays = await staleness(tmp / "root", tmp, 10)
        poll = POLL * PROGRESS_EVERY
        delays.sort()
        print(
            f"new log line -> GET jobs shows it ({len(delays)} at random moments): min "
            f"{delays[0] * 1000:.0f} ms, median {statistics.median(delays) * 1000:.0f} ms, p90 "
            f"{delays[int(len(delays) * 0.9)] * 1000:.0f} ms, max {delays[-1] * 1000:.0f} ms; "
            "the supervisor's progress poll is "
            f"{poll * 1000:.0f} ms (goal: at most one poll behind)"
        )
    finally:
        if backend is not None:
            await backend.delete_job("run-0")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
