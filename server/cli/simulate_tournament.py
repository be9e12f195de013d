"""`feltd simulate tournament`: Play a whole tournament in-process on the pure engine and core."""

from __future__ import annotations

import argparse
import sys

from server.cli.arguments import non_negative, positive, whole_number

HELP = "Play a whole tournament in-process on the pure engine and core."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd simulate tournament`; heavy imports belong in ``run`` so `--help` stays fast."""
    parser.add_argument(
        "--players",
        type=whole_number(2),
        required=True,
        metavar="N",
        help="how many bots register, at least 2",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of every random choice")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="tournament TOML, UTF-8, money in cents (default: a 10.00 + 1.00 9-max freezeout, "
        "15-minute levels)",
    )
    parser.add_argument(
        "--progress-every", type=positive, default=2000, metavar="HANDS", help="hands between progress lines"
    )
    parser.add_argument(
        "--top", type=non_negative, default=10, metavar="N", help="finishers to list in the summary"
    )
    parser.add_argument(
        "--transfers-out",
        metavar="FILE",
        help="write every money transfer (amounts in cents), in order, as JSON lines into FILE, a new "
        "file (checked before play starts)",
    )


def _money(cents: int) -> str:
    return f"{cents // 100:,}.{cents % 100:02d}"


def _clock(seconds: int) -> str:
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}"


def run(args: argparse.Namespace) -> int:
    import json
    import time

    from engine.tournament.config import ConfigError, parse_config
    from engine.tournament.simulation import (
        InvariantBroken,
        Progress,
        SimulationError,
        default_config,
        run_tournament,
    )
    from server.cli.exits import CommandError
    from server.cli.files import check_new_file, read_text

    try:
        config = parse_config(read_text(args.config)) if args.config else default_config(args.players)
    except ConfigError as error:
        raise CommandError(f"{args.config}: {error}") from None
    transfers_out = check_new_file(args.transfers_out) if args.transfers_out else None
    started = time.perf_counter()

    def progress(report: Progress) -> None:
        elapsed = time.perf_counter() - started
        if report.registering:
            print(f"registered   {report.players_left:>6}  ({elapsed:.1f} s)", flush=True)
            return
        rate = report.hands / elapsed if elapsed > 0 else 0.0
        hfh = "  hand-for-hand" if report.hand_for_hand else ""
        print(
            f"players left {report.players_left:>6}  tables {report.tables:>5}  level {report.level:>2}  "
            f"hands {report.hands:>7}  clock {_clock(report.clock_seconds)}  "
            f"{rate:,.0f} hands/s{hfh}",
            flush=True,
        )

    print(f"feltd simulate tournament: {config.id} ({config.name}), {args.players} players, seed {args.seed}")
    try:
        result = run_tournament(config, args.players, args.seed, progress, progress_every=args.progress_every)
    except InvariantBroken as error:
        print(f"INVARIANT BROKEN: {error}", file=sys.stderr)
        return 1
    except SimulationError as error:
        raise CommandError(str(error)) from None
    elapsed = time.perf_counter() - started
    won = result.prize_of()
    paid = sum(won.values())
    print("summary")
    print(f"  wall time          {elapsed:.2f} s ({result.hands / elapsed:,.0f} hands/s)")
    print(f"  entries            {result.entries}  (rebuys {result.rebuys}, add-ons {result.add_ons})")
    print(f"  hands dealt        {result.hands}  ({result.actions} actions)")
    print(f"  moves              {result.moves}  ({result.balance_moves} to balance)")
    print(f"  tables broken      {result.tables_broken}  (redraws {result.redraws})")
    if result.bubble_burst_in_sync is None:
        bubble = "no money bubble"
    else:
        bubble = f"bubble burst {'in' if result.bubble_burst_in_sync else 'OUT OF'} sync"
    print(f"  hand-for-hand      {result.hand_for_hand_hands} hands  ({bubble})")
    print(f"  plan holds         {result.plan_holds}  (tables held while a plan waited for a hand)")
    print(f"  tournament clock   {_clock(result.clock_seconds)}, level {result.level_reached}")
    print(f"  prize pool         {_money(result.prize_pool)}  paid {_money(paid)} to {len(won)} players")
    print(f"  transfers          {len(result.transfers)}  (ledger balanced, pool empty)")
    print("  top finishers")
    shown = 0
    for finish in result.finishes:
        if shown >= args.top:
            break
        places = (
            str(finish.place)
            if finish.shared_places == 1
            else f"{finish.place}-{finish.place + finish.shared_places - 1}"
        )
        for player in finish.players:
            print(f"    {places:>7}  {player}  {_money(won.get(player, 0))}")
            shown += 1
    if transfers_out is not None:
        with transfers_out.open("x", encoding="utf-8") as out:
            for transfer in result.transfers:
                out.write(
                    json.dumps(
                        {
                            "source": transfer.source,
                            "target": transfer.target,
                            "amount": transfer.amount,
                            "idempotency_key": transfer.idempotency_key,
                            "reason": str(transfer.reason),
                        }
                    )
                    + "\n"
                )
        print(f"  transfers written  {args.transfers_out}")
    return 0
