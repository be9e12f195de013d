"""A whole tournament in-process: invariants, the finish order, money, and the CLI."""

from __future__ import annotations

import argparse
import dataclasses
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.tournament.config import (
    AddOn,
    Balancing,
    BreakMode,
    BreakOrder,
    Breaks,
    ButtonRule,
    FirstButton,
    HandForHand,
    HandForHandTrigger,
    MovedPlayerSeat,
    Rebuys,
    load_config,
)
from engine.tournament.simulation import SimulationError, SimulationResult, default_config, run_tournament
from engine.tournament.transfers import Reason, net_by_account, pool_account
from server.cli import simulate_tournament


def check_finish_order(result: SimulationResult, players: int) -> None:
    places = Counter(place for f in result.finishes for place in range(f.place, f.place + f.shared_places))
    assert sorted(places) == list(range(1, players + 1)), "places must run 1..N"
    assert set(places.values()) == {1}, f"a place was given twice: {[p for p, n in places.items() if n > 1]}"
    finishers = [player for f in result.finishes for player in f.players]
    assert len(finishers) == len(set(finishers)) == players, "everybody gets exactly one place"
    assert all(f.shared_places == len(f.players) for f in result.finishes)


def check_money(result: SimulationResult) -> None:
    net = net_by_account(result.transfers)
    assert sum(net.values()) == 0, "the ledger is double-entry"
    assert net.get(pool_account(result.tournament_id), 0) == 0, (
        f"pool left with {net.get(pool_account(result.tournament_id))}"
    )
    negative = {
        account: cents for account, cents in net.items() if cents < 0 and account.startswith("player:")
    }
    assert not negative, f"players ended below zero: {negative}"
    keys = [t.idempotency_key for t in result.transfers]
    assert len(keys) == len(set(keys)), "every transfer has its own idempotency key"
    paid = sum(t.amount for t in result.transfers if t.reason in (Reason.PRIZE, Reason.TICKET))
    assert paid == result.prize_pool, f"prizes paid {paid}, pool {result.prize_pool}"


def test_simulation_few_hundred_players_invariants_and_finish_order() -> None:
    players = 300
    result = run_tournament(default_config(players), players, seed=7)
    check_finish_order(result, players)
    check_money(result)
    assert result.entries == players
    assert result.chips_issued == players * 10000
    assert result.tables_broken == 33, f"34 tables down to one means 33 broken, got {result.tables_broken}"
    assert result.redraws == 1, "the final table is redrawn (BRK-2)"
    assert result.moves >= 33 * 1, f"broken tables move their players, got {result.moves} moves"
    winner = result.finishes[0]
    assert winner.place == 1 and len(winner.players) == 1
    # tables run on their own clocks: some plans met tables in a hand and held a table meanwhile
    # (a move touching a table in a hand would have raised)
    assert result.plan_holds > 0, f"expected plans that held tables, got {result.plan_holds}"


def test_simulation_is_deterministic_per_seed() -> None:
    config = default_config(60)
    first = run_tournament(config, 60, seed=3)
    again = run_tournament(config, 60, seed=3)
    other = run_tournament(config, 60, seed=4)
    assert (first.finishes, first.transfers, first.hands) == (again.finishes, again.transfers, again.hands)
    assert first.finishes != other.finishes


def test_hfh_1_simulated_hand_for_hand_rounds_and_level_clock() -> None:
    config = dataclasses.replace(
        default_config(120),
        hand_for_hand=HandForHand(trigger=HandForHandTrigger.PLAYERS_LEFT, players_left=40),
    )
    result = run_tournament(config, 120, seed=5)
    assert result.hand_for_hand_hands > 0, "from 40 players left to the final table, play is hand-for-hand"
    check_finish_order(result, 120)
    check_money(result)


def test_hfh_1_lvl_1_simulated_rounds_running_into_breaks_keep_the_level_clock_still() -> None:
    # Breaks every 2 minutes of play: seed 2's hand-for-hand rounds run into breaks. The
    # simulation raises InvariantBroken if the level clock moved during a round (the pause was
    # counted a second time on top of the break and ran the clock backwards).
    config = dataclasses.replace(
        default_config(60), breaks=Breaks(mode=BreakMode.EVERY, every_minutes=2, minutes=1)
    )
    result = run_tournament(config, 60, seed=2)
    assert result.hand_for_hand_hands > 0, "the bubble is played hand for hand"
    check_finish_order(result, 60)
    check_money(result)


@pytest.mark.parametrize("period_minutes", [57, 60])
def test_reg_5_brk_t1_add_ons_sold_when_the_add_on_break_follows_a_scheduled_break(
    period_minutes: int,
) -> None:
    # The rebuy period ends in (or as) the :55 hourly break, so the add-on break follows it; tables
    # reaching the :55 break used to resume after both breaks and nobody was ever offered an add-on.
    config = dataclasses.replace(
        default_config(100),
        rebuys=Rebuys(period_minutes=period_minutes, cost=1000, chips=10000),
        add_on=AddOn(cost=1000, chips=15000),
    )
    result = run_tournament(config, 100, seed=4)
    assert result.add_ons > 0, f"expected add-ons sold at the add-on break, got {result.add_ons}"
    sold = [t for t in result.transfers if t.reason is Reason.ADD_ON]
    assert len(sold) == result.add_ons, f"{result.add_ons} add-ons, {len(sold)} add-on transfers"
    check_finish_order(result, 100)
    check_money(result)


def test_simulation_rebuys_add_ons_and_satellite_examples(repo_root: Path) -> None:
    rebuy = load_config(repo_root / "examples" / "turbo-rebuy.toml")
    result = run_tournament(rebuy, 90, seed=2)
    check_finish_order(result, 90)
    check_money(result)
    assert result.rebuys > 0, "busted bots rebuy during the rebuy period"
    assert any(t.reason is Reason.REBUY for t in result.transfers)
    satellite = load_config(repo_root / "examples" / "satellite.toml")
    result = run_tournament(satellite, 120, seed=2)
    check_finish_order(result, 120)
    check_money(result)
    tickets = [t for t in result.transfers if t.reason is Reason.TICKET]
    assert tickets and len({t.amount for t in tickets}) == 1, "every seat winner gets the same ticket (END-1)"


def test_simulation_refuses_a_field_the_config_does_not_allow() -> None:
    with pytest.raises(SimulationError, match="at least 2 players"):
        run_tournament(default_config(1), 1, seed=1)
    with pytest.raises(SimulationError, match="at most 60 players"):
        run_tournament(default_config(60), 61, seed=1)


def test_cli_simulate_tournament_prints_progress_and_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    simulate_tournament.add_arguments(parser)
    out = tmp_path / "transfers.jsonl"
    args = parser.parse_args(
        ["--players", "40", "--seed", "2", "--progress-every", "20", "--transfers-out", str(out)]
    )
    assert simulate_tournament.run(args) == 0
    printed = capsys.readouterr().out
    for needle in (
        "players left",
        "hands/s",
        "hands dealt",
        "moves",
        "tables broken",
        "hand-for-hand",
        "top finishers",
    ):
        assert needle in printed, f"expected {needle!r} in the output, got:\n{printed}"
    assert len(out.read_text().splitlines()) > 40 * 2, "deposits, buy-ins, fees and prizes are written"


@settings(max_examples=60, deadline=None)
@given(
    players=st.integers(min_value=2, max_value=120),
    table_size=st.integers(min_value=2, max_value=10),
    button_rule=st.sampled_from(list(ButtonRule)),
    first_button=st.sampled_from(list(FirstButton)),
    break_order=st.sampled_from(list(BreakOrder)),
    seat_rule=st.sampled_from(list(MovedPlayerSeat)),
    redraws=st.sampled_from([(1,), (3, 2, 1), ()]),
    ties_share=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_simulation_properties_over_random_settings(
    players: int,
    table_size: int,
    button_rule: ButtonRule,
    first_button: FirstButton,
    break_order: BreakOrder,
    seat_rule: MovedPlayerSeat,
    redraws: tuple[int, ...],
    ties_share: bool,
    seed: int,
) -> None:
    """Whatever the table size and rules, every tournament ends with places 1..N and money balanced."""
    tables = -(-players // table_size)
    config = dataclasses.replace(
        default_config(players),
        table_size=table_size,
        button_rule=button_rule,
        first_button=first_button,
        balancing=Balancing(
            break_order=break_order,
            fixed_order=tuple(range(tables, 0, -1)),
            moved_player_seat=seat_rule,
            redraw_at_tables=redraws,
        ),
        hand_for_hand=HandForHand(bubble_ties_share=ties_share),
    )
    result = run_tournament(config, players, seed)
    check_finish_order(result, players)
    check_money(result)
    assert result.tables_broken == tables - 1, (
        f"{tables} tables end as one, got {result.tables_broken} broken"
    )
