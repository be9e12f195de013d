"""`feltd simulate hands`: play N random hands on the pure engine, optionally writing PHH files
(one per hand) and PokerStars files (the operator's record and one file per player, the player's own
view; the run is written as a freeroll tournament numbered by the seed, level I, hands 30 s apart
from 2026-01-01 00:00 UTC, so the same seed writes the same files).

One table of ``--players`` players plays ``--count`` hands under the dead-button rule with a
seeded random legal policy (``engine.random_play``) that makes raises and all-ins common. A busted
player is replaced by a newcomer with a fresh random stack, at once or one hand later (so empty
seats, dead buttons and dead small blinds happen); stacks are drawn short, medium or deep, so
all-ins and side pots are frequent. The summary says whether chips were conserved in every hand
and across the run.

The table is run like a cash table, where a player due the big blind with less than the blind
and its ante rebuys first (a fresh random stack on top of what is left, counted in the summary).
The hands therefore never have a big blind all-in for less than a full blind. That case is the
one PHH cannot describe as we play it (we have the others call the full big blind, as card rooms
do; pokerkit, reading PHH, has them call only what was posted), so a hand with it could not be
replayed by pokerkit to our finishing stacks. The engine plays it all the same; it is tested in
tests/test_hand_rules.py (LVL-1, BET-2) and against an independent settlement in
tests/test_hand_differential.py. A small blind all-in for less still happens here.
"""

from __future__ import annotations

import argparse

from server.cli.arguments import non_negative, whole_number

HELP = "Play N random hands on the pure engine (optionally writing PHH and PokerStars files)."

BIG_BLIND = 20
SMALL_BLIND = 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd simulate hands`; heavy imports belong in ``run`` so `--help` stays fast."""
    parser.add_argument("--count", type=non_negative, default=1000, metavar="N", help="hands to play")
    parser.add_argument(
        "--players", type=whole_number(2, 10), default=9, metavar="N", help="players at the table, 2..10"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the random policy and the deal")
    parser.add_argument(
        "--limit", choices=("nl", "pl", "fl"), default="nl", help="betting structure: no, pot or fixed limit"
    )
    parser.add_argument(
        "--ante",
        choices=("none", "each", "bb"),
        default="none",
        help=f"ante: none, each player {BIG_BLIND // 10} chips, or one big blind ante of {BIG_BLIND}",
    )
    parser.add_argument("--game", choices=("holdem", "omaha"), default="holdem", help="game")
    parser.add_argument(
        "--phh-out",
        metavar="DIR",
        default=None,
        help="write one .phh file per hand into DIR, a new or empty folder (checked before play starts)",
    )
    parser.add_argument(
        "--pokerstars-out",
        metavar="DIR",
        default=None,
        help="write PokerStars text in DIR (a new or empty folder): operator.txt (every hole card) and "
        "HH-<player>.txt per player",
    )


def run(args: argparse.Namespace) -> int:
    import datetime as dt
    import random
    import sys
    import time

    from engine.betting import AnteKind, Game, Limit
    from engine.events import ActionTaken, AntePosted, BlindPosted, CardsShown, HandsShown, PotAwarded
    from engine.hand import Hand
    from engine.history.phh import PhhError, dumps_phh, export_phh
    from engine.history.pokerstars import (
        StarsHandContext,
        StarsTournament,
        format_pokerstars,
    )
    from engine.random_play import play_random_hand
    from engine.table import FirstButton, Table, TableSettings
    from server.cli.files import check_output_dir, make_output_dir
    from server.cli.pokerstars_files import PokerStarsFiles

    limit = Limit(args.limit)
    game = Game(args.game)
    ante_kind = AnteKind(args.ante)
    ante = {AnteKind.NONE: 0, AnteKind.EACH: BIG_BLIND // 10, AnteKind.BIG_BLIND: BIG_BLIND}[ante_kind]
    out_dir = check_output_dir(args.phh_out) if args.phh_out else None
    if out_dir is not None:
        make_output_dir(out_dir)
    stars_dir = check_output_dir(args.pokerstars_out) if args.pokerstars_out else None
    stars_tournament = StarsTournament(args.seed if args.seed >= 1 else 1)
    stars_epoch = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    stars_files: PokerStarsFiles | None = None
    if stars_dir is not None:
        make_output_dir(stars_dir)
        stars_files = PokerStarsFiles(stars_dir)

    rng = random.Random(args.seed)
    size = max(args.players, 9) if args.players <= 9 else 10
    table = Table(TableSettings(size=size, first_button=FirstButton.DRAW, limit=limit, game=game), table_id=1)
    newcomers = 0
    issued = 0
    rebuys = 0

    def random_stack() -> int:
        kind = rng.random()
        if kind < 0.35:
            return rng.randint(1, 15 * BIG_BLIND)  # short: all-in territory
        if kind < 0.75:
            return rng.randint(15 * BIG_BLIND, 60 * BIG_BLIND)
        return rng.randint(60 * BIG_BLIND, 200 * BIG_BLIND)

    def seat_newcomer(seat: int) -> None:
        nonlocal newcomers, issued
        newcomers += 1
        stack = random_stack()
        issued += stack
        table.seat_player(seat, f"player{newcomers}", stack)

    for seat in sorted(rng.sample(range(1, size + 1), args.players)):
        seat_newcomer(seat)
    table.draw_button(rng)

    hands = actions = all_ins = side_pots = showdowns = 0
    conserved = True
    refused_exports = 0
    # busted players replaced only after one more hand, so their seats stay empty for a hand
    ready = later = 0
    started = time.perf_counter()
    for number in range(1, args.count + 1):
        for _ in range(ready):
            seat_newcomer(rng.choice(table.empty_seats()))
        ready, later = later, 0
        big_blind_seat = table.next_positions().big_blind
        due = table.player_at(big_blind_seat)
        if due is not None and due.stack < BIG_BLIND + ante:
            top_up = random_stack()
            while due.stack + top_up < BIG_BLIND + ante:
                top_up += random_stack()
            table.add_chips(big_blind_seat, top_up)
            issued += top_up
            rebuys += 1
        setup = table.start_hand(f"{args.seed}-{number}", SMALL_BLIND, BIG_BLIND, ante, ante_kind)
        hand = Hand(setup, rng=rng)
        actions += play_random_hand(hand, rng)
        events = hand.events
        pots = 0
        shown = False
        for event in events:
            if isinstance(event, ActionTaken | AntePosted | BlindPosted) and event.all_in:
                all_ins += 1
            elif isinstance(event, PotAwarded):
                pots += 1
            elif isinstance(event, CardsShown | HandsShown):
                shown = True
        side_pots += max(0, pots - 1)
        showdowns += shown
        stacks = hand.finishing_stacks()
        if sum(stacks.values()) != sum(seat.stack for seat in setup.seats):
            conserved = False
        if out_dir is not None:
            try:
                phh = export_phh(
                    setup, events, table=table.table_id, level=1, event=f"simulate seed {args.seed}"
                )
            except PhhError as exc:
                refused_exports += 1
                print(f"hand {setup.hand_id}: not written as PHH: {exc}", file=sys.stderr)
            else:
                (out_dir / f"hand-{number:06d}.phh").write_text(dumps_phh(phh), encoding="utf-8")
        if stars_files is not None:
            context = StarsHandContext(number, 1, 1, stars_epoch + dt.timedelta(seconds=30 * number))
            text = format_pokerstars(setup, events, stars_tournament, context)
            stars_files.write(text, (entry.player for entry in setup.seats))
        result = table.finish_hand(stacks)
        hands += 1
        for busted in result.busted:
            if rng.random() < 0.5:
                seat_newcomer(busted.seat)
            else:
                later += 1
        if len(table.players) < 2:  # a table of one cannot wait a hand for its newcomers
            for _ in range(ready + later):
                seat_newcomer(rng.choice(table.empty_seats()))
            ready = later = 0
    elapsed = time.perf_counter() - started
    if table.chips != issued:
        conserved = False

    rate = hands / elapsed if elapsed > 0 else float("inf")
    print(f"hands:           {hands}")
    print(f"players:         {args.players} at a {size}-max table ({newcomers} seated over the run)")
    blinds = f"blinds {SMALL_BLIND}/{BIG_BLIND}, ante {ante_kind.value}"
    print(f"structure:       {limit.value} {game.value}, {blinds}")
    print(f"actions:         {actions}")
    print(f"all-ins:         {all_ins}")
    print(f"big blind rebuys: {rebuys} (a player due the big blind with less than it and its ante)")
    print(f"side pots:       {side_pots}")
    print(f"showdowns:       {showdowns}")
    print(f"hands/s:         {rate:,.0f}")
    print(f"chips conserved: {'yes' if conserved else 'no'}")
    if out_dir is not None:
        print(f"phh files:       {hands - refused_exports} in {out_dir}")
    if stars_dir is not None and stars_files is not None:
        files = f"operator.txt, {stars_files.player_files} player files"
        print(f"pokerstars:      {hands} hands in {stars_dir} ({files})")
    return 0 if conserved and not refused_exports else 1
