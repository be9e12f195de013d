"""The one place privacy is decided: a table's engine events and state, as each audience sees them
on the wire (``protocol`` messages).

Audiences (``Audience``):

- ``Audience.seat(n)``: the player in seat ``n``. Sees their own hole cards from the deal, the
  legal actions when it is their turn (``turn.legal``, ``table_snapshot.legal``), and everything
  public.
- ``Audience.players``: the other players at the table, and ``Audience.rail``: observers. Both see
  exactly the same: no hole card before it is shown at a showdown (``cards_shown``,
  ``hands_shown``), no legal actions, never a mucked hand. They are two names for one view so
  that a later rail-only rule (a delay against ghosting, say) has its place; today the table
  actor may encode one frame for both.
- ``Audience.operators``: every hole card as it is dealt (to supervise: collusion, chip dumping),
  but never the deck or the salt before the hand is over (DESIGN 4: the deck order never leaves
  the server before it is used): the engine's ``DeckSealed`` is never mapped at all; the deck
  reaches everyone, operators included, in ``deck_revealed`` after the hand. Operators get no
  ``legal``: they do not act.

Every audience receives exactly one event for each engine event except ``DeckSealed`` (which
has no wire form), so the table's ``seq`` numbers are the same for everyone and nobody sees a
gap; where audiences differ (``hole_cards``, ``turn``) they get different copies of the same
event. ``Views`` holds the copies of one event and shares them: ``Views.map`` applies a function
once per distinct copy, so the table actor wraps an event in a ``table_event`` and encodes it
once per copy, not once per connection.

``HandViews`` follows one hand's events (``Hand.events_since``) and gives each its ``Views``; it
keeps each seat's stack and the pot as the events go, because the engine's events carry the
amounts but not the stacks after them, and a batch of events (an action that ends the hand) is
read after the hand has moved on. ``snapshot`` builds a ``table_snapshot`` for one audience from
a ``Hand`` in progress and/or the ``Table``. Nothing here does I/O, reads a clock or awaits:
times come in as arguments (``deadline_ms``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar

from engine import betting, events
from engine.cards import FULL_DECK, Card, card_str
from engine.hand import Hand, LegalActions
from engine.table import SeatedPlayer, Table
from engine.tournament.director import HoldReason as EngineHoldReason
from protocol import kinds
from protocol import table_events as wire
from protocol.server_messages import TableSnapshot

__all__ = [
    "Audience",
    "HandViews",
    "TableState",
    "Viewer",
    "Views",
    "cards",
    "hold_reason",
    "legal_view",
    "public",
    "seat_changed",
    "snapshot",
    "table_held",
    "turn",
]

T = TypeVar("T")
U = TypeVar("U")


class Viewer(StrEnum):
    SEAT = "seat"
    PLAYERS = "players"
    RAIL = "rail"
    OPERATORS = "operators"


@dataclass(frozen=True, slots=True)
class Audience:
    """Who receives a view: one seat's player, the other players, the rail, or operators."""

    viewer: Viewer
    seat_number: int | None = None

    players: ClassVar[Audience]
    rail: ClassVar[Audience]
    operators: ClassVar[Audience]

    @classmethod
    def seat(cls, seat: int) -> Audience:
        """The player in ``seat``."""
        return cls(Viewer.SEAT, seat)

    def sees_cards_of(self, seat: int) -> bool:
        """Whether this audience sees ``seat``'s hole cards before they are shown."""
        return self.viewer is Viewer.OPERATORS or (self.viewer is Viewer.SEAT and self.seat_number == seat)


Audience.players = Audience(Viewer.PLAYERS)
Audience.rail = Audience(Viewer.RAIL)
Audience.operators = Audience(Viewer.OPERATORS)


class Views(Generic[T]):
    """The copies of one thing for every audience: ``public`` for the other players and the rail,
    ``owner`` for the player in ``owner_seat`` (the same object as ``public`` when no seat sees
    more), ``operators`` for operators. Copies that do not differ are the same object."""

    __slots__ = ("operators", "owner", "owner_seat", "public")

    def __init__(
        self, public: T, owner_seat: int | None = None, owner: T | None = None, operators: T | None = None
    ):
        self.public = public
        self.owner_seat = owner_seat
        self.owner: T = public if owner is None else owner
        self.operators: T = public if operators is None else operators

    def for_audience(self, audience: Audience) -> T:
        viewer = audience.viewer
        if viewer is Viewer.SEAT:
            return self.owner if audience.seat_number == self.owner_seat else self.public
        if viewer is Viewer.OPERATORS:
            return self.operators
        return self.public

    @property
    def shared(self) -> bool:
        """Whether every audience gets the very same copy."""
        return self.owner is self.public and self.operators is self.public

    def map(self, function: Callable[[T], U]) -> Views[U]:
        """``function`` applied once per distinct copy (wrap in a ``table_event``, then encode)."""
        public = function(self.public)
        owner = public if self.owner is self.public else function(self.owner)
        if self.operators is self.public:
            operators = public
        elif self.operators is self.owner:
            operators = owner
        else:
            operators = function(self.operators)
        return Views(public, self.owner_seat, owner, operators)

    def __repr__(self) -> str:
        if self.shared:
            return f"Views({self.public!r})"
        return (
            f"Views(public={self.public!r}, owner_seat={self.owner_seat}, owner={self.owner!r},"
            f" operators={self.operators!r})"
        )


def public(body: wire.TableEventBody) -> Views[wire.TableEventBody]:
    """An event every audience sees alike."""
    return Views(body)


# --- engine words -> wire words -------------------------------------------------------------------

_CARD_NAMES: tuple[str, ...] = tuple(card_str(card) for card in FULL_DECK)
_ACTIONS = {kind: kinds.ActionKind(kind.value) for kind in events.ActionKind}
_STREETS = {street: kinds.Street(street.value) for street in betting.Street}
_BLINDS = {blind: kinds.BlindKind(blind.value) for blind in events.BlindKind}
_KILLS = {reason: kinds.KillReason(reason.value) for reason in events.KillReason}
_ANTES = {
    betting.AnteKind.NONE: kinds.AnteKind.NONE,
    betting.AnteKind.EACH: kinds.AnteKind.EACH,
    betting.AnteKind.BIG_BLIND: kinds.AnteKind.BIG_BLIND,
}
_LIMITS = {
    betting.Limit.NO_LIMIT: kinds.Limit.NO_LIMIT,
    betting.Limit.POT_LIMIT: kinds.Limit.POT_LIMIT,
    betting.Limit.FIXED_LIMIT: kinds.Limit.FIXED_LIMIT,
}
_GAMES = {game: kinds.Game(game.value) for game in betting.Game}
_HOLDS = {reason: kinds.HoldReason(reason.value.replace("-", "_")) for reason in EngineHoldReason}


def cards(values: Iterable[Card]) -> list[str]:
    """Engine cards (ints 0..51) as wire cards (``"As"``)."""
    names = _CARD_NAMES
    return [names[card] for card in values]


def hold_reason(reason: EngineHoldReason) -> kinds.HoldReason:
    return _HOLDS[reason]


def legal_view(legal: LegalActions) -> wire.LegalView:
    return wire.LegalView(
        can_fold=legal.can_fold,
        can_check=legal.can_check,
        call_amount=legal.call_amount,
        min_raise_to=legal.min_raise_to,
        max_raise_to=legal.max_raise_to,
    )


# --- events the table actor makes ---------------------------------------------------------------


def turn(legal: LegalActions, *, deadline_ms: int, time_banks: int) -> Views[wire.TableEventBody]:
    """``legal.seat`` is to act until ``deadline_ms`` with ``time_banks`` banks left: what it may do
    goes to that seat only."""
    seat = legal.seat
    everyone = wire.Turn(seat=seat, deadline_ms=deadline_ms, time_banks=time_banks, legal=None)
    own = wire.Turn(seat=seat, deadline_ms=deadline_ms, time_banks=time_banks, legal=legal_view(legal))
    return Views(everyone, seat, own)


def seat_changed(
    seat: int, change: kinds.SeatChange, seated: SeatedPlayer | None, *, away: bool | None = None
) -> Views[wire.TableEventBody]:
    """``seat`` after ``change`` between hands: ``seated`` is who sits there now (``None``: empty);
    ``away`` overrides the seated player's absent flag."""
    if seated is None:
        return Views(wire.SeatChanged(seat=seat, change=change, player=None, stack=0, away=False))
    return Views(
        wire.SeatChanged(
            seat=seat,
            change=change,
            player=seated.player,
            stack=seated.stack,
            away=seated.absent if away is None else away,
        )
    )


def table_held(reason: EngineHoldReason, until_ms: int | None) -> Views[wire.TableEventBody]:
    return Views(wire.TableHeld(reason=_HOLDS[reason], until_ms=until_ms))


# --- a hand's events ------------------------------------------------------------------------------


class HandViews:
    """Follows one hand's events, in order, from its ``HandStarted``, and gives each its views.

    ``views(event)`` returns ``None`` for the engine's ``DeckSealed`` (never sent) and the
    ``Views`` of every other event. Feed it every event of the hand exactly once (what
    ``Hand.events_since`` returns), whatever the audiences connected: the stacks it reports
    depend on the events before."""

    __slots__ = ("_hand_number", "_pot", "_stacks")

    def __init__(self, hand_number: int) -> None:
        self._hand_number = hand_number
        self._stacks: dict[int, int] = {}
        self._pot = 0

    @property
    def hand_number(self) -> int:
        return self._hand_number

    @property
    def stacks(self) -> dict[int, int]:
        """Each dealt-in seat's stack after the events seen so far (a copy)."""
        return dict(self._stacks)

    @property
    def pot(self) -> int:
        """Every chip in the middle after the events seen so far."""
        return self._pot

    def views(self, event: events.HandEvent) -> Views[wire.TableEventBody] | None:
        handler = _HANDLERS.get(type(event))
        if handler is None:
            raise TypeError(f"not a hand event: {event!r}")
        return handler(self, event)

    def _bet(self, seat: int, amount: int) -> int:
        """``seat`` put ``amount`` in the middle; its stack after."""
        stack = self._stacks[seat] - amount
        self._stacks[seat] = stack
        self._pot += amount
        return stack

    def _hand_started(self, event: events.HandStarted) -> Views[wire.TableEventBody]:
        setup = event.setup
        self._stacks = {entry.seat: entry.stack for entry in setup.seats}
        self._pot = 0
        return Views(
            wire.HandStarted(
                hand_number=self._hand_number,
                button=setup.button,
                small_blind_seat=setup.small_blind_seat,
                big_blind_seat=setup.big_blind_seat,
                small_blind=setup.small_blind,
                big_blind=setup.big_blind,
                ante=setup.ante,
                ante_kind=_ANTES[setup.ante_kind],
                limit=_LIMITS[setup.limit],
                game=_GAMES[setup.game],
                seats=[
                    wire.SeatStart(seat=entry.seat, player=entry.player, stack=entry.stack, away=entry.absent)
                    for entry in setup.seats
                ],
                commitment=event.commitment,
            )
        )

    def _deck_sealed(self, event: events.DeckSealed) -> None:
        return None  # the deck before it is used never leaves the server, not even to operators

    def _ante_posted(self, event: events.AntePosted) -> Views[wire.TableEventBody]:
        stack = self._bet(event.seat, event.amount)
        return Views(wire.AntePosted(seat=event.seat, amount=event.amount, stack=stack, all_in=event.all_in))

    def _blind_posted(self, event: events.BlindPosted) -> Views[wire.TableEventBody]:
        stack = self._bet(event.seat, event.amount)
        return Views(
            wire.BlindPosted(
                seat=event.seat,
                blind=_BLINDS[event.blind],
                amount=event.amount,
                stack=stack,
                all_in=event.all_in,
            )
        )

    def _hole_cards(self, event: events.HoleCardsDealt) -> Views[wire.TableEventBody]:
        seat = event.seat
        hidden = wire.HoleCards(seat=seat, cards=None)
        shown = wire.HoleCards(seat=seat, cards=cards(event.cards))
        return Views(hidden, seat, shown, shown)

    def _action_taken(self, event: events.ActionTaken) -> Views[wire.TableEventBody]:
        seat, street, kind, amount, to_amount, all_in, timed_out = event
        return Views(
            wire.ActionTaken(
                seat=seat,
                street=_STREETS[street],
                action=_ACTIONS[kind],
                amount=amount,
                bet=to_amount,
                stack=self._bet(seat, amount),
                all_in=all_in,
                timed_out=timed_out,
            )
        )

    def _hand_killed(self, event: events.HandKilled) -> Views[wire.TableEventBody]:
        return Views(wire.HandKilled(seat=event.seat, reason=_KILLS[event.reason]))

    def _street_dealt(self, event: events.StreetDealt) -> Views[wire.TableEventBody]:
        return Views(
            wire.StreetDealt(
                street=_STREETS[event.street],
                cards=cards(event.cards),
                board=cards(event.board),
                pot=self._pot,
            )
        )

    def _uncalled_returned(self, event: events.UncalledBetReturned) -> Views[wire.TableEventBody]:
        stack = self._bet(event.seat, -event.amount)
        return Views(wire.UncalledReturned(seat=event.seat, amount=event.amount, stack=stack))

    def _hands_shown(self, event: events.HandsShown) -> Views[wire.TableEventBody]:
        return Views(
            wire.HandsShown(
                hands=[wire.ShownCards(seat=hand.seat, cards=cards(hand.cards)) for hand in event.hands]
            )
        )

    def _cards_shown(self, event: events.CardsShown) -> Views[wire.TableEventBody]:
        return Views(
            wire.CardsShown(seat=event.seat, cards=cards(event.cards), description=event.description)
        )

    def _cards_mucked(self, event: events.CardsMucked) -> Views[wire.TableEventBody]:
        return Views(wire.CardsMucked(seat=event.seat))

    def _pot_awarded(self, event: events.PotAwarded) -> Views[wire.TableEventBody]:
        for seat, share in zip(event.winners, event.shares, strict=True):
            self._bet(seat, -share)
        return Views(
            wire.PotAwarded(
                pot_index=event.pot_index,
                amount=event.amount,
                winners=list(event.winners),
                shares=list(event.shares),
                description=event.description,
            )
        )

    def _deck_revealed(self, event: events.DeckRevealed) -> Views[wire.TableEventBody]:
        return Views(
            wire.DeckRevealed(deck=cards(event.deck), salt=event.salt.hex(), commitment=event.commitment)
        )

    def _hand_ended(self, event: events.HandEnded) -> Views[wire.TableEventBody]:
        self._stacks = dict(event.finishing_stacks)
        return Views(
            wire.HandEnded(
                stacks=[wire.SeatStack(seat=seat, stack=stack) for seat, stack in event.finishing_stacks]
            )
        )


# By the event's exact type: one dict lookup per event.
_HANDLERS: dict[type, Callable[[HandViews, Any], Views[wire.TableEventBody] | None]] = {
    events.HandStarted: HandViews._hand_started,
    events.DeckSealed: HandViews._deck_sealed,
    events.AntePosted: HandViews._ante_posted,
    events.BlindPosted: HandViews._blind_posted,
    events.HoleCardsDealt: HandViews._hole_cards,
    events.ActionTaken: HandViews._action_taken,
    events.HandKilled: HandViews._hand_killed,
    events.StreetDealt: HandViews._street_dealt,
    events.UncalledBetReturned: HandViews._uncalled_returned,
    events.HandsShown: HandViews._hands_shown,
    events.CardsShown: HandViews._cards_shown,
    events.CardsMucked: HandViews._cards_mucked,
    events.PotAwarded: HandViews._pot_awarded,
    events.DeckRevealed: HandViews._deck_revealed,
    events.HandEnded: HandViews._hand_ended,
}


# --- snapshots ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableState:
    """What the table actor knows beside the engine's ``Table`` and ``Hand``: the table's place in
    its tournament, the ``seq`` of the last event sent, the level, the clock, and the seats'
    time banks and away flags as they are now."""

    table_id: int
    tournament_id: str
    seq: int
    level: int
    small_blind: int
    big_blind: int
    ante: int = 0
    ante_kind: betting.AnteKind = betting.AnteKind.NONE
    hand_number: int | None = None  # the hand under way (or just over)
    deadline_ms: int | None = None  # when the seat to act runs out of time
    time_banks: Mapping[int, int] = field(default_factory=dict)  # seat -> banks left
    away: frozenset[int] | None = None  # seats away now; None: as the hand was dealt (or the table says)
    hold_reason: EngineHoldReason | None = None
    hold_until_ms: int | None = None
    closed: bool = False


def snapshot(
    audience: Audience, state: TableState, *, table: Table | None = None, hand: Hand | None = None
) -> TableSnapshot:
    """The ``table_snapshot`` ``audience`` may see: from ``hand`` (in progress, or over but not
    yet applied to the table) and/or ``table`` (between hands, and the seats not dealt in).
    Hole cards: the audience's own seat's (operators: all) and those shown at a showdown;
    ``legal``: only for the seat to act, in its own snapshot. Raises ``ValueError`` when neither
    a table nor a hand is given."""
    if hand is None:
        if table is None:
            raise ValueError("a snapshot needs the table, the hand, or both")
        return _between_hands(audience, state, table)
    setup = hand.setup
    occupants: tuple[SeatedPlayer, ...] = (
        table.players
        if table is not None
        else tuple(SeatedPlayer(entry.seat, entry.player, entry.stack, entry.absent) for entry in setup.seats)
    )
    away = state.away
    banks = state.time_banks
    dealt = {entry.seat: entry for entry in setup.seats}
    stacks = hand.stacks
    bets = hand.bets
    shown = _shown_cards(hand)
    seats: list[wire.SeatView] = []
    for seated in occupants:
        seat = seated.seat
        entry = dealt.get(seat)
        seen: list[str] | None = None
        if entry is None:  # seated but not dealt in (waiting for the button to pass)
            in_hand = all_in = False
            stack, bet, absent = seated.stack, 0, seated.absent
        else:
            in_hand = not hand.has_folded(seat)
            stack, bet, absent = stacks[seat], bets[seat], entry.absent
            all_in = in_hand and stack == 0
            seen = cards(hand.hole_cards(seat)) if audience.sees_cards_of(seat) else shown.get(seat)
        seats.append(
            wire.SeatView(
                seat=seat,
                player=seated.player,
                stack=stack,
                bet=bet,
                in_hand=in_hand,
                all_in=all_in,
                away=absent if away is None else seat in away,
                cards=seen,
                time_banks=banks.get(seat, 0),
            )
        )
    over = hand.is_over
    actor = hand.actor
    legal = None
    if actor is not None and audience.viewer is Viewer.SEAT and audience.seat_number == actor:
        turn_now = hand.turn()
        legal = None if turn_now is None else legal_view(turn_now)
    size = table.size if table is not None else setup.table_size
    return TableSnapshot(
        table_id=state.table_id,
        seq=state.seq,
        tournament_id=state.tournament_id,
        table_size=size,
        status=_status(state, playing=not over),
        hold_reason=None if state.hold_reason is None else _HOLDS[state.hold_reason],
        hold_until_ms=state.hold_until_ms,
        level=state.level,
        small_blind=setup.small_blind,
        big_blind=setup.big_blind,
        ante=setup.ante,
        ante_kind=_ANTES[setup.ante_kind],
        limit=_LIMITS[setup.limit],
        game=_GAMES[setup.game],
        hand_number=state.hand_number,
        button=setup.button,
        seats=seats,
        pots=[] if over else [pot.amount for pot in hand.pots()],
        board=cards(hand.board),
        street=None if over else _STREETS[hand.street],
        to_act=actor,
        deadline_ms=state.deadline_ms if actor is not None else None,
        legal=legal,
        commitment=hand.commitment,
    )


def _between_hands(audience: Audience, state: TableState, table: Table) -> TableSnapshot:
    """No hand: the seats as the table has them, no cards, no pot (``audience`` sees what all see)."""
    away = state.away
    banks = state.time_banks
    seats = [
        wire.SeatView(
            seat=seated.seat,
            player=seated.player,
            stack=seated.stack,
            bet=0,
            in_hand=False,
            all_in=False,
            away=seated.absent if away is None else seated.seat in away,
            cards=None,
            time_banks=banks.get(seated.seat, 0),
        )
        for seated in table.players
    ]
    settings = table.settings
    last = table.last_positions
    return TableSnapshot(
        table_id=state.table_id,
        seq=state.seq,
        tournament_id=state.tournament_id,
        table_size=settings.size,
        status=_status(state, playing=False),
        hold_reason=None if state.hold_reason is None else _HOLDS[state.hold_reason],
        hold_until_ms=state.hold_until_ms,
        level=state.level,
        small_blind=state.small_blind,
        big_blind=state.big_blind,
        ante=state.ante,
        ante_kind=_ANTES[state.ante_kind],
        limit=_LIMITS[settings.limit],
        game=_GAMES[settings.game],
        hand_number=state.hand_number,
        button=None if last is None else last.button,
        seats=seats,
        pots=[],
        board=[],
        street=None,
        to_act=None,
        deadline_ms=None,
        legal=None,
        commitment=None,
    )


def _status(state: TableState, *, playing: bool) -> kinds.TableStatus:
    if playing:
        return kinds.TableStatus.PLAYING
    if state.closed:
        return kinds.TableStatus.CLOSED
    if state.hold_reason is not None:
        return kinds.TableStatus.HELD
    return kinds.TableStatus.IDLE


def _shown_cards(hand: Hand) -> dict[int, list[str]]:
    """The hole cards each seat has shown so far in ``hand`` (at a showdown, or all-in face up)."""
    shown: dict[int, list[str]] = {}
    for event in hand.events:
        if type(event) is events.CardsShown:
            shown[event.seat] = cards(event.cards)
        elif type(event) is events.HandsShown:
            for entry in event.hands:
                shown[entry.seat] = cards(entry.cards)
    return shown
