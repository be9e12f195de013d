"""A table actor on the in-process bus: the order in which its inbox may receive things."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace

from engine.table import Table
from engine.tournament.director import DealHand
from protocol.kinds import SeatChange, TableStatus
from protocol.server_messages import TableSnapshot
from server.bus import LocalBus
from server.clock import ScaledClock
from server.messages import (
    Caller,
    Deal,
    Follow,
    Resync,
    TableFrames,
    TableUpdate,
    session_channel,
    table_channel,
    table_inbox,
)
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


async def test_a_message_the_table_cannot_take_is_dropped_and_the_table_goes_on() -> None:
    """One bad message (here a deal whose setup the hand engine refuses) used to end the table's
    task, and the table never dealt again. It is now logged and dropped: the next deal is dealt."""
    bus = LocalBus()
    actor = TableActor(7, "t", bus, ScaledClock(50.0), shot_clock=15, hand_gap=0.0)
    frames: list[TableFrames] = []
    bus.subscribe(
        table_channel(7), lambda message: frames.append(message) if isinstance(message, TableFrames) else None
    )
    running = asyncio.create_task(actor.run())
    table = Table(table_id=7)
    table.seat_player(1, "ann", 1500)
    table.seat_player(4, "bob", 1500)
    bus.send(table_inbox(7), TableUpdate(table.snapshot()))
    table.draw_button(random.Random(3))
    setup = table.start_hand("t-1", 10, 20)
    refused = replace(setup, seats=setup.seats[:1])  # one player: no hand can be played
    bus.send(table_inbox(7), Deal(DealHand(7, 1, refused, 1, False, 15, ()), table.snapshot()))
    await asyncio.sleep(0.1)
    assert not running.done(), running.exception() if running.done() else None
    assert actor.hand is None
    bus.send(table_inbox(7), Deal(DealHand(7, 2, setup, 1, False, 15, ((1, 2), (4, 2))), table.snapshot()))
    await asyncio.sleep(0.1)
    assert not running.done(), running.exception() if running.done() else None
    assert actor.hand is not None and actor.hand_views is not None and actor.hand_views.hand_number == 2
    assert frames, "the second deal was published"
    bus.send(table_inbox(7), TableUpdate(table.snapshot(), closed=True))
    await asyncio.wait_for(running, 5)
