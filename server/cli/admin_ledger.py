"""`feltd admin ledger`: Ledger checks."""

from __future__ import annotations

import argparse
import sys

HELP = "Ledger checks."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd admin ledger`; heavy imports belong in ``run`` so `--help` stays fast."""


def run(args: argparse.Namespace) -> int:
    print("feltd admin ledger: not implemented yet", file=sys.stderr)
    return 2
