"""A feltd server on loopback with a fresh PostgreSQL database, and scripted players, for the
server's tests. Everything is real: the WebSocket connections, the store, the ledger."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from websockets.exceptions import ConnectionClosed

from client.connection import Connection
from engine.tournament.transfers import CASHIER, Reason, Transfer, player_account
from protocol import client_messages as cm
from protocol import server_messages as sm
from protocol import table_events as te
from protocol import tournament_events as tev
from protocol.codec import JSON_SUBPROTOCOL, MSGPACK_SUBPROTOCOL
from protocol.kinds import ActionKind
from server.app import FeltServer
from server.clock import ScaledClock
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database


def tournament_toml(
    tournament_id: str,
    *,
    players: int,
    table_size: int = 9,
    level_minutes: int = 5,
    breaks: str = 'mode = "none"',
    extra: str = "",
) -> str:
    levels = "".join(
        f"[[levels]]\nsmall_blind = {small}\nbig_blind = {small * 2}\nminutes = {level_minutes}\n\n"
        for small in (10, 20, 40, 75, 150, 300, 600, 1200, 2500, 5000, 10000, 20000)
    )
    return (
        f'id = "{tournament_id}"\nname = "Test {tournament_id}"\nbuy_in = 1000\nfee = 100\n'
        f"starting_stack = 1500\ntable_size = {table_size}\nmin_players = 2\nmax_players = {players}\n"
        f"{extra}\n[breaks]\n{breaks}\n\n{levels}"
    )


@dataclass
class Harness:
    store: Store
    server: FeltServer
    url: str
    database_url: str
    tokens: dict[str, str] = field(default_factory=dict)

    async def add_players(self, names: list[str], cents: int = 100_000) -> None:
        for name in names:
            created = await self.store.players.add(name, player_id=name)
            self.tokens[name] = created.token
            await self.store.ledger.post(
                [Transfer(CASHIER, player_account(name), cents, f"test-deposit:{name}", Reason.DEPOSIT)]
            )

    async def create(self, toml: str, *, starts_in: float) -> str:
        """Record a tournament starting ``starts_in`` clock seconds from now, and load it."""
        start = dt.datetime.fromtimestamp(self.server.clock.now() + starts_in, dt.UTC)
        record = await self.store.tournaments.create_from_toml(toml, starts_at=start)
        await self.server.load()
        return record.id

    def connection(self, name: str | None, *, json: bool = False) -> Connection:
        return Connection(
            self.url,
            token=None if name is None else self.tokens[name],
            subprotocol=JSON_SUBPROTOCOL if json else MSGPACK_SUBPROTOCOL,
            client_name=f"test-{name}",
        )


@asynccontextmanager
async def running_server(
    postgres_server_url: str,
    *,
    speed: float = 20.0,
    seed: int = 7,
    hand_gap: float = 1.0,
    journal: bool = True,
    clock_start: float | None = None,
    poll_seconds: float = 3600,
    **options: object,
) -> AsyncIterator[Harness]:
    """A server on 127.0.0.1 (a free port) over a new database, its clock ``speed`` times fast
    (reading ``clock_start`` when it starts, when given: a test can start at a chosen minute)."""
    database_url = await create_database(postgres_server_url, f"feltd_test_server_{uuid.uuid4().hex[:8]}")
    try:
        async with open_store(database_url, max_size=8) as store:
            server = FeltServer(
                store,
                clock=ScaledClock(speed, clock_start),
                poll_seconds=poll_seconds,
                director_rng=lambda _: random.Random(seed),
                table_rng=lambda table_id: random.Random(seed * 1_000_003 + table_id),
                hand_gap=hand_gap,
                journal=journal,
                **options,  # type: ignore[arg-type]
            )
            await server.start("127.0.0.1", 0)
            try:
                yield Harness(store, server, server.url, database_url)
            finally:
                await server.stop()
    finally:
        await drop_database(postgres_server_url, database_url)


Policy = Callable[[te.LegalView, random.Random], tuple[ActionKind, int | None]]


def lively(legal: te.LegalView, rng: random.Random) -> tuple[ActionKind, int | None]:
    """A player that keeps a test tournament short: all-in often, calls a lot, folds some."""
    roll = rng.random()
    if legal.max_raise_to is not None and roll < 0.2:
        return ActionKind.RAISE, legal.max_raise_to
    if legal.can_fold and roll > 0.75:
        return ActionKind.FOLD, None
    return ActionKind.CHECK_OR_CALL, None


def steady(legal: te.LegalView, rng: random.Random) -> tuple[ActionKind, int | None]:
    """A calmer player: a few all-ins, mostly min-raises, calls and folds; a field of them busts
    one at a time, so a bubble comes with tables still to play hand for hand."""
    roll = rng.random()
    if legal.max_raise_to is not None and roll < 0.04:
        return ActionKind.RAISE, legal.max_raise_to
    if legal.min_raise_to is not None and roll < 0.2:
        return ActionKind.RAISE, legal.min_raise_to
    if legal.can_fold and roll > 0.55:
        return ActionKind.FOLD, None
    return ActionKind.CHECK_OR_CALL, None


@dataclass
class Player:
    """A scripted player: registers, then answers every turn of theirs with ``policy``."""

    connection: Connection
    tournament_id: str
    policy: Policy = lively
    seed: int = 0
    received: list[sm.ServerMessage] = field(default_factory=list)
    hands: dict[int, int] = field(default_factory=dict)  # table -> hand under way
    ended: tev.TournamentEnded | None = None
    acted: int = 0
    errors: list[sm.Error] = field(default_factory=list)

    async def run(self, *, register: bool = True, until: float = 600.0) -> None:
        rng = random.Random(self.seed)
        await self.connection.connect()
        if register:
            await self.connection.send(
                cm.Register(tournament_id=self.tournament_id, request_id=f"reg-{self.connection.player}")
            )
        deadline = time.monotonic() + until
        while self.ended is None and time.monotonic() < deadline:
            try:
                message = await self.connection.recv(deadline - time.monotonic())
            except TimeoutError:
                break
            except ConnectionClosed as closed:
                last = [
                    m if isinstance(m, sm.Error | sm.Goodbye) else type(m).__name__
                    for m in self.received[-6:]
                ]
                raise AssertionError(
                    f"{self.connection.player}: closed by the server ({closed}) after {last}"
                ) from None
            self.received.append(message)
            await self.react(message, rng)
        await self.connection.close()

    async def react(self, message: sm.ServerMessage, rng: random.Random) -> None:
        if isinstance(message, sm.Error):
            self.errors.append(message)
        elif isinstance(message, sm.TournamentEvent) and isinstance(message.event, tev.TournamentEnded):
            self.ended = message.event
        elif isinstance(message, sm.TableSnapshot):
            if message.hand_number is not None:
                self.hands[message.table_id] = message.hand_number
            if message.legal is not None and message.hand_number is not None:
                await self.act(message.table_id, message.hand_number, message.legal, rng)
        elif isinstance(message, sm.TableEvent):
            event = message.event
            if isinstance(event, te.HandStarted):
                self.hands[message.table_id] = event.hand_number
            elif isinstance(event, te.Turn) and event.legal is not None:
                await self.act(message.table_id, self.hands[message.table_id], event.legal, rng)

    async def act(self, table_id: int, hand_number: int, legal: te.LegalView, rng: random.Random) -> None:
        action, amount = self.policy(legal, rng)
        self.acted += 1
        await self.connection.send(
            cm.Act(
                table_id=table_id,
                hand_number=hand_number,
                action_id=f"{self.connection.player}-{hand_number}-{self.acted}",
                action=action,
                amount=amount,
            )
        )


def unexplained(errors: dict[str, int]) -> dict[str, int]:
    """A bots report's errors but the ``late:`` ones: an action that crossed its shot clock (a
    fraction of a second at a test's speed) on a loaded machine is refused, as a person's would be."""
    return {kind: n for kind, n in errors.items() if not kind.startswith("late:")}


async def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
