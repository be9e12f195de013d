"""PokerStars hand-history files on disk: the operator's file with every hole card, and one file
per player holding only that player's cards (``engine.history.pokerstars.own_view``).

Used by ``feltd simulate hands|tournament --pokerstars-out DIR``; DIR was checked new or empty
before the work started (``server.cli.files``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from engine.history.pokerstars import HAND_SEPARATOR, own_view


class PokerStarsFiles:
    """Appends each hand to ``operator.txt`` and to ``HH-<player>.txt`` of every player dealt in."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.hands = 0
        self._started: set[str] = set()
        (directory / "operator.txt").write_text("", encoding="utf-8")

    def write(self, text: str, players: Iterable[str]) -> None:
        with (self.directory / "operator.txt").open("a", encoding="utf-8") as operator:
            operator.write(text + HAND_SEPARATOR)
        for player in players:
            mode = "a" if player in self._started else "w"
            self._started.add(player)
            with (self.directory / f"HH-{player}.txt").open(mode, encoding="utf-8") as own:
                own.write(own_view(text, player) + HAND_SEPARATOR)
        self.hands += 1

    @property
    def player_files(self) -> int:
        return len(self._started)
