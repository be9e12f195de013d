"""The command-line flags every command that opens the store shares."""

from __future__ import annotations

import argparse
import os


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    """``--database-url`` (default ``DATABASE_URL``) and ``--data-dir`` (the embedded server's)."""
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL") or None,
        help="PostgreSQL URL (default: $DATABASE_URL; without it an embedded server runs in --data-dir)",
    )
    parser.add_argument(
        "--data-dir",
        default="feltd-data",
        help="folder of the embedded PostgreSQL, kept across restarts (default: ./feltd-data)",
    )
