"""A table host (``server.table_host``, ``feltd serve --shard-tables``) on the in-process bus:
which opening of a table its messages reach, and when it stops the actors it holds."""

from __future__ import annotations

import asyncio

import pytest
from server_harness import wait_until

from engine.table import Table
from server.app import FeltServer, Role
from server.bus import LocalBus
from server.cli import serve
from server.cli.exits import CommandError
from server.cli.main import build_parser
from server.clock import ScaledClock
from server.messages import (
    DropTables,
    OpenTable,
    TableUpdate,
    ToTable,
    table_host_inbox,
    table_inbox,
    tournament_inbox,
)
from server.table_host import TableHost


def _seats(table_id: int, *players: str) -> TableUpdate:
    table = Table(table_id=table_id)
    for seat, player in enumerate(players, 1):
        table.seat_player(seat, player, 1500)
    return TableUpdate(table.snapshot())


async def test_a_host_passes_a_message_to_the_opening_it_names_only() -> None:
    bus = LocalBus()
    bus.open_inbox(tournament_inbox("t"), 100)
    host = TableHost(bus, ScaledClock(50.0), host_id="h1", check_seconds=0.02)
    running = asyncio.create_task(host.run())
    try:
        address = table_host_inbox("h1")
        bus.send(address, OpenTable(5, "t", 1, 0, 15.0))
        await wait_until(lambda: bus.has_inbox(table_inbox(5)), 5, "table 5 open")
        bus.send(address, ToTable(5, 0, _seats(5, "old", "older")))  # another opening's
        bus.send(address, ToTable(5, 1, _seats(5, "ann", "bob")))
        first = host.actors[5]
        await wait_until(lambda: first.table is not None, 5, "the seats")
        assert first.table is not None and [s.player for s in first.table.players] == ["ann", "bob"]

        bus.send(address, OpenTable(5, "t", 3, 1000, 15.0))  # opened again: the older one stops
        await wait_until(lambda: host.actors.get(5) is not first and 5 in host.actors, 5, "the new opening")
        second = host.actors[5]
        assert second.epoch == 3 and second.seq == 1000 and bus.has_inbox(table_inbox(5))
        bus.send(address, OpenTable(5, "t", 2, 0, 15.0))  # a late order for an older opening
        bus.send(address, ToTable(5, 1, _seats(5, "carl", "dan")))
        bus.send(address, ToTable(5, 3, _seats(5, "eve", "fay")))
        await wait_until(lambda: second.table is not None, 5, "the new opening's seats")
        assert host.actors[5] is second
        assert second.table is not None and [s.player for s in second.table.players] == ["eve", "fay"]

        bus.send(address, OpenTable(6, "t", 4, 0, 15.0))
        bus.send(address, OpenTable(7, "u", 1, 0, 15.0))
        await wait_until(lambda: {6, 7} <= set(host.actors), 5, "tables 6 and 7")
        bus.send(address, DropTables("t", 4))  # a takeover: t's openings before 4 stop
        await wait_until(lambda: 5 not in host.actors, 5, "table 5 to stop")
        assert sorted(host.actors) == [6, 7] and not bus.has_inbox(table_inbox(5))
    finally:
        running.cancel()
        await asyncio.wait([running])
        await host.close()
    assert host.actors == {} and not bus.has_inbox(table_host_inbox("h1"))


async def test_a_host_stops_the_tables_of_a_tournament_whose_coordinator_is_gone() -> None:
    bus = LocalBus()
    bus.open_inbox(tournament_inbox("t"), 100)
    bus.open_inbox(tournament_inbox("u"), 100)
    host = TableHost(bus, ScaledClock(50.0), host_id="h2", check_seconds=0.02)
    running = asyncio.create_task(host.run())
    try:
        bus.send(table_host_inbox("h2"), OpenTable(1, "t", 1, 0, 15.0))
        bus.send(table_host_inbox("h2"), OpenTable(2, "u", 1, 0, 15.0))
        await wait_until(lambda: set(host.actors) == {1, 2}, 5, "both tables")
        bus.close_inbox(tournament_inbox("t"))  # t's worker died
        await wait_until(lambda: 1 not in host.actors, 5, "t's table to stop")
        assert not bus.has_inbox(table_inbox(1))
        assert set(host.actors) == {2}, "u's coordinator lives: its table plays on"
    finally:
        running.cancel()
        await asyncio.wait([running])
        await host.close()


def test_only_a_worker_hosts_tables() -> None:
    with pytest.raises(ValueError, match="hosts no tables"):
        FeltServer(None, role=Role.GATEWAY, bus=LocalBus(), shard_tables=True)  # type: ignore[arg-type]
    for role in ("all", "gateway"):
        args = build_parser().parse_args(
            ["serve", "--role", role, "--redis-url", "redis://x", "--shard-tables"]
        )
        with pytest.raises(CommandError, match="--shard-tables is for --role worker"):
            serve.run(args)
