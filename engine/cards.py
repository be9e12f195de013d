"""Playing cards as plain ints, and their text form.

A card is an ``int`` in ``0..51``: ``card = rank * 4 + suit``.

- rank ``0..12`` stands for ``2 3 4 5 6 7 8 9 T J Q K A`` (so a higher rank is a higher card);
- suit ``0..3`` stands for ``c d h s``, which is also the tie-break order of the first-button draw
  (SEAT-2: spades > hearts > diamonds > clubs), so ``max(cards)`` is the draw winner.

Plain ints keep the evaluator's hot loop free of attribute lookups and make a deck a list of
small ints that serialises as is.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable

__all__ = [
    "FULL_DECK",
    "RANKS",
    "SUITS",
    "Card",
    "CardError",
    "card_str",
    "cards_str",
    "make_card",
    "parse_card",
    "parse_cards",
    "rank_of",
    "shuffled_deck",
    "suit_of",
]

Card = int

RANKS = "23456789TJQKA"
SUITS = "cdhs"

FULL_DECK: tuple[Card, ...] = tuple(range(52))

_RANK_INDEX = {symbol: index for index, symbol in enumerate(RANKS)}
_SUIT_INDEX = {symbol: index for index, symbol in enumerate(SUITS)}
_CARD_TEXT: tuple[str, ...] = tuple(RANKS[card >> 2] + SUITS[card & 3] for card in FULL_DECK)


class CardError(ValueError):
    """Card text (or a card int) that does not name one of the 52 cards."""


def make_card(rank: int, suit: int) -> Card:
    """The card of ``rank`` (0='2' .. 12='A') and ``suit`` (0='c' .. 3='s')."""
    if not 0 <= rank <= 12:
        raise CardError(f"rank must be 0..12 (2..A), got {rank}")
    if not 0 <= suit <= 3:
        raise CardError(f"suit must be 0..3 (c, d, h, s), got {suit}")
    return rank * 4 + suit


def rank_of(card: Card) -> int:
    """The rank of ``card``: 0 for a deuce .. 12 for an ace."""
    return card >> 2


def suit_of(card: Card) -> int:
    """The suit of ``card``: 0 clubs, 1 diamonds, 2 hearts, 3 spades."""
    return card & 3


def parse_card(text: str) -> Card:
    """The card named by two characters such as ``"As"`` or ``"td"``.

    The rank may be given in either case (``"t"`` and ``"T"`` both mean ten, ``"10"`` is also
    accepted); the suit is one of ``c d h s`` in either case. Raises ``CardError`` otherwise.
    """
    stripped = text.strip()
    if len(stripped) == 3 and stripped[:2] == "10":
        stripped = "T" + stripped[2]
    if len(stripped) != 2:
        raise CardError(f"a card is a rank and a suit such as 'As' or 'Td', got {text!r}")
    rank = _RANK_INDEX.get(stripped[0].upper())
    if rank is None:
        raise CardError(f"unknown rank {stripped[0]!r} in {text!r}; ranks are {RANKS}")
    suit = _SUIT_INDEX.get(stripped[1].lower())
    if suit is None:
        raise CardError(f"unknown suit {stripped[1]!r} in {text!r}; suits are {SUITS}")
    return rank * 4 + suit


def parse_cards(text: str) -> list[Card]:
    """The cards named in ``text``, e.g. ``"AsKd Tc"`` or ``"AsKdTc"``; whitespace and commas are
    ignored and ``"10"`` reads as ``"T"``. Raises ``CardError`` for anything that is not a
    sequence of two-character cards. Duplicates are kept as written (whether they
    are allowed is the caller's rule).
    """
    # "10" is never ambiguous: "1" is not a rank and "0" is not a suit.
    compact = "".join(text.replace(",", " ").split()).replace("10", "T")
    if len(compact) % 2:
        raise CardError(f"card text must be rank+suit pairs such as 'AsKd', got {text!r} (odd length)")
    return [parse_card(compact[index : index + 2]) for index in range(0, len(compact), 2)]


def card_str(card: Card) -> str:
    """The two-character name of ``card``, e.g. ``"As"``. Raises ``CardError`` for a non-card."""
    if not isinstance(card, int) or not 0 <= card <= 51:
        raise CardError(f"a card is an int 0..51, got {card!r}")
    return _CARD_TEXT[card]


def cards_str(cards: Iterable[Card], sep: str = "") -> str:
    """The names of ``cards`` joined by ``sep``, e.g. ``"AsKd"`` or with ``sep=" "`` ``"As Kd"``."""
    return sep.join(card_str(card) for card in cards)


def shuffled_deck(rng: random.Random | None = None) -> list[Card]:
    """A fresh list of all 52 cards in random order.

    ``rng`` makes the shuffle reproducible (tests, simulations); without it the shuffle uses the
    operating system's entropy (``secrets.SystemRandom``), as real money games require.
    """
    deck = list(FULL_DECK)
    (rng if rng is not None else secrets.SystemRandom()).shuffle(deck)
    return deck
