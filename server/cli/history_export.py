"""`feltd history export`: the stored hands as one file other tools read.

``--format pokerstars`` writes PokerStars tournament text (what hand trackers import; each hand
followed by three blank lines), ``--format phh`` one ``.phhs`` file (pokerkit reads it). The hands
are a tournament's (``--tournament``), a player's (``--player``), or a player's in a tournament
(both), oldest first. With ``--player`` the file is that player's own: the PokerStars text keeps
only their hole cards (``engine.history.pokerstars.own_view``), and the PHH hides every other
player's hole cards that were not shown (``????``), as the player saw the hand. Without
``--player`` it is the operator's record, every hole card included. PokerStars writes one file per
tournament, and some readers (pokerdf) take a file's tournament from its first hand: give
``--tournament`` too for such a file.
"""

from __future__ import annotations

import argparse

HELP = "Export stored hands as PokerStars text or PHH (a tournament's or a player's)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd history export`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    parser.add_argument("--format", choices=("phh", "pokerstars"), required=True, help="file format")
    parser.add_argument("--player", metavar="NAME", default=None, help="only NAME's hands, as NAME saw them")
    parser.add_argument("--tournament", metavar="ID", default=None, help="only tournament ID's hands")
    parser.add_argument("--out", metavar="FILE", default=None, help="write FILE instead of standard output")
    add_store_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import sys

    if args.player is None and args.tournament is None:
        print("feltd history export: give --tournament ID, --player NAME, or both", file=sys.stderr)
        return 2
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    import dataclasses
    import sys
    from pathlib import Path

    from server.store.connection import open_store
    from server.store.errors import StoreError
    from server.store.histories import phhs_text, pokerstars_text

    try:
        async with open_store(args.database_url, args.data_dir) as store:
            hands = await store.histories.select(tournament_id=args.tournament, player_id=args.player)
    except (StoreError, ValueError, OSError) as error:
        print(f"feltd history export: {error}", file=sys.stderr)
        return 1
    if not hands:
        chosen = " and ".join(
            part
            for part in (
                f"tournament {args.tournament!r}" if args.tournament is not None else "",
                f"player {args.player!r}" if args.player is not None else "",
            )
            if part
        )
        print(f"feltd history export: no stored hands for {chosen}", file=sys.stderr)
        return 1
    if args.format == "pokerstars":
        text = pokerstars_text(hands, args.player)
    else:
        if args.player is not None:
            hands = [dataclasses.replace(hand, phh=own_phh(hand.phh, args.player)) for hand in hands]
        text = phhs_text(hands)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as error:
        print(f"feltd history export: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"{len(hands)} hands written to {args.out} ({args.format})")
    return 0


def own_phh(text: str, player: str) -> str:
    """A stored PHH hand as ``player`` saw it: every other player's hole cards that were not
    shown at the showdown (``pN sm CARDS``) are written unknown (``????``)."""
    import dataclasses

    from engine.history.phh import PhhActionKind, dumps_phh, loads_phh, parse_action

    hand = loads_phh(text)
    names = hand.players or ()
    actions = [parse_action(action) for action in hand.actions]
    shown = {a.player for a in actions if a.kind is PhhActionKind.SHOW_MUCK and a.cards is not None}
    kept = []
    for action in actions:
        index = action.player
        mine = index is not None and index <= len(names) and names[index - 1] == player
        hidden = index is not None and index not in shown and not mine
        if action.kind is PhhActionKind.DEAL_HOLE and hidden and action.cards is not None:
            kept.append(f"d dh p{index} {'??' * len(action.cards)}")
        else:
            kept.append(action.text)
    return dumps_phh(dataclasses.replace(hand, actions=tuple(kept)))
