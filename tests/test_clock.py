"""The action clock (CLK-3) and the all-away counter (CLK-4): pure accounting, ``now`` passed in;
and the clock wired to a hand: a timeout is a function of (hand, clock, now) (CLK-1, CLK-2)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hand_rules import make_hand, three_handed

from engine.actions import BetOrRaiseTo, CheckOrCall, Timeout
from engine.clock import (
    ActionClock,
    AwayCounter,
    ClockError,
    ClockPhase,
    NoTimeBankError,
    StaleClockError,
    TimeBanks,
    TimeBankSettings,
    UnknownPlayerError,
    shot_clock_seconds,
    start_turn,
    timeout_due,
)
from engine.events import ActionKind


def test_clk_3_shot_clock_15_seconds_for_levels_of_15_minutes_or_less() -> None:
    for minutes in (5, 10, 15):
        got = shot_clock_seconds(minutes)
        assert got == 15, f"levels of {minutes} min: expected a 15 s shot clock, got {got}"


def test_clk_3_shot_clock_30_seconds_for_longer_levels() -> None:
    for minutes in (16, 20, 60):
        got = shot_clock_seconds(minutes)
        assert got == 30, f"levels of {minutes} min: expected a 30 s shot clock, got {got}"


def test_clk_3_shot_clock_override_wins_and_bad_values_are_refused() -> None:
    assert shot_clock_seconds(60, override=20) == 20, "an override must replace the rule-book value"
    with pytest.raises(ClockError):
        shot_clock_seconds(60, override=0)
    with pytest.raises(ClockError):
        shot_clock_seconds(0)


def test_clk_3_two_banks_at_start_one_per_break_two_at_bubble() -> None:
    banks = TimeBanks.start(["ann", "bob"])
    assert banks.remaining("ann") == 2, f"expected 2 banks at the start, got {banks.remaining('ann')}"
    banks = banks.after_break()
    assert banks.remaining("bob") == 3, f"expected 3 banks after a break, got {banks.remaining('bob')}"
    banks = banks.after_bubble()
    assert banks.remaining("bob") == 5, f"expected 5 banks after the bubble, got {banks.remaining('bob')}"
    late = banks.add_player("cat")
    assert late.remaining("cat") == 2, f"a late entrant starts with 2 banks, got {late.remaining('cat')}"


def test_clk_3_bank_settings_are_configurable() -> None:
    banks = TimeBanks.start(["ann"], TimeBankSettings(initial=1, per_break=0, at_bubble=3))
    assert banks.after_break().after_bubble().remaining("ann") == 4


def test_clk_3_spend_triad_refuses_more_than_available_and_changes_nothing() -> None:
    banks = TimeBanks.start(["ann"])
    assert banks.can_spend("ann", 2)
    assert not banks.can_spend("ann", 3)
    with pytest.raises(NoTimeBankError):
        banks.spend("ann", 3)
    assert banks.remaining("ann") == 2, "a refused spend must leave the banks unchanged"
    with pytest.raises(UnknownPlayerError):
        banks.spend("nobody")
    after = banks.spend("ann")
    assert (banks.remaining("ann"), after.remaining("ann")) == (2, 1), "spend returns a new value"


def test_clk_3_action_clock_phases_and_bank_consumption() -> None:
    clock = ActionClock(started_at=100.0, shot_clock=15, banks_available=2)
    assert clock.shot_clock_expires_at == 115.0
    assert (clock.bank_expires_at(1), clock.bank_expires_at(2), clock.deadline) == (130.0, 145.0, 145.0)
    status = clock.status(110.0)
    assert (status.phase, status.banks_used, status.seconds_left) == (ClockPhase.SHOT_CLOCK, 0, 5.0), status
    status = clock.status(115.0)
    assert (status.phase, status.banks_used) == (ClockPhase.TIME_BANK, 1), f"bank 1 starts at 115: {status}"
    status = clock.status(131.0)
    assert (status.phase, status.banks_used, status.expires_at) == (ClockPhase.TIME_BANK, 2, 145.0), status
    assert not clock.timed_out(144.9)
    assert clock.timed_out(145.0), "the turn times out when the last bank runs out"
    assert clock.status(200.0).phase is ClockPhase.TIMED_OUT


def test_clk_3_no_banks_times_out_with_the_shot_clock() -> None:
    clock = ActionClock(started_at=0.0, shot_clock=30)
    assert clock.deadline == 30.0 and clock.timed_out(30.0) and not clock.timed_out(29.99)


@settings(max_examples=200, deadline=None)
@given(
    start=st.floats(min_value=0, max_value=1e6),
    shot=st.sampled_from([15, 30]),
    banks=st.integers(min_value=0, max_value=8),
    offset=st.floats(min_value=0, max_value=500),
)
def test_clk_3_banks_used_never_exceed_available_and_grow_with_time(
    start: float, shot: int, banks: int, offset: float
) -> None:
    clock = ActionClock(started_at=start, shot_clock=shot, banks_available=banks)
    used = clock.banks_used(start + offset)
    later = clock.banks_used(start + offset + 1)
    assert 0 <= used <= later <= banks, f"expected 0 <= {used} <= {later} <= {banks}"


def test_clk_4_all_away_counter_reaches_250_and_resets_when_anyone_is_present() -> None:
    counter = AwayCounter()
    for _ in range(249):
        counter = counter.after_hand(all_away=True)
    assert not counter.limit_reached, f"249 away hands must not end the match (hands={counter.hands})"
    reset = counter.after_hand_with([True, False])
    assert reset.hands == 0, f"a present player resets the count, got {reset.hands}"
    counter = counter.after_hand_with([True, True])
    assert counter.limit_reached, f"expected the limit at 250 away hands, got {counter.hands}"


def test_clk_4_limit_is_a_setting() -> None:
    counter = AwayCounter(limit=3).after_hand(True).after_hand(True).after_hand(True)
    assert counter.limit_reached
    with pytest.raises(ClockError):
        AwayCounter(limit=0)


# ---------------------------------------------------------------- the clock wired to a hand


def test_clk_3_start_turn_gives_the_player_to_act_the_shot_clock_then_their_banks() -> None:
    hand = make_hand(three_handed())
    banks = TimeBanks.start(["p1", "p2", "p3"]).spend("p1")
    clock = start_turn(hand, banks, now=100.0, shot_clock=15)
    assert clock == ActionClock(started_at=100.0, shot_clock=15, banks_available=1, seat=1, player="p1"), (
        f"expected seat 1 (p1) to get 15 s and its one bank left, got {clock}"
    )
    assert clock.deadline == 130.0, (
        f"expected the deadline after the shot clock and one bank, got {clock.deadline}"
    )


def test_clk_2_timeout_due_only_at_the_deadline_then_folds_facing_a_bet_and_checks_otherwise() -> None:
    hand = make_hand(three_handed())
    banks = TimeBanks.start(["p1", "p2", "p3"])
    clock = start_turn(hand, banks, now=0.0, shot_clock=15)
    assert clock is not None and clock.deadline == 45.0, f"expected 15 s and two 15 s banks, got {clock}"
    for now in (0.0, 14.9, 15.0, 44.9):
        assert timeout_due(hand, clock, now) is None, f"no timeout before the deadline, at {now}"
    action = timeout_due(hand, clock, 45.0)
    assert action == Timeout(), f"expected the timeout at the deadline, got {action}"
    taken = hand.act(action)
    assert (taken.seat, taken.kind, taken.timed_out) == (1, ActionKind.FOLD, True), (
        f"seat 1 faces the big blind: the timeout must fold (CLK-2), got {taken}"
    )
    banks = banks.after_turn(clock, 45.0)
    assert banks.remaining("p1") == 0, f"a turn that timed out spent both banks, got {banks.remaining('p1')}"
    hand.act(CheckOrCall())  # the small blind completes
    clock = start_turn(hand, banks, now=50.0, shot_clock=15)
    assert clock is not None and (clock.seat, clock.deadline) == (3, 95.0), (
        f"expected seat 3's turn, got {clock}"
    )
    action = timeout_due(hand, clock, 200.0)
    assert action is not None
    taken = hand.act(action)
    assert (taken.seat, taken.kind, taken.timed_out) == (3, ActionKind.CHECK, True), (
        f"the big blind faces no bet: the timeout must check (CLK-2), got {taken}"
    )


def test_clk_3_a_player_acting_in_a_bank_spends_the_banks_that_started() -> None:
    hand = make_hand(three_handed())
    banks = TimeBanks.start(["p1", "p2", "p3"], TimeBankSettings(initial=3))
    clock = start_turn(hand, banks, now=0.0, shot_clock=30)
    assert clock is not None
    assert banks.after_turn(clock, 29.0).remaining("p1") == 3, "acting within the shot clock spends no bank"
    assert banks.after_turn(clock, 31.0).remaining("p1") == 2, "acting one second into a bank spends it"
    assert banks.after_turn(clock, 61.0).remaining("p1") == 1, "acting in the second bank spends two"
    hand.act(BetOrRaiseTo(300), seat=1)
    banks = banks.after_turn(clock, 31.0)
    clock = start_turn(hand, banks, now=31.0, shot_clock=30)
    assert clock is not None and (clock.seat, clock.banks_available) == (2, 3), (
        f"the next turn is seat 2's, with its own banks: got {clock}"
    )
    with pytest.raises(ClockError, match="names no player"):
        banks.after_turn(ActionClock(started_at=0.0, shot_clock=30), 10.0)


def test_clk_1_an_absent_player_gets_the_shot_clock_only_and_keeps_their_banks() -> None:
    hand = make_hand(three_handed(absent=frozenset({1})))
    banks = TimeBanks.start(["p1", "p2", "p3"])
    clock = start_turn(hand, banks, now=0.0, shot_clock=15)
    assert clock is not None and (clock.banks_available, clock.deadline) == (0, 15.0), (
        f"expected the absent seat 1 to get the shot clock only, got {clock}"
    )
    assert timeout_due(hand, clock, 15.0) == Timeout()
    assert banks.after_turn(clock, 15.0).remaining("p1") == 2, "an absent player's banks must be kept"
    back = start_turn(hand, banks, now=0.0, shot_clock=15, absent=False)
    assert back is not None and back.banks_available == 2, (
        f"a player back at the table gets the banks, got {back}"
    )


def test_clk_2_a_clock_for_another_seat_is_refused_and_an_ended_hand_has_no_turn() -> None:
    hand = make_hand(three_handed())
    banks = TimeBanks.start(["p1", "p2", "p3"])
    clock = start_turn(hand, banks, now=0.0, shot_clock=15)
    assert clock is not None
    hand.act(CheckOrCall())  # seat 1 acts: the clock's turn is over
    with pytest.raises(StaleClockError, match="seat 1's turn, but seat 2 is to act"):
        timeout_due(hand, clock, 100.0)
    hand.act(Timeout())
    hand.act(Timeout())
    assert hand.street.value == "flop"
    while hand.turn() is not None:
        hand.act(Timeout())
    assert start_turn(hand, banks, now=500.0, shot_clock=15) is None, "no turn once the hand is over"
    assert timeout_due(hand, clock, 500.0) is None, "no timeout once the hand is over"
    with pytest.raises(UnknownPlayerError):
        start_turn(make_hand(three_handed()), TimeBanks.start(["p2", "p3"]), now=0.0, shot_clock=15)
