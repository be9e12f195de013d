"""The command tree. Each leaf module defines ``HELP``, ``add_arguments(parser)`` and ``run(args)``.

Leaf modules import only argparse at module level, so building the tree stays cheap.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

# (path, leaf module); a two-word path makes a group with a subcommand
COMMANDS: tuple[tuple[str, str], ...] = (
    ("serve", "server.cli.serve"),
    ("demo", "server.cli.demo"),
    ("bots", "server.cli.bots"),
    ("connect", "server.cli.connect"),
    ("simulate hands", "server.cli.simulate_hands"),
    ("simulate tournament", "server.cli.simulate_tournament"),
    ("phh replay", "server.cli.phh_replay"),
    ("history export", "server.cli.history_export"),
    ("bench engine", "server.cli.bench_engine"),
    ("bench store", "server.cli.bench_store"),
    ("bench live", "server.cli.bench_live"),
    ("admin player", "server.cli.admin_player"),
    ("admin operator", "server.cli.admin_operator"),
    ("admin ledger", "server.cli.admin_ledger"),
    ("admin tournament", "server.cli.admin_tournament"),
)

GROUP_HELP = {
    "simulate": "Run the pure engine and tournament core in one process, no network.",
    "phh": "Hand histories in the open Poker Hand History format.",
    "history": "Stored hand histories as files other tools read (PokerStars text, PHH).",
    "bench": "Benchmarks that print figures.",
    "admin": "Operator commands: players, operators, ledger, tournaments.",
}


def register(sub: Any, command: Any, group: Any) -> None:
    groups: dict[str, Any] = {}
    for path, module_name in COMMANDS:
        module = importlib.import_module(module_name)
        words = path.split()
        if len(words) == 1:
            parser: argparse.ArgumentParser = command(sub, words[0], f"{module_name}:run", module.HELP)
        else:
            head, leaf = words
            if head not in groups:
                groups[head] = group(sub, head, GROUP_HELP[head])
            parser = command(groups[head], leaf, f"{module_name}:run", module.HELP)
        module.add_arguments(parser)
