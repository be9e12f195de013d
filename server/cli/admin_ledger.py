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
    check.add_argument(
        "--anchor",
        metavar="FILE",
        default=None,
        help="a file kept outside the database: if it exists, the ledger must still hold the "
        "transactions it sealed (so a superuser's TRUNCATE ... RESTART IDENTITY or rewrite shows); "
        "after a sound check it is replaced by the ledger's seal now",
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    import json
    import os
    from pathlib import Path

    from server.store.ledger import Seal
    from server.store.options import database_choice, open_chosen_store

    anchor_path = None if args.anchor is None else Path(args.anchor)
    anchor: Seal | None = None
    if anchor_path is not None and anchor_path.exists():
        try:
            fields = json.loads(anchor_path.read_text("utf-8"))
            anchor = Seal(int(fields["last_id"]), int(fields["transactions"]), str(fields["digest"]))
        except (OSError, ValueError, KeyError, TypeError) as error:
            print(f"feltd admin ledger check: anchor {anchor_path} cannot be read: {error}", file=sys.stderr)
            return 2
    async with open_chosen_store(database_choice(args)) as store:
        report = await store.ledger.check(anchor)
    summary = f"{report.transactions} transactions, {report.entries} entries, {report.accounts} accounts"
    if report.ok:
        print(f"ledger ok: {summary}")
        if anchor_path is not None and report.seal is not None:
            seal = report.seal
            text = json.dumps(
                {"last_id": seal.last_id, "transactions": seal.transactions, "digest": seal.digest}
            )
            temporary = anchor_path.with_name(anchor_path.name + ".tmp")
            temporary.write_text(text + "\n", "utf-8")
            os.replace(temporary, anchor_path)
            print(f"anchor {anchor_path}: {seal.transactions} transactions up to id {seal.last_id} sealed")
        return 0
    print(f"ledger BROKEN: {len(report.problems)} problem(s) in {summary}", file=sys.stderr)
    for problem in report.problems:
        print(f"  {problem}", file=sys.stderr)
    return 1
