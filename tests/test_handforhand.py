"""HFH-1: the hand-for-hand barrier, its trigger, and simultaneous eliminations across tables."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.tournament.config import HandForHand as HandForHandSettings
from engine.tournament.config import HandForHandTrigger
from engine.tournament.handforhand import (
    HandForHand,
    RoundInProgress,
    TableMustWait,
    UnknownTable,
    hand_for_hand_due,
)
from engine.tournament.payouts import PayoutStructure, prizes_for_finishes
from engine.tournament.standings import Bust, Finish, Standings


def test_hfh_1_trigger_one_player_per_table_before_the_bubble_until_it_bursts() -> None:
    bubble = HandForHandSettings()  # default margin: one player per table in play
    assert hand_for_hand_due(bubble, players_left=17, places_paid=15, tables=2)
    assert not hand_for_hand_due(bubble, players_left=18, places_paid=15, tables=2)
    assert hand_for_hand_due(bubble, players_left=80, places_paid=45, tables=35), "35 tables: 35 before"
    assert not hand_for_hand_due(bubble, players_left=81, places_paid=45, tables=35)
    assert not hand_for_hand_due(bubble, players_left=15, places_paid=15, tables=2), "bubble burst"
    # once in force it stays until the bubble bursts, however few tables are left
    assert hand_for_hand_due(bubble, players_left=50, places_paid=45, tables=2, in_force=True)
    assert not hand_for_hand_due(bubble, players_left=45, places_paid=45, tables=2, in_force=True)
    exact = HandForHandSettings(bubble_margin=1)  # the operator's own margin: the bubble itself
    assert hand_for_hand_due(exact, players_left=16, places_paid=15, tables=2)
    assert not hand_for_hand_due(exact, players_left=17, places_paid=15, tables=2)
    assert not hand_for_hand_due(bubble, players_left=10, places_paid=9, tables=1), (
        "one table: nothing to sync"
    )
    by_count = HandForHandSettings(trigger=HandForHandTrigger.PLAYERS_LEFT, players_left=30)
    assert hand_for_hand_due(by_count, players_left=30, places_paid=9, tables=4)
    assert not hand_for_hand_due(by_count, players_left=31, places_paid=9, tables=4)
    assert not hand_for_hand_due(HandForHandSettings(trigger=HandForHandTrigger.NEVER), 16, 15, 2)


def test_hfh_1_no_table_starts_a_hand_until_every_table_has_finished() -> None:
    barrier = HandForHand([1, 2, 3], deduction_seconds=60)
    for table_id in (1, 2, 3):
        barrier.deal(table_id)
    assert barrier.finish(1) is None
    with pytest.raises(TableMustWait, match=r"waits for tables \[2, 3\]"):
        barrier.deal(1)
    assert barrier.finish(3) is None
    assert not barrier.can_deal(1) and not barrier.can_deal(3)
    closed = barrier.finish(2)
    assert closed is not None and closed.round == 1 and closed.deduction_seconds == 60
    assert barrier.can_deal(1), "a new synchronized hand starts once every table has finished"
    assert barrier.hands == 1
    with pytest.raises(UnknownTable):
        barrier.deal(9)


def test_hfh_1_tables_change_only_between_rounds() -> None:
    barrier = HandForHand([1, 2], deduction_seconds=120)
    barrier.deal(1)
    with pytest.raises(RoundInProgress):
        barrier.set_tables([1])
    barrier.deal(2)
    barrier.finish(1)
    barrier.finish(2)
    barrier.set_tables([1])
    barrier.deal(1)
    assert barrier.finish(1) is not None


def test_hfh_1_two_busts_at_two_tables_with_equal_stacks_share_their_prizes() -> None:
    # 11 players, 10 paid: the bubble. Two players bust in the same synchronized hand at two
    # tables, each having started it with 400 chips: they tie for 10th and 11th.
    structure = PayoutStructure(prizes=(40000, 20000, 10000, 8000, 6000, 5000, 4000, 3000, 2500, 2001))
    players = [f"p{i}" for i in range(11)]
    standings = Standings(players)
    barrier = HandForHand([1, 2], deduction_seconds=60)
    barrier.deal(1)
    barrier.deal(2)
    assert barrier.finish(2, [Bust("p7", 400, table_id=2, seat_after_button=1)]) is None
    closed = barrier.finish(1, [Bust("p3", 400, table_id=1, seat_after_button=3)])
    assert closed is not None
    finishes = standings.eliminate(closed.busts)
    assert finishes == (Finish(10, ("p7", "p3"), 2),), f"expected a tie for places 10-11, got {finishes}"
    paid = {t.target: t.amount for t in prizes_for_finishes(structure, finishes, "t1")}
    # place 10 pays 2001 and place 11 nothing: 1001 to the first seat after its button, 1000 to the other
    assert paid == {"player:p7": 1001, "player:p3": 1000}, f"got {paid}"


def test_hfh_1_bubble_ties_share_setting_ignores_stacks() -> None:
    standings = Standings([f"p{i}" for i in range(6)])
    barrier = HandForHand([1, 2], deduction_seconds=60)
    barrier.deal(1)
    barrier.deal(2)
    barrier.finish(1, [Bust("p1", 900, 1, 2)])
    closed = barrier.finish(2, [Bust("p2", 300, 2, 1)])
    assert closed is not None
    shared = HandForHandSettings(bubble_ties_share=True)
    finishes = standings.eliminate(closed.busts, all_share=shared.bubble_ties_share)
    assert finishes == (Finish(5, ("p2", "p1"), 2),), f"bubble busts share places 5-6, got {finishes}"
    ranked = Standings([f"p{i}" for i in range(6)]).eliminate(closed.busts)
    assert ranked == (Finish(5, ("p1",), 1), Finish(6, ("p2",), 1)), (
        f"by default stacks rank them, got {ranked}"
    )


@settings(max_examples=100, deadline=None)
@given(tables=st.integers(min_value=2, max_value=6), data=st.data())
def test_hfh_1_barrier_property_one_hand_per_table_per_round(tables: int, data: st.DataObject) -> None:
    """Whatever order tables try to deal and finish in, each table plays exactly one hand per round
    and a round closes only when all of them have finished."""
    barrier = HandForHand(range(1, tables + 1), deduction_seconds=60)
    in_hand: set[int] = set()
    done: set[int] = set()
    for _ in range(tables * 6):
        table_id = data.draw(st.integers(min_value=1, max_value=tables))
        if table_id in in_hand:
            closed = barrier.finish(table_id, [Bust(f"t{table_id}", 100, table_id, 1)])
            in_hand.discard(table_id)
            done.add(table_id)
            if done == set(range(1, tables + 1)):
                assert closed is not None and len(closed.busts) == tables, f"round must close, got {closed}"
                done.clear()
            else:
                assert closed is None, "the round closed before every table finished"
        elif table_id in done:
            assert not barrier.can_deal(table_id), f"table {table_id} dealt twice in one round"
        else:
            barrier.deal(table_id)
            in_hand.add(table_id)
