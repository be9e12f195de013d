"""`feltd demo`, the main job: the real server, a few hundred bots over real WebSockets, a whole
tournament in a few minutes.

It runs the game server in this process (on the embedded PostgreSQL, or ``--database-url``) on
a free loopback port and prints its URL, so a person can watch a table with `feltd connect`, and
the browser client's address with the run's operator token to paste into it.
Then it does what `feltd bots --create` does against that URL (``server.cli.bots``): an
operator's connection schedules the tournament over the protocol, the bots' accounts are made
with one entry's price each, every bot logs in over its own WebSocket and registers, and the
operator starts the tournament once all are in. The server's clock runs ``--speed`` times fast
(levels, shot clocks, the pause between hands) and the bots think ``--think`` seconds of that
clock. While it plays, a progress line every ``--progress-every`` seconds: players left, tables,
level and blinds, the chip leader, hands, actions/s and latency; the eliminations in the money
and the tournament's milestones as they happen. At the end: the final standings, the payouts
(and what each kind of bot won), the bots' latency report, the ledger check, and how to export
the hand histories.

Every input is checked before anything is made (a config file, the field size, the database
URL or data folder). Each run plays a new tournament, ``demo-N``; one an interrupted run left
unfinished is cancelled at the next run's start (CANCEL-1: before its start everyone is
refunded, after it the money in play is shared by chips), so the ledger always balances.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from server.cli.arguments import whole_number

if TYPE_CHECKING:
    from server.app import FeltServer
    from server.cli.bots import Control
    from server.store.connection import Store
    from server.store.options import DatabaseChoice

HELP = (
    "The main job: the game server on a free loopback port, a few hundred bots over WebSockets, a "
    "whole tournament at --speed with live progress, then standings, payouts and the ledger check."
)

DEMO_LEVELS = (
    (10, 20, 0),
    (15, 30, 0),
    (25, 50, 0),
    (50, 100, 0),
    (75, 150, 150),
    (100, 200, 200),
    (150, 300, 300),
    (200, 400, 400),
    (300, 600, 600),
    (500, 1000, 1000),
    (800, 1600, 1600),
    (1200, 2400, 2400),
    (2000, 4000, 4000),
    (3000, 6000, 6000),
    (5000, 10000, 10000),
    (8000, 16000, 16000),
    (12000, 24000, 24000),
    (20000, 40000, 40000),
    (30000, 60000, 60000),
    (50000, 100000, 100000),
)


def demo_toml(tournament_id: str, players: int, level_minutes: int = 5) -> str:
    """The demo's tournament: a 10.00 + 1.00 9-max freezeout, 3,000 chips, 5-minute levels with
    a big blind ante from level 5, no breaks, 15% of the field paid."""
    levels = "".join(
        f"\n[[levels]]\nsmall_blind = {small}\nbig_blind = {big}\nminutes = {level_minutes}\n"
        + (f'ante = {ante}\nante_kind = "bb"\n' if ante else "")
        for small, big, ante in DEMO_LEVELS
    )
    return (
        f'id = "{tournament_id}"\nname = "feltd demo freezeout"\ngame = "holdem"\nlimit = "nl"\n'
        f"table_size = 9\nstarting_stack = 3000\nbuy_in = 1000\nfee = 100\nmin_players = 2\n"
        f"max_players = {max(players, 2)}\nlate_registration_minutes = 0\n\n"
        f'[breaks]\nmode = "none"\n\n[payouts]\nmode = "generated"\npercent_paid = 15\n{levels}'
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from server.cli.bots import add_bot_arguments
    from server.store.options import add_store_arguments

    parser.add_argument(
        "--players", type=whole_number(2), default=300, metavar="N", help="how many bots play, at least 2"
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=30.0,
        metavar="X",
        help="the tournament clock runs X times faster than real time (levels, shot clocks, pauses)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="tournament TOML, UTF-8, money in cents (default: a 10.00 + 1.00 9-max freezeout with "
        "5-minute levels); its id is replaced by the run's",
    )
    add_bot_arguments(parser, think="lognormal:1.5,0.5")
    parser.add_argument("--host", default="127.0.0.1", help="address the server listens on")
    parser.add_argument(
        "--port", type=whole_number(0, 65535), default=0, help="port the server listens on (0: a free one)"
    )
    parser.add_argument(
        "--progress-every", type=float, default=5.0, metavar="SECONDS", help="seconds between progress lines"
    )
    add_store_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from engine.tournament.config import ConfigError, parse_config
    from server.cli.bots import read_bot_arguments
    from server.cli.exits import CommandError
    from server.cli.files import read_text
    from server.store.options import database_choice

    # Every input, checked before anything is made.
    toml_text = read_text(args.config) if args.config else None
    if toml_text is not None:
        try:
            config = parse_config(toml_text)
        except ConfigError as error:
            raise CommandError(f"{args.config}: {error}") from None
        if args.players > config.max_players:
            raise CommandError(
                f"--players {args.players}: {args.config} takes at most {config.max_players} players"
            )
        if _with_id(toml_text, config.id, "x") == toml_text:
            raise CommandError(f'{args.config}: write its id on a line of its own, id = "{config.id}"')
    if not args.speed > 0:
        raise CommandError(f"--speed must be > 0, got {args.speed}")
    if not args.progress_every > 0:
        raise CommandError(f"--progress-every must be > 0 seconds, got {args.progress_every}")
    read_bot_arguments(args)
    choice = database_choice(args)
    choice.check()
    return asyncio.run(_demo(args, toml_text, choice))


def _with_id(toml_text: str, old: str, new: str) -> str:
    import re

    return re.sub(rf'(?m)^(\s*id\s*=\s*)"{re.escape(old)}"', rf'\g<1>"{new}"', toml_text, count=1)


def _money(cents: int) -> str:
    return f"{cents // 100:,}.{cents % 100:02d}"


def _clock(seconds: float) -> str:
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


async def _demo(args: argparse.Namespace, toml_text: str | None, choice: DatabaseChoice) -> int:
    import contextlib
    import logging
    import random
    import time

    from engine.tournament.config import parse_config
    from server.app import FeltServer
    from server.cli.bots import Control, kind_of, read_bot_arguments
    from server.clock import ScaledClock
    from server.store.errors import StoreError
    from server.store.options import open_chosen_store

    think, _ = read_bot_arguments(args)
    started = time.monotonic()
    print(
        f"feltd demo: {args.players} bots over WebSockets, clock x{args.speed:g}, "
        f"think {think} (clock seconds), bots {args.kind}, seed {args.seed}",
        flush=True,
    )
    # the server's own notes (sessions, tables) would drown the progress lines; its warnings stay
    logging.getLogger("feltd").setLevel(logging.WARNING)
    async with open_chosen_store(choice) as store:
        seed = args.seed
        server = FeltServer(
            store,
            clock=ScaledClock(args.speed),
            director_rng=lambda _: random.Random(seed),
            table_rng=lambda table_id: random.Random(seed * 1_000_003 + table_id),
        )
        await server.start(args.host, args.port)
        control: Control | None = None
        operator_name = f"demo-{random.randbytes(3).hex()}"
        try:
            print(f"server: {server.url} (health: http://{server.host}:{server.port}/healthz)", flush=True)
            operator = await store.players.add_operator(operator_name)
            # this run's operator: an operator may watch any table, so a person can follow the demo
            print(
                f"watch in a browser: open http://{server.host}:{server.port}/ and paste the operator "
                f"token {operator.token} (it watches any table; the server stops when the demo ends)",
                flush=True,
            )
            control = Control(server.url, operator.token)
            await control.start()
            tournament_id = await _next_id_cancelling_leftovers(control)
            toml = (
                demo_toml(tournament_id, args.players)
                if toml_text is None
                else _with_id(toml_text, parse_config(toml_text).id, tournament_id)
            )
            kinds = {
                f"{tournament_id}-{index + 1:04d}": kind_of(args.kind, index) for index in range(args.players)
            }
            progress = DemoProgress(control, server, tournament_id, kinds, started)
            control.on_event = progress.event
            report, status = await _play(args, store.url, server.url, tournament_id, toml, control, progress)
            return await _final(args, control, store, tournament_id, kinds, report, status, started, choice)
        finally:
            if control is not None:
                await control.close()
            await server.stop()
            # the printed token dies with the demo: a database kept with --database-url holds
            # no operator left behind
            with contextlib.suppress(StoreError, OSError, TimeoutError):
                await store.players.remove_operator(operator_name)


async def _play(
    args: argparse.Namespace,
    database_url: str,
    url: str,
    tournament_id: str,
    toml: str,
    control: Control,
    progress: DemoProgress,
) -> tuple[dict[str, object] | None, int]:
    """Run `feltd bots --create` against the server as a child process (the bots get a core of
    their own), follow the tournament meanwhile; the bots' JSON report and exit status."""
    import asyncio
    import contextlib
    import json
    import os
    import tempfile

    from protocol import operator_requests as op
    from protocol import server_messages as sm
    from server.cli.bots import read_bot_arguments

    think, _ = read_bot_arguments(args)
    with tempfile.TemporaryDirectory(prefix="feltd-demo-") as folder:
        path = os.path.join(folder, f"{tournament_id}.toml")
        with open(path, "w", encoding="utf-8") as file:
            file.write(toml)
        command = [
            sys.executable,
            "-m",
            "server.cli.main",
            "bots",
            "--url",
            url,
            "--count",
            str(args.players),
            "--create",
            path,
            "--kind",
            args.kind,
            "--think",
            str(think.scaled(1 / args.speed)),
            "--seed",
            str(args.seed),
            "--prefix",
            tournament_id,
            "--report",
            "json",
            "--progress-every",
            "3600",
        ]
        if args.chaos:
            command += ["--chaos", args.chaos]
        # the database goes in the environment, not in the command line other users can read
        env = {**os.environ, "DATABASE_URL": database_url}
        child = await asyncio.create_subprocess_exec(
            *command, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        print(f"bots: `feltd bots --create` running as process {child.pid}", flush=True)
        outcome = asyncio.ensure_future(child.communicate())
        ticker: asyncio.Task[None] | None = None
        try:
            while not outcome.done():  # until the bots' process has made the tournament
                answer = await control.request(
                    op.OpTournamentShow(request_id=f"find-{progress.requests()}", tournament_id=tournament_id)
                )
                if isinstance(answer, sm.OpTournament):
                    await control.follow(tournament_id)
                    summary = answer.tournament
                    price = summary.buy_in_cents + summary.fee_cents
                    print(
                        f"tournament {tournament_id}: {summary.name}, buy-in "
                        f"{_money(summary.buy_in_cents)} + {_money(summary.fee_cents)}, "
                        f"{summary.starting_stack:,} chips; bot accounts "
                        f"{tournament_id}-0001... made, each credited {_money(price)}",
                        flush=True,
                    )
                    print(
                        f"watch it: feltd connect {url}  then type "
                        '{"type": "tournament_subscribe", "tournament_id": "' + tournament_id + '"} '
                        'or {"type": "table_join", "table_id": N}',
                        flush=True,
                    )
                    break
                await asyncio.wait([outcome], timeout=0.2)
            ticker = asyncio.create_task(progress.run(args.progress_every))
            out, err = await outcome
        finally:
            if ticker is not None:
                ticker.cancel()
            if child.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    child.kill()
                await child.wait()
        for line in err.decode(errors="replace").splitlines():
            if line.startswith("feltd bots:"):
                print(f"  {line}", flush=True)
        try:
            report = json.loads(out)
        except ValueError:
            report = None
        assert child.returncode is not None
        return report, child.returncode


async def _next_id_cancelling_leftovers(control: Control) -> str:
    """``demo-N`` for this run; every unfinished demo tournament an earlier run left is
    cancelled first (CANCEL-1)."""
    from protocol import operator_requests as op
    from protocol import server_messages as sm
    from protocol.kinds import InMoneyMethod
    from server.cli.exits import FAILED, CommandError

    answer = await control.request(op.OpTournamentList(request_id="list"))
    if not isinstance(answer, sm.OpTournaments):
        raise CommandError(f"the server did not list its tournaments: {answer}", FAILED)
    numbers = [0]
    for summary in answer.tournaments:
        head, _, number = summary.tournament_id.partition("demo-")
        if head or not number.isdigit():
            continue
        numbers.append(int(number))
        if summary.status.value in ("announced", "registering", "running"):
            cancelled = await control.request(
                op.OpTournamentCancel(
                    request_id=f"cancel-{summary.tournament_id}",
                    tournament_id=summary.tournament_id,
                    in_money=InMoneyMethod.CHIPS,
                )
            )
            outcome = "cancelled" if isinstance(cancelled, sm.Ack) else f"not cancelled: {cancelled}"
            print(
                f"tournament {summary.tournament_id}, left {summary.status.value} by an earlier run: "
                f"{outcome} (CANCEL-1: its money returned)",
                flush=True,
            )
    return f"demo-{max(numbers) + 1}"


class DemoProgress:
    """The demo's live lines: a progress line per tick, milestones and paid eliminations as
    they come."""

    def __init__(
        self, control: Control, server: FeltServer, tournament_id: str, kinds: dict[str, str], started: float
    ) -> None:
        self.control = control
        self.server = server
        self.tournament_id = tournament_id
        self.kinds = kinds
        self.started = started
        self.watch_hint = False
        self._requests = 0
        self._hands = 0
        self._actions = 0

    def requests(self) -> int:
        self._requests += 1
        return self._requests

    def event(self, message: object) -> None:
        from protocol import server_messages as sm
        from protocol import tournament_events as tev

        if not isinstance(message, sm.TournamentEvent):
            return
        event = message.event
        if isinstance(event, tev.Eliminated):
            if event.prize_cents:
                print(
                    f"    {event.player} ({self.kinds.get(event.player, '?')}) out in place {event.place}, "
                    f"wins {_money(event.prize_cents)}",
                    flush=True,
                )
        elif isinstance(event, tev.TournamentStarted):
            print(f"  started: {event.players} players at {event.tables} tables", flush=True)
        elif isinstance(event, tev.HandForHandStarted):
            print(
                f"  hand for hand: {event.players_left} left, {event.places_paid} paid (the bubble)",
                flush=True,
            )
        elif isinstance(event, tev.BubbleBurst):
            print("  the bubble burst: everyone left is in the money", flush=True)
        elif isinstance(event, tev.FinalTable):
            print(f"  the final table: table {event.table_id}", flush=True)

    async def run(self, every: float) -> None:
        import asyncio
        import time

        last = time.monotonic()
        while True:
            await asyncio.sleep(every)
            now = time.monotonic()
            await self.line(now - last)
            last = now

    async def line(self, seconds: float) -> None:
        import time

        from protocol import operator_requests as op
        from protocol import server_messages as sm

        metrics = self.server.metrics
        rate = (metrics.actions - self._actions) / max(seconds, 1e-9)
        self._hands, self._actions = metrics.hands, metrics.actions
        state = self.control.state
        elapsed = _clock(time.monotonic() - self.started)
        answer = await self.control.request(
            op.OpTournamentShow(request_id=f"show-{self.requests()}", tournament_id=self.tournament_id)
        )
        if state is None or state.status.value != "running":
            status = "waiting" if state is None else state.status.value
            entrants = (
                f", {answer.tournament.entrants} registered" if isinstance(answer, sm.OpTournament) else ""
            )
            print(f"  {elapsed}  {status}: {metrics.connections} connections{entrants}", flush=True)
            return
        leader = ""
        tables = 0
        if isinstance(answer, sm.OpTournament):
            seated = [p for p in answer.players if p.chips is not None and p.table_id is not None]
            tables = len({p.table_id for p in seated})
            if seated:
                best = max(seated, key=lambda p: p.chips or 0)
                leader = f"  chip leader {best.player} ({self.kinds.get(best.player, '?')}) {best.chips:,}"
                if not self.watch_hint:
                    self.watch_hint = True
                    print(f"  (a table to watch: table_id {best.table_id})", flush=True)
        ante = f" ante {state.ante}" if state.ante else ""
        print(
            f"  {elapsed}  players left {state.players_left}/{state.entrants}  tables {tables}  "
            f"level {state.level} ({state.small_blind}/{state.big_blind}{ante}){leader}  "
            f"hands {metrics.hands:,}  actions/s {rate:.0f}",
            flush=True,
        )


async def _final(
    args: argparse.Namespace,
    control: Control,
    store: Store,
    tournament_id: str,
    kinds: dict[str, str],
    report: dict[str, object] | None,
    bots_status: int,
    started: float,
    choice: DatabaseChoice,
) -> int:
    import time

    from engine.tournament.transfers import pool_account
    from server.store.database_url import redact

    await control.over(10.0)
    state = control.state
    ended = control.ended
    status = "unknown" if state is None else state.status.value
    hands = len(await store.histories.by_tournament(tournament_id))
    print(
        f"tournament {tournament_id}: {status} in {_clock(time.monotonic() - started)}, "
        f"{hands:,} hands, level {state.level if state else '?'}",
        flush=True,
    )
    if ended is not None:
        paid = [r for r in ended.results if r.prize_cents]
        print("final standings:")
        for result in ended.results[:10]:
            for player in result.players:
                kind = kinds.get(player, "?")
                print(f"  {result.place:>4}  {player:<16} {kind:<8} {_money(result.prize_cents):>10}")
        if len(ended.results) > 10:
            print(f"  ... {len(ended.results) - 10} more places")
        total = sum(r.prize_cents * len(r.players) for r in paid)
        won: dict[str, int] = dict.fromkeys(sorted(set(kinds.values())), 0)
        for result in ended.results:
            for player in result.players:
                if player in kinds:
                    won[kinds[player]] += result.prize_cents
        by_kind = ", ".join(f"{kind} {_money(c)}" for kind, c in won.items())
        print(
            f"payouts: prize pool {_money(state.prize_pool_cents if state else 0)}, "
            f"{_money(total)} paid to {sum(len(r.players) for r in paid)} players; won by kind: {by_kind}"
        )
    if report is not None:
        latency = report["latency_ms"]
        assert isinstance(latency, dict)
        errors_seen = report["errors"]
        assert isinstance(errors_seen, dict)
        errors = ", ".join(f"{k} {v}" for k, v in errors_seen.items()) or "none"
        print(
            f"bots: {report['actions']:,} actions, action->broadcast p50 {latency['p50']:.1f} ms  "
            f"p95 {latency['p95']:.1f} ms  p99 {latency['p99']:.1f} ms  max {latency['max']:.1f} ms; "
            f"{report['frames_in_per_second']:,.0f} frames/s in; reconnects {report['reconnects']}; "
            f"errors {errors}"
        )
    else:
        print(f"bots: the bots' process ended with status {bots_status} and no report")
    pool = await store.ledger.balance(pool_account(tournament_id))
    check = await store.ledger.check()
    print(
        f"ledger check: {'ok' if check.ok else 'FAILED'} ({check.transactions} transactions, "
        f"{check.entries} entries, {check.accounts} accounts); pool of {tournament_id} now {_money(pool)}"
    )
    for problem in check.problems[:20]:
        print(f"  {problem}", file=sys.stderr)
    if choice.url is None:
        where = f" --data-dir {choice.data_dir}"
    elif choice.source == "--database-url":
        where = f" --database-url {redact(choice.url)}"
    else:
        where = ""  # $DATABASE_URL names it
    print(
        f"hand histories: {hands:,} hands stored; export them with\n"
        f"  feltd history export --format pokerstars --tournament {tournament_id}{where} "
        f"--out {tournament_id}.txt"
    )
    print(f"done in {time.monotonic() - started:.1f} s")
    ok = status == "finished" and check.ok and pool == 0 and bots_status == 0
    return 0 if ok else 1
