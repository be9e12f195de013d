"""The commands that write PokerStars text: `feltd simulate hands --pokerstars-out DIR` and
`feltd history export --format phh|pokerstars [--player NAME] [--tournament ID]` over the stored
hands, run as the operator runs them (a subprocess, a real PostgreSQL), read by pokerdf, the
``poker`` package and pokerkit."""

from __future__ import annotations

import datetime as dt
import random
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from poker.room.pokerstars import PokerStarsHandHistory
from pokerdf.core.read_and_convert import convert_txt_to_tabular_data
from pokerkit import HandHistory

from engine.hand import Hand
from engine.history.phh import dumps_phh, export_phh, loads_phhs
from engine.history.pokerstars import (
    HAND_SEPARATOR,
    StarsHandContext,
    StarsTournament,
    format_pokerstars,
    join_hands,
    own_view,
)
from engine.random_play import play_random_hand
from engine.table import FirstButton, Table, TableSettings
from server.store.connection import open_store
from server.store.databases import create_database, drop_database
from server.store.histories import HandPlayer, HandRecord


def feltd(repo_root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli.main", *args],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_simulate_hands_pokerstars_out_writes_files_both_parsers_read(
    tmp_path: Path, repo_root: Path
) -> None:
    out = tmp_path / "stars"
    done = feltd(repo_root, "simulate", "hands", "--count", "120", "--players", "6", "--seed", "9",
                 "--ante", "each", "--pokerstars-out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"pokerstars:      120 hands in {out}" in done.stdout, done.stdout
    operator = (out / "operator.txt").read_text(encoding="utf-8")
    hands = [hand + "\n" for hand in operator.split("\n" + HAND_SEPARATOR) if hand.strip()]
    assert len(hands) == 120 and operator.endswith("\n\n\n\n"), "each hand, then three blank lines"
    read = 0
    for path in sorted(out.glob("HH-*.txt")):
        player = path.name.removeprefix("HH-").removesuffix(".txt")
        text = path.read_text(encoding="utf-8")
        mine = [hand for hand in hands if f"\nDealt to {player} [" in hand]
        assert text == join_hands(own_view(hand, player) for hand in mine), (
            f"{path.name}: not {player}'s view"
        )
        frame = convert_txt_to_tabular_data(str(path))
        assert frame["HandID"].nunique() == len(mine) and set(frame["Owner"]) == {player}, path.name
        for hand in text.split("\n" + HAND_SEPARATOR):
            if hand.strip():
                parsed = PokerStarsHandHistory(hand)
                parsed.parse()
                assert parsed.hero.name == player and parsed.tournament_ident == "9"
                read += 1
    assert read == sum(hand.count("\nDealt to ") for hand in hands), "every player's copy of every hand read"


def test_simulate_tournament_pokerstars_out_places_every_player_once(tmp_path: Path, repo_root: Path) -> None:
    """A whole simulated tournament as PokerStars text: every player finishes exactly once, in the
    hand they busted in, the winner ``wins the tournament``, and the parsers read every copy."""
    out = tmp_path / "stars"
    done = feltd(repo_root, "simulate", "tournament", "--players", "24", "--seed", "5",
                 "--pokerstars-out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    operator = (out / "operator.txt").read_text(encoding="utf-8")
    hands = [hand + "\n" for hand in operator.split("\n" + HAND_SEPARATOR) if hand.strip()]
    assert f"pokerstars         {len(hands)} hands in {out} (operator.txt, 24 player files)" in done.stdout
    finished = [line for hand in hands for line in hand.splitlines() if "finished the tournament in" in line]
    won = [line for hand in hands for line in hand.splitlines() if "wins the tournament" in line]
    players = {line.split()[0] for line in finished + won}
    assert len(finished) == 23 and len(won) == 1 and len(players) == 24, (len(finished), won)
    assert "wins the tournament" in hands[-1], "the last hand names the winner"
    frame = convert_txt_to_tabular_data(str(out / "HH-p00001.txt"))
    assert set(frame["Owner"]) == {"p00001"} and frame["HandID"].nunique() == operator.count(
        "Dealt to p00001 ["
    )
    for hand in hands[:40]:
        parsed = PokerStarsHandHistory(hand)
        parsed.parse()
        assert parsed.tournament_ident == "5"


@pytest.fixture
async def export_db(postgres_server_url: str) -> AsyncIterator[str]:
    url = await create_database(postgres_server_url, "feltd_test_history_export")
    try:
        yield url
    finally:
        await drop_database(postgres_server_url, url)


def _stored_tournament(tid: str, number: int) -> list[HandRecord]:
    """A short tournament played on the engine and rendered as the table actor stores it."""
    rng = random.Random(number)
    table = Table(TableSettings(size=6, first_button=FirstButton.DRAW), table_id=1)
    for seat, name in ((1, "ann"), (3, "bob"), (4, "cy"), (6, "dee")):
        table.seat_player(seat, name, 600)
    table.draw_button(rng)
    records = []
    start = dt.datetime(2026, 3, 1, 18, 0, tzinfo=dt.UTC)
    while len(table.players) > 1 and len(records) < 25:
        setup = table.start_hand(f"{tid}-{len(records) + 1}", 10, 20)
        hand = Hand(setup, rng=rng)
        play_random_hand(hand, rng)
        finishing = hand.finishing_stacks()
        started = start + dt.timedelta(minutes=len(records))
        context = StarsHandContext(number * 1000 + len(records) + 1, 1, 1, started)
        records.append(
            HandRecord(
                hand_id=setup.hand_id,
                tournament_id=tid,
                table_id=1,
                hand_number=context.hand_number,
                finished_at=started + dt.timedelta(seconds=40),
                players=tuple(HandPlayer(s.seat, s.player, s.stack, finishing[s.seat]) for s in setup.seats),
                phh=dumps_phh(export_phh(setup, hand.events, table=1, level=1, started_at=started)),
                pokerstars=format_pokerstars(setup, hand.events, StarsTournament(number), context),
            )
        )
        table.finish_hand(finishing)
    return records


async def test_history_export_writes_a_players_own_files_from_the_store(
    export_db: str, repo_root: Path, tmp_path: Path
) -> None:
    first, second = _stored_tournament("hx1", 41), _stored_tournament("hx2", 42)
    async with open_store(export_db) as store:
        await store.histories.save(first + second)

    everything = feltd(repo_root, "history", "export", "--format", "pokerstars", "--tournament", "hx1",
                       "--database-url", export_db)  # fmt: skip
    assert everything.returncode == 0, everything.stderr
    assert everything.stdout == join_hands(record.pokerstars for record in first)

    out = tmp_path / "HH ann.txt"
    ann = feltd(repo_root, "history", "export", "--format", "pokerstars", "--player", "ann",
                "--out", str(out), "--database-url", export_db)  # fmt: skip
    assert ann.returncode == 0, ann.stderr
    played = sorted(
        (r for r in first + second if any(p.player_id == "ann" for p in r.players)),
        key=lambda r: (r.finished_at, r.hand_id),
    )  # oldest first
    assert ann.stdout.strip() == f"{len(played)} hands written to {out} (pokerstars)"
    text = out.read_text(encoding="utf-8")
    assert text == join_hands(own_view(record.pokerstars, "ann") for record in played)
    frame = convert_txt_to_tabular_data(str(out))
    assert frame["HandID"].nunique() == len(played) and set(frame["Owner"]) == {"ann"}
    # pokerdf takes a file's tournament from its first hand (PokerStars writes a file per tournament)
    assert set(frame["HandID"].astype(int)) == {r.hand_number for r in played}, "both tournaments' hands"

    phh = feltd(repo_root, "history", "export", "--format", "phh", "--player", "bob", "--tournament", "hx2",
                "--database-url", export_db)  # fmt: skip
    assert phh.returncode == 0, phh.stderr
    hands = loads_phhs(phh.stdout)
    bobs = [r for r in second if any(p.player_id == "bob" for p in r.players)]
    assert len(hands) == len(bobs) and len(list(HandHistory.loads_all(phh.stdout))) == len(bobs)
    for hand in hands:
        names = hand.players or ()
        shown = {a.split()[0] for a in hand.actions if " sm " in a}
        for action in hand.actions:
            if action.startswith("d dh "):
                index = int(action.split()[2][1:])
                hidden = names[index - 1] != "bob" and f"p{index}" not in shown
                assert action.endswith("????") == hidden, f"{action}: bob sees only his own and shown cards"


async def test_history_export_errors_are_one_line(export_db: str, repo_root: Path) -> None:
    none = feltd(repo_root, "history", "export", "--format", "phh", "--database-url", export_db)
    assert none.returncode == 2 and none.stderr.strip().count("\n") == 0, none.stderr
    assert "give --tournament ID, --player NAME, or both" in none.stderr
    missing = feltd(repo_root, "history", "export", "--format", "pokerstars", "--tournament", "nope",
                    "--database-url", export_db)  # fmt: skip
    assert missing.returncode == 1 and missing.stdout == "", missing.stdout
    assert missing.stderr.strip() == "feltd history export: no stored hands for tournament 'nope'", (
        missing.stderr
    )
