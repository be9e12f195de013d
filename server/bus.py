"""How the server's parts talk: inboxes (one reader each) and channels (any number of listeners).

The gateway, the tournament coordinators and the table actors never call each other: a part
``send``s a message to another's inbox (an actor reads its inbox in order, one message at a
time) or ``publish``es it on a channel every listener gets. ``LocalBus`` is the in-process bus,
with bounded asyncio queues; a bus between processes (Redis) implements the same ``Bus``.

Promises: ``send`` never waits and never grows memory without bound: a full inbox refuses the
message (``BusFull``), an unknown address too (``NoSuchAddress``); ``publish`` calls each
listener at once, in subscription order, and a listener must not block (it queues what it gets);
messages published or sent by one part arrive in the order they were given.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Protocol

Listener = Callable[[object], None]


class BusError(RuntimeError):
    """A message could not be delivered; the message says where and why."""


class BusFull(BusError):
    """The inbox holds as many messages as it may: the receiver is overloaded."""


class NoSuchAddress(BusError):
    """Nobody reads that inbox (the table closed, the tournament is not loaded)."""


class Inbox:
    """One reader's bounded queue of messages.

    Its reader waits with ``get(within=...)``: one future and one timer per wait, where
    ``asyncio.wait_for`` made a task as well, for every message a table actor read."""

    def __init__(self, address: str, capacity: int) -> None:
        self.address = address
        self.capacity = capacity
        self._messages: deque[object] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put(self, message: object) -> None:
        if len(self._messages) >= self.capacity:
            raise BusFull(f"{self.address} is full ({self.capacity} messages waiting)")
        self._messages.append(message)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self, within: float | None = None) -> object | None:
        """The next message; ``None`` when none came ``within`` seconds (without it, it waits
        for one however long it takes)."""
        if not self._messages:
            if self._waiter is not None:
                raise RuntimeError(f"{self.address} has a reader already waiting")
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = None if within is None else loop.call_later(within, _wake, waiter)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
            if not self._messages:
                return None
        return self._messages.popleft()

    def get_nowait(self) -> object | None:
        return self._messages.popleft() if self._messages else None

    def __len__(self) -> int:
        return len(self._messages)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class _Unsubscribing(Protocol):
    def _unsubscribe(self, subscription: Subscription) -> None: ...


class Subscription:
    """A listener on a channel until ``close``."""

    def __init__(self, bus: _Unsubscribing, channel: str, listener: Listener) -> None:
        self._bus = bus
        self.channel = channel
        self.listener = listener
        self.closed = False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._bus._unsubscribe(self)


class Bus(Protocol):
    def open_inbox(self, address: str, capacity: int) -> Inbox: ...

    def close_inbox(self, address: str) -> None: ...

    def has_inbox(self, address: str) -> bool: ...

    def addresses(self) -> list[str]: ...

    def send(self, address: str, message: object) -> None: ...

    def publish(self, channel: str, message: object) -> None: ...

    def subscribe(self, channel: str, listener: Listener) -> Subscription: ...


class LocalBus:
    """The bus inside one process."""

    def __init__(self) -> None:
        self._inboxes: dict[str, Inbox] = {}
        self._channels: dict[str, list[Subscription]] = {}
        self.sent = 0
        self.published = 0

    def open_inbox(self, address: str, capacity: int) -> Inbox:
        if address in self._inboxes:
            raise BusError(f"{address} already has a reader")
        inbox = Inbox(address, capacity)
        self._inboxes[address] = inbox
        return inbox

    def close_inbox(self, address: str) -> None:
        self._inboxes.pop(address, None)

    def has_inbox(self, address: str) -> bool:
        return address in self._inboxes

    def addresses(self) -> list[str]:
        """Every address somebody reads."""
        return sorted(self._inboxes)

    def send(self, address: str, message: object) -> None:
        inbox = self._inboxes.get(address)
        if inbox is None:
            raise NoSuchAddress(f"nobody reads {address}")
        inbox.put(message)
        self.sent += 1

    def publish(self, channel: str, message: object) -> None:
        self.published += 1
        listeners = self._channels.get(channel)
        if not listeners:
            return
        for subscription in tuple(listeners):
            subscription.listener(message)

    def subscribe(self, channel: str, listener: Listener) -> Subscription:
        subscription = Subscription(self, channel, listener)
        self._channels.setdefault(channel, []).append(subscription)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        listeners = self._channels.get(subscription.channel)
        if listeners is None:
            return
        try:
            listeners.remove(subscription)
        except ValueError:
            return
        if not listeners:
            del self._channels[subscription.channel]

    def listeners(self, channel: str) -> int:
        return len(self._channels.get(channel, ()))
