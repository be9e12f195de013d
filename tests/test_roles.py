"""`feltd serve --role gateway|worker` (issue 15): a gateway that holds the connections and a
worker that runs the tournaments, two processes sharing Redis and PostgreSQL; bots play a whole
tournament through the gateway and the ledger still balances."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import random
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from processes import feltd_command, free_port, http_get
from server_harness import tournament_toml

from client.bot import Chaos
from client.think import Fixed
from server.app import FeltServer, Role
from server.cli.bots import BotsRun
from server.clock import ScaledClock
from server.redis_bus import RedisBus
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database


@contextlib.asynccontextmanager
async def _database(postgres_server_url: str) -> AsyncIterator[tuple[str, Store]]:
    url = await create_database(postgres_server_url, f"feltd_test_roles_{uuid.uuid4().hex[:8]}")
    try:
        async with open_store(url, max_size=4) as store:
            yield url, store
    finally:
        await drop_database(postgres_server_url, url)


async def _forget(redis_url: str, prefix: str) -> None:
    client = aioredis.from_url(redis_url)
    keys = [key async for key in client.scan_iter(match=prefix + "*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()


async def _play(url: str, store: Store, count: int, name: str) -> dict[str, object]:
    run = BotsRun(url, store)
    try:
        toml = tournament_toml(name, players=count, table_size=6, level_minutes=1)
        await run.prepare(count, tournament_id=None, toml=toml, kind="tag,station,random", prefix=name)
        finished = await run.play(think=Fixed(0.0), chaos=Chaos(), seed=4, deadline=120)
    finally:
        await run.close()
    assert finished, "every bot played to the end"
    report = run.report(finished)
    assert report["errors"] == {}, report["errors"]
    return report


async def _ledger_balances(store: Store) -> None:
    check = await store.ledger.check(None)
    assert check.ok, check.problems
    assert check.transactions > 0


@contextlib.asynccontextmanager
async def _process(*arguments: str) -> AsyncIterator[asyncio.subprocess.Process]:
    process = await asyncio.create_subprocess_exec(
        *feltd_command(), "serve", *arguments, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()


async def _line(process: asyncio.subprocess.Process, start: str) -> str:
    """The first line of its output starting with ``start`` (its errors, if it ends first)."""
    assert process.stdout is not None and process.stderr is not None
    async with asyncio.timeout(30):
        while True:
            line = (await process.stdout.readline()).decode()
            if not line:
                raise AssertionError((await process.stderr.read()).decode()[-3000:])
            if line.startswith(start):
                return line


async def test_bots_play_a_tournament_through_a_gateway_process_and_a_worker_process(
    postgres_server_url: str, redis_url: str, redis_prefix: str
) -> None:
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:8]}"
    port = free_port()
    common = ("--speed", "100", "--redis-url", redis_url, "--redis-prefix", prefix)
    try:
        async with _database(postgres_server_url) as (database_url, store):
            store_flags = ("--database-url", database_url)
            worker_port = ("--port", str(free_port()))
            async with _process("--role", "worker", *worker_port, *common, *store_flags) as worker:
                health = await _line(worker, "feltd worker health: ")
                assert await http_get(health.split()[-1]) == "ok\n"
                await _line(worker, "tournaments loaded")
                listen = ("--port", str(port))
                async with _process("--role", "gateway", *listen, *common, *store_flags) as gateway:
                    await _line(gateway, "feltd serving on")
                    report = await _play(f"ws://127.0.0.1:{port}/", store, 6, "split")
                    tournament = report["tournament"]
                    assert isinstance(tournament, dict)
                    assert tournament["status"] == "finished", tournament
                    prizes = sum(tournament["prizes_by_kind_cents"].values())
                    assert prizes == tournament["prize_pool_cents"] > 0, tournament
                    assert gateway.returncode is None and worker.returncode is None
            assert worker.returncode == 0 and gateway.returncode == 0
            await _ledger_balances(store)
    finally:
        await _forget(redis_url, prefix)


async def test_a_gateway_and_a_worker_in_one_loop(
    postgres_server_url: str, redis_url: str, redis_prefix: str
) -> None:
    """The same split with both servers in this process, each on a bus of its own: a gateway has
    no coordinators, a worker no port, and the gateway knows the worker's tournaments."""
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:8]}"
    buses = [RedisBus(redis_url, prefix=prefix), RedisBus(redis_url, prefix=prefix)]
    for bus in buses:
        await bus.start()
    try:
        async with _database(postgres_server_url) as (_, store):
            clock = ScaledClock(100.0)
            worker = FeltServer(
                store,
                clock=clock,
                role=Role.WORKER,
                bus=buses[0],
                director_rng=lambda _: random.Random(3),
                table_rng=lambda table: random.Random(table),
            )
            gateway = FeltServer(store, clock=clock, role=Role.GATEWAY, bus=buses[1])
            await worker.start("127.0.0.1", 0)
            await gateway.start("127.0.0.1", 0)
            try:
                assert "feltd_tournaments" in await http_get(f"http://127.0.0.1:{worker.port}/metrics")
                assert worker.gateway is None and gateway.coordinators == {}
                report = await _play(gateway.url, store, 4, "inloop")
                assert report["tournament"]["status"] == "finished"  # type: ignore[index]
                assert gateway.coordinators == {} and "inloop" in worker.coordinators
            finally:
                await gateway.stop()
                await worker.stop()
            await _ledger_balances(store)
    finally:
        for bus in buses:
            await bus.close()
        await _forget(redis_url, prefix)


async def test_a_gateway_started_after_the_worker_knows_the_lobby_and_the_tournaments(
    postgres_server_url: str, redis_url: str, redis_prefix: str
) -> None:
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:8]}"
    buses = [RedisBus(redis_url, prefix=prefix), RedisBus(redis_url, prefix=prefix)]
    for bus in buses:
        await bus.start()
    try:
        async with _database(postgres_server_url) as (_, store):
            clock = ScaledClock(1.0)
            start = dt.datetime.fromtimestamp(clock.now() + 3600, dt.UTC)
            await store.tournaments.create_from_toml(tournament_toml("early", players=9), starts_at=start)
            worker = FeltServer(store, clock=clock, role=Role.WORKER, bus=buses[0])
            await worker.start("127.0.0.1", 0)
            gateway = FeltServer(store, clock=clock, role=Role.GATEWAY, bus=buses[1])
            await gateway.start("127.0.0.1", 0)
            try:
                assert gateway.gateway is not None
                lobby = gateway.gateway.lobby
                assert gateway._tournaments() == ["early"]
                async with asyncio.timeout(10):
                    while "early" not in lobby:
                        await asyncio.sleep(0.01)
                assert lobby["early"].status.value == "registering"
            finally:
                await gateway.stop()
                await worker.stop()
    finally:
        for bus in buses:
            await bus.close()
        await _forget(redis_url, prefix)


def test_a_split_role_needs_a_bus_and_redis(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs a bus"):
        FeltServer(None, role=Role.GATEWAY)  # type: ignore[arg-type]
