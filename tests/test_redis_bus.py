"""``server.redis_bus`` (issue 15): two ``RedisBus`` in one event loop stand for two processes
sharing a real Redis; what one sends or publishes reaches the other as ``LocalBus`` promises."""

from __future__ import annotations

import asyncio
import gc
import sys
import uuid
import weakref
from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio as aioredis

from protocol.client_messages import Chat
from server.bus import BusError, BusFull, NoSuchAddress
from server.messages import Caller, PlayerAway, Request
from server.redis_bus import RedisBus


@pytest.fixture
async def buses(redis_url: str, redis_prefix: str) -> AsyncIterator[tuple[RedisBus, RedisBus]]:
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:8]}"
    first = RedisBus(redis_url, prefix=prefix, heartbeat_seconds=0.2, alive_seconds=1)
    second = RedisBus(redis_url, prefix=prefix, heartbeat_seconds=0.2, alive_seconds=1)
    await first.start()
    await second.start()
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()
        client = aioredis.from_url(redis_url)
        keys = [key async for key in client.scan_iter(match=prefix + "*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)
    assert condition(), what


async def test_send_across_in_order(buses: tuple[RedisBus, RedisBus]) -> None:
    sender, receiver = buses
    inbox = receiver.open_inbox("table:1", 1_000)
    await until(lambda: sender.has_inbox("table:1"), "the sender learns of the inbox")
    assert receiver.has_inbox("table:1")
    for number in range(300):
        sender.send("table:1", PlayerAway(f"p{number}", number % 2 == 0))
    got = [await inbox.get() for _ in range(300)]
    assert got == [PlayerAway(f"p{number}", number % 2 == 0) for number in range(300)]


async def test_send_to_a_local_inbox_is_a_put(buses: tuple[RedisBus, RedisBus]) -> None:
    bus, _ = buses
    inbox = bus.open_inbox("tournament:t", 2)
    bus.send("tournament:t", PlayerAway("a", True))
    assert inbox.get_nowait() == PlayerAway("a", True)
    bus.send("tournament:t", PlayerAway("a", True))
    bus.send("tournament:t", PlayerAway("a", False))
    with pytest.raises(BusFull):
        bus.send("tournament:t", PlayerAway("b", False))
    with pytest.raises(BusError):
        bus.open_inbox("tournament:t", 2)


async def test_unknown_address(buses: tuple[RedisBus, RedisBus]) -> None:
    bus, _ = buses
    assert not bus.has_inbox("table:404")
    with pytest.raises(NoSuchAddress):
        bus.send("table:404", PlayerAway("a", True))


async def test_publish_across_once_and_in_order(buses: tuple[RedisBus, RedisBus]) -> None:
    first, second = buses
    heard_here: list[object] = []
    heard_there: list[object] = []
    heard_there_too: list[object] = []
    first.subscribe("session:s1", heard_here.append)
    second.subscribe("session:s1", heard_there.append)
    second.subscribe("session:s1", heard_there_too.append)
    # a message sent after the subscription reaches Redis: the subscription came first
    inbox = first.open_inbox("sync", 10)
    await until(lambda: second.has_inbox("sync"), "the directory")
    second.send("sync", PlayerAway("sync", True))
    await inbox.get()
    messages = [_chat(number) for number in range(200)]
    for message in messages:
        first.publish("session:s1", message)
    assert heard_here == messages  # at once, as LocalBus
    await until(lambda: len(heard_there_too) == 200, "the other process hears every message")
    assert heard_there == messages
    assert heard_there_too == messages
    second.publish("session:s1", PlayerAway("back", False))
    await until(lambda: len(heard_here) == 201, "and the other way")
    await asyncio.sleep(0.2)
    assert heard_here[-1] == PlayerAway("back", False)
    assert len(heard_here) == 201 and len(heard_there) == 201  # no process hears its own twice


def _chat(number: int) -> Request:
    return Request(Caller("s1", "p1"), Chat(table_id=1, text=f"line {number}"), float(number))


async def test_unsubscribed_channels_are_not_heard(buses: tuple[RedisBus, RedisBus]) -> None:
    first, second = buses
    heard: list[object] = []
    subscription = second.subscribe("lobby", heard.append)
    inbox = second.open_inbox("sync", 10)
    await until(lambda: first.has_inbox("sync"), "the directory")
    first.send("sync", PlayerAway("x", True))
    await inbox.get()
    first.publish("lobby", PlayerAway("a", True))
    await until(lambda: len(heard) == 1, "the first message")
    subscription.close()
    first.publish("lobby", PlayerAway("b", True))
    first.send("sync", PlayerAway("y", True))
    await inbox.get()
    await asyncio.sleep(0.1)
    assert heard == [PlayerAway("a", True)]


async def test_full_outgoing_queue_refuses(redis_url: str, redis_prefix: str) -> None:
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:8]}"
    reader = RedisBus(redis_url, prefix=prefix)
    await reader.start()
    reader.open_inbox("table:9", 10)
    writer = RedisBus(redis_url, prefix=prefix, outgoing=5)
    await writer.start()
    try:
        await until(lambda: writer.has_inbox("table:9"), "the directory")
        sent = 0
        with pytest.raises(BusFull):
            for _ in range(100):  # the writer task cannot run in between: the queue fills
                writer.send("table:9", PlayerAway("a", True))
                sent += 1
        assert sent == 5
    finally:
        await writer.close()
        await reader.close()


async def test_closed_inboxes_and_processes_vanish(buses: tuple[RedisBus, RedisBus]) -> None:
    first, second = buses
    second.open_inbox("table:1", 10)
    second.open_inbox("table:2", 10)
    await until(lambda: first.has_inbox("table:1") and first.has_inbox("table:2"), "the directory")
    assert first.addresses() == ["table:1", "table:2"]
    second.close_inbox("table:1")
    await until(lambda: not first.has_inbox("table:1"), "a closed inbox vanishes")
    assert first.has_inbox("table:2")
    await second.close()
    await until(lambda: not first.has_inbox("table:2"), "a closed bus's inboxes vanish")
    with pytest.raises(NoSuchAddress):
        first.send("table:2", PlayerAway("a", True))


async def test_a_dead_process_addresses_expire(redis_url: str, redis_prefix: str) -> None:
    """A process that dies without ``close`` stops beating: its addresses go within seconds."""
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:8]}"
    survivor = RedisBus(redis_url, prefix=prefix, heartbeat_seconds=0.2, alive_seconds=1)
    doomed = RedisBus(redis_url, prefix=prefix, heartbeat_seconds=0.2, alive_seconds=1)
    await survivor.start()
    await doomed.start()
    try:
        doomed.open_inbox("tournament:x", 10)
        await until(lambda: survivor.has_inbox("tournament:x"), "the directory")
        for task in doomed._tasks:  # as a killed process: no goodbye, no more heartbeats
            task.cancel()
        await until(lambda: not survivor.has_inbox("tournament:x"), "a dead process's address expires")
        late = RedisBus(redis_url, prefix=prefix)
        await late.start()
        assert not late.has_inbox("tournament:x")
        await late.close()
    finally:
        await survivor.close()
        doomed._tasks = []
        await doomed.close(flush_seconds=0)


async def test_a_process_taken_for_dead_claims_its_addresses_again(
    buses: tuple[RedisBus, RedisBus], redis_url: str
) -> None:
    first, second = buses
    second.open_inbox("table:5", 10)
    await until(lambda: first.has_inbox("table:5"), "the directory")
    client = aioredis.from_url(redis_url)
    try:
        await client.hdel(f"{second.prefix}:dir", "table:5")  # as after a stall: forgotten
        async with asyncio.timeout(10):
            while await client.hget(f"{second.prefix}:dir", "table:5") != second.process_id.encode():
                await asyncio.sleep(0.02)
    finally:
        await client.aclose()
    await asyncio.sleep(0.5)  # past the others' next heartbeat
    assert first.has_inbox("table:5")


async def test_many_subscriptions_at_once_are_all_in_place_before_what_follows(
    buses: tuple[RedisBus, RedisBus],
) -> None:
    """A burst of subscriptions (a gateway's connections arriving together) is one SUBSCRIBE;
    a send queued after them still reaches Redis only once they hold."""
    first, second = buses
    heard: dict[str, list[object]] = {}
    for number in range(50):
        channel = f"session:{number}"
        heard[channel] = []
        second.subscribe(channel, heard[channel].append)
    inbox = first.open_inbox("sync", 10)
    await until(lambda: second.has_inbox("sync"), "the directory")
    second.send("sync", PlayerAway("after the subscriptions", True))
    await inbox.get()
    for channel in heard:
        first.publish(channel, PlayerAway(channel, True))
    await until(lambda: all(len(messages) == 1 for messages in heard.values()), "every channel heard")
    assert all(messages == [PlayerAway(channel, True)] for channel, messages in heard.items())


async def test_a_closed_subscription_is_not_kept_by_the_pubsub_reader(
    buses: tuple[RedisBus, RedisBus],
) -> None:
    """The reader does not hold the last listener it called (in the gateway a closure over a
    session) while it waits for the next message: a closed session is freed by reference
    counting alone (server/collector.py only freezes between its rare complete passes)."""
    publisher, listening = buses

    class Session:  # what a gateway listener holds
        pass

    got: list[object] = []

    def listener_of(session: Session) -> Callable[[object], None]:
        return lambda message: got.append((session, message))

    gc.collect()
    gc.disable()
    try:
        session = Session()
        ref = weakref.ref(session)
        subscription = listening.subscribe("table:7", listener_of(session))

        def delivered() -> bool:  # published again until the subscription has reached Redis
            publisher.publish("table:7", PlayerAway("p", True))
            return bool(got)

        await until(delivered, "delivered")
        subscription.close()
        del subscription, session
        got.clear()
        await asyncio.sleep(0.5)  # directory heartbeats, no message on a subscribed channel
        assert ref() is None, "the pub/sub reader kept a closed subscription's listener"
    finally:
        gc.enable()


async def test_the_writer_keeps_no_message_it_has_written(buses: tuple[RedisBus, RedisBus]) -> None:
    """Once written, a message (a table's frames, a snapshot) is not held by the writer while it
    waits for the next one."""
    bus, _ = buses
    message = PlayerAway("p" * 10_000, True)
    before = sys.getrefcount(message)
    bus.publish("table:8", message)
    await until(lambda: not bus._outgoing and not bus._writing, "written")
    await asyncio.sleep(0.1)
    assert sys.getrefcount(message) == before
