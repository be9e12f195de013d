"""The operations desk with several workers (issue 15): one answers ``OPERATIONS`` at a time, the
holder of the desk's lease, and another takes it up when that one stops; a change to a
tournament another worker runs (a delete) is made by that worker, whose coordinator it stops;
a tournament's own requests reach its coordinator wherever it runs. Three workers and a gateway
in one loop, each on a Redis bus of its own."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid

import redis.asyncio as aioredis
from server_harness import tournament_toml

from protocol import operator_requests as op
from protocol import server_messages as sm
from server.app import FeltServer, Role
from server.cli.bots import Control
from server.clock import ScaledClock
from server.lease import Leases
from server.messages import OPERATIONS
from server.redis_bus import RedisBus
from server.store.connection import open_store
from server.store.databases import create_database, drop_database
from server.store.tournaments import TournamentStatus


async def test_one_worker_runs_the_desk_and_a_change_goes_to_the_worker_running_the_tournament(
    postgres_server_url: str, redis_url: str, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:8]}"
    buses = [RedisBus(redis_url, prefix=prefix) for _ in range(4)]
    for bus in buses:
        await bus.start()
    database = await create_database(postgres_server_url, f"feltd_test_desk_{uuid.uuid4().hex[:8]}")
    clock = ScaledClock(1.0)
    try:
        async with open_store(database, max_size=8) as store:
            workers = [
                FeltServer(
                    store,
                    clock=clock,
                    role=Role.WORKER,
                    bus=buses[n],
                    poll_seconds=3600,  # the test says when each looks for work
                    leases=Leases(redis_client, owner=f"w{n}", ttl=2.0, prefix=f"{prefix}:"),
                )
                for n in range(3)
            ]
            for worker in workers:
                await worker.start("127.0.0.1", 0)
            gateway = FeltServer(store, clock=clock, role=Role.GATEWAY, bus=buses[3])
            await gateway.start("127.0.0.1", 0)
            control: Control | None = None
            try:
                assert [worker._desk is not None for worker in workers] == [True, False, False]
                start = dt.datetime.fromtimestamp(clock.now() + 3600, dt.UTC)
                await store.tournaments.create_from_toml(tournament_toml("away", players=9), starts_at=start)
                assert await workers[1].load() == ["away"]
                async with asyncio.timeout(10):
                    while not buses[3].has_inbox("tournament:away") or not buses[3].has_inbox(OPERATIONS):
                        await asyncio.sleep(0.01)
                operator = await store.players.add_operator("desk-test")
                control = Control(gateway.url, operator.token)
                await control.start()

                shown = await control.request(op.OpTournamentShow(request_id="show", tournament_id="away"))
                assert isinstance(shown, sm.OpTournament) and shown.tournament.tournament_id == "away"

                # the desk (w0) passes it to w1, which stops its coordinator: not w0 marking it
                # cancelled in the store while w1 plays on
                deleted = await control.request(op.OpTournamentDelete(request_id="del", tournament_id="away"))
                assert isinstance(deleted, sm.Ack), deleted
                assert "away" not in workers[1].coordinators
                assert (await store.tournaments.get("away")).status is TournamentStatus.CANCELLED

                await workers[0].stop()  # gives the desk's lease back
                await workers[2]._take_desk()
                await workers[1]._take_desk()
                assert workers[2]._desk is not None and workers[1]._desk is None
                async with asyncio.timeout(10):
                    while buses[3]._remote.get(OPERATIONS) != buses[2].process_id:
                        await asyncio.sleep(0.01)
                listed = await control.request(op.OpTournamentList(request_id="list"))
                assert isinstance(listed, sm.OpTournaments)
                assert [t.tournament_id for t in listed.tournaments] == ["away"]
            finally:
                if control is not None:
                    await control.close()
                await gateway.stop()
                for worker in workers:
                    await worker.stop()
    finally:
        for bus in buses:
            await bus.close()
        await drop_database(postgres_server_url, database)
