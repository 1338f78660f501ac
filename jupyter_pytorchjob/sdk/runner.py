"""``Runner``: a private asyncio loop in a daemon thread, for the magic.

A Jupyter kernel already runs an asyncio loop in the main thread, so the magic never
calls ``asyncio.run``. Backend coroutines run on this loop and the main thread waits
on their ``concurrent.futures`` result; a kernel interrupt (``KeyboardInterrupt`` in
the main thread) cancels the task on that loop. Logs are pumped from the backend's
async generator into a bounded queue the main thread reads; when following stops (end
of the job, an error, or an interrupt) the pump task is cancelled, the generator is
closed with ``aclose()``, and the main thread waits for both before it returns. The
same code works in plain IPython, where no loop is running.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import queue
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Generator
from typing import Any, TypeVar

from ..backends import Backend, LogChunk
from ..frontends import backend_choice

T = TypeVar("T")

#: Chunks the log pump may get ahead of the cell output.
QUEUE_CHUNKS = 64

_DONE = object()


class Runner:
    """A private asyncio loop in a daemon thread, and the backends that live on it.

    ``run(coro)`` blocks the calling thread until ``coro`` is done on the loop;
    ``stream(...)`` iterates a backend's log generator from the calling thread.
    Backends are created on the loop (a Kubernetes client binds to the loop that
    creates it) and reused per (backend, namespace).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._backends: dict[tuple[str, str | None], Backend] = {}

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop, started on first use."""
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="ptjob-magic-loop", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it.

        A ``KeyboardInterrupt`` while waiting cancels the task and waits (a few
        seconds at most) until it has finished, so no ``finally`` of the coroutine
        is still running when the interrupt reaches the caller.
        """
        loop = self.loop
        result: concurrent.futures.Future[T] = concurrent.futures.Future()
        settled = threading.Event()
        tasks: list[asyncio.Task[T]] = []

        def done(task: asyncio.Task[T]) -> None:
            if task.cancelled():
                result.cancel()
            elif (err := task.exception()) is not None:
                result.set_exception(err)
            else:
                result.set_result(task.result())
            settled.set()

        def start() -> None:
            task = loop.create_task(coro)
            task.add_done_callback(done)
            tasks.append(task)

        def cancel() -> None:
            for task in tasks:
                task.cancel()

        loop.call_soon_threadsafe(start)
        try:
            while True:  # short waits: the interrupt is seen however it is delivered
                try:
                    return result.result(timeout=0.1)
                except concurrent.futures.TimeoutError:
                    if result.done():  # the coroutine's own TimeoutError
                        raise
        except KeyboardInterrupt:
            loop.call_soon_threadsafe(cancel)  # runs after start(): callbacks are FIFO
            settled.wait(5)
            raise

    def backend(self, name: str, namespace: str | None = None) -> Backend:
        """The backend called ``name`` (created on the loop once, then reused)."""
        key = (name, namespace)
        backend = self._backends.get(key)
        if backend is None:
            backend = self.run(_create(name, namespace))
            self._backends[key] = backend
        return backend

    def stream(
        self, open_logs: Callable[[], AsyncIterator[LogChunk]], *, name: str = "ptjob-logs"
    ) -> Generator[LogChunk, None, None]:
        """The chunks of ``open_logs()`` (called on the loop), as they arrive.

        Close the iterator (or leave it by an exception, a ``KeyboardInterrupt``
        included) and the pump task is cancelled and the generator closed before
        ``close()`` returns.
        """
        chunks: queue.Queue[object] = queue.Queue(maxsize=QUEUE_CHUNKS)
        task = self.run(_start(_pump(open_logs, chunks), name))
        try:
            while True:
                try:
                    item = chunks.get(timeout=0.1)
                except queue.Empty:
                    continue
                if item is _DONE:
                    return
                if isinstance(item, BaseException):
                    raise item
                assert isinstance(item, LogChunk)
                yield item
        finally:
            self.loop.call_soon_threadsafe(task.cancel)
            self.run(_settle(task))

    def tasks(self) -> list[str]:
        """Names of the tasks pending on the loop (diagnostics and tests)."""
        if self._loop is None or self._loop.is_closed():
            return []
        return self.run(_pending())

    def close(self) -> None:
        """Close the backends and stop the loop."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or loop.is_closed():
            return
        backends = list(self._backends.values())
        self._backends.clear()
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(_close_all(backends), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=10)
        if not loop.is_running():
            loop.close()


async def _create(name: str, namespace: str | None) -> Backend:
    """On the loop: a Kubernetes client binds to the loop that creates it."""
    return backend_choice.open_backend(name, namespace)


async def _start(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
    return asyncio.get_running_loop().create_task(coro, name=name)


async def _settle(task: asyncio.Task[None]) -> None:
    await asyncio.wait({task})


async def _pending() -> list[str]:
    me = asyncio.current_task()
    return sorted(t.get_name() for t in asyncio.all_tasks() if t is not me)


async def _close_all(backends: list[Backend]) -> None:
    for backend in backends:
        with contextlib.suppress(Exception):
            await backend.close()


async def _put(chunks: queue.Queue[object], item: object) -> None:
    """Queue ``item`` without blocking the loop; wait while the reader is behind."""
    while True:
        try:
            chunks.put_nowait(item)
            return
        except queue.Full:
            await asyncio.sleep(0.02)


async def _pump(
    open_logs: Callable[[], AsyncIterator[LogChunk]], chunks: queue.Queue[object]
) -> None:
    logs = open_logs()
    try:
        async for chunk in logs:
            await _put(chunks, chunk)
        await _put(chunks, _DONE)
    except asyncio.CancelledError:
        raise
    except Exception as err:  # handed to the reader, which raises it
        await _put(chunks, err)
    finally:
        aclose = getattr(logs, "aclose", None)
        if aclose is not None:
            await aclose()


_DEFAULT_RUNNER: Runner | None = None


def default_runner() -> Runner:
    """The runner of handles made outside a magic (``JobHandle("name")``)."""
    global _DEFAULT_RUNNER
    if _DEFAULT_RUNNER is None:
        _DEFAULT_RUNNER = Runner()
        # A plain script ends without closing it: close its clients (no unclosed-session
        # warnings from a Kubernetes client at exit).
        atexit.register(_DEFAULT_RUNNER.close)
    return _DEFAULT_RUNNER
