"""Two workers (two ``FeltServer``s with leases, one event loop, one PostgreSQL, one Redis, each
its own store and bus): a tournament runs on the worker that holds its lease and only there;
when that worker stops renewing, the other takes the tournament up from its journal (CRASH-1)
and plays it to its end, and the first one, writing on unaware, is fenced out and stops."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis.asyncio as aioredis
from server_harness import Player, Policy, lively, steady, tournament_toml, wait_until

from client.connection import Connection
from engine.tournament.transfers import CASHIER, Reason, Transfer, player_account, pool_account
from protocol.codec import MSGPACK_SUBPROTOCOL
from server.app import FeltServer
from server.clock import ScaledClock
from server.lease import Leases
from server.recovery import load_director
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database
from server.store.fencing import recorded
from server.store.tournaments import TournamentStatus

SPEED = 20.0
TTL = 2.0  # seconds of the wall: long enough that a busy test machine renews in time


@asynccontextmanager
async def _stores(postgres_server_url: str) -> AsyncIterator[tuple[Store, Store]]:
    """Two stores (two pools, two sets of writers, as two processes have) on one new database."""
    url = await create_database(postgres_server_url, f"feltd_test_failover_{uuid.uuid4().hex[:8]}")
    try:
        async with open_store(url, max_size=6) as first, open_store(url, max_size=6) as second:
            yield first, second
    finally:
        await drop_database(postgres_server_url, url)


def _worker(store: Store, leases: Leases, anchor: float, poll_seconds: float = 3600) -> FeltServer:
    return FeltServer(
        store,
        clock=ScaledClock(SPEED, anchor=anchor),
        poll_seconds=poll_seconds,
        hand_gap=1.0,
        leases=leases,
    )


def _player(server: FeltServer, token: str, tournament_id: str, seed: int, policy: Policy = steady) -> Player:
    connection = Connection(server.url, token=token, subprotocol=MSGPACK_SUBPROTOCOL)
    return Player(connection, tournament_id, policy, seed)


async def _leave(playing: list[asyncio.Task[None]]) -> None:
    """The players' tasks stop (a cancel may be lost in a ``wait_for`` on Python 3.11: a closed
    connection ends them too)."""
    for task in playing:
        task.cancel()
    await asyncio.wait(playing, timeout=10)
    await asyncio.gather(*(task for task in playing if task.done()), return_exceptions=True)


async def _players(store: Store, names: list[str]) -> dict[str, str]:
    tokens = {}
    for name in names:
        tokens[name] = (await store.players.add(name, player_id=name)).token
        await store.ledger.post(
            [Transfer(CASHIER, player_account(name), 100_000, f"deposit:{name}", Reason.DEPOSIT)]
        )
    return tokens


async def test_a_tournament_runs_on_one_worker_and_resumes_on_another_when_its_lease_expires(
    postgres_server_url: str, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    prefix = f"{redis_prefix}failover:{uuid.uuid4().hex[:6]}:"
    async with _stores(postgres_server_url) as (store_a, store_b):
        names = [f"f{n}" for n in range(6)]
        tokens = await _players(store_a, names)
        anchor = time.time()
        leases_a = Leases(redis_client, owner="a", ttl=TTL, prefix=prefix)
        leases_b = Leases(redis_client, owner="b", ttl=TTL, prefix=prefix)
        a = _worker(store_a, leases_a, anchor)
        b = _worker(store_b, leases_b, anchor, poll_seconds=0.1)
        await a.start("127.0.0.1", 0)
        try:
            start = dt.datetime.fromtimestamp(a.clock.now() + 3 * SPEED, dt.UTC)
            await store_a.tournaments.create_from_toml(tournament_toml("moving", players=6), starts_at=start)
            assert await a.load() == ["moving"]
            await b.start("127.0.0.1", 0)
            assert "moving" not in b.coordinators  # a holds the lease: b polls in vain

            both: list[float] = []
            renewing = True  # a renews its leases until the test stalls it

            async def watch() -> None:
                while True:
                    if renewing and "moving" in b.coordinators and "moving" in a.coordinators:
                        both.append(time.monotonic())
                    await asyncio.sleep(0.01)

            watcher = asyncio.create_task(watch())
            players = [_player(a, tokens[name], "moving", seed) for seed, name in enumerate(names)]
            playing = [asyncio.create_task(p.run(until=60)) for p in players]
            first = a.coordinators["moving"]
            await wait_until(lambda: first.director.hands_dealt >= 3, 60, "three hands on a")
            assert "moving" not in b.coordinators
            held = await leases_a.holder("moving")
            assert held is not None and held.owner == "a"

            # a dies mid-hand: its tasks stop where they are, its connections drop, its lease is
            # not given back.
            assert a._renewer is not None and a._poller is not None
            renewing = False
            for task in (a._renewer, a._poller, a.tasks["moving"]):
                task.cancel()
            first.abandon()
            await a.gateway.stop()
            await _leave(playing)
            assert first.director.status.value == "running"
            assert await leases_a.holder("moving") == held  # until its TTL runs out
            await wait_until(lambda: "moving" in b.coordinators, 30, "b to take the tournament up")
            taken = await leases_b.holder("moving")
            assert taken is not None and taken.owner == "b" and taken.token > held.token
            assert await recorded(store_b.pool, "moving") == taken.token
            second = b.coordinators["moving"]
            # from a's journal, the hands under way dealt again (CRASH-1)
            assert second.resumed_from is not None and second.director.status.value == "running"
            assert second.seq > first.seq

            players = [_player(b, tokens[name], "moving", seed, lively) for seed, name in enumerate(names)]
            playing = [asyncio.create_task(p.run(register=False, until=60)) for p in players]
            await wait_until(lambda: second.director.status.value == "finished", 60, "the end on b")
            await _leave(playing)
            watcher.cancel()
            assert both == []  # never both while a renewed
            assert second.director.standings is not None and second.director.standings.complete
        finally:
            await b.stop()
            await a.stop()
        restored = await load_director(store_b.journal, "moving")
        assert restored is not None and restored.director.status.value == "finished"
        assert (await store_b.ledger.check()).ok
        assert (await store_b.ledger.balances([pool_account("moving")]))[pool_account("moving")] == 0
        assert (await store_b.tournaments.get("moving")).status is TournamentStatus.FINISHED
        assert await leases_b.holder("moving") is None  # given back at the end


async def test_a_stalled_worker_that_writes_on_after_its_lease_was_taken_is_fenced_out(
    postgres_server_url: str, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    """a stalls (no renewals) but its coordinator lives on; b takes the tournament over. At the
    start time both directors act (nobody registered: cancelled): b's input is written, a's is
    refused, and a stops that coordinator at once."""
    prefix = f"{redis_prefix}zombie:{uuid.uuid4().hex[:6]}:"
    async with _stores(postgres_server_url) as (store_a, store_b):
        anchor = time.time()
        leases_a = Leases(redis_client, owner="a", ttl=0.6, prefix=prefix)
        leases_b = Leases(redis_client, owner="b", ttl=0.6, prefix=prefix)
        a = _worker(store_a, leases_a, anchor)
        b = _worker(store_b, leases_b, anchor, poll_seconds=0.05)
        await a.start("127.0.0.1", 0)
        await b.start("127.0.0.1", 0)
        try:
            start = dt.datetime.fromtimestamp(a.clock.now() + 4 * SPEED, dt.UTC)  # 4 s of the wall
            await store_a.tournaments.create_from_toml(tournament_toml("stalled", players=6), starts_at=start)
            assert await a.load() == ["stalled"]
            zombie = a.coordinators["stalled"]
            held = await leases_a.holder("stalled")
            assert held is not None and held.owner == "a"
            assert a._renewer is not None and a._poller is not None
            a._renewer.cancel()
            a._poller.cancel()
            await wait_until(lambda: "stalled" in b.coordinators, 10, "b to take the tournament up")
            owner = b.coordinators["stalled"]
            assert "stalled" in a.coordinators  # a does not know yet
            await wait_until(lambda: "stalled" not in a.coordinators, 20, "a to be fenced out")
            assert zombie.fenced_out is not None and zombie.fenced_out.token == held.token
            await wait_until(owner.finished.is_set, 20, "b to settle the tournament")
            assert owner.director.status.value == "cancelled"
        finally:
            await b.stop()
            await a.stop()
        restored = await load_director(store_b.journal, "stalled")
        assert restored is not None and restored.director.status.value == "cancelled"
        assert restored.seq == owner.seq  # every entry b's: none of a's after the takeover
        assert (await store_b.tournaments.get("stalled")).status is TournamentStatus.CANCELLED


async def test_a_worker_whose_lease_renewal_is_refused_stops_the_tournament_at_once(
    postgres_server_url: str, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    """The lease vanished (expired and taken while the worker was away): the next renewal says
    so and the coordinator stops before it writes again; a worker that stops gives its leases
    back, so the next one need not wait for the TTL."""
    prefix = f"{redis_prefix}renewal:{uuid.uuid4().hex[:6]}:"
    async with _stores(postgres_server_url) as (store, other):
        anchor = time.time()
        leases = Leases(redis_client, owner="a", ttl=0.6, prefix=prefix)
        a = _worker(store, leases, anchor)
        await a.start("127.0.0.1", 0)
        try:
            start = dt.datetime.fromtimestamp(a.clock.now() + 3600, dt.UTC)
            await store.tournaments.create_from_toml(tournament_toml("lost", players=6), starts_at=start)
            await store.tournaments.create_from_toml(tournament_toml("kept", players=6), starts_at=start)
            assert sorted(await a.load()) == ["kept", "lost"]
            lost = a.coordinators["lost"]
            await redis_client.delete(leases.lease_key("lost"))
            await wait_until(lambda: "lost" not in a.coordinators, 10, "the coordinator to stop")
            assert lost.stopping and "kept" in a.coordinators
            assert await leases.holder("kept") is not None
        finally:
            await a.stop()
        assert await leases.holder("kept") is None
        b = _worker(other, Leases(redis_client, owner="b", ttl=0.6, prefix=prefix), anchor)
        await b.start("127.0.0.1", 0)
        try:
            assert sorted(b.coordinators) == ["kept", "lost"]
            assert b.coordinators["kept"].resumed_from is not None
        finally:
            await b.stop()


async def test_a_deleted_tournament_is_not_taken_up_by_another_worker_in_between(
    postgres_server_url: str, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    """The desk deletes a tournament its worker runs: the worker keeps the lease until the
    deletion is written, so another worker's poll in between finds it held, and after it finds
    the tournament cancelled. (It once gave the lease back first: the other worker started the
    deleted tournament.)"""
    async with _stores(postgres_server_url) as (store_a, store_b):
        anchor = time.time()
        a = _worker(store_a, Leases(redis_client, owner="a", ttl=TTL, prefix=redis_prefix), anchor)
        b = _worker(store_b, Leases(redis_client, owner="b", ttl=TTL, prefix=redis_prefix), anchor)
        starts = dt.datetime.fromtimestamp(time.time() + 3600, dt.UTC)
        await store_a.tournaments.create_from_toml(tournament_toml("gone", players=6), starts_at=starts)
        assert await a.load() == ["gone"]
        polled_between: list[str] = []

        async def delete() -> None:
            polled_between.extend(await b.load())  # another worker's poll lands here
            await store_a.tournaments.set_status("gone", TournamentStatus.CANCELLED)

        try:
            await a.drop("gone", then=delete)
            assert polled_between == [] and "gone" not in a.coordinators
            assert await b.load() == [], "a cancelled tournament is not loaded"
            assert (await store_b.tournaments.get("gone")).status is TournamentStatus.CANCELLED
        finally:
            await a.stop()
            await b.stop()
