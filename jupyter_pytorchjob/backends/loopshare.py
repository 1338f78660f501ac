"""Many log streams on one event loop, each given a share of every turn of it.

A step of a log stream (a read parsed and merged, a message encoded and written) takes
about a millisecond. With 20 followers ready at once, one turn of the loop runs all their
steps, and everything else the server does (a request, a kernel message) waits for their
sum. ``LoopShare.turn()`` before each step lets steps run until the turn has spent
``budget`` seconds on them, then puts the others off: they wait in line, and each later
turn lets the first go. A turn holds the loop for about ``budget`` plus one step, however
many streams there are, and each stream still gets every byte through (the work is
spread, not dropped).

One share (``LOG_STREAMS``) serves the server's log streams on both backends and the
websocket handler that sends them.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

BUDGET = 0.002  # seconds of steps per turn of the loop


class LoopShare:
    """The steps a turn of the running loop has taken, and whether there is room left.

    A step that finds the turn's budget spent waits in line: each later turn lets the
    first in line go (it runs whatever that turn has spent), the others wait without
    being woken (a step put off costs one wake-up, not one per turn it waits)."""

    def __init__(self, budget: float = BUDGET) -> None:
        self.budget = budget
        self.began: float | None = None  # when the current turn's first step began
        self.loop: asyncio.AbstractEventLoop | None = None
        self.waiting: deque[asyncio.Future[None]] = deque()

    async def turn(self) -> None:
        """Return when this step may run: at once while the turn has room, else in a
        later turn, in the order the steps were put off."""
        loop = asyncio.get_running_loop()
        now = time.perf_counter()
        if self.loop is not loop:
            self.began, self.loop, self.waiting = None, loop, deque()
        if self.began is None:
            # The first step of a turn: the callback marks the next turn's start (it
            # runs before what this turn puts off, which is scheduled after it).
            self.began = now
            loop.call_soon(self._next_turn)
            if not self.waiting:
                return
        elif now - self.began < self.budget and not self.waiting:
            return
        waiter = loop.create_future()
        self.waiting.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter in self.waiting:
                self.waiting.remove(waiter)
            elif self.waiting:  # let out but cancelled: the next in line goes instead
                self._let_out()
            raise

    def _next_turn(self) -> None:
        self.began = None
        self._let_out()

    def _let_out(self) -> None:
        """The first in line goes (in the next turn: its wake-up is scheduled now)."""
        while self.waiting:
            waiter = self.waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                loop = self.loop
                if loop is not None and self.began is None:
                    self.began = time.perf_counter()
                    loop.call_soon(self._next_turn)
                return


LOG_STREAMS = LoopShare()
