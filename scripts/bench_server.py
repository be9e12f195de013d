"""Benchmark: a 200-player bot tournament against `feltd serve` over real WebSockets.

The server runs as its own process (`feltd serve`, its clock `--speed` times fast) on
$DATABASE_URL's PostgreSQL (a fresh database, dropped at the end) or, without it, an embedded
PostgreSQL in a temporary folder. The bots (all MessagePack, `--json` of them on JSON) run in
this process: they register, an operator starts the tournament once all are in, and they play
it to the end (or for `--seconds`).

It prints, for the time the tournament was played:

- frames/s the server sent (its `/metrics` `frames_out` over the play time), on average and in
  the busiest 5-second window, and bytes/s;
- action -> broadcast latency, as the player sees it: from a bot sending `act` to that bot
  receiving the `action_taken` the table made of it (median, p95, p99, max), plus the server's
  own share of it (`/metrics` histogram: from the act arriving to its broadcast being queued);
- hands/s (`/metrics` `hands_total` over the play time) and actions/s.

    python scripts/bench_server.py [--players 200] [--speed 60] [--seconds 0]

The bots act at once (a time-out is counted, not timed); the figures are the machine's: on a
shared machine, say so with them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from client.connection import Connection
from engine.tournament.transfers import CASHIER, Reason, Transfer, player_account
from protocol import client_messages as cm
from protocol import operator_requests as op
from protocol import server_messages as sm
from protocol import table_events as te
from protocol import tournament_events as tev
from protocol.codec import JSON_SUBPROTOCOL, MSGPACK_SUBPROTOCOL
from protocol.kinds import ActionKind, RegistrationStatus
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database

ROOT = Path(__file__).resolve().parent.parent


def _tournament_toml(tournament_id: str, players: int) -> str:
    levels = "".join(
        f"[[levels]]\nsmall_blind = {small}\nbig_blind = {small * 2}\nminutes = 6\n\n"
        for small in (10, 20, 40, 75, 150, 300, 600, 1200, 2500, 5000, 10000, 20000, 40000, 80000)
    )
    return (
        f'id = "{tournament_id}"\nname = "Bench {tournament_id}"\nbuy_in = 1000\nfee = 100\n'
        f"starting_stack = 1500\ntable_size = 9\nmin_players = 2\nmax_players = {players}\n"
        # a long shot clock: the bench measures the server, not bots timing out
        f'[clock]\nshot_clock_seconds = 120\n\n[breaks]\nmode = "none"\n\n[payouts]\npercent_paid = 15\n\n'
        f"{levels}"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _metrics(port: int) -> dict[str, float]:
    """The server's counters (and the action latency histogram's buckets, by bound)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


def _histogram_quantile(values: dict[str, float], quantile: float) -> str:
    """The bucket bound under which ``quantile`` of the server's action latencies fall."""
    total = values.get("feltd_action_latency_seconds_count", 0.0)
    if not total:
        return "-"
    buckets = sorted(
        (float(name.split('le="')[1].rstrip('"}')), count)
        for name, count in values.items()
        if name.startswith("feltd_action_latency_seconds_bucket") and "+Inf" not in name
    )
    for bound, count in buckets:
        if count >= quantile * total:
            return f"<= {bound * 1000:g} ms"
    return f"> {buckets[-1][0] * 1000:g} ms"


def _quantile(ordered: list[float], quantile: float) -> float:
    return ordered[min(len(ordered) - 1, int(quantile * len(ordered)))]


@dataclass
class Bot:
    """A player that registers, plays every turn of its at once, and times its actions."""

    name: str
    connection: Connection
    tournament_id: str
    seed: int
    latencies: list[float]
    registered: bool = False
    ended: bool = False
    acted: int = 0
    timeouts: int = 0
    hands: dict[int, int] = field(default_factory=dict)
    seats: dict[int, int] = field(default_factory=dict)  # table -> own seat
    sent: dict[int, float] = field(default_factory=dict)  # table -> when the last act left

    async def run(self, stop: asyncio.Event) -> None:
        rng = random.Random(self.seed)
        await self.connection.connect()
        await self.connection.send(
            cm.Register(tournament_id=self.tournament_id, request_id=f"reg-{self.name}")
        )
        while not self.ended and not stop.is_set():
            try:
                message = await self.connection.recv(0.5)
            except TimeoutError:
                continue
            await self._react(message, rng)
        with contextlib.suppress(Exception):
            await self.connection.close()

    async def _react(self, message: sm.ServerMessage, rng: random.Random) -> None:
        if isinstance(message, sm.TableEvent):
            event = message.event
            table_id = message.table_id
            if isinstance(event, te.ActionTaken) and event.seat == self.seats.get(table_id):
                sent = self.sent.pop(table_id, None)
                if event.timed_out:
                    self.timeouts += 1
                elif sent is not None:
                    self.latencies.append(time.perf_counter() - sent)
            elif isinstance(event, te.HandStarted):
                self.hands[table_id] = event.hand_number
                self.sent.pop(table_id, None)
            elif isinstance(event, te.Turn) and event.legal is not None:
                await self._act(table_id, self.hands[table_id], event.legal, rng)
        elif isinstance(message, sm.Seated):
            self.seats[message.table_id] = message.seat
        elif isinstance(message, sm.TableSnapshot):
            if message.hand_number is not None:
                self.hands[message.table_id] = message.hand_number
            if message.legal is not None and message.hand_number is not None:
                await self._act(message.table_id, message.hand_number, message.legal, rng)
        elif isinstance(message, sm.Registration):
            self.registered = self.registered or message.status is RegistrationStatus.REGISTERED
        elif isinstance(message, sm.TournamentEvent) and isinstance(message.event, tev.TournamentEnded):
            self.ended = True
        elif isinstance(message, sm.Error) and message.request_id is not None:
            self.sent.clear()  # a refused act (a turn that moved on): nothing to time

    async def _act(self, table_id: int, hand: int, legal: te.LegalView, rng: random.Random) -> None:
        roll = rng.random()
        amount: int | None = None
        # calm enough for a tournament of a few hundred hands (all-in bots end one in seconds)
        if legal.max_raise_to is not None and roll < 0.03:
            action, amount = ActionKind.RAISE, legal.max_raise_to
        elif legal.min_raise_to is not None and roll < 0.2:
            action, amount = ActionKind.RAISE, legal.min_raise_to
        elif legal.can_fold and roll > 0.55:
            action = ActionKind.FOLD
        else:
            action = ActionKind.CHECK_OR_CALL
        self.acted += 1
        self.sent[table_id] = time.perf_counter()
        await self.connection.send(
            cm.Act(
                table_id=table_id,
                hand_number=hand,
                action_id=f"{self.name}-{hand}-{self.acted}",
                action=action,
                amount=amount,
            )
        )


async def _healthy(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"feltd serve exited with {process.returncode}: see {log}")
        url = f"http://127.0.0.1:{port}/healthz"
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=1) as answer:
            if answer.status == 200:
                return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"feltd serve did not answer /healthz within 60 s: see {log}")


async def _wait(condition: Callable[[], bool], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def bench(args: argparse.Namespace, database_url: str) -> None:
    tournament_id = f"bench{uuid.uuid4().hex[:6]}"
    names = [f"b{number:03d}" for number in range(args.players)]
    async with open_store(database_url, max_size=4) as store:
        tokens = await _players(store, names)
        operator = await store.players.add_operator(f"bench-{tournament_id}")
        anchor = time.time()
        start = dt.datetime.fromtimestamp(anchor + 24 * 3600, dt.UTC)  # started by the operator
        await store.tournaments.create_from_toml(
            _tournament_toml(tournament_id, args.players), starts_at=start
        )
    port = _free_port()
    log = Path(tempfile.mkdtemp(prefix="feltd-bench-")) / "serve.log"
    script = Path(sys.executable).with_name("feltd")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "server.cli.main"]
    command += ["serve", "--port", str(port), "--speed", str(args.speed), "--clock-anchor", repr(anchor)]
    command += ["--database-url", database_url]
    with log.open("ab") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        await _healthy(server, port, log)
        url = f"ws://127.0.0.1:{port}/"
        latencies: list[float] = []
        bots = [
            Bot(
                name,
                Connection(
                    url,
                    token=tokens[name],
                    subprotocol=JSON_SUBPROTOCOL if index < args.json else MSGPACK_SUBPROTOCOL,
                    client_name=f"bench-{name}",
                ),
                tournament_id,
                seed=args.seed * 1_000_003 + index,
                latencies=latencies,
            )
            for index, name in enumerate(names)
        ]
        stop = asyncio.Event()
        playing = [asyncio.create_task(bot.run(stop)) for bot in bots]
        await _wait(lambda: all(bot.registered for bot in bots), "the registrations", 300)
        floor = Connection(url, token=operator.token, client_name="bench-floor")
        await floor.connect()
        before = _metrics(port)
        started = time.monotonic()
        await floor.send(op.OpTournamentStart(request_id="start", tournament_id=tournament_id))
        windows: deque[tuple[float, float]] = deque([(started, before["feltd_frames_out_total"])])
        peak = 0.0
        deadline = started + args.seconds if args.seconds > 0 else float("inf")
        while not all(bot.ended for bot in bots) and time.monotonic() < deadline:
            await asyncio.sleep(1.0)
            now, frames = time.monotonic(), _metrics(port)["feltd_frames_out_total"]
            windows.append((now, frames))
            while windows[0][0] < now - 5.0:
                oldest = windows.popleft()
                peak = max(peak, (frames - oldest[1]) / (now - oldest[0]))
        after = _metrics(port)
        elapsed = time.monotonic() - started
        stop.set()
        await asyncio.gather(*playing, return_exceptions=True)
        await floor.close()
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()

    def delta(name: str) -> float:
        return after.get(name, 0.0) - before.get(name, 0.0)

    ordered = sorted(latencies)
    over = "to the end" if all(bot.ended for bot in bots) else f"for {args.seconds:g} s"
    print(
        f"{args.players} players ({args.json} on JSON), clock x{args.speed:g}, played {over}: {elapsed:.1f} s"
    )
    print(
        f"frames/s sent by the server: {delta('feltd_frames_out_total') / elapsed:,.0f} on average, "
        f"{peak:,.0f} in the busiest 5 s ({delta('feltd_frames_out_total'):,.0f} frames, "
        f"{delta('feltd_bytes_out_total') / elapsed / 1024:,.0f} KiB/s)"
    )
    if ordered:
        print(
            f"action -> broadcast latency (bot's act sent -> its action_taken received, {len(ordered):,} "
            f"actions): median {_quantile(ordered, 0.5) * 1000:.1f} ms, "
            f"p95 {_quantile(ordered, 0.95) * 1000:.1f} ms, p99 {_quantile(ordered, 0.99) * 1000:.1f} ms, "
            f"max {ordered[-1] * 1000:.1f} ms"
        )
    print(
        f"  the server's share (act read -> broadcast queued, /metrics histogram): median "
        f"{_histogram_quantile(after, 0.5)}, p95 {_histogram_quantile(after, 0.95)}, "
        f"p99 {_histogram_quantile(after, 0.99)}"
    )
    print(
        f"hands/s: {delta('feltd_hands_total') / elapsed:.2f} ({delta('feltd_hands_total'):.0f} hands); "
        f"actions/s: {delta('feltd_actions_total') / elapsed:.1f}; bots timed out "
        f"{sum(bot.timeouts for bot in bots)} times; send-queue drops "
        f"{delta('feltd_send_queue_drops_total'):.0f}, "
        f"slow closes {delta('feltd_slow_client_closes_total'):.0f}"
    )
    print(f"server log: {log}")


async def _players(store: Store, names: list[str]) -> dict[str, str]:
    tokens = {}
    for name in names:
        created = await store.players.add(name, player_id=name)
        tokens[name] = created.token
        deposit = Transfer(CASHIER, player_account(name), 100_000, f"bench-deposit:{name}", Reason.DEPOSIT)
        await store.ledger.post([deposit])
    return tokens


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=200, help="bots (default 200)")
    parser.add_argument("--json", type=int, default=4, help="bots on the JSON subprotocol (default 4)")
    parser.add_argument("--speed", type=float, default=60.0, help="the server clock's speed (default 60)")
    parser.add_argument("--seconds", type=float, default=0.0, help="stop after this long (default: the end)")
    parser.add_argument("--seed", type=int, default=1, help="the bots' play (default 1)")
    args = parser.parse_args(argv)
    server_url = os.environ.get("DATABASE_URL")
    if server_url:
        database_url = await create_database(server_url, f"feltd_bench_{uuid.uuid4().hex[:8]}")
        try:
            await bench(args, database_url)
        finally:
            await drop_database(server_url, database_url)
    else:
        with tempfile.TemporaryDirectory(prefix="feltd-bench-db-") as folder:
            async with open_store(None, data_dir=Path(folder) / "pg") as store:
                await bench(args, store.url)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
