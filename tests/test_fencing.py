"""Leases in Redis and fencing tokens in PostgreSQL (issue 15): a worker whose lease expired and
was taken cannot write anything of the tournament any more, whatever it tries; the writes of
others batched with its refused ones still go in. Real Redis, real PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import time
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
import redis.asyncio as aioredis
from server_harness import tournament_toml

from engine.tournament.transfers import CASHIER, Reason, Transfer, player_account
from server.lease import Lease, Leases
from server.store.connection import COMMAND_TIMEOUT_S, Store, connect_pool, open_store
from server.store.databases import create_database, drop_database
from server.store.errors import FencedOut
from server.store.fencing import Fence, claim, fence_on, recorded
from server.store.histories import HandPlayer, HandRecord
from server.store.journal import JournalEntry, JournalWriter, StoredSnapshot
from server.store.ledger_writer import LedgerWriter
from server.store.snapshots import SeatSnapshot, SnapshotWriter, TableSnapshot
from server.store.tournaments import TournamentStatus

NOW = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
async def store(postgres_server_url: str) -> AsyncIterator[Store]:
    url = await create_database(postgres_server_url, "feltd_test_fencing")
    try:
        async with open_store(url, max_size=6) as opened:
            yield opened
    finally:
        await drop_database(postgres_server_url, url)


def leases(redis_client: aioredis.Redis, redis_prefix: str, owner: str, ttl: float = 10.0) -> Leases:
    return Leases(redis_client, owner=owner, ttl=ttl, prefix=f"{redis_prefix}fencing:")


async def expired(leases: Leases, resource: str) -> None:
    """Until nobody holds ``resource`` (its TTL ran out)."""
    deadline = time.monotonic() + 10
    while await leases.holder(resource) is not None:
        assert time.monotonic() < deadline, f"{resource}'s lease never expired"
        await asyncio.sleep(0.02)


async def taken_over(
    redis_client: aioredis.Redis, redis_prefix: str, resource: str, old: Lease | None = None
) -> tuple[Lease, Lease]:
    """Worker a's lease of ``resource`` (``old``, else one taken now) expired and worker b holds
    it now: both leases."""
    a = leases(redis_client, redis_prefix, "a", ttl=0.15)
    b = leases(redis_client, redis_prefix, "b")
    old = old if old is not None else await a.acquire(resource)
    assert old is not None
    await expired(a, resource)
    new = await b.acquire(resource)
    assert new is not None and new.token > old.token
    assert not await a.renew(old)
    return old, new


def hand(tid: str, number: int) -> HandRecord:
    return HandRecord(
        hand_id=f"{tid}-h{number}",
        tournament_id=tid,
        table_id=1,
        hand_number=number,
        finished_at=NOW,
        players=(HandPlayer(1, "ann", 1000, 900), HandPlayer(2, "bob", 1000, 1100)),
        phh="variant = 'NT'\n",
        pokerstars="PokerStars Hand #1\n",
    )


def table(tid: str, table_id: int, hand_number: int) -> TableSnapshot:
    seats = (SeatSnapshot(1, "ann", 900, 2), SeatSnapshot(2, "bob", 1100, 2))
    return TableSnapshot(tid, table_id, hand_number, 1, 1, seats, NOW)


def deposit(player: str, cents: int, key: str) -> Transfer:
    return Transfer(CASHIER, player_account(player), cents, key, Reason.DEPOSIT)


async def test_a_lease_is_held_by_one_owner_renewed_released_and_tokens_grow(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    a = leases(redis_client, redis_prefix, "a")
    b = leases(redis_client, redis_prefix, "b")
    resource = f"t-{uuid.uuid4().hex[:8]}"
    first = await a.acquire(resource)
    assert first == Lease(resource, "a", 1)
    assert await b.acquire(resource) is None
    assert await a.acquire(resource) is None  # held, even by its own owner
    assert await b.holder(resource) == first
    assert await a.renew(first)
    assert not await b.release(Lease(resource, "b", 1))  # not b's to give back
    assert await a.release(first)
    assert await a.holder(resource) is None
    second = await b.acquire(resource)
    assert second == Lease(resource, "b", 2)
    assert not await a.renew(first) and not await a.release(first)  # a's old lease is gone
    assert await a.holder(resource) == second
    await b.release(second)
    tokens = []
    for owner in ("c", "d", "e"):
        lease = await leases(redis_client, redis_prefix, owner).acquire(resource)
        assert lease is not None
        tokens.append(lease.token)
        await leases(redis_client, redis_prefix, owner).release(lease)
    assert tokens == [3, 4, 5]


async def test_an_expired_lease_is_taken_with_a_higher_token_and_cannot_be_renewed(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    resource = f"t-{uuid.uuid4().hex[:8]}"
    old, new = await taken_over(redis_client, redis_prefix, resource)
    assert (old.owner, new.owner) == ("a", "b") and new.token == old.token + 1
    b = leases(redis_client, redis_prefix, "b")
    assert await b.holder(resource) == new
    assert await b.renew(new)
    # Redis lost its counters (a flush): the floor PostgreSQL recorded puts the next token past it.
    await redis_client.delete(b.counter_key(resource))
    await b.release(new)
    await b.raise_floor(resource, 41)
    again = await b.acquire(resource)
    assert again is not None and again.token == 42


async def test_a_fenced_write_by_a_worker_whose_lease_expired_is_refused(
    store: Store, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    """The acceptance test of issue 15: worker a held the lease, it expired, worker b took it
    (a higher token) and wrote; every kind of write a makes after that is refused with
    ``FencedOut`` and nothing of it is stored."""
    tid = f"fence-{uuid.uuid4().hex[:8]}"
    await store.tournaments.create_from_toml(tournament_toml(tid, players=6), starts_at=NOW)
    a = leases(redis_client, redis_prefix, "a", ttl=0.15)
    held = await a.acquire(tid)
    assert held is not None
    fence_a = Fence(tid, held.token)
    await claim(store.pool, fence_a)
    await store.journal.save_snapshot(StoredSnapshot(tid, 0, 1, b"d0"), fence=fence_a)
    await store.journal_writer.append(JournalEntry(tid, 1, 1.0, b"a1", (hand(tid, 1),)), fence=fence_a)
    await store.ledger_writer.post([deposit("ann", 500, f"{tid}:a:1")], fence=fence_a)
    await store.snapshot_writer.save(table(tid, 1, 1), fence=fence_a)

    old, new = await taken_over(redis_client, redis_prefix, tid, held)
    fence_b = Fence(tid, new.token)
    await claim(store.pool, fence_b)
    assert await recorded(store.pool, tid) == new.token
    await store.journal_writer.append(JournalEntry(tid, 2, 2.0, b"b2"), fence=fence_b)

    stale = Fence(tid, old.token)
    balance = await store.ledger.balance(player_account("ann"))
    with pytest.raises(FencedOut) as refused:
        await store.journal_writer.append(JournalEntry(tid, 3, 3.0, b"a3", (hand(tid, 3),)), fence=stale)
    assert (refused.value.resource, refused.value.token) == (tid, old.token)
    assert refused.value.recorded == new.token
    with pytest.raises(FencedOut):
        await store.ledger_writer.post([deposit("ann", 700, f"{tid}:a:2")], fence=stale)
    with pytest.raises(FencedOut):
        await store.ledger.post([deposit("ann", 700, f"{tid}:a:3")], fences=[stale])
    with pytest.raises(FencedOut):
        await store.snapshot_writer.save(table(tid, 1, 3), fence=stale)
    with pytest.raises(FencedOut):
        await store.journal.save_snapshot(StoredSnapshot(tid, 3, 1, b"d3"), fence=stale)
    with pytest.raises(FencedOut):
        await store.journal.prune(tid, fence=stale)
    with pytest.raises(FencedOut):
        await store.tournaments.set_status(tid, TournamentStatus.REGISTERING, fence=stale)
    with pytest.raises(FencedOut):
        await store.tournaments.reschedule(tid, NOW + dt.timedelta(hours=1), fence=stale)

    entries = await store.journal.entries_after(tid, 0)
    assert [(seq, data) for seq, _, data in entries] == [(1, b"a1"), (2, b"b2")]
    assert [h.hand_id for h in await store.histories.by_tournament(tid)] == [f"{tid}-h1"]
    assert await store.ledger.balance(player_account("ann")) == balance
    async with store.pool.acquire() as conn:
        keys = await conn.fetch(
            "SELECT idempotency_key FROM ledger_transactions WHERE idempotency_key LIKE $1", f"{tid}:%"
        )
    assert [row["idempotency_key"] for row in keys] == [f"{tid}:a:1"]
    state = await store.snapshots.load_latest_state(tid)
    assert state is not None and [t.hand_number for t in state.tables] == [1]
    assert [s.seq for s in await store.journal.snapshots(tid, limit=5)] == [0]
    record = await store.tournaments.get(tid)
    assert record.status is TournamentStatus.ANNOUNCED and record.starts_at == NOW
    # b, the owner, writes on; an unfenced writer (the admin CLI, one process) is not checked.
    await store.tournaments.set_status(tid, TournamentStatus.REGISTERING, fence=fence_b)
    await store.journal_writer.append(JournalEntry(tid, 3, 3.0, b"b3"))


async def test_a_new_owners_first_fenced_write_fences_the_old_one_out(
    store: Store, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    """Without an explicit claim, the newer token is recorded by b's first write."""
    tid = f"fence-{uuid.uuid4().hex[:8]}"
    old, new = await taken_over(redis_client, redis_prefix, tid)
    await store.journal_writer.append(JournalEntry(tid, 1, 1.0, b"a1"), fence=Fence(tid, old.token))
    await store.journal_writer.append(JournalEntry(tid, 2, 2.0, b"b2"), fence=Fence(tid, new.token))
    with pytest.raises(FencedOut):
        await store.journal_writer.append(JournalEntry(tid, 3, 3.0, b"a3"), fence=Fence(tid, old.token))
    assert [seq for seq, _, _ in await store.journal.entries_after(tid, 0)] == [1, 2]


async def test_a_refused_write_does_not_fail_the_others_in_its_batch(
    store: Store, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    """Each group-commit writer gets a's stale write and b's (of this tournament and another)
    in one batch: a gets ``FencedOut``, the others are stored, in one more round trip."""
    tid = f"fence-{uuid.uuid4().hex[:8]}"
    other = f"fence-{uuid.uuid4().hex[:8]}"
    old, new = await taken_over(redis_client, redis_prefix, tid)
    await claim(store.pool, Fence(tid, new.token))
    stale, fresh, elsewhere = Fence(tid, old.token), Fence(tid, new.token), Fence(other, 1)

    journal = JournalWriter(store.journal)
    outcomes = await asyncio.gather(
        journal.append(JournalEntry(tid, 1, 1.0, b"b1"), fence=fresh),
        journal.append(JournalEntry(tid, 2, 2.0, b"a2", (hand(tid, 2),)), fence=stale),
        journal.append(JournalEntry(other, 1, 1.0, b"o1"), fence=elsewhere),
        journal.append(JournalEntry(other, 2, 2.0, b"o2")),
        return_exceptions=True,
    )
    assert [type(o).__name__ for o in outcomes] == ["NoneType", "FencedOut", "NoneType", "NoneType"]
    assert journal.batches_written == 1
    assert [data for _, _, data in await store.journal.entries_after(tid, 0)] == [b"b1"]
    assert [data for _, _, data in await store.journal.entries_after(other, 0)] == [b"o1", b"o2"]
    assert await store.histories.by_tournament(tid) == []

    ledger = LedgerWriter(store.ledger)
    results = await asyncio.gather(
        ledger.post([deposit("bob", 100, f"{tid}:b")], fence=fresh),
        ledger.post([deposit("bob", 200, f"{tid}:a")], fence=stale),
        ledger.post([deposit("bob", 300, f"{other}:o")], fence=elsewhere),
        ledger.post([deposit("bob", 400, f"{other}:plain")]),
        return_exceptions=True,
    )
    assert [type(r).__name__ for r in results] == ["PostResult", "FencedOut", "PostResult", "PostResult"]
    assert ledger.batches_written == 1
    async with store.pool.acquire() as conn:
        keys = await conn.fetch(
            "SELECT idempotency_key FROM ledger_transactions WHERE idempotency_key LIKE ANY ($1) ORDER BY 1",
            [f"{tid}:%", f"{other}:%"],
        )
    assert [row["idempotency_key"] for row in keys] == sorted([f"{tid}:b", f"{other}:o", f"{other}:plain"])

    snapshots = SnapshotWriter(store.snapshots)
    saved = await asyncio.gather(
        snapshots.save(table(tid, 1, 5), fence=fresh),
        snapshots.save(table(tid, 2, 5), fence=stale),
        snapshots.save(table(other, 1, 5), fence=elsewhere),
        return_exceptions=True,
    )
    assert [type(s).__name__ for s in saved] == ["int", "FencedOut", "int"]
    assert snapshots.batches_written == 1
    state = await store.snapshots.load_latest_state(tid)
    assert state is not None and [t.table_id for t in state.tables] == [1]


async def test_the_servers_role_cannot_move_a_fence_but_through_feltd_fence(store: Store) -> None:
    tid = f"fence-{uuid.uuid4().hex[:8]}"
    await claim(store.pool, Fence(tid, 5))
    async with store.pool.acquire() as conn:
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("UPDATE write_fences SET token = 1 WHERE resource = $1", tid)
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("DELETE FROM write_fences WHERE resource = $1", tid)
    with pytest.raises(FencedOut):
        await claim(store.pool, Fence(tid, 4))
    assert await recorded(store.pool, tid) == 5


async def test_a_claim_with_the_live_owners_token_is_refused_so_two_owners_never_share_one(
    store: Store,
) -> None:
    """Redis back a step behind PostgreSQL (an older dump, a lagging replica) draws the live
    owner's token again: the second claim of that token is refused, the owner writes on, and a
    claim past it fences the owner out."""
    tid = f"fence-{uuid.uuid4().hex[:8]}"
    await claim(store.pool, Fence(tid, 5))  # worker a
    with pytest.raises(FencedOut) as refused:
        await claim(store.pool, Fence(tid, 5))  # worker b, handed the same token
    assert (refused.value.token, refused.value.recorded) == (5, 5)
    writer = JournalWriter(store.journal)
    await writer.append(JournalEntry(tid, 1, 1.0, b"a"), fence=Fence(tid, 5))
    await claim(store.pool, Fence(tid, 6))  # b again, past the recorded token
    with pytest.raises(FencedOut):
        await writer.append(JournalEntry(tid, 2, 2.0, b"a-late"), fence=Fence(tid, 5))
    await writer.append(JournalEntry(tid, 2, 2.0, b"b"), fence=Fence(tid, 6))
    assert [data for _, _, data in await store.journal.entries_after(tid, 0)] == [b"a", b"b"]
    await writer.close()


async def test_a_worker_frozen_inside_a_fenced_write_does_not_hold_the_failover_for_ever(
    store: Store,
) -> None:
    """A worker paused (or cut off) between its fence check and its commit holds the fence row's
    lock: PostgreSQL ends such a session once it sits idle in its transaction past the pool's
    limit, and the next owner's claim goes through then, not hours later."""
    tid = f"fence-{uuid.uuid4().hex[:8]}"
    await claim(store.pool, Fence(tid, 1))
    frozen_pool = await connect_pool(store.url, min_size=1, max_size=1, idle_in_transaction=0.5)
    try:
        frozen = await frozen_pool.acquire()
        transaction = frozen.transaction()
        await transaction.start()
        await fence_on(frozen, (Fence(tid, 1),))  # the row is locked, and then nothing comes
        started = time.monotonic()
        await claim(store.pool, Fence(tid, 2))  # waits for the lock, gets it when the session ends
        waited = time.monotonic() - started
        assert await recorded(store.pool, tid) == 2
        assert waited < COMMAND_TIMEOUT_S, waited  # the claim's own timeout did not have to end it
        # Its session is gone. When the server's FATAL message has come in but asyncpg has not
        # yet seen the socket close (a query right after the claim, as the pool releases
        # connections without a reset query), asyncpg says so as an InternalClientError.
        gone = (asyncpg.PostgresError, asyncpg.InterfaceError, ConnectionError, asyncpg.InternalClientError)
        with pytest.raises(gone):
            await frozen.execute("SELECT 1")
        with contextlib.suppress(Exception):
            await frozen_pool.release(frozen)
    finally:
        frozen_pool.terminate()
