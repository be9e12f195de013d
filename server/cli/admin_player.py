"""`feltd admin player`: Player accounts: add, show, deposit."""

from __future__ import annotations

import argparse

from server.cli.arguments import non_negative, positive

HELP = "Player accounts: add, show, deposit (money in cents)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd admin player`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="create a player and print its access token (shown once)")
    add.add_argument("name", help="the player's name, unique")
    add.add_argument(
        "--deposit",
        type=non_negative,
        default=0,
        metavar="CENTS",
        help="credit this many cents from the cashier (a ledger transaction; 0: none)",
    )
    show = actions.add_parser("show", help="print a player's id, creation time and balance in cents")
    show.add_argument("name", help="the player's name")
    deposit = actions.add_parser("deposit", help="credit cents from the cashier to a player")
    deposit.add_argument("name", help="the player's name")
    deposit.add_argument("cents", type=positive, metavar="CENTS", help="amount in cents (1000 is 10.00)")
    deposit.add_argument(
        "--key",
        help="idempotency key: a retry with the same key and amount moves the money once; the same "
        "key with another amount is refused (default: a new key each time)",
    )
    for sub in (add, show, deposit):
        add_store_arguments(sub)


def run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    import uuid

    from engine.tournament.transfers import CASHIER, Reason, Transfer
    from server.cli.exits import FAILED, CommandError
    from server.store.errors import PlayerError
    from server.store.options import database_choice, open_chosen_store

    async with open_chosen_store(database_choice(args)) as store:
        try:
            if args.action == "add":
                # the id is the name: the server names players by their id, on the wire and in
                # the ledger (player:<id>), so a readable id keeps tables and accounts readable
                created = await store.players.add(args.name, player_id=args.name)
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
            raise CommandError(str(error), FAILED) from None
    return 0
