"""The action clock (CLK-3) and the all-away counter (CLK-4): pure accounting, ``now`` passed in."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.clock import (
    ActionClock,
    AwayCounter,
    ClockError,
    ClockPhase,
    NoTimeBankError,
    TimeBanks,
    TimeBankSettings,
    UnknownPlayerError,
    shot_clock_seconds,
)


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
