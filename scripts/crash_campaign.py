"""Crash campaign: kill `feltd serve` with SIGKILL at random moments of running bot tournaments.

The server runs as its own process on an accelerated clock (`--speed`, with a fixed
`--clock-anchor` so that every restart reads the same clock). Bots play over WebSockets and
reconnect whenever the server goes away. At random moments (at most one of them before a
tournament's play begins) the server is killed with SIGKILL and started again; after each
restart, and at the end of each tournament, the campaign checks from the database alone:

- chips: the director rebuilt from the journal holds exactly the chips the ledger's buy-ins
  issued (entries x starting stack): nothing lost, nothing made;
- cents: `ledger check` passes (every transaction sums to zero, balances equal their entries),
  and the prize pool holds the buy-ins less the prizes paid;
- double payments: no player received more prize transactions than places they finished in;
- the end: every tournament finishes, pays its whole pool and leaves its pool account empty.

    python scripts/crash_campaign.py --kills 100

uses $DATABASE_URL's server (a fresh database is made and dropped), or an embedded PostgreSQL
in a temporary folder without it. It prints one line per kill and a summary; exit 1 when a check
failed or a tournament did not finish.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from websockets.exceptions import ConnectionClosed, InvalidHandshake

from client.connection import Connection, LoginRefused
from engine.tournament import inputs
from engine.tournament.config import parse_config
from engine.tournament.transfers import CASHIER, Reason, Transfer, player_account, pool_account
from protocol import client_messages as cm
from protocol import server_messages as sm
from protocol import table_events as te
from protocol import tournament_events as tev
from protocol.kinds import ActionKind
from server.recovery import load_director
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database
from server.store.errors import StoreError

ROOT = Path(__file__).resolve().parent.parent


def _tournament_toml(tournament_id: str, players: int) -> str:
    levels = "".join(
        f"[[levels]]\nsmall_blind = {small}\nbig_blind = {small * 2}\nminutes = 3\n\n"
        for small in (10, 20, 40, 75, 150, 300, 600, 1200, 2500, 5000, 10000, 20000, 40000)
    )
    return (
        f'id = "{tournament_id}"\nname = "Crash campaign {tournament_id}"\nbuy_in = 1000\nfee = 100\n'
        f"starting_stack = 1500\ntable_size = 9\nmin_players = 2\nmax_players = {players}\n"
        f'[breaks]\nmode = "none"\n\n[payouts]\npercent_paid = 30\n\n{levels}'
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class ServerProcess:
    """`feltd serve` as a child process, killed and started again at will."""

    database_url: str
    port: int
    speed: float
    anchor: float
    log: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    def start(self) -> None:
        script = Path(sys.executable).with_name("feltd")
        command = [str(script)] if script.exists() else [sys.executable, "-m", "server.cli.main"]
        command += [
            "serve",
            "--port",
            str(self.port),
            "--speed",
            str(self.speed),
            "--clock-anchor",
            repr(self.anchor),
            "--database-url",
            self.database_url,
            # snapshots every few hands: restarts land between snapshots taken mid-hand, and
            # the journal is pruned as it goes
            "--snapshot-every",
            "15",
        ]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        self.starts += 1

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()

    async def healthy(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        url = f"http://127.0.0.1:{self.port}/healthz"
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"feltd serve exited with {self.process.returncode}: see {self.log}")
            try:
                with urllib.request.urlopen(url, timeout=1) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            await asyncio.sleep(0.1)
        raise RuntimeError(f"feltd serve did not answer /healthz within {timeout:.0f} s: see {self.log}")


@dataclass
class Bot:
    """A player that plays whatever it is dealt and reconnects whenever the server goes away."""

    name: str
    token: str
    url: str
    tournament_id: str
    seed: int
    ended: bool = False
    registering: bool = False
    reconnects: int = 0
    hands: dict[int, int] = field(default_factory=dict)
    acted: int = 0

    async def run(self, stop: asyncio.Event) -> None:
        rng = random.Random(self.seed)
        connection = Connection(self.url, token=self.token, client_name=f"crash-{self.name}")
        first = True
        while not self.ended and not stop.is_set():
            try:
                await connection.connect(resume=not first)
                if not first:
                    self.reconnects += 1
                first = False
                # register once the lobby lists the tournament (the server picks it up within
                # seconds of its creation, and again after every restart)
                await connection.send(cm.LobbySubscribe())
                self.registering = False
                while not self.ended and not stop.is_set():
                    try:
                        message = await connection.recv(1.0)
                    except TimeoutError:
                        continue
                    await self._react(connection, message, rng)
            except (ConnectionClosed, OSError, InvalidHandshake, TimeoutError, LoginRefused):
                await asyncio.sleep(0.2 + rng.random() * 0.3)
        with contextlib.suppress(Exception):
            await connection.close()

    async def _react(self, connection: Connection, message: sm.ServerMessage, rng: random.Random) -> None:
        listed: list[sm.TournamentSummary] = []
        if isinstance(message, sm.Lobby):
            listed = list(message.tournaments)
        elif isinstance(message, sm.LobbyUpdate):
            listed = [message.tournament]
        for summary in listed:
            open_now = summary.status.value in ("announced", "registering")
            if summary.tournament_id == self.tournament_id and open_now and not self.registering:
                self.registering = True
                await connection.send(
                    cm.Register(tournament_id=self.tournament_id, request_id=f"reg-{self.name}")
                )
        if isinstance(message, sm.TournamentEvent) and isinstance(
            message.event, tev.TournamentEnded | tev.Cancelled
        ):
            self.ended = True
        elif isinstance(message, sm.Registration) and message.status.value in ("eliminated", "unregistered"):
            self.ended = message.status.value == "eliminated"
        elif isinstance(message, sm.TableSnapshot):
            if message.hand_number is not None:
                self.hands[message.table_id] = message.hand_number
            if message.legal is not None and message.hand_number is not None:
                await self._act(connection, message.table_id, message.hand_number, message.legal, rng)
        elif isinstance(message, sm.TableEvent):
            if isinstance(message.event, te.HandStarted):
                self.hands[message.table_id] = message.event.hand_number
            elif isinstance(message.event, te.Turn) and message.event.legal is not None:
                hand = self.hands.get(message.table_id)
                if hand is not None:
                    await self._act(connection, message.table_id, hand, message.event.legal, rng)

    async def _act(
        self, connection: Connection, table_id: int, hand: int, legal: te.LegalView, rng: random.Random
    ) -> None:
        # mostly small raises and calls: all-in calls end an 18-player tournament within seconds,
        # and a kill must find hands under way
        roll = rng.random()
        amount: int | None = None
        if legal.max_raise_to is not None and roll < 0.03:
            action, amount = ActionKind.RAISE, legal.max_raise_to
        elif legal.min_raise_to is not None and roll < 0.15:
            action, amount = ActionKind.RAISE, legal.min_raise_to
        elif legal.can_fold and roll > 0.7:
            action = ActionKind.FOLD
        else:
            action = ActionKind.CHECK_OR_CALL
        self.acted += 1
        await connection.send(
            cm.Act(
                table_id=table_id,
                hand_number=hand,
                action_id=f"{self.name}-{hand}-{self.acted}",
                action=action,
                amount=amount,
            )
        )


class _Progress:
    """How many hands of a tournament were stored, and when that number last grew."""

    def __init__(self, hands: int, since: float) -> None:
        self.hands = hands
        self.since = since


async def _stalled(
    store: Store, tournament_id: str, status: str, progress: _Progress, limit: float
) -> str | None:
    """A running tournament that stored no hand for ``limit`` real seconds is stuck: a table that
    never deals again would otherwise show only as a timeout, with nothing said about where."""
    async with store.pool.acquire() as conn:
        hands = await conn.fetchval(
            "SELECT count(*) FROM hand_histories WHERE tournament_id = $1", tournament_id
        )
        last = await conn.fetch(
            "SELECT seq, input FROM director_inputs WHERE tournament_id = $1 ORDER BY seq DESC LIMIT 3",
            tournament_id,
        )
    now = time.monotonic()
    if hands != progress.hands or status != "running":
        progress.hands, progress.since = hands, now
        return None
    if now - progress.since < limit:
        return None
    tail = ", ".join(f"{row['seq']}: {bytes(row['input'])[:40]!r}" for row in last)
    return f"stalled: no hand stored for {now - progress.since:.0f} s at {hands} hands (journal tail {tail})"


def _errors_logged(log: Path) -> list[str]:
    if not log.exists():
        return []
    lines = log.read_text(errors="replace").splitlines()
    return [line for line in lines if "ERROR" in line or "Traceback" in line or "Error" in line]


@dataclass
class Findings:
    kills: int = 0
    checks: int = 0
    chips_lost: int = 0
    cents_lost: int = 0
    double_payments: int = 0
    finished: int = 0
    tournaments: int = 0
    problems: list[str] = field(default_factory=list)


async def _buy_ins(store: Store, tournament_id: str) -> int:
    """Buy-ins standing in the tournament's pool: paid in, less those given back."""
    async with store.pool.acquire() as conn:
        count: int = await conn.fetchval(
            """
            SELECT count(*) FILTER (WHERE t.reason = 'buy-in' AND e.amount > 0)
                 - count(*) FILTER (WHERE t.reason = 'refund' AND e.amount < 0)
              FROM ledger_transactions AS t
              JOIN ledger_entries AS e ON e.transaction_id = t.id
             WHERE e.account = $1
            """,
            pool_account(tournament_id),
        )
    return count


async def _in_flight(store: Store, tournament_id: str, intents: list[inputs.Intent]) -> int:
    """Buy-ins whose money reached the pool for a registration the journal never recorded: a kill
    between the post and the record. The next start-up gives them back (``Coordinator.restore``),
    so between a kill and that restart they are in flight, not lost; after it none may be left."""
    keys = [
        t.idempotency_key
        for intent in intents
        for t in intent.transfers
        if t.target == pool_account(tournament_id) and t.reason is Reason.BUY_IN
    ]
    if not keys:
        return 0
    async with store.pool.acquire() as conn:
        posted: int = await conn.fetchval(
            """
            SELECT count(*) FROM unnest($1::text[]) AS k(key)
             WHERE EXISTS (SELECT 1 FROM ledger_transactions WHERE idempotency_key = k.key)
               AND NOT EXISTS (SELECT 1 FROM ledger_transactions WHERE idempotency_key = k.key || ':undone')
            """,
            keys,
        )
    return posted


async def check(store: Store, tournament_id: str, toml: str, findings: Findings, *, final: bool) -> str:
    """Every check of the module docstring, from the database; returns a one-line verdict."""
    findings.checks += 1
    config = parse_config(toml)
    verdicts: list[str] = []
    ledger = await store.ledger.check()
    if not ledger.ok:
        findings.problems.append(f"{tournament_id}: ledger check: {ledger.problems[:3]}")
        verdicts.append("LEDGER BAD")
    try:
        restored = await load_director(store.journal, tournament_id)
    except (ValueError, StoreError) as error:  # JournalError, DirectorError: it does not replay
        findings.problems.append(f"{tournament_id}: the journal does not replay: {error!r}")
        return "JOURNAL BAD"
    if restored is None:
        return "no journal yet"
    director = restored.director
    entries = await _buy_ins(store, tournament_id)
    in_flight = await _in_flight(store, tournament_id, inputs.unmatched_intents(restored.replayed))
    if final and in_flight:
        findings.problems.append(f"{tournament_id}: {in_flight} cut-short buy-ins never given back")
    elif in_flight:
        entries -= in_flight
        verdicts.append(f"{in_flight} buy-in(s) in flight, to be given back on restart")
    unrefunded = entries - len(director.registration.payments) if director.status.value != "cancelled" else 0
    issued = len([p for p in director.registration.payments if p]) * config.starting_stack
    in_play = director.chips_in_play() if director.status.value == "running" else None
    if in_play is not None and in_play != director.chips_issued - director.chips_removed:
        findings.chips_lost += abs(director.chips_issued - director.chips_removed - in_play)
        findings.problems.append(f"{tournament_id}: {in_play} chips in play, {director.chips_issued} issued")
    if in_play is not None and director.chips_issued != issued:
        findings.chips_lost += abs(director.chips_issued - issued)
        findings.problems.append(
            f"{tournament_id}: director issued {director.chips_issued}, buy-ins {issued}"
        )
    if unrefunded > 0:
        findings.cents_lost += unrefunded * config.buy_in
        findings.problems.append(f"{tournament_id}: {unrefunded} buy-ins in the ledger the director lacks")
    elif unrefunded < 0:  # refunded, yet the director still counts the entry: a free seat
        findings.cents_lost += -unrefunded * config.buy_in
        findings.problems.append(f"{tournament_id}: {-unrefunded} entries the director counts were refunded")
    paid = Counter(await store.ledger.payments_from(pool_account(tournament_id), Reason.PRIZE))
    places: Counter[str] = Counter()
    if director.standings is not None:
        for finish in director.standings.finishes:
            for player in finish.players:
                places[player_account(player)] += 1
    twice = {account: n for account, n in paid.items() if n > max(1, places[account])}
    if twice:
        findings.double_payments += sum(n - 1 for n in twice.values())
        findings.problems.append(f"{tournament_id}: paid twice: {twice}")
    pool = (await store.ledger.balances([pool_account(tournament_id)])).get(pool_account(tournament_id), 0)
    if final:
        if director.status.value != "finished":
            findings.problems.append(f"{tournament_id}: ended {director.status.value}, not finished")
        elif pool != 0:
            findings.cents_lost += abs(pool)
            findings.problems.append(f"{tournament_id}: {pool} cents left in the pool at the end")
        else:
            findings.finished += 1
    verdicts.append(
        f"{director.status.value}, {director.players_left} left, "
        f"chips {in_play if in_play is not None else '-'}/{director.chips_issued}, pool {pool}, "
        f"prizes paid {sum(paid.values())}"
    )
    return "; ".join(verdicts)


async def campaign(args: argparse.Namespace, database_url: str) -> Findings:
    rng = random.Random(args.seed)
    findings = Findings()
    log = Path(tempfile.mkdtemp(prefix="feltd-crash-")) / "serve.log"
    anchor = time.time()
    server = ServerProcess(database_url, _free_port(), args.speed, anchor, log)
    url = f"ws://127.0.0.1:{server.port}/"
    async with open_store(database_url, max_size=4) as store:
        server.start()
        await server.healthy()
        try:
            while findings.kills < args.kills or findings.tournaments == 0:
                findings.tournaments += 1
                tournament_id = f"crash{findings.tournaments}"
                names = [f"c{findings.tournaments}p{n:02d}" for n in range(args.players)]
                tokens = {}
                for name in names:
                    created = await store.players.add(name, player_id=name)
                    tokens[name] = created.token
                    await store.ledger.post(
                        [
                            Transfer(
                                CASHIER,
                                player_account(name),
                                100_000,
                                f"crash-deposit:{name}",
                                Reason.DEPOSIT,
                            )
                        ]
                    )
                toml = _tournament_toml(tournament_id, args.players)
                clock_now = anchor + (time.time() - anchor) * args.speed
                starts = dt.datetime.fromtimestamp(clock_now + 6 * args.speed, dt.UTC)  # 6 real seconds
                await store.tournaments.create_from_toml(toml, starts_at=starts)
                stop = asyncio.Event()
                bots = [Bot(name, tokens[name], url, tournament_id, rng.randrange(1 << 30)) for name in names]
                playing = [asyncio.create_task(bot.run(stop)) for bot in bots]
                deadline = time.monotonic() + args.tournament_timeout
                print(f"tournament {tournament_id}: {args.players} bots", flush=True)
                progress = _Progress(-1, time.monotonic())
                killed_before_play = False
                while time.monotonic() < deadline:
                    status = (await store.tournaments.get(tournament_id)).status.value
                    if status in ("finished", "cancelled"):
                        break
                    stalled = await _stalled(store, tournament_id, status, progress, args.stall_seconds)
                    if stalled is not None:
                        findings.problems.append(stalled)
                        print(f"tournament {tournament_id}: {stalled}", flush=True)
                        for line in _errors_logged(log)[-20:]:
                            print(f"  server: {line}", flush=True)
                        break
                    if findings.kills < args.kills and killed_before_play and status != "running":
                        # one kill in registration is enough; the rest are drawn from play, where
                        # the hands and eliminations are
                        await asyncio.sleep(0.2)
                    elif findings.kills < args.kills:
                        killed_before_play = killed_before_play or status != "running"
                        await asyncio.sleep(rng.uniform(args.min_gap, args.max_gap))
                        server.kill()
                        findings.kills += 1
                        await asyncio.sleep(rng.uniform(0.0, 0.5))
                        verdict = await check(store, tournament_id, toml, findings, final=False)
                        server.start()
                        await server.healthy()
                        print(f"kill {findings.kills:3d}: {verdict}", flush=True)
                    else:
                        await asyncio.sleep(0.5)
                stop.set()
                await asyncio.gather(*playing, return_exceptions=True)
                verdict = await check(store, tournament_id, toml, findings, final=True)
                print(f"tournament {tournament_id} over: {verdict}", flush=True)
        finally:
            server.stop()
    print(f"server log: {log}")
    return findings


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10, help="SIGKILLs in all (default 10)")
    parser.add_argument("--players", type=int, default=18, help="bots per tournament (default 18)")
    parser.add_argument("--speed", type=float, default=30.0, help="the server clock's speed (default 30)")
    parser.add_argument("--min-gap", type=float, default=0.5, help="least real seconds between kills")
    parser.add_argument("--max-gap", type=float, default=4.0, help="most real seconds between kills")
    parser.add_argument("--seed", type=int, default=1, help="chooses the kill moments and the bots' play")
    parser.add_argument(
        "--stall-seconds",
        type=float,
        default=90.0,
        help="real seconds a running tournament may go without a hand before it counts as stuck",
    )
    parser.add_argument("--tournament-timeout", type=float, default=900.0, help="real seconds per tournament")
    parser.add_argument(
        "--keep-database", action="store_true", help="leave the campaign's database for inspection (printed)"
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    server_url = os.environ.get("DATABASE_URL")
    if server_url:
        database_url = await create_database(server_url, f"feltd_crash_{uuid.uuid4().hex[:8]}")
        try:
            findings = await campaign(args, database_url)
        finally:
            if args.keep_database:
                print(f"database kept: {database_url}")
            else:
                await drop_database(server_url, database_url)
    else:
        with tempfile.TemporaryDirectory(prefix="feltd-crash-db-") as folder:
            async with open_store(None, data_dir=Path(folder) / "pg") as store:
                findings = await campaign(args, store.url)
    print(
        f"summary: {findings.kills} kills over {findings.tournaments} tournaments, {findings.checks} checks, "
        f"{findings.chips_lost} chips lost, {findings.cents_lost} cents lost, "
        f"{findings.double_payments} double payments, {findings.finished} of {findings.tournaments} "
        f"tournaments finished ({time.monotonic() - started:.0f} s)"
    )
    for problem in findings.problems:
        print(f"  problem: {problem}")
    ok = not findings.problems and findings.finished == findings.tournaments
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
