"""A table actor on the in-process bus: the order in which its inbox may receive things."""

from __future__ import annotations

import asyncio

from engine.table import Table
from protocol.kinds import SeatChange, TableStatus
from protocol.server_messages import TableSnapshot
from server.bus import LocalBus
from server.clock import ScaledClock
from server.messages import Caller, Follow, Resync, TableUpdate, session_channel, table_inbox
from server.table_actor import TableActor


async def test_a_follower_who_comes_before_the_first_seats_gets_its_snapshot_when_they_come() -> None:
    """A client may join a table as soon as its inbox exists, before the coordinator's first
    update: the table used to raise on that follow (no seats, no hand to snapshot) and die. It now
    answers once the seats arrive, and goes on."""
    bus = LocalBus()
    actor = TableActor(7, "t", bus, ScaledClock(50.0), shot_clock=15)
    answers: list[Resync] = []
    bus.subscribe(session_channel("s-1"), lambda message: answers.append(message))  # type: ignore[arg-type]
    running = asyncio.create_task(actor.run())
    bus.send(table_inbox(7), Follow(Caller("s-1", None), None, None))
    await asyncio.sleep(0.05)
    assert not running.done(), running.exception() if running.done() else None
    assert answers == [], "nothing to show before the seats"
    table = Table(table_id=7)
    table.seat_player(1, "ann", 1500)
    table.seat_player(4, "bob", 1500)
    update = TableUpdate(table.snapshot(), changes=((1, SeatChange.JOINED), (4, SeatChange.JOINED)))
    bus.send(table_inbox(7), update)
    await asyncio.sleep(0.05)
    assert len(answers) == 1 and len(answers[0].frames) == 1, answers
    snapshot = answers[0].frames[0]
    assert isinstance(snapshot, TableSnapshot) and snapshot.seq == 2, snapshot
    assert [seat.player for seat in snapshot.seats] == ["ann", "bob"]
    bus.send(table_inbox(7), Follow(Caller("s-1", None), None, None))  # and later ones, at once
    bus.send(table_inbox(7), TableUpdate(table.snapshot(), closed=True))
    await asyncio.wait_for(running, 5)
    assert len(answers) == 2 and answers[1].frames[0].status is TableStatus.IDLE  # type: ignore[union-attr]
