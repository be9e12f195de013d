"""One hand of hold'em or Omaha as a state machine: actions in, events out.

A ``Hand`` is built from a ``HandSetup`` (decided by the table) and a deck. Construction posts the
antes and blinds and deals the hole cards; then players act through the verify/can/do triads
(``verify_fold``/``can_fold``/``fold``, ``check_or_call``, ``check``, ``call``,
``bet_or_raise_to``, ``timeout``). Everything that is not a player's decision (collecting bets,
returning an uncalled bet, dealing a street, the showdown, awarding pots) happens at once after
the action that makes it due, so ``actor`` is ``None`` exactly when the hand is over. Each call
appends frozen events to ``events`` (see ``engine.events``); the do-method returns the
``ActionTaken`` it recorded.

The table actor drives a hand through three calls, each taking or giving one value:

- ``turn()``: who must act and what they may do (``LegalActions``: the seat, fold/check, the
  call, the least and most a bet or raise may reach), or ``None`` once the hand is over;
- ``act(action, seat=...)`` with an ``engine.actions`` value (``Fold()``, ``Check()``,
  ``Call()``, ``CheckOrCall()``, ``BetOrRaiseTo(amount)``, ``Timeout()``), and its
  ``verify_act``/``can_act``: the same triads, one entry point;
- ``events_since(position)``: the events the last calls logged and the position to ask from
  next, without copying the whole log.

``engine.clock`` says when the player's time is up (``timeout_due``); the timeout is then just
another action.

Invariants, held after every call:

- chips are conserved: sum of stacks + chips in the middle == sum of starting stacks;
- a refused action (any ``HandError``) changes nothing;
- a hole card appears only in an event for its own seat until that seat shows at showdown.

Rules (docs/rules.md):

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
- Reopening (BET-2, TDA Rules 43 and 47): a bet or raise that counts as a full raise reopens the
  betting to everyone; an all-in for less does not: a player who has acted since the last bet or
  raise that counted may then raise only when what they face adds up to a full raise (several
  short all-ins cumulatively), else only call or fold. Preflop the big blind counts as the opening
  bet; a limper has acted, so it may not re-raise a short all-in over the big blind; the blinds
  only posted and have not acted, so the big blind keeps its option (and the small blind may
  raise when it first acts). After the flop a check is not action on a wager: the opening bet of
  a round counts whatever its size, even an all-in below the minimum bet, and may simply be
  called for its amount; the next full raise is still at least the street's bet size. What
  counts as a full raise:
  - no limit and pot limit: a raise of at least the minimum raise (the largest raise of the
    round, at least the street's bet size);
  - fixed limit (TDA Rule 47-B): a raise of at least half a bet over the last bet or raise that
    counted. So an all-in raise of half a bet or more is a full raise: it reopens the betting and
    counts toward the cap of a bet and three raises, and the next raise is a full bet over it. An
    all-in raise of less than half a bet is a call plus chips: it reopens nothing, does not count
    toward the cap, and the next raise completes a full bet over the last bet that counted
    (betting 10: a bet of 10, an all-in to 14, the next raise is to 20, not 24; an all-in to 15
    would have been a raise, the next one to 25). Short all-ins add up: a second one that takes
    the bet half a bet or more past the last that counted is a full raise.
  ``Hand._bet_2`` is the whole decision, read plainly from the round's actions, and the
  verify-methods use it; ``legal_actions`` and the do-methods use its fast path, state kept up to
  date as the actions come, and tests/test_hand_rules.py checks on random hands that the two
  agree. pokerkit differs: it lets the first raise of a round reopen the betting even when it is
  a short all-in, judges short all-ins by one running sum for all players rather than by what
  each player faces, and in fixed limit judges all-ins as in no limit (no half-bet rule) and
  counts every raise toward the cap (tests/test_hand_differential.py checks that these are the
  only differences).
- Amount to call: the largest bet actually made; preflop never less than the level's big blind.
  A blind all-in for less than a full blind does not lower what the others must call (TDA,
  Robert's Rules, as major sites play; pokerkit lowers it): they call the full big blind, the
  minimum raise is to two big blinds, the part above the short blind's post forms a side pot, and
  a part nobody matches is returned (BET-3), to a small blind that folded facing the full blind
  too. A big blind left with no chips by its ante posts no blind, and then the largest blind
  posted is the bet (as before the flop with no blind at all).
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
  Pots are built and split by ``engine.pots``: tied winners share evenly, the odd chips to the
  first winner left of the button, and players who tie for several pots share their sum.
- When all but one player fold, that player wins every pot and shows nothing.
- Killed hands (PEN-1, TDA R71): the seats in ``HandSetup.killed`` (a sit-out penalty the table
  applies) are dealt in, post and receive cards, then are folded before any action; ``kill``
  (verify/can/do) is the operator's ruling at any moment of the hand, out of turn included (TDA
  R69: collusion, chip dumping). Both exist because they answer different needs: the table knows
  a penalty before the deal and a setup field keeps the hand's record self-describing (and
  replayable from ``HandStarted`` alone), while a ruling on collusion comes in the middle of a
  hand. A killed hand is folded at once (if it was the actor's turn the action moves on; the hand
  ends when one player is left) and emits a public ``HandKilled``; its cards are never shown. Its
  chips stay in the middle as dead money: its bets stand (the others call them or fold, as a
  killed big blind is still the bet to call at a live table), none of it is ever returned as an
  uncalled bet, and what it put in above every player still in goes to the last pot formed.
"""

from __future__ import annotations

import random
import secrets
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from hashlib import sha256
from itertools import compress
from operator import add, attrgetter
from typing import Any, NamedTuple

from engine.actions import Action, BetOrRaiseTo, Call, Check, CheckOrCall, Fold, Timeout
from engine.betting import (
    MAX_TABLE_SIZE,
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
from engine.evaluator import describe, evaluate7, evaluate_omaha
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
    HandKilled,
    HandsShown,
    HandStarted,
    HoleCardsDealt,
    KillReason,
    PotAwarded,
    ShownHand,
    StreetDealt,
    UncalledBetReturned,
    new_action_taken,
)
from engine.fairness import SALT_BYTES, FairnessError, check_deck, layout_for
from engine.pots import Pot, build_pots, pot_levels, split_pots
from engine.triads import can

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
    "InvalidAction",
    "InvalidAmount",
    "InvalidEventPosition",
    "KillReason",
    "LegalActions",
    "NoBetToFold",
    "NobodyToRaise",
    "NotInHand",
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


class InvalidAction(HandError):
    """A value given to ``act`` that is not an ``engine.actions`` action."""


class InvalidEventPosition(HandError):
    """A position in the log that ``events_since`` cannot start from."""


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


class NotInHand(HandError):
    """A hand that is already folded or killed cannot be killed (PEN-1)."""


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


# Rings of player indices for each table size: _RINGS[n][s] is every index from s on, wrapping
# around; _AFTER[n][i] is every other index after i. Precomputed: the hot paths only filter them.
_RINGS: dict[int, tuple[tuple[int, ...], ...]] = {
    n: tuple(tuple((s + k) % n for k in range(n)) for s in range(n)) for n in range(1, MAX_TABLE_SIZE + 1)
}
_RANGES: dict[int, range] = {n: range(n) for n in range(1, MAX_TABLE_SIZE + 1)}
_AFTER: dict[int, tuple[tuple[int, ...], ...]] = {
    n: tuple(tuple((i + k) % n for k in range(1, n)) for i in range(n)) for n in range(1, MAX_TABLE_SIZE + 1)
}
# Enum members as module constants: a global lookup is cheaper than a class attribute lookup.
_PREFLOP, _FLOP, _TURN, _RIVER = STREETS
_FOLD, _CHECK, _CALL, _BET, _RAISE = (
    ActionKind.FOLD,
    ActionKind.CHECK,
    ActionKind.CALL,
    ActionKind.BET,
    ActionKind.RAISE,
)
_NO_ANTE, _EACH_ANTE, _BIG_BLIND_ANTE = AnteKind.NONE, AnteKind.EACH, AnteKind.BIG_BLIND
_NO_LIMIT, _POT_LIMIT, _FIXED_LIMIT = Limit.NO_LIMIT, Limit.POT_LIMIT, Limit.FIXED_LIMIT
_HOLDEM = Game.HOLDEM
_SMALL, _BIG = BlindKind.SMALL, BlindKind.BIG

# The hot paths build their ActionTaken without a call (as engine.events.new_action_taken).
_new_tuple = tuple.__new__
_STACK_OF = attrgetter("stack")
# Deal orders by (seats dealt in, button): the same at a table every orbit, so kept (bounded).
_SEATINGS: dict[tuple[tuple[int, ...], int], tuple[tuple[int, ...], int, dict[int, int]]] = {}
_SEATINGS_KEPT = 4096


def _seating(numbers: tuple[int, ...], button: int) -> tuple[tuple[int, ...], int, dict[int, int]]:
    """The deal order of ``numbers`` (ascending seats) for ``button`` (engine.fairness.deal_order:
    from the first seat after the button), where it starts in ``numbers``, and seat -> index
    in it. The dict is shared: never change it."""
    found = _SEATINGS.get((numbers, button))
    if found is None:
        k = bisect_right(numbers, button)
        order = numbers[k:] + numbers[:k]
        found = (order, k, dict(zip(order, range(len(order)), strict=True)))
        if len(_SEATINGS) < _SEATINGS_KEPT:
            _SEATINGS[(numbers, button)] = found
    return found


# Markers of the compact log (see ``Hand.events``) for entries built from the hand's own state.
# Shared entries, so logging them allocates nothing.
_STARTED = (object(),)  # HandStarted, then DeckSealed
_HOLES = (object(),)  # every seat's HoleCardsDealt, in deal order
_FINISHED = (object(),)  # DeckRevealed, then HandEnded with the finishing stacks


_BOARD_LENGTHS = (0, 3, 4, 5)  # board cards dealt by the end of each street's deal
_NO_SALT = bytes(SALT_BYTES)  # check_deck checks a salt too; the hand checks its own apart


def _street_dealt(street: Street, board: tuple[Card, ...], number: int) -> StreetDealt:
    end = _BOARD_LENGTHS[number]
    return StreetDealt(street, board[_BOARD_LENGTHS[number - 1] : end], board[:end])


def _cards_shown(seat: int, cards: tuple[Card, ...], value: int) -> CardsShown:
    return CardsShown(seat, cards, describe(value))


def _pot_awarded(
    order: tuple[int, ...],
    index: int,
    amount: int,
    eligible: tuple[int, ...],
    winners: tuple[int, ...],
    shares: tuple[int, ...],
    value: int | None,
) -> PotAwarded:
    return PotAwarded(
        pot_index=index,
        amount=amount,
        eligible=tuple(order[i] for i in eligible),
        winners=tuple(order[i] for i in winners),
        shares=shares,
        description=None if value is None else describe(value),
    )


def _shown_hands(
    order: tuple[int, ...], deck: tuple[Card, ...], hole_count: int, players: list[int]
) -> HandsShown:
    n = len(order)
    return HandsShown(tuple(ShownHand(order[i], deck[i : i + hole_count * n : n]) for i in players))


def _legal_actions_factory() -> Callable[[int, bool, bool, int, int | None, int | None], LegalActions]:
    """``LegalActions(...)`` with its six fields positionally, built through the slot descriptors
    (as ``engine.events.new_action_taken``): random play asks for one per decision."""
    new = object.__new__
    cls = LegalActions
    names = ("seat", "can_fold", "can_check", "call_amount", "min_raise_to", "max_raise_to")
    s0, s1, s2, s3, s4, s5 = (getattr(cls, name).__set__ for name in names)

    def new_legal_actions(
        seat: int, can_fold: bool, can_check: bool, call: int, low: int | None, high: int | None
    ) -> LegalActions:
        legal: LegalActions = new(cls)
        s0(legal, seat)
        s1(legal, can_fold)
        s2(legal, can_check)
        s3(legal, call)
        s4(legal, low)
        s5(legal, high)
        return legal

    return new_legal_actions


_new_legal_actions = _legal_actions_factory()


class _Bet2(NamedTuple):
    """BET-2's reading of the round so far, for one player (``Hand._bet_2``)."""

    reopened: bool  # the betting is open to the player: they may raise, as far as BET-2 goes
    full_raise: int  # the least a full raise adds (fixed limit: the bet size)
    raise_from: int  # the total a full raise adds it to
    counted: int  # bets and raises that counted as full: fixed limit's cap counts these (BET-1)


class Hand:
    """One hand, from the posting of the blinds to the last pot. See the module docstring.

    How it stays fast (a full 9-handed hand in about 40 microseconds; ``feltd bench engine``):
    players are list indices in deal order; seat rings and each table's deal order are
    precomputed; the largest bet and the number of players still in are kept up to date instead
    of recomputed; hole cards and the board are read from the deck when needed; who acted since
    the betting was last reopened is read from the round's log rather than kept per action; the
    hot paths check their common case inline and leave every refusal (and its message) to the
    verify-methods; and the log is compact: an action's ``ActionTaken`` is built at once (the
    do-method returns it) but every other event is kept as a tuple of its constructor and
    arguments, built when ``events`` is first read and kept.
    """

    __slots__ = (
        "_actors",
        "_bet_size",
        "_bets",
        "_board",
        "_board_len",
        "_built",
        "_built_upto",
        "_commitment",
        "_contributions",
        "_current",
        "_dead_broke",
        "_dead_money",
        "_deck",
        "_face_up",
        "_hole_count",
        "_in",
        "_index",
        "_kills",
        "_last_opener",
        "_limit_level",
        "_live",
        "_log",
        "_n",
        "_order",
        "_over",
        "_raise_cap",
        "_raise_count",
        "_raise_size",
        "_reopened_at",
        "_salt",
        "_setup",
        "_stacks",
        "_starting",
        "_street",
        "_street_no",
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
        seats = setup.seats
        order, k, index = _seating(setup.validated_seat_numbers(), setup.button)
        n = len(order)
        hole_count = 2 if setup.game is _HOLDEM else 4
        size = n * hole_count + 8
        source: random.Random | None = rng
        if deck is None:
            source = source if source is not None else secrets.SystemRandom()
            # Our own shuffle of the full deck: nothing to check in it.
            deck = tuple(shuffled_deck(source))
        else:
            try:
                # The checked bytes give the cards back as plain ints, whatever int-like came in.
                deck = tuple(check_deck(deck, _NO_SALT))
            except FairnessError as error:
                raise HandSetupError(str(error)) from None
        if salt is None:
            source = source if source is not None else secrets.SystemRandom()
            salt = source.randbytes(SALT_BYTES)
        elif not isinstance(salt, bytes) or len(salt) != SALT_BYTES:
            raise HandSetupError(str(FairnessError(f"the salt is {SALT_BYTES} bytes, got {salt!r}")))
        if len(deck) < size:
            raise HandSetupError(
                f"{len(setup.seats)} players of {setup.game} use {size} cards; the deck has {len(deck)}"
            )
        self._setup = setup
        self._deck: tuple[Card, ...] = deck
        self._salt = salt
        # sha256 of the deck and salt (engine.fairness.digest), computed when first read: the
        # deck and salt never change, so it is the same value whenever it is read, and a hand
        # nobody reads the events of (a simulation) does not pay for it.
        self._commitment: str | None = None
        # Players are kept in deal order: index 0 is the first seat left of the button, so the
        # lowest index among tied winners gets the odd chips (BET-3).
        self._order = order
        self._n = n
        self._index = index
        starting = tuple(map(_STACK_OF, seats[k:] + seats[:k]))
        self._starting: tuple[int, ...] = starting
        self._stacks: list[int] = list(starting)
        self._bets: list[int] = [0] * n
        self._current = 0  # the bet to call this street: max(self._bets), preflop at least the big blind
        self._contributions: list[int] = [0] * n  # collected into the pots, excluding dead money
        self._dead_money = 0  # the big blind ante: main-pot money nobody matches
        self._in: list[bool] = [True] * n  # not folded
        self._live = n  # players who have not folded
        self._kills = 0  # hands killed (PEN-1)
        self._dead_broke = 0  # killed players with no chips left: the only folded zero stacks
        self._hole_count = hole_count  # see _hole_of
        self._board: tuple[Card, ...] = ()  # all five board cards, taken from the deck at the flop
        self._board_len = 0  # how many of them are dealt
        self._street = _PREFLOP
        self._street_no = 0
        self._actors: deque[int] = deque()
        self._reopened_at = 0  # see _has_acted
        self._raise_size = 0  # the last raise that counted as full (BET-2, see _bet_2)
        self._raise_count = 0  # fixed limit: the bets and raises that count toward the cap
        self._limit_level = 0  # fixed limit: the total of the last bet or raise that counted
        self._raise_cap: int | None = (
            None if setup.limit is not _FIXED_LIMIT else max_raises(setup.limit, _PREFLOP)
        )
        self._bet_size = setup.big_blind  # street_bet_size preflop, in every limit
        self._last_opener = 0
        self._face_up = False
        self._over = False
        # The compact log: built events, or (constructor, *arguments) tuples built on demand.
        self._log: list[Any] = [_STARTED]
        self._built: list[HandEvent] = []
        self._built_upto = 0
        self._post_forced_bets()
        self._log.append(_HOLES)
        if setup.killed:
            for seat in order:
                if seat in setup.killed:
                    self._kill(index[seat], KillReason.PENALTY)
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
        return self._board[: self._board_len]

    def _by_seat(self, values: Sequence[int]) -> dict[int, int]:
        """Seat -> value for ``values`` in deal order, in ascending seat order: deal order is the
        seats rotated so that the first after the button comes first; rotate them back."""
        seats = self._order
        lowest = seats.index(min(seats))
        return dict(zip(seats[lowest:] + seats[:lowest], [*values[lowest:], *values[:lowest]], strict=True))

    @property
    def stacks(self) -> dict[int, int]:
        """Seat -> chips behind (not counting chips bet this street), ascending seat order."""
        return self._by_seat(self._stacks)

    @property
    def bets(self) -> dict[int, int]:
        """Seat -> chips bet on the current street and not yet collected."""
        return self._by_seat(self._bets)

    @property
    def starting_stacks(self) -> dict[int, int]:
        return self._by_seat(self._starting)

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
        return not self._in[self._seat_index(seat)]

    def is_absent(self, seat: int) -> bool:
        """Whether the table marked ``seat`` absent for this hand (CLK-1)."""
        return any(entry.absent for entry in self._setup.seats if entry.seat == seat)

    def hole_cards(self, seat: int) -> tuple[Card, ...]:
        """The hole cards of ``seat`` (private: only for that seat, the operator, or a showdown)."""
        return self._hole_of(self._seat_index(seat))

    @property
    def events(self) -> list[HandEvent]:
        """The full log so far, operator events included (filter with ``visible_to``), as a new
        list. A consumer that follows the hand as it goes asks ``events_since`` instead.

        Events the engine logged compactly are built here, once: later reads return the same
        objects."""
        return list(self._built_events())

    def events_since(self, position: int) -> tuple[tuple[HandEvent, ...], int]:
        """The events logged after the first ``position`` ones, and the position to pass next
        time: passing back the position it was given, a consumer receives every event once and
        in order (``events_since(0)`` is the whole log so far). Only the new events are built
        and copied, whatever the length of the log, so the table actor can forward what each
        action brought at the cost of what it brought. The events are the very objects that
        ``events`` returns; operator and private events included (filter with ``visible_to``).
        Raises ``InvalidEventPosition`` for a position that is not an int from 0 to the number
        of events logged."""
        built = self._built_events()
        if type(position) is not int or not 0 <= position <= len(built):
            raise InvalidEventPosition(
                f"hand {self.hand_id} has logged {len(built)} events: a position is an int from 0 to"
                f" {len(built)}, got {position!r}"
            )
        return tuple(built[position:]), len(built)

    def _built_events(self) -> list[HandEvent]:
        """The log with every compact entry built (see ``events``); the list itself, not a copy."""
        log = self._log
        if self._built_upto < len(log):
            built = self._built
            for entry in log[self._built_upto :]:
                if type(entry) is not tuple:
                    built.append(entry)
                elif entry is _STARTED:
                    built.append(HandStarted(self._setup, self.commitment))
                    built.append(DeckSealed(self._deck, self._salt))
                elif entry is _HOLES:
                    built.extend(
                        HoleCardsDealt(seat, cards)
                        for seat, cards in zip(self._order, self._holes(), strict=True)
                    )
                elif entry is _FINISHED:
                    built.append(DeckRevealed(self._deck, self._salt, self.commitment))
                    built.append(HandEnded(tuple(self.stacks.items())))
                else:
                    built.append(entry[0](*entry[1:]))
            self._built_upto = len(log)
        return self._built

    @property
    def commitment(self) -> str:
        """sha256(bytes(deck) + salt) as hex (engine.fairness.commit), published before the deal."""
        commitment = self._commitment
        if commitment is None:
            commitment = self._commitment = sha256(bytes(self._deck) + self._salt).hexdigest()
        return commitment

    @property
    def deck(self) -> tuple[Card, ...]:
        """The deck order. Operator and history use only: never send it before the hand ends."""
        return self._deck

    @property
    def salt(self) -> bytes:
        """The commitment salt. Operator and history use only, like ``deck``."""
        return self._salt

    def turn(self) -> LegalActions | None:
        """Who must act and what they may do, as one value (the seat, whether they may fold or
        check, what a call puts in, the least and most a bet or raise may reach); ``None`` once
        the hand is over. The table actor asks after every action and starts the clock for the
        seat it names (``engine.clock.start_turn``)."""
        return self.legal_actions() if self._actors else None

    def legal_actions(self) -> LegalActions:
        """What the player to act may do; raises ``HandOver`` when nobody can act."""
        if not self._actors:
            raise HandOver(f"hand {self.hand_id} is over; no more actions")
        i = self._actors[0]
        stack = self._stacks[i]
        call = self._current - self._bets[i]
        if call > stack:
            call = stack
        if self._may_raise(i):
            low, high = self._raise_bounds(i)
            return _new_legal_actions(self._order[i], call > 0, call == 0, call, low, high)
        return _new_legal_actions(self._order[i], call > 0, call == 0, call, None, None)

    # ------------------------------------------------------------------ fold

    def verify_fold(self, *, seat: int | None = None) -> None:
        """Raise ``HandOver``, ``NotYourTurn`` (when ``seat`` is given and not the actor) or
        ``NoBetToFold`` (nothing to call: check instead)."""
        i = self._require_actor(seat)
        if not self._call_amount(i):
            raise NoBetToFold(f"seat {self._order[i]} faces no bet: check instead of folding")

    can_fold = can(verify_fold, HandError)

    def fold(self, *, seat: int | None = None) -> ActionTaken:
        """Fold the actor's hand (only when facing a bet)."""
        actors = self._actors
        if not actors or (seat is not None and seat != self._order[actors[0]]):
            self._require_actor(seat)  # raises the reason
        i = actors[0]
        bet = self._bets[i]
        if bet >= self._current or not self._stacks[i]:
            raise NoBetToFold(f"seat {self._order[i]} faces no bet: check instead of folding")
        # The body of _fold, inlined: this is the hot path of every simulation.
        actors.popleft()
        self._in[i] = False
        live = self._live - 1
        self._live = live
        # new_action_taken, inlined (see engine.events).
        event: ActionTaken = _new_tuple(
            ActionTaken, (self._order[i], self._street, _FOLD, 0, bet, False, False)
        )
        self._log.append(event)
        if live <= 1 or not actors:
            self._end_round()
        return event

    # ------------------------------------------------------------------ check / call

    def verify_check_or_call(self, *, seat: int | None = None) -> None:
        self._require_actor(seat)

    can_check_or_call = can(verify_check_or_call, HandError)

    def check_or_call(self, *, seat: int | None = None) -> ActionTaken:
        """Check, or call the current bet (all-in when the stack is shorter than the call)."""
        actors = self._actors
        if not actors or (seat is not None and seat != self._order[actors[0]]):
            self._require_actor(seat)  # raises the reason
        # The body of _check_or_call, inlined: this is the hot path of every simulation.
        i = actors.popleft()
        stacks = self._stacks
        stack = stacks[i]
        bet = self._bets[i]
        amount = self._current - bet
        if amount > stack:
            amount = stack
        if amount:
            bet += amount
            stack -= amount
            self._bets[i] = bet
            stacks[i] = stack
            kind = _CALL
        else:
            kind = _CHECK
        # new_action_taken, inlined (see engine.events).
        event: ActionTaken = _new_tuple(
            ActionTaken, (self._order[i], self._street, kind, amount, bet, not stack, False)
        )
        self._log.append(event)
        if self._live <= 1 or not actors:
            self._end_round()
        return event

    def verify_check(self, *, seat: int | None = None) -> None:
        """As ``verify_check_or_call``, and raise ``FacingBet`` when there is a bet to call."""
        i = self._require_actor(seat)
        call = self._call_amount(i)
        if call:
            raise FacingBet(
                f"seat {self._order[i]} faces a bet ({call} to call): call, raise or fold, not check"
            )

    can_check = can(verify_check, HandError)

    def check(self, *, seat: int | None = None) -> ActionTaken:
        self.verify_check(seat=seat)
        return self._check_or_call(timed_out=False)

    def verify_call(self, *, seat: int | None = None) -> None:
        """As ``verify_check_or_call``, and raise ``NothingToCall`` when there is no bet."""
        i = self._require_actor(seat)
        if not self._call_amount(i):
            raise NothingToCall(f"seat {self._order[i]} faces no bet: check (or bet) instead of calling")

    can_call = can(verify_call, HandError)

    def call(self, *, seat: int | None = None) -> ActionTaken:
        self.verify_call(seat=seat)
        return self._check_or_call(timed_out=False)

    # ------------------------------------------------------------------ bet / raise

    def verify_bet_or_raise_to(self, amount: int, *, seat: int | None = None) -> None:
        """Raise why the actor may not make their street bet total ``amount``: ``InvalidAmount``,
        a ``RaiseNotAllowed`` subclass, ``RaiseTooSmall`` or ``RaiseTooLarge``."""
        i = self._require_actor(seat)
        if type(amount) is not int and (not isinstance(amount, int) or isinstance(amount, bool)):
            raise InvalidAmount(f"a bet is a whole number of chips, got {amount!r}")
        # The plain rule decides here; the do-method and legal_actions use its fast path.
        reading = self._bet_2(i)
        refusal = self._raise_refusal(i, reading)
        if refusal is not None:
            raise refusal
        low, high = self._raise_bounds(i, reading.raise_from + reading.full_raise)
        if amount < low or amount > high:
            self._refuse_size(i, amount, low, high)

    def _refuse_size(self, i: int, amount: int, low: int, high: int) -> None:
        all_in = self._stacks[i] + self._bets[i]
        who = f"seat {self._order[i]}"
        if amount < low:
            raise RaiseTooSmall(
                f"{who} must bet or raise to at least {low}"
                + ("" if low == all_in else f" (or all-in to {all_in})")
                + f", got {amount}"
            )
        limit = self._setup.limit.name.lower().replace("_", " ")
        cap = "the stack" if high == all_in else f"the {limit} maximum"
        raise RaiseTooLarge(f"{who} may bet or raise to at most {high} ({cap}), got {amount}")

    can_bet_or_raise_to = can(verify_bet_or_raise_to, HandError)

    def bet_or_raise_to(self, amount: int, *, seat: int | None = None) -> ActionTaken:
        """Make the actor's total bet this street ``amount`` (a bet, or a raise over a bet)."""
        actors = self._actors
        if not actors or (seat is not None and seat != self._order[actors[0]]) or type(amount) is not int:
            self.verify_bet_or_raise_to(amount, seat=seat)  # raises, or accepts an int subclass
        i = actors[0]
        bets = self._bets
        stacks = self._stacks
        still_in = self._in
        current = self._current
        # verify_bet_or_raise_to's checks in their common case, inlined; whenever one fails (or
        # is not the common case) verify_bet_or_raise_to decides, and names the reason.
        bet = bets[i]
        all_in = stacks[i] + bet
        raise_size = self._raise_size
        bet_size = self._bet_size
        # A full raise: at least the minimum raise (the largest raise so far, at least the street's
        # bet size; preflop the big blind counts as the opening bet). BET-2.
        full = raise_size if raise_size > bet_size else bet_size
        to_call = current - bet
        cap = self._raise_cap
        accepted = (
            all_in > current
            and (cap is None or self._raise_count < cap)
            and to_call >= raise_size
            # Facing less than a full raise (the small blind's first action, say): allowed only
            # to a player who has not acted since the betting was last reopened (BET-2).
            and (to_call >= full or not to_call or not self._has_acted(i))
        )
        # Everyone else still in with chips acts again after a raise; one of them must be able
        # to answer it (a player without chips behind has a bet of at most ``current``).
        responders = [j for j in _AFTER[self._n][i] if still_in[j] and stacks[j]]
        if accepted:
            for j in responders:
                if stacks[j] + bets[j] > current:
                    break
            else:
                accepted = False  # nobody could answer the raise
        if accepted:
            if self._setup.limit is _NO_LIMIT:
                low = current + full
                accepted = (low if low < all_in else all_in) <= amount <= all_in
            else:
                low, high = self._raise_bounds(i)
                accepted = low <= amount <= high
        if not accepted:
            self.verify_bet_or_raise_to(amount, seat=seat)
        actors.popleft()
        raise_by = amount - current
        put_in = amount - bets[i]
        bets[i] = amount
        stack = stacks[i] - put_in
        stacks[i] = stack
        self._current = amount
        # Everyone else still in with chips acts again, from the raiser's left.
        self._actors = deque(responders)
        self._last_opener = i
        # _bet_2's fast path: a bet or raise that counts as full reopens the betting for everyone
        # (BET-2); an all-in for less reopens nothing (who acted before it may raise only if the
        # short all-ins since add up to a full raise for them, see _may_raise).
        if cap is None:
            if raise_by >= full or not current:
                self._reopened_at = len(self._log)  # the raiser's event comes next
                self._raise_size = raise_by
        elif 2 * (amount - self._limit_level) >= bet_size or not current:
            # Fixed limit: half a bet over the last bet or raise that counted is a full raise,
            # and counts toward the cap; less is a call plus chips.
            self._reopened_at = len(self._log)
            self._raise_size = raise_by
            self._raise_count += 1
            self._limit_level = amount
        # new_action_taken, inlined (see engine.events).
        kind = _RAISE if current else _BET
        event: ActionTaken = _new_tuple(
            ActionTaken, (self._order[i], self._street, kind, put_in, amount, not stack, False)
        )
        self._log.append(event)
        if self._live <= 1 or not responders:
            self._end_round()
        return event

    # ------------------------------------------------------------------ timeout

    def verify_timeout(self, *, seat: int | None = None) -> None:
        self._require_actor(seat)

    can_timeout = can(verify_timeout, HandError)

    def timeout(self, *, seat: int | None = None) -> ActionTaken:
        """The actor's time ran out (CLK-2): facing a bet the hand is folded, otherwise checked.
        Returns the fold or check, marked ``timed_out``."""
        i = self._require_actor(seat)
        if self._call_amount(i):
            return self._fold(timed_out=True)
        return self._check_or_call(timed_out=True)

    # ------------------------------------------------------------------ an action as a value

    def verify_act(self, action: Action, *, seat: int | None = None) -> None:
        """Raise why ``action`` (an ``engine.actions`` value) is refused: the reason its
        do-method's verify-method gives, or ``InvalidAction`` for anything else."""
        match action:
            case CheckOrCall():
                self.verify_check_or_call(seat=seat)
            case Fold():
                self.verify_fold(seat=seat)
            case BetOrRaiseTo(amount):
                self.verify_bet_or_raise_to(amount, seat=seat)
            case Check():
                self.verify_check(seat=seat)
            case Call():
                self.verify_call(seat=seat)
            case Timeout():
                self.verify_timeout(seat=seat)
            case _:
                raise _invalid_action(action)

    can_act = can(verify_act, HandError)

    def act(self, action: Action, *, seat: int | None = None) -> ActionTaken:
        """Play ``action`` for the player to act (``seat``, when given, must be theirs) through its
        do-method, and return the ``ActionTaken`` it logged. Refused exactly as ``verify_act``
        says, changing nothing."""
        match action:
            case CheckOrCall():
                return self.check_or_call(seat=seat)
            case Fold():
                return self.fold(seat=seat)
            case BetOrRaiseTo(amount):
                return self.bet_or_raise_to(amount, seat=seat)
            case Check():
                return self.check(seat=seat)
            case Call():
                return self.call(seat=seat)
            case Timeout():
                return self.timeout(seat=seat)
            case _:
                raise _invalid_action(action)

    # ------------------------------------------------------------------ kill (PEN-1)

    def verify_kill(self, seat: int) -> None:
        """Raise ``HandOver`` once the hand is over, ``HandError`` for a seat not dealt in and
        ``NotInHand`` for a hand already folded or killed. Any seat still in may be killed, at
        any moment, whoever's turn it is."""
        if self._over:
            raise HandOver(f"hand {self.hand_id} is over; no hand to kill")
        i = self._seat_index(seat)
        if not self._in[i]:
            raise NotInHand(f"seat {seat} has already folded or been killed in hand {self.hand_id}")

    can_kill = can(verify_kill, HandError)

    def kill(self, seat: int, reason: KillReason = KillReason.RULING) -> HandKilled:
        """An operator kills ``seat``'s hand (PEN-1): it is folded at once, its chips stay in the
        middle as dead money and its cards are never shown. If it was the seat's turn the action
        moves on; the round ends if nobody is left to act, and the hand if one player is left.
        Returns the ``HandKilled`` event it logged."""
        self.verify_kill(seat)
        i = self._index[seat]
        event = self._kill(i, reason)
        actors = self._actors
        if i in actors:
            actors.remove(i)
            if not actors:
                self._end_round()
                return event
        if self._live <= 1:
            self._end_round()
        return event

    def _kill(self, i: int, reason: KillReason) -> HandKilled:
        self._kills += 1
        self._in[i] = False
        self._live -= 1
        if not self._stacks[i]:
            self._dead_broke += 1
        # A built event (not a compact tuple): _has_acted reads ``seat`` from this round's log.
        event = HandKilled(self._order[i], self._street, reason)
        self._log.append(event)
        return event

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

    def _call_amount(self, i: int) -> int:
        return min(self._stacks[i], self._current - self._bets[i])

    def _may_raise(self, i: int) -> bool:
        """``_raise_refusal(i) is None``, without building the refusal."""
        current = self._current
        bets = self._bets
        stacks = self._stacks
        to_call = current - bets[i]
        # BET-2 (TDA Rule 43): a player who acted since the last full raise may raise again only
        # facing at least a full raise (short all-ins since then add up). Only such a player can
        # face less than _raise_size, the last full raise, so that needs no look at the log; with
        # to_call >= _raise_size, "less than a full raise" is "less than the street's bet size".
        # Checking (to_call == 0) or facing a full raise, the common cases, never read the log.
        if stacks[i] <= to_call or to_call < self._raise_size:
            return False
        if 0 < to_call < self._bet_size and self._has_acted(i):
            return False
        cap = self._raise_cap
        if cap is not None and self._raise_count >= cap:
            return False
        still_in = self._in
        # A loop rather than any(): no generator to set up on this hot path.
        for j in _AFTER[self._n][i]:
            if still_in[j] and stacks[j] + bets[j] > current:
                break
        else:
            return False
        return True

    def _raise_refusal(self, i: int, reading: _Bet2) -> RaiseNotAllowed | None:
        """Why player ``i`` may not bet or raise now (``None``: they may), from the plain rule's
        ``reading`` of the round (``_bet_2``)."""
        current = self._current
        bets = self._bets
        stacks = self._stacks
        to_call = current - bets[i]
        # Any one of these checks refuses, so their order only decides which reason is reported.
        if stacks[i] <= to_call:
            return CannotRaiseAllIn(
                f"seat {self._order[i]} has {stacks[i]} chips, not more than the {to_call} to call"
            )
        street = self._street
        cap = max_raises(self._setup.limit, street)
        if cap is not None and reading.counted >= cap:
            opening = "the big blind" if street is _PREFLOP else "a bet"
            raises = cap - (0 if street is _PREFLOP else 1)
            return RaiseCapReached(f"the {street} already had {opening} and {raises} raises: call or fold")
        if not reading.reopened:
            full = (
                f"half a bet of {reading.full_raise}"
                if self._setup.limit is _FIXED_LIMIT
                else f"a full raise of {reading.full_raise}"
            )
            return BettingNotReopened(
                f"seat {self._order[i]} already acted and faces {to_call} more, less than {full}:"
                " call or fold"
            )
        still_in = self._in
        for j in _AFTER[self._n][i]:
            if still_in[j] and stacks[j] + bets[j] > current:
                return None
        return NobodyToRaise(
            f"every other player still in is all-in: seat {self._order[i]} may only call or fold"
        )

    def _bet_2(self, i: int) -> _Bet2:
        """BET-2, the plain rule, read from this round's actions alone: which bets and raises
        count as full (they reopen the betting, and count toward the fixed-limit cap), what the
        next full raise is, and whether the betting is open to player ``i``.

        A bet or raise counts as full when it opens the round (after the flop a check is not
        action on a wager; preflop the big blind is the opening bet), or when it raises by at
        least a full raise: in no limit and pot limit the largest raise of the round, at least
        the street's bet size; in fixed limit half a bet over the last bet or raise that counted
        (less is a call plus chips). It reopens the betting: whoever acted before it may raise
        again. Player ``i`` may raise, as far as BET-2 goes, when they have not acted since the
        last bet or raise that counted, or when what they face counts as a full raise (several
        short all-ins adding up).

        The hot paths do not call this: they keep its answers up to date as the actions come
        (``_raise_size``, ``_reopened_at``, ``_raise_count``, ``_limit_level``, read by
        ``_may_raise`` and ``_raise_bounds``). The verify-method calls it, and
        tests/test_hand_rules.py checks on random hands that the two always agree."""
        setup = self._setup
        fixed = setup.limit is _FIXED_LIMIT
        street = self._street
        bet_size = street_bet_size(setup.limit, street, setup.big_blind)
        current = self._preflop_bet() if street is _PREFLOP else 0
        level = current  # the total of the last bet or raise that counted
        full = bet_size  # the least a full raise adds (no limit and pot limit)
        counted = 0
        acted: set[int] = set()  # seats that acted since the last bet or raise that counted
        for entry in self._log:
            if type(entry) is not ActionTaken or entry.street is not street:
                continue
            if entry.kind is _BET or entry.kind is _RAISE:
                amount = entry.to_amount
                if not current:
                    counts = True
                elif fixed:
                    counts = 2 * (amount - level) >= bet_size
                else:
                    counts = amount - current >= full
                if counts:
                    if not fixed and amount - current > full:
                        full = amount - current
                    level = amount
                    counted += 1
                    acted.clear()
                current = amount
            acted.add(entry.seat)
        to_call = current - self._bets[i]
        if self._order[i] not in acted:
            reopened = True
        elif fixed:
            reopened = 2 * to_call >= bet_size
        else:
            reopened = to_call >= full
        # A fixed-limit raise is a full bet over the last bet or raise that counted (so over a
        # call plus chips it completes that bet); otherwise the raise is over the bet to call.
        return _Bet2(reopened, bet_size if fixed else full, level if fixed else current, counted)

    def _preflop_bet(self) -> int:
        """The bet to call once the blinds are posted (see ``_amount_to_call_preflop``), read from
        the blinds logged."""
        log = self._log
        posted = {entry[2]: entry[3] for entry in log if type(entry) is tuple and entry[0] is BlindPosted}
        top = max(posted.values(), default=0)
        return max(top, self._setup.big_blind) if _BIG in posted else top

    def _has_acted(self, i: int) -> bool:
        """Whether player ``i`` acted since the betting was last reopened: the round began or a
        full raise was made (the raiser counts). Read from the log, which holds only this
        round's actions from ``_reopened_at`` on, so the hot paths need not keep a set."""
        seat = self._order[i]
        return any(event.seat == seat for event in self._log[self._reopened_at :])

    def _raise_bounds(self, i: int, full_to: int | None = None) -> tuple[int, int]:
        """The least and most player ``i`` may bet or raise to, a full raise being to ``full_to``:
        at least that (or all-in for less), and at most the limit's maximum or the stack. The
        verify-method passes the plain rule's ``full_to`` (``_bet_2``); the hot paths leave it out,
        and it comes from the state they keep."""
        limit = self._setup.limit
        if full_to is None:
            size = self._raise_size if self._raise_size > self._bet_size else self._bet_size
            full_to = (self._limit_level if limit is _FIXED_LIMIT else self._current) + size
        all_in = self._stacks[i] + self._bets[i]
        low = full_to if full_to < all_in else all_in
        if limit is _NO_LIMIT:
            return low, all_in
        if limit is _FIXED_LIMIT:
            return low, low
        # Pot limit: the pot after calling, added on top of the call.
        return low, min(all_in, max(low, 2 * self._current - self._bets[i] + self.pot_total))

    def _fold(self, *, timed_out: bool) -> ActionTaken:
        i = self._actors.popleft()
        self._in[i] = False
        self._live -= 1
        event = new_action_taken(self._order[i], self._street, _FOLD, 0, self._bets[i], False, timed_out)
        self._log.append(event)
        if self._live <= 1 or not self._actors:
            self._end_round()
        return event

    def _check_or_call(self, *, timed_out: bool) -> ActionTaken:
        i = self._actors.popleft()
        stacks = self._stacks
        stack = stacks[i]
        bet = self._bets[i]
        amount = self._current - bet
        if amount > stack:
            amount = stack
        if amount:
            bet += amount
            stack -= amount
            self._bets[i] = bet
            stacks[i] = stack
            event = new_action_taken(self._order[i], self._street, _CALL, amount, bet, not stack, timed_out)
        else:
            event = new_action_taken(self._order[i], self._street, _CHECK, 0, bet, not stack, timed_out)
        self._log.append(event)
        if self._live <= 1 or not self._actors:
            self._end_round()
        return event

    # ------------------------------------------------------------------ internals: flow

    def _post_forced_bets(self) -> None:
        setup = self._setup
        stacks = self._stacks
        bets = self._bets
        log = self._log
        order = self._order
        index = self._index
        big = index[setup.big_blind_seat]
        if setup.ante_kind is _NO_ANTE:
            if setup.small_blind_seat is not None:
                small = index[setup.small_blind_seat]
                amount = min(setup.small_blind, stacks[small])
                if amount:
                    stacks[small] -= amount
                    bets[small] = amount
                    log.append((BlindPosted, order[small], _SMALL, amount, not stacks[small]))
            big_blind = setup.big_blind
            amount = min(big_blind, stacks[big])
            if amount:
                stacks[big] -= amount
                bets[big] = amount
                log.append((BlindPosted, order[big], _BIG, amount, not stacks[big]))
            # A full big blind is the bet to call (the small blind is never larger); otherwise
            # _amount_to_call_preflop works it out.
            self._current = big_blind if amount == big_blind else self._amount_to_call_preflop()
            return
        n = self._n
        left = list(stacks)  # what each player still has while the forced bets are worked out
        antes = [0] * n
        if setup.ante_kind is _EACH_ANTE:
            for i in range(n):
                antes[i] = min(setup.ante, left[i])
                left[i] -= antes[i]
        blinds: list[tuple[int, BlindKind, int]] = []
        if setup.small_blind_seat is not None:
            small = index[setup.small_blind_seat]
            blinds.append((small, _SMALL, min(setup.small_blind, left[small])))
            left[small] -= blinds[-1][2]
        blinds.append((big, _BIG, min(setup.big_blind, left[big])))
        left[big] -= blinds[-1][2]
        if setup.ante_kind is _BIG_BLIND_ANTE:
            # A short big blind pays the blind first, then the ante with what is left (TDA RP-11).
            antes[big] = min(setup.ante, left[big])
            left[big] -= antes[big]
        # Antes are announced first; an ante is the all-in posting only if no blind follows it.
        blind_seats = {i for i, _, amount in blinds if amount}
        for i in range(n):
            if antes[i]:
                stacks[i] -= antes[i]
                all_in = stacks[i] == 0 and i not in blind_seats
                log.append((AntePosted, order[i], antes[i], all_in))
        if setup.ante_kind is _EACH_ANTE:
            # Per-player antes are contributions like any other: they form side pots, and an ante
            # nobody could match in full is partly returned, as pokerkit's ante trimming does.
            self._contributions = antes
            self._return_uncalled(self._contributions)
        else:
            self._dead_money = sum(antes)
        for i, kind, amount in blinds:
            if amount:
                stacks[i] -= amount
                bets[i] += amount
                log.append((BlindPosted, order[i], kind, amount, stacks[i] == 0))
        self._current = self._amount_to_call_preflop()

    def _amount_to_call_preflop(self) -> int:
        """The bet to call once the blinds are posted: the largest blind posted, and never less
        than the level's big blind when the big blind posted one. A blind all-in for less than a
        full blind does not lower what the others must call (TDA, Robert's Rules); the part of
        their calls above that blind's post forms a side pot, or is returned when nobody matches
        it (BET-3). A big blind left with nothing after its ante posts no blind at all: then the
        largest blind posted is the bet (otherwise players who could have checked could fold,
        leaving their antes above every all-in player's, where nobody could win them)."""
        bets = self._bets
        top = max(bets)
        big_blind = self._setup.big_blind
        if top >= big_blind or not bets[self._index[self._setup.big_blind_seat]]:
            return top
        return big_blind

    def _return_uncalled(self, amounts: list[int]) -> None:
        """Give back the part of the largest amount in ``amounts`` that nobody else matched."""
        if len(amounts) < 2:
            return
        top = max(amounts)
        if amounts.count(top) > 1:
            return  # matched
        cutoff = sorted(amounts)[-2]
        i = amounts.index(top)
        excess = top - cutoff
        amounts[i] = cutoff
        self._stacks[i] += excess
        self._log.append((UncalledBetReturned, self._order[i], excess))

    def _hole_of(self, i: int) -> tuple[Card, ...]:
        """Player i's hole cards. The deal order of engine.fairness puts card r of player i at
        deck position r * n + i."""
        n = self._n
        return self._deck[i : i + self._hole_count * n : n]

    def _holes(self) -> tuple[tuple[Card, ...], ...]:
        return tuple(self._hole_of(i) for i in range(self._n))

    def _begin_round(self) -> None:
        n = self._n
        bets = self._bets
        stacks = self._stacks
        still_in = self._in
        if self._street_no:
            opener = 0
            # A player acts only with chips behind and something to play for: another player still
            # in with chips (no bets yet on this street). Zero stacks are all-in players still in
            # (see _end_round).
            with_chips = self._live - stacks.count(0) + self._dead_broke
            if with_chips <= 1:
                actors: deque[int] = deque()
            elif with_chips == self._live:
                actors = deque(compress(_RANGES[n], still_in))  # nobody all-in: everyone still in
            else:
                actors = deque([j for j in _RINGS[n][0] if still_in[j] and stacks[j]])
        elif self._live < n:
            # Hands killed at the deal (PEN-1): as below, among the live players only.
            opener = (self._index[self._setup.big_blind_seat] + 1) % n
            live_totals = sorted([bets[j] + stacks[j] for j in range(n) if still_in[j]])
            second = live_totals[-2] if len(live_totals) > 1 else 0
            actors = deque([j for j in _RINGS[n][opener] if still_in[j] and stacks[j] and second > bets[j]])
        else:
            opener = (self._index[self._setup.big_blind_seat] + 1) % n
            # As above, with the blinds: the second largest total (bet + chips behind) must exceed
            # the player's bet. Nobody has folded yet.
            # Without antes, everyone's total is still their starting stack.
            totals = self._starting if self._setup.ante_kind is _NO_ANTE else map(add, bets, stacks)
            second = sorted(totals)[-2]
            if 0 not in stacks and max(bets) < second:
                actors = deque(_RINGS[n][opener])  # the common case, without a loop: everyone acts
            else:
                actors = deque([j for j in _RINGS[n][opener] if stacks[j] and second > bets[j]])
        self._last_opener = opener
        self._actors = actors
        self._reopened_at = len(self._log)
        self._raise_size = 0
        self._raise_count = 0
        self._limit_level = self._current  # fixed limit: preflop the big blind is the bet
        if not actors or self._live <= 1 or (len(actors) == 1 and bets[actors[0]] >= self._current):
            self._end_round()

    def _end_round(self) -> None:
        self._actors.clear()
        live = self._live
        # A folded player always has chips (only a player with chips acts, and a fold moves
        # none), so the zero stacks are the players still in who are all-in, apart from the
        # killed hands that posted all their chips (PEN-1), counted in _dead_broke.
        runout = live > 1 and live - self._stacks.count(0) + self._dead_broke <= 1
        current = self._current
        if current:
            bets = self._bets
            matched = bets.count(current)
            if not matched:
                # Preflop, a short big blind: nobody put in the full blind everyone had to call.
                self._return_above_short_blind()
            elif matched == 1:
                # Nobody matched the largest bet: the part above the second largest goes back
                # (not to a killed hand: its chips are dead money, PEN-1).
                i = bets.index(current)
                if self._in[i]:
                    bets[i] = 0
                    cutoff = max(bets)
                    bets[i] = cutoff
                    self._stacks[i] += current - cutoff
                    self._log.append((UncalledBetReturned, self._order[i], current - cutoff))
            if self._street_no or self._setup.ante_kind is _EACH_ANTE:
                self._contributions = list(map(add, self._contributions, bets))
            else:
                # The first collection, with nothing collected before (only per-player antes
                # are): the bets are the contributions, and the list is no longer the bets.
                self._contributions = bets
            self._bets = [0] * self._n
            self._current = 0
        if live == 1:
            self._award_uncontested(self._in.index(True))
            return
        if runout:
            contenders = list(compress(_RANGES[self._n], self._in))
            if not self._face_up:
                self._show_all(contenders)
            while self._street_no < 3:
                self._deal_next_street()
            self._showdown(contenders)
            return
        if self._street_no == 3:
            self._showdown(list(compress(_RANGES[self._n], self._in)))
            return
        self._deal_next_street()
        self._begin_round()

    def _return_above_short_blind(self) -> None:
        """End of a preflop round where nobody put in the full big blind everyone had to call
        (_amount_to_call_preflop): the part of the largest bet above the second largest goes
        back, as any uncalled bet (BET-3). Here it may belong to a small blind that folded
        facing the full blind: nobody still in put in as much, so nobody could win that part.
        Only a killed hand's chips stay in the middle (PEN-1)."""
        bets = self._bets
        top = max(bets)
        if bets.count(top) > 1:
            return
        i = bets.index(top)
        seat = self._order[i]
        if not self._in[i] and any(type(e) is HandKilled and e.seat == seat for e in self._log):
            return
        bets[i] = 0
        cutoff = max(bets)
        bets[i] = cutoff
        self._stacks[i] += top - cutoff
        self._log.append((UncalledBetReturned, seat, top - cutoff))

    def _deal_next_street(self) -> None:
        number = self._street_no + 1
        self._street_no = number
        street = STREETS[number]
        self._street = street
        if number == 1:
            # After the hole cards: a burn and the flop, a burn and the turn, a burn and the river.
            d = self._deck
            b = self._n * self._hole_count
            self._board = (d[b + 1], d[b + 2], d[b + 3], d[b + 5], d[b + 7])
        self._board_len = _BOARD_LENGTHS[number]
        self._log.append((_street_dealt, street, self._board, number))
        limit = self._setup.limit
        if limit is _FIXED_LIMIT:
            self._raise_cap = max_raises(limit, street)
            self._bet_size = street_bet_size(limit, street, self._setup.big_blind)

    def _show_all(self, contenders: list[int]) -> None:
        self._face_up = True
        self._log.append((_shown_hands, self._order, self._deck, self._hole_count, contenders))

    def _showdown(self, contenders: list[int]) -> None:
        n = self._n
        stacks = self._stacks
        values: dict[int, int] = {}
        if self._hole_count == 2:
            d = self._deck
            b0, b1, b2, b3, b4 = self._board
            for i in contenders:
                values[i] = evaluate7(d[i], d[i + n], b0, b1, b2, b3, b4)
        else:
            for i in contenders:
                values[i] = evaluate_omaha(self._hole_of(i), self._board)
        contributions = self._contributions
        top = max(contributions)
        if min(map(contributions.__getitem__, contenders)) == top:
            # Everyone still in put in the same, and nobody more: one pot (as pot_levels says).
            pots = [(sum(contributions) + self._dead_money, tuple(contenders))]
        elif self._kills and top > max(map(contributions.__getitem__, contenders)):
            pots = self._pots_with_dead_excess(contenders)
        else:
            pots = pot_levels(contributions, contenders, self._dead_money)
        # The zero stacks are players still in who are all-in (see _end_round).
        if not self._face_up and 0 in stacks and stacks.count(0) > self._dead_broke:
            # An all-in player is still in: every hand is tabled, nobody mucks (BET-4).
            self._show_all(contenders)
        log = self._log
        order = self._order
        shown: Collection[int]
        if self._face_up:
            shown = contenders
        else:
            shown = set()
            still_in = self._in
            # The last aggressor of the last round shows first, else the first left of the button.
            for i in _RINGS[n][self._last_opener]:
                if not still_in[i]:
                    continue
                if self._can_still_win(i, pots, shown, values):
                    shown.add(i)
                    log.append((_cards_shown, order[i], self._hole_of(i), values[i]))
                else:
                    log.append((CardsMucked, order[i]))
        value_of = values.__getitem__
        face_up = self._face_up
        index = 0
        count = len(pots)
        while index < count:
            amount, eligible = pots[index]
            if face_up:
                ranked = list(map(value_of, eligible))
                best = max(ranked)
                if ranked.count(best) == 1:  # the common case: one winner
                    winner = eligible[ranked.index(best)]
                    stacks[winner] += amount
                    log.append((_pot_awarded, order, index, amount, eligible, (winner,), (amount,), best))
                    index += 1
                    continue
            winners = self._pot_winners(eligible, values, shown)
            # The same players tying for consecutive pots share their sum (BET-3, engine.pots).
            end = index + 1
            while end < count and self._pot_winners(pots[end][1], values, shown) == winners:
                end += 1
            group = pots[index:end]
            best = values[winners[0]]
            split = split_pots([a for a, _ in group], winners)
            for (amount, eligible), shares in zip(group, split, strict=True):
                for i, share in zip(winners, shares, strict=True):
                    stacks[i] += share
                log.append((_pot_awarded, order, index, amount, eligible, winners, shares, best))
                index += 1
        self._contributions = [0] * n
        self._dead_money = 0
        self._finish()

    def _pot_winners(
        self, eligible: tuple[int, ...], values: Mapping[int, int], shown: Collection[int]
    ) -> tuple[int, ...]:
        """Who wins a pot: the best of the hands shown among ``eligible`` (all of them face up)."""
        if self._face_up:
            best = max([values[i] for i in eligible])
            return tuple([i for i in eligible if values[i] == best])
        best = max([values[i] for i in eligible if i in shown])
        return tuple([i for i in eligible if i in shown and values[i] == best])

    def _pots_with_dead_excess(self, contenders: list[int]) -> list[tuple[int, tuple[int, ...]]]:
        """The pots when a killed hand put in more than every player still in (PEN-1): its chips
        are never returned, so the part above the highest contender goes to the last pot."""
        contributions = self._contributions
        top = max(map(contributions.__getitem__, contenders))
        capped = [c if c < top else top for c in contributions]
        excess = sum(contributions) - sum(capped)
        pots = pot_levels(capped, contenders, self._dead_money)
        amount, eligible = pots[-1]
        pots[-1] = (amount + excess, eligible)
        return pots

    @staticmethod
    def _can_still_win(
        i: int, pots: Sequence[tuple[int, tuple[int, ...]]], shown: Collection[int], values: Mapping[int, int]
    ) -> bool:
        for _, eligible in pots:
            if i not in eligible:
                continue
            rivals = [values[j] for j in eligible if j in shown]
            if not rivals or values[i] >= max(rivals):
                return True
        return False

    def _award_uncontested(self, winner: int) -> None:
        amount = sum(self._contributions) + self._dead_money
        self._stacks[winner] += amount
        self._contributions = [0] * self._n
        self._dead_money = 0
        self._log.append((_pot_awarded, self._order, 0, amount, (winner,), (winner,), (amount,), None))
        self._finish()

    def _finish(self) -> None:
        self._over = True
        self._actors.clear()
        self._log.append(_FINISHED)

    def _contender_seats(self) -> tuple[int, ...]:
        return tuple(compress(self._order, self._in))

    def _contributions_by_seat(self) -> dict[int, int]:
        return {seat: self._contributions[i] for i, seat in enumerate(self._order)}

    def __repr__(self) -> str:
        state = "over" if self._over else f"{self._street}, seat {self.actor} to act"
        board = cards_str(self.board) or "-"
        return f"<Hand {self.hand_id} {state}, board {board}, pot {self.pot_total}>"


def _invalid_action(value: object) -> InvalidAction:
    return InvalidAction(
        "an action is Fold(), Check(), Call(), CheckOrCall(), BetOrRaiseTo(amount) or Timeout(),"
        f" got {value!r}"
    )


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
