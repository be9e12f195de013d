"""``feltd serve`` in one object: the store, the bus, the gateway, a coordinator per tournament.

``FeltServer.start`` loads the tournaments the store lists as announced or registering, opens
their registration and starts a coordinator for each (it starts play at the scheduled time), and
keeps looking for new ones (``feltd admin tournament create`` writes them while the server runs)
every ``poll_seconds``. ``stop`` says goodbye to every connection and stops the coordinators.
Everything waits on the injected ``Clock``: a test runs a tournament at many times real speed.

Its ``role`` (issue 15): ``all`` is the whole server in one process over a ``LocalBus``; a
``gateway`` holds client connections only (no coordinators: the tournaments it knows are those
whose inboxes the bus's directory lists), a ``worker`` runs the coordinators, their tables and
the operations desk and takes no client (its port answers ``/healthz`` and ``/metrics`` only).
Gateways and workers share a bus between processes (``server.redis_bus``), started and closed by
whoever made it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable
from dataclasses import replace
from enum import StrEnum
from functools import partial

from engine.tournament.config import ConfigError, parse_config
from engine.tournament.director import Status
from server.bus import Bus, BusError, LocalBus
from server.clock import Clock, RealClock
from server.coordinator import RESUME_LIMIT_SECONDS, SNAPSHOT_EVERY, Coordinator, Stop
from server.gateway import Gateway, Limits
from server.health import serve_health
from server.messages import LobbyAsk, tournament_inbox, tournament_of_inbox
from server.metrics import Metrics
from server.operations import OperationsDesk
from server.store.connection import Store
from server.store.errors import StoreError
from server.store.tournaments import Tournament, TournamentStatus

log = logging.getLogger("feltd.server")

POLL_SECONDS = 2.0


class Role(StrEnum):
    ALL = "all"  # today's single process
    GATEWAY = "gateway"  # client connections, relayed over the bus
    WORKER = "worker"  # coordinators, tables and the operations desk


class FeltServer:
    """One feltd server process (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock | None = None,
        poll_seconds: float = POLL_SECONDS,
        director_rng: Callable[[str], random.Random | None] | None = None,
        table_rng: Callable[[int], random.Random | None] | None = None,
        hand_gap: float | None = None,
        heartbeat_seconds: int = 20,
        journal: bool = False,
        resume_limit: float = RESUME_LIMIT_SECONDS,
        snapshot_every: int = SNAPSHOT_EVERY,
        limits: Limits | None = None,
        role: Role = Role.ALL,
        bus: Bus | None = None,
    ) -> None:
        """``director_rng(tournament_id)`` and ``table_rng(table_id)`` give seeded generators in
        tests (``None``, the default: the OS CSPRNG); ``hand_gap`` overrides the pause between
        hands (clock seconds); ``limits``: what clients may cost (``gateway.Limits``), its
        ``rate_per_second`` counted in the game clock's seconds. ``role``: see the module docstring;
        a gateway or a worker needs ``bus``, one shared with the other processes."""
        if role is not Role.ALL and bus is None:
            raise ValueError(f"a {role} needs a bus shared with the other processes")
        self.role = role
        self.store = store
        self.clock: Clock = clock if clock is not None else RealClock()
        self.bus: Bus = bus if bus is not None else LocalBus()
        self.metrics = Metrics()
        self.poll_seconds = poll_seconds
        self.director_rng = director_rng
        self.table_rng = table_rng
        self.hand_gap = hand_gap
        self.journal = journal  # coordinators note every director input (tests replay them)
        self.resume_limit = resume_limit  # a tournament down longer is settled by CANCEL-1
        self.snapshot_every = snapshot_every  # journal entries between two director snapshots
        self.coordinators: dict[str, Coordinator] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        limits = limits if limits is not None else Limits()
        speed = max(1.0, getattr(self.clock, "speed", 1.0))
        self.gateway: Gateway | None = None
        if role is not Role.WORKER:
            self.gateway = Gateway(
                store,
                self.bus,
                self.clock,
                self.metrics,
                tournaments=self._tournaments,
                heartbeat_seconds=heartbeat_seconds,
                # the rate limit is per second of the game's clock: faster clock, faster players
                limits=replace(limits, rate_per_second=limits.rate_per_second * speed),
            )
        self._poller: asyncio.Task[None] | None = None
        self._desk: asyncio.Task[None] | None = None
        self._health: asyncio.Server | None = None  # a worker's /healthz and /metrics
        self.host = ""
        self.port = 0

    async def start(self, host: str = "127.0.0.1", port: int = 8765) -> None:
        """Load the tournaments and listen on ``host:port`` (what the role has of both)."""
        if self.role is not Role.GATEWAY:
            self._desk = asyncio.create_task(OperationsDesk(self).run(), name="operations desk")
            await self.load()
        if self.gateway is not None:
            sockets = list((await self.gateway.start(host, port)).sockets)
        else:
            self._health = await serve_health(host, port, self.metrics)
            sockets = list(self._health.sockets)
        self.host, self.port = sockets[0].getsockname()[:2] if sockets else (host, port)
        if self.role is not Role.GATEWAY:
            self._poller = asyncio.create_task(self._poll(), name="tournament poller")
        else:
            # the lobby is what coordinators publish: a gateway started after them asks for it
            for tournament_id in self._tournaments():
                with contextlib.suppress(BusError):
                    self.bus.send(tournament_inbox(tournament_id), LobbyAsk())

    def _tournaments(self) -> list[str]:
        """The tournaments whose coordinators run: here, or (a gateway) in any worker."""
        if self.role is Role.GATEWAY:
            return sorted(
                tournament
                for tournament in map(tournament_of_inbox, self.bus.addresses())
                if tournament is not None
            )
        return sorted(self.coordinators)

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}/"

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            try:
                await self.load()
            except StoreError as error:
                log.warning("looking for new tournaments failed: %s", error)

    async def load(self) -> list[str]:
        """Start a coordinator for every announced or registering tournament not yet running here;
        returns the ids started."""
        started = []
        for record in await self.store.tournaments.all():
            if record.id in self.coordinators:
                continue
            if record.status in (
                TournamentStatus.ANNOUNCED,
                TournamentStatus.REGISTERING,
                TournamentStatus.RUNNING,
            ) and await self._start(record):
                started.append(record.id)
        self.metrics.tournaments = len(self.coordinators)
        return started

    async def _start(self, record: Tournament) -> bool:
        try:
            config = parse_config(record.config_toml)
        except ConfigError as error:
            log.error("tournament %s: its configuration is refused: %s", record.id, error)
            return False
        start_at = record.starts_at.timestamp() if record.starts_at is not None else self.clock.now()
        coordinator = Coordinator(
            config,
            name=record.name,
            number=record.number,
            start_at=start_at,
            store=self.store,
            bus=self.bus,
            clock=self.clock,
            metrics=self.metrics,
            rng=None if self.director_rng is None else self.director_rng(record.id),
            table_rng=self.table_rng,
            hand_gap=self.hand_gap,
            journal=self.journal,
            toml=record.config_toml,
            snapshot_every=self.snapshot_every,
        )
        # A tournament with a journal was running here before (a crash, a restart): it resumes
        # from its saved director; a new one starts with its first snapshot.
        last_alive = await coordinator.restore()
        if last_alive is not None:
            await coordinator.resume(last_alive, self.resume_limit)
            log.info(
                "tournament %s resumed from snapshot %s and %d inputs after it",
                record.id,
                coordinator.resumed_from,
                coordinator.seq - (coordinator.resumed_from or 0),
            )
            if coordinator.director.status not in (Status.REGISTERING, Status.RUNNING):
                await coordinator.close()
                return False
        elif record.status is TournamentStatus.RUNNING:
            log.error("tournament %s is running but has no saved director: it cannot be resumed", record.id)
            await coordinator.close()
            return False
        else:
            await coordinator.save_first_snapshot()
            if record.status is TournamentStatus.ANNOUNCED:
                await self.store.tournaments.set_status(record.id, TournamentStatus.REGISTERING)
        self.coordinators[record.id] = coordinator
        coordinator.publish_lobby()
        task = asyncio.create_task(coordinator.run(), name=f"tournament {record.id}")
        self.tasks[record.id] = task
        task.add_done_callback(partial(self._ended, record.id))
        log.info("tournament %s (%s) loaded, starts at %s", record.id, record.name, start_at)
        return True

    def _ended(self, tournament_id: str, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("tournament %s stopped: %r", tournament_id, task.exception())

    async def drop(self, tournament_id: str) -> None:
        """Stop a tournament's coordinator and forget it (its definition is about to change or
        it is deleted); nothing of it was under way (no entrants: the caller checks)."""
        coordinator = self.coordinators.pop(tournament_id, None)
        task = self.tasks.pop(tournament_id, None)
        if coordinator is None:
            return
        if task is not None and not task.done():
            with contextlib.suppress(BusError):
                self.bus.send(tournament_inbox(tournament_id), Stop())
            try:
                await asyncio.wait_for(asyncio.shield(task), 5.0)
            except TimeoutError:
                task.cancel()
        await coordinator.close()
        self.metrics.tournaments = len(self.coordinators)

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
        if self._desk is not None:
            self._desk.cancel()
        if self.gateway is not None:
            await self.gateway.stop()
        if self._health is not None:
            self._health.close()
            await self._health.wait_closed()
        for tournament_id, coordinator in self.coordinators.items():
            if not coordinator.finished.is_set():
                with contextlib.suppress(BusError):  # a full inbox: the task is cancelled below
                    self.bus.send(tournament_inbox(tournament_id), Stop())
        for task in self.tasks.values():
            if not task.done():
                try:
                    await asyncio.wait_for(asyncio.shield(task), 5.0)
                except TimeoutError:
                    task.cancel()
        for coordinator in self.coordinators.values():
            await coordinator.close()

    async def wait_finished(self, tournament_id: str) -> None:
        """Until the tournament is over (finished or cancelled)."""
        await self.coordinators[tournament_id].finished.wait()
