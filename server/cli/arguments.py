"""Argument types the commands share: whole numbers with a lower bound (and an upper one), and
numbers above zero.

argparse calls them while it parses, so a value that can never work is refused before the
command does anything, with argparse's one-line usage error.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``minimum..maximum`` (no upper bound when None)."""
    wanted = f"a whole number of at least {minimum}" if maximum is None else f"{minimum}..{maximum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {wanted}, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"must be {wanted}, got {value}")
        return value

    parse.__name__ = "whole number"  # what argparse names the type in its own messages
    return parse


positive = whole_number(1)
non_negative = whole_number(0)


def positive_float(text: str) -> float:
    """An argparse ``type``: a finite number above 0 (seconds, say)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text}")
    return value
