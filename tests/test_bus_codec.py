"""``server.bus_codec`` (issue 15): every message the server's parts put on the bus comes back from
bytes equal and of the same types, engine values from a real hand included."""

from __future__ import annotations

import contextlib
import dataclasses
import random
from functools import partial
from typing import Any

import msgspec
import pytest
from protocol_examples import doc_frames

from engine.betting import AnteKind, HandSetup
from engine.events import HandEvent, HandStarted
from engine.hand import Hand
from engine.random_play import play_random_hand
from engine.table import FirstButton, Table, TableSettings
from engine.tournament.config import Level
from engine.tournament.director import DealHand, HoldReason
from protocol.client_messages import ClientMessage
from protocol.codec import JSON
from protocol.errors import ProtocolError
from protocol.kinds import SeatChange
from protocol.server_messages import LobbyUpdate, ServerMessage, TableEvent
from protocol.table_events import TableEventBody
from server import bus_codec, messages
from server.coordinator import Stop
from server.views import HandViews, Views


def _hand(seed: int) -> tuple[Table, Hand, list[HandEvent]]:
    rng = random.Random(seed)
    table = Table(TableSettings(size=6, first_button=FirstButton.SEAT_ONE), 3)
    for seat in (1, 2, 4, 6):
        table.seat_player(seat, f"p{seat}", rng.randint(100, 3_000), absent=seat == 6)
    table.penalize(4, 1)
    table.set_first_button(2)
    setup = table.start_hand(f"h{seed}", 10, 20, 5, AnteKind.EACH)
    hand = Hand(setup, rng=random.Random(seed + 1))
    play_random_hand(hand, rng)
    events, _ = hand.events_since(0)
    return table, hand, list(events)


def _wire_messages() -> tuple[list[ClientMessage], list[ServerMessage]]:
    clients: list[ClientMessage] = []
    servers: list[ServerMessage] = []
    for frame in doc_frames():
        try:
            clients.append(JSON.decode_client(frame))
        except ProtocolError:
            with contextlib.suppress(ProtocolError):
                servers.append(JSON.decode_server(frame))
    return clients, servers


def _table_event(seq: int, body: TableEventBody) -> ServerMessage:
    return TableEvent(table_id=3, seq=seq, event=body)


def _messages() -> list[object]:
    table, hand, events = _hand(7)
    setup: HandSetup = hand.setup
    snapshot = table.snapshot()
    clients, servers = _wire_messages()
    caller = messages.Caller("s1", "p1")
    feed = HandViews(hand_number=3)
    frames: list[object] = []
    for seq, event in enumerate(events, 1):
        views = feed.views(event)
        if views is not None:
            wrapped: Views[ServerMessage] = views.map(partial(_table_event, seq))
            frames.append(messages.TableFrames(3, seq, wrapped))
    lobby = [message for message in servers if isinstance(message, LobbyUpdate)]
    return [
        *(messages.Request(caller, message, 12.5) for message in clients),
        *(messages.ToSession(message) for message in servers),
        *(messages.ToPlayer(message) for message in servers),
        *lobby,
        *frames,
        messages.Resync(3, tuple(servers[:5])),
        messages.HandDone(
            table_id=3,
            hand_number=9,
            finishing_stacks=tuple(sorted(hand.stacks.items())),
            banks_spent=(("p1", 1),),
            setup=setup,
            events=tuple(events),
            level=2,
            started_at=1.5,
            ended_at=2.25,
            epoch=(3 << 32) + 1,
        ),
        messages.Deal(DealHand(3, 9, setup, 2, False, 30, ((1, 2), (2, 0))), snapshot),
        messages.TableUpdate(
            snapshot,
            ((1, SeatChange.JOINED),),
            HoldReason.BREAK,
            9.5,
            2,
            False,
            Level(10, 20, 15, ante=5, ante_kind=AnteKind.EACH),
            ((1, 2),),
        ),
        messages.TableUpdate(snapshot),
        messages.OpenTable(3, "t1", (7 << 32) + 2, 1_700_000_000_000, 30.0, 1.5),
        messages.OpenTable(3, "t1", 1, 0, 30.0),
        messages.ToTable(3, 1, messages.TableUpdate(snapshot, closed=True)),
        messages.ToTable(3, 1, messages.Deal(DealHand(3, 9, setup, 2, False, 30, ((1, 2),)), snapshot)),
        messages.ToTable(3, 1, messages.Request(caller, clients[0], 1.0)),
        messages.DropTables("t1", 5),
        messages.Follow(caller, 4, 2, request_id="r1"),
        messages.Follow(messages.Caller("s2", None, "op"), None, None, operator=True),
        messages.PlayerHello(caller),
        messages.HelloAnswered("t1"),
        messages.Resumed("t1"),
        messages.LobbyAsk(),
        messages.PlayerAway("p1", True),
        Stop(),
    ]


def _same(left: Any, right: Any) -> bool:
    """Equal, and of the same types at every depth (``1 == 1.0`` and ``(1,) != [1]`` matter)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, Views):
        return (
            _same(left.public, right.public)
            and left.owner_seat == right.owner_seat
            and _same(left.owner, right.owner)
            and _same(left.operators, right.operators)
            and (left.owner is left.public) == (right.owner is right.public)
            and (left.operators is left.public) == (right.operators is right.public)
            and (left.operators is left.owner) == (right.operators is right.owner)
        )
    if dataclasses.is_dataclass(left):
        return all(
            _same(getattr(left, field.name), getattr(right, field.name)) for field in dataclasses.fields(left)
        )
    if isinstance(left, tuple | list):
        return len(left) == len(right) and all(map(_same, left, right))
    if isinstance(left, frozenset | set):
        return bool(left == right)
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_same(left[key], right[key]) for key in left)
    return bool(left == right)


def test_every_message_round_trips() -> None:
    every = _messages()
    kinds = {type(message) for message in every}
    sent_on_the_bus = {
        messages.Request,
        messages.ToSession,
        messages.ToPlayer,
        messages.TableFrames,
        messages.Resync,
        messages.HandDone,
        messages.Deal,
        messages.TableUpdate,
        messages.Follow,
        messages.PlayerHello,
        messages.HelloAnswered,
        messages.Resumed,
        messages.LobbyAsk,
        messages.PlayerAway,
        messages.OpenTable,
        messages.ToTable,
        messages.DropTables,
        LobbyUpdate,
        Stop,
    }
    assert sent_on_the_bus <= kinds
    assert len([message for message in every if isinstance(message, messages.Request)]) > 20
    for message in every:
        decoded = bus_codec.decode(bus_codec.encode(message))
        assert _same(decoded, message), message  # Views has no ==: _same compares its copies


def test_engine_hands_round_trip() -> None:
    """Many random hands: every event type the engine makes, shown and mucked cards, side pots."""
    for seed in range(40):
        _, hand, events = _hand(seed)
        done = bus_codec.decode(bus_codec.encode(tuple(events)))
        assert _same(done, tuple(events))
        assert isinstance(done, tuple) and isinstance(done[0], HandStarted)
        assert _same(bus_codec.decode(bus_codec.encode(hand.setup)), hand.setup)


def test_views_keep_which_copies_are_the_same() -> None:
    b, c = "owner", "ops"
    for views in (
        Views("p"),
        Views("p", 2, b),
        Views("p", 2, b, c),
        Views("p", 2, b, b),
        Views("p", None, None, c),
    ):
        decoded = bus_codec.decode(bus_codec.encode(views))
        assert _same(decoded, views)
        assert isinstance(decoded, Views)
        assert decoded.shared == views.shared


@pytest.mark.parametrize(
    "data",
    [
        b"\x92\x02\xa9os:system",  # a class outside the project's packages
        bus_codec.encode(messages.Caller("s", None))[:-2],  # cut short
        b"\x92\x63\x01",  # an unknown kind
        # a foreign class reached through a name one of our modules imported
        msgspec.msgpack.encode([8, "server.app:logging.os.terminal_size", [0, 80, 24]]),
        msgspec.msgpack.encode([2, "server.gateway:HttpRequest", "/x", {}]),
        b"\x91" * 5000 + b"\x01",  # nested past any message: a RecursionError inside
    ],
)
def test_refuses_what_is_no_message(data: bytes) -> None:
    with pytest.raises(bus_codec.CodecError):
        bus_codec.decode(data)


@pytest.mark.parametrize("value", [object(), messages.Caller("s", str(2**70)), 2**70, -(2**64)])
def test_refuses_what_it_cannot_encode(value: object) -> None:
    if isinstance(value, messages.Caller):  # a str of a huge int is fine; the int itself is not
        assert bus_codec.decode(bus_codec.encode(value)) == value
        return
    with pytest.raises(bus_codec.CodecError):
        bus_codec.encode(value)
