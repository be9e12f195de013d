"""Table snapshots at hand boundaries (CRASH-1) and the latest consistent tournament state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import asyncpg
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database
from server.store.errors import SnapshotError
from server.store.snapshots import SeatSnapshot, SnapshotWriter, TableSnapshot


@pytest.fixture(scope="module")
async def store(postgres_server_url: str) -> AsyncIterator[Store]:
    url = await create_database(postgres_server_url, "feltd_test_snapshots")
    try:
        async with open_store(url, max_size=4) as opened:
            yield opened
    finally:
        await drop_database(postgres_server_url, url)


NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def table(
    tid: str, table_id: int, hand: int, players: dict[str, int], *, button: int | None = 1
) -> TableSnapshot:
    seats = tuple(
        SeatSnapshot(seat, player, stack, 2) for seat, (player, stack) in enumerate(players.items(), 1)
    )
    return TableSnapshot(tid, table_id, hand, 1 + hand // 10, button, seats, NOW)


async def test_crash_1_latest_state_is_each_tables_last_hand_boundary(store: Store) -> None:
    await store.snapshots.save(
        [table("s1", 1, 0, {"a1": 1000, "a2": 1000}), table("s1", 2, 0, {"b1": 1000, "b2": 1000})]
    )
    await store.snapshots.save([table("s1", 1, 1, {"a1": 1500, "a2": 500})])
    third = await store.snapshots.save(
        [table("s1", 2, 1, {"b1": 200, "b2": 1800}), table("s1", 1, 2, {"a1": 2000})]
    )
    state = await store.snapshots.load_latest_state("s1")
    assert state is not None
    assert state.batch_id == third.batch_id, (state.batch_id, third.batch_id)
    got = {t.table_id: (t.hand_number, {s.player_id: s.stack for s in t.seats}) for t in state.tables}
    assert got == {1: (2, {"a1": 2000}), 2: (1, {"b1": 200, "b2": 1800})}, got
    assert state.chips == 4000, f"chips are conserved across the state: expected 4000, got {state.chips}"
    assert state.tables[0] == table("s1", 1, 2, {"a1": 2000}), "a snapshot loads back exactly as saved"


async def test_latest_state_at_or_before_a_batch_and_broken_tables(store: Store) -> None:
    first = await store.snapshots.save(
        [table("s2", 1, 5, {"p1": 10, "p2": 20}), table("s2", 2, 5, {"p3": 30})]
    )
    # A balancing move between hands: both tables in one batch, so no state has p3 twice or never.
    await store.snapshots.save(
        [table("s2", 1, 5, {"p1": 10, "p2": 20, "p3": 30}), table("s2", 2, 5, {}, button=None)]
    )
    now = await store.snapshots.load_latest_state("s2")
    assert now is not None and [t.table_id for t in now.tables] == [1], "a broken table is left out"
    assert now.players == {"p1", "p2", "p3"}, now.players
    before = await store.snapshots.load_latest_state("s2", at_or_before_batch=first.batch_id)
    assert before is not None and {t.table_id for t in before.tables} == {1, 2}
    assert before.players == {"p1", "p2", "p3"}, before.players
    assert await store.snapshots.load_latest_state("nothing-here") is None
    # Pruning up to the newest batch keeps exactly what the latest state needs.
    assert await store.snapshots.prune("s2", now.batch_id) == 2, "A's and B's first snapshots go"
    assert await store.snapshots.load_latest_state("s2") == now


async def test_a_thousand_tables_save_in_one_round_trip_and_concurrent_saves_stay_whole(store: Store) -> None:
    batch = [table("s3", i, 1, {f"p{i}-{s}": 1000 + s for s in range(9)}) for i in range(1000)]
    saved = await store.snapshots.save(batch)
    assert len(saved.snapshot_ids) == 1000 and list(saved.snapshot_ids) == sorted(saved.snapshot_ids)

    async def actor(first: int) -> None:
        # One writer per table, as the table actors are; different tables save concurrently.
        for hand in range(2, 6):
            tables = [table("s3", i, hand, {f"p{i}-0": 5}) for i in range(first, 1000, 4)]
            await store.snapshots.save(tables)

    await asyncio.gather(*(actor(first) for first in range(4)))
    state = await store.snapshots.load_latest_state("s3")
    assert state is not None and len(state.tables) == 1000, "every table has a state"
    hands = {t.hand_number for t in state.tables}
    assert hands == {5}, f"every table's latest snapshot is its hand 5, got hands {hands}"


async def test_table_actors_saving_at_once_share_a_few_round_trips(store: Store) -> None:
    """A thousand tables reach a hand boundary together; the writer groups them into few batches."""
    writer = SnapshotWriter(store.snapshots, max_batch=400)

    async def actor(i: int) -> list[int]:
        return [await writer.save(table("s4", i, hand, {f"p{i}": 1000 + hand})) for hand in (1, 2)]

    ids = await asyncio.gather(*(actor(i) for i in range(1000)))
    await writer.close()
    assert all(first < second for first, second in ids), "each table's snapshots are written in order"
    assert writer.batches_written <= 10, f"expected a handful of batches, got {writer.batches_written}"
    state = await store.snapshots.load_latest_state("s4")
    assert state is not None and {t.hand_number for t in state.tables} == {2} and len(state.tables) == 1000


def test_snapshots_that_do_not_describe_a_table_are_refused() -> None:
    with pytest.raises(SnapshotError, match="twice"):
        TableSnapshot("t", 1, 1, 1, 1, (SeatSnapshot(1, "p", 1, 0), SeatSnapshot(1, "q", 1, 0)), NOW)
    with pytest.raises(SnapshotError, match="twice"):
        TableSnapshot("t", 1, 1, 1, 1, (SeatSnapshot(1, "p", 1, 0), SeatSnapshot(2, "p", 1, 0)), NOW)
    with pytest.raises(SnapshotError, match="non-negative"):
        TableSnapshot("t", 1, 1, 1, 1, (SeatSnapshot(1, "p", -5, 0),), NOW)
    with pytest.raises(SnapshotError, match="NUL"):
        TableSnapshot("t", 1, 1, 1, 1, (SeatSnapshot(1, "p\x00", 1, 0),), NOW)
    with pytest.raises(SnapshotError, match="time zone"):
        TableSnapshot("t", 1, 1, 1, 1, (), datetime(2026, 1, 1))


PLAYER_IDS = st.text(min_size=1, max_size=8)
SEATS = st.lists(
    st.tuples(st.integers(1, 10), PLAYER_IDS, st.integers(0, 10**12), st.integers(0, 9)),
    max_size=10,
    unique_by=(lambda s: s[0], lambda s: s[1]),
)


def test_any_snapshot_batch_loads_back_exactly(postgres_server_url: str) -> None:
    """Whatever a table looks like between hands, the latest state gives it back field for field."""
    loop = asyncio.new_event_loop()
    url = loop.run_until_complete(create_database(postgres_server_url, "feltd_test_snapshots_h"))
    opened = open_store(url, max_size=2)
    store = loop.run_until_complete(opened.__aenter__())
    runs = iter(range(10**6))

    @settings(max_examples=30, deadline=None)
    @given(
        st.lists(
            st.tuples(st.integers(0, 10**6), st.integers(0, 40), st.none() | st.integers(1, 10), SEATS),
            min_size=1,
            max_size=5,
        )
    )
    def check(tables: list[tuple[int, int, int | None, list[tuple[int, str, int, int]]]]) -> None:
        tid = f"h{next(runs)}"
        try:
            batch = [
                TableSnapshot(tid, i, hand, level, button, tuple(SeatSnapshot(*seat) for seat in seats), NOW)
                for i, (hand, level, button, seats) in enumerate(tables)
            ]
        except SnapshotError:
            # Refused up front (an id PostgreSQL cannot store); nothing to save.
            assume(False)
        loop.run_until_complete(store.snapshots.save(batch))
        state = loop.run_until_complete(store.snapshots.load_latest_state(tid))
        expected = tuple(t for t in batch if t.seats)
        assert state is not None and state.tables == expected, f"expected {expected}, got {state}"

    try:
        check()
    finally:
        loop.run_until_complete(opened.__aexit__(None, None, None))
        loop.run_until_complete(drop_database(postgres_server_url, url))
        loop.close()


async def test_crash_1_a_tables_engine_state_round_trips_through_the_store(store: Store) -> None:
    """The store keeps what ``Table.from_snapshot`` needs: after real hands, the table rebuilt
    from the loaded row deals the same next hand as the table that was saved."""
    import random

    from engine.hand import Hand
    from engine.random_play import play_random_hand
    from engine.table import Table, TableSettings

    rng = random.Random(5)
    live = Table(TableSettings(size=6), table_id=7)
    for seat in (1, 2, 4, 5, 6):
        live.seat_player(seat, f"e{seat}", 2000)
    live.draw_button(rng)
    for number in range(4):
        hand = Hand(live.start_hand(f"e-{number}", 10, 20), rng=rng)
        play_random_hand(hand, rng)
        live.finish_hand(hand.finishing_stacks())
    live.penalize(live.players[0].seat, 2)
    live.set_absent(live.players[-1].seat, True)
    seats = tuple(SeatSnapshot(p.seat, p.player, p.stack, 1) for p in live.players)
    await store.snapshots.save([TableSnapshot("s6", 7, 4, 1, None, seats, NOW, live.snapshot())])
    state = await store.snapshots.load_latest_state("s6")
    assert state is not None and state.tables[0].state == live.snapshot()
    rebuilt = Table.from_snapshot(state.tables[0].state)
    assert rebuilt.next_positions() == live.next_positions()
    assert rebuilt.start_hand("e-5", 10, 20) == live.start_hand("e-5", 10, 20)


def test_a_snapshot_whose_state_disagrees_with_its_seats_is_refused() -> None:
    from engine.table import Table

    table = Table(table_id=3)
    table.seat_player(1, "a", 10)
    with pytest.raises(SnapshotError, match="other players or stacks"):
        TableSnapshot("t", 3, 1, 1, 1, (SeatSnapshot(1, "a", 11, 0),), NOW, table.snapshot())
    with pytest.raises(SnapshotError, match="table 4's"):
        TableSnapshot("t", 3, 1, 1, 1, (SeatSnapshot(1, "a", 10, 0),), NOW, Table(table_id=4).snapshot())


@pytest.mark.parametrize(
    "damage",
    [
        "seats = '[[1, \"x\"]]'::jsonb",  # seats that do not describe seats
        'format = 2, state = \'{"not": "a table"}\'::jsonb',  # a state that does not decode
    ],
)
async def test_a_damaged_latest_snapshot_falls_back_to_the_batch_before_with_a_warning(
    store: Store, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    tid = f"dmg{abs(hash(damage)) % 10_000}"
    first = await store.snapshots.save(
        [table(tid, 1, 1, {"d1": 1000, "d2": 1000}), table(tid, 2, 1, {"d3": 500})]
    )
    second = await store.snapshots.save([table(tid, 1, 2, {"d1": 1800, "d2": 200})])
    owner = await asyncpg.connect(store.url)
    try:
        await owner.execute(f"UPDATE table_snapshots SET {damage} WHERE id = $1", second.snapshot_ids[0])
    finally:
        await owner.close()
    with caplog.at_level("WARNING", logger="server.store.snapshots"):
        state = await store.snapshots.load_latest_state(tid)
    assert state is not None and state.batch_id == first.batch_id, state
    assert {t.table_id: t.hand_number for t in state.tables} == {1: 1, 2: 1}
    assert any(
        f"table snapshot {second.snapshot_ids[0]} (batch {second.batch_id}) cannot be loaded"
        in r.getMessage()
        for r in caplog.records
    ), [r.getMessage() for r in caplog.records]


async def test_journal_entries_store_their_tables_in_one_batch_with_their_hands(store: Store) -> None:
    """A hand's end: its journal entry, its history and its table's state in one write (the
    coordinator's), with or without hands, in one snapshot batch per write."""
    from server.store.histories import HandPlayer, HandRecord
    from server.store.journal import JournalEntry

    hand = HandRecord("sj-h1", "sj", 1, 1, NOW, (HandPlayer(1, "j1", 1000, 1500),), "phh\n", "stars\n")
    first = table("sj", 1, 1, {"j1": 1500, "j2": 500})
    await store.journal.append([JournalEntry("sj", 1, 1.0, b"e1", (hand,), (first,))])
    await store.journal.append([JournalEntry("sj", 2, 2.0, b"e2", (), (table("sj", 2, 1, {"k1": 9}),))])
    await store.journal.append(
        [
            JournalEntry("sj", 3, 3.0, b"e3"),
            JournalEntry("sj", 4, 4.0, b"e4", (), (table("sj", 1, 2, {"j1": 2000}),)),
        ]
    )
    state = await store.snapshots.load_latest_state("sj")
    assert state is not None
    got = {t.table_id: (t.hand_number, {s.player_id: s.stack for s in t.seats}) for t in state.tables}
    assert got == {1: (2, {"j1": 2000}), 2: (1, {"k1": 9})}, got
    first_state = await store.snapshots.load_latest_state("sj", at_or_before_batch=state.batch_id - 2)
    assert first_state is not None and first_state.tables == (first,), first_state
    assert [seq for seq, _, _ in await store.journal.entries_after("sj", 0)] == [1, 2, 3, 4]
    assert [h.hand_id for h in await store.histories.by_tournament("sj")] == ["sj-h1"]
