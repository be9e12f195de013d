"""Prize structures: exact sums, shape, tables, satellites (REG-6, END-1), overlay, tied finishes (ELIM-2)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.tournament.config import Level, PayoutMode, Payouts, Satellite, TournamentConfig
from engine.tournament.payouts import (
    PayoutError,
    PayoutStructure,
    effective_guarantee,
    generate_structure,
    nice_amount,
    overlay_transfer,
    places_paid,
    prizes_for_finishes,
    satellite_is_over,
    satellite_structure,
    split_by_weights,
    split_equally,
    structure_for,
    structure_from_table,
)
from engine.tournament.standings import Finish, tournament_over
from engine.tournament.transfers import (
    HOUSE,
    Reason,
    net_by_account,
    player_account,
    pool_account,
    ticket_account,
)

CONFIG = TournamentConfig(
    id="t", name="T", levels=(Level(10, 20, 10),), buy_in=1000, fee=100, starting_stack=1500
)


def finish(place: int, *players: str) -> Finish:
    return Finish(place=place, players=tuple(players), shared_places=len(players))


@settings(max_examples=300, deadline=None)
@given(entries=st.integers(1, 20_000), buy_in=st.integers(0, 100_000), percent=st.integers(1, 50))
def test_generated_structure_sums_exactly_and_never_increases(
    entries: int, buy_in: int, percent: int
) -> None:
    pool = entries * buy_in
    s = generate_structure(pool, entries, buy_in, percent)
    assert sum(s.prizes) == pool, f"expected the structure to sum to {pool}, got {sum(s.prizes)}"
    assert all(a >= b > 0 for a, b in zip(s.prizes, s.prizes[1:], strict=False)), (
        f"not decreasing: {s.prizes}"
    )
    if pool:
        assert s.places_paid == min(places_paid(entries, percent), pool)


@pytest.mark.parametrize("entries", [10, 27, 100, 180, 1000, 10_000])
def test_generated_structure_shape(entries: int) -> None:
    buy_in = 1000
    s = generate_structure(entries * buy_in, entries, buy_in)
    assert abs(s.places_paid - entries * 0.15) <= 1, (
        f"about 15 % paid expected, got {s.places_paid}/{entries}"
    )
    assert 1.2 * buy_in <= s.prizes[-1] <= 5 * buy_in, f"min cash should be 1.2x+ buy-in, got {s.prizes[-1]}"
    assert s.prizes[0] > 2 * s.prizes[1] * 0.8, f"first place should stand out, got {s.prizes[:3]}"
    nice = [p == nice_amount(p) for p in s.prizes[1:]]
    assert all(nice), f"places 2.. should be nice amounts, got {s.prizes[1:10]}"


def test_nice_amounts() -> None:
    assert [nice_amount(x) for x in (999, 2734, 123_456_789, 1_004)] == [999, 2730, 123_000_000, 1000]


def test_places_paid_rounding() -> None:
    assert [places_paid(n, 15) for n in (0, 1, 6, 10, 100, 10_000)] == [0, 1, 1, 2, 15, 1500]


def test_explicit_table_scaled_to_entries() -> None:
    s = structure_from_table(10_001, 10, [5000, 3000, 2000])
    assert s.prizes == (5001, 3000, 2000), f"largest remainder to first place, got {s.prizes}"
    two = structure_from_table(1000, 2, [5000, 3000, 2000])
    assert two.prizes == (625, 375), f"two entries pay two places scaled up, got {two.prizes}"
    config = replace(CONFIG, payouts=Payouts(mode=PayoutMode.TABLE, table=(7000, 3000)))
    assert structure_for(config, 2000, 2).prizes == (1400, 600)


def test_guarantee_overlay_paid_by_the_house() -> None:
    t = overlay_transfer("t", pool=600_000, guarantee=1_000_000)
    assert t is not None and (t.source, t.target, t.amount, t.reason) == (
        HOUSE,
        pool_account("t"),
        400_000,
        Reason.OVERLAY,
    ), f"expected a 400000 overlay from the house, got {t}"
    assert overlay_transfer("t", pool=1_000_001, guarantee=1_000_000) is None


def test_reg_6_satellite_seats_all_get_the_same_prize_extra_is_cash() -> None:
    s = satellite_structure(pool=45_000, seat_value=20_000, target="main")
    assert s.prizes == (20_000, 20_000, 5_000) and s.seats == 2, f"got {s}"
    transfers = prizes_for_finishes(s, [finish(1, "a"), finish(2, "b"), finish(3, "c")], "sat")
    by_target = {t.target: (t.amount, t.reason) for t in transfers}
    assert by_target == {
        ticket_account("main", "a"): (20_000, Reason.TICKET),
        ticket_account("main", "b"): (20_000, Reason.TICKET),
        player_account("c"): (5_000, Reason.PRIZE),
    }, f"seats are tickets and the rest is cash, got {by_target}"


def test_reg_6_a_second_seat_is_paid_as_tournament_money() -> None:
    s = satellite_structure(pool=40_000, seat_value=20_000, target="main")
    transfers = prizes_for_finishes(s, [finish(1, "a"), finish(2, "b")], "sat", ticket_holders={"a"})
    assert {t.target for t in transfers} == {player_account("a"), ticket_account("main", "b")}, (
        f"a player already holding a seat gets cash, got {transfers}"
    )


def test_end_1_satellite_ends_when_players_left_equal_seats() -> None:
    s = satellite_structure(pool=45_000, seat_value=20_000, target="main")
    assert not satellite_is_over(s, 3) and satellite_is_over(s, 2), (
        "a satellite ends at players left == seats"
    )
    assert not satellite_is_over(generate_structure(10_000, 10, 1000), 2)


def test_satellite_guarantee_covers_its_seats() -> None:
    config = replace(CONFIG, satellite=Satellite(seats=3, target="main", seat_value=11_000))
    assert effective_guarantee(config) == 33_000
    assert structure_for(config, 33_000, 30).seats == 3


def test_elim_2_tied_places_split_equally_odd_cent_to_first_after_button() -> None:
    s = PayoutStructure(prizes=(5000, 3001, 2000))
    transfers = prizes_for_finishes(s, [finish(1, "w"), finish(2, "x", "y")], "t")
    paid = {t.target: t.amount for t in transfers}
    assert paid == {player_account("w"): 5000, player_account("x"): 2501, player_account("y"): 2500}, (
        f"expected 5001 split 2501/2500 with the odd cent to x, got {paid}"
    )
    assert net_by_account(transfers)[pool_account("t")] == -10_001


def test_prizes_outside_the_money_pay_nothing_and_keys_are_unique() -> None:
    s = PayoutStructure(prizes=(700, 300))
    transfers = prizes_for_finishes(s, [finish(1, "a"), finish(2, "b"), finish(3, "c", "d")], "t")
    assert len(transfers) == 2
    assert len({t.idempotency_key for t in transfers}) == 2
    with pytest.raises(PayoutError):
        prizes_for_finishes(s, [finish(1, "a"), finish(1, "b")], "t")
    with pytest.raises(PayoutError):
        prizes_for_finishes(s, [finish(1, "a"), finish(2, "a")], "t")


def test_split_helpers_add_up() -> None:
    assert split_equally(10, 3) == [4, 3, 3]
    assert split_by_weights(10, [1, 1, 1]) == [4, 3, 3], "equal remainders: the earlier index wins"
    assert split_by_weights(100, [0, 0]) == [50, 50]
    assert split_by_weights(7, [0.5, 0.25, 0.25]) == [3, 2, 2], "largest remainders .75 and .75 get the cents"
    with pytest.raises(PayoutError):
        split_by_weights(-1, [1])


@settings(max_examples=200, deadline=None)
@given(amount=st.integers(0, 10**9), weights=st.lists(st.integers(0, 10**6), min_size=1, max_size=30))
def test_split_by_weights_is_exact(amount: int, weights: list[int]) -> None:
    parts = split_by_weights(amount, weights)
    assert sum(parts) == amount and all(p >= 0 for p in parts), f"parts {parts} do not add to {amount}"


def test_places_paid_capped_by_the_players_who_can_finish() -> None:
    config = replace(CONFIG, payouts=Payouts(percent_paid=50))
    s = structure_for(config, pool=6000, entries=6, players=2)
    assert s.places_paid == 2 and s.pool == 6000, f"re-entries: 6 entries, 2 players pay 2 places, got {s}"
    t = structure_for(
        replace(config, payouts=Payouts(mode=PayoutMode.TABLE, table=(5000, 3000, 2000))), 6000, 6, 2
    )
    assert t.prizes == (3750, 2250), f"got {t.prizes}"
    with pytest.raises(PayoutError):
        generate_structure(100, 10, 10, max_places=0)


def test_payout_table_tiny_pool_pays_every_place_at_least_one_cent() -> None:
    # 90/5/5 % of 10 cents is 9/0.5/0.5: largest remainder gave (9, 1, 0) and the structure refused it
    for pool, expected in ((3, (1, 1, 1)), (10, (8, 1, 1)), (19, (17, 1, 1))):
        got = structure_from_table(pool, 3, (9000, 500, 500)).prizes
        assert got == expected, f"pool {pool}: expected {expected}, got {got}"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(1, 10_000), min_size=1, max_size=12),
    st.integers(0, 5_000),
    st.integers(1, 20),
)
def test_payout_table_any_pool_sums_exactly_with_positive_non_increasing_prizes(
    weights: list[int], pool: int, entries: int
) -> None:
    table = sorted(weights, reverse=True)
    prizes = structure_from_table(pool, entries, table).prizes
    assert sum(prizes) == pool, f"prizes {prizes} must sum to the pool {pool}"
    assert all(p >= 1 for p in prizes), f"every paid place gets at least 1 cent, got {prizes}"
    assert list(prizes) == sorted(prizes, reverse=True), f"a higher place never gets less: {prizes}"


@pytest.mark.parametrize("percent", [1, 15, 33, 50])
def test_end_1_generated_structure_first_place_pays_more_than_second(percent: int) -> None:
    # A flat top would let END-1 (every player left gets the same prize) end the tournament at once.
    for entries in (*range(2, 300), 1000, 5000, 20_000):
        for buy_in, pool in ((1, 2), (1, entries), (1000, entries * 910), (1000, entries * 1000 + 7)):
            prizes = generate_structure(pool, entries, buy_in, percent).prizes
            assert sum(prizes) == pool, f"{entries} entries, pool {pool}: prizes sum to {sum(prizes)}"
            if len(prizes) >= 2:
                assert prizes[0] > prizes[1], (
                    f"{percent} % of {entries} entries, pool {pool}: first must beat second, got {prizes[:3]}"
                )
                assert not tournament_over(len(prizes), prizes), f"END-1 says over at {prizes[:3]}"
