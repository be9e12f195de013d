"""BAL-1, BRK-1, BRK-2, MOVE-1: the break and balance planner over plain table states."""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.hand import Hand
from engine.random_play import play_random_hand
from engine.table import ButtonRule, FirstButton, Table, TableSettings
from engine.tournament.balancing import (
    MoveReason,
    Plan,
    PlanError,
    TableState,
    apply_plan,
    plan_tables,
    state_of,
)
from engine.tournament.config import Balancing, BreakOrder, MovedPlayerSeat
from engine.tournament.seating import table_count

DEFAULT = Balancing()


def table(
    table_id: int, seats: Iterable[int], *, big_blind: int | None = None, in_hand: bool = False, size: int = 9
) -> TableState:
    """A table whose seat ``s`` holds player ``t<table_id>s<s>``."""
    return TableState(
        table_id,
        size,
        {seat: f"t{table_id}s{seat}" for seat in seats},
        big_blind_seat=big_blind,
        in_hand=in_hand,
    )


def counts(tables: list[TableState], plan: Plan) -> dict[int, int]:
    return {table_id: len(seats) for table_id, seats in apply_plan(tables, plan).items()}


def test_bal_1_moves_from_largest_to_smallest_with_fewest_moves() -> None:
    tables = [table(1, range(1, 10)), table(2, range(1, 10)), table(3, range(1, 7))]
    plan = plan_tables(tables, DEFAULT, random.Random(1))
    assert counts(tables, plan) == {1: 8, 2: 8, 3: 8}, f"expected 8/8/8, got {counts(tables, plan)}"
    assert len(plan.moves) == 2, f"9/9/6 balances in two moves, got {len(plan.moves)}"
    assert all(move.reason is MoveReason.BALANCE and move.to_table == 3 for move in plan.moves)
    assert {move.from_table for move in plan.moves} == {1, 2}


def test_bal_1_gap_under_threshold_moves_nobody() -> None:
    tables = [table(1, range(1, 10)), table(2, range(1, 9))]
    assert plan_tables(tables, DEFAULT, random.Random(1)).empty
    wider = Balancing(threshold=3)
    tables = [table(1, range(1, 10)), table(2, range(1, 8))]
    assert plan_tables(tables, wider, random.Random(1)).empty, "a gap of 2 is under a threshold of 3"


def test_bal_1_source_table_procedure_least_moved_then_lowest_number() -> None:
    # TDA R11C, our fixed procedure: largest idle tables; the one whose next big blind moved least
    tables = [table(1, range(1, 10), big_blind=9), table(2, range(1, 10), big_blind=9), table(3, range(1, 8))]
    plan = plan_tables(tables, DEFAULT, random.Random(1))
    assert [m.from_table for m in plan.moves] == [1], f"tie: lowest table number first, got {plan.moves}"
    plan = plan_tables(tables, DEFAULT, random.Random(1), moves_so_far={"t1s1": 2})
    assert [m.from_table for m in plan.moves] == [2], (
        f"t1s1 already moved twice, expected table 2, got {plan.moves}"
    )


def test_move_1_moves_the_player_due_the_big_blind_next() -> None:
    tables = [table(1, range(1, 10), big_blind=4), table(2, range(1, 8))]
    plan = plan_tables(tables, DEFAULT, random.Random(1))
    assert [(m.player, m.from_seat) for m in plan.moves] == [("t1s5", 5)], (
        f"seat 5 is due the big blind, got {plan.moves}"
    )


def test_move_1_same_position_relative_to_the_blinds() -> None:
    # destination: big blind last on seat 3, next on seat 5; empty seat 4 would be big blind next
    tables = [table(1, range(1, 9), big_blind=4), table(2, [1, 2, 3, 5, 7], big_blind=3)]
    plan = plan_tables(tables, DEFAULT, random.Random(1))
    assert [(m.to_table, m.to_seat) for m in plan.moves] == [(2, 4)], (
        f"expected seat 4 (next big blind), got {plan.moves}"
    )


def test_move_1_worst_position_takes_the_big_blind_soonest_never_the_small_blind() -> None:
    worst = Balancing(moved_player_seat=MovedPlayerSeat.WORST_POSITION)
    # destination's last big blind (seat 9) busted: seat 1 is next, then 2, 3; empty 4 comes right after
    tables = [table(1, range(1, 8), big_blind=2), table(2, [1, 2, 3, 5, 7], big_blind=9)]
    plan = plan_tables(tables, worst, random.Random(1))
    (move,) = plan.moves
    assert (move.to_table, move.to_seat) == (2, 4), f"expected seat 4, the soonest big blind, got {move}"
    # seat 9, where the busted big blind sat, takes the big blind last of all: never chosen here
    assert move.to_seat != 9


def test_move_1_among_equals_prefers_players_moved_least() -> None:
    tables = [table(1, range(1, 10), big_blind=9), table(2, range(1, 10), big_blind=9), table(3, range(1, 8))]
    plan = plan_tables(tables, DEFAULT, random.Random(3), moves_so_far={"t1s1": 1, "t2s1": 0})
    assert [m.player for m in plan.moves] == ["t2s1"], f"expected the player never moved, got {plan.moves}"


def test_move_1_nobody_moves_to_or_from_a_table_in_a_hand() -> None:
    # the short table is in a hand: nothing to do until its hand ends (that end plans again)
    tables = [table(1, range(1, 10)), table(2, range(1, 7), in_hand=True)]
    plan = plan_tables(tables, DEFAULT, random.Random(1))
    assert plan.moves == () and plan.hold == (), f"expected no move and nothing held, got {plan}"
    # the full table is in a hand: the short one is held until a full table is idle
    tables = [table(1, range(1, 10), in_hand=True), table(2, range(1, 7))]
    plan = plan_tables(tables, DEFAULT, random.Random(1))
    assert plan.moves == () and plan.hold == (2,), f"expected table 2 held for a mover, got {plan}"


def test_brk_1_breaks_the_table_of_the_last_elimination() -> None:
    tables = [table(1, range(1, 10)), table(2, range(1, 10)), table(3, range(1, 7)), table(4, [1, 2])]
    plan = plan_tables(tables, DEFAULT, random.Random(5), last_elimination_table=2)
    assert [b.table_id for b in plan.breaks] == [2], f"expected table 2 broken, got {plan.breaks}"
    after = counts(tables, plan)
    assert len(after) == 3 and max(after.values()) - min(after.values()) < 2, f"got {after}"
    assert all(m.reason is MoveReason.BREAK for m in plan.moves if m.from_table == 2)


def test_brk_1_break_order_fixed_and_random() -> None:
    tables = [table(1, range(1, 8)), table(2, range(1, 8)), table(3, range(1, 8)), table(4, range(1, 6))]
    fixed = Balancing(break_order=BreakOrder.FIXED, fixed_order=(3, 1, 2, 4))
    plan = plan_tables(tables, fixed, random.Random(1))
    assert [b.table_id for b in plan.breaks] == [3], f"fixed order starts with table 3, got {plan.breaks}"
    randomly = Balancing(break_order=BreakOrder.RANDOM)
    broken = {plan_tables(tables, randomly, random.Random(seed)).breaks[0].table_id for seed in range(40)}
    assert broken == {1, 2, 3, 4}, f"a random break order may pick any table, got {broken}"
    first = plan_tables(tables, randomly, random.Random(11))
    assert first == plan_tables(tables, randomly, random.Random(11)), "same seed, same plan"


def test_brk_1_broken_table_players_take_random_empty_seats() -> None:
    tables = [table(1, range(1, 4)), table(2, [1, 2, 3, 4, 5, 6])]
    no_redraw = Balancing(redraw_at_tables=())
    seen = set()
    for seed in range(40):
        plan = plan_tables(tables, no_redraw, random.Random(seed), last_elimination_table=1)
        seen |= {(m.player, m.to_seat) for m in plan.moves}
    assert len(seen) > 6, f"broken players must land on random empty seats, saw only {sorted(seen)}"
    assert {seat for _, seat in seen} == {7, 8, 9}


def test_brk_1_a_one_player_table_never_deadlocks() -> None:
    tables = [table(1, [4]), table(2, range(1, 9)), table(3, range(1, 9))]
    plan = plan_tables(tables, DEFAULT, random.Random(1), last_elimination_table=1)
    after = counts(tables, plan)
    assert 1 not in after and sorted(after.values()) == [8, 9], (
        f"the lone player must join a table, got {after}"
    )


def test_brk_2_final_table_reseats_everyone_and_redraws_the_button() -> None:
    tables = [table(1, [1, 2, 3, 4, 5]), table(2, [2, 4, 6, 8])]
    plan = plan_tables(tables, DEFAULT, random.Random(2), last_elimination_table=2)
    assert [b.table_id for b in plan.breaks] == [2]
    assert plan.redraw_tables == (1,), f"the final table redraws its button, got {plan.redraw_tables}"
    after = apply_plan(tables, plan)
    assert sorted(after[1].values()) == sorted([*tables[0].seats.values(), *tables[1].seats.values()])
    assert all(m.reason is MoveReason.REDRAW for m in plan.moves)
    stayed = [p for s, p in tables[0].seats.items() if after[1].get(s) == p]
    assert len(stayed) < 5, f"a redraw reseats table 1's players at random too, {stayed} kept their seats"


def test_brk_2_optional_redraws_at_three_and_two_tables() -> None:
    tables = [table(t, range(1, 7)) for t in range(1, 5)]  # 24 players fit in 3 tables
    plan = plan_tables(
        tables, Balancing(redraw_at_tables=(3, 2, 1)), random.Random(4), last_elimination_table=4
    )
    assert plan.redraw_tables == (1, 2, 3), f"expected a redraw at three tables, got {plan.redraw_tables}"
    assert plan_tables(tables, DEFAULT, random.Random(4), last_elimination_table=4).redraw_tables == ()


def test_plan_rejects_a_player_seated_twice() -> None:
    tables = [TableState(1, 9, {1: "a", 2: "b"}), TableState(2, 9, {1: "a"})]
    with pytest.raises(PlanError, match="seated at tables 1 and 2"):
        plan_tables(tables, DEFAULT, random.Random(1))


@st.composite
def table_states(draw: st.DrawFn, allow_in_hand: bool) -> tuple[list[TableState], Balancing, int]:
    size = draw(st.integers(min_value=3, max_value=10))
    count = draw(st.integers(min_value=1, max_value=12))
    tables = []
    for table_id in range(1, count + 1):
        seats = draw(st.sets(st.integers(min_value=1, max_value=size), max_size=size))
        big_blind = draw(st.none() | st.integers(min_value=1, max_value=size))
        in_hand = allow_in_hand and draw(st.booleans())
        tables.append(table(table_id, sorted(seats), big_blind=big_blind, in_hand=in_hand, size=size))
    balancing = Balancing(
        threshold=draw(st.integers(min_value=2, max_value=3)),
        moved_player_seat=draw(st.sampled_from(list(MovedPlayerSeat))),
        break_order=draw(st.sampled_from(list(BreakOrder))),
        fixed_order=tuple(draw(st.permutations(range(1, count + 1)))),
        redraw_at_tables=draw(st.sampled_from([(1,), (3, 2, 1), ()])),
    )
    return tables, balancing, draw(st.integers(min_value=0, max_value=2**32))


@settings(max_examples=300, deadline=None)
@given(case=table_states(allow_in_hand=False), last=st.none() | st.integers(min_value=1, max_value=12))
def test_bal_1_brk_1_properties_over_idle_tables(
    case: tuple[list[TableState], Balancing, int], last: int | None
) -> None:
    tables, balancing, seed = case
    plan = plan_tables(tables, balancing, random.Random(seed), last_elimination_table=last)
    after = apply_plan(tables, plan)
    players = [p for t in tables for p in t.seats.values()]
    seated = [p for seats in after.values() for p in seats.values()]
    assert sorted(seated) == sorted(players), "everyone stays seated exactly once"
    size = tables[0].size
    assert all(len(seats) <= size for seats in after.values()), f"a table over {size} seats: {after}"
    assert len(after) == min(len(tables), table_count(len(players), size)), (
        f"expected the fewest tables {table_count(len(players), size)}, got {len(after)}"
    )
    sizes = [len(seats) for seats in after.values()]
    assert max(sizes) - min(sizes) < max(balancing.threshold, 2), f"tables still unbalanced: {sizes}"
    assert plan.hold == () and plan.breaking is None
    assert len({m.player for m in plan.moves}) == len(plan.moves), "one move per player"
    again = plan_tables(tables, balancing, random.Random(seed), last_elimination_table=last)
    assert again == plan, "the plan must be deterministic for a given seed"


@settings(max_examples=200, deadline=None)
@given(case=table_states(allow_in_hand=True))
def test_move_1_properties_nobody_moves_mid_hand(case: tuple[list[TableState], Balancing, int]) -> None:
    tables, balancing, seed = case
    plan = plan_tables(tables, balancing, random.Random(seed), last_elimination_table=1)
    busy = {t.table_id for t in tables if t.in_hand}
    touched = (
        {m.from_table for m in plan.moves}
        | {m.to_table for m in plan.moves}
        | {b.table_id for b in plan.breaks}
    )
    assert not touched & busy, f"tables {sorted(touched & busy)} are in a hand and must not be touched"
    after = apply_plan(tables, plan)
    assert sorted(p for s in after.values() for p in s.values()) == sorted(
        p for t in tables for p in t.seats.values()
    )
    assert all(len(seats) <= tables[0].size for seats in after.values())


def test_brk_2_final_table_waits_for_every_hand_before_breaking() -> None:
    tables = [table(1, [1, 2, 3, 4, 5]), table(2, [2, 4, 6, 8], in_hand=True)]
    plan = plan_tables(tables, DEFAULT, random.Random(2), last_elimination_table=1)
    assert plan.empty and plan.hold == (1,) and plan.waiting_for == (2,), (
        f"the redraw needs table 2's hand over first, table 1 held meanwhile; got {plan}"
    )


@settings(max_examples=200, deadline=None)
@given(
    counts=st.lists(st.integers(min_value=1, max_value=9), min_size=2, max_size=12),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_bal_1_as_few_moves_as_possible(counts: list[int], seed: int) -> None:
    """With no table to break and a threshold of 2, the plan makes exactly the minimal number of
    moves: every table must end at q or q+1 players, the r largest taking the q+1 places."""
    total = sum(counts)
    if table_count(total, 9) < len(counts):
        return  # a break is due: that is BRK-1's business, not this property's
    tables = [table(t, range(1, c + 1)) for t, c in enumerate(counts, start=1)]
    plan = plan_tables(tables, DEFAULT, random.Random(seed))
    q, r = divmod(total, len(counts))
    targets = [q + 1] * r + [q] * (len(counts) - r)
    minimal = sum(max(0, c - t) for c, t in zip(sorted(counts, reverse=True), targets, strict=True))
    assert len(plan.moves) == minimal, f"counts {counts}: expected {minimal} moves, got {len(plan.moves)}"


def test_move_1_before_a_tables_first_hand_the_big_blind_follows_the_small_blind() -> None:
    # button on seat 2, no hand yet: seat 3 posts the small blind, seat 4 is due the big blind
    source = TableState(1, 9, {s: f"t1s{s}" for s in range(1, 9)}, button=2)
    plan = plan_tables([source, table(2, range(1, 6))], DEFAULT, random.Random(1))
    assert [m.from_seat for m in plan.moves] == [4], f"seat 4 is due the big blind, got {plan.moves}"


@pytest.mark.parametrize("button_rule", list(ButtonRule))
def test_move_1_agrees_with_the_table_on_who_is_due_the_big_blind(button_rule: ButtonRule) -> None:
    """After real hands (busts included), the planner moves the player the table says posts the
    big blind next (``Table.hands_until_big_blind == 0``)."""
    for seed in range(25):
        rng = random.Random(seed)
        engine_table = Table(TableSettings(size=9, button_rule=button_rule))
        for seat in rng.sample(range(1, 10), 8):
            engine_table.seat_player(seat, f"p{seat}", rng.choice([150, 400, 5000]))
        engine_table.draw_button(rng)
        for number in range(rng.randint(0, 6)):
            if len(engine_table.players) < 4:
                break
            hand = Hand(engine_table.start_hand(f"h{number}", 25, 50), rng=rng)
            play_random_hand(hand, rng)
            engine_table.finish_hand(hand.finishing_stacks())
        positions = engine_table.last_positions
        source = TableState(
            1,
            9,
            {p.seat: p.player for p in engine_table.players},
            big_blind_seat=positions.big_blind if positions else None,
            button=positions.button if positions else engine_table.next_positions().button,
            next_big_blind_seat=engine_table.next_positions().big_blind,
        )
        target = table(2, [1] if len(source.seats) <= 3 else [1, 2])
        plan = plan_tables([source, target], Balancing(redraw_at_tables=()), random.Random(seed))
        balance = [m for m in plan.moves if m.reason is MoveReason.BALANCE and m.from_table == 1]
        if not balance:
            continue
        due = engine_table.hands_until_big_blind(balance[0].from_seat)
        assert due == 0, (
            f"seed {seed}: moved seat {balance[0].from_seat}, which is {due} hands from the big blind"
        )


def test_move_1_forward_button_moves_the_tables_real_next_big_blind() -> None:
    # 6-max, forward-moving button on seat 1, blinds on 2 and 3; seat 2 busts. The button moves
    # to seat 3, so seat 4 posts the small blind and seat 5 the big blind -- not seat 4, the first
    # player after last hand's big blind, as it would be under the dead button.
    engine_table = Table(
        TableSettings(size=6, button_rule=ButtonRule.FORWARD, first_button=FirstButton.SEAT_ONE)
    )
    for seat in range(1, 7):
        engine_table.seat_player(seat, f"a{seat}", 1000)
    engine_table.set_first_button(1)
    dealt = engine_table.next_positions().dealt_in
    engine_table.start_hand("h1", 5, 10)
    finishing = {seat: 1000 for seat in dealt}
    finishing[2], finishing[4] = 0, 2000
    engine_table.finish_hand(finishing)
    upcoming = engine_table.next_positions()
    assert upcoming.big_blind == 5, f"the table says seat 5 posts the big blind next, got {upcoming}"
    last = engine_table.last_positions
    assert last is not None
    big = TableState(
        1,
        6,
        {p.seat: p.player for p in engine_table.players},
        big_blind_seat=last.big_blind,
        button=last.button,
        next_big_blind_seat=upcoming.big_blind,
    )
    plan = plan_tables([big, TableState(2, 6, {1: "b1", 2: "b2"})], Balancing(), random.Random(1))
    assert [m.player for m in plan.moves] == ["a5"], (
        f"expected a5 (due the big blind) to move, got {plan.moves}"
    )


def test_brk_1_players_wait_at_the_breaking_table_for_seats_at_idle_tables() -> None:
    # 30 players fit at 4 tables: break table 1 (idle); every other table is in a hand, so its
    # players stay there, the table held and dealing no more, until seats come free
    busy = [
        table(2, range(1, 10), in_hand=True),
        table(3, range(1, 9), in_hand=True),
        table(4, range(1, 7), in_hand=True),
        table(5, range(1, 5), in_hand=True),
    ]
    plan = plan_tables([table(1, [1, 2, 3]), *busy], DEFAULT, random.Random(1), last_elimination_table=1)
    assert plan.moves == () and plan.breaking == 1 and plan.hold == (1,), f"got {plan}"
    # table 5 finishes its hand: two of table 1's players can go there at once, one waits
    idle_five = [*busy[:3], table(5, range(1, 7))]
    plan = plan_tables(
        [TableState(1, 9, {s: f"t1s{s}" for s in (1, 2, 3)}, breaking=True), *idle_five],
        DEFAULT,
        random.Random(1),
    )
    assert [m.to_table for m in plan.moves] == [5, 5, 5], f"table 5 had three free seats: {plan}"
    assert [b.table_id for b in plan.breaks] == [1] and plan.breaking is None, f"table 1 closes: {plan}"


def test_move_1_moved_player_takes_the_empty_seat_that_posts_the_big_blind_at_once() -> None:
    """The case from review: 9-max, players in seats 1-8; a hand with button 3, small blind 4 and
    big blind 5 ends with seat 6 busted, so the next hand is button 4, small blind 5, big blind 7
    and seats 6 and 9 are open. A mover due the big blind at its own table must sit in seat 6,
    where they post the big blind at once, not in seat 9 (two hands away), under either button
    rule. The planner used to count from the seat before the next big blind (6, empty)."""
    for button_rule in ButtonRule:
        for moved_player_seat in MovedPlayerSeat:
            destination = Table(TableSettings(size=9, button_rule=button_rule), table_id=2)
            for seat in range(1, 9):
                destination.seat_player(seat, f"d{seat}", 5000)
            destination.set_first_button(2)  # first hand: button 2, blinds 3 and 4
            setup = destination.start_hand("h1", 50, 100)
            destination.finish_hand({s.seat: s.stack for s in setup.seats})
            setup = destination.start_hand("h2", 50, 100)
            assert (setup.button, setup.small_blind_seat, setup.big_blind_seat) == (3, 4, 5)
            finishing = {s.seat: s.stack for s in setup.seats}
            finishing[6], finishing[7] = 0, finishing[7] + finishing[6]
            destination.finish_hand(finishing)
            upcoming = destination.next_positions()
            assert (upcoming.button, upcoming.small_blind, upcoming.big_blind) == (4, 5, 7), upcoming
            waits = destination.newcomer_big_blind_waits()
            assert waits == {6: 0, 9: 2}, f"{button_rule}: seat 6 posts the big blind at once, got {waits}"
            source = Table(TableSettings(size=9, button_rule=button_rule), table_id=1)
            for seat in range(1, 10):
                source.seat_player(seat, f"s{seat}", 5000)
            source.set_first_button(1)
            plan = plan_tables(
                [state_of(source), state_of(destination)],
                Balancing(moved_player_seat=moved_player_seat, redraw_at_tables=()),
                random.Random(1),
            )
            assert [(m.player, m.to_table, m.to_seat) for m in plan.moves] == [("s3", 2, 6)], (
                f"{button_rule}/{moved_player_seat}: expected s3 (due the big blind) in seat 6, "
                f"got {plan.moves}"
            )
