"""Waiting on a condition with a deadline - never a bare sleep that a slow machine outruns."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


async def until(condition: Callable[[], object], what: str, timeout: float = 15.0) -> None:
    """Return as soon as ``condition()`` is true; ``AssertionError`` naming ``what``
    after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting after {timeout:g} s for {what}")
        await asyncio.sleep(0.02)
