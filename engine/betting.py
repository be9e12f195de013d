"""Betting structures and antes: the settings a hand is played under (BET-1, LVL-1)."""

from __future__ import annotations

from enum import StrEnum


class Limit(StrEnum):
    NO_LIMIT = "nl"
    POT_LIMIT = "pl"
    FIXED_LIMIT = "fl"


class AnteKind(StrEnum):
    NONE = "none"
    EACH = "each"  # every player dealt in posts the ante
    BIG_BLIND = "bb"  # one ante for the table, posted by the big blind (TDA RP-11)
