"""Hypothesis state machine over the hand engine.

Random setups (hold'em and Omaha; NL, PL, FL; antes of both kinds; 2..10 players; dead buttons
and dead small blinds; short stacks) and any interleaving of legal and illegal actions must keep:

- chips conserved: the stacks plus the chips in the middle always equal the starting stacks
  (DESIGN invariant 1, BET-3);
- bad input harmless: every illegal action (out of turn, raise too small or too large, a check
  facing a bet, a call or fold with nothing to call, a bad amount, anything after the end) raises
  a ``ValueError`` subclass with a message and leaves the whole state as it was (DESIGN 6);
- hidden information hidden: no event a seat (or a spectator) may see carries another seat's
  hole cards before those cards are shown at showdown (DESIGN 4, BET-4); the deck is published
  only once the hand is over.

And at every decision of random hands, the amount to call and whether a raise is allowed follow
BET-2 as worked out from the public log alone (a short blind does not lower the call; a short
all-in reopens nothing to a player who acted).
"""

from __future__ import annotations

import copy
import random
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from public_log import bet_2_reading

from engine.betting import AnteKind, Game, HandSetup, Limit, SeatSetup, Street, max_raises
from engine.events import (
    ActionTaken,
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
from engine.fairness import deal_order
from engine.hand import Hand, HandError
from engine.pots import build_pots, pot_levels, split_pot

CARD_FREE_EVENTS = (
    HandStarted,
    AntePosted,
    BlindPosted,
    ActionTaken,
    UncalledBetReturned,
    CardsMucked,
    PotAwarded,
    HandEnded,
)


@st.composite
def setups(draw: st.DrawFn) -> HandSetup:
    count = draw(st.integers(2, 10))
    table_size = draw(st.integers(count, 10))
    seats = sorted(draw(st.permutations(range(1, table_size + 1)))[:count])
    big_blind = draw(st.sampled_from((2, 4, 10, 100)))
    small_blind = draw(st.integers(1, big_blind))
    kind = draw(st.sampled_from(AnteKind))
    ante = 0 if kind is AnteKind.NONE else draw(st.integers(1, big_blind))
    stacks = [
        draw(st.one_of(st.integers(1, 3 * big_blind + ante), st.integers(1, 60 * big_blind))) for _ in seats
    ]
    if count == 2 and draw(st.booleans()):
        button = draw(st.sampled_from(seats))
        small: int | None = button
        big = next(seat for seat in seats if seat != button)
    else:
        button = draw(st.integers(1, table_size))
        order = deal_order(seats, button)
        small, big = (None, order[0]) if draw(st.booleans()) and count > 2 else (order[0], order[1])
        if big == button:
            small, big = button, order[0]
    return HandSetup(
        hand_id="prop",
        table_size=table_size,
        seats=tuple(SeatSetup(seat, f"p{seat}", stack) for seat, stack in zip(seats, stacks, strict=True)),
        button=button,
        small_blind_seat=small,
        big_blind_seat=big,
        small_blind=small_blind,
        big_blind=big_blind,
        ante=ante,
        ante_kind=kind,
        limit=draw(st.sampled_from(Limit)),
        game=draw(st.sampled_from(Game)),
    )


def fingerprint(hand: Hand) -> tuple[Any, ...]:
    """Every attribute of the hand, copied: equal before and after means nothing changed. The
    containers hold only immutable values (ints, cards, frozen events), so a shallow copy of each
    container is a full snapshot."""
    return tuple(copy.copy(getattr(hand, name)) for name in Hand.__slots__)


def cards_in(event: object) -> set[int]:
    """The cards an event carries. Every event type must be known here, so a new event with
    cards cannot slip past the privacy check."""
    if isinstance(event, HoleCardsDealt | CardsShown):
        return set(event.cards)
    if isinstance(event, StreetDealt):
        return set(event.cards) | set(event.board)
    if isinstance(event, HandsShown):
        return {card for shown in event.hands for card in shown.cards}
    if isinstance(event, DeckRevealed | DeckSealed):
        return set(event.deck)
    assert isinstance(event, CARD_FREE_EVENTS), (
        f"unknown event type {type(event).__name__}: classify its cards"
    )
    return set()


class HandMachine(RuleBasedStateMachine):
    hand: Hand
    total: int
    hands_played: int
    checked_hand: Hand
    checked: int
    shown: set[int]

    @initialize(setup=setups(), seed=st.integers(0, 2**32))
    def start(self, setup: HandSetup, seed: int) -> None:
        self.hand = Hand(setup, rng=random.Random(seed))
        self.total = sum(seat.stack for seat in setup.seats)
        self.hands_played = getattr(self, "hands_played", 0) + 1

    @precondition(lambda self: self.hand.is_over)
    @rule(setup=setups(), seed=st.integers(0, 2**32))
    def next_hand(self, setup: HandSetup, seed: int) -> None:
        """Deal another hand once one is over, so that the steps keep exploring play."""
        self.start(setup, seed)

    # ------------------------------------------------------------ legal play

    @precondition(lambda self: not self.hand.is_over)
    @rule(data=st.data())
    def act_legally(self, data: st.DataObject) -> None:
        legal = self.hand.legal_actions()
        choices = ["call", "call", "call", "timeout"]
        if legal.can_fold:
            choices.append("fold")
        if legal.min_raise_to is not None:
            choices += ["raise", "raise"]
        choice = data.draw(st.sampled_from(choices))
        seat = data.draw(st.sampled_from((None, legal.seat)))
        if choice == "fold":
            event = self.hand.fold(seat=seat)
        elif choice == "timeout":
            event = self.hand.timeout(seat=seat)
        elif choice == "raise":
            assert legal.min_raise_to is not None and legal.max_raise_to is not None
            amount = data.draw(
                st.one_of(
                    st.just(legal.min_raise_to),
                    st.just(legal.max_raise_to),
                    st.integers(legal.min_raise_to, legal.max_raise_to),
                )
            )
            event = self.hand.bet_or_raise_to(amount, seat=seat)
        else:
            event = self.hand.check_or_call(seat=seat)
        assert event.seat == legal.seat, f"expected seat {legal.seat} to act, the event says {event.seat}"

    # ------------------------------------------------------------ illegal play

    def _attempts(self) -> list[tuple[str, Any]]:
        """Illegal actions for the current state, each a (label, callable) pair."""
        hand = self.hand
        if hand.is_over:
            return [
                ("fold after the end", hand.fold),
                ("call after the end", hand.check_or_call),
                ("raise after the end", lambda: hand.bet_or_raise_to(10**9)),
                ("timeout after the end", hand.timeout),
                ("legal actions after the end", hand.legal_actions),
            ]
        legal = hand.legal_actions()
        attempts: list[tuple[str, Any]] = []
        others = [seat for seat in hand.stacks if seat != legal.seat]
        for other in others[:2]:
            attempts.append((f"seat {other} out of turn", lambda other=other: hand.check_or_call(seat=other)))
            attempts.append((f"seat {other} folds out of turn", lambda other=other: hand.fold(seat=other)))
        attempts.append(("not a seat", lambda: hand.timeout(seat=99)))
        if legal.min_raise_to is not None and legal.max_raise_to is not None:
            low, high = legal.min_raise_to, legal.max_raise_to
            attempts.append(("raise too small", lambda: hand.bet_or_raise_to(low - 1)))
            attempts.append(("raise too large", lambda: hand.bet_or_raise_to(high + 1)))
        else:
            attempts.append(
                ("raise when none is possible", lambda: hand.bet_or_raise_to(legal.call_amount + 10**6))
            )
        attempts.append(("raise by a float", lambda: hand.bet_or_raise_to(1.5)))  # type: ignore[arg-type]
        attempts.append(("raise by a bool", lambda: hand.bet_or_raise_to(True)))
        attempts.append(("raise by a string", lambda: hand.bet_or_raise_to("100")))  # type: ignore[arg-type]
        if legal.call_amount:
            attempts.append(("check facing a bet", hand.check))
        else:
            attempts.append(("call with nothing to call", hand.call))
            attempts.append(("fold with nothing to call", hand.fold))
        return attempts

    @rule(data=st.data())
    def act_illegally(self, data: st.DataObject) -> None:
        label, attempt = data.draw(st.sampled_from(self._attempts()))
        before = fingerprint(self.hand)
        try:
            attempt()
        except HandError as error:
            assert str(error), f"{label}: the error {type(error).__name__} has no message"
        else:
            raise AssertionError(f"{label}: expected a HandError, the hand accepted it")
        assert fingerprint(self.hand) == before, f"{label}: a refused action changed the hand"

    def teardown(self) -> None:
        if hasattr(self, "hand"):
            finished = self.hands_played - (0 if self.hand.is_over else 1)
            event(f"hands finished: {min(finished, 3)}{'+' if finished >= 3 else ''}")

    # ------------------------------------------------------------ invariants

    @invariant()
    def chips_are_conserved(self) -> None:
        now = sum(self.hand.stacks.values()) + self.hand.pot_total
        assert now == self.total, f"expected {self.total} chips in play, found {now}"
        if self.hand.is_over:
            assert self.hand.pot_total == 0, f"expected an empty pot at the end, got {self.hand.pot_total}"
            assert sum(self.hand.finishing_stacks().values()) == self.total

    @invariant()
    def hole_cards_stay_private(self) -> None:
        """Checks the events logged since the last step (the log only grows)."""
        hand = self.hand
        if getattr(self, "checked_hand", None) is not hand:
            self.checked_hand, self.checked, self.shown = hand, 0, set()
        events = hand.events
        seats = list(hand.stacks)
        holes = {seat: set(hand.hole_cards(seat)) for seat in seats}
        for logged in events[self.checked :]:
            if isinstance(logged, DeckRevealed):
                assert hand.is_over, "the deck may be revealed only once the hand is over"
                continue
            if isinstance(logged, CardsShown):
                self.shown.add(logged.seat)
            elif isinstance(logged, HandsShown):
                self.shown.update(h.seat for h in logged.hands)
            cards = cards_in(logged)
            if not cards:
                continue
            for viewer in [None, *seats]:
                if not logged.visible_to(viewer):
                    continue
                for owner in seats:
                    if owner == viewer or owner in self.shown:
                        continue
                    leaked = cards & holes[owner]
                    name = type(logged).__name__
                    assert not leaked, (
                        f"{name} visible to {viewer} carries seat {owner}'s hole cards {leaked}"
                    )
        self.checked = len(events)


@settings(max_examples=300, deadline=None)
@given(
    contributions=st.lists(st.integers(0, 500), min_size=2, max_size=10),
    folded=st.lists(st.booleans(), min_size=10, max_size=10),
    dead_money=st.integers(0, 100),
)
def test_bet_3_side_pots_hold_every_chip_and_only_contenders_win(
    contributions: list[int], folded: list[bool], dead_money: int
) -> None:
    by_player = dict(enumerate(contributions))
    contenders = {p for p in by_player if not folded[p]} or {0}
    # As in a hand: the uncalled part of the largest bet went back, so a contender matched the top.
    by_player[min(contenders)] = max(contributions)
    pots = build_pots(by_player, contenders, dead_money)
    total = sum(by_player.values()) + dead_money
    assert sum(pot.amount for pot in pots) == total, f"expected pots holding {total}, got {pots}"
    for pot in pots:
        assert pot.eligible and set(pot.eligible) <= contenders, f"a pot only contenders can win, got {pot}"
        # BET-3: equal shares, every odd chip to the first winner (left of the button).
        share, odd = divmod(pot.amount, len(pot.eligible))
        shares = split_pot(pot.amount, pot.eligible)
        assert shares == (share + odd, *[share] * (len(shares) - 1)), (
            f"expected {share} each and {odd} odd chips to the first of {pot.eligible}, got {shares}"
        )
    # The showdown's fast path forms the very same pots.
    fast = pot_levels([by_player[p] for p in range(len(contributions))], sorted(contenders), dead_money)
    expected = [(pot.amount, pot.eligible) for pot in pots]
    assert fast == expected, f"pot_levels: expected {expected}, got {fast}"


HandMachine.TestCase.settings = settings(
    max_examples=200,
    stateful_step_count=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestBet3Clk2ChipsConservedBadInputHarmlessHoleCardsPrivate = HandMachine.TestCase


@settings(max_examples=400, deadline=None)
@given(setup=setups(), seed=st.integers(0, 2**32))
def test_bet_2_amount_to_call_and_reopening_follow_the_rule_at_every_decision(
    setup: HandSetup, seed: int
) -> None:
    """At every decision of a random hand: the amount to call is the largest bet, preflop never
    less than the big blind (a short blind does not lower it); and a raise is allowed exactly when
    the player has chips beyond the call, the fixed-limit cap is not reached, someone could answer
    it, and the player has not acted since the last full raise unless facing a full raise (in
    fixed limit, half a bet)."""
    rng = random.Random(seed)
    hand = Hand(setup, rng=rng)
    while not hand.is_over:
        legal = hand.legal_actions()
        seat, bets, stacks = legal.seat, hand.bets, hand.stacks
        current = max(bets.values())
        big_blind_posted = any(isinstance(e, BlindPosted) and e.blind is BlindKind.BIG for e in hand.events)
        if hand.street is Street.PREFLOP and big_blind_posted:
            current = max(current, setup.big_blind)
        to_call = current - bets[seat]
        assert legal.call_amount == min(stacks[seat], to_call), (
            f"expected to call {to_call} (stack {stacks[seat]}), got {legal} in {setup}"
        )
        full, acted, raises, _, _ = bet_2_reading(hand)
        cap = max_raises(setup.limit, hand.street)
        answerable = any(
            stacks[other] + bets[other] > current for other in hand.seats_in_hand if other != seat
        )
        expected = (
            stacks[seat] > to_call
            and (cap is None or raises < cap)
            and answerable
            and not (acted and to_call < full)
        )
        event("BET-2 raise refused over a short all-in" if acted and 0 < to_call < full else "other decision")
        assert legal.can_raise == expected, (
            f"expected a raise {'allowed' if expected else 'refused'} (acted {acted}, faces {to_call},"
            f" full raise {full}, {raises} raises), got {legal} in {setup}, events {hand.events}"
        )
        roll = rng.random()
        if legal.can_raise and roll < 0.4:
            assert legal.min_raise_to is not None and legal.max_raise_to is not None
            hand.bet_or_raise_to(rng.choice((legal.min_raise_to, legal.max_raise_to)))
        elif legal.can_fold and roll < 0.55:
            hand.fold()
        else:
            hand.check_or_call()
