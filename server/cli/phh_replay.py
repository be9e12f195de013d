"""`feltd phh replay`: Replay PHH hand histories through the feltd engine."""

from __future__ import annotations

import argparse
import sys

HELP = "Replay PHH hand histories through the feltd engine."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd phh replay`; heavy imports belong in ``run`` so `--help` stays fast."""


def run(args: argparse.Namespace) -> int:
    print("feltd phh replay: not implemented yet", file=sys.stderr)
    return 2
