"""`feltd bots`: N bot players against any server, with latency percentiles."""

from __future__ import annotations

import argparse
import sys

HELP = "N bot players against any server, with latency percentiles."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd bots`; heavy imports belong in ``run`` so `--help` stays fast."""


def run(args: argparse.Namespace) -> int:
    print("feltd bots: not implemented yet", file=sys.stderr)
    return 2
