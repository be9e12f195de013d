"""Provably fair dealing: the deck commitment, the fixed deal order, and their verification.

Before the first card a hand publishes ``commit(deck, salt)``: the sha256 hex digest of the
bytes ``bytes(deck) + salt``, where ``bytes(deck)`` is one byte per card (0..51, ``rank*4+suit``)
in deck order and ``salt`` is 16 secret random bytes (they stop anyone from brute-forcing the
deck from the hash). When the hand is over the deck and salt are published (``DeckRevealed``);
anyone can recompute the hash and check, with the fixed deal order below, that every card dealt
came from that deck position: the deck was fixed before the deal and not changed during it.

DEAL ORDER (fixed; replays and the PHH importer rely on it): hole cards one at a time,
round-robin, starting with the first dealt-in seat clockwise after the button, 2 rounds for
hold'em (4 for Omaha); then for each of flop, turn and river one burn card, then the street's
cards (3, 1, 1). Cards are taken from the front of the deck.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.betting import HandSetup, Street
from engine.cards import Card
from engine.events import DeckRevealed, HandStarted, HoleCardsDealt, StreetDealt

SALT_BYTES = 16
DECK_SIZE = 52


class FairnessError(ValueError):
    """A deck or salt that cannot be committed to (wrong cards, repeated card, wrong salt size)."""


_CARDS = frozenset(range(DECK_SIZE))
_CARD_BYTES = bytes(range(DECK_SIZE))


def check_deck(deck: Sequence[Card], salt: bytes) -> bytes:
    """Raise ``FairnessError`` unless ``deck`` holds distinct cards 0..51 and ``salt`` is 16 bytes;
    return ``bytes(deck)``, the deck's part of the committed bytes (see ``commit``).

    A card is an int; an int-like (an IntEnum, a NumPy integer) counts as its value, a bool is
    refused (``True`` is not the three of clubs)."""
    if len(deck) > DECK_SIZE:
        raise FairnessError(f"a deck has at most {DECK_SIZE} cards, got {len(deck)}")
    # It runs for every hand replayed with a given deck, so the common case costs C-level
    # passes: bytes() takes ints 0..255 only, translate() leaves what is not a card 0..51, the
    # set finds a repeat, and a bool can hide only at the values 0 and 1.
    try:
        packed = bytes(deck)
    except (TypeError, ValueError):
        packed = b""
    if len(packed) != len(deck) or packed.translate(None, _CARD_BYTES):
        bad = next(c for c in deck if type(c) is not int or c not in _CARDS)
        raise FairnessError(f"cards are ints 0..51, got {bad!r}")
    if len(set(deck)) != len(packed):
        raise FairnessError("a card appears twice in the deck")
    for value in (0, 1):
        at = packed.find(value)
        if at >= 0 and isinstance(deck[at], bool):
            raise FairnessError(f"cards are ints 0..51, got {deck[at]!r}")
    if not isinstance(salt, bytes) or len(salt) != SALT_BYTES:
        raise FairnessError(f"the salt is {SALT_BYTES} bytes, got {salt!r}")
    return packed


def commit(deck: Sequence[Card], salt: bytes) -> str:
    """The commitment to ``deck`` under ``salt``: sha256(bytes(deck) + salt), as hex. Raises
    ``FairnessError`` for a deck or salt that ``check_deck`` refuses."""
    check_deck(deck, salt)
    return digest(deck, salt)


def digest(deck: Sequence[Card], salt: bytes) -> str:
    """``commit`` without the checks, for a deck and salt already checked."""
    return hashlib.sha256(bytes(deck) + salt).hexdigest()


def verify(commitment: str, deck: Sequence[Card], salt: bytes) -> bool:
    """Whether ``commitment`` is the commitment to ``deck`` under ``salt`` (False for a bad deck)."""
    try:
        expected = commit(deck, salt)
    except FairnessError:
        return False
    return hmac.compare_digest(expected, commitment)


@dataclass(frozen=True, slots=True)
class DealLayout:
    """Which deck position each dealt card comes from, for one hand's seats and button."""

    hole_positions: Mapping[int, tuple[int, ...]]  # seat -> deck positions of its hole cards
    burn_positions: tuple[int, ...]  # before flop, turn, river
    street_positions: Mapping[Street, tuple[int, ...]]  # flop (3), turn (1), river (1)

    @property
    def size(self) -> int:
        """How many deck cards a hand that reaches the river uses."""
        return sum(len(p) for p in self.hole_positions.values()) + len(self.burn_positions) + 5


def deal_order(seats: Sequence[int], button: int) -> tuple[int, ...]:
    """``seats`` (dealt in, any order) starting with the first one clockwise after ``button``."""
    ordered = sorted(seats)
    after = [seat for seat in ordered if seat > button]
    return tuple(after + [seat for seat in ordered if seat <= button])


def deal_layout(seats: Sequence[int], button: int, hole_card_count: int) -> DealLayout:
    """The deck positions of every card of a hand, following the documented deal order."""
    order = deal_order(seats, button)
    holes: dict[int, list[int]] = {seat: [] for seat in order}
    position = 0
    for _ in range(hole_card_count):
        for seat in order:
            holes[seat].append(position)
            position += 1
    burns: list[int] = []
    streets: dict[Street, tuple[int, ...]] = {}
    for street in (Street.FLOP, Street.TURN, Street.RIVER):
        burns.append(position)
        position += 1
        count = street.board_card_count
        streets[street] = tuple(range(position, position + count))
        position += count
    return DealLayout(
        hole_positions={seat: tuple(p) for seat, p in holes.items()},
        burn_positions=tuple(burns),
        street_positions=streets,
    )


def layout_for(setup: HandSetup) -> DealLayout:
    return deal_layout(setup.seat_numbers(), setup.button, setup.game.hole_card_count)


@dataclass(frozen=True, slots=True)
class FairnessReport:
    """The outcome of ``verify_history``: ``ok`` and, when not, every problem found."""

    ok: bool
    problems: tuple[str, ...]


def verify_history(events: Iterable[object]) -> FairnessReport:
    """Check a finished hand's public log: the revealed deck and salt hash to the commitment
    published at the start, and every hole card and board card dealt is the card at its deck
    position in the documented deal order. Hole cards are checked where the log holds them
    (an operator's full log); a public log checks the board."""
    started: HandStarted | None = None
    revealed: DeckRevealed | None = None
    holes: dict[int, tuple[Card, ...]] = {}
    streets: dict[Street, tuple[Card, ...]] = {}
    for event in events:
        if isinstance(event, HandStarted):
            started = event
        elif isinstance(event, DeckRevealed):
            revealed = event
        elif isinstance(event, HoleCardsDealt):
            holes[event.seat] = event.cards
        elif isinstance(event, StreetDealt):
            streets[event.street] = event.cards
    problems: list[str] = []
    if started is None:
        problems.append("no HandStarted event: nothing was committed to")
    if revealed is None:
        problems.append("no DeckRevealed event: the deck was never revealed")
    if started is None or revealed is None:
        return FairnessReport(False, tuple(problems))
    deck, salt = revealed.deck, revealed.salt
    if revealed.commitment != started.commitment:
        problems.append(
            f"the reveal names commitment {revealed.commitment}, the hand published {started.commitment}"
        )
    if not verify(started.commitment, deck, salt):
        problems.append("sha256(deck + salt) does not match the published commitment")
    layout = layout_for(started.setup)
    for seat, cards in sorted(holes.items()):
        positions = layout.hole_positions.get(seat)
        if positions is None:
            problems.append(f"hole cards dealt to seat {seat}, which is not dealt in")
            continue
        expected = _cards_at(deck, positions)
        if expected != cards:
            problems.append(f"seat {seat} got {cards}, the deck holds {expected} at its positions")
    for street, cards in streets.items():
        expected = _cards_at(deck, layout.street_positions[street])
        if expected != cards:
            problems.append(f"the {street} was {cards}, the deck holds {expected} at its positions")
    return FairnessReport(not problems, tuple(problems))


def _cards_at(deck: Sequence[Card], positions: Sequence[int]) -> tuple[Card, ...] | None:
    if positions and positions[-1] >= len(deck):
        return None
    return tuple(deck[p] for p in positions)
