"""The load generator: one process driving a share of the bench's players over ``lean_ws``.

A process runs bots on one asyncio loop and obeys the controller over a pipe (connect, register,
set the think time, report a window, close). A bot connects, says ``hello`` with its token and,
against feltd, registers; then whenever it is its turn it waits its think time and acts. Its
latency is from sending the ``act`` to receiving the ``action_taken`` event of its own seat: the
table's broadcast of that action, as every player at the table gets it.

Against the bare relay (``relay.py``) there is no game to say whose turn it is, so the bots take
turns round their table themselves: a seat acts after the seat before it was broadcast, which
gives the relay the same one-action-at-a-time load per table as a poker table.
"""

from __future__ import annotations

import asyncio
import gc
import random
import resource
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

import msgpack

from server.bench_live import lean_ws
from server.bench_live.lag import LagProbe

FELTD = "feltd"
RELAY = "relay"
SUBPROTOCOL = "feltd.msgpack.v1"
CONNECT_CONCURRENCY = 64  # handshakes in flight per process (the server's accept backlog is 100)
REGISTER_CONCURRENCY = 64  # registrations in flight per process
LOST_AFTER = 5.0  # default: an act whose broadcast has not come back after this long is an error


def raise_file_limit() -> tuple[int, int]:
    """Raise RLIMIT_NOFILE's soft limit to the hard limit; return (soft before, hard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return soft, hard


@dataclass(frozen=True)
class GeneratorPlan:
    host: str
    port: int
    mode: str  # FELTD or RELAY
    players: list[tuple[int, str, str]]  # (index among all players, player id, token)
    total: int  # players in the whole bench (the relay's table layout needs it)
    table_size: int
    seed: int
    lost_after: float = LOST_AFTER


@dataclass
class Samples:
    """What the bots measured: per act, when it was sent and how long its broadcast took."""

    sent: array[float] = field(default_factory=lambda: array("d"))
    latency: array[float] = field(default_factory=lambda: array("d"))
    errors: list[tuple[float, str]] = field(default_factory=list)


class Bot:
    __slots__ = (
        "acted",
        "eliminated",
        "gen",
        "hand",
        "index",
        "pending_at",
        "pending_id",
        "player",
        "previous",
        "registered",
        "registering",
        "seat",
        "table",
        "timer",
        "token",
        "welcomed",
        "ws",
    )

    def __init__(self, gen: Generator, index: int, player: str, token: str) -> None:
        self.gen = gen
        self.index = index
        self.player = player
        self.token = token
        self.ws: lean_ws.LeanWebSocket | None = None
        self.welcomed = False
        self.registered = False
        self.registering = False  # a register request of this bot's awaits its answer
        self.table = 0
        self.seat = 0
        self.previous = 0  # relay: the seat whose broadcast makes it this bot's turn
        self.hand = 0
        self.pending_at = 0.0  # when the unanswered act was sent (0: none)
        self.pending_id = ""
        self.timer: asyncio.TimerHandle | None = None
        self.acted = 0
        self.eliminated = False
        if gen.plan.mode == RELAY:
            size = gen.plan.table_size
            self.table, self.seat = index // size + 1, index % size + 1
            at_table = min(size, gen.plan.total - (self.table - 1) * size)
            self.previous = self.seat - 1 if self.seat > 1 else at_table

    # -- messages -----------------------------------------------------------------------------------

    def on_message(self, payload: bytes) -> None:
        message = msgpack.unpackb(payload)
        kind = message["type"]
        self.gen.received[kind] += 1
        self.gen.received_bytes += len(payload)
        if kind == "table_event":
            event = message["event"]
            what = event["type"]
            self.gen.events[what] += 1
            if what == "action_taken":
                seat = event["seat"]
                if seat == self.seat and self.pending_at and message["table_id"] == self.table:
                    self.gen.record(self.pending_at)
                    self.pending_at = 0.0
                    if event["timed_out"]:
                        self.gen.error("acted for by the server (timed out)")
                if self.gen.plan.mode == RELAY and seat == self.previous:
                    self.plan()
            elif what == "turn":
                if event["legal"] is not None and message["table_id"] == self.table:
                    self.seat = event["seat"]
                    self.plan(event["legal"])
            elif what == "hand_started" and message["table_id"] == self.table:
                self.hand = event["hand_number"]
        elif kind == "table_snapshot":
            if message["table_id"] == self.table:
                if message["hand_number"] is not None:
                    self.hand = message["hand_number"]
                if message["legal"] is not None and message["hand_number"] is not None:
                    self.plan(message["legal"])
        elif kind == "seated":
            self.table, self.seat = message["table_id"], message["seat"]
            self.pending_at = 0.0
        elif kind == "unseated":
            self.eliminated = True
            self.table = 0
            self._cancel()
        elif kind == "welcome":
            self.welcomed = True
            self.gen.welcomed(self)
        elif kind == "ack":
            if message["request_id"] == f"reg-{self.player}":
                self.registered = True
                self.gen.registration_done(self)
        elif kind == "error":
            self.gen.error(f"error {message['code']}")
            request = message["request_id"]
            if request == f"reg-{self.player}":
                self.gen.registration_done(self)
            elif request is not None and request == self.pending_id:
                self.pending_at = 0.0
        elif kind == "goodbye":
            self.gen.error(f"goodbye {message['reason']}")

    def on_close(self, reason: str) -> None:
        self._cancel()
        if self.registering:  # no answer will come: do not keep the others waiting for it
            self.gen.registration_done(self)
        if not self.gen.closing:
            self.gen.error(f"disconnected ({reason})")

    # -- acting -------------------------------------------------------------------------------------

    def plan(self, legal: dict[str, Any] | None = None) -> None:
        self._cancel()
        think = self.gen.think_low + (self.gen.think_high - self.gen.think_low) * self.gen.rng.random()
        self.timer = self.gen.loop.call_later(think, self.act, legal)

    def _cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def act(self, legal: dict[str, Any] | None) -> None:
        self.timer = None
        ws = self.ws
        if ws is None or ws.closed or self.table == 0:
            return
        self.acted += 1
        action_id = f"h{self.hand}-{self.acted}"
        message: dict[str, Any] = {
            "type": "act",
            "table_id": self.table,
            "hand_number": self.hand or 1,
            "action_id": action_id,
            "action": "check_or_call",
        }
        if legal is not None:
            # mostly calls and checks, a few folds and min-raises: long hands, slow busts
            roll = self.gen.rng.random()
            if legal["min_raise_to"] is not None and roll < 0.05:
                message["action"], message["amount"] = "raise", legal["min_raise_to"]
            elif legal["can_fold"] and roll > 0.9:
                message["action"] = "fold"
        self.pending_id = action_id
        self.pending_at = time.monotonic()
        frame = msgpack.packb(message)
        self.gen.sent_bytes += len(frame)
        ws.send(frame)


class Generator:
    def __init__(self, control: Connection, plan: GeneratorPlan) -> None:
        self.control = control
        self.plan = plan
        self.loop = asyncio.get_running_loop()
        self.rng = random.Random(plan.seed)
        self.bots = [Bot(self, index, player, token) for index, player, token in plan.players]
        self.samples = Samples()
        self.received: Counter[str] = Counter()  # frames received, by message type
        # table events received, by event type: hand_started and action_taken copies give the
        # actions per hand (both reach every player at the table)
        self.events: Counter[str] = Counter()
        self.received_bytes = 0  # their payloads (the WebSocket header adds 2-4 bytes a frame)
        self.sent_bytes = 0  # the payloads of the acts sent
        self.think_low = 1.0
        self.think_high = 3.0
        self.closing = False
        self.done: asyncio.Future[None] = self.loop.create_future()
        self._welcome_waiters: dict[int, asyncio.Future[None]] = {}
        self._register_queue: list[Bot] = []
        self._registering = 0
        self._registered_all: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._tournaments: list[str] = []
        # how late this process's own loop runs: a measured tail with a late generator loop
        # beside it is (partly) the generator's, not the server's
        self.lag = LagProbe()

    async def run(self) -> None:
        self.loop.add_reader(self.control.fileno(), self._on_control)
        sweeper = self.loop.create_task(self._sweep_lost())
        try:
            await self.done
        finally:
            sweeper.cancel()
            self.lag.stop()
            self.loop.remove_reader(self.control.fileno())

    # -- bookkeeping the bots call ------------------------------------------------------------------

    def record(self, sent_at: float) -> None:
        self.samples.sent.append(sent_at)
        self.samples.latency.append(time.monotonic() - sent_at)

    def error(self, kind: str) -> None:
        self.samples.errors.append((time.monotonic(), kind))

    def welcomed(self, bot: Bot) -> None:
        waiter = self._welcome_waiters.pop(bot.index, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def registration_done(self, bot: Bot) -> None:
        if not bot.registering:
            return
        bot.registering = False
        self._registering -= 1
        self._pump_registrations()

    async def _sweep_lost(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            for bot in self.bots:
                if bot.pending_at and now - bot.pending_at > self.plan.lost_after:
                    lost = f"no broadcast within {self.plan.lost_after:g} s"
                    self.samples.errors.append((bot.pending_at, lost))
                    bot.pending_at = 0.0

    # -- commands -----------------------------------------------------------------------------------

    def _on_control(self) -> None:
        while self.control.poll():
            try:
                command = self.control.recv()
            except EOFError:  # the controller is gone
                self._close()
                return
            name, arguments = command[0], command[1:]
            if name == "connect":
                self._spawn(self._connect_all())
            elif name == "register":
                self._spawn(self._register_all(arguments[0]))
            elif name == "think":
                self.think_low, self.think_high = arguments
            elif name == "start":
                for bot in self.bots:
                    if bot.seat == 1:
                        bot.plan()
            elif name == "status":
                self.control.send(self._status())
            elif name == "unanswered":
                before = arguments[0]
                self.control.send(sum(1 for bot in self.bots if 0.0 < bot.pending_at < before))
            elif name == "window":
                self.control.send(self._window(*arguments))
            elif name == "close":
                self._close()
                self.control.send(("closed",))

    def _spawn(self, coroutine: Any) -> None:
        task = self.loop.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _status(self) -> dict[str, int]:
        return {
            "connected": sum(
                1 for bot in self.bots if bot.welcomed and bot.ws is not None and not bot.ws.closed
            ),
            "registered": sum(1 for bot in self.bots if bot.registered),
            "seated": sum(1 for bot in self.bots if bot.table),
            "eliminated": sum(1 for bot in self.bots if bot.eliminated),
            "answered": len(self.samples.sent),
            "frames": sum(self.received.values()),
            "hand_started": self.events["hand_started"],
            "action_taken": self.events["action_taken"],
            "bytes_in": self.received_bytes,
            "bytes_out": self.sent_bytes,
        }

    def _window(self, start: float, end: float) -> tuple[list[float], Counter[str], list[float]]:
        """The latencies of the acts sent in the window, its errors, and this process's loop lag."""
        sent, latency = self.samples.sent, self.samples.latency
        latencies = [latency[i] for i in range(len(sent)) if start <= sent[i] < end]
        errors = Counter(kind for at, kind in self.samples.errors if start <= at < end)
        return latencies, errors, self.lag.window(start, end)

    async def _connect_all(self) -> None:
        started = time.monotonic()
        gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
        failures: Counter[str] = Counter()

        async def one(bot: Bot) -> None:
            async with gate:
                for attempt in range(3):
                    try:
                        bot.ws = await lean_ws.connect(
                            self.plan.host, self.plan.port, SUBPROTOCOL, bot.on_message, bot.on_close
                        )
                        waiter = self.loop.create_future()
                        self._welcome_waiters[bot.index] = waiter
                        hello = {
                            "type": "hello",
                            "protocol": 1,
                            "token": bot.token,
                            "client": "feltd-bench-live/1",
                        }
                        bot.ws.send(msgpack.packb(hello))
                        async with asyncio.timeout(30):
                            await waiter
                        return
                    except (OSError, lean_ws.HandshakeError, TimeoutError) as error:
                        if attempt == 2:
                            failures[type(error).__name__] += 1
                        await asyncio.sleep(0.5 * (attempt + 1))

        await asyncio.gather(*(one(bot) for bot in self.bots))
        gc.collect()
        gc.freeze()  # thousands of long-lived bots: keep the collector from walking them again
        self.control.send(
            (
                "connected",
                sum(1 for bot in self.bots if bot.welcomed),
                dict(failures),
                time.monotonic() - started,
            )
        )

    async def _register_all(self, tournaments: str | list[str]) -> None:
        # several tournaments (a cluster's workers each run some): the players take them in turn
        self._tournaments = [tournaments] if isinstance(tournaments, str) else tournaments
        before = self.received.copy()
        self._register_queue = [bot for bot in self.bots if bot.welcomed][::-1]
        self._registered_all = self.loop.create_future()
        self._pump_registrations()
        try:
            async with asyncio.timeout(600):
                await self._registered_all
        except TimeoutError:
            pass
        refused = Counter(kind for _, kind in self.samples.errors)
        received = dict(self.received - before)
        registered = sum(1 for bot in self.bots if bot.registered)
        self.control.send(("registered", registered, dict(refused), received))

    def _pump_registrations(self) -> None:
        while self._register_queue and self._registering < REGISTER_CONCURRENCY:
            bot = self._register_queue.pop()
            if bot.ws is None or bot.ws.closed:
                continue
            self._registering += 1
            bot.registering = True
            request = {
                "type": "register",
                "tournament_id": self._tournaments[bot.index % len(self._tournaments)],
                "request_id": f"reg-{bot.player}",
            }
            bot.ws.send(msgpack.packb(request))
        done = self._registered_all
        if not self._register_queue and self._registering <= 0 and done is not None and not done.done():
            done.set_result(None)

    def _close(self) -> None:
        self.closing = True
        for bot in self.bots:
            if bot.ws is not None:
                bot.ws.close()
        if not self.done.done():
            self.done.set_result(None)


def generator_main(control: Connection, plan: GeneratorPlan) -> None:
    """A load-generator process's body (``multiprocessing`` target)."""
    raise_file_limit()

    async def main() -> None:
        await Generator(control, plan).run()

    asyncio.run(main())
