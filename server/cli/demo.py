"""`feltd demo`: A whole bot tournament against an embedded server, printed as it goes."""

from __future__ import annotations

import argparse
import sys

HELP = "A whole bot tournament against an embedded server, printed as it goes."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd demo`; heavy imports belong in ``run`` so `--help` stays fast."""


def run(args: argparse.Namespace) -> int:
    print("feltd demo: not implemented yet", file=sys.stderr)
    return 2
