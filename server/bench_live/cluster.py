"""`feltd bench live --workers N --gateways M`: the same players against a cluster of processes.

A cluster round starts a Redis server of its own (``redis-server`` on a free port, nothing saved:
its INFO counts this round's traffic only; ``$REDIS_URL`` when there is no such binary, under a
key prefix of its own), N ``feltd serve --role worker`` and M ``--role gateway`` processes on a
copy of the players' template database, and spreads the tournaments over the workers. The load
generators' processes each talk to one gateway, in turn. One measured window then reports the
latency as ``run.py`` does, the CPU and resident set of every process (gateways, workers, Redis,
and the PostgreSQL backends serving the round's database), and what the window cost per hand and
per action: Redis commands and bytes, PostgreSQL commits and rows, bytes on the client wire.

Leases decide which worker runs a tournament: the first worker to ask takes it, so one that
polls first would take them all. The bench gives each worker its share by stopping the others
(SIGSTOP) while it records that worker's tournaments and until their leases are held, at most a
few seconds, before any player connects; a stopped worker then resumes where it was.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import redis

from server.bench_live.load import FELTD, RELAY, GeneratorPlan, raise_file_limit
from server.bench_live.run import (
    Bench,
    Generators,
    Round,
    copy_database,
    cpu_seconds,
    create_tournament,
    free_port,
    load_average,
    make_accounts,
    operator_start,
    print_table,
    rss_bytes,
    summary,
)
from server.store.databases import database_name, drop_database

TOURNAMENTS = 4  # in every configuration, so that 1, 2 and 4 workers carry the same tables
SINGLE = "single"  # --workers 0: today's one `feltd serve --role all` process


@dataclass(frozen=True)
class Shape:
    workers: int  # 0: one --role all process
    gateways: int

    @property
    def label(self) -> str:
        return "1 process (--role all)" if self.workers == 0 else f"{self.workers}w/{self.gateways}g"


@dataclass
class Process:
    name: str  # gateway1, worker2 ...
    popen: subprocess.Popen[bytes]
    port: int
    log: Path


@dataclass
class Snapshot:
    """Counters read at one moment: a window's figures are the differences of two."""

    cpu: dict[str, float]  # seconds, per process name
    generators: dict[str, int]
    redis_commands: Counter[str]
    redis_net: tuple[int, int]  # bytes in, out
    redis_cpu: float
    postgres: dict[str, int]
    postgres_cpu: float  # the round database's backends, seconds
    backends: list[int]
    hands: int


@dataclass
class ClusterRound:
    shape: Shape
    players: int
    load: str
    connected: int = 0
    seated: int = 0
    tournaments: dict[str, list[str]] = field(default_factory=dict)  # worker -> its tournaments
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    cpu: dict[str, float] = field(default_factory=dict)  # % of one core, per process
    rss: dict[str, int] = field(default_factory=dict)  # bytes, per process
    costs: dict[str, float] = field(default_factory=dict)  # per hand and per action
    redis_commands: dict[str, float] = field(default_factory=dict)  # per hand, by command

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return math.nan
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- Redis and PostgreSQL counters -----------------------------------------------------------------


class OwnRedis:
    """A ``redis-server`` for one round: loopback, a free port, no persistence."""

    def __init__(self, log_dir: Path, port: int) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.log = log_dir / f"redis-{port}.log"
        self.popen = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(log_dir),
            ],
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.popen.poll() is not None:
                    raise RuntimeError(f"redis-server did not start: see {self.log}") from None
                time.sleep(0.1)
        client.close()

    def stop(self) -> None:
        self.popen.terminate()
        try:
            self.popen.wait(10)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()


def redis_counters(url: str) -> tuple[Counter[str], tuple[int, int], float, int]:
    """Calls per command, network bytes in and out, CPU seconds and resident set of the server."""
    client = redis.Redis.from_url(url)
    try:
        info: dict[str, Any] = client.info("all")
    finally:
        client.close()
    commands: Counter[str] = Counter()
    for key, value in info.items():
        if key.startswith("cmdstat_") and isinstance(value, dict):
            commands[key.removeprefix("cmdstat_")] = int(value["calls"])
    net = (int(info["total_net_input_bytes"]), int(info["total_net_output_bytes"]))
    cpu = float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
    return commands, net, cpu, int(info["used_memory_rss"])


POSTGRES_FIGURES = (
    "xact_commit",
    "xact_rollback",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "tup_fetched",
)


async def postgres_counters(database_url: str) -> tuple[dict[str, int], list[int], int]:
    """The database's pg_stat_database counters, its backends' process ids, its stored hands."""
    conn = await asyncpg.connect(database_url, timeout=30)
    try:
        row = await conn.fetchrow(
            f"SELECT {', '.join(POSTGRES_FIGURES)} FROM pg_stat_database WHERE datname = current_database()"
        )
        pids = [
            r["pid"]
            for r in await conn.fetch(
                "SELECT pid FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ]
        hands = await conn.fetchval("SELECT count(*) FROM hand_histories")
    finally:
        await conn.close()
    assert row is not None
    return {name: int(row[name]) for name in POSTGRES_FIGURES}, pids, int(hands)


def backends_cpu(pids: list[int]) -> float:
    """CPU seconds of the PostgreSQL backends (0 for those gone, or when the server is elsewhere)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += cpu_seconds(pid)
    return total


# -- the cluster ------------------------------------------------------------------------------------


class Cluster:
    """The processes of one round: workers, gateways (or the one --role all process)."""

    def __init__(self, bench: Bench, shape: Shape, database_url: str, redis_url: str, prefix: str) -> None:
        self.bench = bench
        self.shape = shape
        self.database_url = database_url
        self.redis_url = redis_url
        self.prefix = prefix
        self.workers: list[Process] = []
        self.gateways: list[Process] = []

    @property
    def processes(self) -> list[Process]:
        return [*self.gateways, *self.workers]

    def _start(self, name: str, role: str) -> Process:
        port = free_port()
        log = self.bench.log_dir / f"round{self.bench.round_number}-{name}.log"
        command = [
            sys.executable,
            "-m",
            "server.cli.main",
            "serve",
            "--role",
            role,
            "--port",
            str(port),
            "--database-url",
            self.database_url,
        ]
        if role != "all":
            command += ["--redis-url", self.redis_url, "--redis-prefix", self.prefix]
        popen = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
        return Process(name, popen, port, log)

    def _wait_healthy(self, processes: list[Process]) -> None:
        deadline = time.monotonic() + 120
        waiting = list(processes)
        while waiting:
            process = waiting[0]
            if process.popen.poll() is not None:
                raise RuntimeError(f"{process.name} exited ({process.popen.returncode}): see {process.log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{process.name} did not answer within 120 s: see {process.log}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{process.port}/healthz", timeout=2).read()
                waiting.pop(0)
            except OSError:
                time.sleep(0.2)

    def start(self, tournaments: list[str], players: int) -> dict[str, list[str]]:
        """Start the processes and record the tournaments; returns which worker runs which."""
        if self.shape.workers == 0:
            for tournament_id in tournaments:
                asyncio.run(create_tournament(self.database_url, tournament_id, players))
            self.gateways = [self._start("all", "all")]
            self._wait_healthy(self.gateways)
            return {"all": list(tournaments)}
        self.workers = [self._start(f"worker{n + 1}", "worker") for n in range(self.shape.workers)]
        self._wait_healthy(self.workers)
        shares = {w.name: tournaments[k :: self.shape.workers] for k, w in enumerate(self.workers)}
        for worker in self.workers:
            self._give(worker, shares[worker.name], players)
        self.gateways = [self._start(f"gateway{n + 1}", "gateway") for n in range(self.shape.gateways)]
        self._wait_healthy(self.gateways)
        return shares

    def _give(self, worker: Process, tournaments: list[str], players: int) -> None:
        """Record ``tournaments`` while only ``worker`` runs, until it holds their leases."""
        others = [w for w in self.workers if w is not worker]
        client = redis.Redis.from_url(self.redis_url)
        for other in others:
            other.popen.send_signal(signal.SIGSTOP)
        try:
            for tournament_id in tournaments:
                asyncio.run(create_tournament(self.database_url, tournament_id, players))
            deadline = time.monotonic() + 60
            keys = [f"{self.prefix}:lease:{t}" for t in tournaments]
            while not all(client.exists(key) for key in keys):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{worker.name} did not take {tournaments}: see {worker.log}")
                time.sleep(0.1)
        finally:
            for other in others:
                other.popen.send_signal(signal.SIGCONT)
            client.close()

    def stop(self) -> None:
        for process in self.processes:
            if process.popen.poll() is None:
                process.popen.terminate()
        for process in self.processes:
            try:
                process.popen.wait(15)
            except subprocess.TimeoutExpired:
                process.popen.kill()
                process.popen.wait()


# -- one round --------------------------------------------------------------------------------------


def plans(bench: Bench, ports: list[int], players: int) -> list[GeneratorPlan]:
    """The players split over the generator processes, each process on one gateway in turn."""
    assert bench.accounts is not None
    chosen = [(i, pid, token) for i, (pid, token) in enumerate(bench.accounts.players[:players])]
    count = min(max(bench.args.processes, len(ports)), players)
    return [
        GeneratorPlan(
            "127.0.0.1",
            ports[k % len(ports)],
            FELTD,
            chosen[k::count],
            players,
            9,
            seed=bench.args.seed + k,
            lost_after=bench.args.lost_after,
        )
        for k in range(count)
    ]


def snapshot(cluster: Cluster, generators: Generators, backends: list[int] | None) -> Snapshot:
    cpu = {}
    for process in cluster.processes:
        with contextlib.suppress(OSError):
            cpu[process.name] = cpu_seconds(process.popen.pid)
    commands, net, redis_cpu, _ = (
        redis_counters(cluster.redis_url) if cluster.workers else (Counter(), (0, 0), 0.0, 0)
    )
    postgres, pids, hands = asyncio.run(postgres_counters(cluster.database_url))
    chosen = pids if backends is None else backends
    return Snapshot(
        cpu, generators.status(), commands, net, redis_cpu, postgres, backends_cpu(chosen), chosen, hands
    )


def run_cluster_round(bench: Bench, shape: Shape, players: int, redis_fallback: str | None) -> ClusterRound:
    bench.round_number += 1
    result = ClusterRound(shape, players, load=load_average())
    assert bench.accounts is not None and bench.server_url is not None
    name = f"{database_name(bench.accounts.template_url)}_r{bench.round_number}"
    database_url = asyncio.run(copy_database(bench.server_url, bench.accounts.template_url, name))
    own_redis: OwnRedis | None = None
    prefix = f"feltd-bench-{uuid.uuid4().hex[:8]}"
    cluster: Cluster | None = None
    generators: Generators | None = None
    try:
        if shape.workers and shutil.which("redis-server") is not None:
            own_redis = OwnRedis(bench.log_dir, free_port())
        redis_url = own_redis.url if own_redis is not None else (redis_fallback or "")
        if shape.workers and not redis_url:
            raise RuntimeError("no redis-server binary and no --redis-url / $REDIS_URL")
        cluster = Cluster(bench, shape, database_url, redis_url, prefix)
        tournaments = [f"bench-live-{players}-{n + 1}" for n in range(TOURNAMENTS)]
        result.tournaments = cluster.start(tournaments, players)
        ports = [g.port for g in cluster.gateways]
        generators = Generators(plans(bench, ports, players))
        generators.send("think", bench.args.think_min, bench.args.think_max)
        answers = generators.ask("connect")
        result.connected = sum(answer[1] for answer in answers)
        answers = generators.ask("register", tournaments)
        registered = sum(answer[1] for answer in answers)
        bench.say(
            f"{shape.label}: {result.connected}/{players} connected, {registered} registered in "
            f"{len(tournaments)} tournaments ({spread(result.tournaments)})"
        )
        for tournament_id in tournaments:
            operator_start(f"ws://127.0.0.1:{ports[0]}/", bench.accounts.operator_token, tournament_id)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and generators.status().get("seated", 0) < registered:
            time.sleep(1.0)
        result.seated = generators.status().get("seated", 0)
        bench.wait_for_play(generators, players)
        time.sleep(bench.args.warmup)
        before = snapshot(cluster, generators, None)
        started = time.monotonic()
        time.sleep(bench.args.seconds)
        ended = time.monotonic()
        after = snapshot(cluster, generators, before.backends)
        result.rss = {p.name: rss_bytes(p.popen.pid) for p in cluster.processes}
        if cluster.workers:
            result.rss["redis"] = redis_counters(redis_url)[3]
        deadline = time.monotonic() + bench.args.lost_after + 0.5
        while time.monotonic() < deadline and sum(generators.ask("unanswered", ended, timeout=60)):
            time.sleep(0.1)
        # the generators' loop lag (the third part) is printed by the one-process bench only
        for part, part_errors, _lag in generators.ask("window", started, ended, timeout=120):
            result.latencies.extend(part)
            result.errors.update(part_errors)
        result.seconds = span = ended - started
        result.cpu = {
            name: 100 * (after.cpu[name] - before.cpu[name]) / span
            for name in before.cpu
            if name in after.cpu
        }
        if cluster.workers:
            result.cpu["redis"] = 100 * (after.redis_cpu - before.redis_cpu) / span
        result.cpu["postgres"] = 100 * (after.postgres_cpu - before.postgres_cpu) / span
        result.costs, result.redis_commands = costs(before, after, len(result.latencies))
        bench.say(describe(result))
    finally:
        if generators is not None:
            generators.close()
        if cluster is not None:
            cluster.stop()
        if own_redis is not None:
            own_redis.stop()
        elif shape.workers and redis_fallback:
            forget(redis_fallback, prefix)
        asyncio.run(drop_database(bench.server_url, database_url))
    return result


def forget(url: str, prefix: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=prefix + "*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def costs(before: Snapshot, after: Snapshot, actions: int) -> tuple[dict[str, float], dict[str, float]]:
    """What the window cost per hand finished and per action answered."""
    hands = after.hands - before.hands
    per_hand = 1 / hands if hands else math.nan
    per_action = 1 / actions if actions else math.nan
    commands = after.redis_commands - before.redis_commands
    commands.pop("info", None)  # the bench's own reads
    figures = {
        "hands": float(hands),
        "actions": float(actions),
        "actions_per_hand": actions * per_hand,
        "redis_commands_per_hand": sum(commands.values()) * per_hand,
        "redis_bytes_in_per_action": (after.redis_net[0] - before.redis_net[0]) * per_action,
        "redis_bytes_out_per_action": (after.redis_net[1] - before.redis_net[1]) * per_action,
        "client_frames_per_action": (after.generators["frames"] - before.generators["frames"]) * per_action,
        "client_bytes_in_per_action": (after.generators["bytes_in"] - before.generators["bytes_in"])
        * per_action,
        "client_bytes_out_per_action": (after.generators["bytes_out"] - before.generators["bytes_out"])
        * per_action,
    }
    for name in POSTGRES_FIGURES:
        figures[f"pg_{name}_per_hand"] = (after.postgres[name] - before.postgres[name]) * per_hand
    by_command = {name: calls * per_hand for name, calls in commands.most_common()}
    return figures, by_command


# -- the report -------------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{seconds * 1000:.1f}"


def describe(result: ClusterRound) -> str:
    errors = sum(result.errors.values())
    rate = len(result.latencies) / result.seconds if result.seconds else 0.0
    cpu = ", ".join(f"{name} {value:.0f} %" for name, value in result.cpu.items())
    return (
        f"{result.shape.label}, {result.players} players: {rate:.0f} actions/s, "
        f"p50 {ms(result.percentile(0.5))} ms, "
        f"p99 {ms(result.percentile(0.99))} ms, max {ms(max(result.latencies, default=math.nan))} ms, "
        f"errors {errors}{f' ({dict(result.errors)})' if errors else ''}; CPU {cpu}"
    )


def median(values: list[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


def cluster_summary(rounds: list[ClusterRound]) -> list[dict[str, Any]]:
    """One row per (players, workers, gateways): medians over its rounds."""
    rows = []
    keys = sorted({(r.players, r.shape.workers, r.shape.gateways) for r in rounds})
    for players, workers, gateways in keys:
        same = [
            r
            for r in rounds
            if (r.players, r.shape.workers, r.shape.gateways) == (players, workers, gateways)
        ]
        names = sorted({name for r in same for name in r.cpu})
        rows.append(
            {
                "players": players,
                "workers": workers,
                "gateways": gateways if workers else 0,
                "rounds": len(same),
                "tournaments": {w: len(t) for w, t in same[0].tournaments.items()},
                "connected": min(r.connected for r in same),
                "seated": min(r.seated for r in same),
                "p50_ms": median([r.percentile(0.5) * 1000 for r in same]),
                "p99_ms": median([r.percentile(0.99) * 1000 for r in same]),
                "max_ms": median([max(r.latencies, default=math.nan) * 1000 for r in same]),
                "actions_per_s": median([len(r.latencies) / r.seconds for r in same]),
                "errors": max(sum(r.errors.values()) for r in same),
                "cpu_pct": {n: median([r.cpu.get(n, math.nan) for r in same]) for n in names},
                "rss_mib": {
                    n: median([r.rss[n] / 2**20 for r in same if n in r.rss])
                    for n in sorted({n for r in same for n in r.rss})
                },
                "costs": {k: median([r.costs.get(k, math.nan) for r in same]) for k in same[0].costs},
                "redis_commands_per_hand": {
                    k: median([r.redis_commands.get(k, 0.0) for r in same])
                    for k in list(same[0].redis_commands)[:8]
                },
                "load": "; ".join(r.load for r in same),
            }
        )
    return rows


def spread(tournaments: dict[str, list[str]]) -> str:
    return ", ".join(f"{process}: {len(ids)}" for process, ids in tournaments.items())


def shape_columns(row: dict[str, Any]) -> str:
    return f"{row['players']:,} | {row['workers'] or '1 (all)'} | {row['gateways'] or '-'}"


def shape_text(row: dict[str, Any]) -> str:
    shape = f"{row['workers']}w/{row['gateways']}g" if row["workers"] else "1 process (--role all)"
    return f"{row['players']:,} players, {shape}"


def _group(figures: dict[str, float], prefix: str, unit: str, scale: float = 1.0) -> str:
    chosen = [v for n, v in figures.items() if n.startswith(prefix)]
    return "+".join(f"{v * scale:.0f}" for v in chosen) + unit if chosen else "-"


def print_cluster_table(rows: list[dict[str, Any]]) -> None:
    print()
    print(
        "| players | workers | gateways | p50 ms | p99 ms | max ms | actions/s | errors | gateway CPU | "
        "worker CPU | Redis CPU | PostgreSQL CPU | gateway RSS MiB | worker RSS MiB | Redis RSS MiB |"
    )
    print("|" + " ---: |" * 15)
    for row in rows:
        cpu, rss = row["cpu_pct"], row["rss_mib"]
        front = "all" if row["workers"] == 0 else "gateway"
        print(
            f"| {shape_columns(row)} | {row['p50_ms']:.1f} | "
            f"{row['p99_ms']:.1f} | {row['max_ms']:.0f} | {row['actions_per_s']:.0f} | {row['errors']} | "
            f"{_group(cpu, front, ' %')} | {_group(cpu, 'worker', ' %')} | {_group(cpu, 'redis', ' %')} | "
            f"{_group(cpu, 'postgres', ' %')} | {_group(rss, front, '')} | {_group(rss, 'worker', '')} | "
            f"{_group(rss, 'redis', '')} |"
        )
    print()
    print(
        "| players | workers | gateways | hands | actions/hand | Redis commands/hand | PG commits/hand | "
        "PG rows inserted/hand | PG rows updated/hand | client frames/action | client bytes in/action | "
        "client bytes out/action | Redis bytes in/action | Redis bytes out/action |"
    )
    print(
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    for row in rows:
        c = row["costs"]
        print(
            f"| {shape_columns(row)} | {c['hands']:.0f} | "
            f"{c['actions_per_hand']:.1f} | {c['redis_commands_per_hand']:.1f} | "
            f"{c['pg_xact_commit_per_hand']:.1f} | "
            f"{c['pg_tup_inserted_per_hand']:.1f} | {c['pg_tup_updated_per_hand']:.1f} | "
            f"{c['client_frames_per_action']:.1f} | {c['client_bytes_in_per_action']:.0f} | "
            f"{c['client_bytes_out_per_action']:.0f} | {c['redis_bytes_in_per_action']:.0f} | "
            f"{c['redis_bytes_out_per_action']:.0f} |"
        )
    for row in rows:
        if row["redis_commands_per_hand"]:
            top = ", ".join(f"{k} {v:.1f}" for k, v in row["redis_commands_per_hand"].items())
            print(f"Redis commands per hand, {shape_text(row)}: {top}")
        print(f"tournaments per process, {shape_text(row)}: {row['tournaments']}")


def run_cluster_bench(args: argparse.Namespace, server_url: str) -> int:
    soft, hard = raise_file_limit()
    shapes = [
        Shape(w, g) for w, g in itertools.product(sorted(set(args.workers)), sorted(set(args.gateways)))
    ]
    shapes = list(dict.fromkeys(Shape(s.workers, s.gateways if s.workers else 0) for s in shapes))
    sizes = sorted(set(args.players))
    print(
        f"cluster bench: {', '.join(s.label for s in shapes)}; "
        f"{TOURNAMENTS} tournaments spread over the workers; "
        f"RLIMIT_NOFILE {soft} -> {hard}; {os.cpu_count()} CPUs; load average {load_average()}; "
        f"lean load generator in {args.processes} processes (at least one per gateway); think time "
        f"{args.think_min:g}-{args.think_max:g} s; warm-up {args.warmup:g} s, window {args.seconds:g} s; "
        f"Redis: {'a redis-server per round' if shutil.which('redis-server') else args.redis_url}",
        flush=True,
    )
    log_dir = Path(tempfile.mkdtemp(prefix="feltd-bench-cluster-"))
    accounts = asyncio.run(make_accounts(server_url, max(sizes)))
    bench = Bench(args, server_url, accounts, log_dir)
    rounds: list[ClusterRound] = []
    relay_rounds: list[Round] = []
    try:
        for players in sizes:
            for number in range(args.rounds):
                order = shapes if number % 2 == 0 else shapes[::-1]
                for shape in order:
                    heading = f"{players:,} players, round {number + 1}, {shape.label}"
                    print(f"{heading} (load average {load_average()})", flush=True)
                    rounds.append(run_cluster_round(bench, shape, players, args.redis_url))
                if args.server == "both":
                    print(
                        f"{players:,} players, round {number + 1}, relay (load average {load_average()})",
                        flush=True,
                    )
                    relay_rounds.append(bench.run_round(RELAY, players, saturate=False))
    finally:
        asyncio.run(drop_database(server_url, accounts.template_url))
    rows = cluster_summary(rounds)
    print_cluster_table(rows)
    if relay_rounds:
        print_table(summary(relay_rounds))
    print(f"load average at the end: {load_average()}")
    shutil.rmtree(log_dir, ignore_errors=True)  # kept (and named in the error) when a round fails
    if args.json is not None:
        Path(args.json).write_text(
            json.dumps({"cluster": rows, "relay": summary(relay_rounds)}, indent=2, default=str) + "\n"
        )
    return 0
