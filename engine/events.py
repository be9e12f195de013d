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
from typing import Any

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


@dataclass(frozen=True, slots=True)
class ActionTaken(Event):
    """A player's decision. ``amount`` is what this action put in; ``to_amount`` is the player's
    total bet on this street afterwards. ``timed_out``: the table acted for the player (CLK-2)."""

    seat: int
    street: Street
    kind: ActionKind
    amount: int
    to_amount: int
    all_in: bool
    timed_out: bool = False


class ActionDraft(Event):
    """An ``ActionTaken`` being built: the very same slots in the same order, so the same memory
    layout, but without the frozen ``__setattr__``. The hand engine builds every action's event
    as a draft (plain slot stores, the cheapest way to fill seven slots) and then turns it into an
    ``ActionTaken`` by assigning ``__class__``, which CPython allows exactly because the layouts
    are the same (and checks). The result is an ordinary frozen ``ActionTaken``: same type,
    fields, equality, hash and immutability. Never hand a draft out."""

    __slots__ = ActionTaken.__slots__  # the same names in the same order: the same layout
    seat: int
    street: Street
    kind: ActionKind
    amount: int
    to_amount: int
    all_in: bool
    timed_out: bool


def new_action_taken(
    seat: int,
    street: Street,
    kind: ActionKind,
    amount: int,
    to_amount: int,
    all_in: bool,
    timed_out: bool,
) -> ActionTaken:
    """A function equal to ``ActionTaken(...)`` with all seven fields given positionally, that
    builds the very same frozen value as an ``ActionDraft`` (see there) instead of through the
    frozen dataclass ``__init__`` (which pays an ``object.__setattr__`` call per field, about 4x
    the cost): the hand engine builds one for every action. It checks nothing: the engine passes
    values it computed."""
    event: Any = _new(ActionDraft)
    event.seat = seat
    event.street = street
    event.kind = kind
    event.amount = amount
    event.to_amount = to_amount
    event.all_in = all_in
    event.timed_out = timed_out
    event.__class__ = ActionTaken
    result: ActionTaken = event
    return result


_new = object.__new__


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
