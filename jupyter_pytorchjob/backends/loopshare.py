"""Many log streams on one event loop, each given a share of every turn of it.

A step of a log stream (a read parsed and merged, a message encoded and written) takes
about a millisecond. With 20 followers ready at once, one turn of the loop runs all their
steps, and everything else the server does (a request, a kernel message) waits for their
sum. ``LoopShare.turn()`` before each step lets steps run until the turn has spent
``budget`` seconds on them, then puts the others off to the next turn: a turn holds the
loop for about ``budget`` plus one step, however many streams there are, and each stream
still gets every byte through (the work is spread, not dropped).

One share (``LOG_STREAMS``) serves the server's log streams on both backends and the
websocket handler that sends them.
"""

from __future__ import annotations

import asyncio
import time

BUDGET = 0.002  # seconds of steps per turn of the loop


class LoopShare:
    """The steps a turn of the running loop has taken, and whether there is room left."""

    def __init__(self, budget: float = BUDGET) -> None:
        self.budget = budget
        self.began: float | None = None  # when the current turn's first step began
        self.loop: asyncio.AbstractEventLoop | None = None

    async def turn(self) -> None:
        """Return when this step may run: at once while the turn has room, else in a
        later turn."""
        loop = asyncio.get_running_loop()
        while True:
            now = time.perf_counter()
            if self.began is None or self.loop is not loop:
                # The first step of a turn: the callback marks the next turn's start (it
                # runs before what this turn puts off, which is scheduled after it).
                self.began, self.loop = now, loop
                loop.call_soon(self._next_turn)
                return
            if now - self.began < self.budget:
                return
            await asyncio.sleep(0)

    def _next_turn(self) -> None:
        self.began = None


LOG_STREAMS = LoopShare()
