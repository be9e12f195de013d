"""Hostile and broken clients against the real server over real sockets (issue 12, build item 5).

Every frame a client can get wrong gets a typed ``error``; past the documented limits the
connection is closed with the documented goodbye and WebSocket close code (docs/protocol.md
sections 3, 4, 16, 17). A player cannot act for another seat, see another player's cards or
give an operator's command. A client that never reads, and thousands that never say anything,
cost bounded memory and are timed out.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from typing import TypeVar

import msgspec
import pytest
from server_harness import Harness, Player, running_server, tournament_toml, wait_until
from websockets.asyncio.client import ClientConnection, connect
from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Subprotocol
from websockets.uri import parse_uri

from client.connection import Connection
from engine.tournament.transfers import player_account
from protocol import PROTOCOL_VERSION
from protocol import client_messages as cm
from protocol import operator_requests as op
from protocol import server_messages as sm
from protocol import table_events as te
from protocol.codec import JSON, JSON_SUBPROTOCOL, MSGPACK, MSGPACK_SUBPROTOCOL
from protocol.errors import ErrorCode
from protocol.kinds import ActionKind, GoodbyeReason
from server.gateway import Limits

pack = msgspec.msgpack.encode


async def open_raw(harness: Harness, *, json: bool = False) -> ClientConnection:
    """A WebSocket that sends whatever bytes a test gives it (no ``hello`` yet)."""
    return await connect(
        harness.url,
        subprotocols=[Subprotocol(JSON_SUBPROTOCOL if json else MSGPACK_SUBPROTOCOL)],
        compression=None,
        max_size=None,
    )


def decode(frame: bytes | str) -> sm.ServerMessage:
    return (JSON if isinstance(frame, str) else MSGPACK).decode_server(frame)


async def next_message(ws: ClientConnection, kind: type[sm.ServerMessage]) -> sm.ServerMessage:
    while True:
        message = decode(await asyncio.wait_for(ws.recv(), 20))
        if isinstance(message, kind):
            return message


async def next_error(ws: ClientConnection) -> sm.Error:
    error = await next_message(ws, sm.Error)
    assert isinstance(error, sm.Error)
    return error


async def say_hello(ws: ClientConnection, token: str | None = None) -> sm.Welcome:
    hello = cm.Hello(protocol=PROTOCOL_VERSION, token=token, client="hostile")
    await ws.send(MSGPACK.encode(hello))
    welcome = await next_message(ws, sm.Welcome)
    assert isinstance(welcome, sm.Welcome)
    return welcome


async def until_closed(ws: ClientConnection) -> tuple[list[sm.ServerMessage], int | None]:
    """What the server sent until it closed the connection, and its close code."""
    received: list[sm.ServerMessage] = []
    with contextlib.suppress(ConnectionClosed):
        while True:
            received.append(decode(await asyncio.wait_for(ws.recv(), 20)))
    assert ws.close_code is not None
    return received, ws.close_code


def goodbye(received: list[sm.ServerMessage]) -> GoodbyeReason | None:
    return next((m.reason for m in received if isinstance(m, sm.Goodbye)), None)


# -- frames ---------------------------------------------------------------------------------------


async def test_garbage_before_hello_is_a_fatal_bad_frame_and_a_1008_close(postgres_server_url: str) -> None:
    async with running_server(postgres_server_url) as harness:
        ws = await open_raw(harness)
        await ws.send(b"\xc1\x00\xff not msgpack")
        received, code = await until_closed(ws)
        errors = [m for m in received if isinstance(m, sm.Error)]
        assert [(e.code, e.fatal) for e in errors] == [(ErrorCode.BAD_FRAME, True)]
        assert goodbye(received) is GoodbyeReason.FATAL_ERROR and code == 1008


async def test_act_before_hello_is_a_fatal_not_authenticated(postgres_server_url: str) -> None:
    async with running_server(postgres_server_url) as harness:
        ws = await open_raw(harness)
        act = cm.Act(table_id=1, hand_number=1, action_id="early", action=ActionKind.FOLD)
        await ws.send(MSGPACK.encode(act))
        received, code = await until_closed(ws)
        errors = [m for m in received if isinstance(m, sm.Error)]
        assert [(e.code, e.request_id, e.fatal) for e in errors] == [
            (ErrorCode.NOT_AUTHENTICATED, "early", True)
        ]
        assert goodbye(received) is GoodbyeReason.FATAL_ERROR and code == 1008


async def test_each_malformed_frame_gets_its_typed_error_and_the_tenth_closes_1008(
    postgres_server_url: str,
) -> None:
    """After ``welcome`` a refused frame is answered and ignored; ``max_refused`` (10) of them in
    a minute close the connection with ``too_many_errors``."""
    async with running_server(postgres_server_url) as harness:
        ws = await open_raw(harness)
        await say_hello(ws)
        ping = pack({"type": "ping", "nonce": 1})
        cases: list[tuple[bytes | str, ErrorCode]] = [
            (b"\xc1\xc1\xc1", ErrorCode.BAD_FRAME),  # 0xc1 is no MessagePack at all
            (ping[:-3], ErrorCode.BAD_FRAME),  # truncated
            (pack([1, 2, 3]), ErrorCode.BAD_FRAME),  # not a map
            (pack({"nonce": 1}), ErrorCode.BAD_FRAME),  # no type
            (pack({"type": "teleport", "request_id": "t1"}), ErrorCode.UNKNOWN_TYPE),
            (pack({"type": "op_nuke_everything", "request_id": "t2"}), ErrorCode.UNKNOWN_TYPE),
            (pack({"type": "ping", "nonce": "one"}), ErrorCode.INVALID_FIELD),  # wrong type
            (pack({"type": "ping", "nonce": 2**64 - 1}), ErrorCode.INVALID_FIELD),  # huge int
            ('{"type": "ping", "nonce": 1}', ErrorCode.WRONG_FRAME_KIND),  # text on msgpack
        ]
        for frame, expected in cases:
            await ws.send(frame)
            error = await next_error(ws)
            assert (error.code, error.fatal) == (expected, False), (frame, error)
        # the connection still works between refusals: a ping is answered
        await ws.send(MSGPACK.encode(cm.Ping(nonce=7)))
        pong = await next_message(ws, sm.Pong)
        assert isinstance(pong, sm.Pong) and pong.nonce == 7
        await ws.send(b"\x00" * (16 * 1024 + 1))  # the tenth: too large
        received, code = await until_closed(ws)
        errors = [m for m in received if isinstance(m, sm.Error)]
        assert [e.code for e in errors] == [ErrorCode.TOO_LARGE]
        assert goodbye(received) is GoodbyeReason.TOO_MANY_ERRORS and code == 1008
        assert harness.server.metrics.error_closes == 1


async def test_a_frame_over_max_size_closes_the_connection_1009(postgres_server_url: str) -> None:
    async with running_server(postgres_server_url) as harness:
        ws = await open_raw(harness)
        await say_hello(ws)
        await ws.send(b"\x00" * (64 * 1024 + 1))
        _, code = await until_closed(ws)
        assert code == 1009


async def test_a_second_hello_is_already_authenticated_and_changes_nothing(
    postgres_server_url: str,
) -> None:
    async with running_server(postgres_server_url) as harness:
        await harness.add_players(["ann", "bob"])
        ws = await open_raw(harness)
        welcome = await say_hello(ws, harness.tokens["ann"])
        hello = cm.Hello(protocol=PROTOCOL_VERSION, token=harness.tokens["bob"], client="hostile")
        await ws.send(MSGPACK.encode(hello))
        error = await next_error(ws)
        assert (error.code, error.fatal) == (ErrorCode.ALREADY_AUTHENTICATED, False)
        session = harness.server.gateway.sessions[welcome.session_id]
        assert session.player == "ann"
        assert "bob" not in harness.server.gateway.by_player


async def test_errors_of_any_kind_past_max_errors_close_the_connection(postgres_server_url: str) -> None:
    """Requests that are readable but wrong (a table that does not exist) are not refused
    frames; ``max_errors`` of them still close the connection."""
    async with running_server(postgres_server_url, limits=Limits(max_errors=5)) as harness:
        ws = await open_raw(harness)
        await say_hello(ws)
        for number in range(5):
            await ws.send(MSGPACK.encode(cm.TableJoin(table_id=999, request_id=f"j{number}")))
        received, code = await until_closed(ws)
        errors = [(m.code, m.request_id) for m in received if isinstance(m, sm.Error)]
        assert errors == [(ErrorCode.NOT_FOUND, f"j{n}") for n in range(5)]
        assert goodbye(received) is GoodbyeReason.TOO_MANY_ERRORS and code == 1008


# -- rate limits ----------------------------------------------------------------------------------


async def test_a_flood_of_frames_is_rate_limited_then_closed(postgres_server_url: str) -> None:
    """At speed 1 a connection has a burst of 40 frames and 20 a second: 80 pings at once get
    about 40 pongs, then ``rate_limited`` (request_id null) until the tenth closes it."""
    async with running_server(postgres_server_url, speed=1.0) as harness:
        ws = await open_raw(harness)
        await say_hello(ws)
        for nonce in range(80):  # at once: the refill over these few milliseconds is nothing
            await ws.send(MSGPACK.encode(cm.Ping(nonce=nonce)))
        received, code = await until_closed(ws)
        limited = [m for m in received if isinstance(m, sm.Error)]
        pongs = [m for m in received if isinstance(m, sm.Pong)]
        assert len(limited) == 10 and {(e.code, e.request_id) for e in limited} == {
            (ErrorCode.RATE_LIMITED, None)
        }
        assert 30 <= len(pongs) <= 42, len(pongs)  # the burst, less hello, plus the refill
        assert goodbye(received) is GoodbyeReason.TOO_MANY_ERRORS and code == 1008


# -- what a player may not do ---------------------------------------------------------------------


async def test_a_player_cannot_call_operator_commands(postgres_server_url: str) -> None:
    async with running_server(postgres_server_url) as harness:
        await harness.add_players(["ann"])
        tournament_id = await harness.create(tournament_toml("optest", players=4), starts_in=3600)
        player = await open_raw(harness)
        await say_hello(player, harness.tokens["ann"])
        observer = await open_raw(harness, json=True)
        await observer.send(JSON.encode(cm.Hello(protocol=PROTOCOL_VERSION, token=None, client="rail")))
        await next_message(observer, sm.Welcome)
        requests: list[op.OperatorRequest] = [
            op.OpTournamentList(request_id="o1"),
            op.OpTournamentStart(request_id="o2", tournament_id=tournament_id),
            op.OpTournamentPause(request_id="o3", tournament_id=tournament_id),
            op.OpTournamentCancel(request_id="o4", tournament_id=tournament_id),
            op.OpPlayerRegister(request_id="o5", tournament_id=tournament_id, player="ann"),
            op.OpSubscribe(request_id="o6", tournament_id=None),
        ]
        for ws, codec in ((player, MSGPACK), (observer, JSON)):
            for request in requests:
                await ws.send(codec.encode(request))
                error = await next_error(ws)
                assert (error.code, error.request_id, error.fatal) == (
                    ErrorCode.FORBIDDEN,
                    request.request_id,
                    False,
                )
        director = harness.server.coordinators[tournament_id].director
        assert director.status.value == "registering"
        assert await harness.store.ledger.balance(player_account("ann")) == 100_000


async def test_register_twice_replays_or_is_already_registered_and_charges_once(
    postgres_server_url: str,
) -> None:
    async with running_server(postgres_server_url) as harness:
        await harness.add_players(["ann"])
        tournament_id = await harness.create(tournament_toml("regtwice", players=4), starts_in=3600)
        ws = await open_raw(harness)
        await say_hello(ws, harness.tokens["ann"])
        register = cm.Register(tournament_id=tournament_id, request_id="r1")
        await ws.send(MSGPACK.encode(register))
        first = await next_message(ws, sm.Ack)
        await ws.send(MSGPACK.encode(register))  # a replay: the first answer again
        again = await next_message(ws, sm.Ack)
        assert isinstance(first, sm.Ack) and isinstance(again, sm.Ack) and again.request_id == "r1"
        await ws.send(MSGPACK.encode(cm.Register(tournament_id=tournament_id, request_id="r2")))
        error = await next_error(ws)
        assert (error.code, error.request_id) == (ErrorCode.ALREADY_REGISTERED, "r2")
        assert await harness.store.ledger.balance(player_account("ann")) == 100_000 - 1100


class Reader:
    """Everything one connection receives, read in the background."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.received: list[sm.ServerMessage] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            while True:
                self.received.append(await self.connection.recv())

    async def first(self, match: Callable[[sm.ServerMessage], bool], what: str) -> sm.ServerMessage:
        await wait_until(lambda: any(match(m) for m in self.received), 30, what)
        return next(m for m in self.received if match(m))

    def errors(self, request_id: str) -> list[ErrorCode]:
        return [m.code for m in self.received if isinstance(m, sm.Error) and m.request_id == request_id]

    def acked(self, request_id: str) -> int:
        return sum(1 for m in self.received if isinstance(m, sm.Ack) and m.request_id == request_id)


Event = TypeVar("Event")


def table_events(reader: Reader, kind: type[Event]) -> list[Event]:
    return [m.event for m in reader.received if isinstance(m, sm.TableEvent) and isinstance(m.event, kind)]


async def test_a_player_cannot_act_for_another_seat_see_its_cards_replay_or_act_on_an_ended_hand(
    postgres_server_url: str,
) -> None:
    """Heads-up: the seat not to act is refused ``not_your_turn``; a player with no seat there
    ``not_seated``; an ``act`` naming a seat is not a message (``invalid_field``); the mover's
    replayed ``action_id`` is acked and not applied again; an act on the hand just ended is
    ``stale_hand``. Nobody but the seat itself sees its hole cards."""
    async with running_server(postgres_server_url, speed=4.0, hand_gap=4.0) as harness:
        await harness.add_players(["ann", "bob", "cat"])
        tournament_id = await harness.create(tournament_toml("headsup", players=2), starts_in=8)
        readers = {}
        for name in ("ann", "bob", "cat"):
            connection = harness.connection(name)
            await connection.connect()
            readers[name] = Reader(connection)
        for name in ("ann", "bob"):
            await readers[name].connection.send(
                cm.Register(tournament_id=tournament_id, request_id=f"r-{name}")
            )
        seats: dict[str, sm.Seated] = {}
        for name in ("ann", "bob"):
            seated = await readers[name].first(lambda m: isinstance(m, sm.Seated), f"{name} seated")
            assert isinstance(seated, sm.Seated)
            seats[name] = seated
        table_id = seats["ann"].table_id
        turn_message = await readers["ann"].first(
            lambda m: isinstance(m, sm.TableEvent) and isinstance(m.event, te.Turn), "the first turn"
        )
        assert isinstance(turn_message, sm.TableEvent) and isinstance(turn_message.event, te.Turn)
        hand_number = next(e.hand_number for e in table_events(readers["ann"], te.HandStarted))
        mover = next(name for name in ("ann", "bob") if seats[name].seat == turn_message.event.seat)
        other = "bob" if mover == "ann" else "ann"

        def act(action_id: str, action: ActionKind, hand: int = hand_number) -> cm.Act:
            return cm.Act(table_id=table_id, hand_number=hand, action_id=action_id, action=action)

        await readers[other].connection.send(act("o1", ActionKind.CHECK_OR_CALL))
        await readers["cat"].connection.send(act("c1", ActionKind.FOLD))
        await readers["cat"].connection.send(cm.TableJoin(table_id=table_id, request_id="watch"))
        await wait_until(lambda: bool(readers[other].errors("o1")), 20, "o1 refused")
        await wait_until(lambda: bool(readers["cat"].errors("c1")), 20, "c1 refused")
        assert readers[other].errors("o1") == [ErrorCode.NOT_YOUR_TURN]
        assert readers["cat"].errors("c1") == [ErrorCode.NOT_SEATED]
        # naming a seat is not part of an act: refused before it reaches the table
        forged = {**msgspec.to_builtins(act("o2", ActionKind.FOLD)), "seat": seats[mover].seat}
        assert forged["type"] == "act"
        socket_of_other = readers[other].connection._ws
        assert socket_of_other is not None
        await socket_of_other.send(msgspec.msgpack.encode(forged))
        await wait_until(lambda: bool(readers[other].errors("o2")), 20, "o2 refused")
        assert readers[other].errors("o2") == [ErrorCode.INVALID_FIELD]

        # the mover calls, then sends the same action id again: acked, applied once
        await readers[mover].connection.send(act("m1", ActionKind.CHECK_OR_CALL))
        await wait_until(lambda: readers[mover].acked("m1") == 1, 20, "m1 acked")
        await readers[mover].connection.send(act("m1", ActionKind.CHECK_OR_CALL))
        await wait_until(lambda: readers[mover].acked("m1") == 2, 20, "the replay acked")
        assert not readers[mover].errors("m1")
        # the other raises, the mover folds: the hand is over, and acting on it is stale
        other_turn = await readers[other].first(
            lambda m: (
                isinstance(m, sm.TableEvent)
                and isinstance(m.event, te.Turn)
                and m.event.seat == seats[other].seat
                and m.event.legal is not None
            ),
            "the other's turn",
        )
        assert isinstance(other_turn, sm.TableEvent) and isinstance(other_turn.event, te.Turn)
        # counted on the other's connection once it has read its turn, which the table sent after
        # the mover's action (the mover's ack says nothing of what the other has read yet)
        taken = [e for e in table_events(readers[other], te.ActionTaken) if e.seat == seats[mover].seat]
        assert len(taken) == 1, taken
        legal = other_turn.event.legal
        assert legal is not None and legal.min_raise_to is not None
        raise_to = cm.Act(
            table_id=table_id,
            hand_number=hand_number,
            action_id="o3",
            action=ActionKind.RAISE,
            amount=legal.min_raise_to,
        )
        await readers[other].connection.send(raise_to)
        await wait_until(lambda: readers[other].acked("o3") == 1, 20, "o3 acked")
        await readers[mover].connection.send(act("m2", ActionKind.FOLD))
        await wait_until(lambda: readers[mover].acked("m2") == 1, 20, "m2 acked")
        await wait_until(lambda: bool(table_events(readers[mover], te.HandEnded)), 20, "the hand's end")
        await readers[mover].connection.send(act("m2", ActionKind.FOLD))  # replayed after the end
        await readers[other].connection.send(act("o4", ActionKind.CHECK_OR_CALL))
        await wait_until(lambda: bool(readers[mover].errors("m2")), 20, "the late m2 refused")
        await wait_until(lambda: bool(readers[other].errors("o4")), 20, "o4 refused")
        assert readers[mover].errors("m2") == [ErrorCode.STALE_HAND]
        assert readers[other].errors("o4") == [ErrorCode.STALE_HAND]
        await readers["cat"].first(lambda m: isinstance(m, sm.TableSnapshot), "cat's snapshot")

        # who saw which hole cards: each seat its own, the rail none
        for name, reader in readers.items():
            own = seats[name].seat if name in seats else None
            dealt = table_events(reader, te.HoleCards)
            snapshot_cards = [
                (seat.seat, seat.cards)
                for m in reader.received
                if isinstance(m, sm.TableSnapshot)
                for seat in m.seats
                if seat.cards is not None
            ]
            assert all(seat == own for seat, _ in snapshot_cards), (name, snapshot_cards)
            assert all((e.cards is not None) == (e.seat == own) for e in dealt), (name, dealt)
            if own is not None:
                assert any(e.seat == own and e.cards for e in dealt), name
            else:
                assert snapshot_cards == [] and all(e.cards is None for e in dealt)
        for reader in readers.values():
            await reader.connection.close()
            reader.task.cancel()


# -- clients that cost memory ---------------------------------------------------------------------


class Unread:
    """A WebSocket client over a plain socket that logs in and then never reads: its receive
    buffer is small, so the server's writes back up as they would to a stalled phone."""

    def __init__(self, sock: socket.socket, protocol: ClientProtocol) -> None:
        self.sock = sock
        self.protocol = protocol

    @classmethod
    async def open(cls, url: str, hello: cm.Hello | None) -> Unread:
        loop = asyncio.get_running_loop()
        uri = parse_uri(url)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await loop.sock_connect(sock, (uri.host, uri.port))
        protocol = ClientProtocol(uri, subprotocols=[Subprotocol(MSGPACK_SUBPROTOCOL)])
        protocol.send_request(protocol.connect())
        unread = cls(sock, protocol)
        await unread.flush()
        while protocol.handshake_exc is None and not protocol.events_received():
            data = await asyncio.wait_for(loop.sock_recv(sock, 4096), 10)
            assert data, "the server closed during the upgrade"
            protocol.receive_data(data)
        assert protocol.handshake_exc is None, protocol.handshake_exc
        if hello is not None:
            await unread.send(MSGPACK.encode(hello))
        return unread

    async def send(self, frame: bytes) -> None:
        self.protocol.send_binary(frame)
        await self.flush()

    async def flush(self) -> None:
        for data in self.protocol.data_to_send():
            if data:
                await asyncio.get_running_loop().sock_sendall(self.sock, data)

    def close(self) -> None:
        self.sock.close()


def rss_kib() -> int:
    with open(f"/proc/{os.getpid()}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


async def test_a_client_that_never_reads_costs_a_bounded_queue_and_is_dropped(
    postgres_server_url: str,
) -> None:
    """It asks for more than it reads (lobby after lobby); its send queue never holds more than
    ``max_queued_frames`` (and a goodbye), and once the TCP window stays shut for
    ``send_timeout`` the connection is dropped and forgotten."""
    limits = Limits(max_queued_frames=64, send_timeout=1.0, rate_per_second=1_000_000)
    async with running_server(postgres_server_url, limits=limits) as harness:
        for number in range(8):  # a lobby frame of a few KiB
            await harness.create(tournament_toml(f"lobby{number}", players=100), starts_in=3600)
        gateway = harness.server.gateway
        client = await Unread.open(harness.url, cm.Hello(protocol=PROTOCOL_VERSION, client="never-reads"))
        await wait_until(lambda: len(gateway.sessions) == 1, 20, "the session")
        session = next(iter(gateway.sessions.values()))
        longest = 0
        sent = 0
        for _ in range(4000):
            try:
                await client.send(MSGPACK.encode(cm.LobbySubscribe()))
            except OSError:
                break
            sent += 1
            longest = max(longest, len(session.queue))
            await asyncio.sleep(0)
            if session.id not in gateway.sessions:
                break
        await wait_until(lambda: session.id not in gateway.sessions, 60, "the session dropped")
        client.close()
        assert longest <= limits.max_queued_frames + 1, longest
        assert harness.server.metrics.slow_closes >= 1
        assert sent > limits.max_queued_frames  # it did ask for more than the queue holds


def calling_station(legal: te.LegalView, rng: object) -> tuple[ActionKind, int | None]:
    """Checks and calls: a heads-up match that lasts while a test watches it."""
    return ActionKind.CHECK_OR_CALL, None


async def test_a_client_that_does_not_read_a_table_is_resynced_then_closed(postgres_server_url: str) -> None:
    """Table frames a client leaves unread are dropped and replaced by a fresh snapshot (a
    resync), at most ``max_resyncs`` times; then it is closed ``too_slow``. Its queue never holds
    more than ``max_queued_frames`` (and a goodbye); the players at the table play on."""
    limits = Limits(max_queued_frames=16, rate_per_second=1_000_000)
    async with running_server(postgres_server_url, limits=limits) as harness:
        await harness.add_players(["ann", "bob"])
        tournament_id = await harness.create(tournament_toml("slowrail", players=2), starts_in=20)
        bots = [Player(harness.connection(name), tournament_id, calling_station) for name in ("ann", "bob")]
        runs = [asyncio.create_task(bot.run(until=120)) for bot in bots]
        await wait_until(lambda: bool(bots[0].hands), 30, "a hand under way")
        table_id = next(iter(bots[0].hands))
        gateway = harness.server.gateway
        metrics = harness.server.metrics
        client = await Unread.open(harness.url, cm.Hello(protocol=PROTOCOL_VERSION, client="slow-rail"))
        await wait_until(lambda: len(gateway.sessions) == 3, 20, "the rail's session")
        session = next(s for s in gateway.sessions.values() if s.player is None)
        longest = 0
        for _ in range(5000):  # every join is a snapshot of the table
            if session.id not in gateway.sessions or session.closing:
                break
            with contextlib.suppress(OSError):
                await client.send(MSGPACK.encode(cm.TableJoin(table_id=table_id)))
            longest = max(longest, len(session.queue))
            await asyncio.sleep(0)
        await wait_until(lambda: session.id not in gateway.sessions, 60, "the rail closed")
        client.close()
        assert metrics.resyncs == limits.max_resyncs and metrics.send_queue_drops > 0
        assert metrics.slow_closes == 1
        assert longest <= limits.max_queued_frames + 1, longest
        hands = sum(bot.acted for bot in bots)
        await wait_until(lambda: sum(bot.acted for bot in bots) > hands, 30, "the table plays on")
        for run in runs:
            run.cancel()


async def test_idle_and_half_open_connections_are_timed_out_at_bounded_cost(
    postgres_server_url: str,
) -> None:
    """1,000 TCP connections that never finish the upgrade, 1,000 WebSockets that never say
    hello and 20 logged-in clients that stop answering pings: each kind is closed by its timeout
    (open, hello, heartbeat) and the server holds nothing of them after; RSS per connection is
    printed (and held under a generous bound)."""
    # the timeouts leave time to open them all on a loaded machine
    limits = Limits(open_timeout=30.0, hello_timeout=30.0, max_opening=5_000)
    async with running_server(postgres_server_url, heartbeat_seconds=2, limits=limits) as harness:
        server = harness.server.gateway.server
        assert server is not None
        gateway = harness.server.gateway
        before = rss_kib()
        loop = asyncio.get_running_loop()

        async def tcp() -> socket.socket:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            await loop.sock_connect(sock, (harness.server.host, harness.server.port))
            return sock

        raw: list[socket.socket] = []
        silent: list[ClientConnection] = []
        for _ in range(10):  # in batches: a listen backlog is not infinite
            raw += await asyncio.gather(*(tcp() for _ in range(100)))
            silent += await asyncio.gather(*(open_raw(harness) for _ in range(100)))
        stalled = [
            await Unread.open(harness.url, cm.Hello(protocol=PROTOCOL_VERSION, client="stalled"))
            for _ in range(20)
        ]
        # the last raw ones may still wait in the listen backlog for the server to accept them
        await wait_until(lambda: len(server.handler_tasks) >= 2000, 15, "the connections accepted")
        held = len(server.handler_tasks)
        peak = rss_kib()
        per_connection = (peak - before) * 1024 / 2020
        print(f"{held} connections held; process RSS (server and clients) {before} KiB -> {peak} KiB")
        print(f"{per_connection:.0f} bytes a connection, both ends")
        assert per_connection < 200 * 1024
        # the stalled ones miss their pongs first, then the rest reach their timeouts
        await wait_until(lambda: not server.handler_tasks and not gateway.sessions, 90, "all timed out")
        codes = [await until_closed(ws) for ws in silent]
        # hello_timeout, or on a loaded machine a pong of theirs late: the heartbeat's 1011
        endings = Counter((goodbye(received), code) for received, code in codes)
        assert set(endings) <= {(GoodbyeReason.HELLO_TIMEOUT, 1008), (None, 1011)}, endings
        assert endings[(GoodbyeReason.HELLO_TIMEOUT, 1008)] > 0, endings
        for sock in raw:  # closed by the server: end of stream (or a reset)
            with contextlib.suppress(ConnectionResetError):
                assert await asyncio.wait_for(loop.sock_recv(sock, 100), 10) == b""
            sock.close()
        for client in stalled:
            client.close()


async def test_past_max_connections_an_upgrade_gets_503_and_extra_tcp_is_dropped(
    postgres_server_url: str,
) -> None:
    limits = Limits(max_connections=5, max_opening=3, open_timeout=30.0)
    async with running_server(postgres_server_url, limits=limits) as harness:
        sessions = [await open_raw(harness) for _ in range(5)]
        for ws in sessions:
            await say_hello(ws)
        with pytest.raises(InvalidStatus) as refused:
            await open_raw(harness)
        assert refused.value.response.status_code == 503
        # TCP connections that never upgrade: 3 are held, the ones past them dropped at once
        loop = asyncio.get_running_loop()
        held: list[socket.socket] = []
        for _ in range(6):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            await loop.sock_connect(sock, (harness.server.host, harness.server.port))
            held.append(sock)
        # the server has dropped the ones past the limit (so their end of stream is there to read
        # within the second each is given below, however loaded the machine)
        await wait_until(lambda: harness.server.metrics.connections_refused == 1 + 3, 20, "3 dropped")
        dropped = 0
        for sock in held:
            try:
                data = await asyncio.wait_for(loop.sock_recv(sock, 100), 1.0)
            except TimeoutError:
                continue
            except ConnectionResetError:
                data = b""
            dropped += data == b""
        assert dropped == 3, dropped
        assert harness.server.metrics.connections_refused == 1 + 3
        for sock in held:
            sock.close()
        # the sessions still work
        await sessions[0].send(MSGPACK.encode(cm.Ping(nonce=5)))
        assert isinstance(await next_message(sessions[0], sm.Pong), sm.Pong)


# -- the settings ---------------------------------------------------------------------------------


def test_feltd_serve_flags_set_the_client_limits_and_refuse_nonsense() -> None:
    from server.cli.main import build_parser
    from server.cli.serve import limits

    flags = "--max-connections 50 --max-opening 7 --hello-timeout 3 --open-timeout 4 --rate 5"
    flags += " --max-refused 3 --max-errors 9 --error-window 30 --send-queue 64 --send-timeout 2"
    args = build_parser().parse_args(["serve", *flags.split()])
    assert limits(args) == Limits(
        max_connections=50,
        max_opening=7,
        hello_timeout=3.0,
        open_timeout=4.0,
        rate_per_second=5.0,
        max_refused=3,
        max_errors=9,
        error_window=30.0,
        max_queued_frames=64,
        send_timeout=2.0,
    )
    assert build_parser().parse_args(["serve"]).heartbeat == 20
    assert limits(build_parser().parse_args(["serve"])) == Limits()  # the documented defaults
    for wrong, text in (
        (["--hello-timeout", "0"], "hello_timeout must be > 0"),
        (["--rate", "-1"], "rate_per_second must be > 0"),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "server.cli.main", "serve", *wrong],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode != 0 and text in result.stderr, (wrong, result.stderr)
    result = subprocess.run(
        [sys.executable, "-m", "server.cli.main", "serve", "--max-connections", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "--max-connections" in result.stderr, result.stderr
    with pytest.raises(ValueError, match="max_errors"):
        Limits(max_errors=0).check()
