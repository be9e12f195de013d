"""ELIM-1, ELIM-2, END-1: eliminations, the finish order with ties, and the end of a tournament."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.tournament.payouts import PayoutStructure, prizes_for_finishes
from engine.tournament.standings import (
    Bust,
    Finish,
    Standings,
    StandingsError,
    eliminated,
    rank_busts,
    tournament_over,
)


def test_elim_1_a_player_with_no_chips_is_eliminated() -> None:
    assert eliminated({"a": 0, "b": 120, "c": 0}) == ("a", "c")
    assert eliminated({"a": 1}) == ()


def test_elim_2_more_chips_at_the_start_of_the_hand_finish_higher() -> None:
    standings = Standings(["a", "b", "c", "d", "e"])
    finishes = standings.eliminate([Bust("a", 300), Bust("b", 900), Bust("c", 500)])
    assert finishes == (Finish(3, ("b",), 1), Finish(4, ("c",), 1), Finish(5, ("a",), 1)), f"got {finishes}"
    assert standings.players_left == 2


def test_elim_2_equal_starting_stacks_tie_and_share_their_places() -> None:
    standings = Standings([f"p{i}" for i in range(6)])
    finishes = standings.eliminate(
        [Bust("p1", 500, 1, seat_after_button=4), Bust("p2", 500, 1, seat_after_button=2), Bust("p3", 200)]
    )
    assert finishes == (Finish(4, ("p2", "p1"), 2), Finish(6, ("p3",), 1)), f"got {finishes}"


def test_elim_2_tied_prizes_split_in_cents_odd_cent_first_after_the_button() -> None:
    # places 2 and 3 pay 3000 + 2001 = 5001 cents: 2501 to the first seat after the button
    structure = PayoutStructure(prizes=(5000, 3000, 2001))
    standings = Standings(["a", "b", "c", "d"])
    standings.eliminate([Bust("d", 10)])
    tied = standings.eliminate(
        [Bust("b", 700, 1, seat_after_button=5), Bust("c", 700, 1, seat_after_button=1)]
    )
    final = standings.finish({"a": 2010})
    paid = {t.target: t.amount for t in prizes_for_finishes(structure, [*tied, *final], "t1")}
    assert paid == {"player:a": 5000, "player:c": 2501, "player:b": 2500}, f"got {paid}"


def test_end_1_ends_when_one_player_has_all_the_chips() -> None:
    assert tournament_over(1)
    assert not tournament_over(2, (700, 300))
    standings = Standings(["a", "b"])
    standings.eliminate([Bust("b", 100)])
    assert standings.finish({"a": 200}) == (Finish(1, ("a",), 1),)
    assert standings.complete


def test_end_1_ends_when_everyone_left_gets_the_same_prize() -> None:
    seats = (5000, 5000, 5000, 1200)  # a satellite: three seats and cash for fourth
    assert not tournament_over(4, seats)
    assert tournament_over(3, seats), "three players left, three equal seats: the satellite is over"
    assert not tournament_over(3, ()), "nobody left is paid: play on"


def test_elim_2_cannot_eliminate_the_last_players_or_strangers() -> None:
    standings = Standings(["a", "b"])
    with pytest.raises(StandingsError, match="nobody to win"):
        standings.eliminate([Bust("a", 10), Bust("b", 10)])
    with pytest.raises(StandingsError, match="not playing"):
        standings.eliminate([Bust("z", 10)])
    assert standings.players_left == 2, "a refused elimination changes nothing"


@settings(max_examples=100, deadline=None)
@given(players=st.integers(min_value=2, max_value=60), seed=st.integers(0, 10**6))
def test_elim_2_every_player_gets_exactly_one_place(players: int, seed: int) -> None:
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(players)]
    standings = Standings(names)
    left = list(names)
    while len(left) > 1:
        batch = rng.sample(left, rng.randint(1, min(4, len(left) - 1)))
        standings.eliminate([Bust(p, rng.choice([100, 200, 300])) for p in batch])
        left = [p for p in left if p not in batch]
    standings.finish({left[0]: 1})
    places = sorted(place for f in standings.finishes for place in range(f.place, f.place + f.shared_places))
    assert places == list(range(1, players + 1)), f"places must be 1..{players} once each, got {places}"
    assert sorted(p for f in standings.finishes for p in f.players) == sorted(names)
    assert standings.complete


def test_rank_busts_bubble_ties_share_whatever_the_stacks() -> None:
    finishes = rank_busts([Bust("a", 100, 2, 1), Bust("b", 900, 1, 3)], worst_place=10, all_share=True)
    assert finishes == (Finish(9, ("a", "b"), 2),), f"got {finishes}"
