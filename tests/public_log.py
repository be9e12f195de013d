"""Rules worked out from a hand's public log alone, as independent oracles for the engine's tests.

Shared by tests/test_hand_properties.py and tests/test_hand_differential.py so that both hold the
engine to one reading of the rule.
"""

from __future__ import annotations

from engine.betting import Street, street_bet_size
from engine.events import ActionKind, ActionTaken, BlindKind, BlindPosted
from engine.hand import Hand


def bet_2_full_raise_and_acted(hand: Hand) -> tuple[int, bool, int]:
    """From the public log alone (BET-2, TDA Rule 43): the size of a full raise in the current
    round (the largest full raise, at least the street's bet size; preflop the big blind is the
    opening bet, never less once posted), whether the player to act acted since the last full
    raise (or the round's start), and the number of bets and raises made in the round. A bet or
    raise is full when it raises by at least the largest full raise so far and at least the
    street's bet size; the opening bet of a round after the flop always is."""
    setup = hand.setup
    street = hand.street
    bet_size = street_bet_size(setup.limit, street, setup.big_blind)
    current = 0
    if street is Street.PREFLOP:
        blinds = {e.blind: e.amount for e in hand.events if isinstance(e, BlindPosted)}
        current = max(blinds.get(BlindKind.SMALL, 0), setup.big_blind if BlindKind.BIG in blinds else 0)
    raise_size = raises = 0
    since: list[int] = []  # seats that acted since the last full raise
    for entry in hand.events:
        if not isinstance(entry, ActionTaken) or entry.street is not street:
            continue
        if entry.kind in (ActionKind.BET, ActionKind.RAISE):
            raises += 1
            raise_by = entry.to_amount - current
            if raise_by >= max(raise_size, bet_size) or not current:
                raise_size, since = raise_by, []
            current = entry.to_amount
        since.append(entry.seat)
    return max(raise_size, bet_size), hand.actor in since, raises
