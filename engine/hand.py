"""One hand of hold'em or Omaha as a state machine: actions in, events out.

A ``Hand`` is built from a ``HandSetup`` (decided by the table) and a deck. Construction posts the
antes and blinds and deals the hole cards; then players act through the verify/can/do triads
(``verify_fold``/``can_fold``/``fold``, ``check_or_call``, ``bet_or_raise_to``, ``timeout``).
Everything that is not a player's decision (collecting bets, returning an uncalled bet, dealing
a street, the showdown, awarding pots) happens at once after the action that makes it due, so
``actor`` is ``None`` exactly when the hand is over. Each call appends frozen events to
``events`` (see ``engine.events``); the do-method returns the ``ActionTaken`` it recorded.

Invariants, held after every call:

- chips are conserved: sum of stacks + chips in the middle == sum of starting stacks;
- a refused action (any ``HandError``) changes nothing;
- a hole card appears only in an event for its own seat until that seat shows at showdown.

Rules (RULES.md):

- Posting: antes first (EACH: every player dealt in; BIG_BLIND: one ante from the big blind, who
  pays the blind first and the ante with what is left, LVL-1/TDA RP-11), then the small blind (if
  any) and the big blind, each capped by the stack. Per-player antes are dead money that forms
  side pots like any contribution; the big blind ante is dead money in the main pot.
- Order: preflop the first seat after the big blind acts first; postflop the first seat after
  the button. Heads-up the table puts the button on the small blind, so the button acts first
  preflop and last postflop (BTN-2).
- Sizes (BET-1, BET-2): a bet or raise is at least the street's bet size (``street_bet_size``) and
  at least the largest bet or raise made in the round; a player short of that may go all-in for
  less. Pot limit caps a raise at the pot after calling; fixed limit allows a bet and three
  raises (the big blind is the preflop bet).
- Reopening (BET-2), as pokerkit models the TDA rule: a raise at least as large as the largest so
  far in the round is full and reopens the betting to everyone; an all-in for less is not. A
  player who has acted since the last full raise may then only call or fold, unless the short
  all-ins since add up to a full raise. Where this is looser than a strict reading of the TDA
  rule: the blinds are not a raise and a round starts with no raise size, so the first bet or
  raise of a round reopens the betting even when it is an all-in below the minimum (a limper may
  re-raise over a short all-in preflop). Its size still counts only as what it is: the next
  minimum raise is at least the street's bet size.
- Amount to call: the largest bet actually made. A big blind all-in for less than the blind
  lowers what the others must call (as in pokerkit); the minimum raise stays a full big blind.
- Folding when checking is possible is refused (``NoBetToFold``), as in pokerkit's tournament
  mode. Many sites let a client fold there after a confirmation, but a fold that gives up nothing
  can only hurt: worse, a player alone in a side pot beside an all-in player could fold it away,
  leaving chips that nobody is eligible to win. A timeout folds only when facing a bet (CLK-2).
- Each round ends when nobody is left to act; the part of the largest bet nobody matched is
  returned (BET-3). When at most one player still in has chips, the remaining board is dealt with
  every hand face up (BET-4).
- Showdown (BET-4): when a player still in is all-in, all hands are face up. Otherwise hands are
  shown from the last aggressor of the last round (else the first player left of the button);
  a hand that cannot win any pot it is eligible for, given the hands shown so far, is mucked.
  Pots are built and split by ``engine.pots``: each pot on its own, its odd chips (all of the
  remainder) to the first winner left of the button.
- When all but one player fold, that player wins every pot and shows nothing.
"""

from __future__ import annotations

import random
import secrets
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from engine.betting import (
    STREETS,
    AnteKind,
    Game,
    HandSetup,
    HandSetupError,
    Limit,
    SeatSetup,
    Street,
    max_raises,
    street_bet_size,
)
from engine.cards import FULL_DECK, Card, cards_str, shuffled_deck
from engine.evaluator import describe, evaluate, evaluate_omaha
from engine.events import (
    ActionKind,
    ActionTaken,
    AntePosted,
    BlindKind,
    BlindPosted,
    CardsMucked,
    CardsShown,
    DeckRevealed,
    DeckSealed,
    HandEnded,
    HandEvent,
    HandsShown,
    HandStarted,
    HoleCardsDealt,
    PotAwarded,
    ShownHand,
    StreetDealt,
    UncalledBetReturned,
)
from engine.fairness import SALT_BYTES, FairnessError, check_deck, digest, layout_for
from engine.pots import Pot, build_pots, split_pot

__all__ = [
    "BettingNotReopened",
    "CannotRaiseAllIn",
    "FacingBet",
    "Game",
    "Hand",
    "HandError",
    "HandInProgress",
    "HandOver",
    "HandSetup",
    "HandSetupError",
    "InvalidAmount",
    "LegalActions",
    "NoBetToFold",
    "NobodyToRaise",
    "NotYourTurn",
    "NothingToCall",
    "RaiseCapReached",
    "RaiseNotAllowed",
    "RaiseTooLarge",
    "RaiseTooSmall",
    "SeatSetup",
    "Street",
    "deck_for",
]


class HandError(ValueError):
    """An action or query the hand refuses; the hand is left exactly as it was."""


class HandOver(HandError):
    """The hand is over: nobody can act any more."""


class HandInProgress(HandError):
    """Asked for a result (finishing stacks) before the hand is over."""


class NotYourTurn(HandError):
    """A seat acted out of turn."""


class InvalidAmount(HandError):
    """An amount that is not a whole number of chips."""


class NoBetToFold(HandError):
    """A fold when there is no bet to call: check instead."""


class FacingBet(HandError):
    """A check while facing a bet."""


class NothingToCall(HandError):
    """A call when there is no bet to call."""


class RaiseNotAllowed(HandError):
    """No bet or raise is possible for the player to act (the reason is in the subclass)."""


class RaiseCapReached(RaiseNotAllowed):
    """Fixed limit: the round already had its bet and three raises (BET-1)."""


class BettingNotReopened(RaiseNotAllowed):
    """Only all-ins for less than a full raise came since this player acted (BET-2)."""


class CannotRaiseAllIn(RaiseNotAllowed):
    """The player's chips do not exceed what they must call."""


class NobodyToRaise(RaiseNotAllowed):
    """Every other player still in is all-in for no more than the current bet."""


class RaiseTooSmall(HandError):
    """A bet or raise below the minimum that is not an all-in."""


class RaiseTooLarge(HandError):
    """A bet or raise above the limit's maximum or the player's stack."""


@dataclass(frozen=True, slots=True)
class LegalActions:
    """What the player to act may do. Folding is allowed only facing a bet (see the module
    docstring); ``min_raise_to``/``max_raise_to`` are the totals a bet or raise may reach this street (an
    all-in below the usual minimum is reflected in ``min_raise_to``), ``None`` when no bet or
    raise is possible."""

    seat: int
    can_fold: bool
    can_check: bool
    call_amount: int  # chips a call puts in (capped by the stack); 0 when checking
    min_raise_to: int | None
    max_raise_to: int | None

    @property
    def can_raise(self) -> bool:
        return self.min_raise_to is not None


class Hand:
    """One hand, from the posting of the blinds to the last pot. See the module docstring."""

    __slots__ = (
        "_acted",
        "_actors",
        "_bets",
        "_board",
        "_commitment",
        "_contributions",
        "_dead_money",
        "_deck",
        "_events",
        "_face_up",
        "_folded",
        "_hole",
        "_index",
        "_last_opener",
        "_layout",
        "_order",
        "_over",
        "_raise_count",
        "_raise_size",
        "_salt",
        "_setup",
        "_short_all_ins",
        "_stacks",
        "_starting",
        "_street",
    )

    def __init__(
        self,
        setup: HandSetup,
        *,
        deck: Sequence[Card] | None = None,
        salt: bytes | None = None,
        rng: random.Random | None = None,
    ) -> None:
        """Validate ``setup``, fix the deck, post antes and blinds and deal the hole cards.

        Without ``deck`` a full deck is shuffled with ``rng`` (default: the OS CSPRNG); the salt,
        when not given, is then drawn from the same ``rng`` (after the shuffle), so a seeded rng
        makes the hand fully deterministic. A given deck may be a whole 52-card permutation or
        just the cards the hand can use, in deal order (``deck_for`` builds one). Raises
        ``HandSetupError`` for an unplayable setup or deck.
        """
        setup.validate()
        source = rng if rng is not None else secrets.SystemRandom()
        layout = layout_for(setup)
        if deck is None:
            deck = shuffled_deck(source)
        if salt is None:
            salt = source.randbytes(SALT_BYTES)
        try:
            check_deck(deck, salt)
        except FairnessError as error:
            raise HandSetupError(str(error)) from None
        if len(deck) < layout.size:
            raise HandSetupError(
                f"{len(setup.seats)} players of {setup.game} use {layout.size} cards;"
                f" the deck has {len(deck)}"
            )
        self._setup = setup
        self._layout = layout
        self._deck: tuple[Card, ...] = tuple(deck)
        self._salt = salt
        self._commitment = digest(self._deck, salt)
        by_seat = {seat.seat: seat for seat in setup.seats}
        # Players are kept in deal order: index 0 is the first seat left of the button, so the
        # lowest index among tied winners is the one that gets the odd chip (BET-3).
        self._order: tuple[int, ...] = tuple(layout.hole_positions)
        self._index: dict[int, int] = {seat: i for i, seat in enumerate(self._order)}
        n = len(self._order)
        self._starting: tuple[int, ...] = tuple(by_seat[seat].stack for seat in self._order)
        self._stacks: list[int] = list(self._starting)
        self._bets: list[int] = [0] * n
        self._contributions: list[int] = [0] * n  # collected into the pots, excluding dead money
        self._dead_money = 0  # the big blind ante: main-pot money nobody matches
        self._folded: list[bool] = [False] * n
        self._hole: tuple[tuple[Card, ...], ...] = tuple(
            tuple(self._deck[p] for p in layout.hole_positions[seat]) for seat in self._order
        )
        self._board: list[Card] = []
        self._street = Street.PREFLOP
        self._actors: deque[int] = deque()
        self._acted: set[int] = set()
        self._raise_size = 0
        self._raise_count = 0
        self._short_all_ins: list[int] = []
        self._last_opener = 0
        self._face_up = False
        self._over = False
        self._events: list[HandEvent] = [
            HandStarted(setup, self._commitment),
            DeckSealed(self._deck, salt),
        ]
        self._post_forced_bets()
        for i, seat in enumerate(self._order):
            self._events.append(HoleCardsDealt(seat, self._hole[i]))
        self._begin_round()

    # ------------------------------------------------------------------ queries

    @property
    def setup(self) -> HandSetup:
        return self._setup

    @property
    def hand_id(self) -> str:
        return self._setup.hand_id

    @property
    def actor(self) -> int | None:
        """The seat to act, or ``None`` when the hand is over."""
        return self._order[self._actors[0]] if self._actors else None

    @property
    def is_over(self) -> bool:
        return self._over

    @property
    def street(self) -> Street:
        """The current betting round (the last one reached once the hand is over)."""
        return self._street

    @property
    def board(self) -> tuple[Card, ...]:
        return tuple(self._board)

    @property
    def stacks(self) -> dict[int, int]:
        """Seat -> chips behind (not counting chips bet this street), ascending seat order."""
        return {seat: self._stacks[self._index[seat]] for seat in sorted(self._order)}

    @property
    def bets(self) -> dict[int, int]:
        """Seat -> chips bet on the current street and not yet collected."""
        return {seat: self._bets[self._index[seat]] for seat in sorted(self._order)}

    @property
    def starting_stacks(self) -> dict[int, int]:
        return {seat: self._starting[self._index[seat]] for seat in sorted(self._order)}

    def finishing_stacks(self) -> dict[int, int]:
        """Seat -> stack after the hand; raises ``HandInProgress`` before the hand is over."""
        if not self._over:
            raise HandInProgress(f"hand {self.hand_id} is still being played; no finishing stacks yet")
        return self.stacks

    @property
    def pot_total(self) -> int:
        """All chips in the middle: collected pots, dead money and this street's bets."""
        return sum(self._contributions) + self._dead_money + sum(self._bets)

    def pots(self) -> list[Pot]:
        """The main and side pots of the chips collected so far (this street's bets excluded)."""
        return build_pots(self._contributions_by_seat(), self._contender_seats(), self._dead_money)

    @property
    def seats_in_hand(self) -> tuple[int, ...]:
        """Seats that have not folded, in deal order (first left of the button first)."""
        return self._contender_seats()

    def has_folded(self, seat: int) -> bool:
        return self._folded[self._seat_index(seat)]

    def is_absent(self, seat: int) -> bool:
        """Whether the table marked ``seat`` absent for this hand (CLK-1)."""
        return any(entry.absent for entry in self._setup.seats if entry.seat == seat)

    def hole_cards(self, seat: int) -> tuple[Card, ...]:
        """The hole cards of ``seat`` (private: only for that seat, the operator, or a showdown)."""
        return self._hole[self._seat_index(seat)]

    @property
    def events(self) -> list[HandEvent]:
        """The full log so far, operator events included (filter with ``visible_to``)."""
        return list(self._events)

    @property
    def commitment(self) -> str:
        return self._commitment

    @property
    def deck(self) -> tuple[Card, ...]:
        """The deck order. Operator and history use only: never send it before the hand ends."""
        return self._deck

    @property
    def salt(self) -> bytes:
        """The commitment salt. Operator and history use only, like ``deck``."""
        return self._salt

    def legal_actions(self) -> LegalActions:
        """What the player to act may do; raises ``HandOver`` when nobody can act."""
        i = self._require_actor(None)
        call = self._call_amount(i)
        low: int | None = None
        high: int | None = None
        if self._raise_refusal(i) is None:
            low, high = self._raise_bounds(i)
        return LegalActions(
            seat=self._order[i],
            can_fold=call > 0,
            can_check=call == 0,
            call_amount=call,
            min_raise_to=low,
            max_raise_to=high,
        )

    # ------------------------------------------------------------------ fold

    def verify_fold(self, *, seat: int | None = None) -> None:
        """Raise ``HandOver``, ``NotYourTurn`` (when ``seat`` is given and not the actor) or
        ``NoBetToFold`` (nothing to call: check instead)."""
        i = self._require_actor(seat)
        if not self._call_amount(i):
            raise NoBetToFold(f"seat {self._order[i]} faces no bet: check instead of folding")

    def can_fold(self, *, seat: int | None = None) -> bool:
        return _allowed(self.verify_fold, seat=seat)

    def fold(self, *, seat: int | None = None) -> ActionTaken:
        """Fold the actor's hand (only when facing a bet)."""
        self.verify_fold(seat=seat)
        return self._fold(timed_out=False)

    # ------------------------------------------------------------------ check / call

    def verify_check_or_call(self, *, seat: int | None = None) -> None:
        self._require_actor(seat)

    def can_check_or_call(self, *, seat: int | None = None) -> bool:
        return _allowed(self.verify_check_or_call, seat=seat)

    def check_or_call(self, *, seat: int | None = None) -> ActionTaken:
        """Check, or call the current bet (all-in when the stack is shorter than the call)."""
        self.verify_check_or_call(seat=seat)
        return self._check_or_call(timed_out=False)

    def verify_check(self, *, seat: int | None = None) -> None:
        """As ``verify_check_or_call``, and raise ``FacingBet`` when there is a bet to call."""
        i = self._require_actor(seat)
        call = self._call_amount(i)
        if call:
            raise FacingBet(
                f"seat {self._order[i]} faces a bet ({call} to call): call, raise or fold, not check"
            )

    def can_check(self, *, seat: int | None = None) -> bool:
        return _allowed(self.verify_check, seat=seat)

    def check(self, *, seat: int | None = None) -> ActionTaken:
        self.verify_check(seat=seat)
        return self._check_or_call(timed_out=False)

    def verify_call(self, *, seat: int | None = None) -> None:
        """As ``verify_check_or_call``, and raise ``NothingToCall`` when there is no bet."""
        i = self._require_actor(seat)
        if not self._call_amount(i):
            raise NothingToCall(f"seat {self._order[i]} faces no bet: check (or bet) instead of calling")

    def can_call(self, *, seat: int | None = None) -> bool:
        return _allowed(self.verify_call, seat=seat)

    def call(self, *, seat: int | None = None) -> ActionTaken:
        self.verify_call(seat=seat)
        return self._check_or_call(timed_out=False)

    # ------------------------------------------------------------------ bet / raise

    def verify_bet_or_raise_to(self, amount: int, *, seat: int | None = None) -> None:
        """Raise why the actor may not make their street bet total ``amount``: ``InvalidAmount``,
        a ``RaiseNotAllowed`` subclass, ``RaiseTooSmall`` or ``RaiseTooLarge``."""
        i = self._require_actor(seat)
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise InvalidAmount(f"a bet is a whole number of chips, got {amount!r}")
        refusal = self._raise_refusal(i)
        if refusal is not None:
            raise refusal
        low, high = self._raise_bounds(i)
        all_in = self._stacks[i] + self._bets[i]
        who = f"seat {self._order[i]}"
        if amount < low:
            raise RaiseTooSmall(
                f"{who} must bet or raise to at least {low}"
                + ("" if low == all_in else f" (or all-in to {all_in})")
                + f", got {amount}"
            )
        if amount > high:
            cap = (
                "the stack"
                if high == all_in
                else f"the {self._setup.limit.name.lower().replace('_', ' ')} maximum"
            )
            raise RaiseTooLarge(f"{who} may bet or raise to at most {high} ({cap}), got {amount}")

    def can_bet_or_raise_to(self, amount: int, *, seat: int | None = None) -> bool:
        return _allowed(self.verify_bet_or_raise_to, amount, seat=seat)

    def bet_or_raise_to(self, amount: int, *, seat: int | None = None) -> ActionTaken:
        """Make the actor's total bet this street ``amount`` (a bet, or a raise over a bet)."""
        self.verify_bet_or_raise_to(amount, seat=seat)
        i = self._pop_actor()
        n = len(self._order)
        current = max(self._bets)
        raise_by = amount - current
        put_in = amount - self._bets[i]
        self._bets[i] = amount
        self._stacks[i] -= put_in
        self._actors = deque(
            j for j in ((i + k) % n for k in range(1, n)) if not self._folded[j] and self._stacks[j]
        )
        self._last_opener = i
        if raise_by >= self._raise_size:
            # A full raise reopens the betting for everyone (BET-2).
            self._acted = {i}
        self._raise_size = max(self._raise_size, raise_by)
        self._raise_count += 1
        if self._stacks[i]:
            self._short_all_ins.clear()
        else:
            self._short_all_ins.append(raise_by)
        if sum(self._short_all_ins) >= self._raise_size:
            self._short_all_ins.clear()
        event = ActionTaken(
            seat=self._order[i],
            street=self._street,
            kind=ActionKind.BET if current == 0 else ActionKind.RAISE,
            amount=put_in,
            to_amount=amount,
            all_in=self._stacks[i] == 0,
        )
        self._events.append(event)
        self._after_action()
        return event

    # ------------------------------------------------------------------ timeout

    def verify_timeout(self, *, seat: int | None = None) -> None:
        self._require_actor(seat)

    def can_timeout(self, *, seat: int | None = None) -> bool:
        return _allowed(self.verify_timeout, seat=seat)

    def timeout(self, *, seat: int | None = None) -> ActionTaken:
        """The actor's time ran out (CLK-2): facing a bet the hand is folded, otherwise checked.
        Returns the fold or check, marked ``timed_out``."""
        i = self._require_actor(seat)
        if self._call_amount(i):
            return self._fold(timed_out=True)
        return self._check_or_call(timed_out=True)

    # ------------------------------------------------------------------ internals: actions

    def _seat_index(self, seat: int) -> int:
        try:
            return self._index[seat]
        except KeyError:
            raise HandError(f"seat {seat!r} is not dealt in (seats {sorted(self._order)})") from None

    def _require_actor(self, seat: int | None) -> int:
        if not self._actors:
            raise HandOver(f"hand {self.hand_id} is over; no more actions")
        i = self._actors[0]
        if seat is not None and seat != self._order[i]:
            raise NotYourTurn(f"it is seat {self._order[i]}'s turn to act, not seat {seat}'s")
        return i

    def _pop_actor(self) -> int:
        i = self._actors.popleft()
        self._acted.add(i)
        return i

    def _call_amount(self, i: int) -> int:
        return min(self._stacks[i], max(self._bets) - self._bets[i])

    def _raise_refusal(self, i: int) -> RaiseNotAllowed | None:
        """Why player ``i`` may not bet or raise now (``None``: they may), as pokerkit decides."""
        who = f"seat {self._order[i]}"
        current = max(self._bets)
        to_call = current - self._bets[i]
        # The checks below are pokerkit's; any one of them refuses, so their order only decides
        # which reason is reported.
        if self._stacks[i] <= to_call:
            return CannotRaiseAllIn(f"{who} has {self._stacks[i]} chips, not more than the {to_call} to call")
        cap = max_raises(self._setup.limit, self._street)
        if cap is not None and self._raise_count >= cap:
            opening = "the big blind" if self._street is Street.PREFLOP else "a bet"
            raises = cap - (0 if self._street is Street.PREFLOP else 1)
            return RaiseCapReached(
                f"the {self._street} already had {opening} and {raises} raises: call or fold"
            )
        if to_call < self._raise_size:
            return BettingNotReopened(
                f"{who} faces {to_call} more, less than a full raise of {self._raise_size}: call or fold"
            )
        if self._short_all_ins and sum(self._short_all_ins) < self._raise_size and i in self._acted:
            return BettingNotReopened(
                f"{who} already acted and only all-ins for less than a full raise followed: call or fold"
            )
        for j in range(len(self._order)):
            if j != i and not self._folded[j] and self._stacks[j] + self._bets[j] > current:
                return None
        return NobodyToRaise(f"every other player still in is all-in: {who} may only call or fold")

    def _raise_bounds(self, i: int) -> tuple[int, int]:
        current = max(self._bets)
        all_in = self._stacks[i] + self._bets[i]
        size = max(self._raise_size, street_bet_size(self._setup.limit, self._street, self._setup.big_blind))
        low = min(all_in, current + size)
        limit = self._setup.limit
        if limit is Limit.FIXED_LIMIT:
            high = low
        elif limit is Limit.POT_LIMIT:
            # The pot after calling, added on top of the call.
            high = min(all_in, max(low, 2 * current - self._bets[i] + self.pot_total))
        else:
            high = all_in
        return low, high

    def _fold(self, *, timed_out: bool) -> ActionTaken:
        i = self._pop_actor()
        self._folded[i] = True
        event = ActionTaken(
            seat=self._order[i],
            street=self._street,
            kind=ActionKind.FOLD,
            amount=0,
            to_amount=self._bets[i],
            all_in=False,
            timed_out=timed_out,
        )
        self._events.append(event)
        self._after_action()
        return event

    def _check_or_call(self, *, timed_out: bool) -> ActionTaken:
        i = self._pop_actor()
        amount = self._call_amount(i)
        self._bets[i] += amount
        self._stacks[i] -= amount
        event = ActionTaken(
            seat=self._order[i],
            street=self._street,
            kind=ActionKind.CALL if amount else ActionKind.CHECK,
            amount=amount,
            to_amount=self._bets[i],
            all_in=self._stacks[i] == 0,
            timed_out=timed_out,
        )
        self._events.append(event)
        self._after_action()
        return event

    def _after_action(self) -> None:
        if not self._actors or self._contender_count() <= 1:
            self._end_round()

    # ------------------------------------------------------------------ internals: flow

    def _post_forced_bets(self) -> None:
        setup = self._setup
        n = len(self._order)
        big = self._index[setup.big_blind_seat]
        left = list(self._stacks)  # what each player still has while the forced bets are worked out
        antes = [0] * n
        if setup.ante_kind is AnteKind.EACH:
            for i in range(n):
                antes[i] = min(setup.ante, left[i])
                left[i] -= antes[i]
        blinds: list[tuple[int, BlindKind, int]] = []
        if setup.small_blind_seat is not None:
            small = self._index[setup.small_blind_seat]
            blinds.append((small, BlindKind.SMALL, min(setup.small_blind, left[small])))
            left[small] -= blinds[-1][2]
        blinds.append((big, BlindKind.BIG, min(setup.big_blind, left[big])))
        left[big] -= blinds[-1][2]
        if setup.ante_kind is AnteKind.BIG_BLIND:
            # A short big blind pays the blind first, then the ante with what is left (TDA RP-11).
            antes[big] = min(setup.ante, left[big])
            left[big] -= antes[big]
        # Antes are announced first; an ante is the all-in posting only if no blind follows it.
        blind_seats = {i for i, _, amount in blinds if amount}
        for i in range(n):
            if antes[i]:
                self._stacks[i] -= antes[i]
                all_in = self._stacks[i] == 0 and i not in blind_seats
                self._events.append(AntePosted(self._order[i], antes[i], all_in))
        if setup.ante_kind is AnteKind.EACH:
            # Per-player antes are contributions like any other: they form side pots, and an ante
            # nobody could match in full is partly returned, as pokerkit's ante trimming does.
            self._contributions = antes
            self._return_uncalled(self._contributions)
        else:
            self._dead_money = sum(antes)
        for i, kind, amount in blinds:
            if amount:
                self._stacks[i] -= amount
                self._bets[i] += amount
                self._events.append(BlindPosted(self._order[i], kind, amount, self._stacks[i] == 0))

    def _return_uncalled(self, amounts: list[int]) -> None:
        """Give back the part of the largest amount in ``amounts`` that nobody else matched."""
        if len(amounts) < 2:
            return
        cutoff = sorted(amounts)[-2]
        for i, amount in enumerate(amounts):
            if amount > cutoff:
                excess = amount - cutoff
                amounts[i] = cutoff
                self._stacks[i] += excess
                self._events.append(UncalledBetReturned(self._order[i], excess))

    def _effective_stack(self, i: int) -> int:
        """What player ``i`` can still lose: no more than the second largest total still in."""
        totals = sorted(
            self._bets[j] + self._stacks[j] for j in range(len(self._order)) if not self._folded[j]
        )
        return min(self._stacks[i], max(0, totals[-2] - self._bets[i]))

    def _begin_round(self) -> None:
        n = len(self._order)
        opener = (self._index[self._setup.big_blind_seat] + 1) % n if self._street is Street.PREFLOP else 0
        self._last_opener = opener
        self._actors = deque(
            j
            for j in ((opener + k) % n for k in range(n))
            if not self._folded[j] and self._stacks[j] and self._effective_stack(j)
        )
        self._acted.clear()
        self._raise_size = 0
        self._raise_count = 0
        self._short_all_ins.clear()
        lone_and_matched = len(self._actors) == 1 and self._bets[self._actors[0]] >= max(self._bets)
        if not self._actors or self._contender_count() <= 1 or lone_and_matched:
            self._end_round()

    def _end_round(self) -> None:
        self._actors.clear()
        contenders = [i for i in range(len(self._order)) if not self._folded[i]]
        with_chips = sum(1 for i in contenders if self._stacks[i])
        runout = len(contenders) > 1 and with_chips <= 1
        self._return_uncalled(self._bets)
        for i, bet in enumerate(self._bets):
            self._contributions[i] += bet
        self._bets = [0] * len(self._order)
        if len(contenders) == 1:
            self._award_uncontested(contenders[0])
            return
        if runout and not self._face_up:
            self._show_all(contenders)
        if runout:
            while self._street is not Street.RIVER:
                self._deal_next_street()
        if self._street is Street.RIVER:
            self._showdown(contenders)
            return
        self._deal_next_street()
        self._begin_round()

    def _deal_next_street(self) -> None:
        self._street = STREETS[STREETS.index(self._street) + 1]
        cards = tuple(self._deck[p] for p in self._layout.street_positions[self._street])
        self._board.extend(cards)
        self._events.append(StreetDealt(self._street, cards, tuple(self._board)))

    def _show_all(self, contenders: Sequence[int]) -> None:
        self._face_up = True
        self._events.append(HandsShown(tuple(ShownHand(self._order[i], self._hole[i]) for i in contenders)))

    def _value(self, i: int) -> int:
        if self._setup.game is Game.OMAHA:
            return evaluate_omaha(self._hole[i], self._board)
        return evaluate(self._hole[i] + tuple(self._board))

    def _showdown(self, contenders: Sequence[int]) -> None:
        n = len(self._order)
        values = {i: self._value(i) for i in contenders}
        pots = build_pots(self._contributions_by_index(), set(contenders), self._dead_money)
        if not self._face_up and any(self._stacks[i] == 0 for i in contenders):
            # An all-in player is still in: every hand is tabled, nobody mucks (BET-4).
            self._show_all(contenders)
        if self._face_up:
            shown = set(contenders)
        else:
            shown = set()
            # The last aggressor of the last round shows first, else the first left of the button.
            for i in ((self._last_opener + k) % n for k in range(n)):
                if self._folded[i]:
                    continue
                if self._can_still_win(i, pots, shown, values):
                    shown.add(i)
                    self._events.append(CardsShown(self._order[i], self._hole[i], describe(values[i])))
                else:
                    self._events.append(CardsMucked(self._order[i]))
        for index, pot in enumerate(pots):
            candidates = [i for i in pot.eligible if i in shown]
            best = max(values[i] for i in candidates)
            winners = [i for i in candidates if values[i] == best]
            shares = split_pot(pot.amount, winners)
            for i, share in zip(winners, shares, strict=True):
                self._stacks[i] += share
            self._events.append(
                PotAwarded(
                    pot_index=index,
                    amount=pot.amount,
                    eligible=tuple(self._order[i] for i in pot.eligible),
                    winners=tuple(self._order[i] for i in winners),
                    shares=shares,
                    description=describe(best),
                )
            )
        self._contributions = [0] * n
        self._dead_money = 0
        self._finish()

    @staticmethod
    def _can_still_win(i: int, pots: Sequence[Pot], shown: set[int], values: Mapping[int, int]) -> bool:
        for pot in pots:
            if i not in pot.eligible:
                continue
            rivals = [values[j] for j in pot.eligible if j in shown]
            if not rivals or values[i] >= max(rivals):
                return True
        return False

    def _award_uncontested(self, winner: int) -> None:
        amount = sum(self._contributions) + self._dead_money
        self._stacks[winner] += amount
        self._contributions = [0] * len(self._order)
        self._dead_money = 0
        seat = self._order[winner]
        self._events.append(PotAwarded(0, amount, (seat,), (seat,), (amount,), None))
        self._finish()

    def _finish(self) -> None:
        self._over = True
        self._actors.clear()
        self._events.append(DeckRevealed(self._deck, self._salt, self._commitment))
        self._events.append(HandEnded(tuple(self.stacks.items())))

    def _contender_count(self) -> int:
        return self._folded.count(False)

    def _contender_seats(self) -> tuple[int, ...]:
        return tuple(seat for i, seat in enumerate(self._order) if not self._folded[i])

    def _contributions_by_index(self) -> dict[int, int]:
        return dict(enumerate(self._contributions))

    def _contributions_by_seat(self) -> dict[int, int]:
        return {seat: self._contributions[i] for i, seat in enumerate(self._order)}

    def __repr__(self) -> str:
        state = "over" if self._over else f"{self._street}, seat {self.actor} to act"
        board = cards_str(self._board) or "-"
        return f"<Hand {self.hand_id} {state}, board {board}, pot {self.pot_total}>"


def _allowed(check: Callable[..., None], *args: object, **kwargs: object) -> bool:
    """The can-method of a triad: whether the verify-method ``check`` accepts the arguments."""
    try:
        check(*args, **kwargs)
    except HandError:
        return False
    return True


def deck_for(setup: HandSetup, hole_cards: Mapping[int, Sequence[Card]], board: Sequence[Card]) -> list[Card]:
    """A 52-card deck that deals exactly ``hole_cards`` (seat -> cards) and ``board`` for ``setup``
    in the documented deal order (``engine.fairness``). Burn cards and cards not given (an
    unknown hand, a board that was never dealt) are filled with unused cards in deck order.
    Raises ``HandSetupError`` for cards that cannot be dealt that way."""
    layout = layout_for(setup)
    slots: list[Card | None] = [None] * len(FULL_DECK)
    used: set[Card] = set()

    def place(position: int, card: Card) -> None:
        if not isinstance(card, int) or isinstance(card, bool) or not 0 <= card < len(FULL_DECK):
            raise HandSetupError(f"cards are ints 0..51, got {card!r}")
        if card in used:
            raise HandSetupError(f"card {cards_str([card])} is given twice")
        used.add(card)
        slots[position] = card

    for seat, cards in hole_cards.items():
        positions = layout.hole_positions.get(seat)
        if positions is None:
            raise HandSetupError(f"hole cards for seat {seat}, which is not dealt in")
        if len(cards) > len(positions):
            raise HandSetupError(f"seat {seat} gets {len(positions)} hole cards, {len(cards)} were given")
        for position, card in zip(positions, cards, strict=False):
            place(position, card)
    board_positions = [
        p for street in (Street.FLOP, Street.TURN, Street.RIVER) for p in layout.street_positions[street]
    ]
    if len(board) > len(board_positions):
        raise HandSetupError(f"a board has at most {len(board_positions)} cards, {len(board)} were given")
    for position, card in zip(board_positions, board, strict=False):
        place(position, card)
    spare = iter(card for card in FULL_DECK if card not in used)
    return [card if card is not None else next(spare) for card in slots]
