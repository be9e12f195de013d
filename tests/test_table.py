"""The table across hands: first button, dead and forward buttons, heads-up, joining, absence.

Hands are "played" here by moving chips between seats by hand (the table only sees setups and
finishing stacks); the tests that need real play use ``engine.hand.Hand``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest

from engine.betting import AnteKind, HandSetup
from engine.table import (
    ButtonNotDrawnError,
    ButtonRule,
    FirstButton,
    HandInProgressError,
    JoinRule,
    NoHandInProgressError,
    Positions,
    SeatTakenError,
    StackError,
    Table,
    TableSettings,
)

_hand_numbers = iter(range(1, 10**9))


def make_table(
    seats: Iterable[int],
    size: int = 9,
    rule: ButtonRule = ButtonRule.DEAD,
    join: JoinRule = JoinRule.ANY,
    button: int | None = None,
    stack: int = 1000,
) -> Table:
    settings = TableSettings(size=size, button_rule=rule, first_button=FirstButton.SEAT_ONE, join_rule=join)
    table = Table(settings)
    for seat in seats:
        table.seat_player(seat, f"p{seat}", stack)
    if button is not None:
        table.set_first_button(button)
    return table


def play(table: Table, bust: Iterable[int] = ()) -> tuple[HandSetup, Positions]:
    """Deal a hand and end it with the seats in ``bust`` losing everything to the big blind (or, if
    the big blind busts too, to the first surviving seat)."""
    positions = table.next_positions()
    setup = table.start_hand(f"h{next(_hand_numbers)}", small_blind=5, big_blind=10)
    stacks = {seat.seat: seat.stack for seat in setup.seats}
    busted = set(bust)
    survivors = [seat for seat in stacks if seat not in busted]
    assert survivors, "a test hand must leave someone with chips"
    winner = positions.big_blind if positions.big_blind in survivors else survivors[0]
    for seat in busted:
        stacks[winner] += stacks[seat]
        stacks[seat] = 0
    table.finish_hand(stacks)
    return setup, positions


def where(positions: Positions) -> tuple[int, int | None, int]:
    return positions.button, positions.small_blind, positions.big_blind


# -- SEAT-2 ------------------------------------------------------------------------------------


def test_seat_2_draw_highest_card_wins_ties_broken_by_suit() -> None:
    tie_seen = False
    for seed in range(200):
        table = Table(TableSettings(size=9))
        for seat in range(1, 10):
            table.seat_player(seat, f"p{seat}", 1000)
        draw = table.draw_button(random.Random(seed))
        ranks = [card >> 2 for _, card in draw.cards]
        best_rank = max(ranks)
        leaders = [(seat, card) for seat, card in draw.cards if card >> 2 == best_rank]
        best_suit_seat = max(leaders, key=lambda seat_card: seat_card[1] & 3)[0]
        assert draw.button == best_suit_seat, f"seed {seed}: expected {best_suit_seat}, got {draw.button}"
        assert len(draw.cards) == 9 and [seat for seat, _ in draw.cards] == list(range(1, 10))
        if len(leaders) > 1:
            tie_seen = True
            assert table.next_positions().button == draw.button, "the drawn seat must get the first button"
    assert tie_seen, "expected at least one rank tie among 200 draws of 9 cards"


def test_seat_2_draw_is_reproducible_from_the_injected_rng() -> None:
    first = make_table(range(1, 7)).draw_button(random.Random(11))
    second = make_table(range(1, 7)).draw_button(random.Random(11))
    assert first == second, f"same seed, different draws: {first} vs {second}"


def test_seat_2_seat_one_setting_puts_the_button_on_the_first_occupied_seat() -> None:
    table = make_table([1, 4, 6])
    assert where(table.next_positions()) == (1, 4, 6), where(table.next_positions())
    table = make_table([3, 4, 6])
    assert table.next_positions().button == 3, "seat 1 empty: the first occupied seat from seat 1"


def test_seat_2_draw_setting_requires_a_draw_before_the_first_hand() -> None:
    table = Table(TableSettings(size=6))
    table.seat_player(1, "a", 100)
    table.seat_player(2, "b", 100)
    with pytest.raises(ButtonNotDrawnError):
        table.start_hand("h", 5, 10)
    assert not table.hand_in_progress, "a refused start must change nothing"


# -- BTN-1 -------------------------------------------------------------------------------------


def test_btn_1_dead_button_empty_small_blind() -> None:
    table = make_table([1, 2, 3, 4, 5])
    _, first = play(table, bust=[2])  # the small blind busts
    assert where(first) == (1, 2, 3)
    second = table.next_positions()
    assert where(second) == (2, 3, 4), (
        f"expected a dead button on empty seat 2, SB 3 (last BB), BB 4; got {where(second)}"
    )
    assert table.player_at(2) is None and 2 not in second.dealt_in


def test_btn_1_dead_small_blind_and_the_same_player_keeping_the_button() -> None:
    table = make_table([1, 2, 3, 4, 5])
    play(table, bust=[3])  # the big blind busts: nobody can be next hand's small blind
    second = table.next_positions()
    assert where(second) == (2, None, 4), f"expected button 2, no small blind, BB 4; got {where(second)}"
    play(table)
    third = table.next_positions()
    assert where(third) == (2, 4, 5), f"expected seat 2 to keep the button, SB 4, BB 5; got {where(third)}"


def test_btn_1_setup_carries_dead_positions_to_the_hand() -> None:
    table = make_table([1, 2, 3, 4, 5])
    play(table, bust=[3])
    setup = table.start_hand("dead-sb", small_blind=5, big_blind=10, ante=1, ante_kind=AnteKind.EACH)
    assert (setup.button, setup.small_blind_seat, setup.big_blind_seat) == (2, None, 4), setup
    assert [seat.seat for seat in setup.seats] == [1, 2, 4, 5]
    setup.validate()


def _check_big_blind_sequence(rule: ButtonRule, seed: int) -> None:
    rng = random.Random(seed)
    size = rng.randint(3, 10)
    seats = sorted(rng.sample(range(1, size + 1), rng.randint(3, size)))
    table = make_table(seats, size=size, rule=rule, button=rng.choice(seats))
    previous: tuple[Positions, set[str], str] | None = None
    while len(table.players) >= 2:
        positions = table.next_positions()
        present = {table.player_at(seat).player for seat in positions.dealt_in}  # type: ignore[union-attr]
        big_player = table.player_at(positions.big_blind).player  # type: ignore[union-attr]
        if previous is not None:
            last_positions, last_present, last_big = previous
            assert big_player != last_big, f"seed {seed}: {big_player} posts the big blind twice in a row"
            if rule is ButtonRule.DEAD:
                # nobody at the table for both hands sits strictly between the two big blinds
                start, end = last_positions.big_blind, positions.big_blind
                for seat in positions.dealt_in:
                    name = table.player_at(seat).player  # type: ignore[union-attr]
                    between = start < seat < end if start < end else (seat > start or seat < end)
                    assert not (between and name in last_present), (
                        f"seed {seed}: {name} in seat {seat} missed the big blind moving {start} -> {end}"
                    )
        if len(positions.dealt_in) == 2:
            assert positions.button == positions.small_blind, f"seed {seed}: heads-up button must post the SB"
        dealt = list(positions.dealt_in)
        bust = [seat for seat in dealt if rng.random() < 0.15]
        if len(bust) >= len(dealt):
            bust = bust[:-1]
        play(table, bust=bust)
        previous = (positions, present, big_player)


def test_btn_1_nobody_posts_the_big_blind_twice_or_misses_it_over_random_busts() -> None:
    for seed in range(400):
        _check_big_blind_sequence(ButtonRule.DEAD, seed)


def test_btn_1_forward_button_never_gives_the_big_blind_twice_over_random_busts() -> None:
    for seed in range(400):
        _check_big_blind_sequence(ButtonRule.FORWARD, seed)


def test_btn_1_forward_moving_button_skips_a_blind() -> None:
    table = make_table([1, 2, 3, 4, 5], rule=ButtonRule.FORWARD)
    play(table, bust=[2])  # button 1, SB 2 busts, BB 3
    second = table.next_positions()
    assert where(second) == (3, 4, 5), f"expected the button on 3 and blinds 4, 5; got {where(second)}"
    # under the dead-button rule seat 4 would have posted the big blind now; here it skips it
    dead = make_table([1, 2, 3, 4, 5])
    play(dead, bust=[2])
    assert dead.next_positions().big_blind == 4


def test_btn_1_forward_button_moves_one_player_each_hand() -> None:
    table = make_table([2, 5, 7, 9], rule=ButtonRule.FORWARD)
    buttons = [play(table)[1].button for _ in range(6)]
    assert buttons == [2, 5, 7, 9, 2, 5], buttons


# -- BTN-2 -------------------------------------------------------------------------------------


def test_btn_2_heads_up_button_posts_small_blind_and_blinds_alternate() -> None:
    table = make_table([3, 7])
    seen = [where(play(table)[1]) for _ in range(4)]
    assert seen == [(3, 3, 7), (7, 7, 3), (3, 3, 7), (7, 7, 3)], seen


@pytest.mark.parametrize("rule", [ButtonRule.DEAD, ButtonRule.FORWARD])
@pytest.mark.parametrize("who", ["button", "small_blind", "big_blind"])
def test_btn_2_three_to_two_handed_nobody_posts_the_big_blind_twice(rule: ButtonRule, who: str) -> None:
    table = make_table([1, 4, 6], rule=rule)
    _, first = play(table)
    assert where(first) == (1, 4, 6)
    busting = {"button": 4, "small_blind": 6, "big_blind": 1}[who]
    _, second = play(table, bust=[busting])  # button 4, SB 6, BB 1; one of them busts
    assert where(second) == (4, 6, 1)
    last_big = table.player_at(second.big_blind)
    heads_up = table.next_positions()
    assert len(heads_up.dealt_in) == 2 and heads_up.button == heads_up.small_blind, heads_up
    new_big = table.player_at(heads_up.big_blind)
    assert new_big is not None
    assert last_big is None or new_big.player != last_big.player, (
        f"{rule}: {new_big.player} posts the big blind twice going heads-up after the {who} busted"
    )
    _, third = play(table)
    fourth = table.next_positions()
    assert third.big_blind != fourth.big_blind, f"heads-up blinds must alternate: {third} then {fourth}"


def test_btn_2_heads_up_button_acts_first_preflop_and_last_after() -> None:
    from engine.hand import Hand

    table = make_table([2, 5])
    setup = table.start_hand("hu", small_blind=5, big_blind=10)
    hand = Hand(setup, rng=random.Random(1))
    assert hand.actor == 2, f"heads-up the button (seat 2) acts first preflop, got seat {hand.actor}"
    hand.check_or_call()
    hand.check_or_call()
    assert hand.actor == 5, f"after the flop the big blind (seat 5) acts first, got seat {hand.actor}"


# -- BTN-3 / REG-4 -----------------------------------------------------------------------------


def test_reg_4_btn_3_newcomer_dealt_in_at_once_in_any_position() -> None:
    table = make_table([1, 3, 5, 7])
    play(table)  # button 1, SB 3, BB 5
    table.seat_player(4, "newcomer", 1000)  # between the next small blind (5) and big blind (7)
    positions = table.next_positions()
    assert 4 in positions.dealt_in, f"the newcomer must be dealt in at once, got {positions}"
    table.seat_player(2, "late", 1000)  # next hand: button 3, SB 5, BB 7; seat 2 is behind the button
    assert 2 in table.next_positions().dealt_in


def test_reg_4_btn_3_tda_setting_newcomer_waits_until_the_button_passes() -> None:
    table = make_table([1, 3, 6, 8], join=JoinRule.NOT_BETWEEN_BLINDS_AND_BUTTON)
    play(table)  # button 1, SB 3, BB 6; next: button 3, SB 6, BB 8
    table.seat_player(4, "newcomer", 1000)  # between the next button (3) and small blind (6)
    table.seat_player(9, "behind", 1000)  # after the next big blind: dealt in at once
    positions = table.next_positions()
    assert where(positions) == (3, 6, 8), where(positions)
    assert 4 not in positions.dealt_in and positions.waiting == (4,), positions
    assert 9 in positions.dealt_in, "a newcomer after the big blind is dealt in at once"
    play(table)  # now the button moves to 6: seat 4 is behind it
    later = table.next_positions()
    assert where(later) == (6, 8, 9) and 4 in later.dealt_in, later


def test_btn_3_and_clk_1_absent_players_are_dealt_in_and_post() -> None:
    table = make_table([1, 2, 3])
    table.set_absent(3, True)
    setup = table.start_hand("away", small_blind=5, big_blind=10, ante=2, ante_kind=AnteKind.EACH)
    absent = {seat.seat: seat.absent for seat in setup.seats}
    assert absent == {1: False, 2: False, 3: True}, f"absent seat 3 must be dealt in, flagged: {absent}"
    assert setup.big_blind_seat == 3, "the absent player still takes the big blind in turn"


def test_clk_1_absent_player_posts_and_is_folded_or_checked_by_timeout() -> None:
    from engine.hand import Hand

    table = make_table([1, 2, 3])
    table.set_absent(1, True)  # the button: first to act preflop three-handed
    setup = table.start_hand("clk1", small_blind=5, big_blind=10)
    hand = Hand(setup, rng=random.Random(3))
    assert hand.actor == 1
    hand.timeout()  # facing the big blind: folded
    hand.check_or_call()  # SB completes
    hand.check_or_call()  # BB checks
    while not hand.is_over:
        hand.timeout()  # nobody bets: each timeout is a check
    stacks = hand.finishing_stacks()
    got = stacks[1] if isinstance(stacks, dict) else dict(stacks)[1]
    assert got == 1000, f"the absent button folded without posting: expected 1000, got {got}"


# -- between hands only ------------------------------------------------------------------------


def test_seat_changes_are_refused_during_a_hand_and_change_nothing() -> None:
    table = make_table([1, 2, 3])
    table.start_hand("busy", 5, 10)
    before = table.players
    for attempt in (
        lambda: table.seat_player(4, "x", 100),
        lambda: table.unseat(1),
        lambda: table.add_chips(1, 100),
        lambda: table.start_hand("again", 5, 10),
        lambda: table.draw_button(random.Random(1)),
    ):
        with pytest.raises(HandInProgressError):
            attempt()
    assert table.players == before and table.hand_in_progress


def test_finish_hand_checks_chips_and_reports_busted_players() -> None:
    table = make_table([1, 2, 3])
    with pytest.raises(NoHandInProgressError):
        table.finish_hand({1: 1000})
    table.start_hand("h", 5, 10)
    with pytest.raises(StackError):
        table.finish_hand({1: 1000, 2: 1000, 3: 999})
    assert table.hand_in_progress, "a refused result must leave the hand in progress"
    result = table.finish_hand({1: 2000, 2: 1000, 3: 0})
    assert [p.player for p in result.busted] == ["p3"] and table.player_at(3) is None, result
    with pytest.raises(SeatTakenError):
        table.seat_player(1, "x", 10)


def test_hands_until_big_blind_counts_clockwise_from_the_next_big_blind() -> None:
    table = make_table([1, 3, 5, 7, 9])
    play(table)  # button 1, SB 3, BB 5: next BB 7
    got = {seat: table.hands_until_big_blind(seat) for seat in (1, 3, 5, 7, 9)}
    assert got == {7: 0, 9: 1, 1: 2, 3: 3, 5: 4}, got
    positions = table.next_positions()
    assert where(positions) == (3, 5, 7)


@pytest.mark.parametrize("rule", [ButtonRule.DEAD, ButtonRule.FORWARD])
@pytest.mark.parametrize("join", [JoinRule.ANY, JoinRule.NOT_BETWEEN_BLINDS_AND_BUTTON])
def test_btn_1_btn_3_positions_stay_valid_with_random_busts_and_arrivals(
    rule: ButtonRule, join: JoinRule
) -> None:
    for seed in range(150):
        rng = random.Random(seed)
        size = rng.randint(2, 10)
        seats = sorted(rng.sample(range(1, size + 1), rng.randint(2, size)))
        table = make_table(seats, size=size, rule=rule, join=join, button=rng.choice(seats))
        last_big: str | None = None
        arrivals = 0
        for _ in range(40):
            if len(table.players) < 2:
                break
            dealt = list(table.next_positions().dealt_in)
            bust = [rng.choice(dealt)] if rng.random() < 0.4 and len(dealt) > 2 else []
            setup, positions = play(table, bust=bust)
            setup.validate()
            big = next(seat.player for seat in setup.seats if seat.seat == positions.big_blind)
            assert big != last_big, f"seed {seed}: {big} posted the big blind twice in a row"
            assert positions.button != positions.big_blind, (
                f"seed {seed}: button on the big blind {positions}"
            )
            if len(positions.dealt_in) == 2:
                assert positions.button == positions.small_blind, f"seed {seed}: heads-up {positions}"
            last_big = big
            if rng.random() < 0.3 and table.empty_seats():
                arrivals += 1
                table.seat_player(
                    rng.choice(table.empty_seats()), f"new{seed}-{arrivals}", rng.randint(1, 2000)
                )


def test_crash_1_snapshot_between_hands_restores_the_same_next_positions() -> None:
    table = make_table([1, 3, 5, 7])
    play(table, bust=[5])
    copy = Table(table.settings)
    copy.restore(table.players, table.last_positions, table.last_big_blind_player, table.first_button)
    assert copy.next_positions() == table.next_positions(), (copy.next_positions(), table.next_positions())
    assert copy.hands_until_big_blind(1) == table.hands_until_big_blind(1)


@pytest.mark.parametrize("rule", [ButtonRule.DEAD, ButtonRule.FORWARD])
@pytest.mark.parametrize("arrival", [3, 7])
def test_btn_2_heads_up_to_three_handed_after_an_arrival(rule: ButtonRule, arrival: int) -> None:
    table = make_table([1, 5], rule=rule)
    _, heads_up = play(table)
    assert where(heads_up) == (1, 1, 5)
    table.seat_player(arrival, "arrival", 1000)
    three = table.next_positions()
    assert len(three.dealt_in) == 3 and len({three.button, three.small_blind, three.big_blind}) == 3, three
    assert three.big_blind != 5, f"{rule}: seat 5 was big blind heads-up and must not post it again: {three}"
