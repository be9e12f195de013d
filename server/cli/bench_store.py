"""`feltd bench store`: Ledger transactions/s and snapshot rows/s against the database."""

from __future__ import annotations

import argparse

from server.cli.arguments import positive, whole_number

HELP = "Ledger transactions/s and snapshot rows/s against the database."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd bench store`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    add_store_arguments(parser)
    parser.add_argument(
        "--transfers",
        type=positive,
        default=3000,
        metavar="N",
        help="ledger transactions per ledger measurement",
    )
    parser.add_argument(
        "--connections",
        type=positive,
        default=8,
        metavar="N",
        help="PostgreSQL connections for the concurrent measurements",
    )
    parser.add_argument(
        "--writer-callers",
        type=positive,
        default=200,
        metavar="N",
        help="concurrent callers posting through the group-commit LedgerWriter",
    )
    parser.add_argument(
        "--batch",
        type=positive,
        default=100,
        metavar="N",
        help="transfers per post in the batched measurement",
    )
    parser.add_argument(
        "--tables", type=positive, default=1000, metavar="N", help="tables per snapshot batch"
    )
    parser.add_argument(
        "--seats", type=whole_number(2, 10), default=9, metavar="N", help="players per table snapshot"
    )
    parser.add_argument("--rounds", type=positive, default=20, metavar="N", help="snapshot batches")
    parser.add_argument(
        "--ratio-rounds",
        type=positive,
        default=None,
        metavar="N",
        help="instead of the figures above: N alternating rounds of single posts (Ledger.post, no "
        "writer) against a plain asyncpg transaction per transfer (BEGIN; SELECT the source's balance "
        "FOR UPDATE, refusing an overdraft; INSERT the transaction; INSERT its two entries; UPDATE "
        "the two balances; COMMIT, on plain tables), from "
        "--ratio-tasks tasks each; prints each round and the median ratio",
    )
    parser.add_argument(
        "--ratio-plain",
        choices=("checking", "unchecked"),
        default="checking",
        help="the plain transaction of --ratio-rounds: checking (as above) or unchecked "
        "(no balance read, no overdraft refused: INSERT, INSERT, UPDATE); default: checking",
    )
    parser.add_argument(
        "--ratio-plain-no-reset",
        action="store_true",
        help="release the plain side's pooled connections without asyncpg's reset query, as "
        "feltd's pool does (by default the plain side uses asyncpg's default pool)",
    )
    parser.add_argument(
        "--ratio-tasks", type=positive, default=50, metavar="N", help="concurrent tasks for --ratio-rounds"
    )
    parser.add_argument(
        "--in-place",
        action="store_true",
        help="write into the configured database itself instead of a temporary database "
        "made (and dropped) on the same server",
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    from server.store.bench import run_store_bench
    from server.store.options import database_choice

    choice = database_choice(args)
    choice.check()
    print(f"database: {choice.describe()}", flush=True)
    return asyncio.run(run_store_bench(args))
