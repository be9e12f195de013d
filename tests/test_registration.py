"""Registration and purchases (REG-1..7) on the pure state machine: events, transfers, refusals."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.tournament.config import AddOn, Level, Rebuys, ReEntry, TournamentConfig
from engine.tournament.registration import (
    AlreadyRegistered,
    CloseReason,
    CutoffPassed,
    InsufficientFunds,
    IsEliminated,
    LateRegistrationClosed,
    LateRegistrationEnded,
    LimitReached,
    NotEliminated,
    NotEnoughPlayers,
    NotOffered,
    Outcome,
    PeriodOver,
    Phase,
    Promoted,
    PurchaseKind,
    Registered,
    Registration,
    RegistrationError,
    StackTooBig,
    TournamentFull,
    WaitingRefunded,
    Waitlisted,
    WrongPhase,
    entry_price,
    rebuy_price,
)
from engine.tournament.settlement import refund_registrations
from engine.tournament.transfers import (
    HOUSE,
    Reason,
    net_by_account,
    player_account,
    pool_account,
    ticket_account,
)

START = 10_000.0
RICH = 10**9
LEVEL = Level(small_blind=10, big_blind=20, minutes=10)


def make_config(**changes: object) -> TournamentConfig:
    base = TournamentConfig(
        id="t", name="T", levels=(LEVEL,), buy_in=1000, fee=100, starting_stack=1500, max_players=100
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def registered(config: TournamentConfig, players: int) -> Registration:
    reg = Registration(config, START)
    for i in range(players):
        reg.register(f"p{i}", START - 100, RICH)
    return reg


def net(outcome: Outcome) -> dict[str, int]:
    return net_by_account(outcome.transfers)


def test_reg_1_registration_debits_buy_in_to_pool_and_fee_to_house() -> None:
    reg = Registration(make_config(), START)
    out = reg.register("alice", START - 3600, balance=1100)
    assert net(out) == {player_account("alice"): -1100, pool_account("t"): 1000, HOUSE: 100}, (
        f"expected buy-in to the pool and fee to the house, got {net(out)}"
    )
    assert out.events == (Registered("alice", START - 3600, False, False),)
    reasons = {t.reason for t in out.transfers}
    assert reasons == {Reason.BUY_IN, Reason.FEE}, f"expected buy-in and fee reasons, got {reasons}"


def test_reg_1_no_fee_means_9_percent_commission_out_of_the_buy_in() -> None:
    config = make_config(fee=None)
    price = entry_price(config)
    assert (price.to_pool, price.to_house, price.total) == (910, 90, 1000), f"got {price}"
    reg = Registration(config, START)
    out = reg.register("a", START - 1, 1000)
    assert net(out)[HOUSE] == 90 and net(out)[pool_account("t")] == 910, f"got {net(out)}"


def test_reg_1_no_fee_means_4_percent_commission_on_rebuys() -> None:
    config = make_config(fee=None, rebuys=Rebuys(period_minutes=60, cost=1000, chips=1500))
    price = rebuy_price(config)
    assert (price.to_pool, price.to_house) == (960, 40), f"expected 960/40, got {price}"


def test_reg_1_insufficient_funds_refused_and_nothing_changes() -> None:
    reg = Registration(make_config(), START)
    assert not reg.can_register("a", START - 1, 1099)
    with pytest.raises(InsufficientFunds):
        reg.register("a", START - 1, 1099)
    assert reg.registered == [] and reg.payments == (), "a refused registration must change nothing"


def test_reg_1_double_registration_refused() -> None:
    reg = registered(make_config(), 1)
    with pytest.raises(AlreadyRegistered):
        reg.register("p0", START - 1, RICH)


def test_reg_2_waiting_list_in_order_and_promotion_on_unregistration() -> None:
    reg = registered(make_config(max_players=2, waiting_list=2), 2)
    w1 = reg.register("w1", START - 50, RICH)
    w2 = reg.register("w2", START - 40, RICH)
    assert w1.events == (Waitlisted("w1", START - 50, 1),) and w2.events == (Waitlisted("w2", START - 40, 2),)
    assert net(w1)[player_account("w1")] == -1100, "a waiting player pays at once (REG-2)"
    with pytest.raises(TournamentFull):
        reg.register("w3", START - 30, RICH)
    out = reg.unregister("p0", START - 20)
    assert Promoted("w1", START - 20) in out.events, f"expected w1 promoted, got {out.events}"
    assert reg.registered == ["p1", "w1"] and reg.waiting == ["w2"]
    assert not any(t.target == player_account("w1") for t in out.transfers), "promotion moves no money"


def test_reg_2_the_waiting_list_is_refunded_at_the_start() -> None:
    reg = registered(make_config(max_players=2, waiting_list=3), 2)
    reg.register("w1", START - 5, RICH)
    reg.register("w2", START - 5, RICH)
    out = reg.start(START)
    assert [e for e in out.events if isinstance(e, WaitingRefunded)] == [
        WaitingRefunded("w1", START),
        WaitingRefunded("w2", START),
    ]
    n = net(out)
    assert n[player_account("w1")] == 1100 and n[player_account("w2")] == 1100, (
        f"full refunds expected, got {n}"
    )
    assert reg.waiting == [] and reg.pool_contributions == 2000, (
        f"pool keeps 2 buy-ins, got {reg.pool_contributions}"
    )
    assert {t.reason for t in out.transfers} == {Reason.REFUND}


def test_reg_3_unregistration_refunds_buy_in_and_fee() -> None:
    reg = registered(make_config(), 1)
    out = reg.unregister("p0", START)
    assert net(out) == {player_account("p0"): 1100, pool_account("t"): -1000, HOUSE: -100}, f"got {net(out)}"
    assert reg.registered == [] and reg.payments == ()


def test_reg_3_unregistration_closes_at_the_cutoff() -> None:
    reg = registered(make_config(unregister_cutoff_minutes=5), 1)
    assert reg.can_unregister("p0", START - 300)
    with pytest.raises(CutoffPassed):
        reg.unregister("p0", START - 299)


def test_reg_3_no_unregistration_after_the_start() -> None:
    reg = registered(make_config(), 3)
    reg.start(START)
    with pytest.raises(WrongPhase):
        reg.unregister("p0", START + 1)


def test_reg_3_ticket_seat_refunds_the_ticket() -> None:
    reg = Registration(make_config(), START)
    out = reg.register("sat", START - 10, balance=1100, via_ticket=True)
    ticket = ticket_account("t", "sat")
    assert net(out)[ticket] == -1100 and player_account("sat") not in net(out), f"got {net(out)}"
    back = reg.unregister("sat", START - 5)
    assert net(back)[ticket] == 1100, f"the ticket comes back, got {net(back)}"


def test_reg_3_reregistration_after_unregistration_plans_new_keys() -> None:
    reg = Registration(make_config(), START)
    first = reg.register("a", START - 100, RICH)
    reg.unregister("a", START - 90)
    second = reg.register("a", START - 80, RICH)
    keys1 = {t.idempotency_key for t in first.transfers}
    keys2 = {t.idempotency_key for t in second.transfers}
    assert not keys1 & keys2, f"a second registration must not reuse keys: {keys1 & keys2}"


def test_start_needs_min_players_else_cancel_refunds_everyone() -> None:
    reg = registered(make_config(min_players=3), 2)
    with pytest.raises(NotEnoughPlayers):
        reg.start(START)
    with pytest.raises(WrongPhase):
        registered(make_config(), 2).start(START - 1)
    out = reg.cancel(START)
    assert reg.phase is Phase.CANCELLED
    assert net(out)[pool_account("t")] == -2000 and net(out)[HOUSE] == -200, f"got {net(out)}"


def test_reg_4_late_registration_window_closes_after_n_minutes() -> None:
    reg = registered(make_config(late_registration_minutes=20, extended_registration=True), 3)
    reg.start(START, seat_capacity=9)
    assert reg.late_registration_closed(START + 1199) is None
    out = reg.register("late", START + 600, RICH)
    assert out.events[0] == Registered("late", START + 600, False, True)
    assert reg.late_registration_closed(START + 1200) is CloseReason.TIME
    with pytest.raises(LateRegistrationClosed):
        reg.register("later", START + 1200, RICH)


def test_reg_4_late_registration_closes_at_the_first_elimination() -> None:
    reg = registered(make_config(late_registration_minutes=20), 3)
    reg.start(START, seat_capacity=9)
    out = reg.eliminate("p0", START + 60)
    assert LateRegistrationEnded(START + 60, CloseReason.FIRST_ELIMINATION) in out.events, f"got {out.events}"
    with pytest.raises(LateRegistrationClosed):
        reg.register("late", START + 120, RICH)


def test_reg_4_extended_registration_survives_eliminations() -> None:
    reg = registered(make_config(late_registration_minutes=20, extended_registration=True), 3)
    reg.start(START, seat_capacity=9)
    reg.eliminate("p0", START + 60)
    assert reg.can_register("late", START + 120, RICH), "extended registration stays open after a bust"


def test_reg_4_late_registration_closes_when_the_allocated_seats_are_full() -> None:
    reg = registered(make_config(late_registration_minutes=20, table_size=3, extended_registration=True), 2)
    reg.start(START)
    assert reg.seat_capacity == 3
    out = reg.register("late", START + 10, RICH)
    assert LateRegistrationEnded(START + 10, CloseReason.SEATS_FULL) in out.events, f"got {out.events}"
    assert reg.late_registration_closed(START + 11) is CloseReason.SEATS_FULL
    full = registered(make_config(late_registration_minutes=20, table_size=2), 2)
    assert LateRegistrationEnded(START, CloseReason.SEATS_FULL) in full.start(START).events


def test_reg_4_reg_2_late_registration_reports_closed_when_max_players_reached_with_seats_free() -> None:
    # 3 of 3 players on two heads-up tables: a seat is free, but max_players refuses everyone.
    reg = registered(make_config(late_registration_minutes=20, table_size=2, max_players=3), 3)
    out = reg.start(START)
    assert reg.seat_capacity == 4, f"expected 4 seats allocated, got {reg.seat_capacity}"
    assert LateRegistrationEnded(START, CloseReason.FULL) in out.events, f"got {out.events}"
    assert reg.late_registration_closed(START + 1) is CloseReason.FULL, (
        f"expected closed (full), got {reg.late_registration_closed(START + 1)}"
    )
    with pytest.raises(LateRegistrationClosed):
        reg.register("late", START + 1, RICH)
    # reaching max_players by a late registration closes it too
    late = registered(
        make_config(late_registration_minutes=20, table_size=2, max_players=3, extended_registration=True), 2
    )
    late.start(START, seat_capacity=4)
    assert late.late_registration_closed(START + 1) is None, "2 of 3 players: still open"
    events = late.register("late", START + 10, RICH).events
    assert LateRegistrationEnded(START + 10, CloseReason.FULL) in events, f"got {events}"


def test_reg_4_no_late_registration_by_default() -> None:
    reg = registered(make_config(), 2)
    reg.start(START)
    assert reg.late_registration_closed(START) is CloseReason.NOT_OFFERED


REBUY_CONFIG = make_config(
    rebuys=Rebuys(period_minutes=60, cost=1000, chips=1500, max_per_player=2),
    add_on=AddOn(cost=1000, chips=3000),
)


def test_reg_5_rebuy_within_period_threshold_and_limit() -> None:
    reg = registered(REBUY_CONFIG, 2)
    reg.start(START)
    out = reg.rebuy("p0", START + 60, balance=RICH, stack=0)
    assert out.events[0].chips == 1500, f"a rebuy adds its chips, got {out.events}"  # type: ignore[union-attr]
    assert net(out) == {player_account("p0"): -1000, pool_account("t"): 1000}, f"got {net(out)}"
    reg.rebuy("p0", START + 61, RICH, stack=1500)
    with pytest.raises(LimitReached):
        reg.rebuy("p0", START + 62, RICH, stack=0)
    with pytest.raises(StackTooBig):
        reg.rebuy("p1", START + 62, RICH, stack=1501)
    with pytest.raises(PeriodOver):
        reg.rebuy("p1", START + 3600, RICH, stack=0)
    with pytest.raises(InsufficientFunds):
        reg.rebuy("p1", START + 62, 999, stack=0)


def test_reg_5_rebuy_refused_when_funds_are_short_so_the_bust_is_eliminated() -> None:
    reg = registered(REBUY_CONFIG, 2)
    reg.start(START)
    assert not reg.can_rebuy("p1", START + 100, balance=0, stack=0)
    reg.eliminate("p1", START + 100)
    with pytest.raises(IsEliminated):
        reg.rebuy("p1", START + 101, RICH, 0)


def test_reg_5_add_on_only_at_the_add_on_break() -> None:
    reg = registered(REBUY_CONFIG, 2)
    reg.start(START)
    with pytest.raises(PeriodOver):
        reg.add_on("p0", START + 100, RICH)
    out = reg.add_on("p0", START + 3600, RICH)
    assert out.events[0].kind is PurchaseKind.ADD_ON and out.events[0].chips == 3000  # type: ignore[union-attr]
    with pytest.raises(LimitReached):
        reg.add_on("p0", START + 3601, RICH)
    with pytest.raises(PeriodOver):
        reg.add_on("p1", START + 3600 + 180, RICH)


def test_reg_5_re_entry_after_elimination_same_funds_rule() -> None:
    config = make_config(re_entry=ReEntry(max_per_player=1, period_minutes=60), late_registration_minutes=60)
    reg = registered(config, 3)
    reg.start(START, seat_capacity=9)
    with pytest.raises(NotEliminated):
        reg.re_enter("p0", START + 10, RICH)
    reg.eliminate("p0", START + 10)
    with pytest.raises(InsufficientFunds):
        reg.re_enter("p0", START + 20, 1099)
    out = reg.re_enter("p0", START + 20, 1100)
    assert out.events[0].chips == config.starting_stack  # type: ignore[union-attr]
    assert "p0" in reg.active and reg.entries == 4, f"expected 4 entries, got {reg.entries}"
    reg.eliminate("p0", START + 30)
    with pytest.raises(LimitReached):
        reg.re_enter("p0", START + 40, RICH)


def test_reg_5_purchases_not_offered() -> None:
    reg = registered(make_config(), 2)
    reg.start(START)
    for attempt in (
        lambda: reg.rebuy("p0", START, RICH, 0),
        lambda: reg.add_on("p0", START, RICH),
        lambda: reg.re_enter("p0", START, RICH),
    ):
        with pytest.raises(NotOffered):
            attempt()


def test_reg_6_satellite_ticket_pays_the_registration() -> None:
    reg = Registration(make_config(), START)
    assert not reg.can_register("sat", START - 1, balance=0, via_ticket=True)
    out = reg.register("sat", START - 1, balance=2000, via_ticket=True)
    sources = {t.source for t in out.transfers}
    assert sources == {ticket_account("t", "sat")}, f"the ticket pays, got {sources}"
    assert Reason.TICKET in {t.reason for t in out.transfers}


def test_reg_7_crash_before_the_first_hand_refunds_every_registration() -> None:
    reg = Registration(make_config(late_registration_minutes=10), START)
    reg.register("cash", START - 10, RICH)
    reg.register("ticket", START - 10, 1100, via_ticket=True)
    reg.start(START)
    transfers = refund_registrations("t", reg.payments)
    n = net_by_account(transfers)
    assert n == {
        player_account("cash"): 1100,
        ticket_account("t", "ticket"): 1100,
        pool_account("t"): -2000,
        HOUSE: -200,
    }, f"expected every registration back where it came from, got {n}"


def test_refused_actions_change_nothing() -> None:
    reg = registered(REBUY_CONFIG, 2)
    before = (list(reg.registered), reg.payments)
    for action in (
        lambda: reg.rebuy("p0", START, RICH, 0),  # not started
        lambda: reg.eliminate("p0", START),
        lambda: reg.unregister("nobody", START - 1),
    ):
        with pytest.raises(RegistrationError):
            action()
    assert (list(reg.registered), reg.payments) == before, "refused actions must leave the state as it was"


def test_idempotency_keys_are_deterministic() -> None:
    a = registered(REBUY_CONFIG, 3)
    b = registered(REBUY_CONFIG, 3)
    assert [t.idempotency_key for t in a.start(START).transfers] == [
        t.idempotency_key for t in b.start(START).transfers
    ]
    keys_a = [t.idempotency_key for t in a.rebuy("p0", START + 1, RICH, 0).transfers]
    keys_b = [t.idempotency_key for t in b.rebuy("p0", START + 1, RICH, 0).transfers]
    assert keys_a == keys_b == ["t:p0:rebuy:1:pool"], (
        f"expected (tournament, player, action, n) keys, got {keys_a}"
    )
    second = [t.idempotency_key for t in a.rebuy("p0", START + 2, RICH, 0).transfers]
    assert second == ["t:p0:rebuy:2:pool"], f"the counter must advance, got {second}"


@pytest.mark.parametrize("period_minutes", [57, 60])
def test_reg_5_brk_t1_add_on_window_is_the_clocks_add_on_break_after_a_scheduled_break(
    period_minutes: int,
) -> None:
    # Hourly breaks at :55 for 5 minutes, start on the hour: a rebuy period ending at 57 min falls
    # inside the break [55, 60) min, so the add-on break follows it: [60, 63) min. A period of
    # exactly 60 min ends as that break ends: the add-on break is [60, 63) min as well.
    config = replace(REBUY_CONFIG, rebuys=Rebuys(period_minutes=period_minutes, cost=1000, chips=1500))
    reg = registered(config, 2)
    at_zero = Registration(config, 0)
    assert at_zero.add_on_window() == (3600, 3780), f"expected (3600, 3780), got {at_zero.add_on_window()}"
    on_the_hour = Registration(config, START, start_wall_seconds=0)
    assert on_the_hour.add_on_window() == (START + 3600, START + 3780), f"got {on_the_hour.add_on_window()}"
    reg.start(START)
    window = reg.add_on_window()
    assert window is not None
    assert reg.can_add_on("p0", window[0], RICH) and not reg.can_add_on("p0", window[1], RICH), (
        f"add-ons are sold in {window} only"
    )


def test_crash_1_a_purchase_undone_spends_its_keys() -> None:
    """A registration refunded before it was recorded (a crash between its money and its record)
    must not hand the same keys to the next registration: the ledger would take that for a
    replay and move nothing."""
    reg = Registration(make_config(), START)
    first = reg.preview_register("alice", START - 60, RICH)
    assert reg.preview_register("alice", START - 60, RICH) == first, "a preview changes nothing"
    reg.purchase_undone("alice", [t.idempotency_key for t in first])
    second = reg.preview_register("alice", START - 60, RICH)
    assert {t.idempotency_key for t in second}.isdisjoint(t.idempotency_key for t in first)
    reg.purchase_undone("bob", [t.idempotency_key for t in first])  # not bob's keys: nothing
    assert reg.preview_register("bob", START - 60, RICH)[0].idempotency_key.endswith(":1:pool")
