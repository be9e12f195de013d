"""The hand as a table actor drives it: ``turn()`` names who acts and what they may do, ``act``
(with ``verify_act``/``can_act``) takes a decision as one value, and ``events_since`` hands out
only the events that are new."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random

import pytest
from test_hand_rules import make_hand, make_setup, three_handed

from engine.actions import ACTION_TYPES, BetOrRaiseTo, Call, Check, CheckOrCall, Fold, Timeout
from engine.betting import Limit, Street
from engine.events import ActionKind, ActionTaken, HandEnded, HandStarted, HoleCardsDealt
from engine.hand import (
    FacingBet,
    Hand,
    HandError,
    HandOver,
    InvalidAction,
    InvalidAmount,
    InvalidEventPosition,
    LegalActions,
    NoBetToFold,
    NothingToCall,
    NotYourTurn,
    RaiseTooSmall,
)
from engine.random_play import choose_action


def test_actions_are_frozen_values_compared_by_value() -> None:
    assert BetOrRaiseTo(300) == BetOrRaiseTo(300) and BetOrRaiseTo(300) != BetOrRaiseTo(400)
    assert Fold() == Fold() and Fold() != Check(), "actions of different kinds must differ"
    assert len({Fold(), Fold(), Call(), BetOrRaiseTo(5), BetOrRaiseTo(5)}) == 3, "actions must hash by value"
    with pytest.raises(dataclasses.FrozenInstanceError):
        BetOrRaiseTo(300).amount = 400  # type: ignore[misc]
    for action in (Fold(), Check(), Call(), CheckOrCall(), BetOrRaiseTo(250), Timeout()):
        assert pickle.loads(pickle.dumps(action)) == action == copy.copy(action), (
            f"{action!r} must round-trip"
        )
    assert {
        type(action) for action in (Fold(), Check(), Call(), CheckOrCall(), BetOrRaiseTo(1), Timeout())
    } == set(ACTION_TYPES), "ACTION_TYPES must list every action"


def test_turn_names_the_seat_and_what_it_may_do_then_none_when_over() -> None:
    hand = make_hand(three_handed())
    turn = hand.turn()
    assert turn == LegalActions(1, True, False, 100, 200, 10_000), (
        f"expected seat 1 facing the blind, got {turn}"
    )
    assert turn == hand.legal_actions(), "turn() must be the legal actions of the player to act"
    hand.act(Fold())
    hand.act(Fold())
    assert hand.is_over and hand.turn() is None, f"expected no turn once the hand is over, got {hand.turn()}"
    with pytest.raises(HandOver):
        hand.legal_actions()


def test_act_plays_each_action_through_its_do_method() -> None:
    hand = make_hand(three_handed())
    taken = hand.act(BetOrRaiseTo(300), seat=1)
    assert (taken.seat, taken.kind, taken.to_amount) == (1, ActionKind.RAISE, 300), f"got {taken}"
    taken = hand.act(Call(), seat=2)
    assert (taken.kind, taken.amount) == (ActionKind.CALL, 250), (
        f"expected the small blind to call 250, got {taken}"
    )
    taken = hand.act(CheckOrCall())
    assert (taken.seat, taken.kind, taken.amount) == (3, ActionKind.CALL, 200), f"got {taken}"
    assert hand.street is Street.FLOP
    taken = hand.act(Check())
    assert (taken.seat, taken.kind) == (2, ActionKind.CHECK), f"got {taken}"
    taken = hand.act(Timeout())
    assert (taken.seat, taken.kind, taken.timed_out) == (3, ActionKind.CHECK, True), (
        f"a timeout facing no bet must check (CLK-2), got {taken}"
    )
    hand.act(BetOrRaiseTo(100))
    taken = hand.act(Timeout())
    assert (taken.seat, taken.kind, taken.timed_out) == (2, ActionKind.FOLD, True), (
        f"a timeout facing a bet must fold (CLK-2), got {taken}"
    )
    taken = hand.act(Fold())
    assert (taken.seat, taken.kind) == (3, ActionKind.FOLD), f"got {taken}"
    assert hand.is_over and hand.finishing_stacks() == {1: 10_600, 2: 9_700, 3: 9_700}


def test_verify_act_refuses_with_the_do_methods_reason_and_act_changes_nothing() -> None:
    hand = make_hand(three_handed())
    refused: list[tuple[object, type[HandError]]] = [
        (Check(), FacingBet),
        (BetOrRaiseTo(150), RaiseTooSmall),
        (BetOrRaiseTo("200"), InvalidAmount),  # type: ignore[arg-type]
        ("fold", InvalidAction),
        (ActionKind.FOLD, InvalidAction),
        (None, InvalidAction),
    ]
    before = (hand.stacks, hand.bets, hand.actor, len(hand.events))
    for action, error in refused:
        assert not hand.can_act(action), f"can_act({action!r}) must be False"  # type: ignore[arg-type]
        with pytest.raises(error):
            hand.verify_act(action)  # type: ignore[arg-type]
        with pytest.raises(error):
            hand.act(action)  # type: ignore[arg-type]
    with pytest.raises(NotYourTurn, match="seat 1's turn"):
        hand.act(Fold(), seat=2)
    assert not hand.can_act(CheckOrCall(), seat=3)
    assert (hand.stacks, hand.bets, hand.actor, len(hand.events)) == before, (
        "a refused action changed the hand"
    )
    for action in (Fold(), Call(), CheckOrCall(), BetOrRaiseTo(200), BetOrRaiseTo(10_000), Timeout()):
        assert hand.can_act(action, seat=1), f"expected {action!r} allowed for seat 1"
    hand.act(Call())
    hand.act(Call())
    # The big blind may check its option, not fold it or call nothing.
    assert (hand.can_act(Check()), hand.can_act(Fold()), hand.can_act(Call())) == (True, False, False)
    with pytest.raises(NoBetToFold):
        hand.act(Fold())
    with pytest.raises(NothingToCall):
        hand.act(Call())


def test_can_act_agrees_with_turn_on_random_hands() -> None:
    """What ``turn()`` allows (fold, check, call, the raise-to range) is what ``can_act`` allows."""
    rng = random.Random(9)
    for number in range(150):
        stacks = {seat: rng.randint(1, 40) * 25 for seat in range(1, rng.randint(2, 6) + 1)}
        count = len(stacks)
        limit = rng.choice(list(Limit))
        small, big = (count, 1) if count == 2 else (1, 2)
        hand = Hand(make_setup(stacks, button=count, small=small, big=big, limit=limit), rng=rng)
        while (turn := hand.turn()) is not None:
            assert hand.can_act(Fold()) == turn.can_fold, f"hand {number}: fold, {turn}"
            assert hand.can_act(Check()) == turn.can_check, f"hand {number}: check, {turn}"
            assert hand.can_act(Call()) == (not turn.can_check), f"hand {number}: call, {turn}"
            low, high = turn.min_raise_to, turn.max_raise_to
            if low is None or high is None:
                assert not hand.can_act(BetOrRaiseTo(stacks[turn.seat])), f"hand {number}: no raise, {turn}"
            else:
                allowed = [hand.can_act(BetOrRaiseTo(amount)) for amount in (low - 1, low, high, high + 1)]
                assert allowed == [False, True, True, False], f"hand {number}: raises {allowed}, {turn}"
            choice = choose_action(hand, rng)
            action = {"fold": Fold(), "check_or_call": CheckOrCall()}.get(
                choice.kind, BetOrRaiseTo(choice.amount or 0)
            )
            hand.act(action, seat=turn.seat)


def test_events_since_hands_out_each_event_once_in_order() -> None:
    hand = make_hand(three_handed())
    first, position = hand.events_since(0)
    assert isinstance(first[0], HandStarted) and position == len(first) == len(hand.events), (
        f"expected the whole log so far from position 0, got {len(first)} events and position {position}"
    )
    assert hand.events_since(position) == ((), position), "nothing new: no events, same position"
    received = list(first)
    for action in (BetOrRaiseTo(300), Call(), Fold()):
        taken = hand.act(action)
        new, after = hand.events_since(position)
        assert new[0] == taken and after == position + len(new), (
            f"expected the tail from the action {taken} on, got {new} (position {position} -> {after})"
        )
        received.extend(new)
        position = after
    while (turn := hand.turn()) is not None:
        hand.act(CheckOrCall(), seat=turn.seat)
    new, position = hand.events_since(position)
    received.extend(new)
    assert isinstance(received[-1], HandEnded) and position == len(received)
    everything = hand.events
    assert received == everything, "the batches together must be the whole log, in order"
    assert all(a is b for a, b in zip(received, everything, strict=True)), (
        "events must be the very same objects"
    )
    assert hand.events_since(3)[0] == tuple(everything[3:]), "any earlier position gives the tail from there"


def test_events_since_builds_and_copies_only_the_tail() -> None:
    # The compact log is built on demand: asking for the tail after an action builds the events of
    # that action, and returns them alone, however long the log already is.
    hand = make_hand(make_setup({seat: 10_000 for seat in range(1, 10)}, button=9, small=1, big=2))
    _, position = hand.events_since(0)
    holes = sum(isinstance(event, HoleCardsDealt) for event in hand.events)
    assert holes == 9 and position > 9, f"expected every seat's hole cards logged, got {holes}"
    taken = hand.act(Fold())
    new, after = hand.events_since(position)
    assert new == (taken,) and after == position + 1, f"expected the fold alone, got {new}"
    assert isinstance(new, tuple), "the tail is handed out as a tuple, which the caller cannot change"


@pytest.mark.parametrize("position", [-1, 10_000, 1.0, True, "0", None])
def test_events_since_refuses_a_position_outside_the_log(position: object) -> None:
    hand = make_hand(three_handed())
    logged = len(hand.events)
    with pytest.raises(InvalidEventPosition, match=f"logged {logged} events"):
        hand.events_since(position)  # type: ignore[arg-type]


def test_timeout_action_is_recorded_as_timed_out_in_the_log() -> None:
    hand = make_hand(three_handed())
    hand.act(Timeout())
    timed_out = [e for e in hand.events if isinstance(e, ActionTaken) and e.timed_out]
    assert [(e.seat, e.kind) for e in timed_out] == [(1, ActionKind.FOLD)], f"got {timed_out}"
