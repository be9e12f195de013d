"""A feltd player client written from docs/protocol.md alone (acceptance 5 of the game server).

It imports nothing of feltd: only the standard library, `websockets` and `msgpack`, as a client
written by someone who has the document and nothing else would. The section numbers in the
comments are those of docs/protocol.md. It records what it saw, and what it found wrong, so
that a test can assert on it; it never trusts the server to be right.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

import msgpack
import websockets
from websockets.asyncio.client import ClientConnection
from websockets.typing import Subprotocol

MSGPACK = "feltd.msgpack.v1"
JSON = "feltd.json.v1"

Message = dict[str, Any]


class ProtocolBroken(AssertionError):
    """The server did something docs/protocol.md says it does not."""


@dataclass
class TableStream:
    """What this client knows of one table it follows (section 8)."""

    table_id: int
    seq: int
    hand_number: int | None = None
    hand_over: bool = True


@dataclass
class Sent:
    """An `act` this client sent and what came of it (section 10)."""

    table_id: int
    hand_number: int
    action: str
    amount: int | None
    legal: Message
    answers: list[str] = field(default_factory=list)  # "ack" or an error code, in order
    hand_over_before_answer: bool = False  # the hand had ended when the last answer came


class Wire:
    """One WebSocket speaking one of the two subprotocols (section 2)."""

    def __init__(self, url: str, subprotocol: str) -> None:
        self.url = url
        self.subprotocol = subprotocol
        self.ws: ClientConnection | None = None

    async def open(self) -> None:
        self.ws = await websockets.connect(
            self.url, subprotocols=[Subprotocol(self.subprotocol)], open_timeout=10, compression=None
        )
        if self.ws.subprotocol != self.subprotocol:
            raise ProtocolBroken(f"asked for {self.subprotocol}, the server chose {self.ws.subprotocol}")

    async def send(self, message: Message) -> None:
        assert self.ws is not None
        if self.subprotocol == JSON:
            await self.ws.send(json.dumps(message, separators=(",", ":")))
        else:
            await self.ws.send(msgpack.packb(message))

    async def recv(self, timeout: float) -> Message:
        assert self.ws is not None
        frame = await asyncio.wait_for(self.ws.recv(), timeout)
        if self.subprotocol == JSON:
            if not isinstance(frame, str):
                raise ProtocolBroken("a binary frame on feltd.json.v1")
            message = json.loads(frame)
        else:
            if not isinstance(frame, bytes):
                raise ProtocolBroken("a text frame on feltd.msgpack.v1")
            message = msgpack.unpackb(frame)
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise ProtocolBroken(f"a frame that is not an object with a type: {message!r}")
        return message

    async def send_raw(self, frame: str | bytes) -> None:
        assert self.ws is not None
        await self.ws.send(frame)

    async def until_closed(self, timeout: float) -> tuple[list[Message], int | None]:
        """Everything the server sends until it closes the connection, and its close code."""
        received: list[Message] = []
        try:
            while True:
                received.append(await self.recv(timeout))
        except websockets.ConnectionClosed as closed:
            return received, None if closed.rcvd is None else closed.rcvd.code

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


@dataclass
class IndependentPlayer:
    """A player who logs in, reads the lobby, registers, and plays their seat to the end.

    Its play is random but legal: every amount comes from the `legal` the server sent. Once in
    a while it sends an `act` twice under one `action_id` (the resend rule of section 10): one
    `action_taken`, and an `ack` for each copy (`stale_hand` for the second when the first ended
    the hand). It may drop its connection once in the middle of a hand and resume (section 3),
    and sit out once (section 11)."""

    url: str
    token: str
    name: str
    tournament_id: str
    subprotocol: str = MSGPACK
    seed: int = 0
    resend_every: int = 7
    reconnect_after_hands: int | None = None  # drop the connection once, in the hand after this many
    sit_out_after_hands: int | None = None  # sit out once after this many hands, back once acted for
    # what it saw
    received: list[Message] = field(default_factory=list)  # every message, in order
    welcome: Message | None = None
    lobby_entry: Message | None = None
    balances: list[int] = field(default_factory=list)
    registrations: list[str] = field(default_factory=list)
    seats: list[Message] = field(default_factory=list)
    snapshots: list[Message] = field(default_factory=list)
    events: list[Message] = field(default_factory=list)  # every table_event, as received
    hole_cards: dict[tuple[int, int], list[str]] = field(default_factory=dict)
    hands_dealt_in: list[tuple[int, int]] = field(default_factory=list)
    stacks_after_hands: list[int] = field(default_factory=list)
    my_actions: list[Message] = field(default_factory=list)  # my action_taken events, not timed out
    sent: dict[str, Sent] = field(default_factory=dict)
    resent: list[str] = field(default_factory=list)
    acks: list[str] = field(default_factory=list)
    errors: list[Message] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)  # departures from docs/protocol.md
    duplicates: int = 0
    timed_out: int = 0
    eliminated: Message | None = None
    ended: Message | None = None
    finished: Message | None = None  # the last tournament_state
    goodbye: Message | None = None
    unseated: Message | None = None
    resumed_from: list[dict[int, int]] = field(default_factory=list)  # table -> last seq, per reconnect
    unanswered_at_drop: list[str] = field(default_factory=list)  # action ids
    away_changes: list[str] = field(default_factory=list)  # my seat_changed away / back, in order
    away_turns: list[Message] = field(default_factory=list)  # my turns while away
    sit_requests: list[str] = field(default_factory=list)
    # state
    streams: dict[int, TableStream] = field(default_factory=dict)
    my_table: int | None = None
    my_seat: int | None = None
    level_stakes: tuple[int, int, int, int] | None = None  # level, blinds, ante of the last tournament_state
    my_time_banks: int = 0  # as the last turn or time_bank_used of my seat said
    _wire: Wire | None = None
    _rng: random.Random = field(default_factory=random.Random)
    _requests: int = 0
    _decisions: int = 0
    _reconnect_due: bool = False
    _away: bool = False  # the table has my seat away
    _sitting_out: bool = False  # by my own sit_out

    def hands_played(self) -> int:
        return len(self.hands_dealt_in)

    def _request_id(self, what: str) -> str:
        self._requests += 1
        return f"{self.name}-{what}-{self._requests}"

    async def _send(self, message: Message) -> None:
        assert self._wire is not None
        await self._wire.send(message)

    async def _until(self, wanted: str, timeout: float) -> Message:
        """Read, handling everything on the way, until a message of type ``wanted`` arrives."""
        assert self._wire is not None
        deadline = time.monotonic() + timeout
        while True:
            message = await self._wire.recv(max(0.01, deadline - time.monotonic()))
            await self._handle(message)
            if message["type"] == wanted:
                return message

    async def _until_answered(self, request_id: str, timeout: float) -> None:
        """Read until the ``ack`` of ``request_id``, which may have come already (while waiting
        for what the request did: section 3 does not fix their order); its ``error`` fails."""
        assert self._wire is not None
        deadline = time.monotonic() + timeout
        while request_id not in self.acks:
            refused = [e for e in self.errors if e["request_id"] == request_id]
            if refused:
                raise ProtocolBroken(f"{self.name}: request {request_id} refused: {refused[0]}")
            await self._handle(await self._wire.recv(max(0.01, deadline - time.monotonic())))

    async def play(self, *, timeout: float) -> None:
        """Log in, register and play until the tournament is over (staying to the end when out,
        to see the results), or the time is up."""
        self._rng = random.Random(self.seed)
        self._wire = Wire(self.url, self.subprotocol)
        await self._wire.open()
        try:
            await self._session(timeout=timeout)
        finally:
            await self._wire.close()

    async def _hello(self, resume: list[Message] | None = None) -> None:
        """Section 3: hello first, welcome back (nothing else comes before it)."""
        assert self._wire is not None
        hello: Message = {"type": "hello", "protocol": 1, "token": self.token, "client": "independent/1"}
        if resume is not None:
            hello["resume"] = resume
        await self._send(hello)
        welcome = await self._wire.recv(10)
        if welcome["type"] != "welcome":
            raise ProtocolBroken(f"{self.name}: hello answered by {welcome}")
        self.received.append(welcome)
        self.welcome = welcome

    async def _session(self, *, timeout: float) -> None:
        assert self._wire is not None
        deadline = time.monotonic() + timeout
        await self._hello()
        # section 5: the lobby lists the tournament
        lobby_request = self._request_id("lobby")
        await self._send({"type": "lobby_subscribe", "request_id": lobby_request})
        lobby = await self._until("lobby", 10)
        entries = [t for t in lobby["tournaments"] if t["tournament_id"] == self.tournament_id]
        if len(entries) != 1:
            raise ProtocolBroken(f"{self.name}: {self.tournament_id} not once in the lobby: {lobby}")
        self.lobby_entry = entries[0]
        await self._until_answered(lobby_request, 10)
        await self._send({"type": "lobby_unsubscribe"})
        # section 6: register (a money request: its request_id is its idempotency key)
        register = self._request_id("register")
        await self._send({"type": "register", "tournament_id": self.tournament_id, "request_id": register})
        await self._until_answered(register, 10)
        # sections 7 to 13: the seat, the table, the hands, until the tournament is over
        while self.finished is None:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                message = await self._wire.recv(left)
            except TimeoutError:
                break
            await self._handle(message)
            if message["type"] == "goodbye":
                break
            if self._reconnect_due:
                await self._reconnect()

    async def _reconnect(self) -> None:
        """Section 3, reconnecting: drop the connection, open a new one and resume the table at
        the last seq seen; what was missed comes next, with no gap."""
        assert self._wire is not None
        self._reconnect_due = False
        resume = [{"table_id": table, "last_seq": stream.seq} for table, stream in self.streams.items()]
        self.resumed_from.append({entry["table_id"]: entry["last_seq"] for entry in resume})
        # answers lost with the connection: the events show whether these acts were applied
        self.unanswered_at_drop += [action_id for action_id, sent in self.sent.items() if not sent.answers]
        await self._wire.close()
        self._wire = Wire(self.url, self.subprotocol)
        await self._wire.open()
        await self._hello(resume[:16])

    # -- what the server sends ------------------------------------------------------------

    async def _handle(self, message: Message) -> None:
        self.received.append(message)
        kind = message["type"]
        if kind == "balance":
            self.balances.append(message["cents"])
        elif kind == "registration":
            if message["tournament_id"] == self.tournament_id:
                self.registrations.append(message["status"])
        elif kind == "ack":
            self._on_ack(message["request_id"])
        elif kind == "error":
            self.errors.append(message)
            self._answered(message["request_id"] or "", message["code"])
        elif kind == "goodbye":
            self.goodbye = message
        elif kind == "seated":
            self._on_seated(message)
        elif kind == "unseated":
            if message["tournament_id"] == self.tournament_id:
                self.unseated = message
                self.streams.pop(message["table_id"], None)  # section 7: that table stops
                self.my_table = self.my_seat = None
        elif kind == "table_snapshot":
            await self._on_snapshot(message)
        elif kind == "table_event":
            await self._on_table_event(message)
        elif kind == "tournament_event" and message["tournament_id"] == self.tournament_id:
            event = message["event"]
            if event["type"] == "eliminated" and event["player"] == self.name:
                self.eliminated = event
            elif event["type"] == "tournament_ended":
                self.ended = event
        elif kind == "tournament_state" and message["tournament_id"] == self.tournament_id:
            self.level_stakes = _stakes(message)
            if message["status"] in ("finished", "cancelled"):
                self.finished = message
        # lobby_update, pong, chat and any type this client does not know: ignored (section 18:
        # a client must ignore a server message whose type it does not know)

    def _on_ack(self, request_id: str) -> None:
        self.acks.append(request_id)
        self._answered(request_id, "ack")

    def _answered(self, action_id: str, answer: str) -> None:
        sent = self.sent.get(action_id)
        if sent is not None:
            sent.answers.append(answer)
            stream = self.streams.get(sent.table_id)
            sent.hand_over_before_answer = stream is not None and (
                stream.hand_number != sent.hand_number or stream.hand_over
            )

    def _on_seated(self, message: Message) -> None:
        """Section 7: where I sit now. After a move the table I left sends nothing more, and the
        new one's stream (a snapshot first) follows."""
        if message["tournament_id"] != self.tournament_id:
            return
        self.seats.append(message)
        if self.my_table is not None and self.my_table != message["table_id"]:
            self.streams.pop(self.my_table, None)
        self.my_table, self.my_seat = message["table_id"], message["seat"]

    async def _on_snapshot(self, snapshot: Message) -> None:
        """Section 8: a snapshot replaces everything known about the table."""
        self.snapshots.append(snapshot)
        table_id = snapshot["table_id"]
        stream = TableStream(table_id, snapshot["seq"], snapshot["hand_number"])
        stream.hand_over = snapshot["status"] != "playing"
        self.streams[table_id] = stream
        for seat in snapshot["seats"]:
            if seat["player"] == self.name and table_id == self.my_table and seat["seat"] != self.my_seat:
                self._broken(f"snapshot of table {table_id} seats me at {seat['seat']}, not {self.my_seat}")
        # section 8: between hands, the snapshot has the current level's stakes
        stakes, level = _stakes(snapshot), self.level_stakes
        if snapshot["status"] != "playing" and level and stakes[0] == level[0] and stakes != level:
            self._broken(f"snapshot of table {table_id} between hands has stakes {stakes}, not {level}")
        for seat in snapshot["seats"]:
            if seat["player"] == self.name and seat["time_banks"] < self.my_time_banks:
                self._broken(f"snapshot gives me {seat['time_banks']} time banks, I had {self.my_time_banks}")
        legal = snapshot["legal"]
        if legal is not None:
            if snapshot["to_act"] != self.my_seat or table_id != self.my_table:
                self._broken(f"a snapshot with legal for seat {snapshot['to_act']}, I sit at {self.my_seat}")
            else:
                await self._decide(table_id, snapshot["hand_number"], legal)

    async def _on_table_event(self, message: Message) -> None:
        table_id, seq, event = message["table_id"], message["seq"], message["event"]
        stream = self.streams.get(table_id)
        if stream is None:
            self._broken(f"table {table_id}: event seq {seq} before any snapshot")
            return
        if seq <= stream.seq:
            self.duplicates += 1  # section 8: not above the last one: a duplicate, ignore it
            return
        if seq > stream.seq + 1:
            # section 8: events were lost; ask for them from the last one we have
            self._broken(f"table {table_id}: seq {stream.seq} then {seq}")
            await self._send({"type": "table_join", "table_id": table_id, "last_seq": stream.seq})
            return
        stream.seq = seq
        self.events.append(message)
        kind = event["type"]
        if kind == "hand_started":
            stream.hand_number, stream.hand_over = event["hand_number"], False
            if any(seat["player"] == self.name for seat in event["seats"]):
                if table_id != self.my_table:
                    self._broken(f"dealt in at table {table_id}, I sit at {self.my_table}")
                self.hands_dealt_in.append((table_id, event["hand_number"]))
        elif kind == "hole_cards":
            self._on_hole_cards(table_id, stream, event)
        elif kind == "turn":
            await self._on_turn(table_id, stream, event)
        elif kind == "time_bank_used" and table_id == self.my_table and event["seat"] == self.my_seat:
            self.my_time_banks = event["time_banks"]
        elif kind == "hand_ended":
            stream.hand_over = True
            for entry in event["stacks"]:
                if table_id == self.my_table and entry["seat"] == self.my_seat:
                    self.stacks_after_hands.append(entry["stack"])
                    due = self.sit_out_after_hands is not None and not self.sit_requests
                    if due and self.hands_played() >= self.sit_out_after_hands and entry["stack"] > 0:
                        # section 11: away at once; dealt in, blinded, and acted for at once
                        self._sitting_out = True
                        await self._sit("sit_out")
        elif kind == "action_taken" and table_id == self.my_table and event["seat"] == self.my_seat:
            if not event["timed_out"]:
                self.my_actions.append(event)
            else:
                self.timed_out += 1
                if self._sitting_out:
                    self._sitting_out = False  # acted for once: enough, come back
                    await self._sit("sit_in")
        elif kind == "seat_changed" and (table_id, event["seat"]) == (self.my_table, self.my_seat):
            if event["change"] not in ("away", "back"):
                return
            self.away_changes.append(event["change"])
            self._away = event["change"] == "away"
            if self._away and not self._sitting_out:
                # section 11: my clock ran out and the table marked me away; come back
                await self._sit("sit_in")

    def _on_hole_cards(self, table_id: int, stream: TableStream, event: Message) -> None:
        mine = table_id == self.my_table and event["seat"] == self.my_seat
        cards = event["cards"]
        if mine:
            if not (isinstance(cards, list) and len(cards) == 2 and all(_is_card(c) for c in cards)):
                self._broken(f"my hole cards at table {table_id} are {cards!r}")
            assert stream.hand_number is not None
            self.hole_cards[(table_id, stream.hand_number)] = cards
            due = self.reconnect_after_hands is not None and not self.resumed_from
            if due and self.hands_played() > self.reconnect_after_hands:
                self._reconnect_due = True  # in the middle of a hand: no seat moves then
        elif cards is not None:
            self._broken(f"seat {event['seat']}'s hole cards reached me: {cards}")

    async def _sit(self, which: str) -> None:
        request_id = self._request_id(which)
        self.sit_requests.append(request_id)
        await self._send({"type": which, "tournament_id": self.tournament_id, "request_id": request_id})

    async def _on_turn(self, table_id: int, stream: TableStream, event: Message) -> None:
        legal = event["legal"]
        mine = table_id == self.my_table and event["seat"] == self.my_seat
        if mine:
            self.my_time_banks = event["time_banks"]
        if mine and self._away:
            # section 11: an away seat is acted for at once, and its turn carries no `legal`
            self.away_turns.append(event)
            if legal is not None:
                self._broken(f"my turn while away came with legal {legal}")
            return
        if legal is None:
            if mine:
                self._broken(f"my turn at table {table_id} without legal")
            return
        if not mine:
            self._broken(f"seat {event['seat']}'s legal reached me at table {table_id}")
            return
        assert stream.hand_number is not None
        await self._decide(table_id, stream.hand_number, legal)

    # -- acting (section 10) ----------------------------------------------------------------

    async def _decide(self, table_id: int, hand_number: int, legal: Message) -> None:
        action, amount = self._choose(legal)
        self._decisions += 1
        action_id = f"{self.name}-{hand_number}-{self._decisions}"
        message: Message = {
            "type": "act",
            "table_id": table_id,
            "hand_number": hand_number,
            "action_id": action_id,
            "action": action,
        }
        if amount is not None:
            message["amount"] = amount
        self.sent[action_id] = Sent(table_id, hand_number, action, amount, legal)
        await self._send(message)
        if self.resend_every and self._decisions % self.resend_every == 0:
            # the resend rule: the same action_id again is acknowledged and not applied again
            self.resent.append(action_id)
            await self._send(message)

    def _choose(self, legal: Message) -> tuple[str, int | None]:
        """A legal decision from ``legal``: now and then all-in; with no bet to face, a check or
        sometimes a bet of the least legal total to twice it; facing a bet, a call (the likelier
        the smaller it is beside the stack, at least 30%) or a fold, and rarely a min-raise."""
        low, high = legal["min_raise_to"], legal["max_raise_to"]
        roll = self._rng.random()
        if high is not None and roll < 0.05:
            return "raise", high
        if legal["can_check"]:
            if low is not None and high is not None and roll < 0.2:
                return "bet", self._rng.randint(low, min(high, 2 * low))
            return "check", None
        pressure = 1.0 if high is None else legal["call_amount"] / high
        if low is not None and high is not None and roll < 0.08 and pressure < 0.2:
            return "raise", low
        if roll < max(0.3, 0.7 - pressure):
            return "call", None
        return "fold", None

    def _broken(self, what: str) -> None:
        self.broken.append(f"{self.name}: {what}")


def _stakes(message: Message) -> tuple[int, int, int, int]:
    """The level and its blinds and ante, as a tournament_state or a table_snapshot gives them."""
    return (message["level"], message["small_blind"], message["big_blind"], message["ante"])


def _is_card(text: object) -> bool:
    return isinstance(text, str) and len(text) == 2 and text[0] in "23456789TJQKA" and text[1] in "cdhs"
