"""Named rule tests for the hand engine: one or more tests per rule id of the rule book (docs/rules.md) that
``engine.hand`` enforces (BET-1..4, LVL-1, CLK-1, CLK-2, BTN-1, BTN-2) and the provably fair
deck commitment. Each hand is dealt from exact cards (``deck_for``) so the outcome is known;
one hypothesis test holds BET-2's fast path to its plain rule on random hands."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.betting import AnteKind, Game, HandSetup, HandSetupError, Limit, SeatSetup, Street
from engine.cards import parse_cards
from engine.events import (
    OPERATOR,
    ActionKind,
    AntePosted,
    BlindKind,
    BlindPosted,
    CardsMucked,
    CardsShown,
    DeckRevealed,
    DeckSealed,
    HandEnded,
    HandsShown,
    HandStarted,
    HoleCardsDealt,
    PotAwarded,
    StreetDealt,
    UncalledBetReturned,
)
from engine.fairness import commit, deal_order, verify, verify_history
from engine.hand import (
    BettingNotReopened,
    CannotRaiseAllIn,
    FacingBet,
    Hand,
    HandError,
    HandInProgress,
    HandOver,
    InvalidAmount,
    NoBetToFold,
    NobodyToRaise,
    NothingToCall,
    NotYourTurn,
    RaiseCapReached,
    RaiseNotAllowed,
    RaiseTooLarge,
    RaiseTooSmall,
    deck_for,
)
from engine.pots import Pot, PotError, build_pots, split_pot, split_pots


def make_setup(
    stacks: Mapping[int, int],
    *,
    button: int,
    small: int | None,
    big: int,
    blinds: tuple[int, int] = (50, 100),
    ante: int = 0,
    ante_kind: AnteKind = AnteKind.NONE,
    limit: Limit = Limit.NO_LIMIT,
    game: Game = Game.HOLDEM,
    absent: frozenset[int] = frozenset(),
    table_size: int = 9,
) -> HandSetup:
    return HandSetup(
        hand_id="rules",
        table_size=table_size,
        seats=tuple(
            SeatSetup(seat, f"p{seat}", stack, seat in absent) for seat, stack in sorted(stacks.items())
        ),
        button=button,
        small_blind_seat=small,
        big_blind_seat=big,
        small_blind=blinds[0],
        big_blind=blinds[1],
        ante=ante,
        ante_kind=ante_kind,
        limit=limit,
        game=game,
    )


def make_hand(setup: HandSetup, holes: Mapping[int, str] | None = None, board: str = "") -> Hand:
    """A hand dealing exactly ``holes`` (seat -> "AsKd") and ``board``; other cards arbitrary."""
    cards = {seat: parse_cards(text) for seat, text in (holes or {}).items()}
    return Hand(setup, deck=deck_for(setup, cards, parse_cards(board)), salt=bytes(16))


def three_handed(**kwargs: object) -> HandSetup:
    """Seats 1, 2, 3; button 1, small blind 2, big blind 3; 50/100."""
    stacks = kwargs.pop("stacks", {1: 10_000, 2: 10_000, 3: 10_000})
    return make_setup(stacks, button=1, small=2, big=3, **kwargs)  # type: ignore[arg-type]


def events_of(hand: Hand, kind: type) -> list:  # type: ignore[type-arg]
    return [event for event in hand.events if isinstance(event, kind)]


def total_chips(hand: Hand) -> int:
    return sum(hand.stacks.values()) + hand.pot_total


# ---------------------------------------------------------------- BET-1 betting structures


def test_bet_1_fixed_limit_bet_and_three_raises_postflop() -> None:
    hand = make_hand(three_handed(limit=Limit.FIXED_LIMIT))
    hand.check_or_call()  # button calls 100
    hand.check_or_call()  # small blind completes
    hand.check_or_call()  # big blind checks
    assert hand.street is Street.FLOP
    assert hand.legal_actions().min_raise_to == hand.legal_actions().max_raise_to == 100, (
        f"expected a fixed 100 bet on the flop, got {hand.legal_actions()}"
    )
    hand.bet_or_raise_to(100)  # seat 2 bets
    hand.bet_or_raise_to(200)  # seat 3 raises
    hand.bet_or_raise_to(300)  # seat 1 raises
    hand.bet_or_raise_to(400)  # seat 2: third raise, the cap
    legal = hand.legal_actions()
    assert legal.min_raise_to is None, f"expected no fourth raise, got {legal}"
    with pytest.raises(RaiseCapReached, match="a bet and 3 raises"):
        hand.bet_or_raise_to(500)
    hand.check_or_call()
    hand.check_or_call()
    assert hand.street is Street.TURN
    legal = hand.legal_actions()
    assert (legal.min_raise_to, legal.max_raise_to) == (200, 200), f"expected the 200 big bet, got {legal}"


def test_bet_1_fixed_limit_preflop_big_blind_counts_as_the_bet() -> None:
    hand = make_hand(three_handed(limit=Limit.FIXED_LIMIT))
    hand.bet_or_raise_to(200)
    hand.bet_or_raise_to(300)
    hand.bet_or_raise_to(400)  # three raises over the big blind: capped at 4 small bets
    assert hand.legal_actions().min_raise_to is None, f"expected the preflop cap, got {hand.legal_actions()}"
    assert not hand.can_bet_or_raise_to(500)
    with pytest.raises(RaiseCapReached, match="the big blind and 3 raises"):
        hand.bet_or_raise_to(500)


def test_bet_1_pot_limit_max_is_pot_after_calling() -> None:
    hand = make_hand(three_handed(limit=Limit.POT_LIMIT))
    # Pot 150; button calls 100 and raises the 250 pot: to 350.
    assert hand.legal_actions().max_raise_to == 350, f"expected 350, got {hand.legal_actions()}"
    with pytest.raises(RaiseTooLarge, match="at most 350"):
        hand.bet_or_raise_to(351)
    hand.bet_or_raise_to(350)
    # Pot 500; small blind calls 300 (pot 800) and raises 800: to 1150.
    assert hand.legal_actions().max_raise_to == 1150, f"expected 1150, got {hand.legal_actions()}"


def test_bet_1_no_limit_unlimited_raises_up_to_the_stack() -> None:
    hand = make_hand(three_handed())
    amount = 100
    for _ in range(6):  # six raises, more than fixed limit's cap, all legal
        amount *= 2
        hand.bet_or_raise_to(amount)
    assert hand.legal_actions().max_raise_to == 10_000, f"expected all-in allowed, got {hand.legal_actions()}"
    assert hand.legal_actions().min_raise_to is not None


# ---------------------------------------------------------------- BET-2 raise sizes, reopening


def test_bet_2_min_raise_is_the_previous_raise() -> None:
    hand = make_hand(three_handed())
    assert hand.legal_actions().min_raise_to == 200, "expected a min raise to 2 big blinds"
    hand.bet_or_raise_to(500)  # a raise of 400
    assert hand.legal_actions().min_raise_to == 900, f"expected 500 + 400, got {hand.legal_actions()}"
    with pytest.raises(RaiseTooSmall, match="at least 900"):
        hand.bet_or_raise_to(899)


def test_bet_2_short_all_in_does_not_reopen_betting_to_players_who_acted() -> None:
    stacks = {1: 10_000, 2: 10_000, 3: 650, 4: 10_000}
    hand = make_hand(make_setup(stacks, button=1, small=2, big=3))
    assert hand.actor == 4
    hand.bet_or_raise_to(400)  # seat 4 raises by 300
    hand.check_or_call()  # seat 1 calls
    hand.check_or_call()  # seat 2 calls
    hand.bet_or_raise_to(650)  # seat 3 (big blind) all-in: a raise of 250, less than a full 300
    for seat in (4, 1, 2):
        legal = hand.legal_actions()
        assert legal.seat == seat and legal.min_raise_to is None, f"expected call-or-fold only, got {legal}"
        with pytest.raises(BettingNotReopened, match="call or fold"):
            hand.bet_or_raise_to(2_000)
        hand.check_or_call()
    assert hand.street is Street.FLOP


def test_bet_2_short_all_in_lets_players_who_have_not_acted_raise() -> None:
    stacks = {1: 10_000, 2: 10_000, 3: 10_000, 4: 10_000, 5: 450}
    hand = make_hand(make_setup(stacks, button=1, small=2, big=3))
    hand.bet_or_raise_to(300)  # seat 4 raises by 200
    hand.bet_or_raise_to(450)  # seat 5 all-in: a raise of 150, less than a full 200
    legal = hand.legal_actions()
    assert legal.seat == 1 and legal.min_raise_to == 650, (
        f"seat 1 has not acted: expected a raise to at least 450 + 200, got {legal}"
    )
    hand.check_or_call()  # seat 1 calls
    hand.check_or_call()  # seat 2 calls
    hand.bet_or_raise_to(1_500)  # seat 3 (big blind, not acted on the raise) re-raises: a full raise
    legal = hand.legal_actions()
    assert legal.seat == 4 and legal.min_raise_to == 2_550, f"a full raise reopens seat 4, got {legal}"


def test_bet_2_all_in_for_less_preflop_keeps_the_big_blind_as_raise_size() -> None:
    hand = make_hand(make_setup({1: 10_000, 2: 10_000, 3: 10_000, 4: 150}, button=1, small=2, big=3))
    hand.bet_or_raise_to(150)  # seat 4 all-in for less than a min raise
    legal = hand.legal_actions()
    assert legal.call_amount == 150 and legal.min_raise_to == 250, (
        f"expected call 150 or raise to 150 + 100, got {legal}"
    )


def test_bet_2_short_all_ins_adding_up_to_a_full_raise_reopen_the_betting() -> None:
    def flop_after_limps(third_raise: bool) -> Hand:
        stacks = {1: 10_000, 2: 10_000, 3: 260, 4: 320}
        hand = make_hand(make_setup(stacks, button=1, small=2, big=3))
        for _ in range(4):  # 4, 1 call; 2 completes; 3 checks
            hand.check_or_call()
        assert hand.street is Street.FLOP and hand.actor == 2
        hand.bet_or_raise_to(100)  # seat 2 bets 100
        hand.bet_or_raise_to(160)  # seat 3 all-in: +60, short
        if third_raise:
            hand.bet_or_raise_to(220)  # seat 4 all-in: +60 more; 120 together is a full raise
        else:
            hand.check_or_call()  # seat 4 just calls 160
        hand.check_or_call()  # seat 1 calls
        return hand

    legal = flop_after_limps(third_raise=True).legal_actions()
    assert legal.seat == 2 and legal.min_raise_to == 320, (
        f"expected the betting reopened for seat 2, got {legal}"
    )
    hand = flop_after_limps(third_raise=False)
    assert hand.legal_actions().min_raise_to is None
    with pytest.raises(BettingNotReopened, match="less than a full raise of 100"):
        hand.bet_or_raise_to(400)


def test_bet_2_limper_cannot_reraise_a_short_all_in_preflop() -> None:
    # TDA Rule 43: the big blind is the opening bet, so an all-in for less than a full raise over
    # it reopens nothing to a limper, who has acted.
    stacks = {1: 150, 2: 10_000, 3: 10_000, 4: 10_000}
    hand = make_hand(make_setup(stacks, button=1, small=2, big=3))
    hand.check_or_call()  # seat 4 limps 100
    hand.bet_or_raise_to(150)  # seat 1 all-in for 150: a raise of 50, less than a full 100
    hand.check_or_call()  # seat 2 calls
    hand.check_or_call()  # seat 3 (big blind) calls
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (4, 50, None), (
        f"expected the limper to call 50 or fold only, got {legal}"
    )
    with pytest.raises(BettingNotReopened, match="acted and faces 50 more, less than a full raise of 100"):
        hand.bet_or_raise_to(400)
    assert not hand.can_bet_or_raise_to(250), "expected no raise for the limper"
    hand.check_or_call()
    assert hand.street is Street.FLOP, f"expected the round over after the limper's call, got {hand}"


def test_bet_2_big_blind_keeps_its_option_over_a_short_all_in() -> None:
    # The blinds only posted: they have not acted, so they may raise over the short all-in.
    stacks = {1: 150, 2: 10_000, 3: 10_000, 4: 10_000}
    hand = make_hand(make_setup(stacks, button=1, small=2, big=3))
    hand.check_or_call()  # seat 4 limps 100
    hand.bet_or_raise_to(150)  # seat 1 all-in, short
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (2, 100, 250), (
        f"expected the small blind (not acted) free to raise to 150 + 100, got {legal}"
    )
    hand.check_or_call()  # seat 2 calls
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (3, 50, 250), (
        f"expected the big blind free to raise to 150 + 100, got {legal}"
    )
    hand.bet_or_raise_to(400)  # a full raise of 250: reopens the betting for everyone
    legal = hand.legal_actions()
    assert (legal.seat, legal.min_raise_to) == (4, 650), f"expected the limper reopened, got {legal}"


def test_bet_2_short_all_ins_preflop_adding_up_to_a_full_raise_reopen_for_a_limper() -> None:
    stacks = {1: 10_000, 2: 10_000, 3: 10_000, 4: 10_000, 5: 150, 6: 220}
    hand = make_hand(make_setup(stacks, button=1, small=2, big=3))
    hand.check_or_call()  # seat 4 limps 100
    hand.bet_or_raise_to(150)  # seat 5 all-in: +50, short
    hand.bet_or_raise_to(220)  # seat 6 all-in: +70; 120 together is a full raise
    for _ in range(3):  # seats 1, 2, 3 call
        hand.check_or_call()
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (4, 120, 320), (
        f"expected the limper, facing 120 (a full raise or more), free to raise to 220 + 100, got {legal}"
    )


def test_bet_2_small_blind_may_raise_when_completing_not_over_a_later_short_all_in() -> None:
    stacks = {1: 10_000, 2: 10_000, 3: 140}
    hand = make_hand(make_setup(stacks, button=1, small=2, big=3))
    hand.check_or_call()  # seat 1 limps
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (2, 50, 200), (
        f"expected the small blind, not acted, free to raise, got {legal}"
    )
    hand.check_or_call()  # seat 2 completes
    hand.bet_or_raise_to(140)  # seat 3 (big blind) all-in: +40, short
    for seat in (1, 2):
        legal = hand.legal_actions()
        assert (legal.seat, legal.min_raise_to) == (seat, None), f"expected call or fold only, got {legal}"
        with pytest.raises(BettingNotReopened):
            hand.bet_or_raise_to(1_000)
        hand.check_or_call()
    assert hand.street is Street.FLOP


def test_bet_2_checked_player_may_raise_over_a_short_all_in_opening_bet_postflop() -> None:
    # After the flop a check is not action on a wager: the first bet reopens, whatever its size.
    stacks = {1: 10_000, 2: 10_000, 3: 140}
    hand = make_hand(make_setup(stacks, button=1, small=2, big=3))
    for _ in range(3):  # 1 calls, 2 completes, 3 checks
        hand.check_or_call()
    hand.check_or_call()  # flop: seat 2 checks
    hand.bet_or_raise_to(40)  # seat 3 all-in for 40, below the 100 minimum bet
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (1, 40, 140), (
        f"expected seat 1 free to raise to 40 + 100, got {legal}"
    )
    hand.check_or_call()  # seat 1 calls 40
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (2, 40, 140), (
        f"expected the checked player free to raise, got {legal}"
    )


def test_bet_2_short_raise_over_a_short_opening_bet_does_not_reopen() -> None:
    # A full raise is at least the minimum raise: the street's bet size here, not the short bet.
    stacks = {1: 190, 2: 10_000, 3: 140, 4: 10_000}
    hand = make_hand(make_setup(stacks, button=1, small=2, big=3))
    for _ in range(4):  # 4, 1 call; 2 completes; 3 checks
        hand.check_or_call()
    hand.check_or_call()  # flop: seat 2 checks
    hand.bet_or_raise_to(40)  # seat 3 all-in for 40 (the opening bet, short)
    hand.check_or_call()  # seat 4 calls 40
    hand.bet_or_raise_to(90)  # seat 1 all-in: +50, less than a full raise of 100
    legal = hand.legal_actions()
    assert (legal.seat, legal.min_raise_to) == (2, 190), (
        f"seat 2 only checked before the bet: expected a raise to 90 + 100, got {legal}"
    )
    hand.check_or_call()  # seat 2 calls 90
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (4, 50, None), (
        f"seat 4 called the bet and faces 50, less than a full raise: expected call or fold, got {legal}"
    )
    with pytest.raises(BettingNotReopened, match="less than a full raise of 100"):
        hand.bet_or_raise_to(500)


def fixed_limit_flop_with_a_short_all_in(all_in_to: int) -> Hand:
    """Fixed limit 50/100 (a 100 bet on the flop), seats 1..4, button 1: everyone calls the big
    blind, then on the flop seat 2 bets 100, seat 3 calls and seat 4 raises all-in to
    ``all_in_to``; seat 1 is to act."""
    stacks = {1: 10_000, 2: 10_000, 3: 10_000, 4: 100 + all_in_to}
    hand = make_hand(make_setup(stacks, button=1, small=2, big=3, limit=Limit.FIXED_LIMIT))
    for _ in range(4):  # 4, 1 call; 2 completes; 3 checks
        hand.check_or_call()
    assert hand.street is Street.FLOP and hand.actor == 2
    hand.bet_or_raise_to(100)  # seat 2 bets
    hand.check_or_call()  # seat 3 calls
    event = hand.bet_or_raise_to(all_in_to)  # seat 4 all-in
    assert event.all_in and event.kind is ActionKind.RAISE, f"expected seat 4's all-in raise, got {event}"
    return hand


def test_bet_2_fixed_limit_all_in_raise_of_half_a_bet_is_a_full_raise() -> None:
    # TDA Rule 47-B: 50 over a 100 bet is half a bet, so a full raise. It reopens the betting for
    # seats 2 and 3, who acted, and counts toward the cap: the bet, 150, then two more raises.
    hand = fixed_limit_flop_with_a_short_all_in(150)
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to, legal.max_raise_to) == (1, 150, 250, 250), (
        f"expected seat 1 to call 150 or raise a full bet over it, to 250, got {legal}"
    )
    hand.check_or_call()  # seat 1 calls 150
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (2, 50, 250), (
        f"expected the betting reopened for seat 2, who bet before the all-in, got {legal}"
    )
    hand.bet_or_raise_to(250)  # seat 2: the second raise
    hand.bet_or_raise_to(350)  # seat 3: the third raise, the cap
    legal = hand.legal_actions()
    assert (legal.seat, legal.min_raise_to) == (1, None), f"expected the cap reached, got {legal}"
    with pytest.raises(RaiseCapReached, match="a bet and 3 raises"):
        hand.bet_or_raise_to(450)


def test_bet_2_fixed_limit_all_in_raise_of_less_than_half_a_bet_is_a_call_plus_chips() -> None:
    # 40 over a 100 bet is less than half a bet: a call plus chips. It reopens nothing for seats 2
    # and 3, does not count toward the cap, and a raise completes a full bet over the 100 bet:
    # to 200, not 240 (the TDA's "complete").
    hand = fixed_limit_flop_with_a_short_all_in(140)
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to, legal.max_raise_to) == (1, 140, 200, 200), (
        f"expected seat 1, who has not acted, to call 140 or complete the raise to 200, got {legal}"
    )
    hand.check_or_call()  # seat 1 calls 140
    for seat in (2, 3):
        legal = hand.legal_actions()
        assert (legal.seat, legal.call_amount, legal.min_raise_to) == (seat, 40, None), (
            f"expected seat {seat}, who acted before the call plus chips, to call or fold only, got {legal}"
        )
        with pytest.raises(BettingNotReopened, match="faces 40 more, less than half a bet of 100"):
            hand.bet_or_raise_to(240)
        assert not hand.can_bet_or_raise_to(200)
        hand.check_or_call()
    assert hand.street is Street.TURN, f"expected the flop over, got {hand}"

    # Not counted toward the cap: after it, the bet and three raises still fit.
    hand = fixed_limit_flop_with_a_short_all_in(140)
    for raise_to in (200, 300, 400):  # seats 1, 2, 3: raises 1 to 3 over the bet
        hand.bet_or_raise_to(raise_to)
    legal = hand.legal_actions()
    assert (legal.seat, legal.min_raise_to) == (1, None), f"expected the cap after three raises, got {legal}"


def test_bet_2_fixed_limit_short_all_ins_adding_up_to_half_a_bet_make_a_full_raise() -> None:
    # Two calls plus chips, +30 and +30: the second is 60 over the last bet that counted (100),
    # half a bet or more, so it is a full raise: it reopens the betting and the next raise is a
    # full bet over it.
    stacks = {1: 10_000, 2: 10_000, 3: 10_000, 4: 230, 5: 260}
    hand = make_hand(make_setup(stacks, button=1, small=2, big=3, limit=Limit.FIXED_LIMIT))
    for _ in range(5):  # 4, 5, 1 call; 2 completes; 3 checks
        hand.check_or_call()
    hand.bet_or_raise_to(100)  # flop: seat 2 bets
    hand.check_or_call()  # seat 3 calls
    hand.bet_or_raise_to(130)  # seat 4 all-in: +30, a call plus chips
    legal = hand.legal_actions()
    assert (legal.seat, legal.min_raise_to) == (5, 160), (
        f"expected seat 5 all-in for 160 at most, got {legal}"
    )
    hand.bet_or_raise_to(160)  # seat 5 all-in: +30 more, 60 over the bet
    hand.check_or_call()  # seat 1 calls 160
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (2, 60, 260), (
        f"expected the betting reopened for seat 2, to 160 + 100, got {legal}"
    )


@st.composite
def short_stacked_setups(draw: st.DrawFn) -> HandSetup:
    """2..6 players in any limit, stacks of up to a dozen big blinds, so that short all-ins
    (the cases BET-2 is about) come often, many a chip either side of a multiple of half a big
    blind, so that all-ins fall on the rule's boundaries (half a bet, a full raise); sometimes
    per-player antes."""
    limit = draw(st.sampled_from(Limit))
    count = draw(st.integers(2, 6))
    big = draw(st.sampled_from((2, 3, 10, 100)))
    half = max(1, big // 2)
    on_boundary = st.builds(lambda k, d: max(1, k * half + d), st.integers(1, 24), st.integers(-1, 1))
    stack = st.one_of(st.integers(1, 12 * big), on_boundary, on_boundary)
    stacks = draw(st.lists(stack, min_size=count, max_size=count))
    ante = draw(st.sampled_from((0, 0, max(1, big // 4))))
    seats = tuple(range(1, count + 1))
    order = deal_order(seats, count)
    small, big_seat = (count, 1) if count == 2 else (order[0], order[1])
    return make_setup(
        dict(zip(seats, stacks, strict=True)),
        button=count,
        small=small,
        big=big_seat,
        blinds=(max(1, big // 2), big),
        ante=ante,
        ante_kind=AnteKind.EACH if ante else AnteKind.NONE,
        limit=limit,
    )


@settings(max_examples=1000, deadline=None)
@given(setup=short_stacked_setups(), seed=st.integers(0, 2**32))
def test_bet_2_fast_path_agrees_with_the_plain_rule_on_random_hands(setup: HandSetup, seed: int) -> None:
    """The BET-2 decision is made in one place, read plainly from the round's actions
    (``Hand._bet_2``, behind ``verify_bet_or_raise_to`` and ``can_bet_or_raise_to``); the hot
    paths (``legal_actions`` and ``bet_or_raise_to``) use state kept up to date instead. At every
    decision of random hands both must agree: a raise is allowed exactly from the least to the
    most total ``legal_actions`` gives, and ``bet_or_raise_to`` accepts exactly the amounts the
    verify-method accepts, changing nothing when it refuses."""
    rng = random.Random(seed)
    hand = Hand(setup, rng=rng)
    while not hand.is_over:
        legal = hand.legal_actions()
        seat = legal.seat
        stack, bet = hand.stacks[seat], hand.bets[seat]
        all_in = stack + bet
        if legal.min_raise_to is None:
            # The verify-method asks the plain rule whether a raise is allowed before judging the
            # amount, so for any amount it names the reason there is no raise.
            assert legal.max_raise_to is None, f"one raise bound without the other: {legal}"
            with pytest.raises(RaiseNotAllowed):
                hand.verify_bet_or_raise_to(all_in)
        else:
            low, high = legal.min_raise_to, legal.max_raise_to
            assert high is not None
            accepted = [hand.can_bet_or_raise_to(amount) for amount in (low - 1, low, high, high + 1)]
            assert accepted == [False, True, True, False], (
                f"legal_actions allows raises to {low}..{high}; the plain rule accepts"
                f" {low - 1}, {low}, {high}, {high + 1}: {accepted}, in {setup}, events {hand.events}"
            )
        roll = rng.random()
        if roll < 0.45:
            # Raises, legal or not, most of them on or next to a bound; all-ins come often.
            near = [
                b + d for b in (legal.min_raise_to, legal.max_raise_to) if b is not None for d in (-1, 0, 1)
            ]
            amount = rng.choice(near) if near and roll < 0.35 else rng.randint(bet, all_in + 1)
            allowed = hand.can_bet_or_raise_to(amount)
            before = (hand.stacks, hand.bets, len(hand.events))
            try:
                hand.bet_or_raise_to(amount)
            except HandError as error:
                assert not allowed, f"bet_or_raise_to({amount}) refused ({error}) what the plain rule allows"
                assert (hand.stacks, hand.bets, len(hand.events)) == before, (
                    "a refused raise changed the hand"
                )
                hand.check_or_call()
            else:
                assert allowed, f"bet_or_raise_to({amount}) accepted what the plain rule refuses, in {setup}"
        elif roll < 0.55 and legal.can_fold:
            hand.fold()
        else:
            hand.check_or_call()


def test_bet_2_short_big_blind_others_call_the_full_blind() -> None:
    hand = make_hand(three_handed(stacks={1: 10_000, 2: 10_000, 3: 60}))
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (1, 100, 200), (
        f"expected call the full 100 blind or raise to 200, got {legal}"
    )
    hand.check_or_call()
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (2, 50, 200), (
        f"expected the small blind to complete to 100 or raise to 200, got {legal}"
    )
    hand.check_or_call()
    assert hand.street is Street.FLOP and hand.pot_total == 260, f"expected 100 + 100 + 60, got {hand}"
    pots = hand.pots()
    assert [(p.amount, p.eligible) for p in pots] == [(180, (2, 3, 1)), (80, (2, 1))], (
        f"expected a main pot of 3 x 60 and a side pot of 2 x 40, got {pots}"
    )


def test_bet_2_short_big_blind_below_the_small_blind_others_still_call_the_full_blind() -> None:
    hand = make_hand(make_setup({1: 10_000, 2: 10_000, 3: 30, 4: 10_000}, button=1, small=2, big=3))
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (4, 100, 200), (
        f"expected the full 100 to call (not the small blind's 50), got {legal}"
    )


def test_bet_3_short_big_blind_uncalled_part_of_the_full_blind_returned() -> None:
    hand = make_hand(three_handed(stacks={1: 10_000, 2: 10_000, 3: 60}), {1: "AsAh", 3: "2c7d"}, "KdQs9h5c3s")
    hand.check_or_call()  # seat 1 calls the full 100
    hand.fold()  # the small blind folds its 50
    returned = events_of(hand, UncalledBetReturned)
    assert [(e.seat, e.amount) for e in returned] == [(1, 40)], (
        f"expected the 40 above the big blind's 60 back to seat 1, got {returned}"
    )
    assert hand.is_over and hand.finishing_stacks() == {1: 10_110, 2: 9_950, 3: 0}, (
        f"expected seat 1 to win the 60 + 60 main pot and the folded 50, got {hand.finishing_stacks()}"
    )


def test_bet_3_short_big_blind_small_blind_folding_gets_its_unmatched_part_back() -> None:
    # The big blind is all-in for 30, less than the small blind's 50; facing the full blind the
    # small blind folds: nobody still in matched the 20 above the big blind's 30, so it goes back.
    hand = make_hand(make_setup({1: 10_000, 2: 10_000, 3: 30, 4: 10_000}, button=1, small=2, big=3))
    hand.fold()  # seat 4
    hand.fold()  # seat 1
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount) == (2, 50), f"expected the small blind to face 50, got {legal}"
    hand.fold()
    returned = events_of(hand, UncalledBetReturned)
    assert [(e.seat, e.amount) for e in returned] == [(2, 20)], f"expected 20 back to seat 2, got {returned}"
    assert hand.finishing_stacks() == {1: 10_000, 2: 9_970, 3: 60, 4: 10_000}, (
        f"expected the big blind to win 30 + 30, got {hand.finishing_stacks()}"
    )


def test_bet_2_big_blind_left_nothing_by_its_ante_posts_no_blind_and_the_small_blind_is_the_bet() -> None:
    # Documented choice (engine.hand): with no big blind posted at all, nothing is lifted.
    setup = make_setup(
        {1: 1, 2: 3, 3: 3, 4: 1}, button=2, small=3, big=4, blinds=(1, 2), ante=1, ante_kind=AnteKind.EACH
    )
    hand = make_hand(setup)
    assert not events_of(hand, BlindPosted)[1:], f"expected only the small blind posted, got {hand.events}"
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.min_raise_to) == (2, 1, 2), (
        f"expected the small blind's 1 to call, got {legal}"
    )


def test_bet_3_short_big_blind_heads_up_small_blind_gets_the_excess_back() -> None:
    setup = make_setup({1: 10_000, 2: 30}, button=1, small=1, big=2)
    hand = make_hand(setup, {1: "2c7d", 2: "AsAh"}, "KdQs9h5c3s")
    assert hand.is_over, "expected no decision: the big blind is all-in for less than the small blind"
    returned = events_of(hand, UncalledBetReturned)
    assert [(e.seat, e.amount) for e in returned] == [(1, 20)], f"expected 20 back, got {returned}"
    assert hand.finishing_stacks() == {1: 9_970, 2: 60}, f"got {hand.finishing_stacks()}"


def test_bet_3_short_big_blind_side_pot_after_a_raise_to_two_big_blinds_or_more() -> None:
    holes = {1: "2c7d", 2: "KcKh", 3: "AsAh"}
    hand = make_hand(three_handed(stacks={1: 10_000, 2: 10_000, 3: 60}), holes, "Qd8s9h5c3s")
    assert not hand.can_bet_or_raise_to(199) and hand.can_bet_or_raise_to(200), "expected a min raise to 200"
    hand.bet_or_raise_to(300)  # seat 1 raises to 300: a raise of 200 over the full blind
    legal = hand.legal_actions()
    assert (legal.call_amount, legal.min_raise_to) == (250, 500), f"expected 300 + 200, got {legal}"
    hand.check_or_call()  # seat 2 calls 300
    while not hand.is_over:  # checked down
        hand.check_or_call()
    awards = [(a.amount, a.eligible, a.winners) for a in events_of(hand, PotAwarded)]
    assert awards == [(180, (2, 3, 1), (3,)), (480, (2, 1), (2,))], (
        f"expected the big blind's aces to win the 3 x 60 main pot and the kings the 2 x 240 side pot,"
        f" got {awards}"
    )
    assert hand.finishing_stacks() == {1: 9_700, 2: 10_180, 3: 180}, f"got {hand.finishing_stacks()}"


# ---------------------------------------------------------------- BET-3 uncalled bets, side pots, odd chips


def test_bet_3_uncalled_bet_returned() -> None:
    hand = make_hand(three_handed(stacks={1: 1_000, 2: 5_000, 3: 5_000}))
    hand.check_or_call()
    hand.check_or_call()
    hand.check_or_call()
    hand.bet_or_raise_to(2_000)  # seat 2 bets on the flop
    hand.fold()
    hand.fold()
    returned = events_of(hand, UncalledBetReturned)
    assert [(e.seat, e.amount) for e in returned] == [(2, 2_000)], (
        f"expected 2000 back to seat 2, got {returned}"
    )
    assert hand.finishing_stacks() == {1: 900, 2: 5_200, 3: 4_900}


def test_bet_3_uncalled_part_of_a_bet_over_an_all_in_is_returned() -> None:
    hand = make_hand(
        make_setup({1: 5_000, 2: 300}, button=1, small=1, big=2),
        holes={1: "KsKd", 2: "AsAd"},
        board="2c7d9hJsQc",
    )
    hand.bet_or_raise_to(3_000)  # the button raises; the big blind can call only 300 of it
    hand.check_or_call()
    assert events_of(hand, UncalledBetReturned) == [UncalledBetReturned(1, 2_700)]
    assert hand.is_over and hand.finishing_stacks() == {1: 4_700, 2: 600}


def test_bet_3_side_pots_per_all_in_amount() -> None:
    setup = make_setup({1: 300, 2: 700, 3: 5_000, 4: 5_000}, button=4, small=1, big=2, blinds=(10, 20))
    hand = make_hand(
        setup,
        holes={1: "AsAd", 2: "KsKd", 3: "QsQd", 4: "JsJd"},
        board="2c7d9h3s4c",
    )
    hand.bet_or_raise_to(1_000)  # seat 3
    hand.check_or_call()  # seat 4 calls 1000
    hand.check_or_call()  # seat 1 all-in 300
    hand.check_or_call()  # seat 2 all-in 700
    # Flop onward: seats 3 and 4 check it down.
    while not hand.is_over:
        hand.check_or_call()
    awards = events_of(hand, PotAwarded)
    summary = [(a.amount, a.eligible, a.winners) for a in awards]
    assert summary == [
        (1_200, (1, 2, 3, 4), (1,)),
        (1_200, (2, 3, 4), (2,)),
        (600, (3, 4), (3,)),
    ], f"expected a main pot and two side pots, got {summary}"
    assert hand.finishing_stacks() == {1: 1_200, 2: 1_200, 3: 4_600, 4: 4_000}


def test_bet_3_odd_chip_to_first_winner_left_of_button() -> None:
    # Seats 2 and 5 hold the same ace-high straight; seat 7 folds its small blind: a pot of 25.
    hand = make_hand(
        make_setup({2: 1_000, 5: 1_000, 7: 1_000}, button=5, small=7, big=2, blinds=(5, 10)),
        holes={7: "2c3d", 2: "AsKd", 5: "AhKc"},
        board="QsJhTd4c5c",
    )
    hand.check_or_call()  # seat 5 (button) calls 10
    hand.fold()  # seat 7 folds
    hand.check_or_call()  # seat 2 checks
    while not hand.is_over:
        hand.check_or_call()
    award = events_of(hand, PotAwarded)[0]
    # Left of the button (5): seat 7 (folded), then seat 2, which gets the odd chip.
    assert (award.amount, award.winners, award.shares) == (25, (2, 5), (13, 12)), (
        f"expected 13 to seat 2 (first winner left of the button) and 12 to seat 5, got {award}"
    )
    assert hand.finishing_stacks() == {2: 1_003, 5: 1_002, 7: 995}


def test_bet_3_side_pot_levels_folded_money_and_big_blind_ante_in_main_pot() -> None:
    # Seat 1 folded after putting in 50; seat 2 is all-in for 100; seats 3 and 4 put in 400.
    pots = build_pots({1: 50, 2: 100, 3: 400, 4: 400}, contenders={2, 3, 4}, dead_money=30)
    assert pots == [Pot(30 + 50 * 4 + 50 * 3, (2, 3, 4)), Pot(300 * 2, (3, 4))], f"got {pots}"


def test_bet_3_all_odd_chips_to_the_first_winner_left_of_the_button() -> None:
    # 101 = 3 x 33 + 2: both odd chips to the first winner listed, none to the second.
    assert split_pot(101, (4, 2, 3)) == (35, 33, 33), f"got {split_pot(101, (4, 2, 3))}"
    # 11 = 4 x 2 + 3: all three odd chips to the first winner (TDA 20: "the odd chip(s)").
    assert split_pot(11, (7, 1, 4, 9)) == (5, 2, 2, 2), f"got {split_pot(11, (7, 1, 4, 9))}"
    assert split_pot(12, (7, 1, 4, 9)) == (3, 3, 3, 3), "no odd chip: equal shares"
    assert split_pot(2, (7, 1, 4)) == (2, 0, 0), "fewer chips than winners: all to the first"
    # In a hand: seats 8, 1 and 3 hold the same ace-high straight; seat 5 folds its small blind.
    # The pot is 5 + 3 x 10 = 35 = 3 x 11 + 2. Left of the button (3): seat 5 (folded), then 8,
    # the first winner, which gets both odd chips although it has the highest seat number.
    hand = make_hand(
        make_setup({1: 1_000, 3: 1_000, 5: 1_000, 8: 1_000}, button=3, small=5, big=8, blinds=(5, 10)),
        holes={5: "2c3d", 8: "AsKd", 1: "AhKs", 3: "AcKh"},
        board="QsJhTd4c5c",
    )
    hand.check_or_call()  # seat 1 calls 10
    hand.check_or_call()  # seat 3 (button) calls 10
    hand.fold()  # seat 5, small blind
    hand.check_or_call()  # seat 8, big blind, checks
    while not hand.is_over:
        hand.check_or_call()
    awards = [(a.amount, a.winners, a.shares) for a in events_of(hand, PotAwarded)]
    assert awards == [(35, (8, 1, 3), (13, 11, 11))], (
        f"expected 13 to seat 8 (first winner left of the button) and 11 each to seats 1 and 3, got {awards}"
    )
    assert hand.finishing_stacks() == {1: 1_001, 3: 1_001, 5: 995, 8: 1_003}, f"got {hand.finishing_stacks()}"


def test_bet_3_consecutive_pots_tied_by_the_same_winners_split_like_their_sum() -> None:
    def expected_totals(amounts: tuple[int, ...], count: int) -> list[int]:
        # BET-3 on the sum: equal shares, every odd chip to the first winner.
        share, odd = divmod(sum(amounts), count)
        return [share + odd, *[share] * (count - 1)]

    def check(amounts: tuple[int, ...], winners: tuple[int, ...]) -> list[tuple[int, ...]]:
        split = split_pots(amounts, winners)
        where = f"split_pots({amounts}, {winners}) = {split}"
        assert len(split) == len(amounts), f"one split per pot expected: {where}"
        for amount, shares in zip(amounts, split, strict=True):
            assert len(shares) == len(winners), f"one share per winner expected: {where}"
            assert sum(shares) == amount, f"pot {amount} not split whole: {where}"
            assert min(shares) >= 0, f"a negative share in pot {amount}: {where}"
        totals = [sum(column) for column in zip(*split, strict=True)]
        expected = expected_totals(amounts, len(winners))
        assert totals == expected, f"expected totals {expected} (the sum's split), got {totals}: {where}"
        return split

    # Pots of 2 and 1 among 3: the sum, 3, is one chip each, though each pot alone has odd chips.
    check((2, 1), (4, 6, 9))
    # Pots of 1 and 1 among 3: the sum, 2, goes all to the first winner; with no negative share
    # and each pot whole, that leaves only one way: each pot's chip to the first winner.
    assert check((1, 1), (4, 6, 9)) == [(1, 0, 0), (1, 0, 0)]
    # Main 169 and side 337 between 2: each pot alone would give the first winner its odd chip
    # (254 to 252); their sum, 506, is 253 each.
    check((169, 337), (4, 5))
    check((0, 7, 0), (1, 2, 3, 4))
    assert split_pots((17, 23), (3,)) == [(17,), (23,)], "a single winner takes every pot whole"
    rng = random.Random(3)
    for _ in range(2_000):
        count = rng.randint(2, 10)
        pots = rng.randint(1, 5)
        amounts = tuple(rng.choice((0, rng.randint(1, 3 * count), rng.randint(1, 500))) for _ in range(pots))
        check(amounts, tuple(rng.sample(range(1, 11), count)))
    for amount in (0, 1, 9, 10, 11, 99):
        assert split_pots((amount,), (2, 5, 7)) == [split_pot(amount, (2, 5, 7))], "one pot: as split_pot"
    with pytest.raises(PotError, match="at least one winner"):
        split_pots((10,), ())
    with pytest.raises(PotError, match="not negative"):
        split_pots((10, -1), (1, 2))


def test_bet_3_players_tying_for_a_main_and_a_side_pot_share_their_sum() -> None:
    # Blinds 5/10, button seat 7. Seat 2 (big blind) is all-in for 41; seats 1 and 3 fold after
    # putting in 5 and 60; seats 4 to 7 put in 200 each and tie with the same straight.
    # Main pot: 5 + 6 x 41 = 251 (= 4 x 62 + 3), eligible 2, 4, 5, 6, 7.
    # Side pot: (60 - 41) + 4 x (200 - 41) = 655 (= 4 x 163 + 3), eligible 4 to 7.
    # Their sum, 906 = 4 x 226 + 2: 226 each and both odd chips to seat 4, the first winner left
    # of the button, so 228. (Each pot on its own would give seat 4 six odd chips, 231; one odd
    # chip each would give seats 4 and 5 227.)
    hand = make_hand(
        make_setup(
            {1: 1_000, 2: 41, 3: 1_000, 4: 1_000, 5: 1_000, 6: 1_000, 7: 1_000},
            button=7,
            small=1,
            big=2,
            blinds=(5, 10),
        ),
        holes={1: "7s7d", 2: "2c3d", 3: "8s8d", 4: "AsKd", 5: "AhKc", 6: "AdKs", 7: "AcKh"},
        board="QsJhTd4c5c",
    )
    hand.bet_or_raise_to(60)  # seat 3
    hand.bet_or_raise_to(200)  # seat 4
    hand.check_or_call()  # seat 5 calls 200
    hand.check_or_call()  # seat 6 calls 200
    hand.check_or_call()  # seat 7 calls 200
    hand.fold()  # seat 1, small blind
    hand.check_or_call()  # seat 2 calls all-in for 41
    hand.fold()  # seat 3, 60 in the middle
    while not hand.is_over:
        hand.check_or_call()
    awards = events_of(hand, PotAwarded)
    summary = [(a.amount, a.eligible, a.winners) for a in awards]
    assert summary == [(251, (2, 4, 5, 6, 7), (4, 5, 6, 7)), (655, (4, 5, 6, 7), (4, 5, 6, 7))], (
        f"expected a main pot of 251 and a side pot of 655, both won by seats 4 to 7, got {summary}"
    )
    for award in awards:
        assert sum(award.shares) == award.amount and min(award.shares) >= 0, f"pot not split whole: {award}"
    won = [sum(a.shares[i] for a in awards) for i in range(4)]
    assert won == [228, 226, 226, 226], f"expected 228 to seat 4 and 226 each to seats 5 to 7, got {won}"
    assert hand.finishing_stacks() == {1: 995, 2: 0, 3: 940, 4: 1_028, 5: 1_026, 6: 1_026, 7: 1_026}, (
        f"got {hand.finishing_stacks()}"
    )


# ---------------------------------------------------------------- BET-4 showdown


def test_bet_4_last_aggressor_shows_first_and_loser_mucks() -> None:
    hand = make_hand(
        three_handed(),
        holes={1: "AsAd", 2: "7c2d", 3: "KsKd"},
        board="3c8d9hJs4c",
    )
    hand.check_or_call()  # 1 calls
    hand.check_or_call()  # 2 completes
    hand.check_or_call()  # 3 checks
    for _ in range(2):  # flop and turn checked through
        hand.check_or_call()
        hand.check_or_call()
        hand.check_or_call()
    assert hand.street is Street.RIVER
    hand.check_or_call()  # 2 checks
    hand.bet_or_raise_to(200)  # 3 bets: the last aggressor
    hand.check_or_call()  # 1 calls
    hand.fold()  # 2 folds
    shown = [e for e in hand.events if isinstance(e, (CardsShown, CardsMucked))]
    assert [(type(e).__name__, e.seat) for e in shown] == [("CardsShown", 3), ("CardsShown", 1)], (
        f"expected the river bettor (3) to show first, then 1 who beats it, got {shown}"
    )
    hand = make_hand(
        three_handed(),
        holes={1: "7c2d", 2: "AsAd", 3: "KsKd"},
        board="3c8d9hJs4c",
    )
    hand.check_or_call()
    hand.check_or_call()
    hand.check_or_call()
    while hand.street is not Street.RIVER:
        hand.check_or_call()
    hand.check_or_call()  # 2 checks
    hand.bet_or_raise_to(200)  # 3 bets
    hand.check_or_call()  # 1 calls with nothing
    hand.check_or_call()  # 2 calls
    shown = [(type(e).__name__, e.seat) for e in hand.events if isinstance(e, (CardsShown, CardsMucked))]
    assert shown == [("CardsShown", 3), ("CardsMucked", 1), ("CardsShown", 2)], (
        f"expected 3 to show, 1 to muck a hand that cannot win, 2 to show the winner, got {shown}"
    )
    mucked = next(e for e in hand.events if isinstance(e, CardsMucked))
    assert not hasattr(mucked, "cards"), "a muck must not carry the cards"


def test_bet_4_first_left_of_button_shows_first_without_a_river_bet() -> None:
    hand = make_hand(three_handed(), holes={1: "AsAd", 2: "KsKd", 3: "QsQd"}, board="3c8d9hJs4c")
    while not hand.is_over:
        hand.check_or_call()
    order = [e.seat for e in hand.events if isinstance(e, (CardsShown, CardsMucked))]
    assert order == [2, 3, 1], f"expected showdown from the first seat left of the button, got {order}"
    assert [type(e).__name__ for e in hand.events if isinstance(e, (CardsShown, CardsMucked))] == [
        "CardsShown",
        "CardsMucked",
        "CardsShown",
    ]


def test_bet_4_all_in_and_call_shows_all_hands_before_the_board() -> None:
    hand = make_hand(
        make_setup({1: 2_000, 2: 2_000}, button=1, small=1, big=2),
        holes={1: "AsAd", 2: "KsKd"},
        board="3c8d9hJs4c",
    )
    hand.bet_or_raise_to(2_000)
    hand.check_or_call()
    kinds = [type(e).__name__ for e in hand.events]
    shown_at = kinds.index("HandsShown")
    assert shown_at < kinds.index("StreetDealt"), f"expected hands face up before the flop, got {kinds}"
    shown = events_of(hand, HandsShown)[0]
    assert {h.seat: h.cards for h in shown.hands} == {
        1: tuple(parse_cards("AsAd")),
        2: tuple(parse_cards("KsKd")),
    }
    assert not events_of(hand, CardsMucked) and not events_of(hand, CardsShown)
    assert hand.finishing_stacks() == {1: 4_000, 2: 0}


def test_bet_4_everyone_folds_nobody_shows() -> None:
    hand = make_hand(three_handed())
    hand.bet_or_raise_to(300)
    hand.fold()
    hand.fold()
    assert not events_of(hand, CardsShown) and not events_of(hand, HandsShown)
    award = events_of(hand, PotAwarded)
    assert [(a.winners, a.amount, a.description) for a in award] == [((1,), 250, None)]


# ---------------------------------------------------------------- LVL-1 antes


def test_lvl_1_per_player_antes_posted_by_everyone_short_one_all_in() -> None:
    stacks = {1: 1_000, 2: 1_000, 3: 1_000, 4: 10}
    hand = make_hand(make_setup(stacks, button=1, small=2, big=3, ante=25, ante_kind=AnteKind.EACH))
    antes = {e.seat: (e.amount, e.all_in) for e in events_of(hand, AntePosted)}
    assert antes == {1: (25, False), 2: (25, False), 3: (25, False), 4: (10, True)}, f"got {antes}"
    assert hand.pot_total == 25 * 3 + 10 + 50 + 100
    assert hand.actor == 1, "the all-in player does not act"


def test_lvl_1_big_blind_ante_posted_by_big_blind_only() -> None:
    hand = make_hand(three_handed(ante=100, ante_kind=AnteKind.BIG_BLIND))
    antes = [(e.seat, e.amount) for e in events_of(hand, AntePosted)]
    assert antes == [(3, 100)], f"expected one 100 ante from the big blind, got {antes}"
    assert hand.stacks == {1: 10_000, 2: 9_950, 3: 9_800}
    legal = hand.legal_actions()
    assert legal.call_amount == 100, f"the ante is dead: expected 100 to call, got {legal}"


def test_lvl_1_short_big_blind_pays_blind_before_ante() -> None:
    stacks = {1: 10_000, 2: 10_000, 3: 130}
    hand = make_hand(three_handed(stacks=stacks, ante=100, ante_kind=AnteKind.BIG_BLIND))
    blind = next(e for e in events_of(hand, BlindPosted) if e.blind is BlindKind.BIG)
    ante = events_of(hand, AntePosted)
    assert blind.amount == 100 and blind.all_in, f"expected the full big blind first, got {blind}"
    assert [(e.seat, e.amount) for e in ante] == [(3, 30)], f"expected the 30 left as the ante, got {ante}"
    assert hand.legal_actions().call_amount == 100


# ---------------------------------------------------------------- CLK-1, CLK-2 timeouts and absence


def test_clk_2_timeout_folds_facing_a_bet_and_checks_otherwise() -> None:
    hand = make_hand(three_handed())
    event = hand.timeout()  # seat 1 faces the big blind
    assert (event.seat, event.kind, event.timed_out) == (1, ActionKind.FOLD, True), f"got {event}"
    hand.check_or_call()  # seat 2 completes
    event = hand.timeout()  # seat 3, big blind, faces no bet
    assert (event.seat, event.kind, event.timed_out) == (3, ActionKind.CHECK, True), f"got {event}"
    assert hand.street is Street.FLOP


def test_clk_1_absent_player_posts_and_is_folded_by_timeouts() -> None:
    setup = three_handed(absent=frozenset({3}), ante=10, ante_kind=AnteKind.EACH)
    hand = make_hand(setup)
    assert hand.is_absent(3) and not hand.is_absent(1)
    posted = {(type(e).__name__, e.seat) for e in hand.events if isinstance(e, (AntePosted, BlindPosted))}
    assert ("BlindPosted", 3) in posted and ("AntePosted", 3) in posted, (
        f"expected seat 3 to post, got {posted}"
    )
    assert 3 in {e.seat for e in events_of(hand, HoleCardsDealt)}, "seat 3 is dealt in"
    hand.bet_or_raise_to(300)  # seat 1 raises
    hand.fold()  # seat 2 folds
    event = hand.timeout(seat=3)  # the table acts for the absent big blind
    assert (event.kind, event.timed_out) == (ActionKind.FOLD, True)
    assert hand.finishing_stacks() == {1: 10_000 + 50 + 100 + 20, 2: 9_940, 3: 9_890}


# ---------------------------------------------------------------- BTN-1, BTN-2 positions


def test_btn_2_heads_up_button_acts_first_preflop_last_postflop() -> None:
    hand = make_hand(make_setup({4: 1_000, 7: 1_000}, button=7, small=7, big=4))
    assert hand.actor == 7, f"expected the button (small blind) first preflop, got {hand.actor}"
    hand.check_or_call()
    assert hand.actor == 4
    hand.check_or_call()
    assert hand.street is Street.FLOP and hand.actor == 4, (
        f"expected the big blind first postflop, got {hand.actor}"
    )
    hand.check_or_call()
    assert hand.actor == 7, "the button acts last postflop"


def test_btn_2_heads_up_equal_blinds_button_still_first() -> None:
    hand = make_hand(make_setup({4: 1_000, 7: 1_000}, button=7, small=7, big=4, blinds=(100, 100)))
    assert hand.actor == 7 and hand.legal_actions().can_check, "the button acts first and may check"


def test_btn_1_dead_button_empty_seat_and_dead_small_blind() -> None:
    # Button on empty seat 3, no small blind, big blind seat 5: seat 6 acts first preflop; seat 5
    # (first after the button) first postflop.
    hand = make_hand(make_setup({1: 1_000, 5: 1_000, 6: 1_000}, button=3, small=None, big=5))
    assert [e.blind for e in events_of(hand, BlindPosted)] == [BlindKind.BIG], "no small blind"
    assert hand.actor == 6
    hand.check_or_call()
    hand.check_or_call()
    hand.check_or_call()
    assert hand.street is Street.FLOP and hand.actor == 5, f"got {hand.actor}"
    order = deal_order((1, 5, 6), 3)
    holes = [e.seat for e in events_of(hand, HoleCardsDealt)]
    assert holes == list(order) == [5, 6, 1], f"expected dealing from seat 5, got {holes}"


# ---------------------------------------------------------------- refused actions


def test_refused_actions_raise_typed_errors_and_change_nothing() -> None:
    hand = make_hand(three_handed())
    before = (hand.stacks, hand.bets, hand.actor, len(hand.events))
    with pytest.raises(NotYourTurn, match="seat 1's turn"):
        hand.check_or_call(seat=2)
    with pytest.raises(FacingBet):
        hand.check()
    with pytest.raises(RaiseTooSmall):
        hand.bet_or_raise_to(150)
    with pytest.raises(RaiseTooLarge):
        hand.bet_or_raise_to(10_001)
    with pytest.raises(InvalidAmount):
        hand.bet_or_raise_to(200.0)  # type: ignore[arg-type]
    assert (hand.stacks, hand.bets, hand.actor, len(hand.events)) == before
    hand.check_or_call()
    hand.check_or_call()
    with pytest.raises(NothingToCall):
        hand.call()
    with pytest.raises(NoBetToFold):
        hand.fold()
    with pytest.raises(HandInProgress):
        hand.finishing_stacks()
    hand.check()
    hand.bet_or_raise_to(100)
    hand.fold()
    hand.fold()
    with pytest.raises(HandOver):
        hand.check_or_call()
    with pytest.raises(HandOver):
        hand.legal_actions()


def test_bet_2_no_raise_when_everyone_else_is_all_in_or_when_covered() -> None:
    hand = make_hand(make_setup({1: 300, 2: 10_000}, button=1, small=1, big=2))
    hand.bet_or_raise_to(300)  # the button is all-in
    assert hand.legal_actions().min_raise_to is None
    with pytest.raises(NobodyToRaise, match="all-in"):
        hand.bet_or_raise_to(600)
    hand.check_or_call()
    assert hand.is_over
    hand = make_hand(make_setup({1: 300, 2: 10_000, 3: 10_000}, button=1, small=2, big=3))
    hand.check_or_call()  # seat 1 calls 100
    hand.bet_or_raise_to(300)  # seat 2 raises
    hand.fold()  # seat 3 folds
    with pytest.raises(CannotRaiseAllIn, match="not more than the 200 to call"):
        hand.bet_or_raise_to(300)
    hand.check_or_call()


def test_invalid_setups_raise_hand_setup_error() -> None:
    good = three_handed()
    with pytest.raises(HandSetupError, match="big blind seat 9 is not dealt in"):
        make_hand(make_setup({1: 100, 2: 100}, button=1, small=1, big=9))
    with pytest.raises(HandSetupError, match="cannot hold the button"):
        make_hand(make_setup({1: 100, 2: 100}, button=2, small=1, big=2))
    with pytest.raises(HandSetupError, match="positive int"):
        make_hand(make_setup({1: 100, 2: 0}, button=1, small=1, big=2))
    with pytest.raises(HandSetupError, match="at least 2 players"):
        Hand(HandSetup("x", 9, good.seats[:1], 1, None, 1, 50, 100))
    with pytest.raises(HandSetupError, match="ante kind"):
        make_hand(three_handed(ante=10))
    with pytest.raises(HandSetupError, match="appears twice"):
        Hand(good, deck=[0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], salt=bytes(16))
    with pytest.raises(HandSetupError, match="the deck has 5"):
        Hand(good, deck=[0, 1, 2, 3, 4], salt=bytes(16))


# ---------------------------------------------------------------- provably fair deck


def test_fairness_commitment_verifies_and_fails_on_tampered_deck() -> None:
    hand = Hand(three_handed(), rng=random.Random(7))
    while not hand.is_over:
        hand.check_or_call()
    started = events_of(hand, HandStarted)[0]
    revealed = events_of(hand, DeckRevealed)[0]
    assert started.commitment == hand.commitment == commit(revealed.deck, revealed.salt)
    assert verify(hand.commitment, hand.deck, hand.salt)
    tampered = list(hand.deck)
    tampered[0], tampered[1] = tampered[1], tampered[0]
    assert not verify(hand.commitment, tampered, hand.salt), "a swapped deck must not verify"
    assert not verify(hand.commitment, hand.deck, bytes(16)), "another salt must not verify"
    report = verify_history(hand.events)
    assert report.ok, f"expected the hand's own log to verify, got {report.problems}"
    forged = [
        DeckRevealed(tuple(tampered), e.salt, e.commitment) if isinstance(e, DeckRevealed) else e
        for e in hand.events
    ]
    report = verify_history(forged)
    assert not report.ok and any("commitment" in p for p in report.problems), f"got {report}"


def test_fairness_dealt_cards_must_come_from_the_committed_positions() -> None:
    hand = Hand(three_handed(), rng=random.Random(8))
    while not hand.is_over:
        hand.check_or_call()

    def swap_flop(event: object) -> object:
        if isinstance(event, StreetDealt) and event.street is Street.FLOP:
            return StreetDealt(event.street, (event.cards[1], event.cards[0], event.cards[2]), event.board)
        return event

    swapped = [swap_flop(e) for e in hand.events]
    report = verify_history(swapped)
    assert not report.ok and any("flop" in p for p in report.problems), f"got {report}"


def test_fairness_seeded_rng_makes_the_hand_deterministic() -> None:
    first = Hand(three_handed(), rng=random.Random(42))
    second = Hand(three_handed(), rng=random.Random(42))
    assert (first.deck, first.salt, first.commitment) == (second.deck, second.salt, second.commitment)
    assert len(first.salt) == 16


def test_events_audience_hole_cards_private_deck_operator_only() -> None:
    hand = make_hand(three_handed(), holes={1: "AsAd"})
    dealt = next(e for e in hand.events if isinstance(e, HoleCardsDealt) and e.seat == 1)
    assert dealt.visible_to(1) and not dealt.visible_to(2) and not dealt.visible_to(None)
    sealed = events_of(hand, DeckSealed)[0]
    assert sealed.audience == OPERATOR and not sealed.visible_to(1) and not sealed.visible_to(None)
    assert not events_of(hand, DeckRevealed), "the deck is revealed only after the hand"
    while not hand.is_over:
        hand.check_or_call()
    assert events_of(hand, DeckRevealed)[0].visible_to(None)
    assert isinstance(hand.events[-1], HandEnded) and hand.events[-1].stacks() == hand.finishing_stacks()


def test_deck_for_deals_exact_cards_in_documented_order() -> None:
    setup = make_setup({2: 1_000, 4: 1_000, 6: 1_000}, button=4, small=6, big=2, game=Game.OMAHA)
    holes = {2: "AsKsQsJs", 4: "2c3c4c5c", 6: "9h9d8h8d"}
    hand = make_hand(setup, holes=holes, board="TsTd7c6d2h")
    for seat, text in holes.items():
        assert hand.hole_cards(seat) == tuple(parse_cards(text)), f"seat {seat}"
    assert hand.deck[0] == parse_cards("9h")[0], "dealing starts left of the button (seat 6)"
    while not hand.is_over:
        hand.check_or_call()
    assert hand.board == tuple(parse_cards("TsTd7c6d2h"))
    assert total_chips(hand) == 3_000
