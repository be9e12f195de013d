"""A worker's table host (``feltd serve --shard-tables``, issue 15): the table actors that
coordinators, in this process or another, open here.

One tournament's tables need not live where its coordinator does: a 300,000-player tournament
has some 33,000 of them. A table actor talks only over the bus and never writes to the store,
so it can live anywhere; the host is what places it. It reads one inbox,
``table_host_inbox(host_id)``, which the bus's directory lists for every coordinator to see
(a dead process's addresses leave the directory: its tables are lost, and their coordinator
opens them again elsewhere):

- ``OpenTable``: start that table's actor here (an older opening of the same table still here
  is stopped first);
- ``ToTable``: a coordinator's message for one of them, passed to the actor of that opening only
  (one for an older opening is dropped);
- ``DropTables``: stop a tournament's actors older than an epoch (a coordinator that took the
  tournament over opens them again).

A tournament whose coordinator's inbox has been gone from the directory for
``ORPHAN_CHECKS`` checks in a row (its worker died and nobody took it up) has its actors here
stopped: whoever takes the tournament up deals their hands again, and they must not play on
beside the new ones.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections.abc import Callable

from server.bus import Bus, BusError
from server.clock import Clock
from server.messages import DropTables, OpenTable, ToTable, table_host_inbox, tournament_inbox
from server.metrics import Metrics
from server.table_actor import TableActor

log = logging.getLogger("feltd.table_host")

INBOX_CAPACITY = 100_000
CHECK_SECONDS = 1.0  # wall seconds between two looks for tournaments whose coordinator is gone
# looks in a row without the coordinator before its tables here are stopped: longer than a lease
# (feltd serve --lease-ttl, 10 s), so that a coordinator that only stalled has lost its lease
# (and is fenced out) before its tables go; a takeover stops them sooner (DropTables)
ORPHAN_CHECKS = 15
STOP_WAIT_SECONDS = 5.0


class TableHost:
    """The table actors this process hosts (see the module docstring). ``run`` until cancelled,
    then ``close``."""

    def __init__(
        self,
        bus: Bus,
        clock: Clock,
        *,
        metrics: Metrics | None = None,
        table_rng: Callable[[int], random.Random | None] | None = None,
        host_id: str | None = None,
        check_seconds: float = CHECK_SECONDS,
    ) -> None:
        self.bus = bus
        self.clock = clock
        self.metrics = metrics
        self.table_rng = table_rng
        self.host_id = host_id if host_id is not None else uuid.uuid4().hex[:16]
        self.check_seconds = check_seconds
        self.inbox = bus.open_inbox(table_host_inbox(self.host_id), INBOX_CAPACITY)
        self.actors: dict[int, TableActor] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.opened = 0  # tables opened here since the start
        self._missing: dict[str, int] = {}  # tournament -> looks in a row without its coordinator

    @property
    def address(self) -> str:
        return self.inbox.address

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        next_check = loop.time() + self.check_seconds
        while True:
            message = self.inbox.get_nowait()
            if message is None:
                wait = max(0.0, next_check - loop.time())
                message = await self.inbox.get(within=wait)
            if message is not None:
                try:
                    await self._handle(message)
                except Exception:
                    log.exception("table host: %s refused", type(message).__name__)
            if loop.time() >= next_check:
                next_check = loop.time() + self.check_seconds
                await self._stop_orphans()

    async def _handle(self, message: object) -> None:
        if isinstance(message, ToTable):
            actor = self.actors.get(message.table_id)
            if actor is None or actor.epoch != message.epoch:
                return  # for an opening stopped since (or never opened here): nobody to tell
            try:
                actor.inbox.put(message.message)
            except BusError as error:
                log.error("table %s: %s", message.table_id, error)
        elif isinstance(message, OpenTable):
            await self._open(message)
        elif isinstance(message, DropTables):
            older = [
                table_id
                for table_id, actor in self.actors.items()
                if actor.tournament_id == message.tournament_id and actor.epoch < message.epoch
            ]
            if older:
                log.info(
                    "table host: %s taken over: its %d older tables here stop",
                    message.tournament_id,
                    len(older),
                )
            for table_id in older:
                await self._stop(table_id)
        else:
            log.warning("table host: ignored %r", type(message).__name__)

    async def _open(self, order: OpenTable) -> None:
        old = self.actors.get(order.table_id)
        if old is not None:
            if old.epoch >= order.epoch:
                return  # a late order for an opening older than the one here
            await self._stop(order.table_id)
        actor = TableActor(
            order.table_id,
            order.tournament_id,
            self.bus,
            self.clock,
            seq_from=order.seq_from,
            shot_clock=order.shot_clock,
            rng=None if self.table_rng is None else self.table_rng(order.table_id),
            metrics=self.metrics,
            epoch=order.epoch,
            **({} if order.hand_gap is None else {"hand_gap": order.hand_gap}),
        )
        self.actors[order.table_id] = actor
        self.opened += 1
        if self.metrics is not None:
            self.metrics.tables += 1
        task = asyncio.create_task(self._play(actor), name=f"hosted table {order.table_id}")
        self.tasks[order.table_id] = task

    async def _play(self, actor: TableActor) -> None:
        try:
            await actor.run()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("table %s failed", actor.table_id)
        finally:
            if self.actors.get(actor.table_id) is actor:
                del self.actors[actor.table_id]
                self.tasks.pop(actor.table_id, None)
            if self.metrics is not None:
                self.metrics.tables -= 1

    async def _stop(self, table_id: int) -> None:
        """Stop the actor at once, mid-hand or not, telling nobody (its hand is dealt again by its
        coordinator); wait for it to give up its address before another opens it."""
        self.actors.pop(table_id, None)
        task = self.tasks.pop(table_id, None)
        if task is None:
            return
        task.cancel()
        await asyncio.wait([task], timeout=STOP_WAIT_SECONDS)

    async def _stop_orphans(self) -> None:
        tournaments = {actor.tournament_id for actor in self.actors.values()}
        for tournament in list(self._missing):
            if tournament not in tournaments:
                del self._missing[tournament]
        for tournament in sorted(tournaments):
            if self.bus.has_inbox(tournament_inbox(tournament)):
                self._missing.pop(tournament, None)
                continue
            self._missing[tournament] = self._missing.get(tournament, 0) + 1
            if self._missing[tournament] < ORPHAN_CHECKS:
                continue
            del self._missing[tournament]
            orphans = sorted(t for t, actor in self.actors.items() if actor.tournament_id == tournament)
            log.warning(
                "table host: the coordinator of %s is gone: its %d tables here stop", tournament, len(orphans)
            )
            for table_id in orphans:
                await self._stop(table_id)

    async def close(self) -> None:
        """Stop every actor and give up the host's address."""
        self.bus.close_inbox(self.inbox.address)
        for table_id in list(self.tasks):
            await self._stop(table_id)


__all__ = ["TableHost"]
