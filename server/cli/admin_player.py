"""`feltd admin player`: Player accounts: add, show, deposit."""

from __future__ import annotations

import argparse
import sys

HELP = "Player accounts: add, show, deposit."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd admin player`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="create a player and print its access token (shown once)")
    add.add_argument("name")
    add.add_argument(
        "--deposit",
        type=int,
        default=0,
        metavar="CENTS",
        help="credit this many cents from the cashier (a ledger transaction)",
    )
    show = actions.add_parser("show", help="print a player's id, creation time and balance")
    show.add_argument("name")
    deposit = actions.add_parser("deposit", help="credit cents from the cashier to a player")
    deposit.add_argument("name")
    deposit.add_argument("cents", type=int)
    deposit.add_argument("--key", help="idempotency key (default: a new one; pass one to make a retry safe)")
    for sub in (add, show, deposit):
        add_store_arguments(sub)


def run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    import uuid

    from engine.tournament.transfers import CASHIER, Reason, Transfer
    from server.store.connection import open_store
    from server.store.errors import PlayerError

    if args.action in ("add", "deposit"):
        cents = args.deposit if args.action == "add" else args.cents
        if cents < 0 or (args.action == "deposit" and cents == 0):
            print(
                f"feltd admin player: a deposit is a positive number of cents, got {cents}", file=sys.stderr
            )
            return 2
    async with open_store(args.database_url, args.data_dir) as store:
        try:
            if args.action == "add":
                created = await store.players.add(args.name)
                player = created.player
                print(f"player {player.id} {player.name!r} created {player.created_at.isoformat()}")
                print(f"token: {created.token}")
                print("(the token is shown only now; it is stored hashed)")
                if args.deposit:
                    key = f"deposit:{player.id}:initial"
                    result = await store.ledger.post(
                        [Transfer(CASHIER, player.account, args.deposit, key, Reason.DEPOSIT)]
                    )
                    print(
                        f"deposit: {args.deposit} cents (ledger transaction "
                        f"{result.transactions[0].transaction_id})"
                    )
            elif args.action == "deposit":
                player = await store.players.get(args.name)
                key = args.key or f"deposit:{player.id}:{uuid.uuid4().hex}"
                result = await store.ledger.post(
                    [Transfer(CASHIER, player.account, args.cents, key, Reason.DEPOSIT)]
                )
                posted = result.transactions[0]
                print(
                    f"deposit: {args.cents} cents to {player.name!r} (ledger transaction "
                    f"{posted.transaction_id}{', replayed' if posted.replayed else ''})"
                )
            else:
                player = await store.players.get(args.name)
                balance = await store.ledger.balance(player.account)
                print(f"id: {player.id}")
                print(f"name: {player.name}")
                print(f"created: {player.created_at.isoformat()}")
                print(f"balance: {balance}")
        except PlayerError as error:
            print(f"feltd admin player: {error}", file=sys.stderr)
            return 1
    return 0
