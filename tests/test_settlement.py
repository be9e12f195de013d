"""Settling a stopped tournament (CANCEL-1), crash rollback of stacks (CRASH-1), REG-7 refunds."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from engine.tournament.payouts import PayoutStructure
from engine.tournament.registration import Payment, PurchaseKind
from engine.tournament.settlement import (
    InMoneyMethod,
    SettlementError,
    SettlementKind,
    StoppedTournament,
    decide,
    rolled_back_stacks,
    settle,
)
from engine.tournament.transfers import HOUSE, Reason, Transfer, net_by_account, player_account, pool_account

POOL = pool_account("t")


def entry(
    player: str, to_pool: int = 1000, to_house: int = 100, kind: PurchaseKind = PurchaseKind.ENTRY
) -> Payment:
    return Payment(player, kind, 1, player_account(player), to_pool, to_house)


# Six entries; e and f are out. Remaining chips are at the start of the hand in progress.
PAYMENTS = tuple(entry(p) for p in "abcdef")
STOPPED = StoppedTournament(
    tournament_id="t",
    payments=PAYMENTS,
    remaining={"a": 6000, "b": 3000, "c": 0 + 1000, "d": 2000},
    structure=PayoutStructure(prizes=(3000, 2000, 1000)),
    minutes_since_start=45,
)


def net(transfers: tuple[Transfer, ...]) -> dict[str, int]:
    return net_by_account(transfers)


def assert_pool_empties(stopped: StoppedTournament, transfers: tuple[Transfer, ...]) -> None:
    left = stopped.pool_balance + net(transfers).get(POOL, 0)
    assert left == 0, f"the pool must end at exactly 0, {left} left"
    keys = [t.idempotency_key for t in transfers]
    assert len(keys) == len(set(keys)), f"duplicate idempotency keys: {keys}"
    running = stopped.pool_balance
    for t in transfers:
        running += (t.amount if t.target == POOL else 0) - (t.amount if t.source == POOL else 0)
        assert running >= 0, f"executed in order, the pool goes negative at {t}"


def test_cancel_1_restart_within_20_minutes_moves_no_money() -> None:
    stopped = replace(STOPPED, can_restart_within_20_minutes=True)
    result = settle(stopped)
    assert result.kind is SettlementKind.RESTART and result.transfers == (), f"got {result}"


def test_crash_1_stacks_roll_back_to_the_start_of_the_hand() -> None:
    start_of_hand = {"a": 1500, "b": 0 + 700}
    assert rolled_back_stacks(start_of_hand) == start_of_hand
    with pytest.raises(SettlementError):
        rolled_back_stacks({"a": -1})


def test_crash_1_settlement_divides_by_chips_at_the_start_of_the_hand() -> None:
    # Chips as the crash left them would differ; the settlement is given start-of-hand chips.
    result = settle(STOPPED)
    shares = {t.target: t.amount for t in result.transfers if t.reason is Reason.SETTLEMENT}
    assert shares[player_account("a")] > shares[player_account("b")] > shares[player_account("c")], (
        f"more chips at the start of the hand, more money: {shares}"
    )


def test_reg_7_crash_before_the_first_hand_refunds_everything() -> None:
    stopped = replace(STOPPED, first_hand_dealt=False, minutes_since_start=0)
    result = settle(stopped)
    assert result.kind is SettlementKind.REFUND_ALL
    n = net(result.transfers)
    assert all(n[player_account(p)] == 1100 for p in "abcdef"), f"everyone gets 1100 back, got {n}"
    assert_pool_empties(stopped, result.transfers)


def test_cancel_1_rollback_within_30_minutes_refunds_everyone_ever_entered() -> None:
    stopped = replace(STOPPED, minutes_since_start=29.9, freezeout=False, rebuy_period_over=False)
    result = settle(stopped)
    assert result.kind is SettlementKind.ROLLBACK
    n = net(result.transfers)
    assert n[player_account("e")] == 1100 and n[player_account("f")] == 1100, f"the eliminated too: {n}"
    assert n[HOUSE] == -600, f"all fees come back, got {n[HOUSE]}"
    assert_pool_empties(stopped, result.transfers)


def test_cancel_1_prize_pool_payout_before_the_money_is_50_50() -> None:
    stopped = replace(STOPPED, structure=PayoutStructure(prizes=(4000, 2000)))
    result = settle(stopped)
    assert result.kind is SettlementKind.PRIZE_POOL, "a freezeout after 30 minutes pays out the prize pool"
    shares = {t.target: t.amount for t in result.transfers if t.reason is Reason.SETTLEMENT}
    # 6000 pool: 3000 equally (750 each), 3000 by chips 6:3:1:2 of 12.
    assert shares == {
        player_account("a"): 750 + 1500,
        player_account("b"): 750 + 750,
        player_account("c"): 750 + 250,
        player_account("d"): 750 + 500,
    }, f"got {shares}"
    fees = {t.target: t.amount for t in result.transfers if t.reason is Reason.REFUND}
    assert fees == {player_account(p): 100 for p in "abcd"}, f"remaining players get their fees back: {fees}"
    assert_pool_empties(stopped, result.transfers)


def test_cancel_1_prize_pool_payout_in_the_money_gives_the_smallest_prize_then_chips() -> None:
    stopped = replace(
        STOPPED,
        structure=PayoutStructure(prizes=(2000, 1500, 1000, 500, 500, 500)),
        remaining={"a": 6000, "b": 3000, "c": 1000, "d": 2000},
        prizes_paid={"e": 500, "f": 500},
    )
    assert stopped.in_the_money
    result = settle(stopped)
    shares = {t.target: t.amount for t in result.transfers if t.reason is Reason.SETTLEMENT}
    # 5000 left: 500 each (the prize of 4th) and 3000 by chips 6:3:1:2.
    assert shares == {
        player_account("a"): 500 + 1500,
        player_account("b"): 500 + 750,
        player_account("c"): 500 + 250,
        player_account("d"): 500 + 500,
    }, f"got {shares}"
    assert player_account("e") not in net(result.transfers), "prizes already paid stay paid, nothing more"
    assert_pool_empties(stopped, result.transfers)


def test_cancel_1_in_the_money_operator_may_choose_icm() -> None:
    stopped = replace(STOPPED, structure=PayoutStructure(prizes=(3000, 1500, 1000, 500)))
    chips = settle(stopped).transfers
    icm = settle(stopped, InMoneyMethod.ICM, random.Random(1)).transfers
    icm_shares = {t.target: t.amount for t in icm if t.reason is Reason.SETTLEMENT}
    chip_shares = {t.target: t.amount for t in chips if t.reason is Reason.SETTLEMENT}
    assert sum(icm_shares.values()) == sum(chip_shares.values()) == 6000
    assert icm_shares[player_account("a")] < chip_shares[player_account("a")], "ICM flattens the chip leader"
    assert_pool_empties(stopped, icm)


def test_cancel_1_return_and_share_when_pool_is_short_of_the_guarantee() -> None:
    payments = (*PAYMENTS, entry("a", 1000, 0, PurchaseKind.REBUY))
    stopped = replace(STOPPED, payments=payments, guarantee=100_000, freezeout=False, rebuy_period_over=False)
    assert decide(stopped) is SettlementKind.RETURN_AND_SHARE
    result = settle(stopped)
    n = net(result.transfers)
    # a: fee 100 + contributions 2000 back; e and f's 2000 split 1000 equally, 1000 by chips 6:3:1:2.
    assert n[player_account("a")] == 100 + 2000 + 250 + 500, f"got {n}"
    # 1000 by chips is 500, 250, 83.33, 166.67: the odd cent goes to d's larger remainder.
    assert (n[player_account("c")], n[player_account("d")]) == (
        100 + 1000 + 250 + 83,
        100 + 1000 + 250 + 167,
    ), f"got {n}"
    assert Reason.OVERLAY not in {t.reason for t in result.transfers}, (
        "no overlay outside a prize-pool payout"
    )
    assert_pool_empties(stopped, result.transfers)


def test_cancel_1_guarantee_overlay_paid_only_by_prize_pool_payout() -> None:
    over = replace(STOPPED, guarantee=7000)  # 6000 > 85 % of 7000: prize-pool payout with 1000 overlay
    result = settle(over)
    assert result.kind is SettlementKind.PRIZE_POOL
    overlay = [t for t in result.transfers if t.reason is Reason.OVERLAY]
    assert [(t.source, t.amount) for t in overlay] == [(HOUSE, 1000)], f"got {overlay}"
    assert result.transfers[0].reason is Reason.OVERLAY, "money into the pool comes first"
    assert_pool_empties(over, result.transfers)
    # Overlay already paid in goes back to the house when the settlement is not a prize-pool payout.
    early = replace(STOPPED, guarantee=7000, overlay_paid=1000, minutes_since_start=10)
    back = settle(early)
    assert net(back.transfers)[HOUSE] == 1000 - 600, f"overlay back, fees out: {net(back.transfers)}"
    assert_pool_empties(early, back.transfers)


def test_cancel_1_rebuy_period_over_means_prize_pool_payout() -> None:
    stopped = replace(STOPPED, guarantee=100_000, freezeout=False, rebuy_period_over=True)
    assert decide(stopped) is SettlementKind.PRIZE_POOL
    stopped = replace(stopped, rebuy_period_over=False)
    assert decide(stopped) is SettlementKind.RETURN_AND_SHARE
    assert decide(replace(stopped, guarantee=7000)) is SettlementKind.PRIZE_POOL, "6000 > 85 % of 7000"


def test_cancel_1_sit_and_go_is_always_a_prize_pool_payout() -> None:
    stopped = replace(
        STOPPED, sit_and_go=True, minutes_since_start=5, freezeout=False, rebuy_period_over=False
    )
    assert decide(stopped) is SettlementKind.PRIZE_POOL
    assert_pool_empties(stopped, settle(stopped).transfers)


def test_cancel_1_prizes_already_paid_stay_paid_in_a_rollback() -> None:
    stopped = replace(STOPPED, minutes_since_start=20, prizes_paid={"f": 1500})
    result = settle(stopped)
    assert not any(t.source == player_account("f") for t in result.transfers), (
        "paid prizes are not taken back"
    )
    cover = [t for t in result.transfers if t.source == HOUSE and t.target == POOL]
    assert [t.amount for t in cover] == [1500], f"the house covers the shortfall, got {cover}"
    assert_pool_empties(stopped, result.transfers)


def test_settlement_rejects_impossible_input() -> None:
    with pytest.raises(SettlementError):
        settle(replace(STOPPED, remaining={"a": -5}))
    with pytest.raises(SettlementError):
        settle(replace(STOPPED, prizes_paid={"x": 10**9}))


def test_reg_7_crash_before_the_first_hand_refunds_even_if_a_restart_is_quick() -> None:
    # P§17: "If there is a server crash before the tournament has started the registered players
    # will get a refund" -- with no condition, so REG-7 comes before CANCEL-1's restart.
    stopped = replace(
        STOPPED, first_hand_dealt=False, minutes_since_start=0, can_restart_within_20_minutes=True
    )
    assert decide(stopped) is SettlementKind.REFUND_ALL, f"expected REFUND_ALL, got {decide(stopped)}"
    result = settle(stopped)
    n = net(result.transfers)
    assert all(n[player_account(p)] == 1100 for p in "abcdef"), f"everyone gets 1100 back, got {n}"
    assert_pool_empties(stopped, result.transfers)


def test_cancel_1_icm_beyond_20_players_without_an_rng_is_a_settlement_error() -> None:
    players = [f"p{i:02d}" for i in range(21)]
    stopped = StoppedTournament(
        tournament_id="t",
        payments=tuple(entry(p) for p in players),
        remaining={p: 1000 + i for i, p in enumerate(players)},
        structure=PayoutStructure(prizes=tuple(range(2100, 0, -100))),
        minutes_since_start=45,
    )
    assert stopped.in_the_money, "21 players left and 21 places paid: in the money"
    with pytest.raises(SettlementError, match="needs an rng"):
        settle(stopped, InMoneyMethod.ICM)
    icm = settle(stopped, InMoneyMethod.ICM, random.Random(3))
    assert_pool_empties(stopped, icm.transfers)
