"""`feltd simulate tournament`: Play a whole tournament in-process on the pure engine and core."""

from __future__ import annotations

import argparse
import sys

HELP = "Play a whole tournament in-process on the pure engine and core."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd simulate tournament`; heavy imports belong in ``run`` so `--help` stays fast."""


def run(args: argparse.Namespace) -> int:
    print("feltd simulate tournament: not implemented yet", file=sys.stderr)
    return 2
