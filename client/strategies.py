"""How a bot chooses its action: a random player, a calling station and a tight-aggressive
player that plays by hand strength.

A strategy gets a ``Situation`` (``client.table_view``) with the legal actions and returns a
``Decision``: an ``ActionKind`` and, for a bet or raise, the total the bet reaches on this street
(``min_raise_to`` to ``max_raise_to``). Every decision it returns is legal by the ``legal`` it was
given; randomness comes only from the ``random.Random`` passed in, so a seed replays it.

The tight-aggressive bot (``TightAggressive``):

- **Before the flop** it scores its two cards by the Chen formula (AA 20, KK 16, AKs 12, AKo
  10, 72o -1) and opens only hands above a bar that falls with the players left to act behind
  it: 10 under the gun of a full table (TT+, AK, AQs), 9 in the middle, 8, 7 and 6 from the
  hijack to the button, 7 in the small blind. It opens to 2.5 big blinds plus one per limper,
  re-raises (3x) with 12 or more (QQ+, AKs), calls a raise with 9 or more when the call is at
  most a tenth of its stack (and a small pair for set value at a twentieth), and folds the rest.
  With 12 big blinds or less it moves all in or folds, with a lower bar; it calls an all-in with
  10 or more at a full table, 8 with three or four players, 6 heads-up (2 less when the pot lays
  2 to 1 or better).
- **After the flop** it rates its made hand with the engine's evaluator, counting only what its
  own cards add to the board: 4 sets, trips, straights and better; 3 two pair with both hole
  cards; 2 top pair or an overpair; 1 a weaker pair; 0 nothing. It counts its draws' outs (flush
  draw 9, open-ended 8, gutshot 4) and turns them into an equity by the rule of 4 and 2. With
  no bet to call it bets 2/3 of the pot with 3-4, half with 2, semi-bluffs half its big draws
  and continuation-bets a third of the pot heads-up as the preflop raiser; facing a bet it
  raises 4s, calls 2-3 up to pot odds of 40% (3s always), 1s up to 25%, draws when their
  equity covers the price, and folds the rest. A bet or raise worth 60% of its stack or more
  goes all in instead.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from client.table_view import Situation
from engine.cards import parse_card, rank_of, suit_of
from engine.evaluator import HandCategory, category, evaluate
from protocol.kinds import ActionKind, Street
from protocol.table_events import LegalView

__all__ = [
    "CallingStation",
    "Decision",
    "RandomPlayer",
    "Strategy",
    "TightAggressive",
    "chen_score",
    "draw_outs",
    "made_strength",
]

Decision = tuple[ActionKind, int | None]

CALL: Decision = (ActionKind.CHECK_OR_CALL, None)


class Strategy(Protocol):
    @property
    def name(self) -> str: ...

    def decide(self, situation: Situation, rng: random.Random) -> Decision: ...


def _fold(legal: LegalView) -> Decision:
    # folding when a check is free is refused by the table: check instead
    return (ActionKind.FOLD, None) if legal.can_fold else CALL


def _raise_to(situation: Situation, target: int) -> Decision:
    """A bet or raise to ``target`` chips this street, within the legal range; all in when it
    would commit most of the stack anyway; a call when raising is not allowed."""
    legal = situation.legal
    if legal.min_raise_to is None or legal.max_raise_to is None:
        return CALL
    if target >= 0.6 * (situation.stack + situation.bet):
        target = legal.max_raise_to
    return ActionKind.RAISE, max(legal.min_raise_to, min(legal.max_raise_to, target))


@dataclass(frozen=True, slots=True)
class RandomPlayer:
    """Any legal action, at random: a quarter folds when facing a bet, a third of the rest raises
    (to the minimum, all in, or anything between)."""

    name: str = "random"

    def decide(self, situation: Situation, rng: random.Random) -> Decision:
        legal = situation.legal
        if legal.can_fold and rng.random() < 0.25:
            return ActionKind.FOLD, None
        if legal.min_raise_to is not None and legal.max_raise_to is not None and rng.random() < 0.35:
            roll = rng.random()
            if roll < 0.4:
                amount = legal.min_raise_to
            elif roll < 0.6:
                amount = legal.max_raise_to
            else:
                amount = rng.randint(legal.min_raise_to, legal.max_raise_to)
            return ActionKind.RAISE, amount
        return CALL


@dataclass(frozen=True, slots=True)
class CallingStation:
    """Checks or calls, always."""

    name: str = "station"

    def decide(self, situation: Situation, rng: random.Random) -> Decision:
        return CALL


_HIGH_CARD_POINTS = (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 10.0)  # 2 .. A


def chen_score(hole: tuple[str, ...] | list[str]) -> int:
    """Bill Chen's preflop score of two hole cards (rounded up): AA 20, KK 16, AKs 12, 72o -1."""
    first, second = (parse_card(card) for card in hole)
    high, low = max(rank_of(first), rank_of(second)), min(rank_of(first), rank_of(second))
    if high == low:
        return math.ceil(max(5.0, 2 * _HIGH_CARD_POINTS[high]))
    score = _HIGH_CARD_POINTS[high]
    if suit_of(first) == suit_of(second):
        score += 2
    gap = high - low - 1
    score -= (0, 1, 2, 4)[gap] if gap < 4 else 5
    if gap <= 1 and high < 10:  # both below a queen: connectors make straights
        score += 1
    return math.ceil(score)


def made_strength(hole: tuple[str, ...], board: tuple[str, ...]) -> int:
    """0 to 4: what the hole cards make with the board (see the module docstring)."""
    cards = [parse_card(c) for c in hole + board]
    board_cards = cards[len(hole) :]
    value = evaluate(cards)
    kind = category(value)
    if kind >= HandCategory.STRAIGHT:
        if len(board_cards) == 5 and evaluate(board_cards) == value:
            return 0  # the board plays: everyone has it
        if kind >= HandCategory.FULL_HOUSE or not _board_shares(kind, hole, board_cards):
            return 4
    combined = Counter(rank_of(c) for c in cards)
    on_board = Counter(rank_of(c) for c in board_cards)
    hole_ranks = {rank_of(parse_card(c)) for c in hole}
    # ranks paired (or better) with help from a hole card
    mine = sorted(
        (r for r, n in combined.items() if n >= 2 and n > on_board[r] and r in hole_ranks), reverse=True
    )
    if any(combined[r] >= 3 for r in mine):
        return 4
    if len(mine) >= 2:
        return 3
    if len(mine) == 1:
        pair = mine[0]
        top = max(on_board, default=-1)
        pocket = len(hole_ranks) == 1
        if (pocket and pair > top) or (not pocket and pair == top):
            return 2
        return 1
    if kind >= HandCategory.STRAIGHT:
        return 2  # a straight or flush shared with a four-card board: something, not much
    return 0


def _board_shares(kind: HandCategory, hole: tuple[str, ...], board: list[int]) -> bool:
    """Whether a straight or flush leans on four board cards (one hole card adds little)."""
    if kind is HandCategory.FLUSH or kind is HandCategory.STRAIGHT_FLUSH:
        suits = Counter(suit_of(c) for c in board)
        suit, count = suits.most_common(1)[0] if suits else (0, 0)
        return count >= 4 and sum(1 for c in hole if suit_of(parse_card(c)) == suit) == 1
    return False


def draw_outs(hole: tuple[str, ...], board: tuple[str, ...]) -> int:
    """Outs to a flush or straight with cards to come: flush draw 9, open-ended 8, gutshot 4."""
    if len(board) >= 5 or len(board) < 3:
        return 0
    hole_cards = [parse_card(c) for c in hole]
    cards = hole_cards + [parse_card(c) for c in board]
    if category(evaluate(cards)) >= HandCategory.STRAIGHT:
        return 0
    outs = 0
    suits = Counter(suit_of(c) for c in cards)
    if any(n == 4 and any(suit_of(h) == s for h in hole_cards) for s, n in suits.items()):
        outs += 9
    ranks = {rank_of(c) for c in cards}
    hole_ranks = {rank_of(c) for c in hole_cards}
    completing = [x for x in range(13) if x not in ranks and _straight_with(ranks | {x}, hole_ranks)]
    outs += 8 if len(completing) >= 2 else 4 if completing else 0
    return min(outs, 15)


def _straight_with(ranks: set[int], hole_ranks: set[int]) -> bool:
    """Five ranks in a row among ``ranks`` (the ace also low), one of them from the hole."""
    low_ace = ranks | ({-1} if 12 in ranks else set())
    holes = hole_ranks | ({-1} if 12 in hole_ranks else set())
    for start in range(-1, 9):
        run = set(range(start, start + 5))
        if run <= low_ace and run & holes:
            return True
    return False


@dataclass(frozen=True, slots=True)
class TightAggressive:
    """Plays few hands, and those hard (see the module docstring)."""

    name: str = "tag"

    def decide(self, situation: Situation, rng: random.Random) -> Decision:
        if len(situation.hole) != 2:
            return CALL if situation.to_call == 0 else _fold(situation.legal)
        if situation.street is Street.PREFLOP:
            return self.preflop(situation)
        return self.postflop(situation, rng)

    @staticmethod
    def open_bar(behind: int) -> int:
        """The least Chen score this position opens with (``behind``: see ``Situation``)."""
        if behind == -1:
            return 7
        if behind == -2:
            return 9
        return {0: 6, 1: 7, 2: 8, 3: 9, 4: 9}.get(behind, 10)

    @staticmethod
    def all_in_bar(s: Situation) -> int:
        """The least Chen score that calls (or re-shoves over) an all-in: 10 at a full table, less
        with fewer players left (their ranges are wider) and less again when the price is low."""
        bar = 10 if s.players >= 5 else 8 if s.players >= 3 else 6
        return bar - 2 if s.to_call * 3 <= s.pot else bar

    def preflop(self, s: Situation) -> Decision:
        score = chen_score(s.hole)
        big = s.big_blind
        top = s.bet + s.to_call  # the bet to match
        depth = (s.stack + s.bet) / big
        all_in_call = s.to_call >= s.stack
        if all_in_call:
            return CALL if score >= self.all_in_bar(s) else _fold(s.legal)
        if depth <= 12:
            if s.raises == 0:
                bar = self.open_bar(s.behind) - 2
                if score >= bar:
                    return _raise_to(s, s.legal.max_raise_to or top)
                return _fold(s.legal)
            return (
                _raise_to(s, s.legal.max_raise_to or top) if score >= self.all_in_bar(s) else _fold(s.legal)
            )
        if s.raises == 0:
            if score >= self.open_bar(s.behind):
                return _raise_to(s, (5 * big) // 2 + s.limpers * big)
            return _fold(s.legal)
        if s.raises == 1:
            if score >= 12:
                return _raise_to(s, 3 * top)
            if score >= 9 and s.to_call * 10 <= s.stack:
                return CALL
            if _pocket_pair(s.hole) and s.to_call * 20 <= s.stack:
                return CALL
            return _fold(s.legal)
        if score >= 16:
            return _raise_to(s, s.legal.max_raise_to or top)
        if score >= 12 and s.to_call * 4 <= s.stack:
            return CALL
        return _fold(s.legal)

    def postflop(self, s: Situation, rng: random.Random) -> Decision:
        strength = made_strength(s.hole, s.board)
        outs = draw_outs(s.hole, s.board)
        equity = outs * (4 if s.street is Street.FLOP else 2) / 100
        pot = max(s.pot, s.big_blind)
        if s.to_call == 0:
            if strength >= 3:
                return _raise_to(s, s.bet + (2 * pot) // 3)
            if strength == 2:
                return _raise_to(s, s.bet + pot // 2)
            if outs >= 8 and rng.random() < 0.5:
                return _raise_to(s, s.bet + pot // 2)
            if s.aggressor and s.opponents == 1 and s.street is Street.FLOP and rng.random() < 0.6:
                return _raise_to(s, s.bet + pot // 3)
            return CALL
        price = s.to_call / (pot + s.to_call)
        top = s.bet + s.to_call
        if strength == 4:
            return _raise_to(s, 3 * top) if rng.random() < 0.7 else CALL
        if strength == 3:
            return _raise_to(s, 3 * top) if s.raises == 1 and rng.random() < 0.3 else CALL
        if strength == 2 and (price <= 0.4 or s.to_call >= s.stack) and s.raises <= 1:
            return CALL
        if strength == 1 and price <= 0.25 and s.raises <= 1:
            return CALL
        if outs and equity >= price:
            return CALL
        return _fold(s.legal)


def _pocket_pair(hole: tuple[str, ...]) -> bool:
    return hole[0][0] == hole[1][0]


STRATEGIES: dict[str, Strategy] = {
    "random": RandomPlayer(),
    "station": CallingStation(),
    "tag": TightAggressive(),
}
