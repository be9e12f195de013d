"""The events a hand emits: its complete, ordered log.

Every event is a frozen value that says who may see it (``audience``):

- ``PUBLIC``: every player at the table and every spectator;
- one seat (``Audience.of_seat(seat)``): hole cards dealt to that seat, nobody else;
- ``OPERATOR``: the server and its operators only (the deck order and salt before the hand ends).

Invariant (DESIGN 4): no PUBLIC or other-seat event carries a hole card before that seat's cards
are shown at showdown (``CardsShown``, ``HandsShown``). Mucked cards stay hidden in the event
stream; the whole deck, mucked cards included, is published by ``DeckRevealed`` once the hand is
over, which is what makes the deal provably fair (see ``engine.fairness``).

A hand history (PHH, PokerStars text) is a rendering of this log.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from engine.betting import HandSetup, Street
from engine.cards import Card


class AudienceKind(StrEnum):
    PUBLIC = "public"
    SEAT = "seat"
    OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class Audience:
    """Who may see an event: everyone, one seat, or operators only."""

    kind: AudienceKind
    seat: int | None = None

    @classmethod
    def of_seat(cls, seat: int) -> Audience:
        return cls(AudienceKind.SEAT, seat)

    def includes(self, seat: int | None) -> bool:
        """Whether the player in ``seat`` (``None``: a spectator) may see it. Operators see all."""
        if self.kind is AudienceKind.PUBLIC:
            return True
        return self.kind is AudienceKind.SEAT and seat is not None and seat == self.seat


PUBLIC = Audience(AudienceKind.PUBLIC)
OPERATOR = Audience(AudienceKind.OPERATOR)


class ActionKind(StrEnum):
    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    BET = "bet"
    RAISE = "raise"


class BlindKind(StrEnum):
    SMALL = "small"
    BIG = "big"


class KillReason(StrEnum):
    """Why an operator killed a hand (PEN-1)."""

    PENALTY = "penalty"  # a sit-out penalty: the hand is killed at the deal (TDA R71)
    RULING = "ruling"  # a ruling during the hand, e.g. collusion or chip dumping (TDA R69)


class Event:
    """Base of all hand events; public unless a subclass says otherwise."""

    __slots__ = ()

    @property
    def audience(self) -> Audience:
        return PUBLIC

    def visible_to(self, seat: int | None) -> bool:
        """Whether the player in ``seat`` (``None``: a spectator) may receive this event."""
        return self.audience.includes(seat)


@dataclass(frozen=True, slots=True)
class HandStarted(Event):
    """The setup and the deck commitment, published before any card is dealt."""

    setup: HandSetup
    commitment: str  # sha256 hex of the deck and salt (engine.fairness.commit)


@dataclass(frozen=True, slots=True)
class DeckSealed(Event):
    """The deck order and salt, for the operator's record while the hand is being played."""

    deck: tuple[Card, ...]
    salt: bytes

    @property
    def audience(self) -> Audience:
        return OPERATOR


@dataclass(frozen=True, slots=True)
class AntePosted(Event):
    seat: int
    amount: int
    all_in: bool


@dataclass(frozen=True, slots=True)
class BlindPosted(Event):
    seat: int
    blind: BlindKind
    amount: int
    all_in: bool


@dataclass(frozen=True, slots=True)
class HoleCardsDealt(Event):
    """One seat's hole cards, visible to that seat only."""

    seat: int
    cards: tuple[Card, ...]

    @property
    def audience(self) -> Audience:
        return Audience.of_seat(self.seat)


class ActionTaken(tuple[Any, ...], Event):
    """A player's decision. ``amount`` is what this action put in; ``to_amount`` is the player's
    total bet on this street afterwards. ``timed_out``: the table acted for the player (CLK-2).

    A frozen value like every other event (same constructor, fields, ``==`` only with another
    ``ActionTaken`` of the same fields, hash, repr), but kept in a tuple rather than in dataclass
    slots: a hand builds one per action, and a tuple of seven is built in about half the time it
    takes to fill seven slots (feltd bench engine). The engine builds it with
    ``new_action_taken``, which skips the keyword handling of ``ActionTaken(...)``.
    """

    __slots__ = ()
    __match_args__ = ("seat", "street", "kind", "amount", "to_amount", "all_in", "timed_out")

    if TYPE_CHECKING:
        seat: int
        street: Street
        kind: ActionKind
        amount: int
        to_amount: int
        all_in: bool
        timed_out: bool

    def __new__(
        cls,
        seat: int,
        street: Street,
        kind: ActionKind,
        amount: int,
        to_amount: int,
        all_in: bool,
        timed_out: bool = False,
    ) -> ActionTaken:
        return _tuple_new(cls, (seat, street, kind, amount, to_amount, all_in, timed_out))

    def __getnewargs__(self) -> tuple[Any, ...]:  # copy and pickle call __new__ with the fields
        return tuple(self)

    # Not NotImplemented for other types: a plain tuple would then answer by its fields.
    def __eq__(self, other: object) -> bool:
        return type(other) is ActionTaken and _tuple_eq(self, other)

    def __ne__(self, other: object) -> bool:
        return type(other) is not ActionTaken or _tuple_ne(self, other)

    __hash__ = tuple.__hash__

    # Events are not ordered (as the dataclass events): no tuple comparison.
    def __lt__(self, other: object) -> bool:
        return NotImplemented

    __le__ = __gt__ = __ge__ = __lt__

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self.__match_args__, self, strict=True))
        return f"ActionTaken({fields})"


for _position, _name in enumerate(ActionTaken.__match_args__):
    # Read-only field accessors, as collections.namedtuple's.
    setattr(ActionTaken, _name, property(itemgetter(_position)))
del _position, _name

_tuple_new = tuple.__new__
_tuple_eq = tuple.__eq__
_tuple_ne = tuple.__ne__


def new_action_taken(
    seat: int,
    street: Street,
    kind: ActionKind,
    amount: int,
    to_amount: int,
    all_in: bool,
    timed_out: bool,
) -> ActionTaken:
    """``ActionTaken(...)`` with all seven fields given positionally, without the constructor's
    call: the hand engine builds one for every action. It checks nothing: the engine passes
    values it computed."""
    return _tuple_new(ActionTaken, (seat, street, kind, amount, to_amount, all_in, timed_out))


@dataclass(frozen=True, slots=True)
class HandKilled(Event):
    """An operator killed ``seat``'s hand (PEN-1): it is folded at once, even out of turn, and its
    chips in the pot stay there as dead money. Public, as a dealer announces it at a live table;
    it carries no card, and a killed hand is never shown."""

    seat: int
    street: Street
    reason: KillReason

    def __str__(self) -> str:
        return f"seat {self.seat}'s hand is killed ({self.reason})"


@dataclass(frozen=True, slots=True)
class StreetDealt(Event):
    street: Street
    cards: tuple[Card, ...]  # the cards dealt now
    board: tuple[Card, ...]  # the whole board after dealing them


@dataclass(frozen=True, slots=True)
class UncalledBetReturned(Event):
    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class ShownHand:
    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class HandsShown(Event):
    """All remaining hands turned face up at once: an all-in with no more betting possible (BET-4)."""

    hands: tuple[ShownHand, ...]


@dataclass(frozen=True, slots=True)
class CardsShown(Event):
    """A hand shown at showdown, in showdown order (BET-4)."""

    seat: int
    cards: tuple[Card, ...]
    description: str  # e.g. "Two Pair, Kings and Fives"


@dataclass(frozen=True, slots=True)
class CardsMucked(Event):
    """A hand that could not win anything, mucked unseen (BET-4)."""

    seat: int


@dataclass(frozen=True, slots=True)
class PotAwarded(Event):
    """One pot paid out. Pot 0 is the main pot, then side pots in the order they were formed.
    ``shares[i]`` goes to ``winners[i]``; winners are listed from the first seat left of the
    button, which is the one that receives any odd chips (BET-3)."""

    pot_index: int
    amount: int
    eligible: tuple[int, ...]
    winners: tuple[int, ...]
    shares: tuple[int, ...]
    description: str | None  # the winning hand; None when the pot was won uncontested


@dataclass(frozen=True, slots=True)
class DeckRevealed(Event):
    """The provably fair reveal, once the hand is over: anyone can check ``commit(deck, salt)``
    against the commitment published in ``HandStarted``."""

    deck: tuple[Card, ...]
    salt: bytes
    commitment: str


@dataclass(frozen=True, slots=True)
class HandEnded(Event):
    """The last event of every hand: each dealt-in seat's stack afterwards."""

    finishing_stacks: tuple[tuple[int, int], ...]  # (seat, stack), ascending seat order

    def stacks(self) -> dict[int, int]:
        return dict(self.finishing_stacks)


HandEvent = (
    HandStarted
    | DeckSealed
    | AntePosted
    | BlindPosted
    | HoleCardsDealt
    | ActionTaken
    | HandKilled
    | StreetDealt
    | UncalledBetReturned
    | HandsShown
    | CardsShown
    | CardsMucked
    | PotAwarded
    | DeckRevealed
    | HandEnded
)
