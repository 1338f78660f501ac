"""``jupyter server`` with an event-loop lag monitor, for the benchmarks.

Runs the real ServerApp with the given arguments; a task on its loop sleeps 10 ms
at a time and records how late it wakes (the loop's stall). On exit it writes
``[[wall_time, lag_ms], ...]`` to ``$LOOP_MONITOR_OUT``, and every garbage collection
(``gc.callbacks``) as ``[wall_time, pause_ms, generation]`` to ``$LOOP_MONITOR_OUT.gc``.

With ``$LOOP_MONITOR_PROFILE`` set, the whole run is profiled with ``cProfile`` (deterministic,
every call: it slows the server, but the shares of its time are what to read) and the stats
are written there (``python -m pstats FILE``).
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import json
import os
import sys
import time

from jupyter_server.serverapp import ServerApp

samples: list[tuple[float, float]] = []
collections: list[tuple[float, float, int]] = []
_gc_started = [0.0]


def on_gc(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _gc_started[0] = time.perf_counter()
    else:
        pause = (time.perf_counter() - _gc_started[0]) * 1000
        collections.append((time.time(), pause, info["generation"]))


async def monitor() -> None:
    while True:
        start = time.perf_counter()
        await asyncio.sleep(0.01)
        samples.append((time.time(), (time.perf_counter() - start - 0.01) * 1000))


def main() -> None:
    gc.callbacks.append(on_gc)
    app = ServerApp.instance()
    app.initialize(sys.argv[1:])
    tasks = []
    app.io_loop.add_callback(lambda: tasks.append(asyncio.ensure_future(monitor())))
    profile_out = os.environ.get("LOOP_MONITOR_PROFILE")
    profiler = cProfile.Profile() if profile_out else None
    try:
        if profiler is not None:
            profiler.enable()
        app.start()
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile_out)
        with open(os.environ["LOOP_MONITOR_OUT"], "w") as out:
            json.dump(samples, out)
        with open(os.environ["LOOP_MONITOR_OUT"] + ".gc", "w") as out:
            json.dump(collections, out)


if __name__ == "__main__":
    main()
