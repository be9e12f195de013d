"""`feltd simulate tournament`: Play a whole tournament in-process on the pure engine and core."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from server.cli.arguments import non_negative, positive, whole_number

if TYPE_CHECKING:
    from engine.hand import Hand
    from engine.tournament.config import TournamentConfig
    from engine.tournament.director import Command, DealHand
    from engine.tournament.simulation import HandWatcher
    from server.cli.pokerstars_files import PokerStarsFiles

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
        "--pokerstars-out",
        metavar="DIR",
        help="write the hands as PokerStars text into DIR, a new or empty folder: operator.txt (every "
        "hole card) and HH-<player>.txt per player (their own cards only)",
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


def _pokerstars_writer(files: PokerStarsFiles, config: TournamentConfig, seed: int) -> HandWatcher:
    """Each simulated hand as PokerStars text, with the places and prizes of those who finished
    in it (a bust in a hand-for-hand round is placed when the round closes: that hand's text
    then has no finish line for them)."""
    import datetime as dt

    from engine.history.pokerstars import BuyIn, StarsHandContext, StarsTournament, format_pokerstars
    from engine.history.pokerstars import Finish as StarsFinish
    from engine.tournament.director import PlayerEliminated, TournamentEnded

    tournament = StarsTournament(max(seed, 1), BuyIn(config.buy_in, config.fee or 0, "USD"))
    epoch = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def write(deal: DealHand, hand: Hand, commands: list[Command], started_at: int) -> None:
        dealt = {seat.player for seat in deal.setup.seats}
        finishes = [
            StarsFinish(c.player, c.place, c.prize)
            for c in commands
            if isinstance(c, PlayerEliminated) and c.player in dealt
        ]
        for command in commands:
            if isinstance(command, TournamentEnded):
                paid = dict(command.prizes)
                placed = {f.player for f in finishes}
                finishes += [
                    StarsFinish(player, finish.place, paid.get(player, 0))
                    for finish in command.finishes
                    for player in finish.players
                    if player in dealt and player not in placed
                ]
        context = StarsHandContext(
            deal.hand_number,
            deal.table_id,
            deal.level,
            epoch + dt.timedelta(seconds=started_at),
            tuple(finishes),
        )
        files.write(format_pokerstars(deal.setup, hand.events, tournament, context), dealt)

    return write


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
    from server.cli.files import check_new_file, check_output_dir, make_output_dir, read_text
    from server.cli.pokerstars_files import PokerStarsFiles

    try:
        config = parse_config(read_text(args.config)) if args.config else default_config(args.players)
    except ConfigError as error:
        raise CommandError(f"{args.config}: {error}") from None
    transfers_out = check_new_file(args.transfers_out) if args.transfers_out else None
    stars_dir = check_output_dir(args.pokerstars_out) if args.pokerstars_out else None
    on_hand = None
    stars_files: PokerStarsFiles | None = None
    if stars_dir is not None:
        make_output_dir(stars_dir)
        stars_files = PokerStarsFiles(stars_dir)
        on_hand = _pokerstars_writer(stars_files, config, args.seed)
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
        result = run_tournament(
            config, args.players, args.seed, progress, progress_every=args.progress_every, on_hand=on_hand
        )
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
    if stars_files is not None:
        print(
            f"  pokerstars         {stars_files.hands} hands in {stars_dir} "
            f"(operator.txt, {stars_files.player_files} player files)"
        )
    return 0
