"""A player's decision as one value, for ``Hand.act`` (and its ``verify_act``/``can_act``).

The table actor receives a decision from a client (or from the clock) and hands it to the hand
as it came: ``hand.act(Call(), seat=3)``. Each value names one of the hand's do-methods:

- ``Fold()``: ``fold`` (only facing a bet);
- ``Check()``: ``check`` (only facing no bet); ``Call()``: ``call`` (only facing a bet);
- ``CheckOrCall()``: ``check_or_call``, whichever applies (a client's one "check/call" button);
- ``BetOrRaiseTo(amount)``: ``bet_or_raise_to(amount)``, ``amount`` being the player's total bet
  on this street afterwards;
- ``Timeout()``: ``timeout``, the table acting for a player whose time ran out (CLK-2: the hand
  is folded facing a bet, checked otherwise); ``engine.clock.timeout_due`` says when.

The values are frozen and compare by value. They check nothing themselves: the hand is the one
judge of what is legal, and refuses a bad value (a non-integer amount, say) with a typed
``HandError``, as it refuses a bad call of the do-method.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ACTION_TYPES", "Action", "BetOrRaiseTo", "Call", "Check", "CheckOrCall", "Fold", "Timeout"]


@dataclass(frozen=True, slots=True)
class Fold:
    """Give up the hand (refused when there is no bet to call: check instead)."""


@dataclass(frozen=True, slots=True)
class Check:
    """Pass with no bet to call (refused facing a bet)."""


@dataclass(frozen=True, slots=True)
class Call:
    """Match the bet to call, or go all-in for less (refused with no bet to call)."""


@dataclass(frozen=True, slots=True)
class CheckOrCall:
    """Check, or call whatever is to call."""


@dataclass(frozen=True, slots=True)
class BetOrRaiseTo:
    """Bet or raise so that the player's total bet this street is ``amount`` chips."""

    amount: int


@dataclass(frozen=True, slots=True)
class Timeout:
    """The player's time ran out; the table acts for them (CLK-2)."""


Action = Fold | Check | Call | CheckOrCall | BetOrRaiseTo | Timeout
ACTION_TYPES: tuple[type[Action], ...] = (Fold, Check, Call, CheckOrCall, BetOrRaiseTo, Timeout)
