"""server.bus.Inbox: a bounded queue with one reader, who may wait with a time limit."""

from __future__ import annotations

import asyncio

import pytest

from server.bus import BusFull, LocalBus


async def test_a_wait_with_a_limit_ends_empty_handed_when_nothing_comes() -> None:
    inbox = LocalBus().open_inbox("table:1", 4)
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await inbox.get(within=0.05) is None
    assert loop.time() - started >= 0.04
    # the reader can wait again: the first wait left nothing behind
    assert await inbox.get(within=0.01) is None


async def test_a_message_put_while_the_reader_waits_wakes_it_at_once() -> None:
    bus = LocalBus()
    inbox = bus.open_inbox("table:1", 4)
    loop = asyncio.get_running_loop()
    loop.call_later(0.01, bus.send, "table:1", "deal")
    started = loop.time()
    assert await inbox.get(within=5.0) == "deal"
    assert loop.time() - started < 1.0


async def test_messages_come_out_in_order_and_a_full_inbox_refuses() -> None:
    bus = LocalBus()
    inbox = bus.open_inbox("table:1", 2)
    bus.send("table:1", "one")
    bus.send("table:1", "two")
    with pytest.raises(BusFull):
        bus.send("table:1", "three")
    assert len(inbox) == 2
    assert await inbox.get(within=0.0) == "one"
    assert await inbox.get() == "two"
    assert inbox.get_nowait() is None


async def test_a_cancelled_wait_loses_no_message() -> None:
    bus = LocalBus()
    inbox = bus.open_inbox("table:1", 4)
    reader = asyncio.ensure_future(inbox.get())
    await asyncio.sleep(0)
    bus.send("table:1", "deal")  # wakes the reader ...
    reader.cancel()  # ... which is cancelled before it runs again
    with pytest.raises(asyncio.CancelledError):
        await reader
    assert await inbox.get(within=0.0) == "deal"
