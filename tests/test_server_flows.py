"""The game server's flows over real sockets (acceptance 2 and 3 of the game server): a reconnect
in the middle of a hand (resumed, then taken over by a new connection), the clock running out on
a silent player (CLK-2/3), a disconnected player dealt in and blinded until busted or back
(CLK-1), an observer who sees no hole card (and one who joins as the table opens), a table that
reaches the :55 break (BRK-T1), and hand for hand on the bubble (HFH-1).

Every test runs a small tournament on an accelerated clock against the real server and
PostgreSQL; clients are ``client.connection.Connection``s driven by the test, each reading its
frames in a task of its own so that the test can drop, resume and answer them as it likes.
"""

from __future__ import annotations

import asyncio
import bisect
import datetime as dt
import itertools
import random
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import msgspec
from server_harness import Harness, Player, lively, running_server, steady, tournament_toml, wait_until
from websockets.exceptions import ConnectionClosed

from client.connection import Connection
from engine.tournament import director as d
from engine.tournament import inputs
from engine.tournament.config import parse_config
from engine.tournament.director import Director
from engine.tournament.transfers import player_account
from protocol import client_messages as cm
from protocol import server_messages as sm
from protocol import table_events as te
from protocol import tournament_events as tev
from protocol.kinds import ActionKind, GoodbyeReason, HoldReason, SeatChange, SeatReason, Street

Decide = Callable[[te.LegalView], ActionKind]


class CalmThenLively:
    """A policy that checks and calls (nobody busts) until ``wake()``, then plays ``lively``: a
    rail that must watch a few hands gets them, however late it joined on a loaded machine."""

    def __init__(self) -> None:
        self.calm = True

    def wake(self) -> None:
        self.calm = False

    def __call__(self, legal: te.LegalView, rng: random.Random) -> tuple[ActionKind, int | None]:
        return (ActionKind.CHECK_OR_CALL, None) if self.calm else lively(legal, rng)


def check_or_call(legal: te.LegalView) -> ActionKind:
    return ActionKind.CHECK_OR_CALL


@dataclass
class Client:
    """A player's (or the rail's) connection whose frames a task reads into ``sessions``, one
    list per connection; with ``decide`` set it answers every turn of its own at once."""

    connection: Connection
    tournament_id: str
    decide: Decide | None = None
    sessions: list[list[sm.ServerMessage]] = field(default_factory=list)
    seat: int | None = None
    table_id: int | None = None
    # the turn waiting for this player's answer: (table, hand, legal)
    pending: tuple[int, int, te.LegalView] | None = None
    hands: dict[int, int] = field(default_factory=dict)
    acted: int = 0
    task: asyncio.Task[None] | None = None

    @property
    def session(self) -> list[sm.ServerMessage]:
        return self.sessions[-1]

    @property
    def received(self) -> list[sm.ServerMessage]:
        return [message for session in self.sessions for message in session]

    async def connect(self, *, resume: bool = False) -> None:
        await self.connection.connect(resume=resume)
        self.pending = None
        self.sessions.append([])
        self.task = asyncio.create_task(self._read(self.sessions[-1]))

    async def register(self) -> None:
        request = f"reg-{self.connection.player}"
        await self.connection.send(cm.Register(tournament_id=self.tournament_id, request_id=request))

    async def drop(self) -> None:
        """The connection goes: nothing more is read from it (what it had not read is lost)."""
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.task = None
        await self.connection.close()

    async def act(self, action: ActionKind, action_id: str | None = None) -> str:
        assert self.pending is not None, "not this player's turn"
        table_id, hand_number, _ = self.pending
        self.acted += 1
        action_id = action_id or f"{self.connection.player}-{hand_number}-{self.acted}"
        self.pending = None
        await self.connection.send(
            cm.Act(table_id=table_id, hand_number=hand_number, action_id=action_id, action=action)
        )
        return action_id

    async def _read(self, into: list[sm.ServerMessage]) -> None:
        try:
            while True:
                message = await self.connection.recv()
                into.append(message)
                await self._react(message)
        except ConnectionClosed:
            return

    async def _react(self, message: sm.ServerMessage) -> None:
        if isinstance(message, sm.Seated):
            self.seat, self.table_id = message.seat, message.table_id
        elif isinstance(message, sm.TableSnapshot):
            self.pending = None
            if message.hand_number is not None:
                self.hands[message.table_id] = message.hand_number
                if message.legal is not None:
                    self.pending = (message.table_id, message.hand_number, message.legal)
        elif isinstance(message, sm.TableEvent):
            event = message.event
            if isinstance(event, te.HandStarted):
                self.hands[message.table_id] = event.hand_number
                self.pending = None
            elif isinstance(event, te.Turn) and event.legal is not None:
                self.pending = (message.table_id, self.hands[message.table_id], event.legal)
            elif isinstance(event, te.ActionTaken) and event.seat == self.seat:
                self.pending = None
        if self.decide is not None and self.pending is not None:
            await self.act(self.decide(self.pending[2]))

    def events(self, session: Iterable[sm.ServerMessage] | None = None) -> list[sm.TableEvent]:
        messages = self.received if session is None else session
        return [m for m in messages if isinstance(m, sm.TableEvent) and m.table_id == self.table_id]

    def acks(self, session: Iterable[sm.ServerMessage]) -> set[str]:
        return {m.request_id for m in session if isinstance(m, sm.Ack)}


def client(
    harness: Harness,
    name: str | None,
    tournament_id: str,
    *,
    json: bool = False,
    decide: Decide | None = None,
) -> Client:
    return Client(harness.connection(name, json=json), tournament_id, decide=decide)


def contiguous(seqs: list[int]) -> bool:
    return all(b == a + 1 for a, b in itertools.pairwise(seqs))


def event_seqs(messages: Iterable[sm.ServerMessage], table_id: int) -> list[int]:
    return [m.seq for m in messages if isinstance(m, sm.TableEvent) and m.table_id == table_id]


# -- acceptance 2: a reconnect in the middle of a hand -------------------------------------------


async def test_a_reconnect_mid_hand_gets_every_missed_event_once_in_order_and_a_resent_action_id_acts_once(
    postgres_server_url: str,
) -> None:
    """Heads-up, the button acts and drops at once; while it is gone the hand goes on. It comes
    back with ``resume``: it gets ``seated`` (reconnect) and then exactly the events after the
    last ``seq`` it read, its own action among them once, then the live stream, with no gap and
    no duplicate. Its action sent again with the same ``action_id`` is acknowledged and not
    applied again (its next action, with a new id, is the one that plays). Then a new connection
    without ``resume`` logs in while the old one is still open: the old one is told
    ``taken_over``, the new one gets a snapshot of the hand under way (its own cards only, its
    turn, what it may do), from which it plays the hand to its end."""
    async with running_server(postgres_server_url, speed=10.0) as harness:
        await harness.add_players(["ann", "bob"])
        # a long shot clock: the player who drops must not time out while the test reconnects it
        toml = tournament_toml("resume", players=2, extra="[clock]\nshot_clock_seconds = 300\n")
        tournament_id = await harness.create(toml, starts_in=20)
        ann, bob = client(harness, "ann", tournament_id), client(harness, "bob", tournament_id)
        for player in (ann, bob):
            await player.connect()
            await player.register()
        await wait_until(lambda: ann.pending is not None or bob.pending is not None, 60, "the first turn")
        # heads-up the button acts first before the flop and last after it
        button, other = (ann, bob) if ann.pending is not None else (bob, ann)
        other.decide = check_or_call
        assert button.pending is not None and button.table_id is not None and button.seat is not None
        table_id, hand_number, _ = button.pending
        seat = button.seat
        await button.act(ActionKind.CHECK_OR_CALL, "limp")
        await button.drop()
        first = button.session
        last_read = button.connection.last_seq[table_id]
        assert contiguous(event_seqs(first, table_id))

        # back with resume: the events after last_read, then the flop's turn (the other checked)
        await button.connect(resume=True)
        second = button.session
        await wait_until(lambda: button.pending is not None, 60, "the button's turn on the flop")
        assert any(isinstance(m, sm.Seated) and m.reason is SeatReason.RECONNECT for m in second)
        assert not any(isinstance(m, sm.TableSnapshot) for m in second), "resumed, not resynced"
        resumed = event_seqs(second, table_id)
        assert resumed[0] == last_read + 1 and contiguous(resumed), (last_read, resumed)

        # the same action id again, on its next turn: acknowledged, not played
        await button.connection.send(
            cm.Act(
                table_id=table_id, hand_number=hand_number, action_id="limp", action=ActionKind.CHECK_OR_CALL
            )
        )
        await wait_until(lambda: "limp" in button.acks(second), 30, "the resend's ack")
        assert button.pending is not None, "the resend did not take the player's turn"
        checked = await button.act(ActionKind.CHECK_OR_CALL, "check-flop")
        await wait_until(lambda: checked in button.acks(second), 30, "the flop check's ack")
        assert not [m for m in second if isinstance(m, sm.Error)], second
        mine = [
            m.event
            for m in first + second
            if isinstance(m, sm.TableEvent) and isinstance(m.event, te.ActionTaken) and m.event.seat == seat
        ]
        assert [e.street for e in mine] == [Street.PREFLOP, Street.FLOP], mine

        # once more, from a new connection without resume while the old one still looks open
        # (a half-open network): it takes over, and gets a snapshot of the hand under way
        await wait_until(lambda: button.pending is not None, 60, "the button's turn on the turn")
        name = button.connection.player
        assert name is not None
        again = client(harness, name, tournament_id)
        await again.connect()
        third = again.session
        await wait_until(lambda: any(isinstance(m, sm.TableSnapshot) for m in third), 30, "a snapshot")
        await wait_until(lambda: any(isinstance(m, sm.Goodbye) for m in second), 30, "the old one's goodbye")
        (goodbye,) = [m for m in second if isinstance(m, sm.Goodbye)]
        assert goodbye.reason is GoodbyeReason.TAKEN_OVER
        snapshot = next(m for m in third if isinstance(m, sm.TableSnapshot))
        assert snapshot.hand_number == hand_number and snapshot.to_act == seat and snapshot.legal is not None
        assert snapshot.street is Street.TURN and len(snapshot.board) == 4
        (hole,) = [
            m.event.cards
            for m in first
            if isinstance(m, sm.TableEvent) and isinstance(m.event, te.HoleCards) and m.event.seat == seat
        ]
        cards = {view.seat: view.cards for view in snapshot.seats}
        assert cards[seat] == hole and all(c is None for s, c in cards.items() if s != seat), cards
        again.decide = check_or_call
        await again.act(ActionKind.CHECK_OR_CALL, "check-turn")
        await wait_until(lambda: _ended(third, table_id), 60, "the end of the hand")
        after = event_seqs(third, table_id)
        assert after[0] == snapshot.seq + 1 and contiguous(after), (snapshot.seq, after)
        acted = [
            m.event.street
            for m in first + second + third
            if isinstance(m, sm.TableEvent) and isinstance(m.event, te.ActionTaken) and m.event.seat == seat
        ]
        assert acted[:3] == [Street.PREFLOP, Street.FLOP, Street.TURN], acted
        for player in (button, again, other):
            await player.drop()


def _ended(messages: list[sm.ServerMessage], table_id: int) -> bool:
    return any(
        isinstance(m, sm.TableEvent) and m.table_id == table_id and isinstance(m.event, te.HandEnded)
        for m in messages
    )


# -- acceptance 3 ----------------------------------------------------------------------------------


@dataclass
class _Decision:
    """One turn of a seat as its own copy of the stream shows it."""

    legal: te.LegalView | None
    banks: int  # banks the turn started with
    banks_run: int = 0  # time_bank_used seen during it
    away_before: bool = False  # seat_changed away came before the action
    action: te.ActionTaken | None = None


def _decisions(events: Iterable[sm.TableEvent], seat: int) -> list[_Decision]:
    decisions: list[_Decision] = []
    current: _Decision | None = None
    for message in events:
        event = message.event
        if isinstance(event, te.Turn) and event.seat == seat:
            current = _Decision(event.legal, event.time_banks)
            decisions.append(current)
        elif current is None:
            continue
        elif isinstance(event, te.TimeBankUsed) and event.seat == seat:
            current.banks_run += 1
        elif isinstance(event, te.SeatChanged) and event.seat == seat and event.change is SeatChange.AWAY:
            current.away_before = True
        elif isinstance(event, te.ActionTaken) and event.seat == seat:
            current.action = event
            current = None
    return decisions


def _seat_changes_against_stacks(
    messages: Iterable[sm.ServerMessage], seat: int
) -> list[tuple[SeatChange, int, int | None]]:
    """Every ``seat_changed`` of ``seat``: its change, the stack it says, and the stack the
    stream said last (the snapshot, the hand's start, blinds, actions, the hand's end)."""
    known: int | None = None
    changes: list[tuple[SeatChange, int, int | None]] = []
    for message in messages:
        if isinstance(message, sm.TableSnapshot):
            known = next((view.stack for view in message.seats if view.seat == seat), known)
            continue
        if not isinstance(message, sm.TableEvent):
            continue
        event = message.event
        if isinstance(event, te.HandStarted):
            known = next((start.stack for start in event.seats if start.seat == seat), known)
        elif isinstance(event, te.BlindPosted | te.AntePosted | te.ActionTaken | te.UncalledReturned):
            if event.seat == seat:
                known = event.stack
        elif isinstance(event, te.HandEnded):
            known = next((entry.stack for entry in event.stacks if entry.seat == seat), known)
        elif isinstance(event, te.SeatChanged) and event.seat == seat:
            changes.append((event.change, event.stack, known))
    return changes


async def test_clk_2_3_a_silent_player_is_checked_or_folded_when_the_shot_clock_and_banks_run_out(
    postgres_server_url: str,
) -> None:
    """CLK-3, CLK-2: a connected player who never acts gets the shot clock, then each time bank
    (``time_bank_used``), then is marked away and the table acts for them: a check when they
    face no bet, a fold when they face one (``timed_out``). Sitting back in gives the next
    decision the clock again (with the banks left, none after the first); while away, the table
    acts for them at once (no ``legal``), the same way. Each ``seat_changed`` (away, back) names
    the seat's stack as it is then."""
    async with running_server(postgres_server_url, speed=20.0) as harness:
        await harness.add_players(["sal", "bob"])
        clock = "[clock]\nshot_clock_seconds = 10\nbanks_at_start = 1\n"
        tournament_id = await harness.create(tournament_toml("silent", players=2, extra=clock), starts_in=40)
        sal = client(harness, "sal", tournament_id)
        bob = client(harness, "bob", tournament_id, decide=check_or_call)
        for player in (sal, bob):
            await player.connect()
            await player.register()
        await wait_until(lambda: sal.seat is not None, 60, "sal's seat")
        assert sal.seat is not None
        seat = sal.seat

        def clocked() -> list[_Decision]:
            return [d for d in _decisions(sal.events(), seat) if d.legal is not None and d.action is not None]

        def timed_out_after(count: int) -> Callable[[], bool]:
            return lambda: len(clocked()) > count

        def acknowledged(request_id: str) -> Callable[[], bool]:
            return lambda: request_id in sal.acks(sal.session)

        answered = 0
        while {d.action.action for d in clocked() if d.action is not None} != {
            ActionKind.CHECK,
            ActionKind.FOLD,
        }:
            assert len(clocked()) < 8, "a check and a fold on the clock within a few decisions"
            # back after each time-out, so that the next decision has the clock again
            await wait_until(timed_out_after(answered), 120, "sal's time to run out")
            answered = len(clocked())
            await sal.connection.send(cm.SitIn(tournament_id=tournament_id, request_id=f"back-{answered}"))
            await wait_until(acknowledged(f"back-{answered}"), 30, "sit_in's ack")
        decisions = _decisions(sal.events(), seat)
        assert decisions[0].legal is not None and decisions[0].banks == 1, "the first decision has a bank"
        for decision in decisions:
            action = decision.action
            if action is None:  # the turn under way when the test stopped looking
                continue
            assert action.timed_out and action.action in (ActionKind.CHECK, ActionKind.FOLD), action
            if decision.legal is not None:  # on the clock: every bank ran first, then away
                expected = ActionKind.CHECK if decision.legal.can_check else ActionKind.FOLD
                assert action.action is expected, decision
                assert decision.banks_run == decision.banks and decision.away_before, decision
        assert sum(d.banks_run for d in decisions) == 1, "one bank, spent once"
        # each away and back names the stack the seat has at that moment
        changes = _seat_changes_against_stacks(sal.received, seat)
        assert {change for change, _, _ in changes} == {SeatChange.AWAY, SeatChange.BACK}, changes
        assert all(said == known for _, said, known in changes), changes
        assert not [m for m in sal.received if isinstance(m, sm.Error)]
        for player in (sal, bob):
            await player.drop()


def shove(legal: te.LegalView, rng: random.Random) -> tuple[ActionKind, int | None]:
    """All in whenever a raise is possible, else a call (or a check)."""
    if legal.max_raise_to is not None:
        return ActionKind.RAISE, legal.max_raise_to
    return ActionKind.CHECK_OR_CALL, None


def _by_seq(players: Iterable[Player], table_id: int) -> dict[int, sm.TableEvent]:
    """Every event of a table that any of ``players`` received (as their copies show it)."""
    events: dict[int, sm.TableEvent] = {}
    for player in players:
        for message in player.received:
            if isinstance(message, sm.TableEvent) and message.table_id == table_id:
                events.setdefault(message.seq, message)
    return events


async def test_clk_1_a_disconnected_player_is_dealt_in_and_blinded_until_busted_and_keeps_the_place_earned(
    postgres_server_url: str,
) -> None:
    """CLK-1, CLK-2: a player who is seated and then disconnects for good keeps their clock once,
    is then away, and is dealt into every hand, posting blinds (folded or checked), until out of
    chips; their place and prize, as players are told (``eliminated``, ``tournament_ended``) and
    as the ledger paid it, are the ones the standings give."""
    async with running_server(postgres_server_url, speed=40.0) as harness:
        names = ["dan", "p1", "p2", "p3"]
        await harness.add_players(names)
        toml = tournament_toml("gone", players=4, level_minutes=1, extra="[payouts]\npercent_paid = 50\n")
        tournament_id = await harness.create(toml, starts_in=120)
        dan = client(harness, "dan", tournament_id)
        await dan.connect()
        await dan.register()
        players = [
            Player(harness.connection(n), tournament_id, shove, seed=i) for i, n in enumerate(names[1:])
        ]
        runs = asyncio.gather(*(player.run() for player in players))
        await wait_until(lambda: dan.seat is not None, 60, "dan's seat")
        await dan.drop()
        seat, table_id = dan.seat, dan.table_id
        assert seat is not None and table_id is not None
        await asyncio.wait_for(runs, 120)

        director = harness.server.coordinators[tournament_id].director
        assert director.standings is not None and director.standings.complete
        (finish,) = [f for f in director.standings.finishes if "dan" in f.players]
        ended = players[0].ended
        assert ended is not None
        (result,) = [r for r in ended.results if "dan" in r.players]
        assert result.place == finish.place > 1, (result, finish)
        told = [e for e in players[0].received if isinstance(e, sm.TournamentEvent)]
        (out,) = [e.event for e in told if isinstance(e.event, tev.Eliminated) and e.event.player == "dan"]
        assert (out.place, out.prize_cents) == (result.place, result.prize_cents)
        balance = await harness.store.ledger.balance(player_account("dan"))
        assert balance == 100_000 - 1_100 + result.prize_cents

        # every hand from the first to the one that busted dan dealt dan in, stack carried over
        hands = sorted(
            await harness.store.histories.by_tournament(tournament_id), key=lambda h: h.hand_number
        )
        stacks = [next((p for p in h.players if p.player_id == "dan"), None) for h in hands]
        last = max(i for i, entry in enumerate(stacks) if entry is not None)
        assert all(entry is not None for entry in stacks[: last + 1]), "dealt in until busted"
        assert all(entry is None for entry in stacks[last + 1 :])
        dealt = [entry for entry in stacks[: last + 1] if entry is not None]
        assert dealt[-1].final_stack == 0 and dealt[0].starting_stack == 1500
        assert all(a.final_stack == b.starting_stack for a, b in itertools.pairwise(dealt))

        # while away: blinds posted, every decision made by the table, check or fold
        events = [e.event for _, e in sorted(_by_seq(players, table_id).items())]
        blinds = [e for e in events if isinstance(e, te.BlindPosted) and e.seat == seat]
        assert {b.blind.value for b in blinds} == {"small", "big"}, blinds
        decisions = [e for e in events if isinstance(e, te.ActionTaken) and e.seat == seat]
        assert decisions and all(
            d.timed_out and d.action in (ActionKind.CHECK, ActionKind.FOLD) for d in decisions
        )
        started = [e for e in events if isinstance(e, te.HandStarted)]
        assert all(any(s.player == "dan" and s.away for s in h.seats) for h in started[1 : last + 1])


async def test_clk_1_a_disconnected_player_is_blinded_while_gone_and_plays_again_once_back(
    postgres_server_url: str,
) -> None:
    """CLK-1: a player who disconnects times out once and is then dealt in as away, posting both
    blinds, hand after hand. Reconnecting does not change that: the snapshot shows the seat
    away. After ``sit_in`` (``seat_changed`` back) their next turn has the clock and ``legal``
    again, and their own action plays."""
    async with running_server(postgres_server_url, speed=20.0) as harness:
        await harness.add_players(["eve", "bob"])
        # 2 s real to act once back (a loaded machine stalls the test's process now and then); her
        # first turn after the drop times out in that as well
        clock = "[clock]\nshot_clock_seconds = 40\nbanks_at_start = 0\n"
        tournament_id = await harness.create(tournament_toml("back", players=2, extra=clock), starts_in=40)
        eve = client(harness, "eve", tournament_id)
        bob = client(harness, "bob", tournament_id, decide=check_or_call)
        for player in (eve, bob):
            await player.connect()
            await player.register()
        await wait_until(lambda: eve.seat is not None, 60, "eve's seat")
        await eve.drop()
        seat = eve.seat

        def away_hands() -> list[int]:
            return [
                m.event.hand_number
                for m in bob.events()
                if isinstance(m.event, te.HandStarted)
                and any(start.seat == seat and start.away for start in m.event.seats)
            ]

        def blinds() -> set[str]:
            return {
                m.event.blind.value
                for m in bob.events()
                if isinstance(m.event, te.BlindPosted) and m.event.seat == seat
            }

        await wait_until(lambda: len(away_hands()) >= 3 and blinds() == {"small", "big"}, 60, "hands away")
        await eve.connect()
        back = eve.session
        await wait_until(lambda: any(isinstance(m, sm.TableSnapshot) for m in back), 30, "eve's snapshot")
        snapshot = next(m for m in back if isinstance(m, sm.TableSnapshot))
        (view,) = [v for v in snapshot.seats if v.seat == seat]
        assert view.away, "still away after reconnecting"
        await eve.connection.send(cm.SitIn(tournament_id=tournament_id, request_id="back"))
        await wait_until(lambda: "back" in eve.acks(back), 30, "sit_in's ack")
        assert any(
            isinstance(m, sm.TableEvent)
            and isinstance(m.event, te.SeatChanged)
            and m.event.change is SeatChange.BACK
            for m in back
        )
        await wait_until(lambda: eve.pending is not None, 60, "eve's next turn, on the clock")
        action_id = await eve.act(ActionKind.CHECK_OR_CALL)
        await wait_until(lambda: action_id in eve.acks(back), 30, "eve's action's ack")
        mine = [
            m.event for m in eve.events(back) if isinstance(m.event, te.ActionTaken) and m.event.seat == seat
        ]
        assert mine and not mine[-1].timed_out, mine
        for player in (eve, bob):
            await player.drop()


_CARD = re.compile(r"^[2-9TJQKA][cdhs]$")


def _cards_in(message: object) -> set[str]:
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, str):
            if _CARD.match(value):
                found.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(msgspec.to_builtins(message))
    return found


async def test_an_observer_who_joins_a_table_as_it_opens_gets_its_snapshot_and_the_table_plays_on(
    postgres_server_url: str,
) -> None:
    """A rail connection asks to follow the first table (its number is the tournament's first
    table id) again and again from just before the start: one ``table_join`` lands while the
    table is open but has no seats yet. It is answered with a snapshot once the seats come, and
    the table deals its hands (the early join used to stop the table's task for good)."""
    async with running_server(postgres_server_url, speed=20.0) as harness:
        await harness.add_players(["e1", "e2"])
        tournament_id = await harness.create(tournament_toml("early", players=2), starts_in=40)
        coordinator = harness.server.coordinators[tournament_id]
        table_id = coordinator.number * 1_000_000 + 1
        # calm until the rail has seen two hands: lively, one hand can end a heads-up tournament,
        # and the rail would wait for a second that never comes
        policy = CalmThenLively()
        players = [
            Player(harness.connection(n), tournament_id, policy, seed=i) for i, n in enumerate(["e1", "e2"])
        ]
        runs = asyncio.gather(*(player.run() for player in players))
        rail = client(harness, None, tournament_id)
        await rail.connect()
        clock = harness.server.clock
        await asyncio.sleep(max(0.0, clock.to_wall(coordinator.director.start_at - clock.now()) - 0.3))
        deadline = time.monotonic() + 30
        while not any(isinstance(m, sm.TableSnapshot) for m in rail.session):
            assert time.monotonic() < deadline, "the table never answered"
            await rail.connection.send(cm.TableJoin(table_id=table_id))
            await asyncio.sleep(0.0025)  # under the rate limit (400 a second at this speed)
        await wait_until(
            lambda: (
                sum(
                    isinstance(m, sm.TableEvent) and isinstance(m.event, te.HandStarted) for m in rail.session
                )
                >= 2
            ),
            60,
            "the table's hands",
        )
        policy.wake()
        await asyncio.wait_for(runs, 120)
        assert all(player.ended is not None for player in players)
        await rail.drop()


async def test_an_observer_at_a_table_never_receives_a_hole_card_before_it_is_shown(
    postgres_server_url: str,
) -> None:
    """A rail connection (no token, on JSON) follows a table through a whole tournament. No
    frame it receives holds a seat's hole card before that seat shows it at the showdown or the
    hand is over (``deck_revealed``): ``hole_cards`` come with ``cards: null``, its snapshots
    show no one's cards, and neither ``turn`` nor a snapshot carries ``legal``. The seats' own
    copies say what the hole cards were."""
    async with running_server(postgres_server_url, speed=40.0) as harness:
        names = ["o1", "o2", "o3"]
        await harness.add_players(names)
        toml = tournament_toml("rail", players=3, level_minutes=2)
        tournament_id = await harness.create(toml, starts_in=120)
        # lively players end this tournament in a few hands, a tenth of a second or so: a rail
        # that joined a little late saw two hands, or none and no close. Calm until it has
        # watched three
        policy = CalmThenLively()
        players = [
            Player(harness.connection(n, json=i == 0), tournament_id, policy, seed=i)
            for i, n in enumerate(names)
        ]
        runs = asyncio.gather(*(player.run() for player in players))
        rail = client(harness, None, tournament_id, json=True)
        await rail.connect()

        def seated() -> list[sm.Seated]:
            return [m for m in players[0].received if isinstance(m, sm.Seated)]

        await wait_until(lambda: bool(seated()), 60, "the table")
        table_id = seated()[0].table_id
        await rail.connection.send(cm.TableJoin(table_id=table_id, request_id="watch"))
        await wait_until(
            lambda: sum(_table_event(te.HandStarted)(m) for m in rail.session) >= 3, 60, "three hands watched"
        )
        policy.wake()
        await asyncio.wait_for(runs, 120)
        await wait_until(
            lambda: any(
                isinstance(m, sm.TableEvent) and isinstance(m.event, te.TableClosed) for m in rail.session
            ),
            30,
            "the table's close",
        )
        await rail.drop()

        truth = _by_seq(players, table_id)
        starts = sorted(
            (seq, e.event.hand_number) for seq, e in truth.items() if isinstance(e.event, te.HandStarted)
        )

        def hand_at(seq: int) -> int | None:
            index = bisect.bisect_right(starts, (seq, 1 << 62)) - 1
            return None if index < 0 else starts[index][1]

        hole: dict[tuple[int, int], list[str]] = {}
        for player in players:
            for message in player.received:
                if (
                    isinstance(message, sm.TableEvent)
                    and message.table_id == table_id
                    and isinstance(message.event, te.HoleCards)
                    and message.event.cards is not None
                ):
                    hand = hand_at(message.seq)
                    assert hand is not None
                    hole[(hand, message.event.seat)] = message.event.cards
        shown: dict[tuple[int, int], int] = {}
        revealed: dict[int, int] = {}
        for seq, message in truth.items():
            event, hand = message.event, hand_at(seq)
            if hand is None:
                continue
            if isinstance(event, te.CardsShown):
                shown.setdefault((hand, event.seat), seq)
            elif isinstance(event, te.HandsShown):
                for hand_shown in event.hands:
                    shown.setdefault((hand, hand_shown.seat), seq)
            elif isinstance(event, te.DeckRevealed):
                revealed[hand] = seq

        frames = [m for m in rail.session if isinstance(m, sm.TableEvent | sm.TableSnapshot)]
        assert isinstance(frames[0], sm.TableSnapshot)
        assert contiguous([m.seq for m in frames[1:]]) and frames[1].seq == frames[0].seq + 1
        unseen = 0
        for frame in frames:
            if isinstance(frame, sm.TableSnapshot):
                assert frame.legal is None
            elif isinstance(frame.event, te.HoleCards):
                assert frame.event.cards is None, frame
                unseen += 1
            elif isinstance(frame.event, te.Turn):
                assert frame.event.legal is None, frame
            hand = hand_at(frame.seq)
            if hand is None:
                continue
            visible = _cards_in(frame)
            for (number, seat), cards in hole.items():
                if number != hand or not visible.intersection(cards):
                    continue
                public_from = min(shown.get((number, seat), 1 << 62), revealed.get(number, 1 << 62))
                assert frame.seq >= public_from, (seat, cards, frame)
        watched = sum(
            1 for f in frames if isinstance(f, sm.TableEvent) and isinstance(f.event, te.HandStarted)
        )
        assert watched >= 3 and unseen >= 2 * watched, (watched, unseen)


def _index(
    messages: list[sm.ServerMessage], found: Callable[[sm.ServerMessage], bool], start: int = 0
) -> int:
    """The index of the first message from ``start`` that ``found`` picks, or -1."""
    return next((i for i in range(start, len(messages)) if found(messages[i])), -1)


def _table_event(kind: type[object]) -> Callable[[sm.ServerMessage], bool]:
    return lambda m: isinstance(m, sm.TableEvent) and isinstance(m.event, kind)


def _tournament_event(kind: type[object]) -> Callable[[sm.ServerMessage], bool]:
    return lambda m: isinstance(m, sm.TournamentEvent) and isinstance(m.event, kind)


def _turn_banks(messages: Iterable[sm.ServerMessage]) -> dict[int, int]:
    """Each seat's time banks, as its first ``turn`` in ``messages`` says."""
    banks: dict[int, int] = {}
    for message in messages:
        if isinstance(message, sm.TableEvent) and isinstance(message.event, te.Turn):
            banks.setdefault(message.event.seat, message.event.time_banks)
    return banks


async def test_brk_t1_a_table_that_reaches_the_55_break_finishes_its_hand_and_waits(
    postgres_server_url: str,
) -> None:
    """BRK-T1: the tournament starts at :54:20 on the server's clock; the hand under way at :55
    (one player thinks until the break is announced) is played to its end, then the table is
    held for the break (``table_held`` ``break``, until the break's end) and deals no hand until
    ``break_ended``. Both players are told (``break_started`` until :56 with a one-minute break),
    and each has a time bank more after it (CLK-3)."""
    hour = int(time.time()) // 3600 * 3600
    async with running_server(postgres_server_url, speed=30.0, clock_start=hour + 53 * 60 + 35) as harness:
        await harness.add_players(["ann", "bob"])
        toml = tournament_toml(
            "brk",
            players=2,
            breaks='mode = "hourly"\nat_minute = 55\nminutes = 1',
            extra="[clock]\nshot_clock_seconds = 120\n",
        )
        tournament_id = await harness.create(toml, starts_in=45)
        ann = client(harness, "ann", tournament_id)
        bob = client(harness, "bob", tournament_id, decide=check_or_call)
        for player in (ann, bob):
            await player.connect()
            await player.register()
        await wait_until(lambda: ann.pending is not None, 60, "ann's first turn, before :55")
        assert ann.pending is not None
        _, hand_number, _ = ann.pending
        messages = ann.session
        await wait_until(lambda: _index(messages, _tournament_event(tev.BreakStarted)) >= 0, 60, "the break")
        assert ann.pending is not None and ann.pending[1] == hand_number, "the hand is still under way"
        ann.decide = check_or_call
        await ann.act(ActionKind.CHECK_OR_CALL)

        def next_hand() -> int:
            over = _index(messages, _tournament_event(tev.BreakEnded))
            return -1 if over < 0 else _index(messages, _table_event(te.HandStarted), over)

        await wait_until(lambda: next_hand() >= 0, 60, "a hand after the break")
        announced = _index(messages, _tournament_event(tev.BreakStarted))
        finished = _index(messages, _table_event(te.HandEnded), announced)
        held = _index(messages, _table_event(te.TableHeld), announced)
        over = _index(messages, _tournament_event(tev.BreakEnded))
        assert 0 <= announced < finished < held < over < next_hand(), (announced, finished, held, over)
        assert _index(messages[:over], _table_event(te.HandStarted), announced) < 0, (
            "no hand during the break"
        )
        break_started = messages[announced]
        table_held = messages[held]
        assert isinstance(break_started, sm.TournamentEvent) and isinstance(
            break_started.event, tev.BreakStarted
        )
        assert isinstance(table_held, sm.TableEvent) and isinstance(table_held.event, te.TableHeld)
        assert table_held.event.reason is HoldReason.BREAK
        assert table_held.event.until_ms == break_started.event.until_ms
        until = dt.datetime.fromtimestamp(break_started.event.until_ms / 1000, dt.UTC)
        assert (until.minute, until.second) == (56, 0), until
        assert _index(bob.session, _tournament_event(tev.BreakStarted)) >= 0
        assert _index(bob.session, _table_event(te.TableHeld)) >= 0
        # CLK-3: a time bank more at the break (ann spent none)
        await wait_until(lambda: ann.seat in _turn_banks(messages[over:]), 60, "ann's turn after the break")
        assert ann.seat is not None
        assert _turn_banks(messages[:announced])[ann.seat] + 1 == _turn_banks(messages[over:])[ann.seat]
        for player in (ann, bob):
            await player.drop()


async def test_hfh_1_on_the_bubble_two_tables_play_hand_for_hand_visibly(postgres_server_url: str) -> None:
    """HFH-1: 12 players on four tables of 3, 3 paid, hand for hand from the first elimination
    (8 players before the bubble). The hands under way when it starts finish unsynchronized, but
    four 3-handed hands bust at most 8 players: the bubble (at 4 left, two tables) cannot burst
    before the first synchronized round, whatever order the tables' hands end in. Every player is
    told (``hand_for_hand_started`` with the places paid), tables wait
    for each other (``table_held`` ``hand_for_hand``), and a rail connection following both
    tables and the tournament sees, in the order the server sent them, that no table starts a
    hand before every table has finished its hand of the round before, until ``bubble_burst``."""
    async with running_server(postgres_server_url, speed=40.0, seed=5) as harness:
        names = [f"h{number}" for number in range(1, 13)]
        await harness.add_players(names)
        extra = "[payouts]\npercent_paid = 25\n\n[hand_for_hand]\nbubble_margin = 8\n"
        toml = tournament_toml("bubble", players=12, table_size=3, level_minutes=3, extra=extra)
        tournament_id = await harness.create(toml, starts_in=120)
        players = [Player(harness.connection(n), tournament_id, steady, seed=i) for i, n in enumerate(names)]
        runs = asyncio.gather(*(player.run() for player in players))
        rail = client(harness, None, tournament_id)
        await rail.connect()
        await rail.connection.send(cm.TournamentSubscribe(tournament_id=tournament_id))

        def tables() -> set[int]:
            return {m.table_id for p in players for m in p.received if isinstance(m, sm.Seated)}

        await wait_until(lambda: len(tables()) == 4, 60, "four tables")
        for table_id in sorted(tables()):
            await rail.connection.send(cm.TableJoin(table_id=table_id))
        await wait_until(
            lambda: _index(rail.session, _tournament_event(tev.BubbleBurst)) >= 0, 120, "the bubble to burst"
        )

        def waited() -> list[te.TableHeld]:
            return [
                m.event
                for p in players
                for m in p.received
                if isinstance(m, sm.TableEvent) and isinstance(m.event, te.TableHeld)
            ]

        # each player's connection is read on its own: what the server sent them before the
        # burst may not all be read yet when the rail reads it
        await wait_until(
            lambda: (
                all(any(map(_tournament_event(tev.HandForHandStarted), p.received)) for p in players)
                and any(held.reason is HoldReason.HAND_FOR_HAND for held in waited())
            ),
            30,
            "every player told, and a table seen waiting",
        )
        runs.cancel()
        await asyncio.gather(runs, return_exceptions=True)
        await rail.drop()

        messages = rail.session
        started = _index(messages, _tournament_event(tev.HandForHandStarted))
        burst = _index(messages, _tournament_event(tev.BubbleBurst))
        assert 0 <= started < burst
        announcement = messages[started]
        assert isinstance(announcement, sm.TournamentEvent) and isinstance(
            announcement.event, tev.HandForHandStarted
        )
        assert announcement.event.places_paid == 3
        bubble = messages[burst]
        assert isinstance(bubble, sm.TournamentEvent) and isinstance(bubble.event, tev.BubbleBurst)
        assert (
            bubble.event.in_sync is harness.server.coordinators[tournament_id].director.bubble_burst_in_sync
        )
        # the rounds, as the director dealt them (its journal replayed): hands dealt by one input
        # under hand for hand make one round; a hand dealt before it began is not synchronized
        coordinator = harness.server.coordinators[tournament_id]
        assert coordinator.journal is not None
        pure = Director(
            parse_config(toml),
            start_at=coordinator.director.start_at,
            rng=random.Random(5),
            start_wall_seconds=int(coordinator.director.start_at),
            first_table_id=coordinator.number * 1_000_000 + 1,
        )
        round_of: dict[int, tuple[int, int]] = {}  # hand number -> (round, table)
        for index, value in enumerate(list(coordinator.journal)):
            for command in inputs.apply(pure, value):
                if isinstance(command, d.DealHand) and command.synchronized:
                    round_of[command.hand_number] = (index, command.table_id)
        # on the wire, in the order the rail got them: no table starts a hand of a round while
        # another table still plays a hand of an earlier round (or one dealt before the rounds)
        playing: dict[int, int | None] = {}
        synchronized = 0
        holds = 0
        for message in messages[:burst]:
            if isinstance(message, sm.TableSnapshot):
                playing[message.table_id] = message.hand_number if message.street is not None else None
            if not isinstance(message, sm.TableEvent):
                continue
            table, event = message.table_id, message.event
            if isinstance(event, te.HandStarted):
                number = event.hand_number
                if number in round_of:
                    synchronized += 1
                    dealt_round, dealt_table = round_of[number]
                    assert dealt_table == table, (number, dealt_table, table)
                    for other, hand in playing.items():
                        if other != table and hand is not None:
                            other_round = round_of.get(hand, (-1, other))[0]
                            assert other_round == dealt_round, (table, number, other, hand, round_of)
                playing[table] = number
            elif isinstance(event, te.HandEnded | te.TableClosed):
                playing[table] = None
            elif isinstance(event, te.TableHeld) and event.reason is HoldReason.HAND_FOR_HAND:
                holds += 1
        rounds = {dealt_round for dealt_round, _ in round_of.values()}
        assert synchronized >= 2 and holds >= 1, (synchronized, rounds, holds)
