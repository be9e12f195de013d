"""`feltd admin player`: Player accounts: add, show."""

from __future__ import annotations

import argparse
import sys

HELP = "Player accounts: add, show."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd admin player`; heavy imports belong in ``run`` so `--help` stays fast."""


def run(args: argparse.Namespace) -> int:
    print("feltd admin player: not implemented yet", file=sys.stderr)
    return 2
