"""The opening seat draw (SEAT-1): random tables and random seats, in the fewest tables.

Invariants of a ``Seating``:

- the number of tables is the fewest that hold everyone: ``ceil(players / table_size)``;
- table head counts differ by at most one (so balancing has nothing to do at the first hand);
- every player has exactly one seat; seats are numbered ``1 .. table_size``; tables ``1 .. T``.

Everything random comes from the injected ``random.Random``, so a seating is a function of the
player list (in the order given) and the seed.

``open_tables`` turns a seating into ``engine.table.Table``s with the starting stacks and gives
each table its first button by the table's own draw (SEAT-2 lives in ``engine.table``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.table import ButtonDraw, FirstButton, Table, TableSettings
from engine.triads import can


class SeatingError(ValueError):
    """Players cannot be seated as asked (no players, a duplicate, a table size under two)."""


@dataclass(frozen=True, slots=True)
class Seating:
    """Who sits where at the start: ``tables[table_id][seat] == player``."""

    table_size: int
    tables: Mapping[int, Mapping[int, str]]

    def seat_of(self) -> dict[str, tuple[int, int]]:
        """Each player's ``(table_id, seat)``."""
        return {
            player: (table_id, seat)
            for table_id, seats in self.tables.items()
            for seat, player in seats.items()
        }


def table_count(players: int, table_size: int) -> int:
    """The fewest tables of ``table_size`` seats that hold ``players`` (at least one)."""
    if table_size < 2:
        raise SeatingError(f"a table needs at least 2 seats, got {table_size}")
    return max(1, -(-players // table_size))


def table_head_counts(players: int, table_size: int) -> list[int]:
    """Players per table over the fewest tables, differing by at most one, larger tables first."""
    tables = table_count(players, table_size)
    base, extra = divmod(players, tables)
    return [base + 1 if index < extra else base for index in range(tables)]


def verify_seat_players(players: Sequence[str], table_size: int) -> None:
    """Raise ``SeatingError`` unless ``players`` can be seated at tables of ``table_size``."""
    if table_size < 2:
        raise SeatingError(f"a table needs at least 2 seats, got {table_size}")
    if not players:
        raise SeatingError("no players to seat")
    if len(set(players)) != len(players):
        twice = sorted(player for player, count in Counter(players).items() if count > 1)
        raise SeatingError(f"players must be distinct, got {twice} more than once")


can_seat_players = can(verify_seat_players, SeatingError)


def seat_players(players: Sequence[str], table_size: int, rng: random.Random) -> Seating:
    """Seat ``players`` at random (SEAT-1): random table, random seat, fewest tables, even counts.

    Players are shuffled, dealt to tables by the even head counts, and each table's players take
    a random sample of its seat numbers (so empty seats fall anywhere, as in a live draw).
    """
    verify_seat_players(players, table_size)
    order = list(players)
    rng.shuffle(order)
    tables: dict[int, dict[int, str]] = {}
    start = 0
    for index, count in enumerate(table_head_counts(len(order), table_size)):
        seats = sorted(rng.sample(range(1, table_size + 1), count))
        tables[index + 1] = dict(zip(seats, order[start : start + count], strict=True))
        start += count
    return Seating(table_size=table_size, tables=tables)


@dataclass(frozen=True, slots=True)
class OpenTables:
    """The engine tables of a seating, and each table's first-button draw (SEAT-2)."""

    tables: dict[int, Table]
    draws: dict[int, ButtonDraw]


def open_tables(
    seating: Seating, settings: TableSettings, starting_stack: int, rng: random.Random
) -> OpenTables:
    """Seat everyone at new ``Table``s with ``starting_stack`` chips and place the first buttons.

    With ``FirstButton.DRAW`` each table draws (one card each, highest card, ties by suit; SEAT-2)
    in table order from ``rng``; with ``SEAT_ONE`` the table puts it on seat 1. A table seated
    with one player (possible only at two-seat tables) cannot draw yet: it must draw before its
    first hand, once a second player has joined.
    """
    if settings.size != seating.table_size:
        raise SeatingError(f"tables of {settings.size} seats cannot take a seating for {seating.table_size}")
    tables: dict[int, Table] = {}
    draws: dict[int, ButtonDraw] = {}
    for table_id, seats in seating.tables.items():
        table = Table(settings, table_id=table_id)
        for seat, player in seats.items():
            table.seat_player(seat, player, starting_stack)
        if len(seats) >= 2:
            if settings.first_button is FirstButton.DRAW:
                draws[table_id] = table.draw_button(rng)
            else:
                table.set_first_button(1)
        tables[table_id] = table
    return OpenTables(tables, draws)
