"""`feltd demo`: a whole bot tournament whose money runs through the PostgreSQL ledger."""

from __future__ import annotations

import argparse
import sys

HELP = (
    "A whole bot tournament, printed as it goes: played in-process on the engine, its money posted "
    "to the PostgreSQL ledger (embedded unless DATABASE_URL is set) and audited at the end."
)

BATCH = 500


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--players", type=int, default=500, help="how many bots register (default 500)")
    parser.add_argument("--seed", type=int, default=1, help="seed of every random choice (default 1)")
    parser.add_argument("--config", metavar="FILE", help="tournament TOML (default: a 9-max freezeout)")
    parser.add_argument(
        "--database-url", help="PostgreSQL to use (default: $DATABASE_URL, else the embedded server)"
    )
    parser.add_argument(
        "--data-dir", default="feltd-data", help="embedded PostgreSQL's folder (default ./feltd-data)"
    )
    parser.add_argument("--progress-every", type=int, default=1000, metavar="HANDS")


def _money(cents: int) -> str:
    return f"{cents // 100:,}.{cents % 100:02d}"


def run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_demo(args))


async def _demo(args: argparse.Namespace) -> int:
    import asyncio
    import dataclasses
    import time
    import tomllib
    from collections import defaultdict
    from pathlib import Path

    from engine.tournament.config import ConfigError, load_config
    from engine.tournament.simulation import Progress, default_config, run_tournament
    from engine.tournament.transfers import HOUSE, Reason, pool_account
    from server.store.connection import open_store
    from server.store.errors import TournamentExists
    from server.store.tournaments import Result, TournamentStatus

    try:
        config = load_config(args.config) if args.config else default_config(args.players)
    except (ConfigError, OSError) as error:
        print(f"feltd demo: {error}", file=sys.stderr)
        return 2
    # One id per (config, field, seed): running the same demo again replays the same idempotency
    # keys, so the ledger shows that a retry never moves money twice.
    config = dataclasses.replace(config, id=f"demo-{config.id}-{args.players}p-s{args.seed}")
    toml_text = Path(args.config).read_text() if args.config else ""

    print(f"feltd demo: {config.name}, {args.players} bots, seed {args.seed}")
    started = time.perf_counter()
    async with open_store(args.database_url, args.data_dir) as store:
        where = "embedded PostgreSQL in " + args.data_dir if not args.database_url else "DATABASE_URL"
        print(f"store: {where} (schema version {store.migrations.version})", flush=True)
        try:
            await store.tournaments.create(
                config.id, config.name, toml_text, tomllib.loads(toml_text) if toml_text else {}
            )
            fresh = True
        except TournamentExists:
            fresh = False
            print(f"tournament {config.id} exists already: its money will be replayed, not moved again")
        if fresh:
            await store.tournaments.set_status(config.id, TournamentStatus.REGISTERING)

        def progress(report: Progress) -> None:
            print(
                f"  players left {report.players_left:>6}  tables {report.tables:>4}  "
                f"level {report.level:>2}  hands {report.hands:>6}",
                flush=True,
            )

        # The engine is synchronous and CPU-bound; a thread keeps the event loop (and the
        # store's connections) responsive while it plays.
        result = await asyncio.to_thread(
            run_tournament, config, args.players, args.seed, progress, progress_every=args.progress_every
        )
        print(
            f"played {result.hands} hands, {result.moves} seat moves, {result.tables_broken} tables broken, "
            f"{result.hand_for_hand_hands} hand-for-hand hands",
            flush=True,
        )
        if fresh:
            await store.tournaments.set_status(config.id, TournamentStatus.RUNNING)

        transfers = list(result.transfers)
        posted = replayed = 0
        for start in range(0, len(transfers), BATCH):
            outcome = await store.ledger.post(transfers[start : start + BATCH])
            posted += len(outcome.posted)
            replayed += len(outcome.replayed)
        print(f"ledger: {posted} transfers posted, {replayed} replayed without moving money")

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
        if fresh:
            await store.tournaments.set_status(config.id, TournamentStatus.FINISHED)

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
        for problem in check.problems[:20]:
            print(f"  {problem}", file=sys.stderr)
    print(f"done in {time.perf_counter() - started:.1f} s")
    return 0 if check.ok and pool == 0 else 1
