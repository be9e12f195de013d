"""Fuzz a feltd server with hostile frames while a bot tournament plays on it.

The server runs in this process (tests/server_harness.py: a fresh PostgreSQL database, a clock
``--speed`` times real time) with bots playing a tournament over WebSockets. Once the bots have
played a while, a second process opens connection after connection to the same server and sends
``--frames`` malformed or hostile frames: garbage bytes, truncated MessagePack, maps of the wrong
shape, wrong field types, huge integers, unknown and reserved types, frames too large, text on
the binary subprotocol, a second ``hello``, bad tokens, acts for seats that are not theirs,
operator requests from players and observers, replayed acts and registrations, and clients that
never read. The limits close most of those connections after a handful of frames; the fuzzer
opens new ones. When it is done the bots go all-in until the tournament ends.

Printed: frames sent (and read by the server), connections, close codes, goodbyes, errors by
code, the bots' action latency (from sending ``act`` to its ``ack``) before, during and after
the fuzz (median, p95), hands and actions played during it, this process's RSS before, at peak
and after, and whether anything crashed.

    python scripts/fuzz_server.py --frames 100000

uses $DATABASE_URL's server (a fresh database is made and dropped). Exit 1 when the tournament
did not finish, a bot was thrown out, a task failed, or the server answered ``internal``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import random
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import msgspec  # noqa: E402
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402
from websockets.exceptions import ConnectionClosed, InvalidHandshake  # noqa: E402
from websockets.typing import Subprotocol  # noqa: E402

from protocol import PROTOCOL_VERSION  # noqa: E402
from protocol import client_messages as cm  # noqa: E402
from protocol import operator_requests as op  # noqa: E402
from protocol import server_messages as sm  # noqa: E402
from protocol import table_events as te  # noqa: E402
from protocol.codec import JSON, JSON_SUBPROTOCOL, MSGPACK, MSGPACK_SUBPROTOCOL, Codec  # noqa: E402
from protocol.kinds import ActionKind, InMoneyMethod  # noqa: E402

# -- the fuzzer (its own process) -------------------------------------------------------------------

_WORDS = ("teleport", "op_nuke", "op_", "admin", "act2", "", "ACT", "hello ", "table_event", "ack", "error")


@dataclass
class FuzzCounts:
    frames: int = 0
    connections: int = 0
    refused_upgrades: int = 0
    closes: Counter[str] = field(default_factory=Counter)
    goodbyes: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)


class Hostile:
    """One hostile frame after another, for one connection's subprotocol."""

    def __init__(self, rng: random.Random, codec: Codec, tournament_id: str) -> None:
        self.rng = rng
        self.codec = codec
        self.tournament_id = tournament_id
        self.sent_acts: list[bytes | str] = []

    def encode(self, value: object) -> bytes | str:
        if self.codec is JSON:
            return msgspec.json.encode(value).decode()
        return msgspec.msgpack.encode(value)

    def act(self) -> dict[str, object]:
        """An ``act`` at a table and hand it may or may not be at, as a map (an ``amount`` where
        the action takes none is one of the ways it is wrong)."""
        rng = self.rng
        action = rng.choice(list(ActionKind))
        act: dict[str, object] = {
            "type": "act",
            "table_id": rng.randint(1, 4),
            "hand_number": rng.randint(1, 400),
            "action_id": f"fz-{rng.randrange(10**6)}",
            "action": action.value,
        }
        if action in (ActionKind.BET, ActionKind.RAISE) or rng.random() < 0.1:
            act["amount"] = rng.randint(1, 10**9)
        return act

    def frame(self) -> bytes | str:
        rng, tid = self.rng, self.tournament_id
        # Refused frames (0 to 7, 13) close a connection after ten: they come a sixth of the
        # time, so a connection carries some sixty frames and the fuzz is not all handshakes.
        roll = rng.randrange(17) if rng.random() < 0.3 else rng.choice((8, 9, 10, 11, 12, 14, 15, 16))
        if roll == 0:  # garbage
            data = rng.randbytes(rng.randint(1, 300))
            return data if self.codec is MSGPACK else data.decode("latin-1")
        if roll == 1:  # truncated
            whole = self.encode(self.act())
            return whole[: rng.randint(1, len(whole) - 1)]
        if roll == 2:  # the wrong shape
            return self.encode(
                rng.choice(([1, 2, 3], 7, "act", None, {"nonce": 1}, {"type": 5}, {"type": None}))
            )
        if roll == 3:  # wrong field types
            return self.encode(
                rng.choice(
                    (
                        {**self.act(), "table_id": "one"},
                        {"type": "ping", "nonce": [1]},
                        {"type": "register", "tournament_id": 7, "request_id": "r"},
                        {**self.act(), "action": "steal"},
                        {"type": "chat", "table_id": 1, "text": "x" * 300},
                    )
                )
            )
        if roll == 4:  # huge or negative integers
            big = rng.choice((2**53, 2**63 - 1, 2**64 - 1, -1, -(2**63)))
            return self.encode(
                rng.choice(
                    (
                        {"type": "ping", "nonce": big},
                        {**self.act(), "table_id": big},
                        {"type": "table_join", "table_id": big},
                    )
                )
            )
        if roll == 5:  # unknown and reserved types
            return self.encode({"type": rng.choice(_WORDS) + str(rng.randrange(100)), "request_id": "u"})
        if roll == 6:  # the wrong kind of frame
            frame = self.codec.encode(cm.Ping(nonce=1))
            return frame.encode() if isinstance(frame, str) else frame.decode("latin-1")
        if roll == 7 and rng.random() < 0.2:  # too large (not too often: it is 17 KiB)
            return self.encode({"type": "ping", "nonce": 1, "pad": "x" * 17_000})
        if roll in (7, 8, 9):  # acts for seats that are not theirs, and their replays
            if self.sent_acts and rng.random() < 0.4:
                return rng.choice(self.sent_acts)
            frame = self.encode(self.act())
            if len(self.sent_acts) < 16:
                self.sent_acts.append(frame)
            return frame
        if roll in (10, 11):  # operators' requests
            request_id = f"op-{rng.randrange(10**6)}"
            requests: list[op.OperatorRequest] = [
                op.OpTournamentPause(request_id=request_id, tournament_id=tid),
                op.OpTournamentCancel(request_id=request_id, tournament_id=tid, in_money=InMoneyMethod.CHIPS),
                op.OpTournamentList(request_id=request_id),
                op.OpDisqualify(request_id=request_id, tournament_id=tid, player="p00"),
                op.OpSubscribe(request_id=request_id, tournament_id=None),
            ]
            return self.codec.encode(rng.choice(requests))
        if roll == 12:  # money requests replayed (these players have no money)
            return self.codec.encode(cm.Register(tournament_id=tid, request_id="fz-register"))
        if roll == 13:  # a second hello
            return self.codec.encode(cm.Hello(protocol=PROTOCOL_VERSION, token=None, client="fz"))
        if roll == 14:  # tables that do not exist
            return self.codec.encode(cm.TableJoin(table_id=rng.randint(1000, 10**6)))
        if roll == 15:  # things that belong to other people: another seat's sit-out, a time bank
            return self.codec.encode(
                rng.choice(
                    (
                        cm.SitOut(tournament_id=tid, request_id="fz-sit"),
                        cm.TimeBank(table_id=rng.randint(1, 4), hand_number=rng.randint(1, 400)),
                        cm.Unregister(tournament_id=tid, request_id="fz-unreg"),
                    )
                )
            )
        return self.codec.encode(cm.Ping(nonce=rng.randrange(2**53)))  # a plain ping now and then


IN_FLIGHT = 4  # frames a fuzzing connection sends ahead of the replies it has read


class _Replies:
    """What the server answered one connection; the sender waits on it to stay ``IN_FLIGHT``
    frames ahead, so that nearly every frame it sends is one the server reads."""

    def __init__(self) -> None:
        self.count = 0
        self.arrived = asyncio.Event()


async def _drain(ws: ClientConnection, codec: Codec, counts: FuzzCounts, replies: _Replies) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for frame in ws:
            replies.count += 1
            replies.arrived.set()
            try:
                message = codec.decode_server(frame)
            except Exception:
                counts.errors["undecodable reply"] += 1
                continue
            if isinstance(message, sm.Error):
                counts.errors[message.code.value] += 1
            elif isinstance(message, sm.Goodbye):
                counts.goodbyes[message.reason.value] += 1
    replies.arrived.set()


async def _connection(url: str, rng: random.Random, tokens: list[str], tid: str, counts: FuzzCounts) -> None:
    json_codec = rng.random() < 0.3
    codec = JSON if json_codec else MSGPACK
    try:
        ws = await connect(
            url,
            subprotocols=[Subprotocol(JSON_SUBPROTOCOL if json_codec else MSGPACK_SUBPROTOCOL)],
            compression=None,
            max_size=None,
            open_timeout=30,
        )
    except (InvalidHandshake, OSError, TimeoutError):
        counts.refused_upgrades += 1
        return
    counts.connections += 1
    hostile = Hostile(rng, codec, tid)
    replies = _Replies()
    never_reads = rng.random() < 0.005
    reader = None if never_reads else asyncio.create_task(_drain(ws, codec, counts, replies))
    sent = 0
    try:
        start = rng.random()
        if start < 0.02:  # no hello: straight to garbage or an act (fatal)
            pass
        elif start < 0.03:  # a token nobody has (fatal)
            await ws.send(codec.encode(cm.Hello(protocol=PROTOCOL_VERSION, token="x" * 43, client="fz")))
            sent += 1
        else:
            token = rng.choice(tokens) if tokens and rng.random() < 0.15 else None
            await ws.send(codec.encode(cm.Hello(protocol=PROTOCOL_VERSION, token=token, client="fz")))
            sent += 1
        if reader is None:  # follows a table, reads nothing of it, and goes
            await ws.send(codec.encode(cm.TableJoin(table_id=1)))
            counts.frames += sent + 1
            await asyncio.sleep(rng.uniform(1, 5))
            return
        while not reader.done() and sent < 1000:
            if sent - replies.count >= IN_FLIGHT:
                replies.arrived.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(replies.arrived.wait(), 1.0)
                continue
            await asyncio.wait_for(ws.send(hostile.frame()), 10)
            sent += 1
    except (ConnectionClosed, TimeoutError):
        pass
    finally:
        if reader is not None:
            counts.frames += sent
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ws.close(), 5)
        if reader is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(reader, 5)
        counts.closes[str(ws.close_code)] += 1


async def fuzz_clients(
    url: str, tokens: list[str], tid: str, frames: int, workers: int, seed: int
) -> FuzzCounts:
    counts = FuzzCounts()
    rng = random.Random(seed)

    async def worker(number: int) -> None:
        mine = random.Random(rng.randrange(2**32) + number)
        while counts.frames < frames:
            await _connection(url, mine, tokens, tid, counts)

    async def progress() -> None:
        while True:
            await asyncio.sleep(5)
            print(f"fuzzer: {counts.frames} frames, {counts.connections} connections", file=sys.stderr)

    reporter = asyncio.create_task(progress())
    await asyncio.gather(*(worker(n) for n in range(workers)))
    reporter.cancel()
    return counts


def _fuzz_main(args: argparse.Namespace) -> int:
    spec = json.loads(args.fuzz_clients)
    counts = asyncio.run(
        fuzz_clients(spec["url"], spec["tokens"], spec["tid"], spec["frames"], spec["workers"], spec["seed"])
    )
    print(json.dumps({k: dict(v) if isinstance(v, Counter) else v for k, v in vars(counts).items()}))
    return 0


# -- the server, the bots and the figures (this process) --------------------------------------------


@dataclass
class Figures:
    frames_sent: int = 0
    frames_read: int = 0  # by the server, during the fuzz
    connections: int = 0
    refused_upgrades: int = 0
    closes: dict[str, int] = field(default_factory=dict)
    goodbyes: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    fuzz_seconds: float = 0.0
    latency_ms: dict[str, list[float]] = field(default_factory=dict)  # phase -> samples
    hands: dict[str, int] = field(default_factory=dict)  # phase -> hands played in it
    actions: dict[str, int] = field(default_factory=dict)
    rss_kib: dict[str, int] = field(default_factory=dict)  # before, peak, after
    sessions_after: int = 0
    bots: int = 0
    bots_finished: int = 0
    bot_failures: list[str] = field(default_factory=list)
    bot_errors: dict[str, int] = field(default_factory=dict)
    task_failures: list[str] = field(default_factory=list)
    logged_errors: list[str] = field(default_factory=list)
    finished: bool = False

    def percentile(self, phase: str, fraction: float) -> float | None:
        samples = sorted(self.latency_ms.get(phase, []))
        if not samples:
            return None
        return samples[min(len(samples) - 1, int(fraction * len(samples)))]

    def lines(self) -> list[str]:
        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value:.1f} ms"

        out = [
            f"frames sent: {self.frames_sent} hostile frames in {self.fuzz_seconds:.1f} s "
            f"({self.frames_sent / max(self.fuzz_seconds, 1e-9):.0f}/s) over {self.connections} connections "
            f"({self.refused_upgrades} upgrades refused); read by the server: {self.frames_read}",
            f"closes (WebSocket code: count): {dict(sorted(self.closes.items()))}",
            f"goodbyes: {dict(sorted(self.goodbyes.items()))}",
            f"errors: {dict(sorted(self.errors.items()))}",
        ]
        for phase in ("before", "during", "after"):
            samples = self.latency_ms.get(phase, [])
            median = statistics.median(samples) if samples else None
            out.append(
                f"bot action latency {phase}: median {ms(median)}, "
                f"p95 {ms(self.percentile(phase, 0.95))} ({len(samples)} acts); "
                f"hands {self.hands.get(phase, 0)}, actions {self.actions.get(phase, 0)}"
            )
        rss = self.rss_kib
        out += [
            f"RSS: before {rss.get('before', 0) // 1024} MiB, peak {rss.get('peak', 0) // 1024} MiB, "
            f"after {rss.get('after', 0) // 1024} MiB (this process: server and bots)",
            f"sessions left after the fuzz: {self.sessions_after} (bots: {self.bots})",
            f"bots: {self.bots_finished} of {self.bots} saw the end; "
            f"thrown out: {self.bot_failures or 'none'}; their errors: {self.bot_errors or 'none'}",
            f"task failures: {self.task_failures or 'none'}; errors logged: {len(self.logged_errors)}",
            f"tournament finished: {self.finished}",
        ]
        return out

    @property
    def ok(self) -> bool:
        return (
            self.finished
            and not self.bot_failures
            and not self.task_failures
            and not self.logged_errors
            and not self.errors.get("internal")
        )


def calm(legal: te.LegalView, rng: random.Random) -> tuple[ActionKind, int | None]:
    """A player who never raises: the tournament lasts while the fuzz runs (then they all go
    ``lively`` to finish it)."""
    if legal.can_fold and rng.random() < 0.5:
        return ActionKind.FOLD, None
    return ActionKind.CHECK_OR_CALL, None


def rss_kib() -> int:
    with open(f"/proc/{os.getpid()}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record))


async def campaign(
    postgres_server_url: str,
    *,
    frames: int = 100_000,
    workers: int = 64,
    players: int = 9,
    speed: float = 10.0,
    seed: int = 5,
    warmup_actions: int = 100,
    say: Any = print,
) -> Figures:
    from server_harness import Player, lively, running_server, tournament_toml

    figures = Figures()
    phase = ["before"]
    latency: dict[str, list[float]] = {"before": [], "during": [], "after": []}
    sent_at: dict[str, float] = {}

    class Timed(Player):
        async def act(self, table_id: int, hand_number: int, legal: te.LegalView, rng: random.Random) -> None:
            sent_at[f"{self.connection.player}-{hand_number}-{self.acted + 1}"] = time.perf_counter()
            await super().act(table_id, hand_number, legal, rng)

        async def react(self, message: sm.ServerMessage, rng: random.Random) -> None:
            if isinstance(message, sm.Ack):
                started = sent_at.pop(message.request_id, None)
                if started is not None:
                    latency[phase[0]].append((time.perf_counter() - started) * 1000)
            await super().react(message, rng)

    collect = _Collect()
    logging.getLogger("feltd").addHandler(collect)
    async with running_server(postgres_server_url, speed=speed, seed=seed, hand_gap=1.0) as harness:
        server = harness.server
        names = [f"p{n:02d}" for n in range(players)]
        await harness.add_players(names)
        fuzz_names = [f"fz{n:02d}" for n in range(10)]
        tokens = [(await harness.store.players.add(name, player_id=name)).token for name in fuzz_names]
        toml = tournament_toml("fuzz", players=players, level_minutes=10)
        tid = await harness.create(toml, starts_in=5 * speed)  # five seconds to register
        bots = [Timed(harness.connection(name), tid, calm, seed=n) for n, name in enumerate(names)]
        figures.bots = len(bots)
        runs = [asyncio.create_task(bot.run(until=900)) for bot in bots]
        metrics = server.metrics

        while metrics.actions < warmup_actions and not all(run.done() for run in runs):
            await asyncio.sleep(0.1)
        figures.rss_kib["before"] = figures.rss_kib["peak"] = rss_kib()
        hands0, actions0 = metrics.hands, metrics.actions
        figures.hands["before"], figures.actions["before"] = hands0, actions0
        frames_in0 = metrics.frames_in
        phase[0] = "during"
        say(f"fuzzing: {frames} frames from {workers} connections at a time while {players} bots play")
        spec = {
            "url": harness.url,
            "tokens": tokens,
            "tid": tid,
            "frames": frames,
            "workers": workers,
            "seed": seed,
        }
        started = time.monotonic()
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            str(Path(__file__).resolve()),
            "--fuzz-clients",
            json.dumps(spec),
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        communicate = asyncio.create_task(child.communicate())
        ticks = 0
        while not communicate.done():
            figures.rss_kib["peak"] = max(figures.rss_kib["peak"], rss_kib())
            await asyncio.wait({communicate}, timeout=0.5)
            ticks += 1
            if ticks % 10 == 0:
                sessions = len(server.gateway.sessions)
                say(
                    f"server: {metrics.frames_in - frames_in0} frames read, {sessions} sessions, "
                    f"hands {metrics.hands}, actions {metrics.actions}"
                )
        out, _ = communicate.result()
        figures.fuzz_seconds = time.monotonic() - started
        if child.returncode != 0 or not out.strip():
            raise RuntimeError(f"the fuzzing process failed (exit {child.returncode})")
        counts = json.loads(out.decode().strip().splitlines()[-1])
        figures.frames_sent = counts["frames"]
        figures.frames_read = metrics.frames_in - frames_in0
        figures.connections = counts["connections"]
        figures.refused_upgrades = counts["refused_upgrades"]
        figures.closes, figures.goodbyes, figures.errors = (
            counts["closes"],
            counts["goodbyes"],
            counts["errors"],
        )
        hands1, actions1 = metrics.hands, metrics.actions
        figures.hands["during"], figures.actions["during"] = hands1 - hands0, actions1 - actions0
        await asyncio.sleep(1.0)  # the closes under way finish
        figures.sessions_after = len(server.gateway.sessions)
        figures.rss_kib["after"] = rss_kib()
        # the rest of the tournament, quickly: everyone plays like a maniac
        phase[0] = "after"
        for bot in bots:
            bot.policy = lively
        done, _ = await asyncio.wait(runs, timeout=300)
        figures.hands["after"], figures.actions["after"] = metrics.hands - hands1, metrics.actions - actions1
        for bot, run in zip(bots, runs, strict=True):
            if run not in done:
                run.cancel()
                figures.bot_failures.append(f"{bot.connection.player}: still playing")
            elif run.exception() is not None:
                figures.bot_failures.append(str(run.exception())[:300])
            figures.bots_finished += bot.ended is not None
            for error in bot.errors:
                figures.bot_errors[error.code.value] = figures.bot_errors.get(error.code.value, 0) + 1
        coordinator = server.coordinators[tid]
        with contextlib.suppress(TimeoutError):  # the bots see the end before it is saved
            await asyncio.wait_for(coordinator.finished.wait(), 60)
        figures.finished = coordinator.finished.is_set()
        for name, task in server.tasks.items():
            if task.done() and not task.cancelled() and task.exception() is not None:
                figures.task_failures.append(f"{name}: {task.exception()!r}")
        figures.latency_ms = latency
    logging.getLogger("feltd").removeHandler(collect)
    figures.logged_errors = collect.records
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=100_000, help="hostile frames to send")
    parser.add_argument("--workers", type=int, default=64, help="hostile connections open at a time")
    parser.add_argument("--players", type=int, default=9, help="bots in the tournament")
    parser.add_argument("--speed", type=float, default=10.0, help="the tournament clock's speed")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--fuzz-clients", help=argparse.SUPPRESS)  # the fuzzing child process
    args = parser.parse_args()
    if args.fuzz_clients:
        return _fuzz_main(args)
    url = os.environ.get("DATABASE_URL")
    if not url:
        print(
            "set DATABASE_URL to a PostgreSQL server (a fresh database is made and dropped)", file=sys.stderr
        )
        return 2
    figures = asyncio.run(
        campaign(
            url,
            frames=args.frames,
            workers=args.workers,
            players=args.players,
            speed=args.speed,
            seed=args.seed,
        )
    )
    for line in figures.lines():
        print(line)
    print("verdict:", "ok" if figures.ok else "FAILED")
    return 0 if figures.ok else 1


if __name__ == "__main__":
    sys.exit(main())
