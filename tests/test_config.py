"""Tournament configuration: the example files load, defaults follow the rule book
(docs/rules.md), errors name the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.betting import AnteKind, Limit
from engine.table import ButtonRule, FirstButton, JoinRule
from engine.tournament.config import (
    BreakMode,
    BreakOrder,
    ConfigError,
    HandForHandTrigger,
    Level,
    MovedPlayerSeat,
    PayoutMode,
    TournamentConfig,
    load_config,
    parse_config,
    validate_config,
)

MINIMAL = """
id = "t1"
name = "Test"
starting_stack = 1000
buy_in = 1000
[[levels]]
small_blind = 10
big_blind = 20
minutes = 10
"""


LEVEL_HEADER = "[[levels]]"


def _with(extra: str) -> str:
    """MINIMAL plus ``extra``: top-level keys and tables go before the levels, more levels after."""
    if extra.startswith(LEVEL_HEADER):
        return MINIMAL + "\n" + extra
    top, levels = MINIMAL.split(LEVEL_HEADER, 1)
    return top + extra + "\n" + LEVEL_HEADER + levels


def _error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    return str(info.value)


@pytest.mark.parametrize(
    "name", ["freezeout-10min.toml", "turbo-rebuy.toml", "satellite.toml", "sunday-major.toml"]
)
def test_example_files_load(repo_root: Path, name: str) -> None:
    config = load_config(repo_root / "examples" / name)
    assert config.levels, f"{name}: expected levels, got none"
    assert config.id, f"{name}: expected an id"


def test_examples_say_what_their_names_say(repo_root: Path) -> None:
    examples = repo_root / "examples"
    freezeout = load_config(examples / "freezeout-10min.toml")
    assert freezeout.is_freezeout and {lv.minutes for lv in freezeout.levels} == {10}, (
        f"expected a freezeout of 10-minute levels, got {freezeout}"
    )
    turbo = load_config(examples / "turbo-rebuy.toml")
    assert turbo.rebuys is not None and turbo.add_on is not None, "expected rebuys and an add-on"
    assert turbo.levels[0].minutes <= 6, f"expected turbo levels, got {turbo.levels[0].minutes} min"
    satellite = load_config(examples / "satellite.toml")
    assert satellite.satellite is not None and not satellite.deals.allowed, "expected a satellite, no deals"
    major = load_config(examples / "sunday-major.toml")
    assert major.max_players == 10_000 and major.guarantee > 0, (
        f"expected 10,000 players and a guarantee, got {major.max_players}, {major.guarantee}"
    )


def test_defaults_follow_the_rule_book() -> None:
    c = parse_config(MINIMAL)
    assert c.limit is Limit.NO_LIMIT and c.game == "holdem"
    assert c.fee is None, "no fee set: the commission rule applies (REG-1)"
    assert c.waiting_list == 10, f"REG-2 default waiting list is 10, got {c.waiting_list}"
    assert c.unregister_cutoff_minutes == 0 and c.late_registration_minutes == 0
    assert c.late_entry_position is JoinRule.ANY
    assert c.button_rule is ButtonRule.DEAD and c.first_button is FirstButton.DRAW
    assert c.breaks.mode is BreakMode.HOURLY and c.breaks.at_minute == 55 and c.breaks.minutes == 5
    assert c.breaks.addon_break_minutes == 3
    assert c.payouts.mode is PayoutMode.GENERATED and c.payouts.percent_paid == 15
    b = c.balancing
    assert b.threshold == 2 and b.moved_player_seat is MovedPlayerSeat.SAME_POSITION
    assert b.break_order is BreakOrder.LAST_ELIMINATION and b.redraw_at_tables == (1,)
    assert c.hand_for_hand.trigger is HandForHandTrigger.BUBBLE
    assert c.deals.allowed and c.deals.max_left_to_play_percent == 5
    assert c.clock.banks_at_start == 2 and c.clock.banks_per_break == 1 and c.clock.banks_at_bubble == 2
    assert c.clock.away_hands_limit == 250


def test_level_dependent_defaults() -> None:
    ten = parse_config(MINIMAL)
    assert ten.shot_clock == 15, f"CLK-3: levels <= 15 min give 15 s, got {ten.shot_clock}"
    assert ten.hand_for_hand_deduction == 1, (
        f"HFH-1: under 20 min deducts 1, got {ten.hand_for_hand_deduction}"
    )
    twenty = parse_config(MINIMAL.replace("minutes = 10", "minutes = 20"))
    assert twenty.shot_clock == 30, f"CLK-3: longer levels give 30 s, got {twenty.shot_clock}"
    assert twenty.hand_for_hand_deduction == 2, (
        f"HFH-1: 20 min deducts 2, got {twenty.hand_for_hand_deduction}"
    )
    assert twenty.rebuy_threshold == twenty.starting_stack


def test_every_section_parses() -> None:
    c = parse_config(
        _with(
            """
fee = 100
guarantee = 500000
limit = "pl"
[rebuys]
period_minutes = 60
cost = 1000
chips = 1000
max_per_player = 3
stack_threshold = 500
[add_on]
cost = 1000
chips = 2000
[re_entry]
max_per_player = 2
period_minutes = 90
[payouts]
mode = "table"
table = [5000, 3000, 2000]
[balancing]
break_order = "fixed"
fixed_order = [3, 1, 2]
moved_player_seat = "worst_position"
[hand_for_hand]
trigger = "players_left"
players_left = 20
bubble_ties_share = true
deduction_minutes = 3
[deals]
allowed = false
[clock]
shot_clock_seconds = 20
[satellite]
seats = 3
target = "main"
seat_value = 10000
"""
        )
    )
    assert c.limit is Limit.POT_LIMIT and c.fee == 100 and c.guarantee == 500_000
    assert c.rebuys is not None and c.rebuys.max_per_player == 3 and c.rebuy_threshold == 500
    assert c.add_on is not None and c.add_on.max_per_player == 1
    assert c.re_entry is not None and c.re_entry.cost is None
    assert c.payouts.table == (5000, 3000, 2000)
    assert c.balancing.fixed_order == (3, 1, 2)
    assert c.hand_for_hand_deduction == 3 and c.shot_clock == 20
    assert c.satellite is not None and c.satellite.seats == 3
    assert not c.is_freezeout


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            "[[levels]]\nsmall_blind = 40\nbig_blind = 20\nminutes = 10\n",
            "levels[1].big_blind: must be > small_blind (got 20 <= 40)",
        ),
        (
            "[[levels]]\nsmall_blind = 5\nbig_blind = 10\nminutes = 10\n",
            "levels[1].big_blind: must not decrease",
        ),
        ("[[levels]]\nsmall_blind = 10\nbig_blind = 20\nminutes = 0\n", "levels[1].minutes: must be > 0"),
        (
            "[[levels]]\nsmall_blind = 10\nbig_blind = 20\nminutes = 10\nante = 5\n",
            "levels[1].ante: must be 0 when ante_kind is 'none'",
        ),
        (
            '[[levels]]\nsmall_blind = 10\nbig_blind = 20\nminutes = 10\nante_kind = "bb"\n',
            "levels[1].ante: must be > 0",
        ),
        ("table_size = 11", "table_size: must be 2..10"),
        ("max_players = 1", "max_players: must be >= min_players"),
        ("fee = 1.5", "fee: must be an integer"),
        ("buy_in_typo = 3", "buy_in_typo: unknown setting"),
        ('limit = "spread"', "limit: must be one of"),
        ("[payouts]\ntable = [6000, 3000]", "payouts.table: must sum to 10000"),
        ("[payouts]\ntable = [3000, 7000]", "payouts.table[1]: must not exceed the place above"),
        ('[payouts]\nmode = "table"', "payouts.table: must list at least one place"),
        ('[balancing]\nbreak_order = "fixed"', "balancing.fixed_order: must list tables"),
        ('[hand_for_hand]\ntrigger = "players_left"', "hand_for_hand.players_left: must be >= 2"),
        ("[rebuys]\nperiod_minutes = 60\nchips = 10", "rebuys.cost: is required"),
        ("[rebuys]\nperiod_minutes = 60\ncost = 0\nchips = 10", "rebuys.cost: must be > 0"),
        ("[clock]\nbanks = 3", "clock.banks: unknown setting"),
        ('[satellite]\nseats = 0\ntarget = "x"\nseat_value = 100', "satellite.seats: must be >= 1"),
        ("[deals]\nmax_left_to_play_percent = 101", "deals.max_left_to_play_percent: must be 0..100"),
        # END-1: from ~84 % paid the generated structure was flat and the tournament "over" at once
        ("[payouts]\npercent_paid = 84", "payouts.percent_paid: must be 1..50"),
        ("[payouts]\npercent_paid = 0", "payouts.percent_paid: must be 1..50"),
        ("[breaks]\nat_minute = 58\nminutes = 5", "breaks.minutes: an hourly break must end by the hour"),
    ],
)
def test_config_errors_name_the_field(extra: str, expected: str) -> None:
    message = _error(_with(extra))
    assert message.startswith(expected), f"expected {expected!r}, got {message!r}"


def test_missing_required_fields_and_bad_toml() -> None:
    assert _error('name = "x"').startswith("id: is required")
    assert _error(MINIMAL.replace("[[levels]]", "[[nope]]")).startswith("levels: is required")
    assert _error("id = ").startswith("<toml>: not valid TOML")


def test_load_config_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")


def test_validate_config_on_hand_built_config() -> None:
    level = Level(small_blind=25, big_blind=50, minutes=15, ante=50, ante_kind=AnteKind.BIG_BLIND)
    good = TournamentConfig(id="x", name="X", levels=(level,), buy_in=500, starting_stack=5000)
    assert validate_config(good) is good
    with pytest.raises(ConfigError, match=r"^starting_stack: must be > 0"):
        validate_config(TournamentConfig(id="x", name="X", levels=(level,), buy_in=500, starting_stack=0))
