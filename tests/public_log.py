"""Rules worked out from a hand's public log alone, as independent oracles for the engine's tests.

Shared by tests/test_hand_properties.py and tests/test_hand_differential.py so that both hold the
engine to one reading of the rule.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.betting import Limit, Street, street_bet_size
from engine.events import ActionKind, ActionTaken, BlindKind, BlindPosted
from engine.hand import Hand


class Bet2Reading(NamedTuple):
    """BET-2 in the current round, for the player to act (``bet_2_reading``)."""

    reopening: int  # what a player who acted must face to raise again: a full raise; fixed limit: half a bet
    acted: bool  # the player to act acted since the last bet or raise that counted as full
    raises: int  # bets and raises that counted as full (fixed limit's cap counts these, BET-1)
    raise_to: int  # the total of a full raise now, before the player's stack caps it
    short_all_in_raise: bool  # the round had an all-in raise of less than a full bet


def bet_2_reading(hand: Hand) -> Bet2Reading:
    """From the public log alone (BET-2, TDA Rules 43 and 47): which bets and raises of the
    current round counted as full, and what that leaves the player to act. A bet or raise counts
    when it opens the round after the flop, or when it raises by a full raise: in no limit and
    pot limit by at least the largest full raise so far and at least the street's bet size
    (preflop the big blind is the opening bet, never less once posted); in fixed limit by at least
    half a bet over the last bet or raise that counted (less is a call plus chips, and the next
    raise completes a full bet over that last one)."""
    setup = hand.setup
    street = hand.street
    fixed = setup.limit is Limit.FIXED_LIMIT
    bet_size = street_bet_size(setup.limit, street, setup.big_blind)
    current = 0
    if street is Street.PREFLOP:
        blinds = {e.blind: e.amount for e in hand.events if isinstance(e, BlindPosted)}
        current = max(blinds.get(BlindKind.SMALL, 0), setup.big_blind if BlindKind.BIG in blinds else 0)
    level = current
    raise_size = raises = 0
    short = False
    since: list[int] = []  # seats that acted since the last bet or raise that counted
    for entry in hand.events:
        if not isinstance(entry, ActionTaken) or entry.street is not street:
            continue
        if entry.kind in (ActionKind.BET, ActionKind.RAISE):
            raise_by = entry.to_amount - current
            short = short or (bool(current) and entry.all_in and raise_by < max(raise_size, bet_size))
            if fixed:
                counts = not current or 2 * (entry.to_amount - level) >= bet_size
            else:
                counts = not current or raise_by >= max(raise_size, bet_size)
            if counts:
                raise_size, since, level = raise_by, [], entry.to_amount
                raises += 1
            current = entry.to_amount
        since.append(entry.seat)
    if fixed:
        return Bet2Reading((bet_size + 1) // 2, hand.actor in since, raises, level + bet_size, short)
    full = max(raise_size, bet_size)
    return Bet2Reading(full, hand.actor in since, raises, current + full, short)
