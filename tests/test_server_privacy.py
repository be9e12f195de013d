"""Acceptance 4 of the game server (privacy): every frame sent to every connection of a
200-player bot tournament, captured at the client side and decoded, and checked for cards.

What runs: 200 players on real WebSocket connections (four on JSON, the rest on MessagePack) play
a 200-player, 23-table tournament on the real server and PostgreSQL, at 60 times real speed,
from registration to the last hand (about 150 to 200 hands: the bots go all in often; should a
run go longer, the clients stop after ``HANDS`` hands and the check covers those). So the run
has eliminations, table balancing and breaking, hand-for-hand play on the bubble, the final
table and the end. Around the players: rail connections following tables from the start (one on
JSON), one joining mid-run (snapshots in the middle of hands), one leaving a table and resuming it
from its last ``seq``; players following another table on the rail; players dropping their
connection and resuming; an operator following tables (operators see every hole card, by
design, but no card before it is dealt either). Everything is seeded (the deals, the bots'
play); the order in which frames interleave is the machine's. About 140,000 frames, 80 s on a
shared 2-core machine.

Every frame a connection receives is decoded without the schema (so a card in a field the
protocol does not have is seen too) and every string that is a card is checked against what
that connection may know at that moment of that table's stream:

- its own hole cards, from its own ``hole_cards``, and nobody else's (operators: every seat's);
- the board, from ``street`` events that come only after the previous street's betting (no
  ``action_taken`` of an earlier street follows them) and add exactly 3, 1, 1 cards;
- cards shown at a showdown (``cards_shown``: with the whole board out; ``hands_shown``: betting
  over), of seats that did not fold, after which nobody acts;
- the whole deck in ``deck_revealed``, the hand's last event but ``hand_ended``;
- in a snapshot: the recipient's own cards, the board for its street, and shown hands only when
  nobody is to act; ``legal`` (in ``turn`` and snapshots) only to the seat to act.

Then what each connection was shown is compared with the truth the server stored (each hand's
history): its own cards were its player's, the board was the board, shown cards were that seat's.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import msgspec
from server_harness import Harness, Player, lively, running_server, steady, tournament_toml, wait_until

from client.connection import Connection
from engine.history.phh import loads_phh
from engine.tournament.director import Status
from protocol import client_messages as cm
from protocol import operator_requests as op
from protocol import server_messages as sm
from protocol.codec import JSON_SUBPROTOCOL, MSGPACK_SUBPROTOCOL, JsonCodec, MsgpackCodec
from protocol.kinds import RegistrationStatus

PLAYERS = 200
HANDS = 250  # the clients stop at the end, or after this many hands
SPEED = 60.0
JSON_PLAYERS = (3, 57, 111, 170)
RAIL_PLAYERS = range(5, 200, 20)  # players who also follow another table on the rail
RECONNECTING = range(9, 200, 19)  # players who drop their connection once and resume

_CARD_STRING = re.compile(rb'"([2-9TJQKA][cdhs])"')
_FLOP_TURN_RIVER = {"flop": ("preflop", 3), "turn": ("flop", 1), "river": ("turn", 1)}
_BOARD_SIZE = {"preflop": 0, "flop": 3, "turn": 4, "river": 5}


def cards_in(message: Any) -> set[str]:
    """Every string in a decoded frame (keys too) that is a card: exactly the JSON strings of two
    characters that name one (the frame, whatever its subprotocol, written as JSON again)."""
    return {match.decode() for match in _CARD_STRING.findall(msgspec.json.encode(message))}


@dataclass
class HandSeen:
    """What one connection was shown of one hand: compared with the stored history afterwards."""

    own: list[str] | None = None
    board: list[str] = field(default_factory=list)
    shown: dict[int, list[str]] = field(default_factory=dict)  # seat -> cards
    dealt: dict[int, list[str]] = field(default_factory=dict)  # seat -> cards (operators)


@dataclass
class TableView:
    """One connection's view of one table's stream, as far as cards go."""

    seq: int = 0
    hand: int | None = None
    seat: int | None = None  # the connection's seat in the hand under way
    street: str | None = None
    folded: set[int] = field(default_factory=set)
    betting_over: bool = False
    revealed: bool = False
    allowed: set[str] = field(default_factory=set)  # cards this connection may see now
    seen: HandSeen | None = None
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=12))  # for the report


class Wiretap:
    """Checks every frame one connection receives (see the module docstring)."""

    def __init__(self, who: str, *, operator: bool = False) -> None:
        self.who = who
        self.operator = operator
        self.player: str | None = None
        self.tables: dict[int, TableView] = {}
        self.hands: dict[tuple[int, int], HandSeen] = {}
        self.violations: list[str] = []
        self.counts: Counter[str] = Counter()

    def frame(self, raw: bytes | str) -> None:
        message = msgspec.json.decode(raw) if isinstance(raw, str) else msgspec.msgpack.decode(raw)
        found = cards_in(message)
        kind = message["type"]
        self.counts["frames"] += 1
        if kind == "welcome":
            self.player = message["player"]
        if kind == "table_event":
            self._event(message["table_id"], message["seq"], message["event"], found)
        elif kind == "table_snapshot":
            self._snapshot(message, found)
        elif found:
            self._violation(f"{kind} carries cards {sorted(found)}")

    def _violation(self, text: str) -> None:
        self.violations.append(f"{self.who}: {text}")

    def _start(self, view: TableView, table_id: int, hand: int, seat: int | None) -> HandSeen:
        view.hand, view.seat, view.street = hand, seat, "preflop"
        view.folded, view.betting_over, view.revealed, view.allowed = set(), False, False, set()
        view.seen = self.hands.setdefault((table_id, hand), HandSeen())
        return view.seen

    def _event(self, table_id: int, seq: int, event: dict[str, Any], found: set[str]) -> None:
        view = self.tables.setdefault(table_id, TableView())
        kind = event["type"]
        where = f"table {table_id} seq {seq} {kind}"
        if seq <= view.seq:  # a duplicate: no new state, and nothing the view does not allow
            self.counts["duplicates"] += 1
            if found - view.allowed and not view.revealed:
                self._violation(f"{where} (again) carries {sorted(found - view.allowed)}")
            return
        if seq != view.seq + 1:  # events lost: the protocol sends a snapshot before any other
            self._violation(f"{where}: after seq {view.seq}, with no snapshot between")
        view.seq = seq
        self.counts[kind] += 1
        view.recent.append(f"{seq} {kind} {event.get('street', '')}")
        reported = len(self.violations)
        if kind == "hand_started":
            mine = [s["seat"] for s in event["seats"] if s["player"] == self.player and self.player]
            self._start(view, table_id, event["hand_number"], mine[0] if mine else None)
        new: set[str] = set()
        seen = view.seen
        in_hand = seen is not None and not view.revealed
        if kind == "hole_cards" and event["cards"] is not None:
            if not in_hand or seen is None:
                self._violation(f"{where}: hole cards outside a hand")
            elif self.operator:
                seen.dealt[event["seat"]] = event["cards"]
                new.update(event["cards"])
            elif event["seat"] != view.seat:
                self._violation(f"{where}: seat {event['seat']}'s cards to seat {view.seat}")
            else:
                seen.own = event["cards"]
                new.update(event["cards"])
                self.counts["own hole cards"] += 1
        elif kind == "hole_cards":
            self.counts["hidden hole cards"] += 1
        elif kind == "turn" and event["legal"] is not None and (self.operator or event["seat"] != view.seat):
            self._violation(f"{where}: seat {event['seat']}'s legal actions to seat {view.seat}")
        elif kind == "action_taken" and in_hand:
            if view.betting_over:
                self._violation(f"{where}: an action after the hands were shown")
            if event["street"] != view.street:
                self._violation(f"{where}: a {event['street']} action with the board at {view.street}")
            if event["action"] == "fold":
                view.folded.add(event["seat"])
        elif kind == "street":
            street, cards, board = event["street"], event["cards"], event["board"]
            before, count = _FLOP_TURN_RIVER[street]
            if not in_hand or seen is None:
                self._violation(f"{where}: a street outside a hand")
            else:
                if view.street != before:
                    self._violation(f"{where}: the {street} dealt with the board at {view.street}")
                if len(cards) != count or board != seen.board + cards:
                    self._violation(f"{where}: {cards} make {board} from {seen.board}")
                seen.board = list(board)
                view.street = street
                new.update(cards)
        elif kind in ("cards_shown", "hands_shown") and in_hand and seen is not None:
            shown = [event] if kind == "cards_shown" else event["hands"]
            if kind == "cards_shown" and len(seen.board) != 5:
                self._violation(f"{where}: a showdown with the board at {seen.board}")
            for hand in shown:
                if hand["seat"] in view.folded:
                    self._violation(f"{where}: seat {hand['seat']} folded and was shown")
                seen.shown[hand["seat"]] = hand["cards"]
                new.update(hand["cards"])
            view.betting_over = True
        elif kind == "deck_revealed":
            if not in_hand:
                self._violation(f"{where}: a deck revealed outside a hand")
            view.revealed = True
            new.update(event["deck"])
        leaked = found - view.allowed - new
        if leaked:
            self._violation(f"{where} carries {sorted(leaked)} (may see {sorted(view.allowed | new)})")
        view.allowed |= new
        if kind == "hand_ended":
            if not view.revealed:
                self._violation(f"{where}: the hand ended without its deck revealed")
            view.allowed = set()
        if len(self.violations) > reported:
            self.violations[-1] += f" (the stream before: {list(view.recent)})"

    def _snapshot(self, snapshot: dict[str, Any], found: set[str]) -> None:
        table_id, seq, hand = snapshot["table_id"], snapshot["seq"], snapshot["hand_number"]
        street, board = snapshot["street"], snapshot["board"]
        where = f"table {table_id} snapshot at seq {seq}"
        self.counts["snapshots"] += 1
        view = self.tables[table_id] = TableView(seq=seq)  # a snapshot replaces everything
        view.recent.append(
            f"{seq} snapshot hand {hand} {street} board {len(board)} to act {snapshot['to_act']}"
        )
        mine = [s["seat"] for s in snapshot["seats"] if self.player and s["player"] == self.player]
        seat = mine[0] if mine else None
        if snapshot["legal"] is not None and (self.operator or snapshot["to_act"] != seat):
            self._violation(f"{where}: seat {snapshot['to_act']}'s legal actions to seat {seat}")
        if hand is None:
            if found:
                self._violation(f"{where}: cards {sorted(found)} before any hand")
            return
        seen = self._start(view, table_id, hand, seat)
        if street is None:
            self.counts["snapshots between hands"] += 1
        elif street is not None:
            self.counts["snapshots in a hand"] += 1
            if len(board) != _BOARD_SIZE[street]:
                self._violation(f"{where}: the board {board} on the {street}")
        if len(board) > 5 or board[: len(seen.board)] != seen.board[: len(board)]:
            self._violation(f"{where}: the board {board} after {seen.board}")
        if len(board) > len(seen.board):
            seen.board = list(board)
        allowed = set(board)
        for entry in snapshot["seats"]:
            cards = entry["cards"]
            if cards is None:
                continue
            allowed.update(cards)
            if entry["seat"] == seat:
                seen.own = cards
            elif self.operator:
                seen.dealt[entry["seat"]] = cards
            else:
                if not entry["in_hand"] or snapshot["to_act"] is not None:
                    self._violation(f"{where}: seat {entry['seat']}'s cards {cards} before a showdown")
                seen.shown[entry["seat"]] = cards
                view.betting_over = True
        leaked = found - allowed
        if leaked:
            self._violation(f"{where} carries {sorted(leaked)} (may see {sorted(allowed)})")
        view.street = street
        view.allowed = allowed
        view.revealed = street is None  # the hand is over: nothing of it is secret any more


class TappedMsgpack(MsgpackCodec):
    def __init__(self, tap: Wiretap) -> None:
        super().__init__()
        self.tap = tap

    def decode_server(self, frame: bytes | str) -> sm.ServerMessage:
        self.tap.frame(frame)
        return super().decode_server(frame)


class TappedJson(JsonCodec):
    def __init__(self, tap: Wiretap) -> None:
        super().__init__()
        self.tap = tap

    def decode_server(self, frame: bytes | str) -> sm.ServerMessage:
        self.tap.frame(frame)
        return super().decode_server(frame)


def tapped(connection: Connection, tap: Wiretap, *, json: bool = False) -> Connection:
    """``connection``, with every frame it receives shown to ``tap`` before it is decoded."""
    connection._codec = TappedJson(tap) if json else TappedMsgpack(tap)
    return connection


@dataclass
class Truth:
    """One stored hand: each player's hole cards, each seat's player, the whole board."""

    hole: dict[str, list[str]]
    players: dict[int, str]
    board: list[str]


def _split(cards: str) -> list[str]:
    return [cards[i : i + 2] for i in range(0, len(cards), 2)]


def truth_of(phh: str) -> Truth:
    hand = loads_phh(phh)
    assert hand.players is not None and hand.seats is not None
    hole: dict[str, list[str]] = {}
    board: list[str] = []
    for action in hand.actions:
        words = action.split()
        if words[:2] == ["d", "dh"]:
            hole[hand.players[int(words[2][1:]) - 1]] = _split(words[3])
        elif words[:2] == ["d", "db"]:
            board += _split(words[2])
    return Truth(hole, dict(zip(hand.seats, hand.players, strict=True)), board)


def compare(tap: Wiretap, truth: dict[tuple[int, int], Truth]) -> int:
    """What ``tap`` was shown against the stored hands; the number of hands compared."""
    compared = 0
    for key, seen in tap.hands.items():
        real = truth.get(key)
        if real is None:
            continue  # under way when the clients stopped (its frames were checked all the same)
        compared += 1
        where = f"table {key[0]} hand {key[1]}"
        if seen.own is not None and (tap.player is None or real.hole.get(tap.player) != seen.own):
            tap.violations.append(f"{tap.who}: {where}: was dealt {seen.own}, not its own cards")
        if seen.board != real.board[: len(seen.board)]:
            tap.violations.append(f"{tap.who}: {where}: saw the board {seen.board}, not {real.board}")
        for seat, cards in (seen.shown | seen.dealt).items():
            if sorted(real.hole.get(real.players.get(seat, ""), [])) != sorted(cards):
                tap.violations.append(
                    f"{tap.who}: {where}: seat {seat} shown as {cards}; stored: {real.players}, {real.hole}"
                    f" (the stream: {list(tap.tables[key[0]].recent) if key[0] in tap.tables else None})"
                )
    return compared


class TappedPlayer(Player):
    """A bot player that also watches another table and may drop its connection once."""

    watch: int | None = None
    reconnect_after: int | None = None
    reconnected: bool = False

    async def react(self, message: sm.ServerMessage, rng: random.Random) -> None:
        if self.reconnect_after is not None and len(self.received) == self.reconnect_after:
            self.reconnect_after = None
            await self.connection.reconnect()
            self.reconnected = True
        if self.watch is not None and isinstance(message, sm.Seated):
            # another of the 23 tables (numbered from 1 within the tournament)
            offset, self.watch = self.watch, None
            watch = message.table_id + (offset if message.table_id % 1_000_000 + offset <= 23 else -offset)
            await self.connection.send(cm.TableJoin(table_id=watch, request_id=f"watch-{watch}"))
        await super().react(message, rng)


async def observe(
    connection: Connection, tables: list[int], stop: asyncio.Event, *, hop: bool = False
) -> None:
    """A rail connection following ``tables``; with ``hop``, it leaves its first table for a
    while and comes back from the last ``seq`` it had there."""
    await connection.connect()
    for table_id in tables:
        await connection.send(cm.TableJoin(table_id=table_id))
    hopped = 0
    while not stop.is_set():
        try:
            message = await connection.recv(0.5)
        except TimeoutError:
            continue
        hopped += 1
        if hop and hopped % 400 == 0:
            table_id = tables[0]
            if hopped % 800 == 0:
                last = connection.last_seq.get(table_id)  # None once the table has closed (broken)
                if last is not None:
                    await connection.send(cm.TableJoin(table_id=table_id, last_seq=last))
            else:
                await connection.send(cm.TableLeave(table_id=table_id))
        del message
    await connection.close()


async def _tournament(harness: Harness) -> tuple[list[Wiretap], int, Counter[str]]:
    names = [f"pv{number:03d}" for number in range(PLAYERS)]
    await harness.add_players(names)
    operator = await harness.store.players.add_operator("floor")
    toml = tournament_toml(
        "privacy", players=PLAYERS, level_minutes=6, extra="[clock]\nshot_clock_seconds = 120\n"
    )
    tournament_id = await harness.create(toml, starts_in=24 * 3600)  # started by the operator
    coordinator = harness.server.coordinators[tournament_id]
    director = coordinator.director
    taps: list[Wiretap] = []
    players: list[TappedPlayer] = []
    for index, name in enumerate(names):
        tap = Wiretap(name)
        taps.append(tap)
        json = index in JSON_PLAYERS
        player = TappedPlayer(
            tapped(harness.connection(name, json=json), tap, json=json),
            tournament_id,
            lively if index % 3 == 0 else steady,
            seed=index,
        )
        if index in RAIL_PLAYERS:
            player.watch = 1 + index % 7  # that many tables on from its own
        if index in RECONNECTING:
            player.reconnect_after = 60 + index * 3
        players.append(player)
    tasks = [asyncio.create_task(player.run(until=600)) for player in players]
    stop = asyncio.Event()
    finished = False
    watchers: list[asyncio.Task[None]] = []
    try:
        await wait_until(
            lambda: all(director.registration.is_registered(name) for name in names), 120, "registrations"
        )
        floor_tap = Wiretap("operator", operator=True)
        taps.append(floor_tap)
        floor = tapped(Connection(harness.url, token=operator.token, client_name="test-floor"), floor_tap)
        await floor.connect()
        await floor.send(op.OpTournamentStart(request_id="start", tournament_id=tournament_id))
        await wait_until(lambda: len(coordinator.actors) > 20, 60, "the tables")
        tables = sorted(coordinator.actors)
        for table_id in tables[::3]:
            await floor.send(cm.TableJoin(table_id=table_id))
        rails = [(tables[0:8], False, False), (tables[8:16], True, False), (tables[16:], False, True)]
        for number, (followed, json, hop) in enumerate(rails):
            tap = Wiretap(f"rail-{number}")
            taps.append(tap)
            connection = tapped(Connection(harness.url, subprotocol=_sub(json)), tap, json=json)
            watchers.append(asyncio.create_task(observe(connection, followed, stop, hop=hop)))
        watchers.append(asyncio.create_task(_drain(floor, stop)))
        await wait_until(lambda: director.hands_dealt >= 40, 300, "40 hands")
        late_tap = Wiretap("rail-late")
        taps.append(late_tap)
        late = tapped(Connection(harness.url), late_tap)  # joins hands in the middle: snapshots
        watchers.append(asyncio.create_task(observe(late, sorted(coordinator.actors)[:8], stop)))
        await wait_until(
            lambda: director.status is Status.FINISHED or director.hands_dealt >= HANDS, 600, "the end"
        )
        finished = director.status is Status.FINISHED
        if finished:  # every player is told the end, then stops
            await asyncio.wait(tasks, timeout=60)
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        outcomes = await asyncio.gather(*tasks, *watchers, return_exceptions=True)
        await asyncio.gather(*(player.connection.close() for player in players), return_exceptions=True)
    failures = [
        o for o in outcomes if isinstance(o, BaseException) and not isinstance(o, asyncio.CancelledError)
    ]
    assert not failures, failures[:3]
    truth = {
        (record.table_id, record.hand_number): truth_of(record.phh)
        for record in await harness.store.histories.by_tournament(tournament_id)
    }
    compared = sum(compare(tap, truth) for tap in taps)
    events: Counter[str] = Counter()
    for player in players:
        for message in player.received:
            if isinstance(message, sm.TableEvent) and type(message.event).__name__ == "SeatChanged":
                events[f"seat {message.event.change.value}"] += 1  # type: ignore[union-attr]
            if isinstance(message, sm.Registration) and message.status is RegistrationStatus.ELIMINATED:
                events["eliminated"] += 1
        events["reconnected"] += player.reconnected
    events["hands stored"] = len(truth)
    events["resyncs of slow clients"] = harness.server.metrics.resyncs
    events["finished"] = finished
    events["saw the end"] = sum(player.ended is not None for player in players)
    return taps, compared, events


def _sub(json: bool) -> str:
    return JSON_SUBPROTOCOL if json else MSGPACK_SUBPROTOCOL


async def _drain(connection: Connection, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            await connection.recv(0.5)
        except TimeoutError:
            continue
    await connection.close()


async def test_no_card_reaches_anyone_before_it_is_theirs_or_public_in_a_200_player_tournament(
    postgres_server_url: str,
) -> None:
    """Acceptance 4 (see the module docstring for what runs and what is checked)."""
    async with running_server(postgres_server_url, speed=SPEED, seed=23) as harness:
        taps, compared, events = await _tournament(harness)
    counts: Counter[str] = Counter()
    for tap in taps:
        counts.update(tap.counts)
    violations = [v for tap in taps for v in tap.violations]
    print(
        f"\n{counts['frames']} frames to {len(taps)} connections checked; {compared} (connection, hand)"
        f" pairs compared with the {events['hands stored']} stored hands; {dict(events)}; {dict(counts)}"
    )
    assert not violations, f"{len(violations)} violations, the first: " + "\n".join(violations[:20])
    # the run covered what the check is about (the figures vary with the interleaving)
    assert compared > 800, compared
    assert counts["hidden hole cards"] > 5000 and counts["own hole cards"] > 500, counts
    assert counts["cards_shown"] > 0 and counts["hands_shown"] > 50, counts
    assert counts["deck_revealed"] > 800 and counts["snapshots in a hand"] > 5, counts
    assert events["seat moved_in"] > 10 and events["eliminated"] > 20 and events["reconnected"] > 3, events
    assert not events["finished"] or events["saw the end"] > 150, events
