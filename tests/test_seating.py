"""SEAT-1: random tables and seats, in the fewest tables, head counts differing by at most one."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.tournament.seating import SeatingError, can_seat_players, seat_players, table_count


@settings(max_examples=60, deadline=None)
@given(
    players=st.integers(min_value=1, max_value=400),
    size=st.integers(min_value=2, max_value=10),
    seed=st.integers(0, 10**6),
)
def test_seat_1_fewest_tables_even_counts_everyone_once(players: int, size: int, seed: int) -> None:
    names = [f"p{i}" for i in range(players)]
    seating = seat_players(names, size, random.Random(seed))
    counts = [len(seats) for seats in seating.tables.values()]
    expected_tables = -(-players // size)
    assert len(counts) == expected_tables, f"expected {expected_tables} tables, got {len(counts)}"
    assert max(counts) - min(counts) <= 1, f"head counts must differ by at most one, got {counts}"
    seated = [player for seats in seating.tables.values() for player in seats.values()]
    assert sorted(seated) == sorted(names), "every player must be seated exactly once"
    for table_id, seats in seating.tables.items():
        assert all(1 <= seat <= size for seat in seats), f"table {table_id}: seats outside 1..{size}: {seats}"
    assert sorted(seating.tables) == list(range(1, expected_tables + 1))


def test_seat_1_random_but_deterministic_per_seed() -> None:
    names = [f"p{i}" for i in range(27)]
    first = seat_players(names, 9, random.Random(7))
    again = seat_players(names, 9, random.Random(7))
    other = seat_players(names, 9, random.Random(8))
    assert first == again, "the same seed must give the same seating"
    assert first != other, "another seed should give another seating"
    # random, not registration order: the first nine registrants do not all share table 1
    assert set(first.tables[1].values()) != set(names[:9]), "table 1 must not simply be the first registrants"


def test_seat_1_random_seats_leave_gaps_anywhere() -> None:
    names = [f"p{i}" for i in range(5)]
    empty_seats = set()
    for seed in range(30):
        seats = seat_players(names, 9, random.Random(seed)).tables[1]
        empty_seats |= set(range(1, 10)) - set(seats)
    assert empty_seats == set(range(1, 10)), (
        f"any seat may stay empty in a random draw, saw only {empty_seats}"
    )


def test_seat_1_rejects_duplicates_and_bad_sizes() -> None:
    with pytest.raises(SeatingError, match="more than once"):
        seat_players(["a", "b", "a"], 9, random.Random(1))
    with pytest.raises(SeatingError, match="no players"):
        seat_players([], 9, random.Random(1))
    assert not can_seat_players(["a", "b"], 1)
    assert table_count(19, 9) == 3
