"""Print messages/s and latency of the in-process bus against the Redis bus (a benchmark, not a test).

Two ``RedisBus`` in this one event loop stand for two processes (so both ends share one core:
a real split has a core each); ``LocalBus`` is today's single process. Each figure is the median
of alternating rounds. Messages: a player's ``act`` request (small) and a table event's frames
(``TableFrames``, what a table publishes most), both what the server really sends.

Run: REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python scripts/bench_bus.py [--rounds 5] [--count 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from functools import partial

import redis.asyncio as aioredis

from protocol import table_events as wire
from protocol.client_messages import Act
from protocol.kinds import ActionKind
from protocol.server_messages import TableEvent
from server.bus import Bus, LocalBus
from server.messages import Caller, Request, TableFrames
from server.redis_bus import RedisBus
from server.views import Views

ACT = Request(
    Caller("s-1", "alice"),
    Act(table_id=7, hand_number=12, action_id="a-12-3", action=ActionKind.RAISE, amount=600),
)
FRAMES = TableFrames(
    7,
    120,
    Views(
        TableEvent(
            table_id=7,
            seq=120,
            event=wire.Turn(seat=3, deadline_ms=1_767_225_600_000, time_banks=2, legal=None),
        ),
        3,
        TableEvent(
            table_id=7,
            seq=120,
            event=wire.Turn(
                seat=3,
                deadline_ms=1_767_225_600_000,
                time_banks=2,
                legal=wire.LegalView(
                    can_fold=True, can_check=False, call_amount=200, min_raise_to=400, max_raise_to=2950
                ),
            ),
        ),
    ),
)


async def send_rate(sender: Bus, receiver: Bus, count: int, message: object) -> float:
    """Messages/s from the first send until the receiver has read them all."""
    address = f"table:{uuid.uuid4().hex[:8]}"
    inbox = receiver.open_inbox(address, count + 1)
    await _until(lambda: sender.has_inbox(address))
    started = time.perf_counter()
    for _ in range(count):
        sender.send(address, message)
        if len(inbox) == 0 and _ % 1000 == 999:
            await asyncio.sleep(0)  # as a real sender does: it yields now and then
    for _ in range(count):
        await inbox.get()
    elapsed = time.perf_counter() - started
    receiver.close_inbox(address)
    return count / elapsed


async def send_latency(sender: Bus, receiver: Bus, count: int, message: object) -> tuple[float, float]:
    """Median and 99th percentile of one message's way, sent one at a time (microseconds)."""
    address = f"table:{uuid.uuid4().hex[:8]}"
    inbox = receiver.open_inbox(address, 10)
    await _until(lambda: sender.has_inbox(address))
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        sender.send(address, message)
        await inbox.get()
        samples.append(time.perf_counter() - started)
    receiver.close_inbox(address)
    return _percentiles(samples)


async def publish_rate(publisher: Bus, listener: Bus, count: int, message: object) -> float:
    channel = f"table:{uuid.uuid4().hex[:8]}:events"
    heard: list[object] = []
    done = asyncio.Event()

    def listen(received: object) -> None:
        heard.append(received)
        if len(heard) == count:
            done.set()

    subscription = listener.subscribe(channel, listen)
    await _subscribed(publisher, listener)
    started = time.perf_counter()
    for number in range(count):
        publisher.publish(channel, message)
        if number % 1000 == 999:
            await asyncio.sleep(0)
    await done.wait()
    elapsed = time.perf_counter() - started
    subscription.close()
    return count / elapsed


async def publish_latency(publisher: Bus, listener: Bus, count: int, message: object) -> tuple[float, float]:
    channel = f"table:{uuid.uuid4().hex[:8]}:events"
    arrived = asyncio.Event()
    subscription = listener.subscribe(channel, lambda _: arrived.set())
    await _subscribed(publisher, listener)
    samples = []
    for _ in range(count):
        arrived.clear()
        started = time.perf_counter()
        publisher.publish(channel, message)
        await arrived.wait()
        samples.append(time.perf_counter() - started)
    subscription.close()
    return _percentiles(samples)


async def unheard_publish_rate(publisher: Bus, count: int, message: object) -> float:
    """Publishes nobody listens to, until they have left the process (what publishing to Redis
    always, rather than only to channels another process follows, costs)."""
    channel = f"table:{uuid.uuid4().hex[:8]}:events"
    started = time.perf_counter()
    for number in range(count):
        publisher.publish(channel, message)
        if number % 1000 == 999:
            await asyncio.sleep(0)
    if isinstance(publisher, RedisBus):
        while publisher._outgoing or publisher._writing:
            await asyncio.sleep(0.001)
    return count / (time.perf_counter() - started)


async def _subscribed(publisher: Bus, listener: Bus) -> None:
    """Until the listener's subscriptions are in Redis (its queue is empty: the writer sends a
    SUBSCRIBE and waits for Redis to confirm it before the next command)."""
    if isinstance(listener, RedisBus):
        address = f"sync:{uuid.uuid4().hex[:8]}"
        inbox = publisher.open_inbox(address, 1)
        await _until(lambda: listener.has_inbox(address))
        listener.send(address, ACT)
        await inbox.get()
        publisher.close_inbox(address)


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.001)


def _swap(
    case: Callable[[Bus, Bus, int, object], Awaitable[object]],
) -> Callable[[int, object, Bus, Bus], Awaitable[object]]:
    """The case with its count and message first, so that ``partial`` can fix them."""

    def swapped(count: int, message: object, first: Bus, second: Bus) -> Awaitable[object]:
        return case(first, second, count, message)

    return swapped


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2] * 1e6, ordered[int(len(ordered) * 0.99)] * 1e6


async def main(url: str, rounds: int, count: int) -> None:
    prefix = f"feltd-bench:{uuid.uuid4().hex[:8]}"
    first = RedisBus(url, prefix=prefix, outgoing=count * 2)
    second = RedisBus(url, prefix=prefix, outgoing=count * 2)
    await first.start()
    await second.start()
    local = LocalBus()
    pairs: dict[str, tuple[Bus, Bus]] = {"local": (local, local), "redis": (first, second)}
    figures: dict[str, list[float]] = {}
    cases: list[tuple[str, str, Callable[[Bus, Bus], Awaitable[object]]]] = []
    for name, message in (("act", ACT), ("frames", FRAMES)):

        def unheard(publisher: Bus, _: Bus, message: object = message) -> Awaitable[float]:
            return unheard_publish_rate(publisher, count, message)

        cases += [
            ("send/s", name, partial(_swap(send_rate), count, message)),
            ("send latency", name, partial(_swap(send_latency), 500, message)),
            ("publish/s", name, partial(_swap(publish_rate), count, message)),
            ("publish latency", name, partial(_swap(publish_latency), 500, message)),
            ("unheard publish/s", name, unheard),
        ]
    try:
        for _ in range(rounds):
            for what, name, case in cases:
                for bus_name in ("local", "redis") if _ % 2 == 0 else ("redis", "local"):
                    result = await case(*pairs[bus_name])
                    if isinstance(result, tuple):
                        figures.setdefault(f"{what} p50 us|{name}|{bus_name}", []).append(result[0])
                        figures.setdefault(f"{what} p99 us|{name}|{bus_name}", []).append(result[1])
                    else:
                        assert isinstance(result, float)
                        figures.setdefault(f"{what}|{name}|{bus_name}", []).append(result)
    finally:
        await first.close()
        await second.close()
        client = aioredis.from_url(url)
        keys = [key async for key in client.scan_iter(match=prefix + "*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
    print(f"bus benchmark: {rounds} alternating rounds, {count} messages a rate round, medians")
    print(f"{'figure':<26} {'message':<8} {'LocalBus':>12} {'RedisBus':>12}")
    keys = sorted({key.rsplit("|", 1)[0] for key in figures}, key=lambda k: (k.split("|")[1], k))
    for key in keys:
        what, name = key.split("|")
        local_figure = statistics.median(figures[f"{key}|local"])
        redis_figure = statistics.median(figures[f"{key}|redis"])
        print(f"{what:<26} {name:<8} {local_figure:>12,.1f} {redis_figure:>12,.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=20_000)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.url, arguments.rounds, arguments.count))
