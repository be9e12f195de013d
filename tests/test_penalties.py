"""PEN-1: sit-out penalties (dealt in, posting, hand killed) and disqualification (TDA R69, R71)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.betting import AnteKind, HandSetup, HandSetupError, SeatSetup, Street
from engine.events import (
    OPERATOR,
    PUBLIC,
    ActionTaken,
    BlindPosted,
    CardsShown,
    HandKilled,
    HandsShown,
    HoleCardsDealt,
    KillReason,
    PotAwarded,
)
from engine.hand import Hand, HandOver, NotInHand, NotYourTurn
from engine.random_play import choose_action, play_random_hand
from engine.table import FirstButton, HandInProgressError, PenaltyError, Table, TableSettings
from engine.tournament.simulation import Disqualification, Penalty, default_config, run_tournament
from engine.tournament.standings import Bust, Standings, StandingsError


def make_setup(
    stacks: dict[int, int],
    *,
    button: int,
    small: int | None,
    big: int,
    killed: frozenset[int] = frozenset(),
    ante: int = 0,
    ante_kind: AnteKind = AnteKind.NONE,
) -> HandSetup:
    return HandSetup(
        hand_id="pen-1",
        table_size=9,
        seats=tuple(SeatSetup(seat, f"p{seat}", stack) for seat, stack in sorted(stacks.items())),
        button=button,
        small_blind_seat=small,
        big_blind_seat=big,
        small_blind=50,
        big_blind=100,
        ante=ante,
        ante_kind=ante_kind,
        killed=killed,
    )


def make_table(players: int, stack: int = 1000) -> Table:
    table = Table(TableSettings(size=9, first_button=FirstButton.SEAT_ONE))
    for seat in range(1, players + 1):
        table.seat_player(seat, f"p{seat}", stack)
    return table


def play_table_hand(table: Table, number: int, rng: random.Random) -> Hand:
    setup = table.start_hand(f"h{number}", 50, 100)
    hand = Hand(setup, rng=rng)
    play_random_hand(hand, rng)
    table.finish_hand(hand.finishing_stacks())
    return hand


def test_pen_1_penalized_player_posts_and_hand_is_killed() -> None:
    table = make_table(4)
    big = table.next_positions().big_blind
    penalized = table.penalize(big, 1)
    assert penalized.penalty_hands == 1, f"expected 1 penalty hand in the table state, got {penalized}"
    setup = table.start_hand("h1", 50, 100)
    assert setup.killed == frozenset({big}), f"expected seat {big} killed, got {setup.killed}"
    assert any(seat.seat == big for seat in setup.seats), "a penalized player is still dealt in"
    hand = Hand(setup, rng=random.Random(4))
    events = hand.events
    posted = [e for e in events if isinstance(e, BlindPosted) and e.seat == big]
    assert posted and posted[0].amount == 100, f"the penalized big blind posts 100, got {posted}"
    assert any(isinstance(e, HoleCardsDealt) and e.seat == big for e in events), "they receive cards"
    killed = [e for e in events if isinstance(e, HandKilled)]
    assert killed == [HandKilled(big, Street.PREFLOP, KillReason.PENALTY)], (
        f"expected one HandKilled for seat {big}, got {killed}"
    )
    assert killed[0].audience == PUBLIC and str(killed[0]) == f"seat {big}'s hand is killed (penalty)"
    assert not any(isinstance(e, ActionTaken) for e in events), "the hand is killed before any action"
    assert hand.has_folded(big)
    while not hand.is_over:
        assert hand.actor != big, "a killed hand never acts"
        choose_action(hand, random.Random(1)).apply(hand)
    assert big not in hand.seats_in_hand


def test_pen_1_penalty_lasts_n_hands() -> None:
    rng = random.Random(11)
    table = make_table(5, stack=100_000)
    table.penalize(3, 2)
    left = []
    killed = []
    for number in range(1, 5):
        hand = play_table_hand(table, number, rng)
        killed.append(3 in hand.setup.killed)
        seated = table.player_at(3)
        assert seated is not None
        left.append(seated.penalty_hands)
    assert killed == [True, True, False, False], f"expected 2 killed hands then live ones, got {killed}"
    assert left == [1, 0, 0, 0], f"expected the counter 1, 0, 0, 0 after each hand, got {left}"
    # A penalty given during a hand starts with the next one, and penalties add up.
    setup = table.start_hand("h5", 50, 100)
    table.penalize(3, 1)
    table.penalize(3, 2)
    assert 3 not in setup.killed
    hand = Hand(setup, rng=rng)
    play_random_hand(hand, rng)
    table.finish_hand(hand.finishing_stacks())
    seated = table.player_at(3)
    assert seated is not None and seated.penalty_hands == 3, f"expected 3 hands to serve, got {seated}"
    with pytest.raises(PenaltyError):
        table.penalize(3, 0)
    assert not table.can_penalize(3, -1) and not table.can_penalize(8, 1)


def test_pen_1_everyone_penalized_heads_up_plays_live_and_penalties_end() -> None:
    rng = random.Random(5)
    table = make_table(2, stack=100_000)
    table.penalize(1, 1)
    table.penalize(2, 1)
    hand = play_table_hand(table, 1, rng)
    assert hand.setup.killed == frozenset(), "a hand needs a live player: nobody's hand is killed"
    assert [seated.penalty_hands for seated in table.players] == [0, 0], "the hand still counted"


def test_pen_1_killed_big_blind_is_dead_money_to_the_winner() -> None:
    # Everyone folds to the small blind: the killed big blind's 100 is the small blind's.
    hand = Hand(make_setup({1: 1000, 2: 1000, 3: 1000, 4: 1000}, button=1, small=2, big=3,
                           killed=frozenset({3})), rng=random.Random(2))  # fmt: skip
    assert hand.actor == 4 and hand.legal_actions().call_amount == 100, "the dead big blind is the bet"
    hand.fold()
    hand.fold()
    assert hand.is_over
    stacks = hand.finishing_stacks()
    assert stacks == {1: 1000, 2: 1100, 3: 900, 4: 1000}, f"expected the blind to the SB, got {stacks}"
    # An all-in small blind of 30: no part of the killed blind is ever returned to it.
    hand = Hand(make_setup({1: 1000, 2: 30, 3: 1000}, button=1, small=2, big=3,
                           killed=frozenset({3})), rng=random.Random(3))  # fmt: skip
    hand.fold()
    stacks = hand.finishing_stacks()
    assert stacks == {1: 1000, 2: 130, 3: 900}, f"expected 130 to the small blind, got {stacks}"
    # Called to a showdown, the killed blind above every live player goes to the last pot.
    hand = Hand(make_setup({1: 60, 2: 30, 3: 1000}, button=1, small=2, big=3,
                           killed=frozenset({3})), rng=random.Random(3))  # fmt: skip
    hand.check_or_call()  # the button calls all-in for 60
    assert hand.is_over
    stacks = hand.finishing_stacks()
    assert stacks[3] == 900 and stacks[1] + stacks[2] == 190, f"the dead 100 stays in the pots, got {stacks}"
    awarded = sum(e.amount for e in hand.events if isinstance(e, PotAwarded))
    assert awarded == 190, f"pots of 190 awarded, got {awarded}"


def test_pen_1_killed_hand_cards_never_shown() -> None:
    rng = random.Random(21)
    checked = 0
    for number in range(300):
        seats = {seat: rng.choice((150, 400, 2000)) for seat in range(1, 7)}
        killed = frozenset(rng.sample(sorted(seats), rng.randint(1, 3)))
        hand = Hand(make_setup(seats, button=1, small=2, big=3, killed=killed), rng=rng)
        if number % 2:
            while not hand.is_over and rng.random() < 0.8:
                choose_action(hand, rng).apply(hand)
            live = [seat for seat in hand.seats_in_hand if seat not in killed]
            if not hand.is_over and len(live) > 2:
                victim = rng.choice(live)
                hand.kill(victim)
                killed = killed | {victim}
        play_random_hand(hand, rng)
        for event in hand.events:
            if isinstance(event, CardsShown):
                assert event.seat not in killed, f"killed seat {event.seat} shown: {event}"
            if isinstance(event, HandsShown):
                shown = {shown_hand.seat for shown_hand in event.hands}
                assert not shown & killed, f"killed seats {shown & killed} tabled in {event}"
                checked += 1
            if isinstance(event, HoleCardsDealt) and event.seat in killed:
                assert not event.visible_to(None) and event.audience != OPERATOR
                assert all(not event.visible_to(seat) for seat in seats if seat != event.seat)
    assert checked > 10, f"expected hands tabled at an all-in, got {checked}"


def test_pen_1_operator_kills_a_hand_mid_hand_out_of_turn() -> None:
    hand = Hand(make_setup({1: 1000, 2: 1000, 3: 1000, 4: 1000}, button=1, small=2, big=3),
                rng=random.Random(8))  # fmt: skip
    assert hand.actor == 4
    before = (hand.stacks, hand.bets, hand.seats_in_hand, len(hand.events))
    with pytest.raises(NotYourTurn):
        hand.fold(seat=1)
    event = hand.kill(1)  # out of turn: seat 4 still acts
    assert event == HandKilled(1, hand.street, KillReason.RULING), f"got {event}"
    assert hand.actor == 4 and hand.has_folded(1)
    with pytest.raises(NotInHand):
        hand.kill(1)
    assert not hand.can_kill(9), "a seat not dealt in cannot be killed"
    hand.bet_or_raise_to(300)
    hand.kill(2)  # the small blind's 50 stays in as dead money
    assert hand.actor == 3
    hand.kill(3)  # the actor: one player left, who wins everything
    assert hand.is_over and hand.actor is None
    stacks = hand.finishing_stacks()
    assert stacks == {1: 1000, 2: 950, 3: 900, 4: 1150}, f"expected 150 dead to seat 4, got {stacks}"
    assert before[0] != stacks
    with pytest.raises(HandOver):
        hand.kill(4)
    # A refused kill changes nothing.
    hand = Hand(make_setup({1: 1000, 2: 1000, 3: 1000}, button=1, small=2, big=3), rng=random.Random(8))
    count = len(hand.events)
    assert not hand.can_kill(7) and len(hand.events) == count and hand.actor == 1


def test_pen_1_setup_refuses_killing_everyone_or_strangers() -> None:
    with pytest.raises(HandSetupError, match="not dealt in"):
        Hand(make_setup({1: 1000, 2: 1000}, button=1, small=1, big=2, killed=frozenset({5})))
    with pytest.raises(HandSetupError, match="nobody could win"):
        Hand(make_setup({1: 1000, 2: 1000}, button=1, small=1, big=2, killed=frozenset({1, 2})))


@settings(max_examples=400, deadline=None)
@given(
    stacks=st.lists(st.integers(1, 3000), min_size=2, max_size=9),
    killed_mask=st.integers(0, 511),
    ante_kind=st.sampled_from(list(AnteKind)),
    seed=st.integers(0, 2**32 - 1),
)
def test_pen_1_chips_conserved_with_killed_hands(
    stacks: list[int], killed_mask: int, ante_kind: AnteKind, seed: int
) -> None:
    rng = random.Random(seed)
    n = len(stacks)
    seats = {seat: stack for seat, stack in zip(range(1, n + 1), stacks, strict=True)}
    killed = frozenset(seat for seat in seats if killed_mask >> (seat - 1) & 1)
    if len(killed) == n:
        killed = killed - {n}
    ante = {AnteKind.NONE: 0, AnteKind.EACH: 10, AnteKind.BIG_BLIND: 100}[ante_kind]
    small = 1 if n == 2 else 2
    big = 2 if n == 2 else 3
    hand = Hand(make_setup(seats, button=1, small=small, big=big, killed=killed, ante=ante,
                           ante_kind=ante_kind), rng=rng)  # fmt: skip
    total = sum(stacks)
    while not hand.is_over:
        assert sum(hand.stacks.values()) + hand.pot_total == total, "chips in play are conserved"
        live = list(hand.seats_in_hand)
        if len(live) > 1 and rng.random() < 0.1:
            hand.kill(rng.choice(live))
        else:
            choose_action(hand, rng).apply(hand)
    finishing = hand.finishing_stacks()
    assert sum(finishing.values()) == total, f"started with {total}, finished with {finishing}"
    for seat in hand.setup.killed:
        assert finishing[seat] <= seats[seat], f"a killed seat {seat} never wins: {finishing}"


def test_pen_1_disqualify_between_hands_returns_the_chips() -> None:
    table = make_table(3, stack=500)
    table.start_hand("h1", 50, 100)
    with pytest.raises(HandInProgressError):
        table.disqualify(2)
    table.cancel_hand()
    before = table.chips
    removed = table.disqualify(2)
    assert removed == 500 and table.chips == before - 500, f"expected 500 removed, got {removed}"
    assert table.player_at(2) is None and not table.can_disqualify(2)


def test_pen_1_disqualified_player_takes_the_lowest_open_place() -> None:
    standings = Standings(f"p{i}" for i in range(10))
    standings.eliminate([Bust("p0", 100)])
    standings.eliminate([Bust("p1", 100), Bust("p2", 300)])
    finish = standings.disqualify("p5")
    assert (finish.place, finish.players) == (7, ("p5",)), f"expected place 7 alone, got {finish}"
    assert standings.disqualified == frozenset({"p5"}) and standings.players_left == 6
    later = standings.eliminate([Bust("p6", 100)])
    assert later[0].place == 6, f"the next bust finishes above the disqualified player, got {later}"
    with pytest.raises(StandingsError):
        standings.disqualify("p5")
    standings.finish({f"p{i}": 100 * i for i in (3, 4, 7, 8, 9)})
    assert standings.complete
    last = Standings(["a", "b"])
    last.disqualify("a")
    assert not last.can_disqualify("b"), "the last player left cannot be disqualified"


def test_pen_1_disqualified_chips_leave_play_and_conservation_holds() -> None:
    players = 30
    targets = ("p00004", "p00011", "p00023")
    result = run_tournament(
        default_config(players),
        players,
        seed=3,
        sanctions=[Penalty(1, "p00007", 3), *(Disqualification(2, player) for player in targets)],
    )
    # run_tournament raises InvariantBroken if chips in play ever differ from issued - removed.
    assert result.disqualified, f"expected a disqualification among {targets}, got none"
    assert set(result.disqualified) <= set(targets)
    assert result.chips_removed > 0, f"expected chips removed from play, got {result.chips_removed}"
    assert result.chips_removed <= len(result.disqualified) * 10000 * 2
    places = Counter(place for f in result.finishes for place in range(f.place, f.place + f.shared_places))
    assert sorted(places) == list(range(1, players + 1)) and set(places.values()) == {1}
    for player in result.disqualified:
        finish = next(f for f in result.finishes if player in f.players)
        assert finish.players == (player,) and finish.place > 1, f"{player} finished {finish}"
