"""``jupyter server`` with an event-loop lag monitor, for the benchmarks.

Runs the real ServerApp with the given arguments; a task on its loop sleeps 10 ms
at a time and records how late it wakes (the loop's stall). On exit it writes
``[[wall_time, lag_ms], ...]`` to ``$LOOP_MONITOR_OUT``, and every garbage collection
(``gc.callbacks``) as ``[wall_time, pause_ms, generation]`` to ``$LOOP_MONITOR_OUT.gc``.

With ``$LOOP_MONITOR_PROFILE`` set, the whole run is profiled with ``cProfile`` in CPU time
(``time.process_time``: waiting in ``epoll`` counts nothing; deterministic, every call: it
slows the server, but the shares of its CPU are what to read) and the stats are written
there (``python -m pstats FILE``).

With ``$LOOP_MONITOR_SLOW`` (ms) set, every loop callback that runs longer is written to
``$LOOP_MONITOR_OUT.slow`` as ``[wall_time, ms, what]``: which step of which task held
the loop (a perf_counter around each callback; no other overhead).
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


slow: list[tuple[float, float, str]] = []


def innermost(awaitable: object) -> str:
    """Where a suspended coroutine chain waits: its innermost frames (the step that just
    ran ended there)."""
    where = []
    while awaitable is not None:
        frame = getattr(awaitable, "cr_frame", None) or getattr(awaitable, "ag_frame", None)
        if frame is None:
            break
        where.append(f"{frame.f_code.co_qualname}:{frame.f_lineno}")
        awaitable = getattr(awaitable, "cr_await", None) or getattr(awaitable, "ag_await", None)
    return " < ".join(reversed(where[-3:]))


def time_callbacks(threshold_ms: float) -> None:
    """Wrap ``asyncio.Handle._run`` to record the callbacks longer than the threshold."""
    run = asyncio.events.Handle._run

    def timed(handle: asyncio.events.Handle) -> None:
        start = time.perf_counter()
        run(handle)
        took = (time.perf_counter() - start) * 1000
        if took > threshold_ms:
            callback = getattr(handle, "_callback", None)
            task = getattr(callback, "__self__", None)
            coro = getattr(task, "get_coro", lambda: None)()
            slow.append((time.time(), took, f"{coro or callback!r} at {innermost(coro)}"[:300]))

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]


async def monitor() -> None:
    while True:
        start = time.perf_counter()
        await asyncio.sleep(0.01)
        samples.append((time.time(), (time.perf_counter() - start - 0.01) * 1000))


def main() -> None:
    gc.callbacks.append(on_gc)
    if os.environ.get("LOOP_MONITOR_SLOW"):
        time_callbacks(float(os.environ["LOOP_MONITOR_SLOW"]))
    app = ServerApp.instance()
    app.initialize(sys.argv[1:])
    tasks = []
    app.io_loop.add_callback(lambda: tasks.append(asyncio.ensure_future(monitor())))
    profile_out = os.environ.get("LOOP_MONITOR_PROFILE")
    profiler = cProfile.Profile(time.process_time) if profile_out else None
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
        if slow:
            with open(os.environ["LOOP_MONITOR_OUT"] + ".slow", "w") as out:
                json.dump(slow, out)


if __name__ == "__main__":
    main()
