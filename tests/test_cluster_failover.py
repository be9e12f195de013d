"""Issue 15, acceptance item 1: real processes on loopback, one gateway and three workers sharing
PostgreSQL and Redis. Bots connected to the gateway only play a tournament that runs on one of the
workers; that worker is killed with SIGKILL while hands are being played. Another worker takes
the tournament's lease, resumes it from its journal (the hands under way dealt again, CRASH-1)
and plays it to its end; the bots follow it there on the connections they have (the gateway,
told by the new coordinator, gives each a snapshot of its table opened again: no reconnect, no
login). Nothing is lost: the chips in play are the chips issued, the ledger balances, the pool
ends empty, nobody is paid twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis.asyncio as aioredis
from processes import feltd_command, free_port, http_get
from server_harness import tournament_toml, unexplained

from client.bot import Bot, Chaos
from client.think import Fixed
from engine.tournament.transfers import Reason, pool_account
from protocol import server_messages as sm
from protocol import table_events as te
from server.cli.bots import BotsRun
from server.lease import Leases
from server.recovery import load_director
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database

SPEED = 50.0
LEASE_TTL = 2.0  # wall seconds: a dead worker's tournament moves about this long after it died
BOTS = 12  # two tables of six
HANDS_BEFORE_THE_KILL = 4


@dataclass
class _Server:
    """One ``feltd serve`` process: its Redis bus id (a worker's lease owner is ``worker-<id>``)."""

    process: asyncio.subprocess.Process
    log: Path
    bus_id: str = ""

    async def line(self, start: str) -> str:
        """The first line of its output starting with ``start`` (its log, if it ends first)."""
        assert self.process.stdout is not None
        async with asyncio.timeout(30):
            while True:
                line = (await self.process.stdout.readline()).decode()
                if not line:
                    raise AssertionError(self.log.read_text()[-3000:])
                if line.startswith(start):
                    return line


@contextlib.asynccontextmanager
async def _serve(log: Path, *arguments: str) -> AsyncIterator[_Server]:
    with log.open("wb") as errors:
        process = await asyncio.create_subprocess_exec(
            *feltd_command(), "serve", *arguments, stdout=asyncio.subprocess.PIPE, stderr=errors
        )
    server = _Server(process, log)
    try:
        # "feltd ROLE ID on the Redis bus PREFIX"
        server.bus_id = (await server.line("feltd ")).split()[2]
        yield server
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()


@dataclass
class _Watch:
    """What each bot receives after the kill: frames of a table opened again on another worker
    (their ``seq`` starts past the clock's milliseconds at the takeover, far above any the
    killed worker's tables reached), and turns for its own seat there."""

    after_seq: int = 0
    resumed_frames: Counter[str] = field(default_factory=Counter)
    resumed_turns: Counter[str] = field(default_factory=Counter)

    def observe(self, bot: Bot) -> None:
        handle = bot._handle

        async def observed(message: sm.ServerMessage) -> None:
            frame = message if isinstance(message, sm.TableEvent | sm.TableSnapshot) else None
            if self.after_seq and frame is not None and frame.seq > self.after_seq:
                self.resumed_frames[bot.name] += 1
                view = bot.tables.get(frame.table_id)
                turn = message.event if isinstance(message, sm.TableEvent) else None
                if isinstance(turn, te.Turn) and view is not None and turn.seat == view.seat:
                    self.resumed_turns[bot.name] += 1
            await handle(message)

        bot._handle = observed  # type: ignore[method-assign]


async def _until(
    condition: Callable[[], Awaitable[bool]], seconds: float, what: str | Callable[[], str]
) -> None:
    try:
        async with asyncio.timeout(seconds):
            while not await condition():
                await asyncio.sleep(0.05)
    except TimeoutError:
        said = what if isinstance(what, str) else what()
        raise AssertionError(f"not within {seconds:g} s: {said}") from None


async def test_a_worker_killed_mid_tournament_hands_its_tables_to_another_and_no_chip_or_cent_is_lost(
    postgres_server_url: str, redis_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:8]}"
    anchor = time.time()  # one clock for every process: a resumed table's seq starts past the old
    common = (
        *("--speed", str(SPEED), "--clock-anchor", repr(anchor)),
        *("--redis-url", redis_url, "--redis-prefix", prefix, "--lease-ttl", str(LEASE_TTL)),
        *("--snapshot-every", "10", "--resume-limit", "120"),
    )
    database = await create_database(postgres_server_url, f"feltd_test_cluster_{uuid.uuid4().hex[:8]}")
    redis = aioredis.from_url(redis_url)
    leases = Leases(redis, owner="the-test", prefix=f"{prefix}:")
    try:
        async with contextlib.AsyncExitStack() as stack:
            store: Store = await stack.enter_async_context(open_store(database, max_size=4))
            flags = (*common, "--database-url", database)
            workers = [
                await stack.enter_async_context(
                    _serve(tmp_path / f"w{n}.log", "--role", "worker", "--port", str(free_port()), *flags)
                )
                for n in range(3)
            ]
            for worker in workers:
                await worker.line("tournaments loaded")
            port = free_port()
            gateway = await stack.enter_async_context(
                _serve(tmp_path / "gateway.log", "--role", "gateway", "--port", str(port), *flags)
            )
            await gateway.line("feltd serving on")

            run = BotsRun(f"ws://127.0.0.1:{port}/", store)
            stack.push_async_callback(run.close)
            toml = tournament_toml("cluster", players=BOTS, table_size=6, level_minutes=1)
            await run.prepare(BOTS, tournament_id=None, toml=toml, kind="tag,station,random", prefix="cl")
            watch = _Watch()
            playing = asyncio.create_task(run.play(think=Fixed(0.0), chaos=Chaos(), seed=7, deadline=60))
            stack.push_async_callback(_cancel, playing)
            while run.swarm is None:
                await asyncio.sleep(0)
            swarm = run.swarm
            for bot in swarm.bots:
                watch.observe(bot)

            async def hands_played() -> bool:
                if playing.done():  # the bots' run failed or ended: say how, not "not within 30 s"
                    raise AssertionError(f"the bots stopped before the kill: {playing.result()}")
                return len(swarm.stats.hands) >= HANDS_BEFORE_THE_KILL

            def so_far() -> str:
                stats = swarm.stats
                return f"hands played ({len(stats.hands)} so far; {stats.registered} of {BOTS} registered)"

            await _until(hands_played, 30, so_far)
            held = await leases.holder("cluster")
            assert held is not None, "the tournament runs under a lease"
            (doomed,) = [w for w in workers if held.owner == f"worker-{w.bus_id}"]
            playing_at_kill = {bot.name for bot in swarm.bots if not bot.done}
            hands_at_kill = len(swarm.stats.hands)
            gaps_at_kill = sum(bot.connection.gaps for bot in swarm.bots)
            watch.after_seq = int((anchor + (time.time() - anchor) * SPEED) * 1000)
            killed_at = time.monotonic()
            os.kill(doomed.process.pid, signal.SIGKILL)
            await doomed.process.wait()

            async def taken() -> bool:
                lease = await leases.holder("cluster")
                return lease is not None and lease.owner != held.owner

            await _until(taken, 20, "another worker takes the tournament")
            takeover = time.monotonic() - killed_at
            successor = await leases.holder("cluster")
            assert successor is not None and successor.token > held.token
            assert successor.owner in {f"worker-{w.bus_id}" for w in workers if w is not doomed}

            # mid-tournament, as the journal has it: every chip issued is in play
            restored = await load_director(store.journal, "cluster")
            assert restored is not None
            director = restored.director
            if director.status.value == "running":
                assert director.chips_in_play() == director.chips_issued - director.chips_removed

            finished = await playing
            resumed = time.monotonic() - killed_at
            report = run.report(finished)
            assert finished, "every bot played to the end"
            assert report["tournament"]["status"] == "finished", report["tournament"]
            assert report["failed_bots"] == 0
            assert unexplained(report["errors"]) == {}, report
            assert len(swarm.stats.hands) > hands_at_kill
            # every bot still playing when its worker died was dealt in again on the new worker
            assert playing_at_kill <= set(watch.resumed_frames), (playing_at_kill, watch.resumed_frames)
            assert sum(watch.resumed_turns.values()) > 0
            for worker in workers:
                if worker is not doomed:
                    assert worker.process.returncode is None, worker.log.read_text()[-3000:]
            assert gateway.process.returncode is None
            # the gateway told each of their sessions (and the operator's) where they sit now and
            # gave them a snapshot of the table opened again: no reconnect, no jump in seq to mend
            moved = _metric(await http_get(f"http://127.0.0.1:{port}/metrics"), "feltd_sessions_moved_total")
            assert moved >= len(playing_at_kill), moved
            gaps = sum(bot.connection.gaps for bot in swarm.bots) - gaps_at_kill
            assert gaps == 0 and report["reconnects"] == 0, (gaps, report["reconnects"])
            print(
                f"\ncluster failover: takeover {takeover:.1f} s after the SIGKILL, tournament over "
                f"{resumed:.1f} s after it; {len(playing_at_kill)} bots playing at the kill, "
                f"{moved} sessions moved, reconnects {report['reconnects']}, gaps {gaps}, "
                f"hands {hands_at_kill} before / "
                f"{len(swarm.stats.hands)} in all"
            )

            restored = await load_director(store.journal, "cluster")
            assert restored is not None and restored.director.status.value == "finished"
            director = restored.director
            paid_in = len([p for p in director.registration.payments if p]) * director.config.starting_stack
            assert director.chips_issued == paid_in
            check = await store.ledger.check(None)
            assert check.ok, check.problems
            pool = pool_account("cluster")
            assert (await store.ledger.balances([pool]))[pool] == 0
            paid = await store.ledger.payments_from(pool, Reason.PRIZE)
            assert paid and max(paid.values()) == 1, paid
    finally:
        keys = [key async for key in redis.scan_iter(match=prefix + "*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()
        await drop_database(postgres_server_url, database)


def _metric(text: str, name: str) -> int:
    (value,) = [line.split()[1] for line in text.splitlines() if line.startswith(name + " ")]
    return int(value)


async def _cancel(task: asyncio.Task[bool]) -> None:
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
