"""A seeded random legal policy: the player every simulation and benchmark uses.

It only ever picks an action the hand says is legal, and it is aggressive on purpose: raises and
all-ins are common, so side pots, short all-ins and showdowns happen often enough for the
simulators to exercise them. Same hand, same ``rng`` state, same choice: simulations replay.

It sits in hot loops (``feltd simulate``, ``feltd bench engine``), so it asks the hand for its
legal actions once per decision and draws at most two random numbers.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from engine.events import ActionTaken
from engine.hand import Hand, LegalActions

__all__ = ["Choice", "ChoiceKind", "choose_action", "play_choice", "play_random_hand"]


class ChoiceKind(StrEnum):
    FOLD = "fold"
    CHECK_OR_CALL = "check_or_call"
    BET_OR_RAISE = "bet_or_raise"


@dataclass(frozen=True, slots=True)
class Choice:
    """A decision for the player to act: ``amount`` is the raise-to total for a bet or raise."""

    seat: int
    kind: ChoiceKind
    amount: int | None = None

    def apply(self, hand: Hand) -> ActionTaken:
        """Play this choice on ``hand`` (as the seat it was chosen for)."""
        kind = self.kind
        if kind is _FOLD:
            return hand.fold(seat=self.seat)
        if kind is _CHECK_OR_CALL:
            return hand.check_or_call(seat=self.seat)
        assert self.amount is not None
        return hand.bet_or_raise_to(self.amount, seat=self.seat)


def _choice_factory() -> Callable[[int, ChoiceKind, int | None], Choice]:
    """``Choice(seat, kind, amount)`` built through the slot descriptors, as the hand engine
    builds its events (the frozen dataclass ``__init__`` costs a call per field)."""
    new = object.__new__
    cls = Choice
    set_seat, set_kind, set_amount = (getattr(cls, name).__set__ for name in ("seat", "kind", "amount"))

    def new_choice(seat: int, kind: ChoiceKind, amount: int | None) -> Choice:
        choice: Choice = new(cls)
        set_seat(choice, seat)
        set_kind(choice, kind)
        set_amount(choice, amount)
        return choice

    return new_choice


_new_choice = _choice_factory()
_FOLD, _CHECK_OR_CALL, _BET_OR_RAISE = ChoiceKind.FOLD, ChoiceKind.CHECK_OR_CALL, ChoiceKind.BET_OR_RAISE


def _raise_to(low: int, high: int, rng: random.Random) -> int:
    draw = rng.random()
    if draw < 0.3 or low >= high:
        return high  # all-in (or the only size, e.g. fixed limit)
    if draw < 0.65:
        return low
    return rng.randint(low, high)


def choose_action(hand: Hand, rng: random.Random) -> Choice:
    """A random legal action for ``hand.actor``; raises ``HandOver`` when nobody can act."""
    legal = hand.legal_actions()
    roll = rng.random()
    low, high = legal.min_raise_to, legal.max_raise_to
    if legal.can_check:
        # never fold for free: a random fold with nothing to call only shortens showdowns
        if low is not None and high is not None and roll < 0.3:
            return _new_choice(legal.seat, _BET_OR_RAISE, _raise_to(low, high, rng))
        return _new_choice(legal.seat, _CHECK_OR_CALL, None)
    if roll < 0.45:
        return _new_choice(legal.seat, _FOLD, None)
    if low is not None and high is not None and roll < 0.6:
        return _new_choice(legal.seat, _BET_OR_RAISE, _raise_to(low, high, rng))
    return _new_choice(legal.seat, _CHECK_OR_CALL, None)


def play_choice(hand: Hand, legal: LegalActions, rng: random.Random) -> None:
    """Play ``choose_action``'s choice for ``legal`` (``hand.legal_actions()`` now) directly,
    with the same random draws: no ``Choice`` value in between."""
    roll = rng.random()
    low, high = legal.min_raise_to, legal.max_raise_to
    if legal.can_check:
        if low is not None and high is not None and roll < 0.3:
            hand.bet_or_raise_to(_raise_to(low, high, rng))
        else:
            hand.check_or_call()
    elif roll < 0.45:
        hand.fold()
    elif low is not None and high is not None and roll < 0.6:
        hand.bet_or_raise_to(_raise_to(low, high, rng))
    else:
        hand.check_or_call()


def play_random_hand(hand: Hand, rng: random.Random) -> int:
    """Play ``hand`` to the end with random legal actions; returns how many actions were taken.

    The very choices ``choose_action`` makes (same random draws), played directly: no ``Choice``
    values in between."""
    count = 0
    legal_actions = hand.legal_actions
    while not hand.is_over:
        play_choice(hand, legal_actions(), rng)
        count += 1
    return count
