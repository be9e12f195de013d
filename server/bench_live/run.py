"""The controller behind `feltd bench live`: rounds of feltd and of the bare relay, the figures.

For each number of players, each round starts a fresh server process (``feltd serve`` on a
database copied from a template that holds the players, or the relay), measures its resident set
before and after the players connect (memory per connection, idle), then has the players
register in a 9-handed tournament with hour-long levels at normal clock speed, starts it (an
operator's ``op_tournament_start``), lets it warm up and measures a window at the chosen think
time: latency (p50, p99, max), actions/s, errors, the server's CPU (from /proc/PID/stat) and
resident set. The saturation run then shortens the think time step by step until p99 passes
50 ms. feltd and relay rounds alternate, and medians over rounds are reported.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import asyncpg
import msgpack

from engine.tournament.transfers import CASHIER, Reason, Transfer, player_account
from server.bench_live.load import FELTD, RELAY, GeneratorPlan, generator_main, raise_file_limit
from server.store.connection import open_store
from server.store.databases import create_database, database_name, drop_database, with_database
from server.table_actor import HAND_GAP_SECONDS

TARGET_P99 = 0.050  # seconds: the saturation run's bound
SATURATION_FACTORS = (0.5, 0.35, 0.25, 0.18, 0.12, 0.09, 0.06, 0.03, 0.0)  # of the think time, step by step
DEPOSIT_CENTS = 1_000_000
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Window:
    """One measured stretch: latencies of acts sent in it, and the server's use of the machine."""

    think: tuple[float, float]
    seconds: float
    latencies: list[float]
    errors: Counter[str]
    server_cpu: float  # percent of one core
    generator_cpu: float  # percent of one core, all generator processes together
    rss: int  # bytes, at the end
    frames_per_second: float  # frames the players received (every player's copy counted)
    generator_lag: list[float] = field(default_factory=list)  # seconds late, 10 ms ticks, all generators
    # feltd: action_taken copies over hand_started copies received in the window (both go to
    # every player at the table); NaN for the relay, which deals no hands
    actions_per_hand: float = math.nan
    tables: int = 0  # feltd: the tables in play (players / 9, rounded up); 0 for the relay

    @property
    def pause_bound(self) -> float:
        """The most actions/s feltd's tables can make at think time 0 and no latency at all: each
        table plays ``actions_per_hand`` actions, then pauses HAND_GAP_SECONDS before the next
        hand. NaN for the relay, whose bots pass the turn round the table without a pause."""
        if not self.tables or math.isnan(self.actions_per_hand):
            return math.nan
        return self.tables * self.actions_per_hand / HAND_GAP_SECONDS

    def generator_lag_percentile(self, q: float) -> float:
        if not self.generator_lag:
            return math.nan
        ordered = sorted(self.generator_lag)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def actions_per_second(self) -> float:
        return len(self.latencies) / self.seconds

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return math.nan
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Round:
    mode: str
    players: int
    connected: int = 0
    seated: int = 0
    connect_seconds: float = 0.0
    register_seconds: float = 0.0
    rss_idle: int = 0
    rss_connected: int = 0
    steady: Window | None = None
    saturation: list[Window] = field(default_factory=list)
    load: str = ""

    @property
    def bytes_per_connection(self) -> float:
        return (self.rss_connected - self.rss_idle) / max(1, self.connected)

    @property
    def best(self) -> Window | None:
        """The saturation step with the most actions/s and p99 under the target."""
        under = [w for w in self.saturation if w.percentile(0.99) <= TARGET_P99]
        return max(under, key=lambda w: w.actions_per_second, default=None)


# -- processes --------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15)


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Generators:
    """The load-generator processes of one round and the pipes to them."""

    def __init__(self, plans: list[GeneratorPlan]) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipes: list[Connection] = []
        self.processes: list[Any] = []
        for plan in plans:
            ours, theirs = context.Pipe()
            process = context.Process(target=generator_main, args=(theirs, plan), daemon=True)
            process.start()
            theirs.close()
            self.pipes.append(ours)
            self.processes.append(process)

    def send(self, *command: Any) -> None:
        for pipe in self.pipes:
            pipe.send(command)

    def ask(self, *command: Any, timeout: float = 900.0) -> list[Any]:
        self.send(*command)
        answers = []
        for pipe in self.pipes:
            if not pipe.poll(timeout):
                raise RuntimeError(f"a load generator did not answer {command[0]!r} in {timeout:g} s")
            answers.append(pipe.recv())
        return answers

    def cpu_seconds(self) -> float:
        return sum(cpu_seconds(p.pid) for p in self.processes if p.is_alive())

    def status(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for answer in self.ask("status", timeout=60):
            total.update(answer)
        return dict(total)

    def close(self) -> None:
        for pipe in self.pipes:
            with contextlib.suppress(OSError):
                pipe.send(("close",))
        for pipe, process in zip(self.pipes, self.processes, strict=True):
            if pipe.poll(30):
                with contextlib.suppress(EOFError):
                    pipe.recv()
            process.join(10)
            if process.is_alive():
                process.kill()
            pipe.close()


# -- the database: players once (a template), a copy per feltd round ---------------------------------


@dataclass
class Accounts:
    template_url: str
    players: list[tuple[str, str]]  # (id, token)
    operator_token: str


def tournament_toml(tournament_id: str, players: int) -> str:
    levels = "".join(
        f"[[levels]]\nsmall_blind = {small}\nbig_blind = {small * 2}\nminutes = 60\n\n"
        for small in (50, 100, 200, 400)
    )
    return (
        f'id = "{tournament_id}"\nname = "feltd bench live, {players} players"\nbuy_in = 1000\nfee = 100\n'
        f"starting_stack = 100000\ntable_size = 9\nmin_players = 2\nmax_players = {max(players, 2)}\n"
        f'late_registration_minutes = 60\n\n[breaks]\nmode = "none"\n\n{levels}'
    )


async def make_accounts(server_url: str, count: int) -> Accounts:
    """A template database with ``count`` players (each with a deposit) and an operator."""
    template = await create_database(server_url, "feltd_benchlive")
    tokens: list[tuple[str, str]] = []
    async with open_store(template, max_size=16) as store:
        gate = asyncio.Semaphore(16)

        async def one(n: int) -> tuple[str, str]:
            name = f"b{n:05d}"
            async with gate:
                created = await store.players.add(name, player_id=name)
                await store.ledger.post(
                    [Transfer(CASHIER, player_account(name), DEPOSIT_CENTS, f"bench:{name}", Reason.DEPOSIT)]
                )
            return name, created.token

        tokens = list(await asyncio.gather(*(one(n) for n in range(count))))
        operator = await store.players.add_operator("bench-operator")
    return Accounts(template, tokens, operator.token)


async def copy_database(server_url: str, template_url: str, name: str) -> str:
    conn = await asyncpg.connect(server_url, timeout=30)
    try:
        template = database_name(template_url)
        await conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"', timeout=300)
    finally:
        await conn.close()
    return with_database(server_url, name)


async def create_tournament(database_url: str, tournament_id: str, players: int) -> None:
    async with open_store(database_url, max_size=2) as store:
        # an hour away: the bench starts it (op_tournament_start) once everyone is registered
        start = datetime.now(UTC) + timedelta(hours=1)
        await store.tournaments.create_from_toml(tournament_toml(tournament_id, players), starts_at=start)


def operator_start(url: str, token: str, tournament_id: str) -> None:
    from websockets.sync.client import connect

    with connect(url, subprotocols=["feltd.msgpack.v1"], open_timeout=30) as ws:  # type: ignore[list-item]
        ws.send(
            msgpack.packb({"type": "hello", "protocol": 1, "token": token, "client": "feltd-bench-live/1"})
        )
        ws.send(
            msgpack.packb(
                {"type": "op_tournament_start", "request_id": "start", "tournament_id": tournament_id}
            )
        )
        while True:
            message = msgpack.unpackb(ws.recv(timeout=120))
            if message.get("request_id") == "start":
                if message["type"] != "ack":
                    raise RuntimeError(f"op_tournament_start was refused: {message}")
                return


# -- one round --------------------------------------------------------------------------------------


class Bench:
    def __init__(
        self, args: argparse.Namespace, server_url: str | None, accounts: Accounts | None, log_dir: Path
    ) -> None:
        self.args = args
        self.server_url = server_url
        self.accounts = accounts
        self.log_dir = log_dir
        self.round_number = 0
        self.tables = 0  # feltd's tables in the round under way (0: the relay)
        self.think_changed_at = 0.0

    def say(self, text: str) -> None:
        print(f"  [{time.strftime('%H:%M:%S')}] {text}", flush=True)

    def plans(self, mode: str, port: int, players: int) -> list[GeneratorPlan]:
        if mode == FELTD:
            assert self.accounts is not None
            chosen = [(i, pid, token) for i, (pid, token) in enumerate(self.accounts.players[:players])]
        else:
            chosen = [(i, str(i), str(i)) for i in range(players)]
        count = min(self.args.processes, players)
        return [
            GeneratorPlan(
                "127.0.0.1",
                port,
                mode,
                chosen[k::count],
                players,
                9,
                seed=self.args.seed + k,
                lost_after=self.args.lost_after,
            )
            for k in range(count)
        ]

    def start_server(
        self, mode: str, port: int, database_url: str | None, players: int
    ) -> subprocess.Popen[bytes]:
        log = open(self.log_dir / f"round{self.round_number}-{mode}.log", "wb")  # noqa: SIM115
        if mode == FELTD:
            assert database_url is not None
            command = [
                sys.executable,
                "-m",
                "server.cli.main",
                "serve",
                "--port",
                str(port),
                "--database-url",
                database_url,
                # the players, and the operator's connection that starts the tournament
                "--max-connections",
                str(max(10_000, players + 100)),
            ]
        else:
            command = [sys.executable, "-m", "server.bench_live.relay", "--port", str(port)]
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the {mode} server exited ({process.returncode}): see {log.name}")
            try:
                if mode == FELTD:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()
                else:
                    socket.create_connection(("127.0.0.1", port), timeout=2).close()
                return process
            except OSError:
                time.sleep(0.2)
        process.kill()
        raise RuntimeError(f"the {mode} server did not answer within 120 s: see {log.name}")

    def measure(
        self,
        generators: Generators,
        pid: int,
        think: tuple[float, float],
        seconds: float,
        then: tuple[float, float] | None = None,
    ) -> Window:
        """A window of ``seconds`` at ``think``; ``then``: the next step's think time, which
        starts (its warm-up) while this window's last acts are waited for."""
        status0 = generators.status()
        started, server0, gen0 = time.monotonic(), cpu_seconds(pid), generators.cpu_seconds()
        time.sleep(seconds)
        ended, server1, gen1 = time.monotonic(), cpu_seconds(pid), generators.cpu_seconds()
        status1 = generators.status()
        hands = status1.get("hand_started", 0) - status0.get("hand_started", 0)
        actions = status1.get("action_taken", 0) - status0.get("action_taken", 0)
        rss = rss_bytes(pid)
        if then is not None:
            generators.send("think", *then)
            self.think_changed_at = time.monotonic()
        # until the window's last acts are answered, or counted lost (errors) by the generators
        deadline = time.monotonic() + self.args.lost_after + 0.5
        while time.monotonic() < deadline and sum(generators.ask("unanswered", ended, timeout=60)):
            time.sleep(0.1)
        latencies: list[float] = []
        errors: Counter[str] = Counter()
        lag: list[float] = []
        for part, part_errors, part_lag in generators.ask("window", started, ended, timeout=120):
            latencies.extend(part)
            errors.update(part_errors)
            lag.extend(part_lag)
        span = ended - started
        return Window(
            think,
            span,
            latencies,
            errors,
            100 * (server1 - server0) / span,
            100 * (gen1 - gen0) / span,
            rss,
            (status1.get("frames", 0) - status0.get("frames", 0)) / span,
            lag,
            actions / hands if hands else math.nan,
            self.tables,
        )

    def wait_for_play(self, generators: Generators, players: int) -> None:
        """Until about one act per table has been answered: at a big tournament's start the
        server first seats everyone and deals every table, a backlog no window should hold."""
        tables = -(-players // 9)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and generators.status().get("answered", 0) < tables:
            time.sleep(1.0)
        self.say(f"play flows: {generators.status().get('answered', 0)} acts answered")

    def run_round(self, mode: str, players: int, saturate: bool) -> Round:
        self.round_number += 1
        result = Round(mode, players, load=load_average())
        port = free_port()
        database_url = None
        tournament_id = f"bench-live-{players}"
        if mode == FELTD:
            assert self.accounts is not None and self.server_url is not None
            name = f"{database_name(self.accounts.template_url)}_r{self.round_number}"
            database_url = asyncio.run(copy_database(self.server_url, self.accounts.template_url, name))
            asyncio.run(create_tournament(database_url, tournament_id, players))
        server = self.start_server(mode, port, database_url, players)
        generators: Generators | None = None
        try:
            time.sleep(2.0)
            result.rss_idle = rss_bytes(server.pid)
            generators = Generators(self.plans(mode, port, players))
            think = (self.args.think_min, self.args.think_max)
            # the bots' think time (--think-min/--think-max): before any of them plays
            generators.send("think", *think)
            answers = generators.ask("connect")
            result.connected = sum(answer[1] for answer in answers)
            result.connect_seconds = max(answer[3] for answer in answers)
            failures: Counter[str] = Counter()
            for answer in answers:
                failures.update(answer[2])
            time.sleep(3.0)
            result.rss_connected = rss_bytes(server.pid)
            self.say(
                f"{mode}: {result.connected}/{players} connected in {result.connect_seconds:.1f} s"
                + (f" (failed: {dict(failures)})" if failures else "")
                + f"; server RSS {result.rss_idle / 2**20:.1f} -> {result.rss_connected / 2**20:.1f} MiB"
                f" = {result.bytes_per_connection / 1024:.1f} KiB per connection"
            )
            if mode == FELTD:
                started = time.monotonic()
                answers = generators.ask("register", tournament_id)
                registered = sum(answer[1] for answer in answers)
                result.register_seconds = time.monotonic() - started
                refused: Counter[str] = Counter()
                received: Counter[str] = Counter()
                for answer in answers:
                    refused.update(answer[2])
                    received.update(answer[3])
                self.say(
                    f"feltd: {registered} registered in {result.register_seconds:.1f} s"
                    + (f" (errors so far: {dict(refused)})" if refused else "")
                    + f"; frames the players received meanwhile: {dict(received.most_common(4))}"
                    + "; starting the tournament"
                )
                assert self.accounts is not None
                operator_start(f"ws://127.0.0.1:{port}/", self.accounts.operator_token, tournament_id)
                deadline = time.monotonic() + 300
                while time.monotonic() < deadline:
                    status = generators.status()
                    if status.get("seated", 0) >= registered:
                        break
                    time.sleep(1.0)
                result.seated = generators.status().get("seated", 0)
                self.tables = -(-result.seated // 9)
                self.say(f"feltd: {result.seated} seated")
            else:
                result.seated = result.connected
                self.tables = 0
                generators.send("start")
            self.wait_for_play(generators, players)
            time.sleep(self.args.warmup)
            steps = [(think[0] * f, think[1] * f) for f in SATURATION_FACTORS] if saturate else []
            result.steady = self.measure(
                generators, server.pid, think, self.args.seconds, steps[0] if steps else None
            )
            self.say(f"{mode}: {describe(result.steady)}")
            for number, step in enumerate(steps):
                # the step's think time was set as the window before it ended: warm up from there
                time.sleep(max(0.0, self.args.step_warmup - (time.monotonic() - self.think_changed_at)))
                following = steps[number + 1] if number + 1 < len(steps) else None
                window = self.measure(generators, server.pid, step, self.args.step_seconds, following)
                result.saturation.append(window)
                self.say(f"{mode} saturation: {describe(window)}")
                # it ends once two steps in a row are over the target and the rate stopped
                # rising: on a shared machine one noisy window does not show the server saturated,
                # and the peak rate is only known once more demand no longer brings more actions
                last_two = result.saturation[-2:]
                if (
                    len(last_two) == 2
                    and all(w.percentile(0.99) > TARGET_P99 for w in last_two)
                    and last_two[1].actions_per_second <= 1.1 * last_two[0].actions_per_second
                ):
                    break
        finally:
            if generators is not None:
                generators.close()
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            if database_url is not None and self.server_url is not None:
                asyncio.run(drop_database(self.server_url, database_url))
        return result


def ms(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{seconds * 1000:.1f}"


def describe(window: Window) -> str:
    errors = sum(window.errors.values())
    detail = f" ({dict(window.errors)})" if errors else ""
    hands = (
        ""
        if math.isnan(window.pause_bound)
        else f"{window.actions_per_hand:.1f} actions per hand (bound by the pause between hands: "
        f"{window.tables} tables x {window.actions_per_hand:.1f} / {HAND_GAP_SECONDS:g} s = "
        f"{window.pause_bound:.0f} actions/s), "
    )
    return (
        f"think {window.think[0]:g}-{window.think[1]:g} s: {window.actions_per_second:.0f} actions/s, "
        f"p50 {ms(window.percentile(0.5))} ms, p99 {ms(window.percentile(0.99))} ms, "
        f"max {ms(max(window.latencies, default=math.nan))} ms, errors {errors}{detail}, {hands}"
        f"frames in {window.frames_per_second:.0f}/s, "
        f"server CPU {window.server_cpu:.0f} %, RSS {window.rss / 2**20:.0f} MiB, "
        f"generators CPU {window.generator_cpu:.0f} %, generator loop lag "
        f"p99 {ms(window.generator_lag_percentile(0.99))} ms, "
        f"max {ms(max(window.generator_lag, default=math.nan))} ms"
    )


def median(values: list[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


def summary(rounds: list[Round]) -> list[dict[str, Any]]:
    """One row per (players, mode): medians over the rounds."""
    rows = []
    keys = sorted({(r.players, r.mode) for r in rounds}, key=lambda k: (k[0], k[1] != FELTD))
    for players, mode in keys:
        same = [r for r in rounds if r.players == players and r.mode == mode]
        steady = [r.steady for r in same if r.steady is not None]
        best = [r.best for r in same if r.saturation]
        rows.append(
            {
                "players": players,
                "server": mode,
                "rounds": len(same),
                "connected": min(r.connected for r in same),
                "seated": min(r.seated for r in same),
                "p50_ms": median([w.percentile(0.5) * 1000 for w in steady]),
                "p99_ms": median([w.percentile(0.99) * 1000 for w in steady]),
                "max_ms": median([max(w.latencies, default=math.nan) * 1000 for w in steady]),
                "actions_per_s": median([w.actions_per_second for w in steady]),
                "errors": max((sum(w.errors.values()) for w in steady), default=0),
                "server_cpu_pct": median([w.server_cpu for w in steady]),
                "server_rss_mib": median([w.rss / 2**20 for w in steady]),
                # how late the generators' own loops ran: a tail they share is not the server's
                "generator_lag_p99_ms": median([w.generator_lag_percentile(0.99) * 1000 for w in steady]),
                "generator_lag_max_ms": median(
                    [max(w.generator_lag, default=math.nan) * 1000 for w in steady]
                ),
                "kib_per_connection": median([r.bytes_per_connection / 1024 for r in same]),
                "saturation_actions_per_s": (
                    median([b.actions_per_second if b is not None else 0.0 for b in best]) if best else None
                ),
                # the most actions/s any step reached, whatever its p99: where the CPU gives out
                "peak_actions_per_s": (
                    median([max(w.actions_per_second for w in r.saturation) for r in same if r.saturation])
                    if best
                    else None
                ),
                # feltd: the rate its tables cannot pass at think time 0, whatever the CPU (the
                # pause between hands), from the actions per hand of every saturation step
                "pause_bound_actions_per_s": (
                    median([w.pause_bound for r in same for w in r.saturation]) if best else None
                ),
                "load": "; ".join(r.load for r in same),
            }
        )
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    print()
    print(
        "| players | server | p50 ms | p99 ms | max ms | actions/s | errors | server CPU | server RSS "
        "| KiB/connection | generator lag p99 / max ms | saturation actions/s (p99 < 50 ms) |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        saturation = row["saturation_actions_per_s"]
        print(
            f"| {row['players']:,} | {row['server']} | {row['p50_ms']:.1f} | {row['p99_ms']:.1f} | "
            f"{row['max_ms']:.0f} | {row['actions_per_s']:.0f} | {row['errors']} | "
            f"{row['server_cpu_pct']:.0f} % | "
            f"{row['server_rss_mib']:.0f} MiB | {row['kib_per_connection']:.1f} | "
            f"{row['generator_lag_p99_ms']:.1f} / {row['generator_lag_max_ms']:.0f} | "
            f"{'-' if saturation is None else f'{saturation:.0f}'} |"
        )
    by_size: dict[int, dict[str, dict[str, Any]]] = {}
    for row in rows:
        if row["saturation_actions_per_s"] is not None:
            by_size.setdefault(row["players"], {})[row["server"]] = row
    for players, pair in sorted(by_size.items()):
        for server, row in pair.items():
            bound = row["pause_bound_actions_per_s"]
            print(
                f"saturation at {players:,} players, {server}: "
                f"{row['saturation_actions_per_s']:.0f} actions/s with p99 under 50 ms; "
                f"peak {row['peak_actions_per_s']:.0f} actions/s at any p99"
                + (
                    ""
                    if bound is None or math.isnan(bound)
                    else f"; its tables' bound from the pause between hands: {bound:.0f} actions/s"
                )
            )
        if FELTD in pair and RELAY in pair and pair[RELAY]["saturation_actions_per_s"] > 0:
            ratio = pair[FELTD]["saturation_actions_per_s"] / pair[RELAY]["saturation_actions_per_s"]
            peak = pair[FELTD]["peak_actions_per_s"] / max(1e-9, pair[RELAY]["peak_actions_per_s"])
            print(
                f"saturation at {players:,} players: ratio feltd/relay {ratio:.2f} with p99 under 50 ms, "
                f"{peak:.2f} at the peak"
            )


def run_live_bench(args: argparse.Namespace, server_url: str | None) -> int:
    soft, hard = raise_file_limit()
    print(
        f"file descriptors: RLIMIT_NOFILE soft {soft} -> {hard} (the hard limit), inherited by the server "
        f"and load-generator processes; {os.cpu_count()} CPUs; load average {load_average()}",
        flush=True,
    )
    sizes = sorted(set(args.players))
    largest = max(sizes)
    saturation_size = args.saturation_players or min(sizes)
    needs_fds = largest // max(1, min(args.processes, largest)) + 100
    if largest + 100 > hard or needs_fds > hard:
        print(
            f"note: {largest} connections need more file descriptors than the hard limit {hard}", flush=True
        )
    modes = [FELTD, RELAY] if args.server == "both" else [args.server]
    print(
        f"lean load generator (asyncio.Protocol + minimal RFC 6455 client framing) in {args.processes} "
        f"processes; think time {args.think_min:g}-{args.think_max:g} s; windows: warm-up {args.warmup:g} s, "
        f"measure {args.seconds:g} s",
        flush=True,
    )
    accounts = None
    log_dir = Path(tempfile.mkdtemp(prefix="feltd-bench-live-"))
    if FELTD in modes:
        assert server_url is not None
        started = time.monotonic()
        accounts = asyncio.run(make_accounts(server_url, max([*sizes, saturation_size])))
        print(
            f"made {len(accounts.players)} players with deposits in {time.monotonic() - started:.1f} s",
            flush=True,
        )
    rounds: list[Round] = []
    bench = Bench(args, server_url, accounts, log_dir)
    try:
        for players in sorted(set([*sizes, saturation_size])):
            for number in range(args.rounds):
                order = modes if number % 2 == 0 else modes[::-1]
                for mode in order:
                    print(
                        f"{players:,} players, round {number + 1}, {mode} (load average {load_average()})",
                        flush=True,
                    )
                    rounds.append(
                        bench.run_round(
                            mode, players, saturate=players == saturation_size and args.saturation
                        )
                    )
    finally:
        if accounts is not None and server_url is not None:
            asyncio.run(drop_database(server_url, accounts.template_url))
    rows = summary(rounds)
    print_table(rows)
    print(f"load average at the end: {load_average()}")
    shutil.rmtree(log_dir, ignore_errors=True)  # kept (and named in the error) when a round fails
    if args.json is not None:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0
