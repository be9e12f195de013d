"""`feltd bench store`: Ledger transactions/s and snapshot rows/s against the database."""

from __future__ import annotations

import argparse
import sys

HELP = "Ledger transactions/s and snapshot rows/s against the database."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd bench store`; heavy imports belong in ``run`` so `--help` stays fast."""


def run(args: argparse.Namespace) -> int:
    print("feltd bench store: not implemented yet", file=sys.stderr)
    return 2
