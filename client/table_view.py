"""What a seated player knows about a table, kept from its stream: the hand under way (seats
dealt in, button, blinds, bets, pot, board, who folded, who raised) and the player's own cards.

A bot asks it for a ``Situation`` when its turn comes: the facts a strategy decides on, with
the position worked out from the button (how many players act after this seat before the
flop). It is rebuilt from scratch by a ``table_snapshot``, so a resumed or resynced stream never
leaves it half right.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol import table_events as te
from protocol.kinds import ActionKind, Street
from protocol.server_messages import TableSnapshot
from protocol.table_events import LegalView

__all__ = ["Situation", "TableView"]


@dataclass(frozen=True, slots=True)
class Situation:
    """One decision's facts (chips are the table's integer chips)."""

    hole: tuple[str, ...]  # this player's cards, e.g. ("As", "Kd"); empty if unknown
    board: tuple[str, ...]
    street: Street
    legal: LegalView
    pot: int  # every chip in the middle, this street's bets included
    stack: int  # chips behind
    bet: int  # this player's bet on this street
    big_blind: int
    players: int  # dealt in at the start of the hand
    opponents: int  # still in the hand besides this player
    behind: int  # players who act after this seat before the flop (0: the button); -1, -2: SB, BB
    raises: int  # bets and raises on this street so far (the big blind not counted)
    aggressor: bool  # this player made the last bet or raise before the flop
    limpers: int = 0  # before the flop, unraised: players who called the big blind

    @property
    def to_call(self) -> int:
        return self.legal.call_amount


@dataclass(slots=True)
class TableView:
    """One table as ``player`` follows it (see the module docstring)."""

    table_id: int
    player: str
    hand_number: int | None = None
    seat: int | None = None
    button: int | None = None
    big_blind: int = 0
    order: list[int] = field(default_factory=list)  # seats dealt in, from the small blind round
    stacks: dict[int, int] = field(default_factory=dict)
    bets: dict[int, int] = field(default_factory=dict)
    folded: set[int] = field(default_factory=set)
    collected: int = 0  # chips in the middle from earlier streets and antes
    board: list[str] = field(default_factory=list)
    street: Street | None = None
    hole: list[str] = field(default_factory=list)
    raises: int = 0
    preflop_aggressor: int | None = None
    away: bool = False

    def snapshot(self, snapshot: TableSnapshot) -> None:
        """Start again from ``snapshot``."""
        self.hand_number = snapshot.hand_number
        self.button = snapshot.button
        self.big_blind = snapshot.big_blind
        self.board = list(snapshot.board)
        self.street = snapshot.street
        self.collected = sum(snapshot.pots)
        self.stacks = {s.seat: s.stack for s in snapshot.seats}
        self.bets = {s.seat: s.bet for s in snapshot.seats if s.bet}
        self.seat = next((s.seat for s in snapshot.seats if s.player == self.player), None)
        mine = next((s for s in snapshot.seats if s.player == self.player), None)
        self.away = mine.away if mine is not None else False
        self.hole = (
            list(mine.cards) if mine is not None and mine.cards and snapshot.street is not None else []
        )
        playing = snapshot.street is not None
        self.order = (
            self._from_button([s.seat for s in snapshot.seats if s.in_hand or s.all_in]) if playing else []
        )
        self.folded = {s.seat for s in snapshot.seats if playing and not s.in_hand and not s.all_in}
        # how many raises there were is not in a snapshot: a bet bigger than the blind says one at least
        top = max(self.bets.values(), default=0)
        self.raises = 1 if top > (self.big_blind if self.street is Street.PREFLOP else 0) else 0
        self.preflop_aggressor = None

    def event(self, event: te.TableEventBody) -> None:
        """Apply one event of the table's stream."""
        if isinstance(event, te.HandStarted):
            self.hand_number = event.hand_number
            self.button = event.button
            self.big_blind = event.big_blind
            self.stacks = {s.seat: s.stack for s in event.seats}
            mine = next((s for s in event.seats if s.player == self.player), None)
            self.seat = None if mine is None else mine.seat
            if mine is not None:
                self.away = mine.away
            self.order = self._from_button([s.seat for s in event.seats])
            self.bets, self.folded, self.board, self.hole = {}, set(), [], []
            self.collected, self.raises, self.preflop_aggressor = 0, 0, None
            self.street = Street.PREFLOP
        elif isinstance(event, te.AntePosted):
            self.collected += event.amount
            self.stacks[event.seat] = event.stack
        elif isinstance(event, te.BlindPosted):
            self.bets[event.seat] = self.bets.get(event.seat, 0) + event.amount
            self.stacks[event.seat] = event.stack
        elif isinstance(event, te.HoleCards):
            if event.seat == self.seat and event.cards:
                self.hole = list(event.cards)
        elif isinstance(event, te.ActionTaken):
            self.bets[event.seat] = event.bet
            self.stacks[event.seat] = event.stack
            if event.action is ActionKind.FOLD:
                self.folded.add(event.seat)
            elif event.action in (ActionKind.BET, ActionKind.RAISE):
                self.raises += 1
                if event.street is Street.PREFLOP:
                    self.preflop_aggressor = event.seat
        elif isinstance(event, te.StreetDealt):
            self.board = list(event.board)
            self.collected = event.pot
            self.bets = {}
            self.raises = 0
            self.street = event.street
        elif isinstance(event, te.UncalledReturned):
            self.stacks[event.seat] = event.stack
        elif isinstance(event, te.HandKilled):
            self.folded.add(event.seat)
        elif isinstance(event, te.HandEnded):
            for entry in event.stacks:
                self.stacks[entry.seat] = entry.stack
            self.street, self.hole, self.bets = None, [], {}
        elif isinstance(event, te.SeatChanged):
            if event.player is None:
                self.stacks.pop(event.seat, None)
            else:
                self.stacks[event.seat] = event.stack
            if event.player == self.player:
                self.seat = event.seat
                self.away = event.away

    def _from_button(self, seats: list[int]) -> list[int]:
        """``seats`` in the order of the blinds: first the one after the button."""
        ordered = sorted(seats)
        if self.button is None or not ordered:
            return ordered
        after = [s for s in ordered if s > self.button]
        return after + [s for s in ordered if s <= self.button]

    def situation(self, legal: LegalView) -> Situation:
        """The facts of this player's decision now."""
        seat = self.seat
        players = len(self.order)
        if seat in self.order and players > 2:
            index = self.order.index(seat)
            behind = -1 if index == 0 else -2 if index == 1 else players - 1 - index
        elif seat in self.order:
            # heads-up the button posts the small blind and acts first before the flop
            behind = 0 if seat == self.button else -2
        else:
            behind = 0
        in_hand = [s for s in self.order if s not in self.folded]
        limpers = 0
        if self.street is Street.PREFLOP and self.raises == 0 and players >= 2:
            big_blind_seat = self.order[1] if players > 2 else next(s for s in self.order if s != self.button)
            limpers = sum(
                1
                for s in in_hand
                if s not in (seat, big_blind_seat) and self.bets.get(s, 0) >= self.big_blind
            )
        return Situation(
            hole=tuple(self.hole),
            board=tuple(self.board),
            street=self.street or Street.PREFLOP,
            legal=legal,
            pot=self.collected + sum(self.bets.values()),
            stack=self.stacks.get(seat, 0) if seat is not None else 0,
            bet=self.bets.get(seat, 0) if seat is not None else 0,
            big_blind=max(1, self.big_blind),
            players=players,
            opponents=max(0, len([s for s in in_hand if s != seat])),
            behind=behind,
            raises=self.raises,
            aggressor=seat is not None and self.preflop_aggressor == seat,
            limpers=limpers,
        )
