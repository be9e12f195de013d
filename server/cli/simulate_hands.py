"""`feltd simulate hands`: Play N random hands on the pure engine (optionally writing PHH files)."""

from __future__ import annotations

import argparse
import sys

HELP = "Play N random hands on the pure engine (optionally writing PHH files)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd simulate hands`; heavy imports belong in ``run`` so `--help` stays fast."""


def run(args: argparse.Namespace) -> int:
    print("feltd simulate hands: not implemented yet", file=sys.stderr)
    return 2
