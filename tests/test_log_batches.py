"""The log websocket's batching (``handlers.send_batches``), driven by a stream of log
chunks and a writer that takes its time: what the messages hold, and that a stream with
much to give never keeps the event loop to itself, nor do many streams together
(``backends.loopshare``; #28: the server's loop never stalls)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from jupyter_pytorchjob.backends.base import LogChunk
from jupyter_pytorchjob.backends.loopshare import BUDGET, LoopShare
from jupyter_pytorchjob.handlers import BATCH_BYTES, send_batches

from .log_messages import unbatch

TEXT = "x" * 1023 + "\n"


async def chunks(count: int, lines: int) -> AsyncIterator[LogChunk]:
    for i in range(count):
        yield LogChunk("master-0", TEXT * lines, (i + 1) * len(TEXT) * lines)


async def test_a_message_holds_at_most_its_share_of_text_and_nothing_is_lost() -> None:
    """A writer slower than the stream: the chunks that arrive meanwhile wait for the next
    message, up to ``BATCH_BYTES`` of text (then the reader waits), every chunk once."""
    messages: list[list[dict[str, object]]] = []

    async def write(message: bytes) -> None:
        messages.append(unbatch(message))
        for _ in range(100):  # the socket is slow: the reader gets many turns meanwhile
            await asyncio.sleep(0)

    await send_batches(chunks(40, 64), write)  # 40 chunks of 64 KiB
    assert [c["offset"] for m in messages for c in m] == [(i + 1) * 64 * 1024 for i in range(40)]
    largest = max(sum(len(str(c["text"])) for c in m) for m in messages)
    assert largest <= BATCH_BYTES + 64 * 1024
    assert len(messages) < 40  # batched all the same


async def test_a_batch_counts_each_text_in_bytes_whatever_its_characters() -> None:
    """Texts with multi-byte characters, a notice and a merged chunk in one binary
    message: each comes back whole, with its fields (the header gives UTF-8 lengths)."""
    sent = [
        LogChunk("master-0", "løss 0.5 ✓\n日本語\n", 21),
        LogChunk("worker-1", "the node is gone", 0, notice=True),
        LogChunk.merged(("master-0", "worker-0"), "a\nb\n", "01", (23, 2)),
    ]

    async def stream() -> AsyncIterator[LogChunk]:
        for chunk in sent:
            yield chunk

    messages: list[bytes] = []

    async def write(message: bytes) -> None:
        messages.append(message)

    await send_batches(stream(), write)
    assert [m for raw in messages for m in unbatch(raw)] == [c.to_wire() for c in sent]


async def test_a_stream_with_much_to_give_lets_the_loop_turn() -> None:
    """A backend that takes a while for each chunk (a merge, a decode): the reader gives
    other tasks a turn of the loop once its steps have spent their share of one
    (``loopshare.BUDGET``) instead of taking every chunk in one step."""
    turns: list[int] = []
    produced = [0]

    async def slow(count: int) -> AsyncIterator[LogChunk]:
        for i in range(count):
            busy = time.perf_counter() + BUDGET / 2  # CPU work, no await
            while time.perf_counter() < busy:
                pass
            produced[0] += 1
            yield LogChunk("master-0", TEXT, i + 1)

    async def other_task() -> None:
        await asyncio.sleep(0)
        turns.append(produced[0])

    async def write(message: bytes) -> None:
        pass

    other = asyncio.ensure_future(other_task())
    await send_batches(slow(20), write)
    await other
    assert turns and turns[0] < 20  # it ran while the stream still had chunks to give


async def test_many_streams_ready_at_once_share_each_turn_of_the_loop() -> None:
    """Ten streams with a step ready in every turn, each step half the budget: a turn of
    the loop runs about two of them and puts the others off, so that what else waits on
    the loop (here a task ticking once per turn) comes between them; every step runs."""
    share = LoopShare()
    events: list[str] = []
    done = asyncio.Event()

    async def stream() -> None:
        for _ in range(3):
            await share.turn()
            busy = time.perf_counter() + share.budget / 2
            while time.perf_counter() < busy:
                pass
            events.append("step")
            await asyncio.sleep(0)

    async def ticker() -> None:
        while not done.is_set():
            events.append("tick")
            await asyncio.sleep(0)

    tick = asyncio.ensure_future(ticker())
    await asyncio.gather(*(stream() for _ in range(10)))
    done.set()
    await tick
    assert events.count("step") == 30
    between = "".join("s" if e == "step" else "|" for e in events).split("|")
    # Two turns' steps at most between two ticks: the ticker runs once in each turn.
    assert max(map(len, between)) <= 4


async def test_steps_put_off_go_in_the_order_they_came_and_a_cancelled_one_blocks_none() -> None:
    """Once a turn's budget is spent, steps wait in line (no step is woken again and
    again to look, #28): they go in the order they came, and a step
    cancelled while it waits holds up no other."""
    share = LoopShare()
    order: list[int] = []

    async def hog() -> None:  # the turn's first step, which spends the whole budget
        await share.turn()
        busy = time.perf_counter() + share.budget * 1.5
        while time.perf_counter() < busy:
            pass

    async def step(i: int) -> None:
        await share.turn()
        order.append(i)

    tasks = [asyncio.ensure_future(hog())] + [asyncio.ensure_future(step(i)) for i in range(6)]
    await asyncio.sleep(0)  # they all ran their first step in this turn
    assert order == [] and len(share.waiting) == 6
    tasks[3].cancel()  # step 2, waiting in line
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert order == [0, 1, 3, 4, 5]
    assert isinstance(results[3], asyncio.CancelledError)
    assert not share.waiting
