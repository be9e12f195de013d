"""Hand histories: PHH export that pokerkit replays, PHH import replayed through our engine, the
``feltd simulate hands`` / ``feltd phh replay`` commands (acceptance 5). PokerStars text is
tested in tests/test_pokerstars_format.py and tests/test_pokerstars_parsers.py.

Every PHH file we write is replayed by pokerkit and must end on exactly the file's
``finishing_stacks``: pokerkit splits pots as we do (BET-3: all the odd chips of a split to the
first winner left of the button, consecutive pots tied by the same players split as their sum).

One kind of hand pokerkit cannot replay, and which is tested apart: a short big blind (no blind
posted in full) followed by a call before the flop. We have the others call the full big blind
(BET-2 in engine.hand, as card rooms do); PHH's ``cc`` makes pokerkit call the largest blind
posted, and a raise to the full blind is below its minimum raise. ``feltd simulate hands`` has a
player due the big blind without it rebuy first, so its files never hold one; such hands, built
directly with the engine, must still replay in our own engine to their files' stacks, and
tests/test_hand_differential.py checks the rule's outcomes against an independent settlement.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import pytest
from pokerkit import HandHistory

from engine.betting import AnteKind, Game, HandSetup, Limit, SeatSetup, Street
from engine.events import ActionKind, ActionTaken, BlindKind, BlindPosted
from engine.hand import Hand
from engine.history.phh import (
    PhhError,
    PhhUnsupportedError,
    dumps_phh,
    dumps_phhs,
    export_phh,
    load_path,
    loads_phh,
    loads_phhs,
    parse_action,
)
from engine.history.replay import ReplayResult, plan_replay, replay
from engine.random_play import play_random_hand
from server.cli.main import main

# -- helpers -----------------------------------------------------------------------------------


def _pokerkit_final_stacks(text: str) -> tuple[int, ...]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unexpected field or a burned chip is a failure
        history = HandHistory.loads(text)
        states = list(history)
    return tuple(states[-1].stacks)


def _short_big_blind_with_a_call(ours: ReplayResult) -> bool:
    """Whether the big blind posted less than a full blind, no blind was posted in full, and
    someone then put chips in before the flop: the others had to call the full big blind (BET-2
    in engine.hand), which PHH's ``cc`` cannot say to pokerkit (see the module docstring)."""
    assert ours.setup is not None, ours
    blinds = {event.blind: event.amount for event in ours.events if isinstance(event, BlindPosted)}
    lifted = BlindKind.BIG in blinds and max(blinds.values()) < ours.setup.big_blind
    return lifted and any(
        isinstance(event, ActionTaken) and event.street is Street.PREFLOP and event.amount
        for event in ours.events
    )


def _check_with_pokerkit(text: str) -> None:
    """Our replay of ``text`` agrees with the file, and pokerkit loads it and ends on exactly its
    ``finishing_stacks``."""
    phh = loads_phh(text)
    ours = replay(phh)
    assert ours.agrees and phh.finishing_stacks is not None, f"{phh.label()}: our replay gave {ours}"
    got = _pokerkit_final_stacks(text)
    assert got == phh.finishing_stacks, (
        f"{phh.label()}: pokerkit ended with {got}, the file says {phh.finishing_stacks}\n{text}"
    )


def _setup(
    seats: Sequence[tuple[int, int]],
    button: int,
    small: int | None,
    big: int,
    *,
    size: int = 9,
    ante: int = 0,
    ante_kind: AnteKind = AnteKind.NONE,
    limit: Limit = Limit.NO_LIMIT,
    game: Game = Game.HOLDEM,
    hand_id: str = "t1",
) -> HandSetup:
    return HandSetup(
        hand_id=hand_id,
        table_size=size,
        seats=tuple(SeatSetup(seat, f"player{seat}", stack) for seat, stack in seats),
        button=button,
        small_blind_seat=small,
        big_blind_seat=big,
        small_blind=10 if small is not None else 0,
        big_blind=20,
        ante=ante,
        ante_kind=ante_kind,
        limit=limit,
        game=game,
    )


# Positions worth a PHH encoding of their own; stacks include short ones for all-ins.
SCENARIOS = {
    "three_handed": _setup([(1, 1000), (4, 35), (6, 1500)], button=1, small=4, big=6),
    "dead_button_empty_seat": _setup([(1, 800), (3, 120), (5, 1000), (7, 60)], button=2, small=3, big=5),
    "dead_small_blind_empty_seat": _setup(
        [(1, 800), (3, 400), (5, 1000), (7, 60)], button=1, small=None, big=3
    ),
    "small_blind_position_not_posting": _setup([(1, 800), (2, 400), (5, 1000)], button=1, small=None, big=5),
    "heads_up": _setup([(3, 700), (8, 45)], button=8, small=8, big=3),
    "each_ante_short_stacks": _setup(
        [(1, 3), (2, 500), (4, 12), (9, 900)], button=9, small=1, big=2, ante=5, ante_kind=AnteKind.EACH
    ),
    "big_blind_ante_short_big_blind": _setup(
        [(1, 600), (2, 400), (4, 25)], button=1, small=2, big=4, ante=20, ante_kind=AnteKind.BIG_BLIND
    ),
    "heads_up_big_blind_ante": _setup(
        [(2, 300), (5, 900)], button=5, small=5, big=2, ante=20, ante_kind=AnteKind.BIG_BLIND
    ),
    "pot_limit_holdem": _setup(
        [(1, 500), (2, 70), (3, 900), (4, 300)], button=4, small=1, big=2, limit=Limit.POT_LIMIT
    ),
    "fixed_limit_holdem": _setup(
        [(1, 500), (2, 70), (3, 900)], button=3, small=1, big=2, limit=Limit.FIXED_LIMIT
    ),
    "pot_limit_omaha": _setup(
        [(1, 500), (2, 70), (3, 900), (6, 300)],
        button=6,
        small=1,
        big=2,
        limit=Limit.POT_LIMIT,
        game=Game.OMAHA,
    ),
}


def _played(setup: HandSetup, seed: int) -> Hand:
    rng = random.Random(seed)
    hand = Hand(setup, rng=rng)
    play_random_hand(hand, rng)
    return hand


# -- PHH export and round trip -----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_phh_round_trip_export_import_replay_gives_the_same_stacks(name: str) -> None:
    setup = SCENARIOS[name]
    for seed in range(40):
        hand = _played(setup, seed)
        phh = export_phh(setup, hand.events, table="T 1", level=3)
        text = dumps_phh(phh)
        plan = plan_replay(loads_phh(text))
        got = (plan.setup.button, plan.setup.small_blind_seat, plan.setup.big_blind_seat, plan.setup.seats)
        want = (setup.button, setup.small_blind_seat, setup.big_blind_seat, setup.seats)
        assert got == want, f"{name} seed {seed}: imported positions {got}, expected {want}"
        assert (plan.setup.limit, plan.setup.game) == (setup.limit, setup.game)
        result = replay(loads_phh(text))
        expected = tuple(hand.finishing_stacks()[seat] for seat in phh.seats or ())
        assert result.agrees and result.finishing_stacks == expected, (
            f"{name} seed {seed}: replay gave {result}, expected {expected}\n{text}"
        )
        _check_with_pokerkit(text)


def test_phh_short_big_blind_hands_replay_in_our_engine_to_their_stacks() -> None:
    # Seat 6, the big blind, has 15 of a 20 blind; the small blind posts 10: no blind is full.
    setup = _setup([(1, 800), (3, 500), (6, 15)], button=1, small=3, big=6)
    with_a_call = 0
    for seed in range(60):
        hand = _played(setup, seed)
        blinds = {e.blind: e.amount for e in hand.events if isinstance(e, BlindPosted)}
        assert blinds == {BlindKind.SMALL: 10, BlindKind.BIG: 15}, f"seed {seed}: blinds posted {blinds}"
        text = dumps_phh(export_phh(setup, hand.events))
        result = replay(loads_phh(text))
        expected = tuple(hand.finishing_stacks()[seat] for seat in (3, 6, 1))
        assert result.agrees and result.finishing_stacks == expected, (
            f"seed {seed}: our replay gave {result}, the hand ended on {expected}\n{text}"
        )
        if _short_big_blind_with_a_call(result):
            with_a_call += 1
            # Before any raise, a call is of the full blind (20), not of the 15 posted.
            preflop = [e for e in hand.events if isinstance(e, ActionTaken) and e.street is Street.PREFLOP]
            raised = [i for i, e in enumerate(preflop) if e.kind in (ActionKind.BET, ActionKind.RAISE)]
            before = preflop[: min(raised, default=len(preflop))]
            calls = [e.to_amount for e in before if e.kind is ActionKind.CALL]
            assert all(amount == 20 for amount in calls), f"seed {seed}: calls to {calls}\n{text}"
    assert with_a_call >= 20, f"expected most hands to have a call over the short blind, got {with_a_call}"


def test_phh_player_order_starts_after_the_button_and_heads_up_reverses_forced_bets() -> None:
    phh = export_phh(SCENARIOS["three_handed"], _played(SCENARIOS["three_handed"], 1).events)
    assert phh.seats == (4, 6, 1) and phh.blinds_or_straddles == (10, 20, 0), (
        phh.seats,
        phh.blinds_or_straddles,
    )
    heads_up = export_phh(SCENARIOS["heads_up"], _played(SCENARIOS["heads_up"], 1).events)
    # p1 is the big blind (seat 3), p2 the button (seat 8); the spec reverses the array heads-up
    assert heads_up.seats == (3, 8) and heads_up.blinds_or_straddles == (10, 20), heads_up


def test_phh_dead_small_blind_is_a_zero_and_a_dead_button_is_named() -> None:
    empty = export_phh(
        SCENARIOS["dead_small_blind_empty_seat"], _played(SCENARIOS["dead_small_blind_empty_seat"], 2).events
    )
    assert empty.seats == (3, 5, 7, 1) and empty.blinds_or_straddles == (20, 0, 0, 0), empty
    sitting = export_phh(
        SCENARIOS["small_blind_position_not_posting"],
        _played(SCENARIOS["small_blind_position_not_posting"], 2).events,
    )
    assert sitting.blinds_or_straddles == (0, 20, 0), f"seat 2 sits in the small blind and posts 0: {sitting}"
    dead = export_phh(
        SCENARIOS["dead_button_empty_seat"], _played(SCENARIOS["dead_button_empty_seat"], 2).events
    )
    assert dead.user_fields == {"_button": 2} and dead.seats == (3, 5, 7, 1), dead


def test_phh_antes_per_player_and_big_blind_ante_as_the_big_blind_entry() -> None:
    each = export_phh(
        SCENARIOS["each_ante_short_stacks"], _played(SCENARIOS["each_ante_short_stacks"], 3).events
    )
    assert each.seats == (1, 2, 4, 9) and each.antes == (3, 5, 5, 5), f"a 3-chip stack antes 3: {each.antes}"
    assert each.ante_trimming_status is True, "per-player antes form side pots: ante trimming on"
    bb = export_phh(
        SCENARIOS["big_blind_ante_short_big_blind"],
        _played(SCENARIOS["big_blind_ante_short_big_blind"], 3).events,
    )
    # seat 4 has 25: it pays the big blind (20) first and 5 of the ante (LVL-1)
    assert bb.seats == (2, 4, 1) and bb.antes == (0, 5, 0), f"expected the BB's entry only: {bb.antes}"


def test_phh_pot_limit_holdem_is_written_as_nt_with_a_limit_field() -> None:
    phh = export_phh(SCENARIOS["pot_limit_holdem"], _played(SCENARIOS["pot_limit_holdem"], 4).events)
    text = dumps_phh(phh)
    assert phh.variant == "NT" and '_limit = "pl"' in text, text
    assert plan_replay(loads_phh(text)).setup.limit is Limit.POT_LIMIT


def test_phh_fields_and_time_are_written() -> None:
    setup = SCENARIOS["three_handed"]
    phh = export_phh(
        setup,
        _played(setup, 5).events,
        table="T 1",
        level=4,
        event="Sunday 10k",
        started_at=dt.datetime(2026, 12, 1, 12, 30, 5),
        time_zone="UTC",
    )
    text = dumps_phh(phh)
    for line in (
        'variant = "NT"',
        "min_bet = 20",
        "starting_stacks = [35, 1500, 1000]",
        'players = ["player4", "player6", "player1"]',
        "seat_count = 9",
        'hand = "t1"',
        'table = "T 1"',
        "level = 4",
        'event = "Sunday 10k"',
        "time = 12:30:05",
        "year = 2026",
    ):
        assert line in text.splitlines(), f"expected the line {line!r} in:\n{text}"
    assert text.splitlines()[phh_index(text, "actions = [") + 1].startswith('  "d dh p1 '), text


def phh_index(text: str, line: str) -> int:
    return text.splitlines().index(line)


def test_phhs_file_holds_several_hands(tmp_path: Path) -> None:
    hands = [
        export_phh(SCENARIOS[name], _played(SCENARIOS[name], 6).events)
        for name in ("heads_up", "three_handed")
    ]
    path = tmp_path / "two.phhs"
    path.write_text(dumps_phhs(hands), encoding="utf-8")
    loaded = load_path(path)
    assert [hand.seats for hand in loaded] == [(3, 8), (4, 6, 1)], loaded
    assert all(replay(hand).agrees for hand in loaded)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(list(HandHistory.loads_all(path.read_text()))) == 2, "pokerkit reads the .phhs too"
    assert loads_phhs(dumps_phhs(hands))[1].label() == "<string>[2] (hand t1)"


def test_phh_import_refuses_what_it_cannot_represent() -> None:
    base = dumps_phh(export_phh(SCENARIOS["three_handed"], _played(SCENARIOS["three_handed"], 7).events))
    with pytest.raises(PhhError):
        loads_phh("variant = 'NT'\nantes = [0, 0]\n")  # no starting stacks
    with pytest.raises(PhhError):
        loads_phh("not toml [")
    with pytest.raises(PhhError):
        parse_action("p1 xyz")
    with pytest.raises(PhhUnsupportedError):
        plan_replay(loads_phh(base.replace('variant = "NT"', 'variant = "FB"')))
    with pytest.raises(PhhUnsupportedError):
        plan_replay(
            loads_phh(base.replace("blinds_or_straddles = [10, 20, 0]", "blinds_or_straddles = [10, 20, 40]"))
        )
    assert parse_action("p2 cbr 300 # a commentary").amount == 300


def test_phh_replay_reports_the_refused_action_and_the_reason() -> None:
    setup = SCENARIOS["three_handed"]
    text = dumps_phh(export_phh(setup, _played(setup, 8).events))
    lines = text.splitlines()
    first_action = next(i for i, line in enumerate(lines) if line.startswith('  "p'))
    lines[first_action] = '  "p3 cbr 25",'  # a raise to 25 over a big blind of 20 is too small
    result = replay(loads_phh("\n".join(lines)))
    assert result.refused is not None and not result.agrees, result
    assert result.refused.action == "p3 cbr 25" and "RaiseTooSmall" in result.refused.reason, result.refused


# A public hand record (Full Tilt, 2009: Ivey, Antonius, Dwan), as the PHH project writes it up:
# three-handed with antes, an unseen folded hand, an all-in on the turn shown before the river.
DWAN_IVEY = """
variant = "NT"
ante_trimming_status = true
antes = [500, 500, 500]
blinds_or_straddles = [1000, 2000, 0]
min_bet = 2000
starting_stacks = [1125600, 2000000, 553500]
players = ["Ivey", "Antonius", "Dwan"]
actions = [
  "d dh p1 Ac2d", "d dh p2 ????", "d dh p3 7h6h",
  "p3 cbr 7000", "p1 cbr 23000", "p2 f", "p3 cc",
  "d db Jc3d5c", "p1 cbr 35000", "p3 cc",
  "d db 4h", "p1 cbr 90000", "p3 cbr 232600", "p1 cbr 1067100", "p3 cc",
  "p1 sm Ac2d", "p3 sm 7h6h",
  "d db Jh",
]
"""


def test_phh_import_of_a_recorded_hand_with_an_unseen_folded_hand() -> None:
    phh = loads_phh(DWAN_IVEY, "dwan-ivey.phh")
    result = replay(phh)
    assert result.refused is None and result.error is None, result
    # Dwan's seven-high straight beats Ivey's wheel for a pot of 2 x 553,500 + Antonius's 2,500
    assert result.finishing_stacks == (572100, 1997500, 1109500), result.finishing_stacks
    assert result.finishing_stacks == _pokerkit_final_stacks(DWAN_IVEY), "pokerkit must agree"


# -- the commands (acceptance 5) ---------------------------------------------------------------


def test_acceptance_5_simulate_2000_hands_pokerkit_and_phh_replay_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "phh"
    code = main(
        ["simulate", "hands", "--count", "2000", "--players", "9", "--seed", "7", "--phh-out", str(out)]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "chips conserved: yes" in printed and "hands:           2000" in printed, printed
    # A player due the big blind without it and its ante rebuys first: no short big blind.
    rebuys = re.search(r"^big blind rebuys: (\d+) ", printed, re.MULTILINE)
    assert rebuys is not None and int(rebuys[1]) > 0, f"expected a count of big blind rebuys:\n{printed}"
    files = sorted(out.glob("*.phh"))
    assert len(files) == 2000, f"expected 2000 PHH files, got {len(files)}"
    for path in files:
        _check_with_pokerkit(path.read_text(encoding="utf-8"))
    with capsys.disabled():
        print(
            f"\nPHH files: {len(files)} of {len(files)} replayed by pokerkit to their finishing stacks"
            f" (big blind rebuys: {rebuys[1]})"
        )
    code = main(["phh", "replay", "--quiet", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    summary = "2000 hands in 2000 files: 2000 accepted (2000 at the file's finishing stacks, 0 cut short,"
    assert summary + " 0 with notes, 0 departing by a documented rule difference), 0 refused" in printed, (
        printed
    )


def test_phh_replay_command_exits_1_on_a_tampered_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "phh"
    assert (
        main(["simulate", "hands", "--count", "5", "--players", "4", "--seed", "3", "--phh-out", str(out)])
        == 0
    )
    capsys.readouterr()
    assert main(["phh", "replay", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count(": [") == 5, f"one line of stacks per hand expected:\n{printed}"
    victim = sorted(out.glob("*.phh"))[2]
    phh = loads_phh(victim.read_text(encoding="utf-8"))
    assert phh.finishing_stacks is not None
    tampered = list(phh.finishing_stacks)
    tampered[0] += 1
    tampered[1] -= 1
    text = victim.read_text(encoding="utf-8").replace(
        f"finishing_stacks = [{', '.join(map(str, phh.finishing_stacks))}]",
        f"finishing_stacks = [{', '.join(map(str, tampered))}]",
    )
    victim.write_text(text, encoding="utf-8")
    assert main(["phh", "replay", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "DISAGREES" in printed and "4 accepted (4 at the file's finishing stacks" in printed, printed
    assert "1 refused or disagree" in printed, printed


@pytest.mark.parametrize(("limit", "ante"), [("pl", "bb"), ("fl", "each")])
def test_simulate_hands_other_structures_replay_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], limit: str, ante: str
) -> None:
    out = tmp_path / limit
    args = [
        "simulate",
        "hands",
        "--count",
        "150",
        "--players",
        "6",
        "--seed",
        "11",
        "--limit",
        limit,
        "--ante",
        ante,
    ]
    assert main([*args, "--phh-out", str(out)]) == 0
    assert main(["phh", "replay", "--quiet", str(out)]) == 0, capsys.readouterr().out
    files = sorted(out.glob("*.phh"))
    assert len(files) == 150, f"expected 150 PHH files, got {len(files)}"
    for path in files:
        _check_with_pokerkit(path.read_text(encoding="utf-8"))
