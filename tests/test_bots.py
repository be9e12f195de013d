"""The bots (issue 13): the tight-aggressive bot's decisions, the think times and chaos options,
a bot tournament over real WebSockets where the tight-aggressive bots must beat the random
ones, and `feltd bots` run as a person runs it against a server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from pathlib import Path

import pytest
from processes import feltd_command
from server_harness import running_server, tournament_toml, unexplained

from client.bot import Chaos, ChaosError, parse_chaos
from client.strategies import (
    CallingStation,
    RandomPlayer,
    TightAggressive,
    chen_score,
    draw_outs,
    made_strength,
)
from client.table_view import Situation, TableView
from client.think import Fixed, LogNormal, ThinkTimeError, Uniform, parse_think
from protocol import table_events as te
from protocol.kinds import ActionKind, AnteKind, BlindKind, Game, Limit, Street
from server.cli.bots import BotsRun
from server.store.connection import open_store

TAG = TightAggressive()


def legal(
    *, call: int, min_raise: int | None = None, max_raise: int | None = None, can_check: bool | None = None
) -> te.LegalView:
    return te.LegalView(
        can_fold=call > 0,
        can_check=call == 0 if can_check is None else can_check,
        call_amount=call,
        min_raise_to=min_raise,
        max_raise_to=max_raise,
    )


def situation(
    hole: str,
    *,
    board: str = "",
    street: Street = Street.PREFLOP,
    call: int = 20,
    bet: int = 0,
    pot: int = 30,
    stack: int = 3000,
    behind: int = 6,
    raises: int = 0,
    opponents: int = 8,
    aggressor: bool = False,
    big_blind: int = 20,
) -> Situation:
    cards = tuple(hole.split())
    top = bet + call
    return Situation(
        hole=cards,
        board=tuple(board.split()),
        street=street,
        legal=legal(call=call, min_raise=max(2 * top, top + big_blind), max_raise=stack + bet),
        pot=pot,
        stack=stack,
        bet=bet,
        big_blind=big_blind,
        players=9,
        opponents=opponents,
        behind=behind,
        raises=raises,
        aggressor=aggressor,
    )


# --- the tight-aggressive bot's decisions ------------------------------------------------------


def test_chen_scores_order_the_starting_hands() -> None:
    assert chen_score(("As", "Ah")) == 20
    assert chen_score(("Ks", "Kd")) == 16
    assert chen_score(("As", "Ks")) == 12
    assert chen_score(("Ad", "Ks")) == 10
    assert chen_score(("2c", "2d")) == 5
    assert chen_score(("7d", "2c")) == -1
    assert chen_score(("Js", "Ts")) == 9  # suited connectors below a queen get the bonus


def test_tag_folds_seven_deuce_offsuit_under_the_gun_and_raises_aces() -> None:
    rng = random.Random(1)
    assert TAG.decide(situation("7d 2c"), rng) == (ActionKind.FOLD, None)
    action, amount = TAG.decide(situation("As Ah"), rng)
    assert action is ActionKind.RAISE and amount == 50, "an open to 2.5 big blinds"
    # one limper: a big blind more
    limped = dataclasses.replace(situation("As Ah", pot=50, behind=2), limpers=1)
    assert TAG.decide(limped, rng) == (ActionKind.RAISE, 70)


def test_tag_opens_wider_late_than_early() -> None:
    rng = random.Random(1)
    hand = "Kd Js"  # Chen 6: a button open, an early-position fold
    assert TAG.decide(situation(hand, behind=6), rng)[0] is ActionKind.FOLD
    assert TAG.decide(situation(hand, behind=0), rng)[0] is ActionKind.RAISE


def test_tag_three_bets_queens_calls_with_a_medium_hand_and_folds_junk_to_a_raise() -> None:
    rng = random.Random(1)
    facing = {"call": 60, "pot": 90, "raises": 1, "behind": 2}
    action, amount = TAG.decide(situation("Qs Qh", **facing), rng)  # type: ignore[arg-type]
    assert action is ActionKind.RAISE and amount == 180, "a 3-bet to three times the raise"
    assert TAG.decide(situation("As Qd", **facing), rng) == (ActionKind.CHECK_OR_CALL, None)  # type: ignore[arg-type]
    assert TAG.decide(situation("9c 4d", **facing), rng) == (ActionKind.FOLD, None)  # type: ignore[arg-type]


def test_tag_calls_an_all_in_with_kings_and_folds_a_small_ace() -> None:
    rng = random.Random(1)
    all_in = {"call": 3000, "stack": 3000, "pot": 3030, "raises": 1, "behind": 1}
    assert TAG.decide(situation("Ks Kd", **all_in), rng) == (ActionKind.CHECK_OR_CALL, None)  # type: ignore[arg-type]
    assert TAG.decide(situation("As 5d", **all_in), rng) == (ActionKind.FOLD, None)  # type: ignore[arg-type]


def test_tag_short_stacked_moves_all_in_or_folds() -> None:
    rng = random.Random(1)
    short = {"stack": 200, "behind": 0}  # 10 big blinds
    assert TAG.decide(situation("Ah 9d", **short), rng) == (ActionKind.RAISE, 200)  # type: ignore[arg-type]
    assert TAG.decide(situation("8h 3d", **short), rng) == (ActionKind.FOLD, None)  # type: ignore[arg-type]


def test_made_hands_count_only_what_the_hole_cards_add() -> None:
    assert made_strength(("7s", "7d"), ("7h", "Kc", "2d")) == 4  # a set
    assert made_strength(("As", "Kd"), ("Kh", "7c", "2d")) == 2  # top pair
    assert made_strength(("Qs", "Qd"), ("Jh", "7c", "2d")) == 2  # an overpair
    assert made_strength(("As", "7d"), ("Kh", "7c", "2d")) == 1  # middle pair
    assert made_strength(("As", "Kd"), ("Qh", "Qc", "2d")) == 0  # the board's pair is everyone's
    assert made_strength(("Ks", "7d"), ("Kh", "7c", "2d")) == 3  # two pair, both hole cards
    assert made_strength(("Ah", "3h"), ("Kh", "7h", "2h")) == 4  # a flush
    assert made_strength(("2c", "3d"), ("Ah", "Kh", "Qh", "Jh", "Th")) == 0  # the board plays


def test_draws_are_counted_in_outs() -> None:
    assert draw_outs(("Ah", "3h"), ("Kh", "7h", "2c")) == 9  # flush draw
    assert draw_outs(("9s", "8d"), ("7h", "6c", "2d")) == 8  # open-ended
    assert draw_outs(("9s", "8d"), ("Jh", "7c", "2d")) == 4  # gutshot
    assert draw_outs(("9s", "8d"), ("Jh", "7c", "2d", "Kc", "3s")) == 0  # no card to come


def on_the_flop(hole: str, board: str, *, call: int, pot: int) -> Situation:
    return situation(hole, board=board, street=Street.FLOP, call=call, pot=pot, behind=0, opponents=1)


def test_tag_after_the_flop_bets_its_set_folds_air_to_a_pot_sized_bet_and_chases_a_cheap_draw() -> None:
    rng = random.Random(1)
    action, amount = TAG.decide(on_the_flop("7s 7d", "7h Kc 2d", call=0, pot=300), rng)
    assert action is ActionKind.RAISE and amount == 200, "two thirds of the pot"
    assert TAG.decide(on_the_flop("9s 4d", "Ah Kc Qd", call=300, pot=600), rng) == (ActionKind.FOLD, None)
    # a flush draw, priced at 1 in 7 (equity ~36% by the rule of 4): a call
    call = TAG.decide(on_the_flop("Ah 3h", "Kh 7h 2c", call=100, pot=600), rng)
    assert call == (ActionKind.CHECK_OR_CALL, None)


def test_every_strategy_answers_only_legal_actions() -> None:
    """Random situations: every decision is one the table would take."""
    rng = random.Random(5)
    deck = [r + s for r in "23456789TJQKA" for s in "cdhs"]
    for _ in range(3000):
        cards = rng.sample(deck, 7)
        street = rng.choice(list(Street))
        board = cards[2 : 2 + {Street.PREFLOP: 0, Street.FLOP: 3, Street.TURN: 4, Street.RIVER: 5}[street]]
        stack = rng.randint(1, 5000)
        call = rng.choice([0, 0, rng.randint(1, stack + 100)])
        bet = rng.choice([0, 20, 100])
        can_raise = stack > call and rng.random() < 0.8
        top = bet + call
        view = Situation(
            hole=tuple(cards[:2]),
            board=tuple(board),
            street=street,
            legal=legal(
                call=min(call, stack),
                min_raise=min(stack + bet, max(2 * top, top + 20)) if can_raise else None,
                max_raise=stack + bet if can_raise else None,
            ),
            pot=rng.randint(30, 5000),
            stack=stack,
            bet=bet,
            big_blind=20,
            players=rng.randint(2, 9),
            opponents=rng.randint(1, 8),
            behind=rng.randint(-2, 6),
            raises=rng.randint(0, 3),
            aggressor=rng.random() < 0.3,
            limpers=rng.randint(0, 3),
        )
        for strategy in (TAG, RandomPlayer(), CallingStation()):
            action, amount = strategy.decide(view, rng)
            if action is ActionKind.FOLD:
                assert view.legal.can_fold, (strategy, view)
            elif action is ActionKind.RAISE:
                assert amount is not None and view.legal.min_raise_to is not None
                assert view.legal.min_raise_to <= amount <= (view.legal.max_raise_to or 0), (
                    strategy,
                    view,
                    amount,
                )
            else:
                assert action is ActionKind.CHECK_OR_CALL and amount is None


def test_a_table_view_knows_the_position_and_the_pot_from_the_events() -> None:
    view = TableView(table_id=1, player="me")
    seats = [
        te.SeatStart(seat=s, player="me" if s == 4 else f"p{s}", stack=3000, away=False)
        for s in (1, 2, 3, 4, 5, 6)
    ]
    view.event(
        te.HandStarted(
            hand_number=7,
            button=6,
            small_blind_seat=1,
            big_blind_seat=2,
            small_blind=10,
            big_blind=20,
            ante=0,
            ante_kind=AnteKind.NONE,
            limit=Limit.NO_LIMIT,
            game=Game.HOLDEM,
            seats=seats,
            commitment="0" * 64,
        )
    )
    view.event(te.BlindPosted(seat=1, blind=BlindKind.SMALL, amount=10, stack=2990, all_in=False))
    view.event(te.BlindPosted(seat=2, blind=BlindKind.BIG, amount=20, stack=2980, all_in=False))
    view.event(te.HoleCards(seat=4, cards=["As", "Kd"]))
    call = ActionKind.CALL
    view.event(
        te.ActionTaken(
            seat=3,
            street=Street.PREFLOP,
            action=call,
            amount=20,
            bet=20,
            stack=2980,
            all_in=False,
            timed_out=False,
        )
    )
    s = view.situation(legal(call=20, min_raise=40, max_raise=3000))
    assert s.hole == ("As", "Kd") and s.pot == 50 and s.behind == 2 and s.limpers == 1 and s.opponents == 5


# --- think times and chaos options -------------------------------------------------------------


def test_think_times_read_their_three_shapes_and_refuse_nonsense() -> None:
    assert parse_think("fixed:0.5") == Fixed(0.5)
    assert parse_think("uniform:0.2,1.5") == Uniform(0.2, 1.5)
    assert parse_think("lognormal:1,0.5") == LogNormal(1.0, 0.5)
    assert parse_think("0") == Fixed(0.0)
    rng = random.Random(3)
    samples = sorted(LogNormal(1.0, 0.5).sample(rng) for _ in range(2001))
    assert 0.9 < samples[1000] < 1.1, "the median is the median"
    assert all(0.2 <= Uniform(0.2, 1.5).sample(rng) <= 1.5 for _ in range(100))
    assert LogNormal(1.0, 0.5).scaled(0.1) == LogNormal(0.1, 0.5)
    for bad in ("gaussian:1", "uniform:2,1", "fixed:-1", "lognormal:1", "fixed:x"):
        with pytest.raises(ThinkTimeError):
            parse_think(bad)


def test_chaos_options_are_probabilities() -> None:
    assert parse_chaos("disconnect=0.1,sit_out=0.05") == Chaos(disconnect=0.1, sit_out=0.05)
    assert parse_chaos("") == Chaos()
    for bad in ("explode=0.1", "disconnect=2", "bad_frame=x"):
        with pytest.raises(ChaosError):
            parse_chaos(bad)


# --- over real WebSockets ----------------------------------------------------------------------


async def test_tight_aggressive_bots_beat_random_bots_in_a_tournament_over_websockets(
    postgres_server_url: str,
) -> None:
    """Acceptance 4: 9 tight-aggressive bots and 9 random ones in one 18-player tournament over
    real WebSockets, fixed seeds (the server's decks and seat draw, the bots' choices), run as
    `feltd bots --create` runs it. The tight bots, playing by hand strength, must take more of the
    prize money than the random ones and outlast them on the whole."""
    async with running_server(postgres_server_url, speed=100.0, seed=3) as harness:
        toml = tournament_toml("tagrand", players=18, level_minutes=2, extra="[payouts]\npercent_paid = 30\n")
        run = BotsRun(harness.url, harness.store)
        try:
            await run.prepare(18, tournament_id=None, toml=toml, kind="tag,random", prefix="tr")
            finished = await run.play(think=Fixed(0.0), chaos=Chaos(), seed=3, deadline=300)
        finally:
            await run.close()
    assert finished, "every bot played to the end"
    report = run.report(finished)
    assert report["tournament"]["status"] == "finished", report["tournament"]
    won = report["tournament"]["prizes_by_kind_cents"]
    assert won["tag"] > won["random"], won
    assert run.swarm is not None
    places = {bot.name: bot.place for bot in run.swarm.bots}
    assert all(place is not None for place in places.values()), places
    average = {
        kind: sum(places[n] or 0 for n, k in run.kinds.items() if k == kind) / 9 for kind in ("tag", "random")
    }
    assert average["tag"] < average["random"], (average, places)  # a lower place is a better one
    assert unexplained(report["errors"]) == {}, report["errors"]
    assert report["latency_ms"]["samples"] > 100 and report["hands"] > 20, report


async def test_feltd_bots_against_a_running_server_reports_latency_errors_and_chaos(
    postgres_server_url: str, tmp_path: Path
) -> None:
    """`feltd bots --create` as a person runs it, against a running server: 12 bots of the three
    kinds, with chaos (dropped connections, sitting out, bad frames). Its JSON report says every
    bot played the tournament to its end, the latency percentiles are in order, the frames and
    bytes were counted, every disconnect was followed by a reconnect, every bad frame was refused,
    and no error was anything but a race the chaos explains."""
    async with running_server(postgres_server_url, speed=100.0, seed=5) as harness:
        config = tmp_path / "bots12.toml"
        config.write_text(tournament_toml("bots12", players=12, level_minutes=2), encoding="utf-8")
        process = await asyncio.create_subprocess_exec(
            *feltd_command(),
            "bots",
            "--url",
            harness.url,
            "--count",
            "12",
            "--create",
            str(config),
            "--think",
            "uniform:0.001,0.01",
            "--chaos",
            "disconnect=0.04,sit_out=0.02,bad_frame=0.04",
            "--seed",
            "2",
            "--report",
            "json",
            "--database-url",
            harness.database_url,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), 240)
        # the run's operator account went with the run
        async with open_store(harness.database_url) as store:
            operators = [operator.name for operator in await store.players.operators()]
        assert not [name for name in operators if name.startswith("bots-")], operators
    assert process.returncode == 0, err.decode()
    report = json.loads(out)
    progress = err.decode().splitlines()
    assert progress[0].startswith("database: "), progress[:2]
    assert any(line.startswith("connected ") and "actions/s" in line for line in progress), progress
    assert report["bots"] == report["registered"] == report["finished"] == 12, report
    assert report["kinds"] == {"random": 4, "station": 4, "tag": 4}
    assert report["failed_bots"] == 0
    tournament = report["tournament"]
    assert tournament["id"] == "bots12" and tournament["status"] == "finished", tournament
    assert sum(tournament["prizes_by_kind_cents"].values()) == tournament["prize_pool_cents"] > 0, tournament
    latency = report["latency_ms"]
    assert latency["samples"] > 50, latency
    assert 0 < latency["p50"] <= latency["p95"] <= latency["p99"] <= latency["max"], latency
    assert report["frames_in"] > report["actions"] > 0 and report["bytes_in"] > report["frames_in"]
    assert report["frames_in_per_second"] > 0 and report["bytes_out_per_second"] > 0
    chaos = report["chaos"]
    assert chaos["disconnect"] > 0 and report["reconnects"] >= chaos["disconnect"], (
        chaos,
        report["reconnects"],
    )
    assert chaos.get("bad_frame", 0) == chaos.get("bad_frame_refused", 0) > 0, chaos
    assert unexplained(report["errors"]) == {}, report["errors"]


def test_feltd_bots_refuses_a_bad_think_time_in_one_line(tmp_path: Path) -> None:
    import subprocess

    result = subprocess.run(
        [
            *feltd_command(),
            "bots",
            "--url",
            "ws://127.0.0.1:9/",
            "--count",
            "3",
            "--tournament",
            "t",
            "--think",
            "soon",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("feltd bots: --think:"), result.stderr
    assert list(tmp_path.iterdir()) == [], "nothing is made for a refused command"
