"""`feltd admin operator`: operator accounts. An operator's token opens a WebSocket connection
with the operator role (the ``op_`` requests of docs/protocol.md section 20); a player's token
never does."""

from __future__ import annotations

import argparse

HELP = "Operator accounts: add one (its token is printed once), list them, remove (revoke) one."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd admin operator`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="create an operator and print its access token (shown once)")
    add.add_argument("name", help="the operator's name, unique among operators")
    add_store_arguments(add)
    listing = actions.add_parser("list", help="every operator account: name and when it was made")
    add_store_arguments(listing)
    remove = actions.add_parser(
        "remove", help="revoke an operator: its token logs in no more, its open connections close within 5 s"
    )
    remove.add_argument("name", help="the operator's name")
    add_store_arguments(remove)


def run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    from server.cli.exits import FAILED, CommandError
    from server.store.errors import PlayerError
    from server.store.options import database_choice, open_chosen_store

    async with open_chosen_store(database_choice(args)) as store:
        if args.action == "list":
            for listed in await store.players.operators():
                print(f"{listed.name}\t{listed.created_at.isoformat()}")
            return 0
        if args.action == "remove":
            if not await store.players.remove_operator(args.name):
                raise CommandError(f"no operator is named {args.name!r}", FAILED)
            print(f"operator {args.name!r} removed: its token logs in no more")
            return 0
        try:
            created = await store.players.add_operator(args.name)
        except PlayerError as error:
            raise CommandError(str(error), FAILED) from None
    operator = created.operator
    print(f"operator {operator.name!r} created {operator.created_at.isoformat()}")
    print(f"token: {created.token}")
    print("(the token is shown only now; it is stored hashed)")
    return 0
