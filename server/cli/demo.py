"""`feltd demo`: a whole bot tournament whose money runs through the PostgreSQL ledger.

Everything the demo is given is checked before it makes anything (a config file, the field size,
the database URL or data folder): a bad input leaves no folder and no database row behind.

The tournament's record moves announced -> registering -> running -> finished. A run that was
interrupted leaves it part way; the next run of the same demo (same config, field and seed) takes
it on from where it is and replays the same idempotency keys, so no money moves twice.
Ctrl-C stops the play within a few dozen hands: the engine runs in a thread that checks for a
stop at every progress report, and the demo asks for reports often.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from server.cli.arguments import positive, whole_number

if TYPE_CHECKING:
    from engine.tournament.config import TournamentConfig
    from engine.tournament.simulation import Progress
    from server.store.options import DatabaseChoice
    from server.store.tournaments import Tournaments, TournamentStatus

HELP = (
    "A whole bot tournament, printed as it goes: played in-process on the engine, its money (in "
    "cents) posted to the PostgreSQL ledger and audited at the end."
)

BATCH = 500
# Hands between two looks at the stop flag: small enough that Ctrl-C is felt at once.
STOP_CHECK_HANDS = 50


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from server.store.options import add_store_arguments

    parser.add_argument(
        "--players", type=whole_number(2), default=500, metavar="N", help="how many bots register, at least 2"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of every random choice")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="tournament TOML, UTF-8, money in cents (default: a 10.00 + 1.00 9-max freezeout)",
    )
    add_store_arguments(parser)
    parser.add_argument(
        "--progress-every", type=positive, default=1000, metavar="HANDS", help="hands between progress lines"
    )


def _money(cents: int) -> str:
    return f"{cents // 100:,}.{cents % 100:02d}"


def run(args: argparse.Namespace) -> int:
    import asyncio

    from engine.tournament.config import ConfigError, parse_config
    from engine.tournament.simulation import default_config
    from server.cli.exits import CommandError
    from server.cli.files import read_text
    from server.store.options import database_choice

    # Every input, checked before anything is made.
    toml_text = read_text(args.config) if args.config else ""
    try:
        config = parse_config(toml_text) if args.config else default_config(args.players)
    except ConfigError as error:
        raise CommandError(f"{args.config}: {error}") from None
    if args.players > config.max_players:
        raise CommandError(
            f"--players {args.players}: {args.config} takes at most {config.max_players} players"
        )
    choice = database_choice(args)
    choice.check()
    return asyncio.run(_demo(args, config, toml_text, choice))


class _Stopped(Exception):
    """Raised in the engine's thread to end it once the demo is stopping."""


async def _demo(
    args: argparse.Namespace, config: TournamentConfig, toml_text: str, choice: DatabaseChoice
) -> int:
    import asyncio
    import dataclasses
    import threading
    import time
    import tomllib
    from collections import defaultdict

    from engine.tournament.simulation import run_tournament
    from engine.tournament.transfers import HOUSE, Reason, pool_account
    from server.store.errors import TournamentExists
    from server.store.options import open_chosen_store
    from server.store.tournaments import Result, TournamentStatus

    # One id per (config, field, seed): running the same demo again replays the same idempotency
    # keys, so the ledger shows that a retry never moves money twice.
    config = dataclasses.replace(config, id=f"demo-{config.id}-{args.players}p-s{args.seed}")

    print(f"feltd demo: {config.name}, {args.players} bots, seed {args.seed}", flush=True)
    started = time.perf_counter()
    async with open_chosen_store(choice) as store:
        print(f"schema version {store.migrations.version}", flush=True)
        try:
            await store.tournaments.create(
                config.id, config.name, toml_text, tomllib.loads(toml_text) if toml_text else {}
            )
        except TournamentExists:
            status = (await store.tournaments.get(config.id)).status
            print(
                f"tournament {config.id} exists already ({status}): it is taken on from there, "
                "its money replayed, not moved again",
                flush=True,
            )
        await _advance(store.tournaments, config.id, TournamentStatus.RUNNING)

        stop = threading.Event()
        next_line = args.progress_every
        shown = -1  # hands of the last report printed
        last: list[Progress] = []

        def progress(report: Progress) -> None:
            nonlocal next_line, shown
            if stop.is_set():
                raise _Stopped
            last[:] = [report]
            if report.hands >= next_line:
                _print_progress(report)
                shown = report.hands
                next_line = report.hands + args.progress_every

        # The engine is synchronous and CPU-bound; a thread keeps the event loop (and the
        # store's connections) responsive while it plays, and lets Ctrl-C cancel the wait.
        try:
            result = await asyncio.to_thread(
                run_tournament, config, args.players, args.seed, progress, progress_every=STOP_CHECK_HANDS
            )
        finally:
            stop.set()
        if last and last[0].hands != shown:
            _print_progress(last[0])  # where it ended
        print(
            f"played {result.hands} hands, {result.moves} seat moves, {result.tables_broken} tables broken, "
            f"{result.hand_for_hand_hands} hand-for-hand hands",
            flush=True,
        )

        transfers = list(result.transfers)
        posted = replayed = 0
        for start in range(0, len(transfers), BATCH):
            outcome = await store.ledger.post(transfers[start : start + BATCH])
            posted += len(outcome.posted)
            replayed += len(outcome.replayed)
        print(f"ledger: {posted} transfers posted, {replayed} replayed without moving money", flush=True)

        won: dict[str, int] = defaultdict(int)
        for transfer in transfers:
            if transfer.reason is Reason.PRIZE:
                won[transfer.target.split(":", 1)[1]] += transfer.amount
        results = [
            Result(player, finish.place, won.get(player, 0))
            for finish in result.finishes
            for player in finish.players
        ]
        await store.tournaments.record_results(config.id, results)
        await _advance(store.tournaments, config.id, TournamentStatus.FINISHED)

        for finish in result.finishes[:5]:
            for player in finish.players:
                print(f"  place {finish.place:>3}  {player:<10} {_money(won.get(player, 0)):>12}")
        pool = await store.ledger.balance(pool_account(config.id))
        house = await store.ledger.balance(HOUSE)
        check = await store.ledger.check()
        print(
            f"prize pool {_money(result.prize_pool)} paid out, pool balance now {_money(pool)}; "
            f"house {_money(house)}"
        )
        print(
            f"ledger check: {'ok' if check.ok else 'FAILED'} "
            f"({check.transactions} transactions, {check.entries} entries, {check.accounts} accounts)"
        )
        status = (await store.tournaments.get(config.id)).status
        print(f"tournament {config.id}: {status}")
        for problem in check.problems[:20]:
            print(f"  {problem}", file=sys.stderr)
    print(f"done in {time.perf_counter() - started:.1f} s")
    return 0 if check.ok and pool == 0 else 1


def _print_progress(report: Progress) -> None:
    print(
        f"  players left {report.players_left:>6}  tables {report.tables:>4}  "
        f"level {report.level:>2}  hands {report.hands:>6}",
        flush=True,
    )


async def _advance(tournaments: Tournaments, tournament_id: str, target: TournamentStatus) -> None:
    """Step the tournament's status along announced -> registering -> running -> finished up to
    ``target``, from wherever an earlier (perhaps interrupted) run left it."""
    from server.cli.exits import CommandError
    from server.store.tournaments import TournamentStatus

    path = [
        TournamentStatus.ANNOUNCED,
        TournamentStatus.REGISTERING,
        TournamentStatus.RUNNING,
        TournamentStatus.FINISHED,
    ]
    current = (await tournaments.get(tournament_id)).status
    if current not in path:
        raise CommandError(f"tournament {tournament_id} is {current}: a demo cannot take it on")
    for step in path[path.index(current) + 1 : path.index(target) + 1]:
        await tournaments.set_status(tournament_id, step)
