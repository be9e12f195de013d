"""LVL-1 and BRK-T1: the level in force at ``now``, breaks, and the hand-for-hand deduction."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.betting import AnteKind
from engine.tournament.config import BreakMode, Breaks, Level
from engine.tournament.levels import (
    BreakKind,
    BreakWindow,
    LevelClock,
    OnBreak,
    hand_for_hand_deduction_seconds,
)

LEVELS = (
    Level(10, 20, 15),
    Level(15, 30, 15),
    Level(25, 50, 15, ante=50, ante_kind=AnteKind.BIG_BLIND),
)
NO_BREAKS = Breaks(mode=BreakMode.NONE)
MIN = 60


def test_lvl_1_level_in_force_follows_the_schedule() -> None:
    clock = LevelClock(LEVELS, NO_BREAKS)
    assert clock.level_index_at(0) == 0
    assert clock.level_index_at(15 * MIN - 1) == 0
    assert clock.level_index_at(15 * MIN) == 1
    assert clock.level_at(30 * MIN) == LEVELS[2], "the big blind ante level is in force from minute 30"
    assert clock.level_at(30 * MIN).ante_kind is AnteKind.BIG_BLIND
    assert clock.level_index_at(10 * 3600) == 2, "the last level stays once the schedule ends"


def test_lvl_1_a_new_level_applies_from_the_next_hand() -> None:
    clock = LevelClock(LEVELS, NO_BREAKS)
    hand = clock.start_hand(15 * MIN - 5)  # starts 5 s before the level rises
    assert hand.level == LEVELS[0], f"a hand keeps the level it started at, got {hand.level}"
    assert clock.start_hand(15 * MIN + 40).level == LEVELS[1], "the next hand plays the new level"


def test_brk_t1_hourly_break_at_55_past_the_hour() -> None:
    clock = LevelClock(LEVELS, Breaks(), start_wall_seconds=7 * 3600 + 25 * MIN)  # starts at 07:25
    assert clock.next_break(0) == BreakWindow(30 * MIN, 35 * MIN, BreakKind.SCHEDULED), "07:55 to 08:00"
    assert clock.next_break(35 * MIN) == BreakWindow(90 * MIN, 95 * MIN, BreakKind.SCHEDULED), "then 08:55"
    at_55 = LevelClock(LEVELS, Breaks(), start_wall_seconds=55 * MIN)
    assert at_55.next_break(0) == BreakWindow(3600, 3600 + 5 * MIN, BreakKind.SCHEDULED)


def test_brk_t1_every_n_minutes_of_play_and_levels_pause_on_breaks() -> None:
    clock = LevelClock(LEVELS, Breaks(mode=BreakMode.EVERY, every_minutes=20, minutes=5))
    assert clock.breaks_until(50 * MIN) == (
        BreakWindow(20 * MIN, 25 * MIN, BreakKind.SCHEDULED),
        BreakWindow(45 * MIN, 50 * MIN, BreakKind.SCHEDULED),
    )
    assert clock.play_seconds(30 * MIN) == 25 * MIN, "the level clock stops during a break"
    assert clock.level_index_at(29 * MIN) == 1 and clock.level_index_at(35 * MIN) == 2


def test_brk_t1_a_break_waits_for_a_tables_hand() -> None:
    clock = LevelClock(LEVELS, Breaks(), start_wall_seconds=25 * MIN)  # break at 30 min
    hand = clock.start_hand(30 * MIN - 20)  # a hand that runs 20 s into the break plays on
    assert hand.level == LEVELS[1]
    finished_at = 30 * MIN + 40
    assert not clock.can_start_hand(finished_at), "the table goes on break once its hand is over"
    with pytest.raises(OnBreak, match="until 2100"):
        clock.start_hand(finished_at)
    assert clock.resume_at(finished_at) == 35 * MIN
    # synchronized (S): a table whose hand ends later still resumes with everyone at :00
    assert clock.resume_at(finished_at + 50) == 35 * MIN
    assert clock.can_start_hand(35 * MIN)


def test_brk_t1_add_on_break_when_the_rebuy_period_ends() -> None:
    clock = LevelClock(LEVELS, Breaks(addon_break_minutes=3), start_wall_seconds=0, add_on_break_at=3600)
    windows = clock.breaks_until(2 * 3600)
    assert BreakWindow(3600, 3600 + 3 * MIN, BreakKind.ADD_ON) in windows, f"got {windows}"
    # when the rebuy period ends inside the hourly break, the add-on break follows it
    late = LevelClock(LEVELS, Breaks(), start_wall_seconds=0, add_on_break_at=56 * MIN)
    assert late.breaks_until(3600)[:2] == (
        BreakWindow(55 * MIN, 60 * MIN, BreakKind.SCHEDULED),
        BreakWindow(60 * MIN, 63 * MIN, BreakKind.ADD_ON),
    )
    assert late.resume_at(57 * MIN) == 63 * MIN


def test_hfh_1_level_clock_loses_one_or_two_minutes_per_hand() -> None:
    assert hand_for_hand_deduction_seconds(15) == 60
    assert hand_for_hand_deduction_seconds(19) == 60
    assert hand_for_hand_deduction_seconds(20) == 120
    assert hand_for_hand_deduction_seconds(30, setting_minutes=3) == 180
    clock = LevelClock(LEVELS, NO_BREAKS)
    # three hand-for-hand hands at 15-minute levels push the clock three minutes on
    assert clock.level_index_at(13 * MIN) == 0
    assert clock.level_index_at(13 * MIN, deducted_seconds=3 * 60) == 1
    # while the clock stood still for hand-for-hand, the level did not run
    assert clock.level_index_at(16 * MIN, paused_seconds=2 * MIN) == 0


def test_brk_t1_zero_minute_breaks_are_no_breaks() -> None:
    clock = LevelClock(LEVELS, Breaks(minutes=0))
    assert clock.breaks_until(10 * 3600) == ()
    assert clock.can_start_hand(55 * MIN)
    assert clock.level_index_at(20 * MIN) == 1


@settings(max_examples=100, deadline=None)
@given(
    mode=st.sampled_from(list(BreakMode)),
    start=st.integers(min_value=0, max_value=86400),
    every=st.integers(min_value=10, max_value=120),
    add_on_at=st.none() | st.integers(min_value=0, max_value=4 * 3600),
    times=st.lists(st.integers(min_value=0, max_value=8 * 3600), min_size=2, max_size=20),
)
def test_lvl_1_brk_t1_clock_properties(
    mode: BreakMode, start: int, every: int, add_on_at: int | None, times: list[int]
) -> None:
    """Breaks never overlap, play time never runs backwards, levels never go down, and no hand
    starts during a break."""
    clock = LevelClock(
        LEVELS, Breaks(mode=mode, every_minutes=every), start_wall_seconds=start, add_on_break_at=add_on_at
    )
    windows = clock.breaks_until(9 * 3600)
    for earlier, later in pairwise(windows):
        assert earlier.end <= later.start, f"breaks overlap: {earlier} and {later}"
    ordered = sorted(times)
    plays = [clock.play_seconds(t) for t in ordered]
    assert plays == sorted(plays), "play time must never run backwards"
    levels = [clock.level_index_at(t) for t in ordered]
    assert levels == sorted(levels), "levels never go down"
    for t in ordered:
        assert clock.can_start_hand(t) == (clock.break_at(t) is None)
        assert clock.can_start_hand(clock.resume_at(t))


def test_hfh_1_lvl_1_hand_for_hand_pause_inside_a_break_counts_once() -> None:
    # A synchronized round from 3290 s to 3320 s runs 20 s into the hourly break [3300, 3600):
    # those 20 s are break time already, so only 10 s may be added as hand-for-hand pause.
    clock = LevelClock((Level(10, 20, 15),) * 10, Breaks())
    start, end = 3290, 3320
    assert clock.pause_seconds_between(start, end) == 10, f"got {clock.pause_seconds_between(start, end)}"
    stood_at = clock.play_seconds(start)
    after = clock.play_seconds(end, paused_seconds=clock.pause_seconds_between(start, end))
    assert after == stood_at == 3290, f"the clock stands still at {stood_at} s during the round, got {after}"
    assert clock.pause_seconds_between(3400, 3700) == 100 and clock.pause_seconds_between(5, 5) == 0


def test_brk_t1_reg_5_add_on_break_is_known_before_it_is_generated() -> None:
    late = LevelClock(LEVELS, Breaks(), start_wall_seconds=0, add_on_break_at=57 * MIN)
    assert late.add_on_break() == BreakWindow(60 * MIN, 63 * MIN, BreakKind.ADD_ON), (
        f"got {late.add_on_break()}"
    )
    assert late.resume_at(56 * MIN) == 63 * MIN, "a table reaching the :55 break resumes after both breaks"
    assert LevelClock(LEVELS, Breaks()).add_on_break() is None
    zero = LevelClock(LEVELS, Breaks(mode=BreakMode.NONE, addon_break_minutes=0), add_on_break_at=30 * MIN)
    assert zero.add_on_break() == BreakWindow(30 * MIN, 30 * MIN, BreakKind.ADD_ON), "0 minutes: no pause"
    assert zero.can_start_hand(30 * MIN), "a 0-minute add-on break stops no table"
