"""``feltd serve`` in one object: the store, the bus, the gateway, a coordinator per tournament.

``FeltServer.start`` loads the tournaments the store lists as announced or registering, opens
their registration and starts a coordinator for each (it starts play at the scheduled time), and
keeps looking for new ones (``feltd admin tournament create`` writes them while the server runs)
every ``poll_seconds``. ``stop`` says goodbye to every connection and stops the coordinators.
A tournament over (finished or cancelled) keeps its coordinator for ``keep_finished_seconds``
(real seconds, for the late questions about it); the poller then forgets it, and what operators
ask about it is read from the store, as after a restart.
Everything waits on the injected ``Clock``: a test runs a tournament at many times real speed.

Its ``role`` (issue 15): ``all`` is the whole server in one process over a ``LocalBus``; a
``gateway`` holds client connections only (no coordinators: the tournaments it knows are those
whose inboxes the bus's directory lists), a ``worker`` runs the coordinators, their tables and
the operations desk and takes no client (its port answers ``/healthz`` and ``/metrics`` only).
With leases, one worker at a time, the holder of the desk's lease, reads ``OPERATIONS`` (another
takes it up when it dies); each also reads its own ``desk_inbox``, where that desk passes the
changes to a tournament this worker runs (a definition edited, a tournament deleted).
Gateways and workers share a bus between processes (``server.redis_bus``), started and closed by
whoever made it.

Given ``leases`` (``server.lease``: several workers share one PostgreSQL and one Redis), a server
runs a tournament only while it holds the tournament's lease: it acquires it before starting a
coordinator, claims the lease's fencing token in PostgreSQL before the coordinator reads the
journal or writes anything, renews every lease a third of the TTL apart, and gives them back on
``stop``. A renewal refused (the lease expired, maybe taken) or a write refused as fenced out
stops that coordinator and its tables at once; the tournament goes on wherever its lease is
taken next: a free lease (its worker died, its TTL ran out) is acquired by another worker's next
poll, which restores the tournament from its journal as after a restart (CRASH-1).

With ``shard_tables`` (``feltd serve --shard-tables``, issue 15), a worker also hosts tables
(``server.table_host``: its inbox in the bus's directory) and its coordinators place their tables
on the hosts of every such worker instead of playing them in their own process: one tournament's
tables spread over the cluster, and a worker that dies loses its tables, not the tournaments.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import replace
from enum import StrEnum
from functools import partial

import asyncpg
from redis.exceptions import RedisError

from engine.tournament.config import ConfigError, TournamentConfig, parse_config
from engine.tournament.director import Status
from server.bus import Bus, BusError, LocalBus
from server.clock import Clock, RealClock
from server.coordinator import RESUME_LIMIT_SECONDS, SNAPSHOT_EVERY, Coordinator, Stop
from server.gateway import Gateway, Limits
from server.health import serve_health
from server.lease import Lease, Leases
from server.messages import OPERATIONS, LobbyAsk, desk_inbox, tournament_inbox, tournament_of_inbox
from server.metrics import Metrics
from server.operations import OperationsDesk
from server.store.connection import Store
from server.store.errors import FencedOut, StoreError
from server.store.fencing import Fence, claim
from server.store.tournaments import Tournament, TournamentStatus
from server.table_host import TableHost

log = logging.getLogger("feltd.server")

POLL_SECONDS = 2.0
KEEP_FINISHED_SECONDS = 600.0
# the tournaments a server runs: the others are over (or were never more than a definition)
_LOADABLE = frozenset({TournamentStatus.ANNOUNCED, TournamentStatus.REGISTERING, TournamentStatus.RUNNING})


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
        leases: Leases | None = None,
        role: Role = Role.ALL,
        bus: Bus | None = None,
        shard_tables: bool = False,
        keep_finished_seconds: float = KEEP_FINISHED_SECONDS,
    ) -> None:
        """``director_rng(tournament_id)`` and ``table_rng(table_id)`` give seeded generators in
        tests (``None``, the default: the OS CSPRNG); ``hand_gap`` overrides the pause between
        hands (clock seconds); ``limits``: what clients may cost (``gateway.Limits``), its
        ``rate_per_second`` counted in the game clock's seconds; ``leases``: run only the
        tournaments whose lease this server holds (module docstring), ``None``: all of them.
        ``role``: see the module docstring; a gateway or a worker needs ``bus``, one shared with
        the other processes. ``shard_tables``: host tables and spread the coordinators' tables
        over every host (module docstring). ``keep_finished_seconds``: real seconds a finished or
        cancelled tournament's coordinator stays loaded after its end (module docstring)."""
        if role is not Role.ALL and bus is None:
            raise ValueError(f"a {role} needs a bus shared with the other processes")
        if shard_tables and role is Role.GATEWAY:
            raise ValueError("a gateway hosts no tables: --shard-tables is for workers")
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
        self.shard_tables = shard_tables
        self.table_host: TableHost | None = None
        self._hosting: asyncio.Task[None] | None = None
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.keep_finished_seconds = keep_finished_seconds
        # the coordinator tasks that ended, with the loop time they ended at
        self._over_at: dict[str, tuple[float, asyncio.Task[None]]] = {}
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
        self.leases = leases
        self.leased: dict[str, Lease] = {}
        self._renewed_at: dict[str, float] = {}  # loop time of each lease's last known renewal
        self._renewer: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._poller: asyncio.Task[None] | None = None
        self._desk: asyncio.Task[None] | None = None  # the desk reading OPERATIONS
        self._own_desk: asyncio.Task[None] | None = None  # a leased worker's desk_inbox
        # Workers sharing Redis run one desk on OPERATIONS, the holder of this lease's: what one
        # operator request reaches is then known, not whichever worker claimed the address last.
        self._desk_leases = (
            None
            if leases is None
            else Leases(leases.redis, owner=leases.owner, ttl=leases.ttl, prefix=f"{leases.prefix}desk:")
        )
        self._desk_lease: Lease | None = None
        self._health: asyncio.Server | None = None  # a worker's /healthz and /metrics
        self.host = ""
        self.port = 0

    async def start(self, host: str = "127.0.0.1", port: int = 8765) -> None:
        """Load the tournaments and listen on ``host:port`` (what the role has of both)."""
        if self.role is not Role.GATEWAY:
            if self.shard_tables:
                self.table_host = TableHost(
                    self.bus, self.clock, metrics=self.metrics, table_rng=self.table_rng
                )
                self._hosting = asyncio.create_task(self.table_host.run(), name="table host")
            if self.leases is None:
                self._desk = asyncio.create_task(OperationsDesk(self).run(), name="operations desk")
            else:
                own = OperationsDesk(self, desk_inbox(self.leases.owner))
                self._own_desk = asyncio.create_task(own.run(), name="own operations desk")
                await self._take_desk()
            await self.load()
        if self.gateway is not None:
            sockets = list((await self.gateway.start(host, port)).sockets)
        else:
            self._health = await serve_health(host, port, self.metrics)
            sockets = list(self._health.sockets)
        self.host, self.port = sockets[0].getsockname()[:2] if sockets else (host, port)
        if self.role is not Role.GATEWAY:
            self._poller = asyncio.create_task(self._poll(), name="tournament poller")
            if self.leases is not None:
                self._renewer = asyncio.create_task(self._renew(self.leases), name="lease renewer")
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

    async def _take_desk(self) -> None:
        """Run the desk on ``OPERATIONS`` if its lease is free (its holder died or stopped)."""
        if self._desk_leases is None or self._desk_lease is not None:
            return
        try:
            lease = await self._desk_leases.acquire(OPERATIONS)
        except (RedisError, OSError) as error:
            log.warning("the operations desk's lease could not be asked for: %s", error)
            return
        if lease is not None:
            self._desk_lease = lease
            self._desk = asyncio.create_task(OperationsDesk(self).run(), name="operations desk")
            log.info("this worker runs the operations desk")

    def _drop_desk(self) -> None:
        if self._desk is not None:
            self._desk.cancel()
            self._desk = None
        self.bus.close_inbox(OPERATIONS)  # a task cancelled before it ran would not have
        self._desk_lease = None

    async def _renew_desk(self) -> None:
        if self._desk_leases is None or self._desk_lease is None:
            return
        try:
            held = await self._desk_leases.renew(self._desk_lease)
        except (RedisError, OSError) as error:
            log.warning("the operations desk's lease not renewed: %s", error)
            return  # kept until it is known lost: a second desk for a moment answers as well
        if not held:
            log.warning("the operations desk's lease expired: another worker runs the desk")
            self._drop_desk()

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            try:
                await self._take_desk()
                await self._unload_finished()
                await self.load()
            except StoreError as error:
                log.warning("looking for new tournaments failed: %s", error)
            except Exception:
                # The poller is how this worker takes tournaments up: it must outlive any failure.
                log.exception("looking for new tournaments failed")

    async def load(self) -> list[str]:
        """Start a coordinator for every announced or registering tournament not yet running here;
        returns the ids started."""
        started = []
        for record in await self.store.tournaments.all():
            if record.id in self.coordinators:
                continue
            if record.status in _LOADABLE and await self._start(record):
                started.append(record.id)
        self.metrics.tournaments = len(self.coordinators)
        return started

    async def _start(self, record: Tournament) -> bool:
        try:
            config = parse_config(record.config_toml)
        except ConfigError as error:
            log.error("tournament %s: its configuration is refused: %s", record.id, error)
            return False
        if self.leases is None:
            return await self._start_coordinator(record, config, None)
        lease = await self._acquire(self.leases, record.id)
        if lease is None:
            return False
        started = False
        try:
            # the record read before the lease was ours may be stale: deleted or redefined by
            # the previous holder, who gave the lease back only once that was written
            fresh = await self.store.tournaments.get(record.id)
            if fresh.status not in _LOADABLE:
                return False
            if fresh.config_toml != record.config_toml:
                record, config = fresh, parse_config(fresh.config_toml)
            started = await self._start_coordinator(record, config, Fence(record.id, lease.token))
        except FencedOut as error:
            log.warning("tournament %s: taken over while it was being loaded: %s", record.id, error)
        finally:
            if not started and self.leased.get(record.id) is lease:
                await self._let_go(self.leases, lease)
        return started

    async def _start_coordinator(
        self, record: Tournament, config: TournamentConfig, fence: Fence | None
    ) -> bool:
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
            fence=fence,
            on_fenced=partial(self._fenced, record.id),
            shard_tables=self.shard_tables,
        )
        try:
            return await self._resume(record, coordinator, start_at)
        except BaseException:
            coordinator.abandon()
            await coordinator.close()
            raise

    async def _resume(self, record: Tournament, coordinator: Coordinator, start_at: float) -> bool:
        # A tournament with a journal was running here before (a crash, a restart): it resumes
        # from its saved director; a new one starts with its first snapshot.
        last_alive = await coordinator.restore()
        if last_alive is not None:
            replayed = coordinator.seq - (coordinator.resumed_from or 0)  # resume writes one more
            await coordinator.resume(last_alive, self.resume_limit)
            log.info(
                "tournament %s resumed from snapshot %s and %d inputs after it",
                record.id,
                coordinator.resumed_from,
                replayed,
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
                await self.store.tournaments.set_status(
                    record.id, TournamentStatus.REGISTERING, fence=coordinator.fence
                )
        if coordinator.fenced_out is not None or (
            coordinator.fence is not None and record.id not in self.leased
        ):
            log.warning("tournament %s: its lease was lost while it was being loaded", record.id)
            coordinator.abandon()
            await coordinator.close()
            return False
        self.coordinators[record.id] = coordinator
        coordinator.publish_lobby()
        task = asyncio.create_task(coordinator.run(), name=f"tournament {record.id}")
        self.tasks[record.id] = task
        task.add_done_callback(partial(self._ended, record.id))
        log.info("tournament %s (%s) loaded, starts at %s", record.id, record.name, start_at)
        return True

    async def _acquire(self, leases: Leases, tournament_id: str) -> Lease | None:
        """The tournament's lease with its token claimed in PostgreSQL (older owners fenced out
        from now on), or ``None`` while another worker holds it."""
        try:
            lease = await leases.acquire(tournament_id)
        except (RedisError, OSError) as error:
            log.warning("tournament %s: its lease could not be asked for: %s", tournament_id, error)
            return None
        if lease is None:
            return None
        self._renewed_at[tournament_id] = asyncio.get_running_loop().time()
        self.leased[tournament_id] = lease
        try:
            await claim(self.store.pool, Fence(tournament_id, lease.token))
        except FencedOut as error:
            # PostgreSQL saw a newer token than Redis handed out (Redis lost its counters): the
            # next lease starts past it.
            log.warning("tournament %s: lease token %d is stale (%s)", tournament_id, lease.token, error)
            await self._let_go(leases, lease)
            with contextlib.suppress(RedisError, OSError):
                await leases.raise_floor(tournament_id, error.recorded)
            return None
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as error:
            log.warning("tournament %s: its lease token could not be claimed: %s", tournament_id, error)
            await self._let_go(leases, lease)
            return None
        except BaseException:
            await self._let_go(leases, lease)
            raise
        return lease

    async def _let_go(self, leases: Leases, lease: Lease) -> None:
        if self.leased.get(lease.resource) is lease:
            del self.leased[lease.resource]
            self._renewed_at.pop(lease.resource, None)
        try:
            await leases.release(lease)
        except (RedisError, OSError) as error:
            log.warning("tournament %s: lease not given back (it expires): %s", lease.resource, error)

    async def _renew(self, leases: Leases) -> None:
        """Renew every lease held; a tournament whose coordinator ended here gives its lease back,
        one whose lease is lost stops here at once."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(leases.renew_every)
            await self._renew_desk()
            for tournament_id, lease in list(self.leased.items()):
                task = self.tasks.get(tournament_id)
                if task is not None and task.done():
                    # Over (or crashed): its status says whether anyone takes it up again.
                    await self._let_go(leases, lease)
                    continue
                try:
                    held = await leases.renew(lease)
                except (RedisError, OSError) as error:
                    # Redis may be back before the TTL runs out; until then the lease may still be ours.
                    held = loop.time() - self._renewed_at.get(tournament_id, 0.0) < leases.ttl
                    log.warning("tournament %s: lease not renewed: %s", tournament_id, error)
                if self.leased.get(tournament_id) is not lease:
                    continue
                if held:
                    self._renewed_at[tournament_id] = loop.time()
                else:
                    self._lose(tournament_id, "its lease expired")

    def _fenced(self, tournament_id: str, error: FencedOut) -> None:
        self._lose(tournament_id, str(error))

    def _lose(self, tournament_id: str, why: str) -> None:
        """Another worker owns the tournament (or may, any moment): stop its coordinator and
        tables at once, without a word to the store."""
        self.leased.pop(tournament_id, None)
        self._renewed_at.pop(tournament_id, None)
        coordinator = self.coordinators.pop(tournament_id, None)
        task = self.tasks.pop(tournament_id, None)
        if coordinator is None:
            return
        log.error("tournament %s: %s: stopped on this worker", tournament_id, why)
        coordinator.abandon()
        if task is not None:
            task.cancel()
        closing = asyncio.create_task(coordinator.close(), name=f"closing tournament {tournament_id}")
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)
        self.metrics.tournaments = len(self.coordinators)

    def _ended(self, tournament_id: str, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("tournament %s stopped: %r", tournament_id, task.exception())
        elif self.tasks.get(tournament_id) is task:
            self._over_at[tournament_id] = (asyncio.get_running_loop().time(), task)

    async def _unload_finished(self) -> None:
        """Forget the coordinators of tournaments over for ``keep_finished_seconds``: a server
        running tournament after tournament would otherwise hold every director it ever ran."""
        now = asyncio.get_running_loop().time()
        for tournament_id, (over_at, task) in list(self._over_at.items()):
            coordinator = self.coordinators.get(tournament_id)
            if coordinator is None or self.tasks.get(tournament_id) is not task:
                del self._over_at[tournament_id]  # dropped or lost meanwhile (maybe loaded again)
                continue
            if now - over_at < self.keep_finished_seconds:
                continue
            if coordinator.director.status not in (Status.FINISHED, Status.CANCELLED):
                del self._over_at[tournament_id]  # stopped, not over: left as it was
                continue
            del self._over_at[tournament_id]
            del self.coordinators[tournament_id]
            del self.tasks[tournament_id]
            self.metrics.tournaments = len(self.coordinators)
            await coordinator.close()
            lease = self.leased.get(tournament_id)
            if lease is not None and self.leases is not None:
                await self._let_go(self.leases, lease)
            log.info("tournament %s unloaded, %s", tournament_id, coordinator.director.status.value)

    async def drop(self, tournament_id: str, then: Callable[[], Awaitable[object]] | None = None) -> None:
        """Stop a tournament's coordinator and forget it (its definition is about to change or
        it is deleted); nothing of it was under way (no entrants: the caller checks). ``then``
        (the deletion's or the new definition's writes) runs before the lease is given back: a
        worker that took the lease in between would start the old definition."""
        coordinator = self.coordinators.pop(tournament_id, None)
        task = self.tasks.pop(tournament_id, None)
        lease = self.leased.get(tournament_id)
        if coordinator is None:
            if then is not None:
                await then()
            return
        if task is not None and not task.done():
            with contextlib.suppress(BusError):
                self.bus.send(tournament_inbox(tournament_id), Stop())
            try:
                await asyncio.wait_for(asyncio.shield(task), 5.0)
            except TimeoutError:
                task.cancel()
        await coordinator.close()
        try:
            if then is not None:
                await then()
        finally:
            if lease is not None and self.leases is not None:
                await self._let_go(self.leases, lease)
        self.metrics.tournaments = len(self.coordinators)

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
        if self._desk is not None:
            self._desk.cancel()
        if self._own_desk is not None:
            self._own_desk.cancel()
        if self.gateway is not None:
            await self.gateway.stop()
        if self._health is not None:
            self._health.close()
            await self._health.wait_closed()
        # no lease is renewed (or lost, which would change the dicts below) while stopping
        if self._renewer is not None:
            self._renewer.cancel()
        for tournament_id, coordinator in list(self.coordinators.items()):
            if not coordinator.finished.is_set():
                with contextlib.suppress(BusError):  # a full inbox: the task is cancelled below
                    self.bus.send(tournament_inbox(tournament_id), Stop())
        for task in list(self.tasks.values()):
            if not task.done():
                try:
                    await asyncio.wait_for(asyncio.shield(task), 5.0)
                except TimeoutError:
                    task.cancel()
        for coordinator in list(self.coordinators.values()):
            await coordinator.close()
        if self._closing:
            await asyncio.wait(list(self._closing))
        if self._hosting is not None:
            self._hosting.cancel()
            await asyncio.wait([self._hosting])
        if self.table_host is not None:
            await self.table_host.close()
        if self.leases is not None:
            for lease in list(self.leased.values()):  # the next owner need not wait for the TTL
                await self._let_go(self.leases, lease)
        if self._desk_leases is not None and self._desk_lease is not None:
            with contextlib.suppress(RedisError, OSError):
                await self._desk_leases.release(self._desk_lease)
            self._desk_lease = None

    async def wait_finished(self, tournament_id: str) -> None:
        """Until the tournament is over (finished or cancelled)."""
        await self.coordinators[tournament_id].finished.wait()
