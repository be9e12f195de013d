"""Hand histories: stored as rendered, found by hand id, player and tournament, exported as one
PHH (``.phhs``) file pokerkit reads and as PokerStars text."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from pokerkit import HandHistory

from engine.betting import HandSetup, SeatSetup
from engine.hand import Hand
from engine.history.phh import dumps_phh, export_phh, loads_phhs
from engine.history.pokerstars import StarsHandContext, StarsTournament, format_pokerstars, join_hands
from engine.random_play import play_random_hand
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database
from server.store.errors import HandHistoryError
from server.store.histories import HandPlayer, HandRecord


@pytest.fixture(scope="module")
async def store(postgres_server_url: str) -> AsyncIterator[Store]:
    url = await create_database(postgres_server_url, "feltd_test_histories")
    try:
        async with open_store(url) as opened:
            yield opened
    finally:
        await drop_database(postgres_server_url, url)


def phh_text(players: list[str], stacks: list[int]) -> str:
    """A three-handed hand folded around to the big blind, as a .phh file."""
    return "\n".join(
        [
            "variant = 'NT'",
            "ante_trimming_status = true",
            "antes = [0, 0, 0]",
            "blinds_or_straddles = [50, 100, 0]",
            "min_bet = 100",
            f"starting_stacks = {stacks}",
            "actions = [",
            "  'd dh p1 AcAd',",
            "  'd dh p2 KcKd',",
            "  'd dh p3 2c3d',",
            "  'p3 f',",
            "  'p1 f',",
            "]",
            f"players = {players!r}".replace('"', "'"),
            "[_feltd]",
            "hand = 'kept as a sub-table'",
            "",
        ]
    )


def record(tid: str, number: int, players: list[str], at: datetime) -> HandRecord:
    stacks = [1000, 1000, 1000]
    return HandRecord(
        hand_id=f"{tid}-h{number}",
        tournament_id=tid,
        table_id=1,
        hand_number=number,
        finished_at=at,
        players=tuple(
            HandPlayer(seat, player, 1000, final)
            for seat, player, final in zip((1, 2, 3), players, (950, 1050, 1000), strict=True)
        ),
        phh=phh_text(players, stacks),
        pokerstars=f"PokerStars Hand #{number}: Tournament #{tid}, Hold'em No Limit - Level I (50/100)\n"
        f"Seat 1: {players[0]} (1000 in chips)\n*** SUMMARY ***\n",
    )


async def test_hands_are_found_by_id_player_and_tournament(store: Store) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    hands = [
        record("hh1", n, ["ann", "bob", "cat" if n % 2 else "dan"], start + timedelta(minutes=n))
        for n in range(1, 6)
    ]
    await store.histories.save(hands)
    await store.histories.save(hands[:2])  # a retried save stores nothing twice

    got = await store.histories.get("hh1-h3")
    assert got == hands[2], f"expected the stored hand back unchanged, got {got}"
    by_tournament = await store.histories.by_tournament("hh1")
    assert [h.hand_id for h in by_tournament] == [h.hand_id for h in hands], by_tournament
    cat = await store.histories.by_player("cat")
    assert [h.hand_number for h in cat] == [5, 3, 1], "a player's hands come newest first"
    page = await store.histories.by_player("ann", limit=2)
    older = await store.histories.by_player("ann", limit=2, before=page[-1].finished_at)
    assert [h.hand_number for h in page + older] == [5, 4, 3, 2], "paging with before= continues"
    with pytest.raises(HandHistoryError, match="no hand has id"):
        await store.histories.get("missing")
    # the newest few, newest first: a tournament's, a player's, a player's in a tournament
    assert [h.hand_number for h in await store.histories.latest(tournament_id="hh1", limit=2)] == [5, 4]
    assert [h.hand_number for h in await store.histories.latest(player_id="dan")] == [4, 2]
    assert await store.histories.latest(tournament_id="other", player_id="dan") == []
    cat = await store.histories.latest(tournament_id="hh1", player_id="cat", limit=2)
    assert [h.hand_number for h in cat] == [5, 3]
    with pytest.raises(HandHistoryError, match="choose the hands"):
        await store.histories.latest()


async def test_tournament_exports_as_one_phhs_file_pokerkit_reads_and_as_pokerstars_text(
    store: Store,
) -> None:
    start = datetime(2026, 1, 2, tzinfo=UTC)
    hands = [record("hh2", n, ["eve", "fay", "gus"], start + timedelta(minutes=n)) for n in range(1, 4)]
    await store.histories.save(hands)

    phhs = await store.histories.export_phh("hh2")
    parsed = list(HandHistory.loads_all(phhs))
    assert len(parsed) == 3, f"expected 3 hands in the export, got {len(parsed)}"
    assert all(list(h.players or []) == ["eve", "fay", "gus"] for h in parsed), [h.players for h in parsed]
    assert "[1._feltd]" in phhs, "a hand's own sub-tables are nested under its number"

    stars = await store.histories.export_pokerstars("hh2")
    assert stars.count("PokerStars Hand #") == 3 and stars.count("\n\n\n\n") == 3, stars


def test_a_hand_history_without_players_or_time_zone_is_refused() -> None:
    with pytest.raises(HandHistoryError, match="players"):
        HandRecord("h", "t", 1, 1, datetime.now(UTC), (), "", "")
    with pytest.raises(HandHistoryError, match="time zone"):
        HandRecord("h", "t", 1, 1, datetime(2026, 1, 1), (HandPlayer(1, "p", 1, 1),), "", "")


def played_hand(tid: str, number: int, rng: random.Random) -> HandRecord:
    """A hand played by the engine and rendered by engine.history, as the table actor will."""
    players = ("ivy", "jon", "kim")
    seats = tuple(SeatSetup(seat, name, 1500) for seat, name in zip((1, 3, 5), players, strict=True))
    setup = HandSetup(
        hand_id=f"{tid}{number:04d}",
        table_size=6,
        seats=seats,
        button=1,
        small_blind_seat=3,
        big_blind_seat=5,
        small_blind=10,
        big_blind=20,
    )
    hand = Hand(setup, rng=rng)
    play_random_hand(hand, rng)
    started = datetime(2026, 2, 1, 20, 0, tzinfo=UTC) + timedelta(minutes=number)
    finishing = hand.finishing_stacks()
    return HandRecord(
        hand_id=setup.hand_id,
        tournament_id=tid,
        table_id=1,
        hand_number=number,
        finished_at=started + timedelta(seconds=30),
        players=tuple(HandPlayer(s.seat, s.player, s.stack, finishing[s.seat]) for s in setup.seats),
        phh=dumps_phh(export_phh(setup, hand.events, table="T1", level=1, started_at=started)),
        pokerstars=format_pokerstars(
            setup, hand.events, StarsTournament(3), StarsHandContext(number, 1, 1, started)
        ),
    )


async def test_hands_rendered_by_the_engine_export_back_byte_for_byte(store: Store) -> None:
    rng = random.Random(3)
    hands = [played_hand("hh3", n, rng) for n in range(1, 6)]
    await store.histories.save(hands)
    phhs = await store.histories.export_phh("hh3")
    assert [dumps_phh(h) for h in loads_phhs(phhs)] == [h.phh for h in hands], "PHH changed in the store"
    assert len(list(HandHistory.loads_all(phhs))) == 5, "pokerkit reads the exported file"
    stars = await store.histories.export_pokerstars("hh3")
    expected = join_hands(h.pokerstars for h in hands)  # each hand, then three blank lines
    assert stars == expected, "PokerStars text changed in the store"
    jon = await store.histories.by_player("jon")
    assert [h.hand_id for h in jon] == [h.hand_id for h in reversed(hands)]
