"""Deals (DEAL-1..4): ICM exact vs brute force, Monte Carlo, chip chop, validation, negotiation, aftermath."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.tournament.config import Deals, Level, Satellite, TournamentConfig
from engine.tournament.deals import (
    AmountsDoNotAddUp,
    DealError,
    DealMethod,
    DealNegotiation,
    DealPlan,
    DealsNotAllowed,
    NegotiationPhase,
    NotAgreed,
    NotFinalTable,
    TooMuchLeftToPlay,
    WrongNegotiationPhase,
    can_deal,
    chip_chop,
    conclude_deal,
    icm_equities,
    icm_exact,
    icm_monte_carlo,
    icm_split,
    left_to_play_above_minimums,
    propose_deal,
    shortened_levels,
    verify_deal,
)
from engine.tournament.transfers import Reason, net_by_account, player_account, pool_account

CONFIG = TournamentConfig(
    id="t", name="T", levels=(Level(10, 20, 10),), buy_in=1000, fee=100, starting_stack=1500
)
PLAYERS = ("a", "b", "c", "d")
STACKS = (5000, 3000, 1500, 500)
PRIZES = (5000, 3000, 1500, 500)  # places 1..4 still to be awarded
TOTAL_POOL = 20_000


def brute_force_icm(stacks: list[int], prizes: list[int]) -> list[float]:
    """Harville by enumerating every finish order: an independent check of the subset DP."""
    n = len(stacks)
    equity = [0.0] * n
    for order in itertools.permutations(range(n)):
        probability = 1.0
        left = float(sum(stacks))
        for i in order:
            probability *= stacks[i] / left
            left -= stacks[i]
        for place, i in enumerate(order):
            equity[i] += probability * (prizes[place] if place < len(prizes) else 0)
    return equity


def test_icm_exact_agrees_with_brute_force_for_6_players() -> None:
    rng = random.Random(6)
    for _ in range(5):
        stacks = [rng.randint(1, 10_000) for _ in range(6)]
        prizes = sorted((rng.randint(0, 50_000) for _ in range(rng.randint(1, 6))), reverse=True)
        exact = icm_exact(stacks, prizes)
        brute = brute_force_icm(stacks, prizes)
        for e, b in zip(exact, brute, strict=True):
            assert e == pytest.approx(b, rel=1e-9, abs=1e-6), f"DP {exact} != brute force {brute}"


def test_icm_10_players_exact_sums_to_the_pool() -> None:
    stacks = [1000 * (i + 1) for i in range(10)]
    prizes = [5000, 3000, 2000, 1500, 1000, 800, 600, 500, 400, 300]
    equities = icm_exact(stacks, prizes)
    assert sum(equities) == pytest.approx(sum(prizes)), f"equities sum to {sum(equities)}, pool {sum(prizes)}"
    assert equities == sorted(equities), "more chips never means less equity"
    cents = icm_split(stacks, prizes)
    assert sum(cents) == sum(prizes), f"rounded shares must sum exactly, got {sum(cents)}"


def test_icm_equal_stacks_get_equal_equity() -> None:
    equities = icm_exact([100] * 5, [500, 300, 200])
    assert all(e == pytest.approx(200) for e in equities), f"expected 200 each, got {equities}"


def test_icm_monte_carlo_within_half_a_percent_and_reports_error() -> None:
    stacks, prizes = [5000, 3000, 1500, 500], [5000, 3000, 1500, 500]
    exact = icm_exact(stacks, prizes)
    estimate = icm_monte_carlo(stacks, prizes, random.Random(42), trials=40_000)
    pool = sum(prizes)
    for e, m, se in zip(exact, estimate.equities, estimate.standard_errors, strict=True):
        assert abs(e - m) <= 0.005 * pool, (
            f"Monte Carlo {m:.1f} off exact {e:.1f} by more than 0.5 % of {pool}"
        )
        assert 0 < se < 0.005 * pool, f"standard error {se} should be small and reported"
        assert abs(e - m) <= 5 * se, f"error {abs(e - m):.1f} beyond 5 standard errors ({se:.2f})"
    assert estimate.trials == 40_000


def test_icm_monte_carlo_runs_for_100_players() -> None:
    rng = random.Random(100)
    stacks = [rng.randint(1000, 100_000) for _ in range(100)]
    prizes = [100_000 // (i + 1) for i in range(15)]
    equities = icm_equities(stacks, prizes, rng=random.Random(7), trials=2_000)
    assert len(equities) == 100 and sum(equities) == pytest.approx(sum(prizes)), (
        "every trial pays every prize"
    )
    with pytest.raises(DealError):
        icm_equities(stacks, prizes)  # beyond 20 players Monte Carlo needs an rng


def test_icm_rejects_bad_input() -> None:
    with pytest.raises(DealError):
        icm_exact([100, 0], [10])
    with pytest.raises(DealError):
        icm_exact([1] * 21, [10])


@settings(max_examples=60, deadline=None)
@given(
    stacks=st.lists(st.integers(1, 10**6), min_size=2, max_size=8),
    prizes=st.lists(st.integers(0, 10**7), min_size=1, max_size=8),
)
def test_icm_split_always_adds_up(stacks: list[int], prizes: list[int]) -> None:
    prizes = sorted(prizes, reverse=True)
    shares = icm_split(stacks, prizes)
    assert sum(shares) == sum(prizes[: len(stacks)]), f"shares {shares} do not add up to the prizes"


def test_deal_3_chip_chop_guarantees_the_smallest_prize_then_chips() -> None:
    shares = chip_chop(STACKS, PRIZES)
    assert sum(shares) == sum(PRIZES) and min(shares) >= 500, f"got {shares}"
    assert shares == [500 + 4000, 500 + 2400, 500 + 1200, 500 + 400], (
        f"expected 500 + chips share, got {shares}"
    )


def test_deal_3_left_to_play_taken_from_shares_above_the_minimum() -> None:
    full = propose_deal(DealMethod.ICM, PLAYERS, STACKS, PRIZES)
    partial = propose_deal(DealMethod.ICM, PLAYERS, STACKS, PRIZES, left_to_play=1000)
    assert partial.dealt + partial.left_to_play == sum(PRIZES), "shares + left must equal the prizes"
    for p in PLAYERS:
        assert 500 <= partial.shares[p] <= full.shares[p], (
            f"{p}: {partial.shares[p]} vs full {full.shares[p]}"
        )
    cuts = [full.shares[p] - partial.shares[p] for p in PLAYERS]
    above = [full.shares[p] - 500 for p in PLAYERS]
    assert cuts == sorted(cuts, reverse=True) and above == sorted(above, reverse=True), (
        f"cuts {cuts} should follow shares above the minimum {above}"
    )
    with pytest.raises(TooMuchLeftToPlay):
        propose_deal(DealMethod.ICM, PLAYERS, STACKS, PRIZES, left_to_play=sum(PRIZES))


def _valid_plan() -> DealPlan:
    return propose_deal(DealMethod.ICM, PLAYERS, STACKS, PRIZES, left_to_play=1000)


def test_deal_1_only_at_the_final_table_with_everyone_agreeing() -> None:
    plan = _valid_plan()
    verify_deal(CONFIG, 1, plan, PLAYERS, PLAYERS, PRIZES, TOTAL_POOL)
    with pytest.raises(NotFinalTable):
        verify_deal(CONFIG, 2, plan, PLAYERS, PLAYERS, PRIZES, TOTAL_POOL)
    with pytest.raises(NotAgreed, match=r"\['d'\]"):
        verify_deal(CONFIG, 1, plan, PLAYERS, PLAYERS[:3], PRIZES, TOTAL_POOL)
    assert not can_deal(CONFIG, 1, plan, PLAYERS, (), PRIZES, TOTAL_POOL)


def test_deal_1_no_deals_in_satellites_or_when_the_operator_forbids() -> None:
    plan = _valid_plan()
    satellite = replace(CONFIG, satellite=Satellite(seats=2, target="main", seat_value=10_000))
    with pytest.raises(DealsNotAllowed, match="satellite"):
        verify_deal(satellite, 1, plan, PLAYERS, PLAYERS, PRIZES, TOTAL_POOL)
    with pytest.raises(DealsNotAllowed):
        verify_deal(
            replace(CONFIG, deals=Deals(allowed=False)), 1, plan, PLAYERS, PLAYERS, PRIZES, TOTAL_POOL
        )
    with pytest.raises(DealsNotAllowed):
        DealNegotiation(satellite, 1, PLAYERS)


def test_deal_3_amounts_must_add_up_and_respect_the_cap() -> None:
    plan = _valid_plan()
    short = replace(plan, shares={**plan.shares, "a": plan.shares["a"] - 1})
    with pytest.raises(AmountsDoNotAddUp):
        verify_deal(CONFIG, 1, short, PLAYERS, PLAYERS, PRIZES, TOTAL_POOL)
    with pytest.raises(DealError):
        verify_deal(CONFIG, 1, replace(plan, shares={"a": 10_000}), PLAYERS, PLAYERS, PRIZES, TOTAL_POOL)
    too_much = propose_deal(DealMethod.CHIP_CHOP, PLAYERS, STACKS, PRIZES, left_to_play=1001)
    with pytest.raises(TooMuchLeftToPlay, match="at most 1000"):
        verify_deal(CONFIG, 1, too_much, PLAYERS, PLAYERS, PRIZES, TOTAL_POOL)
    with pytest.raises(TooMuchLeftToPlay, match="requires 1000"):
        verify_deal(
            CONFIG,
            1,
            replace(plan, left_to_play=0, shares={**plan.shares, "a": plan.shares["a"] + 1000}),
            PLAYERS,
            PLAYERS,
            PRIZES,
            TOTAL_POOL,
            required_left_to_play=1000,
        )


def test_deal_3_custom_split_anyone_agrees_to() -> None:
    custom = DealPlan(DealMethod.CUSTOM, {"a": 2500, "b": 2500, "c": 2500, "d": 2500}, 0)
    assert can_deal(CONFIG, 1, custom, PLAYERS, PLAYERS, PRIZES, TOTAL_POOL)
    with pytest.raises(DealError):
        propose_deal(DealMethod.CUSTOM, PLAYERS, STACKS, PRIZES)


def test_deal_2_the_clock_pauses_while_they_negotiate() -> None:
    talks = DealNegotiation(CONFIG, 1, PLAYERS)
    for p in PLAYERS[:3]:
        talks.ask(p)
        assert not talks.clock_paused, "the clock runs until every player asks"
    assert talks.ask("d").everyone_asked and talks.clock_paused, "every player asked: the clock pauses"
    with pytest.raises(WrongNegotiationPhase):
        talks.ask("a")
    talks.propose(_valid_plan())
    for p in PLAYERS[:3]:
        assert not talks.accept(p).everyone_accepted
    assert talks.accept("d").everyone_accepted
    assert talks.phase is NegotiationPhase.AGREED and not talks.clock_paused


def test_deal_2_abandoned_talks_restart_the_clock() -> None:
    talks = DealNegotiation(CONFIG, 1, PLAYERS)
    for p in PLAYERS:
        talks.ask(p)
    assert not talks.can_accept("a"), "nothing to accept before a proposal"
    talks.abandon("b")
    assert talks.phase is NegotiationPhase.ABANDONED and not talks.clock_paused
    assert not talks.can_propose(_valid_plan())


def test_deal_4_a_full_deal_ends_the_tournament_and_the_chip_leader_wins() -> None:
    plan = propose_deal(DealMethod.ICM, PLAYERS, STACKS, PRIZES)
    result = conclude_deal("t", plan, PLAYERS, STACKS)
    assert result.ends_tournament and result.winner == "a", f"chip leader a should win, got {result.winner}"
    net = net_by_account(result.transfers)
    assert net[pool_account("t")] == -sum(PRIZES), f"everything is dealt, got {net}"
    assert all(t.reason is Reason.DEAL for t in result.transfers)
    assert net[player_account("a")] == plan.shares["a"]


def test_deal_4_partial_deal_plays_on_for_the_rest_with_shorter_levels() -> None:
    plan = _valid_plan()
    result = conclude_deal("t", plan, PLAYERS, STACKS)
    assert not result.ends_tournament and result.winner is None
    assert result.continuation is not None and result.continuation.prizes == (1000,), (
        f"got {result.continuation}"
    )
    levels = (Level(100, 200, 60), Level(200, 400, 20), Level(300, 600, 10))
    assert [lv.minutes for lv in shortened_levels(levels)] == [30, 15, 10], "half, never under 15 min"
    assert [lv.minutes for lv in shortened_levels(levels, 25)] == [45, 15, 10]
    with pytest.raises(DealError):
        shortened_levels(levels, 60)


def test_deal_3_left_to_play_measures() -> None:
    assert left_to_play_above_minimums(PRIZES, 4) == (10_000 - 4 * 500) // 10, "10 % above the minimum cashes"
    assert left_to_play_above_minimums(PRIZES, 4, percent=0) == 0
    with pytest.raises(DealError):
        left_to_play_above_minimums(PRIZES, 0)
