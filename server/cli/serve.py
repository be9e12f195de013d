"""`feltd serve`: Run the server (WebSocket game and operator protocols)."""

from __future__ import annotations

import argparse
import sys

HELP = "Run the server (WebSocket game and operator protocols)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd serve`; heavy imports belong in ``run`` so `--help` stays fast."""


def run(args: argparse.Namespace) -> int:
    print("feltd serve: not implemented yet", file=sys.stderr)
    return 2
