"""`feltd bots`: N bot players against a running server, with latency percentiles.

**Where the bots' accounts come from.** The protocol has no way to make a player (a player's
token is made by the operator, `feltd admin player add`), so `feltd bots` makes its players in
the server's database the same way: `--database-url`, `$DATABASE_URL`, or the embedded
PostgreSQL in `--data-dir` (run it from the folder `feltd serve` runs in). Each bot is a player
named `PREFIX-0001`... (the prefix is new every run unless `--prefix` names one), credited from
the cashier with exactly one entry's price. It also makes an operator account for the run: with
it `--create` schedules the tournament over the protocol (`op_tournament_create`, starting a day
ahead) and starts it (`op_tournament_start`) once every bot is registered; with `--tournament`
the tournament starts on its own schedule. Everything else goes over the public protocol only.

The progress line on stderr (rewritten in place on a terminal, one line per interval otherwise):
connected, registered, hands, actions/s and p99 over the interval, errors, reconnects, players
left. The final report (stdout, text or `--report json`): actions, errors by kind, reconnects,
p50/p95/p99/max action->broadcast latency, frames and bytes per second, and the tournament's
outcome with the prize money each kind of bot won.

Exit status: 0 when every bot played until its tournament was over (or `--duration` ran out),
1 when a bot could not log in, register or stay connected, or the tournament was cancelled.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from server.cli.arguments import positive

if TYPE_CHECKING:
    from collections.abc import Callable

    from client.bot import Chaos
    from client.swarm import BotAccount, Swarm
    from client.think import ThinkTime
    from protocol import server_messages as sm
    from protocol.client_messages import ClientMessage
    from server.store.connection import Store

HELP = "N bot players against a running server: a live progress line, then latency percentiles."

KINDS = ("random", "station", "tag", "mix")
MIX = ("tag", "station", "random")  # --kind mix deals these round the field in turn
ANSWER_SECONDS = 30.0  # how long an operator request may take to be answered


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd bots`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    parser.add_argument("--url", required=True, help="the server's WebSocket address, ws://HOST:PORT/")
    parser.add_argument("--count", type=positive, required=True, metavar="N", help="how many bots")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--tournament", metavar="ID", help="register the bots in this scheduled tournament")
    which.add_argument(
        "--create",
        metavar="FILE",
        help="create a tournament from this TOML file, register the bots, start it when all are in",
    )
    add_bot_arguments(parser)
    parser.add_argument(
        "--report", choices=("text", "json"), default="text", help="the final report's form, on stdout"
    )
    parser.add_argument(
        "--prefix",
        default=None,
        help="bot names are PREFIX-0001, PREFIX-0002 ... (default: bot- and a new random tag)",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop after this many seconds even if the tournament goes on (default: until it ends)",
    )
    parser.add_argument(
        "--progress-every", type=float, default=1.0, metavar="SECONDS", help="seconds between progress lines"
    )
    add_store_arguments(parser)


def add_bot_arguments(parser: argparse.ArgumentParser, *, think: str = "lognormal:0.8,0.6") -> None:
    """How the bots play: flags `feltd bots` and `feltd demo` share."""
    parser.add_argument(
        "--think",
        default=think,
        metavar="DIST",
        help="think time before each action, seconds: fixed:S, uniform:LOW,HIGH or lognormal:MEDIAN,SIGMA",
    )
    parser.add_argument(
        "--kind",
        type=bot_kinds,
        default="mix",
        help="random, station (calling station), tag (tight-aggressive), mix (the three in turn), "
        "or kinds to deal in turn, like tag,random",
    )
    parser.add_argument(
        "--chaos",
        default="",
        metavar="SPEC",
        help="per-turn probabilities: disconnect=P,sit_out=P,bad_frame=P (default: none)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the bots' decisions and think times")


def bot_kinds(text: str) -> str:
    """An argparse ``type`` for ``--kind``."""
    parts = text.split(",")
    if text != "mix" and not all(part in KINDS[:3] for part in parts):
        raise argparse.ArgumentTypeError(
            f"must be random, station, tag, mix or a list of the first three like tag,random; got {text!r}"
        )
    return text


def kind_of(kind: str, index: int) -> str:
    """The kind of the ``index``th bot of a ``--kind`` (``mix`` deals tag, station, random in turn)."""
    parts = MIX if kind == "mix" else tuple(kind.split(","))
    return parts[index % len(parts)]


def read_bot_arguments(args: argparse.Namespace) -> tuple[ThinkTime, Chaos]:
    """``--think`` and ``--chaos`` read, or a ``CommandError`` naming what is wrong."""
    from client.bot import ChaosError, parse_chaos
    from client.think import ThinkTimeError, parse_think
    from server.cli.exits import CommandError

    try:
        think = parse_think(args.think)
    except ThinkTimeError as error:
        raise CommandError(f"--think: {error}") from None
    try:
        chaos = parse_chaos(args.chaos)
    except ChaosError as error:
        raise CommandError(f"--chaos: {error}") from None
    return think, chaos


def run(args: argparse.Namespace) -> int:
    import asyncio

    from engine.tournament.config import ConfigError, parse_config
    from server.cli.exits import CommandError
    from server.cli.files import read_text
    from server.store.options import database_choice

    if not args.url.startswith(("ws://", "wss://")):
        raise CommandError(f"--url {args.url!r} is not a WebSocket address: write ws://HOST:PORT/")
    read_bot_arguments(args)
    if args.duration is not None and not args.duration > 0:
        raise CommandError(f"--duration must be > 0 seconds, got {args.duration}")
    if not args.progress_every > 0:
        raise CommandError(f"--progress-every must be > 0 seconds, got {args.progress_every}")
    toml = None
    if args.create is not None:
        toml = read_text(args.create)
        try:
            config = parse_config(toml)
        except ConfigError as error:
            raise CommandError(f"{args.create}: {error}") from None
        if args.count > config.max_players:
            raise CommandError(
                f"--count {args.count}: {args.create} takes at most {config.max_players} players"
            )
    choice = database_choice(args)
    choice.check()
    return asyncio.run(_main(args, toml))


async def _main(args: argparse.Namespace, toml: str | None) -> int:
    import json
    import sys

    from server.store.options import database_choice, open_chosen_store

    think, chaos = read_bot_arguments(args)
    live = sys.stderr.isatty()

    def show(run: BotsRun) -> None:
        line = run.progress_line()
        if live:
            print(f"\r{line}\033[K", end="", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    # open for the whole run: the run's operator account is removed at its end (``close``)
    async with open_chosen_store(database_choice(args), out=sys.stderr, max_size=4) as store:
        bots = BotsRun(args.url, store)
        try:
            await bots.prepare(
                args.count,
                tournament_id=args.tournament,
                toml=toml,
                kind=args.kind,
                prefix=args.prefix,
            )
            finished = await bots.play(
                think=think,
                chaos=chaos,
                seed=args.seed,
                progress=show,
                every=args.progress_every,
                deadline=args.duration,
            )
        finally:
            await bots.close()
    if live:
        print(file=sys.stderr)
    report = bots.report(finished)
    if args.report == "json":
        print(json.dumps(report, indent=2))
    else:
        print("\n".join(report_lines(report)))
    return 0 if bots.ok(finished, stopped_early=args.duration is not None) else 1


class BotsRun:
    """One run of bots against a server: an operator's connection to create, start and follow
    the tournament, the bots' accounts, and the swarm that plays them."""

    def __init__(self, url: str, store: Store) -> None:
        self.url = url
        self.store = store
        self.control: Control | None = None
        self.tournament_id = ""
        self.created = False
        self.accounts: list[BotAccount] = []
        self.kinds: dict[str, str] = {}
        self.swarm: Swarm | None = None
        self.tag = ""

    async def login(self) -> Control:
        """The run's operator: made in the database, logged in (once); ``close`` removes it."""
        import secrets

        if self.control is None:
            self.tag = secrets.token_hex(3)
            operator = await self.store.players.add_operator(f"bots-{self.tag}")
            self.control = Control(self.url, operator.token)
            await self.control.start()
        return self.control

    async def prepare(
        self, count: int, *, tournament_id: str | None, toml: str | None, kind: str, prefix: str | None
    ) -> sm.TournamentSummary:
        """Log an operator in, create (``toml``) or find (``tournament_id``) the tournament, and
        make ``count`` bot accounts with one entry's price each."""
        from protocol import operator_requests as op
        from protocol import server_messages as sm
        from server.cli.exits import FAILED, CommandError

        control = await self.login()
        if toml is not None:
            start_ms = control.server_time_ms + 24 * 3600 * 1000
            answer = await control.request(
                op.OpTournamentCreate(request_id="create", toml=toml, start_ms=start_ms)
            )
            if not isinstance(answer, sm.OpTournament):
                raise CommandError(f"the server refused the tournament: {_refusal(answer)}", FAILED)
            summary = answer.tournament
            self.created = True
        else:
            assert tournament_id is not None
            answer = await control.request(
                op.OpTournamentShow(request_id="show", tournament_id=tournament_id)
            )
            if not isinstance(answer, sm.OpTournament):
                raise CommandError(f"tournament {tournament_id!r}: {_refusal(answer)}", FAILED)
            summary = answer.tournament
            if summary.status.value not in ("announced", "registering", "running"):
                raise CommandError(
                    f"tournament {tournament_id!r} is {summary.status.value}: nothing to play", FAILED
                )
        self.tournament_id = summary.tournament_id
        await control.follow(self.tournament_id)
        self.accounts = await create_accounts(
            self.store, prefix or f"bot-{self.tag}", count, summary.buy_in_cents + summary.fee_cents, kind
        )
        self.kinds = {account.player: account.strategy.name for account in self.accounts}
        return summary

    async def play(
        self,
        *,
        think: ThinkTime,
        chaos: Chaos,
        seed: int,
        progress: Callable[[BotsRun], None] | None = None,
        every: float = 1.0,
        deadline: float | None = None,
    ) -> bool:
        """Play every bot until the tournament is over for it (``False``: ``deadline`` seconds
        ran out first). With ``--create``, the tournament starts once every bot has registered."""
        import asyncio

        from client.swarm import Swarm

        self.swarm = swarm = Swarm(
            self.url, self.tournament_id, self.accounts, think=think, chaos=chaos, seed=seed
        )
        starter = asyncio.create_task(self._start_when_registered()) if self.created else None
        try:
            finished = await swarm.run(
                progress=None if progress is None else (lambda _: progress(self)),
                every=every,
                deadline=deadline,
            )
        finally:
            if starter is not None:
                starter.cancel()
        if finished and self.control is not None:
            await self.control.over(10.0)
        return finished

    async def _start_when_registered(self) -> None:
        import asyncio

        from protocol import operator_requests as op

        assert self.swarm is not None and self.control is not None
        bots = self.swarm.bots
        while sum(1 for bot in bots if bot.registered or bot.done) < len(bots):
            await asyncio.sleep(0.05)
        await self.control.request(op.OpTournamentStart(request_id="start", tournament_id=self.tournament_id))

    def progress_line(self) -> str:
        assert self.swarm is not None
        line = self.swarm.progress_line()
        state = self.control.state if self.control is not None else None
        if state is not None and state.status.value == "running":
            line += f"  players left {state.players_left}"
        return line

    def prizes_by_kind(self) -> dict[str, int]:
        won = dict.fromkeys(sorted(set(self.kinds.values())), 0)
        ended = self.control.ended if self.control is not None else None
        if ended is not None:
            for result in ended.results:
                for player in result.players:
                    if player in self.kinds:
                        won[self.kinds[player]] += result.prize_cents
        return won

    def report(self, finished: bool) -> dict[str, Any]:
        assert self.swarm is not None
        report = self.swarm.report()
        state = self.control.state if self.control is not None else None
        counts: dict[str, int] = {}
        for name in self.kinds.values():
            counts[name] = counts.get(name, 0) + 1
        report["url"] = self.url
        report["kinds"] = dict(sorted(counts.items()))
        report["failed_bots"] = sum(1 for bot in self.swarm.bots if bot.failure is not None)
        report["tournament"] = {
            "id": self.tournament_id,
            "status": None if state is None else state.status.value,
            "players_left": None if state is None else state.players_left,
            "level": None if state is None else state.level,
            "prize_pool_cents": None if state is None else state.prize_pool_cents,
            "all_bots_finished": finished,
            "prizes_by_kind_cents": self.prizes_by_kind(),
        }
        return report

    def ok(self, finished: bool, *, stopped_early: bool) -> bool:
        assert self.swarm is not None
        failed = any(bot.failure is not None for bot in self.swarm.bots)
        state = self.control.state if self.control is not None else None
        cancelled = state is not None and state.status.value == "cancelled"
        return not failed and not cancelled and (finished or stopped_early)

    async def close(self) -> None:
        if self.control is not None:
            await self.control.close()
        if self.tag:
            import contextlib

            from server.store.errors import StoreError

            # the run's operator token dies with the run: a database keeps no stray operator
            with contextlib.suppress(StoreError, OSError, TimeoutError):
                await self.store.players.remove_operator(f"bots-{self.tag}")
            self.tag = ""


class Control:
    """An operator's connection: requests answered by ``request_id``, and the tournament it
    follows (its latest ``tournament_state``, its ``tournament_ended``, every event to
    ``on_event``)."""

    def __init__(self, url: str, token: str) -> None:
        from client.connection import Connection

        self.connection: Connection = Connection(url, token=token, client_name="feltd-bots-operator/1")
        self.state: sm.TournamentState | None = None
        self.ended: Any = None  # tournament_events.TournamentEnded once seen
        self.on_event: Callable[[sm.ServerMessage], None] | None = None
        self.server_time_ms = 0
        self._answers: dict[str, Any] = {}
        self._reader: Any = None

    async def start(self) -> None:
        import asyncio

        from websockets.exceptions import InvalidHandshake, InvalidURI

        from client.connection import LoginRefused
        from server.cli.exits import FAILED, CommandError

        try:
            welcome = await self.connection.connect()
        except LoginRefused as refused:
            raise CommandError(f"the server refused the operator's login: {refused}", FAILED) from None
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as error:
            raise CommandError(f"cannot connect to {self.connection.url}: {error}", FAILED) from None
        self.server_time_ms = welcome.server_time_ms
        self._reader = asyncio.create_task(self._read(), name="bots operator")

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        from protocol import server_messages as sm
        from protocol import tournament_events as tev

        try:
            while True:
                message = await self.connection.recv()
                if isinstance(message, sm.TournamentState):
                    self.state = message
                elif isinstance(message, sm.TournamentEvent) and isinstance(
                    message.event, tev.TournamentEnded
                ):
                    self.ended = message.event
                request_id = getattr(message, "request_id", None)
                if isinstance(request_id, str) and request_id in self._answers:
                    future = self._answers.pop(request_id)
                    if not future.done():
                        future.set_result(message)
                if self.on_event is not None:
                    self.on_event(message)
        except (ConnectionClosed, ConnectionError):
            for future in self._answers.values():
                if not future.done():
                    future.set_exception(ConnectionError("the operator's connection closed"))

    async def request(self, message: ClientMessage) -> sm.ServerMessage:
        import asyncio

        from server.cli.exits import FAILED, CommandError

        request_id = str(getattr(message, "request_id", ""))
        future: asyncio.Future[sm.ServerMessage] = asyncio.get_running_loop().create_future()
        self._answers[request_id] = future
        await self.connection.send(message)
        try:
            return await asyncio.wait_for(future, ANSWER_SECONDS)
        except TimeoutError:
            raise CommandError(
                f"the server did not answer {type(message).__name__} in time", FAILED
            ) from None

    async def over(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the followed tournament's last state (finished or
        cancelled): it comes after the players' own last messages."""
        import asyncio

        for _ in range(max(1, int(seconds / 0.05))):
            if self.state is not None and self.state.status.value in ("finished", "cancelled"):
                return True
            await asyncio.sleep(0.05)
        return False

    async def follow(self, tournament_id: str) -> None:
        from protocol.client_messages import TournamentSubscribe

        await self.request(TournamentSubscribe(tournament_id=tournament_id, request_id="follow"))

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        await self.connection.close()


def _refusal(answer: sm.ServerMessage) -> str:
    from protocol import server_messages as sm

    if isinstance(answer, sm.Error):
        return f"{answer.code}: {answer.message}"
    return f"unexpected answer {type(answer).__name__}"


async def create_accounts(store: Store, prefix: str, count: int, cents: int, kind: str) -> list[BotAccount]:
    """``count`` players named ``prefix-0001``..., each credited ``cents`` from the cashier."""
    import asyncio

    from client.strategies import STRATEGIES
    from client.swarm import BotAccount
    from engine.tournament.transfers import CASHIER, Reason, Transfer, player_account
    from server.cli.exits import FAILED, CommandError
    from server.store.errors import PlayerExists

    names = [f"{prefix}-{index + 1:04d}" for index in range(count)]
    limit = asyncio.Semaphore(4)

    async def add(name: str) -> str:
        async with limit:
            try:
                return (await store.players.add(name, player_id=name)).token
            except PlayerExists:
                raise CommandError(f"a player named {name} exists: choose another --prefix", FAILED) from None

    tokens = await asyncio.gather(*(add(name) for name in names))
    transfers = [
        Transfer(CASHIER, player_account(name), cents, f"bots-deposit:{name}", Reason.DEPOSIT)
        for name in names
        if cents > 0
    ]
    for start in range(0, len(transfers), 500):
        await store.ledger.post(transfers[start : start + 500])
    return [
        BotAccount(name, token, STRATEGIES[kind_of(kind, index)])
        for index, (name, token) in enumerate(zip(names, tokens, strict=True))
    ]


def _money(cents: int) -> str:
    return f"{cents // 100:,}.{cents % 100:02d}"


def report_lines(report: dict[str, Any]) -> list[str]:
    """The final report as text, one figure per line."""
    latency = report["latency_ms"]
    tournament = report["tournament"]
    kinds = ", ".join(f"{name} {n}" for name, n in report["kinds"].items())
    chaos = ", ".join(f"{name} {n}" for name, n in report["chaos"].items()) or "none"
    errors = ", ".join(f"{name} {n}" for name, n in report["errors"].items()) or "none"
    prizes = ", ".join(f"{name} {_money(c)}" for name, c in tournament["prizes_by_kind_cents"].items())
    return [
        f"feltd bots: {report['bots']} bots ({kinds}) in {tournament['id']} on {report['url']}, "
        f"{report['seconds']:.1f} s",
        f"  tournament      {tournament['status']}, {tournament['players_left']} players left, "
        f"level {tournament['level']}; prize money won by kind: {prizes or 'none yet'}",
        f"  bots            registered {report['registered']}, finished {report['finished']}, "
        f"failed {report['failed_bots']}",
        f"  hands           {report['hands']:,}",
        f"  actions         {report['actions']:,} sent, {report['actions_per_second']:,.1f}/s "
        f"seen broadcast, {report['timed_out']} timed out",
        f"  latency         action->broadcast p50 {latency['p50']:.2f} ms  p95 {latency['p95']:.2f} ms  "
        f"p99 {latency['p99']:.2f} ms  max {latency['max']:.2f} ms  ({latency['samples']:,} actions)",
        f"  frames in       {report['frames_in_per_second']:,.1f}/s, "
        f"{report['bytes_in_per_second']:,} bytes/s ({report['frames_in']:,} frames, "
        f"{report['bytes_in']:,} bytes)",
        f"  frames out      {report['frames_out_per_second']:,.1f}/s, "
        f"{report['bytes_out_per_second']:,} bytes/s ({report['frames_out']:,} frames, "
        f"{report['bytes_out']:,} bytes)",
        f"  reconnects      {report['reconnects']}",
        f"  chaos           {chaos}",
        f"  errors          {errors}",
    ]
