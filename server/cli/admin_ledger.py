"""`feltd admin ledger`: Ledger checks."""

from __future__ import annotations

import argparse
import sys

HELP = "Ledger checks."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd admin ledger`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check",
        help="verify every transaction sums to zero and every balance is the sum of its entries; "
        "exit 1 and print what is wrong otherwise",
    )
    add_store_arguments(check)


def run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    from server.store.options import database_choice, open_chosen_store

    async with open_chosen_store(database_choice(args)) as store:
        report = await store.ledger.check()
    summary = f"{report.transactions} transactions, {report.entries} entries, {report.accounts} accounts"
    if report.ok:
        print(f"ledger ok: {summary}")
        return 0
    print(f"ledger BROKEN: {len(report.problems)} problem(s) in {summary}", file=sys.stderr)
    for problem in report.problems:
        print(f"  {problem}", file=sys.stderr)
    return 1
