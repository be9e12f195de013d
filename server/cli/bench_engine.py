"""`feltd bench engine`: Evaluations/s and full hands/s, with treys and pokerkit as peers."""

from __future__ import annotations

import argparse
import sys

HELP = "Evaluations/s and full hands/s, with treys and pokerkit as peers."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd bench engine`; heavy imports belong in ``run`` so `--help` stays fast."""


def run(args: argparse.Namespace) -> int:
    print("feltd bench engine: not implemented yet", file=sys.stderr)
    return 2
