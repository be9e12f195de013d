"""`feltd serve --role worker --shard-tables` (issue 15): one tournament's tables spread over the
workers' table hosts, one event loop holding a gateway and three workers, each with its own
Redis bus and store pool, sharing one PostgreSQL and one Redis. Bots play through the gateway
to the end; a worker that hosts tables but not the coordinator dies mid-play (no goodbye: its
bus stops beating), its tables open again on the others, their hands dealt again from their
start (CRASH-1 at one table), and the tournament still ends with the ledger balanced."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import redis.asyncio as aioredis
from server_harness import tournament_toml, unexplained, wait_until

from client.bot import Chaos
from client.think import Fixed
from engine.tournament import inputs
from engine.tournament.transfers import pool_account
from server.app import FeltServer, Role
from server.cli.bots import BotsRun
from server.clock import ScaledClock
from server.coordinator import Coordinator
from server.lease import Leases
from server.recovery import load_director
from server.redis_bus import READ_BLOCK_MS, RedisBus
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database

SPEED = 100.0
ALIVE = 3  # seconds without a heartbeat before a process's addresses leave the directory


@dataclass
class Cluster:
    gateway: FeltServer
    workers: list[FeltServer]
    buses: list[RedisBus]
    stores: list[Store]


# every test runs under asyncio.timeout(90): a hang (a cancel redis-py swallowed, say) fails
# with where it hung instead of stalling the suite
@contextlib.asynccontextmanager
async def _cluster(
    postgres_server_url: str, redis_url: str, prefix: str, redis_client: aioredis.Redis, workers: int = 3
) -> AsyncIterator[Cluster]:
    url = await create_database(postgres_server_url, f"feltd_test_shard_{uuid.uuid4().hex[:8]}")
    anchor = time.time()
    stack = contextlib.AsyncExitStack()
    buses: list[RedisBus] = []
    servers: list[FeltServer] = []
    try:
        stores = [await stack.enter_async_context(open_store(url, max_size=4)) for _ in range(workers + 1)]
        for _ in range(workers + 1):
            bus = RedisBus(redis_url, prefix=prefix, alive_seconds=ALIVE)
            await bus.start()
            buses.append(bus)
        gateway = FeltServer(
            stores[0], clock=ScaledClock(SPEED, anchor=anchor), role=Role.GATEWAY, bus=buses[0]
        )
        for index in range(1, workers + 1):
            leases = Leases(redis_client, owner=f"w{index}", ttl=3.0, prefix=f"{prefix}:")
            servers.append(
                FeltServer(
                    stores[index],
                    clock=ScaledClock(SPEED, anchor=anchor),
                    poll_seconds=0.3,
                    hand_gap=1.0,
                    journal=True,
                    role=Role.WORKER,
                    bus=buses[index],
                    leases=leases,
                    shard_tables=True,
                )
            )
        for server in servers:
            await server.start("127.0.0.1", 0)
        await gateway.start("127.0.0.1", 0)
        try:
            yield Cluster(gateway, servers, buses, stores)
        finally:
            await gateway.stop()
            for server in servers:
                await server.stop()
            for bus in buses:
                await bus.close(flush_seconds=1.0)
    finally:
        await stack.aclose()
        await drop_database(postgres_server_url, url)


def _die(worker: FeltServer, bus: RedisBus) -> None:
    """The worker's process ends at once: its bus stops beating and sends nothing more, its tables
    stop where they are, nothing is given back."""
    bus._closing = True  # its readers stop too, should redis-py swallow their cancel
    for task in bus._tasks:
        task.cancel()
    for stopped in (worker._poller, worker._desk, worker._own_desk, worker._renewer, worker._hosting):
        if stopped is not None:
            stopped.cancel()
    assert worker.table_host is not None
    for task in worker.table_host.tasks.values():
        task.cancel()


async def _play(cluster: Cluster, name: str, count: int) -> tuple[BotsRun, bool]:
    run = BotsRun(cluster.gateway.url, cluster.stores[0])
    toml = tournament_toml(name, players=count, table_size=6, level_minutes=2)
    await run.prepare(count, tournament_id=None, toml=toml, kind="tag,station,random", prefix=name)
    try:
        finished = await run.play(think=Fixed(0.0), chaos=Chaos(), seed=4, deadline=60)
    finally:
        await run.close()
    return run, finished


def _playing(worker: FeltServer, coordinator: Coordinator) -> bool:
    """Whether a table the worker hosts for ``coordinator`` has played a hand and is in the middle
    of the next, the one the director has under way there (its end not yet told)."""
    host = worker.table_host
    assert host is not None
    running = {hand.table_id: hand.hand_number for hand in coordinator.director.running_hands()}
    return any(
        actor.hands_played
        and actor.hand_views is not None
        and actor.hand is not None
        and running.get(table_id) == actor.hand_views.hand_number
        and coordinator.hosts.get(table_id) == host.address
        for table_id, actor in host.actors.items()
    )


def _stall(bus: RedisBus) -> list[asyncio.Task[None]]:
    """The bus stops sending, reading its stream and beating, at once (a cancel redis-py
    swallows in its blocking read is made up for by the closing flag, seen within a read's block
    time; its pub/sub reader, which sees the flag only with its next message, may stop too)."""
    bus._closing = True
    stopped = [bus._tasks[0], bus._tasks[1], bus._tasks[3]]
    for task in stopped:
        task.cancel()
    return stopped


async def _ended(tasks: list[asyncio.Task[None]]) -> None:
    """Until the tasks have ended: a cancel redis-py swallowed (in a blocking read, or a
    command under way) is given again."""
    async with asyncio.timeout(READ_BLOCK_MS / 1000 + 10):
        while not all(task.done() for task in tasks):
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=0.1)


def _coordinator_worker(cluster: Cluster, name: str) -> FeltServer:
    (worker,) = [w for w in cluster.workers if name in w.coordinators]
    return worker


async def _check_money(store: Store, name: str) -> None:
    check = await store.ledger.check(None)
    assert check.ok, check.problems
    assert (await store.ledger.balances([pool_account(name)]))[pool_account(name)] == 0
    restored = await load_director(store.journal, name)
    assert restored is not None and restored.director.status.value == "finished"
    restored.director.check_chips()


async def test_a_tournament_whose_tables_spread_over_three_workers_plays_to_the_end(
    postgres_server_url: str, redis_url: str, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    prefix = f"{redis_prefix}shard:{uuid.uuid4().hex[:6]}"
    async with asyncio.timeout(90), _cluster(postgres_server_url, redis_url, prefix, redis_client) as cluster:
        run, finished = await _play(cluster, "spread", 18)
        assert finished, run.report(finished)
        assert unexplained(run.report(finished)["errors"]) == {}
        coordinator = _coordinator_worker(cluster, "spread").coordinators["spread"]
        assert coordinator.director.status.value == "finished"
        assert coordinator.actors == {}, "no table played in the coordinator's own loop"
        hosting = [w.table_host.opened for w in cluster.workers if w.table_host is not None]
        assert sum(1 for opened in hosting if opened) == 3, f"three tables on three hosts: {hosting}"
        assert coordinator.tables_lost == 0
        await _check_money(cluster.stores[1], "spread")


async def test_a_dead_workers_tables_open_again_elsewhere_and_their_hands_are_dealt_again(
    postgres_server_url: str, redis_url: str, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    prefix = f"{redis_prefix}shard:{uuid.uuid4().hex[:6]}"
    async with asyncio.timeout(90), _cluster(postgres_server_url, redis_url, prefix, redis_client) as cluster:
        playing = asyncio.create_task(_play(cluster, "lost", 18))
        await wait_until(lambda: any("lost" in w.coordinators for w in cluster.workers), 20, "a coordinator")
        owner = _coordinator_worker(cluster, "lost")
        coordinator = owner.coordinators["lost"]
        others = [w for w in cluster.workers if w is not owner]

        def mid_hand(worker: FeltServer) -> bool:
            return _playing(worker, coordinator)

        # a table between hands may be broken before its loss is seen: the worker dies mid-hand
        await wait_until(lambda: any(map(mid_hand, others)), 30, "a hand at another worker")
        victim = next(filter(mid_hand, others))
        assert victim.table_host is not None
        lost = sorted(victim.table_host.actors)
        assert lost and all(coordinator.hosts[t] == victim.table_host.address for t in lost)
        under_way = {hand.table_id: hand.hand_number for hand in coordinator.director.running_hands()}
        _die(victim, cluster.buses[cluster.workers.index(victim) + 1])
        await _ended(cluster.buses[cluster.workers.index(victim) + 1]._tasks)

        await wait_until(lambda: coordinator.tables_lost >= 1, 20, "the lost tables to be noticed")
        run, finished = await playing
        assert finished, run.report(finished)
        assert coordinator.director.status.value == "finished"
        assert coordinator.journal is not None
        again = [value for value in coordinator.journal if isinstance(value, inputs.TableLost)]
        assert again and {value.table_id for value in again} <= set(lost)
        assert victim.table_host.address not in coordinator.hosts.values()
        # an action sent while its table is gone (before it opens again) finds no table
        assert set(unexplained(run.report(finished)["errors"])) <= {"not_found"}
        await _check_money(cluster.stores[1], "lost")
        hands = await cluster.stores[1].histories.by_tournament("lost")
        numbers = [hand.hand_number for hand in hands]
        assert len(numbers) == len(set(numbers)), "no hand stored twice"
        for table_id in lost:  # the hand it was playing (if still so) ended once, dealt again
            if table_id in under_way and any(value.table_id == table_id for value in again):
                (hand,) = [h for h in hands if h.hand_number == under_way[table_id]]
                assert hand.table_id == table_id


async def test_the_coordinators_worker_dies_and_its_tables_elsewhere_do_not_play_on_beside_the_new_ones(
    postgres_server_url: str, redis_url: str, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    """The worker running the coordinator dies: another takes the tournament up from its journal
    (its lease); the tables of the old coordinator still open on the live workers are stopped
    before the new coordinator opens them again (``DropTables``), and every hand under way is
    dealt again (CRASH-1)."""
    prefix = f"{redis_prefix}shard:{uuid.uuid4().hex[:6]}"
    async with asyncio.timeout(90), _cluster(postgres_server_url, redis_url, prefix, redis_client) as cluster:
        playing = asyncio.create_task(_play(cluster, "moved", 18))
        await wait_until(lambda: any("moved" in w.coordinators for w in cluster.workers), 20, "a coordinator")
        owner = _coordinator_worker(cluster, "moved")
        first = owner.coordinators["moved"]
        await wait_until(lambda: first.director.hands_dealt >= 6, 30, "hands under way")
        assert owner.table_host is not None
        assert set(first.hosts.values()) - {owner.table_host.address}, "tables on the other workers"
        old_epochs = dict(first.epochs)
        _die(owner, cluster.buses[cluster.workers.index(owner) + 1])
        await _ended(cluster.buses[cluster.workers.index(owner) + 1]._tasks)
        task = owner.tasks.pop("moved")
        task.cancel()
        first.abandon()
        owner.coordinators.pop("moved")

        others = [w for w in cluster.workers if w is not owner]
        await wait_until(lambda: any("moved" in w.coordinators for w in others), 20, "the takeover")
        second = _coordinator_worker(cluster, "moved").coordinators["moved"]
        assert second.resumed_from is not None
        assert all(second.epochs[t] > old_epochs[t] for t in second.epochs if t in old_epochs)
        for worker in others:  # no table of the old coordinator plays on
            assert worker.table_host is not None
            assert all(actor.epoch not in old_epochs.values() for actor in worker.table_host.actors.values())
        run, finished = await playing
        assert finished, run.report(finished)
        assert second.director.status.value == "finished"
        await _check_money(cluster.stores[1], "moved")
        hands = await cluster.stores[1].histories.by_tournament("moved")
        numbers = [hand.hand_number for hand in hands]
        assert len(numbers) == len(set(numbers)), "no hand stored twice"


async def test_a_host_taken_for_dead_that_comes_back_stops_its_older_tables(
    postgres_server_url: str, redis_url: str, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    """A worker stalls past its heartbeats (nothing in or out of its bus): its tables open again
    elsewhere. When it beats again it claims its addresses back, the old tables' with them: the
    coordinator sees the host listed again and has those older openings stop; their reports
    are ignored, the tournament ends and the money balances."""
    prefix = f"{redis_prefix}shard:{uuid.uuid4().hex[:6]}"
    async with asyncio.timeout(90), _cluster(postgres_server_url, redis_url, prefix, redis_client) as cluster:
        playing = asyncio.create_task(_play(cluster, "stall", 18))
        await wait_until(lambda: any("stall" in w.coordinators for w in cluster.workers), 20, "a coordinator")
        owner = _coordinator_worker(cluster, "stall")
        coordinator = owner.coordinators["stall"]
        others = [w for w in cluster.workers if w is not owner]

        def mid_hand(worker: FeltServer) -> bool:
            return _playing(worker, coordinator)

        # a table between hands may be broken before its loss is seen: the worker dies mid-hand
        await wait_until(lambda: any(map(mid_hand, others)), 30, "a hand at another worker")
        victim = next(filter(mid_hand, others))
        host = victim.table_host
        assert host is not None
        old = {table_id: actor.epoch for table_id, actor in host.actors.items()}
        bus = cluster.buses[cluster.workers.index(victim) + 1]
        # the stall: nothing in or out, no heartbeat (its table actors, on their own, go on)
        stopped = _stall(bus)
        await wait_until(lambda: coordinator.tables_lost >= 1, 20, "the tables to be taken for lost")
        await _ended(stopped)
        bus._closing = False
        reading = bus._tasks[2]
        bus._tasks = [
            asyncio.create_task(bus._write(), name="redis bus writer"),
            asyncio.create_task(bus._read_stream(), name="redis bus stream reader"),
            reading if not reading.done() else asyncio.create_task(bus._read_pubsub(), name="pub/sub"),
            asyncio.create_task(bus._heartbeat(), name="redis bus heartbeat"),
        ]
        bus._wake.set()

        def old_ones_stopped() -> bool:
            return all(actor.epoch != old.get(table_id) for table_id, actor in host.actors.items())

        await wait_until(old_ones_stopped, 20, "the older openings to stop")
        run, finished = await playing
        assert finished, run.report(finished)
        assert coordinator.director.status.value == "finished"
        await _check_money(cluster.stores[1], "stall")
        hands = await cluster.stores[1].histories.by_tournament("stall")
        numbers = [hand.hand_number for hand in hands]
        assert len(numbers) == len(set(numbers)), "no hand stored twice"
