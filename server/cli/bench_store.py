"""`feltd bench store`: Ledger transactions/s and snapshot rows/s against the database."""

from __future__ import annotations

import argparse

HELP = "Ledger transactions/s and snapshot rows/s against the database."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd bench store`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    add_store_arguments(parser)
    parser.add_argument(
        "--transfers",
        type=int,
        default=3000,
        help="ledger transactions per ledger measurement (default 3000)",
    )
    parser.add_argument(
        "--connections", type=int, default=8, help="connections for the concurrent measurements (default 8)"
    )
    parser.add_argument(
        "--writer-callers",
        type=int,
        default=200,
        help="concurrent callers posting through the group-commit LedgerWriter (default 200)",
    )
    parser.add_argument(
        "--batch", type=int, default=100, help="transfers per post in the batched measurement (default 100)"
    )
    parser.add_argument("--tables", type=int, default=1000, help="tables per snapshot batch (default 1000)")
    parser.add_argument("--seats", type=int, default=9, help="players per table snapshot (default 9)")
    parser.add_argument("--rounds", type=int, default=20, help="snapshot batches (default 20)")
    parser.add_argument(
        "--in-place",
        action="store_true",
        help="write into the configured database itself instead of a temporary database "
        "made (and dropped) on the same server",
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    from server.store.bench import run_store_bench

    return asyncio.run(run_store_bench(args))
