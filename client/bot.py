"""One bot player: logs in, registers, plays its seat with a strategy until its tournament is
over for it, and reconnects (resuming its tables) when the connection drops.

**Open loop.** When a turn comes the bot decides at once and plans the action for
``now + think``; a task sends it at that moment whatever else is going on (a slow server, other
bots' traffic), and the latency it reports runs from the planned moment, not from the send, so a
stalled load generator shows up as latency instead of hiding it (no coordinated omission).

**Chaos**, as probabilities per turn: ``disconnect`` drops the connection before the action goes
out, reconnects with ``resume`` and sends the same ``act`` (same ``action_id``) once back;
``sit_out`` sits out instead of acting and sits in again when the hand is over; ``bad_frame``
sends a frame that is no message first (at most ``BAD_FRAMES_PER_MINUTE`` a connection, below the
server's limit of refused frames). What chaos causes is counted as chaos, not as errors.

A bot that finds itself away without having chosen it (its clock ran out) sits in again after
the hand.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from dataclasses import dataclass, field

from websockets.exceptions import ConnectionClosed, InvalidHandshake

from client.connection import Connection, LoginRefused
from client.stats import LoadStats
from client.strategies import Strategy
from client.table_view import TableView
from client.think import Fixed, ThinkTime
from protocol import client_messages as cm
from protocol import server_messages as sm
from protocol import table_events as te
from protocol import tournament_events as tev
from protocol.errors import ErrorCode, ProtocolError
from protocol.kinds import GoodbyeReason, RegistrationStatus, TournamentStatus

__all__ = ["Bot", "Chaos", "ChaosError", "parse_chaos"]

BAD_FRAMES_PER_MINUTE = 3
CONNECT_ATTEMPTS = 8  # tries to (re)connect before the bot gives up
# Errors a race explains (the clock acted for the bot, the hand moved on) rather than a fault.
_LATE = frozenset({ErrorCode.NOT_YOUR_TURN, ErrorCode.STALE_HAND, ErrorCode.NOT_SEATED})


class ChaosError(ValueError):
    """Chaos options that cannot be read."""


@dataclass(frozen=True, slots=True)
class Chaos:
    disconnect: float = 0.0
    sit_out: float = 0.0
    bad_frame: float = 0.0

    def __str__(self) -> str:
        return f"disconnect={self.disconnect:g},sit_out={self.sit_out:g},bad_frame={self.bad_frame:g}"


def parse_chaos(text: str) -> Chaos:
    """``disconnect=P,sit_out=P,bad_frame=P`` (any of them, each a probability per turn)."""
    values: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, number = part.partition("=")
        name = name.strip().replace("-", "_")
        if name not in ("disconnect", "sit_out", "bad_frame"):
            raise ChaosError(f"{part!r}: the chaos options are disconnect=P, sit_out=P and bad_frame=P")
        try:
            probability = float(number)
        except ValueError:
            raise ChaosError(f"{part!r}: P is a probability from 0 to 1") from None
        if not 0.0 <= probability <= 1.0:
            raise ChaosError(f"{part!r}: P is a probability from 0 to 1")
        values[name] = probability
    return Chaos(**values)


@dataclass(slots=True)
class _Pending:
    hand_number: int
    due: float
    task: asyncio.Task[None]
    across_reconnect: bool = False


@dataclass(eq=False)
class Bot:
    """One player (see the module docstring). ``run`` returns when the tournament is over for it."""

    connection: Connection
    tournament_id: str
    strategy: Strategy
    stats: LoadStats
    think: ThinkTime = field(default_factory=lambda: Fixed(0.0))
    chaos: Chaos = field(default_factory=Chaos)
    seed: int = 0
    register: bool = True
    name: str = ""
    gate: asyncio.Semaphore | None = None  # held while connecting the first time (a ramp)
    tables: dict[int, TableView] = field(default_factory=dict)
    done: bool = False
    place: int | None = None
    prize_cents: int = 0
    registered: bool = False
    failure: str | None = None  # why the bot stopped early, if it did
    _rng: random.Random = field(default_factory=random.Random)
    _online: asyncio.Event = field(default_factory=asyncio.Event)
    _pending: dict[int, _Pending] = field(default_factory=dict)
    _acts: int = 0
    _requests: int = 0
    _chosen_away: bool = False
    _sit_in_asked: bool = False
    _bad_frames: deque[float] = field(default_factory=deque)
    _bad_unanswered: int = 0
    _dropping: bool = False

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._register_id = f"reg-{self.tournament_id}"[:64]

    async def run(self) -> None:
        try:
            if self.gate is None:
                connected = await self._connect(resume=False)
            else:
                async with self.gate:
                    connected = await self._connect(resume=False)
            if not connected:
                return
            if self.register:
                await self._send(cm.Register(tournament_id=self.tournament_id, request_id=self._register_id))
            while not self.done:
                try:
                    message = await self.connection.recv()
                except ProtocolError as error:
                    self.stats.errors[f"undecodable:{error.code}"] += 1
                    continue
                except (ConnectionClosed, ConnectionError, OSError):
                    self._offline()
                    if self._dropping:
                        self._dropping = False
                    else:
                        self.stats.errors["connection_lost"] += 1
                    if not await self._connect(resume=True):
                        return
                    self.stats.reconnects += 1
                    continue
                await self._handle(message)
        finally:
            self.stats.finished += 1
            for pending in self._pending.values():
                pending.task.cancel()
            if self._online.is_set():
                self._offline()
            self.stats.frames_in += self.connection.frames_in
            self.stats.bytes_in += self.connection.bytes_in
            self.stats.frames_out += self.connection.frames_out
            self.stats.bytes_out += self.connection.bytes_out
            self.connection.frames_in = self.connection.bytes_in = 0
            self.connection.frames_out = self.connection.bytes_out = 0
            await self.connection.close()

    def _offline(self) -> None:
        self._online.clear()
        self.stats.connected -= 1
        for pending in self._pending.values():
            pending.across_reconnect = True

    async def _connect(self, *, resume: bool) -> bool:
        delay = 0.1
        for attempt in range(CONNECT_ATTEMPTS):
            try:
                await self.connection.connect(resume=resume)
            except LoginRefused as refused:
                self._fail(f"login refused: {refused}", f"login:{refused.error.code}")
                return False
            except (OSError, InvalidHandshake, TimeoutError, ConnectionClosed, ProtocolError) as error:
                self.stats.errors[f"connect:{type(error).__name__}"] += 1
                await self.connection.close()
                if attempt == CONNECT_ATTEMPTS - 1:
                    self._fail(f"cannot connect: {error}", None)
                    return False
                await asyncio.sleep(delay * (0.5 + self._rng.random()))
                delay = min(delay * 2, 5.0)
                continue
            self.name = self.connection.player or self.name
            self._bad_frames.clear()
            self._bad_unanswered = 0
            self.stats.connected += 1
            self._online.set()
            return True
        return False

    def _fail(self, why: str, error: str | None) -> None:
        if error is not None:
            self.stats.errors[error] += 1
        self.failure = why
        self.done = True

    async def _send(self, message: cm.ClientMessage) -> bool:
        """Send if connected; ``False`` when the connection is down (the reader reconnects)."""
        try:
            await self.connection.send(message)
        except (ConnectionClosed, ConnectionError, OSError):
            return False
        return True

    def _request_id(self, what: str) -> str:
        self._requests += 1
        return f"{what}-{self._requests}"

    # --- what the server says -------------------------------------------------------------

    async def _handle(self, message: sm.ServerMessage) -> None:
        if isinstance(message, sm.TableEvent):
            await self._table_event(message)
        elif isinstance(message, sm.TableSnapshot):
            view = self._view(message.table_id)
            view.snapshot(message)
            self._cancel(message.table_id)
            if message.legal is not None and message.hand_number is not None and view.seat == message.to_act:
                self._turn(view, message.hand_number, message.legal)
        elif isinstance(message, sm.Ack):
            if message.request_id == self._register_id and not self.registered:
                self.registered = True
                self.stats.registered += 1
        elif isinstance(message, sm.Error):
            self._error(message)
        elif isinstance(message, sm.Seated):
            for table_id in [t for t in self.tables if t != message.table_id]:
                self._cancel(table_id)
                del self.tables[table_id]
        elif isinstance(message, sm.Unseated):
            self.done = True
        elif isinstance(message, sm.Registration):
            if message.tournament_id == self.tournament_id and message.status in (
                RegistrationStatus.UNREGISTERED,
                RegistrationStatus.ELIMINATED,
            ):
                self.done = self.registered or message.status is RegistrationStatus.ELIMINATED
        elif isinstance(message, sm.TournamentEvent):
            event = message.event
            if isinstance(event, tev.Eliminated) and event.player == self.name:
                self.place, self.prize_cents = event.place, event.prize_cents
            elif isinstance(event, tev.RebuyOffered):
                await self._send(
                    cm.DeclineRebuy(tournament_id=self.tournament_id, request_id=self._request_id("norebuy"))
                )
            elif isinstance(event, tev.TournamentEnded):
                for result in event.results:
                    if self.name in result.players:
                        self.place, self.prize_cents = result.place, result.prize_cents
        elif isinstance(message, sm.TournamentState):
            if message.tournament_id == self.tournament_id and message.status in (
                TournamentStatus.FINISHED,
                TournamentStatus.CANCELLED,
            ):
                self.done = True
        elif isinstance(message, sm.Goodbye):
            if message.reason is GoodbyeReason.TAKEN_OVER:
                self._fail("logged in elsewhere", "taken_over")
            elif message.reason is not GoodbyeReason.SHUTDOWN:
                self.stats.errors[f"goodbye:{message.reason}"] += 1

    def _error(self, error: sm.Error) -> None:
        if error.code is ErrorCode.BAD_FRAME and self._bad_unanswered > 0:
            self._bad_unanswered -= 1
            self.stats.chaos["bad_frame_refused"] += 1
            return
        if error.request_id == self._register_id:
            if error.code is ErrorCode.ALREADY_REGISTERED:
                if not self.registered:
                    self.registered = True
                    self.stats.registered += 1
                return
            self._fail(f"registration refused: {error.code}: {error.message}", f"register:{error.code}")
            return
        self.stats.errors[f"late:{error.code}" if error.code in _LATE else str(error.code)] += 1

    async def _table_event(self, message: sm.TableEvent) -> None:
        table_id, event = message.table_id, message.event
        view = self._view(table_id)
        view.event(event)
        if isinstance(event, te.Turn):
            if event.seat == view.seat and view.hand_number is not None:
                if event.legal is not None:
                    self._turn(view, view.hand_number, event.legal)
                else:
                    self._cancel(table_id)
        elif isinstance(event, te.ActionTaken):
            if event.seat == view.seat:
                self._acted(table_id, event.timed_out)
        elif isinstance(event, te.HandStarted):
            self.stats.hands.add((table_id, event.hand_number))
            self._cancel(table_id)
        elif isinstance(event, te.HandEnded):
            self._cancel(table_id)
            if view.away and not self._sit_in_asked:
                self._chosen_away = False
                self._sit_in_asked = True
                await self._send(
                    cm.SitIn(tournament_id=self.tournament_id, request_id=self._request_id("in"))
                )
        elif isinstance(event, te.SeatChanged) and event.player == self.name and not event.away:
            self._sit_in_asked = False
        elif isinstance(event, te.TableClosed):
            self._cancel(table_id)
            self.tables.pop(table_id, None)

    def _view(self, table_id: int) -> TableView:
        view = self.tables.get(table_id)
        if view is None:
            view = self.tables[table_id] = TableView(table_id, self.name)
        return view

    # --- acting ------------------------------------------------------------------------------

    def _turn(self, view: TableView, hand_number: int, legal: te.LegalView) -> None:
        self._cancel(view.table_id)
        loop = asyncio.get_running_loop()
        if self.chaos.sit_out and self._rng.random() < self.chaos.sit_out:
            self.stats.chaos["sit_out"] += 1
            self._chosen_away = True
            task = loop.create_task(self._sit_out())
            self._pending[view.table_id] = _Pending(hand_number, loop.time(), task)
            return
        action, amount = self.strategy.decide(view.situation(legal), self._rng)
        due = loop.time() + self.think.sample(self._rng)
        self._acts += 1
        act = cm.Act(
            table_id=view.table_id,
            hand_number=hand_number,
            action_id=f"a{hand_number}-{self._acts}",
            action=action,
            amount=amount,
        )
        drop = bool(self.chaos.disconnect) and self._rng.random() < self.chaos.disconnect
        bad = bool(self.chaos.bad_frame) and self._rng.random() < self.chaos.bad_frame
        task = loop.create_task(self._act_at(due, act, drop=drop, bad=bad))
        self._pending[view.table_id] = _Pending(hand_number, due, task)

    async def _sit_out(self) -> None:
        await self._send(cm.SitOut(tournament_id=self.tournament_id, request_id=self._request_id("out")))

    async def _act_at(self, due: float, act: cm.Act, *, drop: bool, bad: bool) -> None:
        loop = asyncio.get_running_loop()
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        if drop and self._online.is_set():
            self.stats.chaos["disconnect"] += 1
            self._dropping = True
            await self.connection.close()  # the reader sees it closed and reconnects
        if bad and self._bad_frame_allowed():
            try:
                await self.connection.send_frame(b"\xc1" if self.connection.codec.binary else "{not json")
                self.stats.chaos["bad_frame"] += 1
                self._bad_unanswered += 1
            except (ConnectionClosed, ConnectionError, OSError):
                pass
        while True:
            await self._online.wait()
            if await self._send(act):
                self.stats.actions += 1
                return
            await asyncio.sleep(0)  # the reader notices the drop and clears _online

    def _bad_frame_allowed(self) -> bool:
        now = time.monotonic()
        while self._bad_frames and self._bad_frames[0] < now - 60.0:
            self._bad_frames.popleft()
        if len(self._bad_frames) >= BAD_FRAMES_PER_MINUTE:
            return False
        self._bad_frames.append(now)
        return True

    def _acted(self, table_id: int, timed_out: bool) -> None:
        pending = self._pending.pop(table_id, None)
        if timed_out:
            if not self._chosen_away:
                self.stats.timed_out += 1
            if pending is not None:
                pending.task.cancel()
            return
        if pending is None:
            return
        self.stats.broadcast += 1
        if not pending.across_reconnect:
            self.stats.latency(asyncio.get_running_loop().time() - pending.due)

    def _cancel(self, table_id: int) -> None:
        pending = self._pending.pop(table_id, None)
        if pending is not None and not pending.task.done():
            pending.task.cancel()
