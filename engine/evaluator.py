"""Poker hand values: the best five-card high hand out of 5, 6 or 7 cards as one int.

Higher values win and equal values are exact ties, so a showdown (BET-3, BET-4) only compares
ints. ``category(value)`` and ``describe(value)`` turn a value back into words for hand
histories and the table view.

How it is fast (>= 1,000,000 seven-card evaluations per second in pure Python): each card
has a precomputed key; ONE sum of the keys yields both a key unique to the multiset of ranks
and four suit counters that flag a flush (layout in ``engine.evaluator_tables``). Without a
flush, which is ~97% of seven-card hands, the value is one dict lookup; with one, it is the
rank mask of the flush suit looked up in an 8192-entry list. The tables are read at import
from the shipped ``evaluator_tables.bin``.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence
from itertools import combinations
from typing import cast

from engine.cards import Card
from engine.evaluator_tables import (
    CATEGORY_SHIFT,
    FLUSH_BITS,
    LOOKUP_MASK,
    SUIT_OFFSET,
    SUIT_SHIFT,
    card_key,
    load_tables,
)

__all__ = [
    "EvaluationError",
    "HandCategory",
    "category",
    "describe",
    "evaluate",
    "evaluate7",
    "evaluate_omaha",
    "ranks_of_value",
]


class EvaluationError(ValueError):
    """Cards that cannot be evaluated: wrong count, a repeated card, or not a card at all."""


class HandCategory(enum.IntEnum):
    """Hand categories from worst to best; ``category(a) < category(b)`` compares them."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8


def _read_shipped_tables() -> bytes:
    # The one read this module does: package data shipped beside it. A plain path rather than
    # importlib.resources, whose import alone costs more than loading the tables.
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "evaluator_tables.bin"), "rb") as file:
        return file.read()


_TABLES = load_tables(_read_shipped_tables())
_RANK_VALUES = _TABLES.rank_values
_FLUSH_VALUES = _TABLES.flush_values
# 52 real keys, then 52 Nones: an index of 52..103 or -1..-52 (a negative int would otherwise
# wrap around to a real card) reaches a None and fails the sum with TypeError, which ``evaluate``
# turns into an EvaluationError, at no cost to valid input. Typed as ints for that sum.
_KEYS = cast(tuple[int, ...], tuple(card_key(card) for card in range(52)) + (None,) * 52)
# The same keys with the suit counters' starting offset folded in, for the first of seven cards:
# one addition fewer on the hot path.
_FIRST_KEYS = cast(tuple[int, ...], tuple(card_key(card) + SUIT_OFFSET for card in range(52)) + (None,) * 52)


def _flush_value(cards: Sequence[Card], total: int) -> int:
    """The value of a hand whose key sum flags a flush (at most one suit can have five of 7)."""
    flags = (total & FLUSH_BITS) >> SUIT_SHIFT
    suit = (flags.bit_length() - 4) // 4
    mask = 0
    for card in cards:
        if card & 3 == suit:
            mask |= 1 << (card >> 2)
    value = _FLUSH_VALUES[mask]
    if not value:
        # Five cards of one suit but fewer than five ranks in it: a card was repeated.
        raise _invalid(cards)
    return value


def _invalid(cards: Sequence[Card]) -> EvaluationError:
    """Explain why ``cards`` could not be evaluated (called only after a failed lookup)."""
    if len(cards) not in (5, 6, 7):
        return EvaluationError(f"a hand is 5 to 7 cards, got {len(cards)}")
    bad = [card for card in cards if not isinstance(card, int) or not 0 <= card <= 51]
    if bad:
        return EvaluationError(f"cards are ints 0..51, got {bad!r}")
    return EvaluationError(f"a hand cannot hold the same card twice, got {list(cards)!r}")


def evaluate(
    cards: Sequence[Card],
    *,
    _keys: tuple[int, ...] = _KEYS,
    _first: tuple[int, ...] = _FIRST_KEYS,
    _rank_values: dict[int, int] = _RANK_VALUES,
    _offset: int = SUIT_OFFSET,
    _flush_bits: int = FLUSH_BITS,
    _mask: int = LOOKUP_MASK,
) -> int:
    """The value of the best five-card hand among ``cards`` (5, 6 or 7 distinct cards).

    Higher is better; equal values are exact ties. Raises ``EvaluationError`` for a wrong card
    count, a non-int, or an int in -52..-1 or 52..103. Checks that would cost time on every call
    are left out, so callers deal from a deck: an int below -52 wraps around to a real card, and
    a repeated card is reported only when it makes an impossible hand (five of a rank, or a
    "flush" of fewer than five ranks); otherwise it is valued as the hand it looks like. The
    keyword-only parameters are bound locals for speed; do not pass them.
    """
    try:
        if len(cards) == 7:
            # Unrolled: the common case (hold'em showdown) skips map() and sum()'s overhead.
            a, b, c, d, e, f, g = cards
            total = _first[a] + _keys[b] + _keys[c] + _keys[d] + _keys[e] + _keys[f] + _keys[g]
        elif 5 <= len(cards) <= 6:
            total = sum(map(_keys.__getitem__, cards), _offset)
        else:
            # Other counts would overflow the 3-bit card counter of the key layout.
            raise EvaluationError(f"a hand is 5 to 7 cards, got {len(cards)}")
        if total & _flush_bits:
            return _flush_value(cards, total)
        return _rank_values[total & _mask]
    except (KeyError, IndexError, TypeError):
        raise _invalid(cards) from None


def evaluate7(
    a: Card,
    b: Card,
    c: Card,
    d: Card,
    e: Card,
    f: Card,
    g: Card,
    *,
    _keys: tuple[int, ...] = _KEYS,
    _first: tuple[int, ...] = _FIRST_KEYS,
    _rank_values: dict[int, int] = _RANK_VALUES,
    _flush_bits: int = FLUSH_BITS,
    _mask: int = LOOKUP_MASK,
) -> int:
    """``evaluate((a, b, c, d, e, f, g))`` without building a sequence, for simulations that
    already hold seven separate cards. Same promises and errors as ``evaluate``."""
    try:
        total = _first[a] + _keys[b] + _keys[c] + _keys[d] + _keys[e] + _keys[f] + _keys[g]
        if total & _flush_bits:
            return _flush_value((a, b, c, d, e, f, g), total)
        return _rank_values[total & _mask]
    except (KeyError, IndexError, TypeError):
        raise _invalid((a, b, c, d, e, f, g)) from None


def evaluate_omaha(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """The value of the best Omaha hand: exactly two of the four ``hole`` cards with exactly
    three of the 3 to 5 ``board`` cards. Raises ``EvaluationError`` for other card counts or a
    card that appears twice."""
    if len(hole) != 4:
        raise EvaluationError(f"an Omaha hand has 4 hole cards, got {len(hole)}")
    if not 3 <= len(board) <= 5:
        raise EvaluationError(f"an Omaha board has 3 to 5 cards, got {len(board)}")
    if len(set(hole) | set(board)) != len(hole) + len(board):
        raise EvaluationError(f"a card appears twice in hole {list(hole)!r} and board {list(board)!r}")
    boards = list(combinations(board, 3))
    return max(evaluate(pair + three) for pair in combinations(hole, 2) for three in boards)


def category(value: int) -> HandCategory:
    """The category of a hand value returned by ``evaluate``."""
    return HandCategory(value >> CATEGORY_SHIFT)


def ranks_of_value(value: int) -> tuple[int, ...]:
    """The ranks (0 = deuce .. 12 = ace) that order hands within ``category(value)``, most
    significant first: e.g. a full house gives (trips, pair), a straight its top card (3 for
    the wheel), a flush or high card its five ranks."""
    significant = _SIGNIFICANT[category(value)]
    return tuple((value >> (CATEGORY_SHIFT - 4 * (index + 1))) & 0xF for index in range(significant))


_SIGNIFICANT = {
    HandCategory.HIGH_CARD: 5,
    HandCategory.PAIR: 4,
    HandCategory.TWO_PAIR: 3,
    HandCategory.THREE_OF_A_KIND: 3,
    HandCategory.STRAIGHT: 1,
    HandCategory.FLUSH: 5,
    HandCategory.FULL_HOUSE: 2,
    HandCategory.FOUR_OF_A_KIND: 2,
    HandCategory.STRAIGHT_FLUSH: 1,
}

# Indexed by rank, like engine.cards.RANKS.
_NAMES = (
    "Two",
    "Three",
    "Four",
    "Five",
    "Six",
    "Seven",
    "Eight",
    "Nine",
    "Ten",
    "Jack",
    "Queen",
    "King",
    "Ace",
)
_PLURALS = tuple("Sixes" if name == "Six" else name + "s" for name in _NAMES)


def describe(value: int) -> str:
    """A hand value in words, e.g. ``"Full House, Kings full of Fives"``, ``"Flush, Ace high"``,
    ``"Two Pair, Aces and Nines"``, ``"Straight, Five high"`` (the wheel), ``"Pair, Sixes"``,
    ``"High Card, Ace"``: always the category's name, a comma, then what ranks it."""
    kind = category(value)
    ranks = ranks_of_value(value)
    top = ranks[0]
    if kind is HandCategory.STRAIGHT_FLUSH:
        return f"Straight Flush, {_NAMES[top]} high"
    if kind is HandCategory.FOUR_OF_A_KIND:
        return f"Four of a Kind, {_PLURALS[top]}"
    if kind is HandCategory.FULL_HOUSE:
        return f"Full House, {_PLURALS[top]} full of {_PLURALS[ranks[1]]}"
    if kind is HandCategory.FLUSH:
        return f"Flush, {_NAMES[top]} high"
    if kind is HandCategory.STRAIGHT:
        return f"Straight, {_NAMES[top]} high"
    if kind is HandCategory.THREE_OF_A_KIND:
        return f"Three of a Kind, {_PLURALS[top]}"
    if kind is HandCategory.TWO_PAIR:
        return f"Two Pair, {_PLURALS[top]} and {_PLURALS[ranks[1]]}"
    if kind is HandCategory.PAIR:
        return f"Pair, {_PLURALS[top]}"
    return f"High Card, {_NAMES[top]}"
