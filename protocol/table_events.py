"""What happens at a table: the ``event`` of a ``table_event``, and the records a table snapshot
and those events are made of.

Every table event has its place in the table's sequence (the ``seq`` of the ``table_event``
that carries it), and every recipient gets exactly one event for every ``seq``: where recipients
may not see the same thing, they get different copies of the same event. The copies differ in
two places only:

- ``hole_cards``: ``cards`` is the seat's cards in the copy for that seat (and for operators),
  ``None`` in everyone else's;
- ``turn``: ``legal`` is what the seat to act may do, in that seat's copy only.

Chips are integers; ``stack`` is always the chips a player has behind (not counting what they
have bet on this street), after the event.
"""

from __future__ import annotations

from typing import Annotated, get_args

import msgspec

from protocol.kinds import (
    ActionKind,
    AnteKind,
    BlindKind,
    Game,
    HoldReason,
    KillReason,
    Limit,
    SeatChange,
    Street,
)
from protocol.structs import Card, Count, Message, Millis, Positive, Record, Seat

Hex64 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]
Hex32 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{32}$")]


# --- records ------------------------------------------------------------------------------------


class LegalView(Record, frozen=True, kw_only=True):
    """What the seat to act may do. Fold only facing a bet (``can_fold``), check only facing none
    (``can_check``); ``call_amount`` is what a call puts in (0 when checking; less than the bet
    when the stack is short); ``min_raise_to``/``max_raise_to`` bound the total a bet or raise may
    reach this street (an all-in below the usual minimum shows as ``min_raise_to``), both
    ``None`` when no bet or raise is possible."""

    can_fold: bool
    can_check: bool
    call_amount: Count
    min_raise_to: Count | None
    max_raise_to: Count | None


class SeatStart(Record, frozen=True, kw_only=True):
    """A player dealt into a hand, with the stack they start it with."""

    seat: Seat
    player: str
    stack: Count
    away: bool


class SeatStack(Record, frozen=True, kw_only=True):
    seat: Seat
    stack: Count


class ShownCards(Record, frozen=True, kw_only=True):
    seat: Seat
    cards: list[Card]


class SeatView(Record, frozen=True, kw_only=True):
    """One occupied seat in a ``table_snapshot``. ``in_hand``: dealt into the hand under way and
    not folded. ``cards``: the seat's hole cards in the snapshot for that seat (and operators'),
    and in everyone's once they were shown; otherwise ``None``. ``time_banks``: banks left."""

    seat: Seat
    player: str
    stack: Count
    bet: Count
    in_hand: bool
    all_in: bool
    away: bool
    cards: list[Card] | None
    time_banks: Count


# --- events -------------------------------------------------------------------------------------


class HandStarted(Message, frozen=True, kw_only=True):
    """A hand begins: its number, positions, stakes, who is dealt in, and the deck commitment
    (sha256, hex) that ``deck_revealed`` lets anyone check once the hand is over. The button may
    be an empty seat (dead button); ``small_blind_seat`` is ``None`` when nobody posts it.
    Heads-up the button posts the small blind."""

    hand_number: Positive
    button: Seat
    small_blind_seat: Seat | None
    big_blind_seat: Seat
    small_blind: Count
    big_blind: Count
    ante: Count
    ante_kind: AnteKind
    limit: Limit
    game: Game
    seats: list[SeatStart]
    commitment: Hex64


class AntePosted(Message, frozen=True, kw_only=True):
    seat: Seat
    amount: Count
    stack: Count
    all_in: bool


class BlindPosted(Message, frozen=True, kw_only=True):
    seat: Seat
    blind: BlindKind
    amount: Count
    stack: Count
    all_in: bool


class HoleCards(Message, frozen=True, kw_only=True):
    """A seat was dealt its hole cards: ``cards`` in that seat's copy (and operators'), ``None``
    in everyone else's. One event per seat dealt in, in deal order."""

    seat: Seat
    cards: list[Card] | None


class ActionTaken(Message, frozen=True, kw_only=True):
    """A decision: ``amount`` is what it put in, ``bet`` the seat's total bet on this street
    afterwards, ``stack`` what is left behind. ``timed_out``: the table acted for the player
    (check, else fold) when their time ran out."""

    seat: Seat
    street: Street
    action: ActionKind
    amount: Count
    bet: Count
    stack: Count
    all_in: bool
    timed_out: bool


class Turn(Message, frozen=True, kw_only=True):
    """``seat`` is to act until ``deadline_ms`` (its shot clock; its time banks start by
    themselves after it, each announced by ``time_bank_used``). ``time_banks`` is how many it has
    left. ``legal`` only in the copy for that seat."""

    seat: Seat
    deadline_ms: Millis
    time_banks: Count
    legal: LegalView | None


class TimeBankUsed(Message, frozen=True, kw_only=True):
    """A time bank of ``seat`` started (by itself or asked for): the new deadline and the banks left."""

    seat: Seat
    deadline_ms: Millis
    time_banks: Count


class StreetDealt(Message, frozen=True, kw_only=True, tag="street"):
    """The flop, turn or river: the ``cards`` dealt now, the whole ``board``, and ``pot``: every
    chip in the middle (bets of earlier streets, antes and dead money)."""

    street: Street
    cards: list[Card]
    board: list[Card]
    pot: Count


class UncalledReturned(Message, frozen=True, kw_only=True):
    """The part of a bet nobody called goes back to ``seat``."""

    seat: Seat
    amount: Count
    stack: Count


class HandsShown(Message, frozen=True, kw_only=True):
    """Every hand still in is turned face up at once (an all-in with no betting left)."""

    hands: list[ShownCards]


class CardsShown(Message, frozen=True, kw_only=True):
    """A hand shown at showdown, in showdown order; ``description`` names it (``"Two Pair, Kings
    and Fives"``)."""

    seat: Seat
    cards: list[Card]
    description: str


class CardsMucked(Message, frozen=True, kw_only=True):
    """A hand that could not win anything was mucked unseen."""

    seat: Seat


class HandKilled(Message, frozen=True, kw_only=True):
    """``seat``'s hand is folded by the table (a penalty at the deal, or an operator's ruling);
    its chips stay in the pot and its cards are never shown."""

    seat: Seat
    reason: KillReason


class PotAwarded(Message, frozen=True, kw_only=True):
    """One pot paid: pot 0 is the main pot, then the side pots in the order they formed.
    ``shares[i]`` goes to ``winners[i]``; ``description`` is the winning hand, ``None`` when
    everyone else folded."""

    pot_index: Count
    amount: Count
    winners: list[Seat]
    shares: list[Count]
    description: str | None


class HandEnded(Message, frozen=True, kw_only=True):
    """The hand is over: every dealt-in seat's stack (0: the player is out of chips)."""

    stacks: list[SeatStack]


class DeckRevealed(Message, frozen=True, kw_only=True):
    """After the hand (never before): the deck in order and the salt, so anyone can check that
    ``sha256(deck bytes + salt bytes)`` is the ``commitment`` of ``hand_started`` (docs/protocol.md
    says how)."""

    deck: list[Card]
    salt: Hex32
    commitment: Hex64


class SeatChanged(Message, frozen=True, kw_only=True):
    """Something changed at ``seat``; the fields are the seat after the change (``player``
    ``None`` and ``stack`` 0 when it is now empty). Seats and stacks change between hands only;
    ``away`` and ``back`` may come at any moment."""

    seat: Seat
    change: SeatChange
    player: str | None
    stack: Count
    away: bool


class TableHeld(Message, frozen=True, kw_only=True):
    """The table deals no hand for ``reason``, until ``until_ms`` when that is known. The hold
    ends with the next ``hand_started`` (or another ``table_held``, or ``table_closed``)."""

    reason: HoldReason
    until_ms: Millis | None


class TableClosed(Message, frozen=True, kw_only=True):
    """The last event of a table: it broke (its players were moved) or the tournament ended."""


TableEventBody = (
    HandStarted
    | AntePosted
    | BlindPosted
    | HoleCards
    | ActionTaken
    | Turn
    | TimeBankUsed
    | StreetDealt
    | UncalledReturned
    | HandsShown
    | CardsShown
    | CardsMucked
    | HandKilled
    | PotAwarded
    | HandEnded
    | DeckRevealed
    | SeatChanged
    | TableHeld
    | TableClosed
)

TABLE_EVENT_TYPES: tuple[type[Message], ...] = get_args(TableEventBody)
"""Every table event class, in the order of the union."""
