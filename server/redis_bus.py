"""The bus between processes: ``server.bus``'s ``Bus`` over Redis (``feltd serve --role``).

Each process has an id and, under the key prefix ``P``:

- ``P:in:<process>``, a stream: messages sent to any inbox of the process, each entry (field
  ``b``) a msgpack list of (address, message encoded by ``server.bus_codec``). One reader task
  per process reads it (XREAD) and puts each message into the local ``Inbox``: one stream per
  process rather than per address, so a process with a thousand tables blocks on one XREAD.
- ``P:dir``, a hash: address -> the process that reads it; ``P:alive:<process>`` a key the
  process keeps alive (heartbeat) and that expires when it dies. Every process keeps a copy of
  the directory (``has_inbox``, ``NoSuchAddress``), kept current by notices on the pub/sub
  channel ``P:directory`` (an inbox opened or closed, a process gone) and rebuilt at every
  heartbeat, dropping the addresses of processes whose ``alive`` key has expired.
- ``P:ch:<channel>``: a bus channel, over Redis pub/sub. A process subscribes to it in Redis while
  it has a local listener on it; ``publish`` calls the local listeners at once and publishes to
  Redis for the others (a process skips its own messages when they come back): the sender's id,
  ``|``, and a msgpack list of encoded messages.

``send`` to a local inbox is a direct put, as ``LocalBus``; everything bound for Redis goes into
one bounded outgoing queue (full: ``BusFull`` for a send, the remote copy dropped and counted for
a publish) that one writer task sends in pipelines, in the order given, on one connection: what
one process sends to one inbox or publishes on one channel arrives in order. Consecutive messages
for one process or one channel travel as one stream entry or one PUBLISH (Redis commands, not
bytes, are what costs). A Redis SUBSCRIBE
is in that queue too, and the writer waits for Redis to confirm it before it sends what follows,
so a process that subscribes to a table's channel and then sends ``Follow`` misses no frame.

What is lost: a process that dies loses the messages in its outgoing queue and in its inboxes;
messages sent to it in the seconds before its ``alive`` key expires stay in its stream, unread.
Pub/sub delivers to the processes subscribed at the time only. A message for an inbox that is
full or closed when it arrives is dropped (logged): the sender cannot be told.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from collections.abc import Iterable
from typing import Any, cast

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from server import bus_codec
from server.bus import BusError, BusFull, Inbox, Listener, NoSuchAddress, Subscription

log = logging.getLogger("feltd.bus")

OUTGOING = 100_000  # messages waiting for Redis before send refuses (BusFull)
BATCH = 1_000  # commands in one pipeline
READ_COUNT = 1_000  # stream entries in one XREAD
READ_BLOCK_MS = 500  # how long one XREAD waits for entries
STREAM_LENGTH = 100_000  # entries a process's stream keeps (approximately) once read
HEARTBEAT_SECONDS = 1.0
ALIVE_SECONDS = 5  # a process not heard from for this long is dead: its addresses vanish
SUBSCRIBE_WAIT = 5.0  # seconds the writer waits for Redis to confirm a SUBSCRIBE

# HDEL address only while it names this process (another may have taken it over since).
_RELEASE = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
    return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
"""

# Outgoing operations, in the writer's queue.
_SEND = 0  # (_SEND, process, address, message)
_PUBLISH = 1  # (_PUBLISH, channel, message)
_CLAIM = 2  # (_CLAIM, address)
_RELEASE_ADDRESS = 3  # (_RELEASE_ADDRESS, address)
_SUBSCRIBE = 4  # (_SUBSCRIBE, channel)
_UNSUBSCRIBE = 5  # (_UNSUBSCRIBE, channel)


class RedisBus:
    """A ``Bus`` shared by processes through Redis (see the module docstring). ``start`` before
    use, ``close`` at the end; inboxes and subscriptions work before ``start`` (what goes to
    Redis waits in the queue)."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "feltd",
        outgoing: int = OUTGOING,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
        alive_seconds: int = ALIVE_SECONDS,
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.process_id = uuid.uuid4().hex[:16]
        self.capacity = outgoing
        self.heartbeat_seconds = heartbeat_seconds
        self.alive_seconds = alive_seconds
        self._inboxes: dict[str, Inbox] = {}
        self._remote: dict[str, str] = {}  # address -> the process that reads it
        self._channels: dict[str, list[Subscription]] = {}
        self._outgoing: deque[tuple[Any, ...]] = deque()
        self._wake = asyncio.Event()
        self._confirmations: dict[bytes, list[asyncio.Future[None]]] = {}
        self._writing = False
        self._closing = False
        self._notices_while_refreshing: list[bytes] | None = None
        self._redis: aioredis.Redis | None = None
        self._reader_redis: aioredis.Redis | None = None
        self._pubsub: PubSub | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._dir_key = f"{prefix}:dir"
        self._dir_channel = f"{prefix}:directory".encode()
        self._channel_prefix = f"{prefix}:ch:"
        self._own_tag = self.process_id.encode() + b"|"
        self.sent = 0
        self.published = 0
        self.dropped = 0  # remote copies of publishes dropped on a full outgoing queue
        self.lost = 0  # messages that came for an inbox that is full or gone

    # -- keys --------------------------------------------------------------------------------------

    def _stream(self, process: str) -> str:
        return f"{self.prefix}:in:{process}"

    def _alive(self, process: str) -> str:
        return f"{self.prefix}:alive:{process}"

    # -- life --------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._redis = aioredis.from_url(self.url)
        # the blocking XREAD holds its connection: one of its own, out of the writer's way
        self._reader_redis = aioredis.from_url(self.url)
        await self._redis.set(self._alive(self.process_id), b"1", ex=self.alive_seconds)
        self._pubsub = self._redis.pubsub()
        await self._pubsub.subscribe(self._dir_channel)
        await self._refresh_directory()
        self._tasks = [
            asyncio.create_task(self._write(), name="redis bus writer"),
            asyncio.create_task(self._read_stream(), name="redis bus stream reader"),
            asyncio.create_task(self._read_pubsub(), name="redis bus pub/sub reader"),
            asyncio.create_task(self._heartbeat(), name="redis bus heartbeat"),
        ]
        self._wake.set()

    async def close(self, flush_seconds: float = 5.0) -> None:
        """Send what is queued (for up to ``flush_seconds``), give up this process's addresses
        and stream, and disconnect."""
        if self._redis is None:
            return
        deadline = asyncio.get_running_loop().time() + flush_seconds
        while (
            (self._outgoing or self._writing)
            and asyncio.get_running_loop().time() < deadline
            and self._tasks
            and not self._tasks[0].done()
        ):
            await asyncio.sleep(0.01)
        self._closing = True
        for task in self._tasks:
            task.cancel()
        # redis-py can swallow a cancellation that lands in a blocking read (the XREAD): such a
        # task ends by itself within its block time, seeing _closing, or when its connection closes
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=READ_BLOCK_MS / 1000 + 1)
        redis = self._redis
        addresses = list(self._inboxes)
        self._inboxes.clear()
        with contextlib.suppress(RedisError):
            pipe = redis.pipeline(transaction=False)
            for address in addresses:
                pipe.eval(_RELEASE, 1, self._dir_key, address, self.process_id)
            pipe.delete(self._alive(self.process_id), self._stream(self.process_id))
            pipe.publish(self._dir_channel, b"!" + self.process_id.encode())
            await pipe.execute()
        if self._pubsub is not None:
            with contextlib.suppress(RedisError):
                await self._pubsub.aclose()  # type: ignore[no-untyped-call]
        await redis.aclose()
        if self._reader_redis is not None:
            await self._reader_redis.aclose()
        self._redis = self._reader_redis = self._pubsub = None

    def closing(self) -> bool:
        """Whether ``close`` has begun (a method: the reader asks again after each await)."""
        return self._closing

    # -- the Bus -----------------------------------------------------------------------------------

    def open_inbox(self, address: str, capacity: int) -> Inbox:
        if address in self._inboxes:
            raise BusError(f"{address} already has a reader")
        inbox = Inbox(address, capacity)
        self._inboxes[address] = inbox
        self._queue((_CLAIM, address))
        return inbox

    def close_inbox(self, address: str) -> None:
        if self._inboxes.pop(address, None) is not None:
            self._queue((_RELEASE_ADDRESS, address))

    def has_inbox(self, address: str) -> bool:
        return address in self._inboxes or address in self._remote

    def addresses(self) -> list[str]:
        """Every address any process reads, as this process knows them."""
        return sorted({*self._inboxes, *self._remote})

    def send(self, address: str, message: object) -> None:
        inbox = self._inboxes.get(address)
        if inbox is not None:
            inbox.put(message)
        else:
            process = self._remote.get(address)
            if process is None:
                raise NoSuchAddress(f"nobody reads {address}")
            if len(self._outgoing) >= self.capacity:
                raise BusFull(f"{len(self._outgoing)} messages wait for Redis: cannot send to {address}")
            self._queue((_SEND, process, address, message))
        self.sent += 1

    def publish(self, channel: str, message: object) -> None:
        self.published += 1
        listeners = self._channels.get(channel)
        if listeners:
            for subscription in tuple(listeners):
                subscription.listener(message)
        if len(self._outgoing) >= self.capacity:
            self.dropped += 1
            return
        self._queue((_PUBLISH, channel, message))

    def subscribe(self, channel: str, listener: Listener) -> Subscription:
        subscription = Subscription(self, channel, listener)
        listeners = self._channels.setdefault(channel, [])
        listeners.append(subscription)
        if len(listeners) == 1:
            self._queue((_SUBSCRIBE, channel))
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
            self._queue((_UNSUBSCRIBE, subscription.channel))

    def listeners(self, channel: str) -> int:
        return len(self._channels.get(channel, ()))

    # -- to Redis ----------------------------------------------------------------------------------

    def _queue(self, operation: tuple[Any, ...]) -> None:
        self._outgoing.append(operation)
        self._wake.set()

    async def _write(self) -> None:
        assert self._redis is not None
        redis = self._redis
        outgoing = self._outgoing
        while True:
            await self._wake.wait()
            self._wake.clear()
            self._writing = True
            # in a call of its own: the last operation (a message, maybe a table's frames) is
            # not kept while the writer waits for the next
            await self._write_queued(redis, outgoing)
            self._writing = False

    async def _write_queued(self, redis: aioredis.Redis, outgoing: deque[tuple[Any, ...]]) -> None:
        while outgoing:
            batch = _Batch(self, redis.pipeline(transaction=False))
            while outgoing and batch.operations < BATCH:
                operation = outgoing.popleft()
                kind = operation[0]
                try:
                    if kind == _SEND:
                        batch.add(_SEND, operation[1], (operation[2], bus_codec.encode(operation[3])))
                    elif kind == _PUBLISH:
                        batch.add(_PUBLISH, operation[1], bus_codec.encode(operation[2]))
                    elif kind == _CLAIM:
                        batch.end_run()
                        batch.pipe.hset(self._dir_key, operation[1], self.process_id)
                        batch.pipe.publish(self._dir_channel, f"+{self.process_id} {operation[1]}".encode())
                        batch.operations += 1
                    elif kind == _RELEASE_ADDRESS:
                        batch.end_run()
                        batch.pipe.eval(_RELEASE, 1, self._dir_key, operation[1], self.process_id)
                        batch.pipe.publish(self._dir_channel, f"-{self.process_id} {operation[1]}".encode())
                        batch.operations += 1
                    else:
                        # what was queued before goes first; what comes after waits for Redis
                        # to confirm the subscription
                        await self._execute(batch)
                        batch = _Batch(self, redis.pipeline(transaction=False))
                        # as many (un)subscriptions in a row as there are: one command, one wait
                        channels = [operation[1]]
                        while outgoing and outgoing[0][0] == kind and len(channels) < BATCH:
                            channels.append(outgoing.popleft()[1])
                        await self._change_subscriptions(channels, kind == _SUBSCRIBE)
                except bus_codec.CodecError as error:
                    log.error("cannot send %r: %s", operation, error)
            await self._execute(batch)

    async def _execute(self, batch: _Batch) -> None:
        batch.end_run()
        if not batch.operations:
            return
        try:
            await batch.pipe.execute()
        except RedisError as error:
            # what this pipeline held is lost; the bus goes on with what comes next
            log.error("redis bus: a batch of messages was lost: %s", error)

    async def _change_subscriptions(self, channels: list[str], subscribe: bool) -> None:
        assert self._pubsub is not None
        # a channel whose listeners came or went again since: a later operation says what holds
        keys = [
            (self._channel_prefix + channel).encode()
            for channel in dict.fromkeys(channels)
            if subscribe == (channel in self._channels)
        ]
        if not keys:
            return
        try:
            if not subscribe:
                await self._pubsub.unsubscribe(*keys)
                return
            loop = asyncio.get_running_loop()
            confirmations: list[asyncio.Future[None]] = []
            for key in keys:
                confirmed: asyncio.Future[None] = loop.create_future()
                self._confirmations.setdefault(key, []).append(confirmed)
                confirmations.append(confirmed)
            await self._pubsub.subscribe(*keys)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*confirmations), SUBSCRIBE_WAIT)
        except RedisError as error:
            log.error("redis bus: (un)subscribing %d channels failed: %s", len(keys), error)

    # -- from Redis --------------------------------------------------------------------------------

    async def _read_stream(self) -> None:
        assert self._reader_redis is not None
        redis = self._reader_redis
        stream = self._stream(self.process_id)
        last = "0-0"
        while not self.closing():
            try:
                answer = await redis.xread({stream: last}, count=READ_COUNT, block=READ_BLOCK_MS)
            except RedisError as error:
                if self.closing():
                    return
                log.error("redis bus: reading %s failed: %s", stream, error)
                await asyncio.sleep(0.5)
                continue
            read = cast(list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]], answer)
            for _, entries in read:
                for entry_id, fields in entries:
                    last = entry_id.decode()
                    try:
                        items = msgspec.msgpack.decode(fields[b"b"])
                        for address, data in items:
                            self._deliver(address, data)
                    except Exception:  # one unreadable entry must not stop this process's inbox
                        self.lost += 1
                        log.exception("redis bus: entry %s of %s is unreadable", last, stream)

    def _deliver(self, address: str, data: bytes) -> None:
        inbox = self._inboxes.get(address)
        if inbox is None:
            self.lost += 1
            log.warning("redis bus: a message for %s came after it closed", address)
            return
        try:
            inbox.put(bus_codec.decode(data))
        except (BusFull, bus_codec.CodecError) as error:
            self.lost += 1
            log.error("redis bus: a message for %s is lost: %s", address, error)

    async def _read_pubsub(self) -> None:
        assert self._pubsub is not None
        pubsub = self._pubsub
        prefix = self._channel_prefix.encode()
        own = self._own_tag
        while not self.closing():
            try:
                message = await pubsub.get_message(timeout=None)
            except (RedisError, RuntimeError) as error:  # RuntimeError: its connection is closed
                if self.closing():
                    return
                log.error("redis bus: pub/sub failed: %s", error)
                await asyncio.sleep(0.5)
                continue
            if message is not None:
                self._pubsub_message(message, prefix, own)
                # nothing of it kept while the next one is awaited: the listeners it called hold
                # sessions (the gateway's), what it decoded may be a table's frames
                message = None

    def _pubsub_message(self, message: dict[str, Any], prefix: bytes, own: bytes) -> None:
        """One message from pub/sub, in a call of its own: its locals (the last listener called,
        the decoded messages) go when it returns, not when the next message comes (the
        collector's periodic pass only freezes; reference counting frees a closed session)."""
        kind = message["type"]
        channel: bytes = message["channel"]
        if kind == "subscribe":
            for confirmed in self._confirmations.pop(channel, ()):
                if not confirmed.done():
                    confirmed.set_result(None)
        elif kind != "message":
            return
        elif channel == self._dir_channel:
            self._directory_notice(message["data"])
        else:
            data: bytes = message["data"]
            if data.startswith(own):
                return  # our own publish: the local listeners had it at once
            listeners = self._channels.get(channel[len(prefix) :].decode())
            if not listeners:
                return
            try:
                run = [
                    bus_codec.decode(item) for item in msgspec.msgpack.decode(data[data.index(b"|") + 1 :])
                ]
            except (bus_codec.CodecError, msgspec.DecodeError, ValueError) as error:
                log.error("redis bus: unreadable message on %s: %s", channel, error)
                return
            for decoded in run:
                for subscription in tuple(listeners):
                    try:
                        subscription.listener(decoded)
                    except Exception:
                        log.exception("redis bus: a listener on %s failed", channel)

    def _directory_notice(self, data: bytes) -> None:
        if self._notices_while_refreshing is not None:
            self._notices_while_refreshing.append(data)
        text = data.decode()
        if text.startswith("!"):
            self._forget(text[1:])
            return
        process, _, address = text[1:].partition(" ")
        if process == self.process_id:
            return
        if text.startswith("+"):
            self._remote[address] = process
        elif self._remote.get(address) == process:
            del self._remote[address]

    def _forget(self, processes: Iterable[str] | str) -> None:
        gone = {processes} if isinstance(processes, str) else set(processes)
        for address in [address for address, process in self._remote.items() if process in gone]:
            del self._remote[address]

    async def _refresh_directory(self) -> None:
        """The directory as Redis has it, less the addresses of processes that stopped beating;
        those are deleted for everyone."""
        assert self._redis is not None
        redis = self._redis
        # notices that come while the directory is read may be newer than what is read: they are
        # applied again on top of it
        self._notices_while_refreshing = []
        try:
            entries = cast(dict[bytes, bytes], await redis.hgetall(self._dir_key))
            dead = await self._dead_processes(entries)
        finally:
            notices, self._notices_while_refreshing = self._notices_while_refreshing, None
        directory = {address.decode(): process.decode() for address, process in entries.items()}
        self._remote = {
            address: process
            for address, process in directory.items()
            if process != self.process_id and process not in dead
        }
        for notice in notices:
            self._directory_notice(notice)
        for address in self._inboxes:
            if address not in directory:
                # gone while this process still reads it: it stalled past ALIVE_SECONDS and was
                # taken for dead (or Redis lost the hash); it is this process's again
                self._queue((_CLAIM, address))
        if dead:
            pipe = redis.pipeline(transaction=False)
            for address, process in directory.items():
                if process in dead:
                    pipe.eval(_RELEASE, 1, self._dir_key, address, process)
            for process in dead:
                pipe.delete(self._stream(process))
                pipe.publish(self._dir_channel, b"!" + process.encode())
            await pipe.execute()
            log.warning("redis bus: processes %s stopped: their addresses are gone", ", ".join(sorted(dead)))

    async def _dead_processes(self, entries: dict[bytes, bytes]) -> set[str]:
        assert self._redis is not None
        redis = self._redis
        others = sorted({process.decode() for process in entries.values()} - {self.process_id})
        if not others or await redis.exists(*(self._alive(p) for p in others)) == len(others):
            return set()
        pipe = redis.pipeline(transaction=False)
        for process in others:
            pipe.exists(self._alive(process))
        return {process for process, found in zip(others, await pipe.execute(), strict=True) if not found}

    async def _heartbeat(self) -> None:
        assert self._redis is not None
        while True:
            await asyncio.sleep(self.heartbeat_seconds)
            try:
                await self._redis.set(self._alive(self.process_id), b"1", ex=self.alive_seconds)
                await self._refresh_directory()
            except RedisError as error:
                log.error("redis bus: heartbeat failed: %s", error)


class _Batch:
    """One pipeline of the writer. Consecutive messages to one process (sends) or one channel
    (publishes) go as one command, a run: one stream entry or one PUBLISH holding them all, in
    order. A run ends where anything else comes between, so the order of everything holds."""

    __slots__ = ("_bus", "_items", "_kind", "_target", "operations", "pipe")

    def __init__(self, bus: RedisBus, pipe: Any) -> None:
        self._bus = bus
        self.pipe = pipe
        self.operations = 0
        self._kind = -1
        self._target = ""
        self._items: list[object] = []

    def add(self, kind: int, target: str, item: object) -> None:
        if kind != self._kind or target != self._target:
            self.end_run()
            self._kind = kind
            self._target = target
        self._items.append(item)
        self.operations += 1

    def end_run(self) -> None:
        if not self._items:
            return
        bus = self._bus
        packed = _packer.encode(self._items)
        if self._kind == _SEND:
            self.pipe.xadd(bus._stream(self._target), {b"b": packed}, maxlen=STREAM_LENGTH, approximate=True)
        else:
            self.pipe.publish(bus._channel_prefix + self._target, bus._own_tag + packed)
        self._items = []
        self._kind = -1
        self.operations += 1


_packer = msgspec.msgpack.Encoder()
