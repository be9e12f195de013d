"""ActionTaken is a frozen tuple of its fields (engine.events): it must still behave as the
frozen dataclass events do, and the engine's checked deck must refuse what is not a card."""

from __future__ import annotations

import copy
import pickle
import random

import pytest

from engine.betting import HandSetup, SeatSetup, Street
from engine.cards import parse_cards
from engine.events import ActionKind, ActionTaken, AntePosted, new_action_taken
from engine.fairness import FairnessError, check_deck
from engine.hand import Hand, HandSetupError


def test_action_taken_fields_equality_hash_and_repr() -> None:
    event = ActionTaken(3, Street.FLOP, ActionKind.CALL, 100, 200, False)
    assert (event.seat, event.street, event.kind, event.amount, event.to_amount) == (
        3,
        Street.FLOP,
        ActionKind.CALL,
        100,
        200,
    )
    assert event.all_in is False and event.timed_out is False, "timed_out defaults to False"
    same = new_action_taken(3, Street.FLOP, ActionKind.CALL, 100, 200, False, False)
    assert event == same and hash(event) == hash(same) and (event != same) is False
    assert event != ActionTaken(3, Street.FLOP, ActionKind.CALL, 100, 200, False, True)
    assert event != (3, Street.FLOP, ActionKind.CALL, 100, 200, False, False), "a plain tuple is not an event"
    assert event != AntePosted(3, 100, False)
    assert repr(event).startswith("ActionTaken(seat=3, street=") and "timed_out=False)" in repr(event)


def test_action_taken_is_frozen_unordered_and_copies() -> None:
    event = ActionTaken(3, Street.FLOP, ActionKind.BET, 100, 100, True, timed_out=False)
    with pytest.raises(AttributeError):
        event.amount = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        _ = event < event  # type: ignore[operator]
    assert copy.deepcopy(event) == event and type(copy.copy(event)) is ActionTaken
    assert pickle.loads(pickle.dumps(event)) == event
    match event:
        case ActionTaken(seat, street, kind, amount):
            assert (seat, street, kind, amount) == (3, Street.FLOP, ActionKind.BET, 100)
        case _:
            pytest.fail("ActionTaken must match a positional class pattern")


def _setup() -> HandSetup:
    seats = tuple(SeatSetup(seat, f"p{seat}", 1_000) for seat in (1, 2, 3))
    return HandSetup(
        "h", 6, seats, button=1, small_blind_seat=2, big_blind_seat=3, small_blind=5, big_blind=10
    )


def test_given_deck_is_checked_and_kept_as_plain_ints() -> None:
    deck = random.Random(4).sample(range(52), 52)
    hand = Hand(_setup(), deck=deck, salt=bytes(16))
    assert hand.deck == tuple(deck) and all(type(card) is int for card in hand.deck)
    assert check_deck(deck, bytes(16)) == bytes(deck)
    with pytest.raises(FairnessError, match="twice"):
        check_deck([*deck[:51], deck[0]], bytes(16))
    with pytest.raises(FairnessError, match=r"ints 0\.\.51, got 52"):
        check_deck([*deck[:51], 52], bytes(16))
    with pytest.raises(FairnessError, match=r"ints 0\.\.51, got -1"):
        check_deck([-1, *deck[:10]], bytes(16))
    with pytest.raises(FairnessError, match=r"ints 0\.\.51, got 'As'"):
        check_deck(["As", *deck[:10]], bytes(16))  # type: ignore[list-item]
    without_one = [card for card in deck if card != 1]
    with pytest.raises(FairnessError, match="got True"):
        check_deck([True, *without_one], bytes(16))
    with pytest.raises(FairnessError, match="the salt is 16 bytes"):
        check_deck(deck, b"short")
    with pytest.raises(HandSetupError, match="twice"):
        Hand(_setup(), deck=[*deck[:51], deck[0]], salt=bytes(16))


def test_commitment_is_the_same_whenever_it_is_read() -> None:
    cards = parse_cards("AsKdQhJcTs9d8h7c6s5d4h3c2s")
    deck = [*cards, *(card for card in range(52) if card not in cards)]
    first = Hand(_setup(), deck=deck, salt=bytes(range(16)))
    second = Hand(_setup(), deck=deck, salt=bytes(range(16)))
    events = first.events
    assert first.commitment == second.commitment == events[0].commitment  # type: ignore[attr-defined]
    assert Hand(_setup(), deck=deck, salt=bytes(16)).commitment != first.commitment, "the salt counts"
