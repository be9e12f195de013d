"""Betting structures, antes and the setup a hand is played under (BET-1, LVL-1, BTN-1).

``HandSetup`` is what the table hands to the hand engine: who is dealt in with what stack, where
the button and the blinds are, and the blinds, ante and betting structure of the current level.
The table decides *who* posts *what* (button rules live in ``engine.table``); the hand engine only
checks that the setup is coherent and plays it.

Bet sizes per street (BET-1):

- no limit and pot limit: the minimum bet is the big blind on every street;
- fixed limit: the small bet (= the big blind) preflop and on the flop, the big bet
  (= 2 x the big blind) on the turn and river, and at most a bet and three raises per round. Preflop
  the big blind counts as the bet, so three raises may follow it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

MIN_TABLE_SIZE = 2
MAX_TABLE_SIZE = 10


class Limit(StrEnum):
    NO_LIMIT = "nl"
    POT_LIMIT = "pl"
    FIXED_LIMIT = "fl"


class AnteKind(StrEnum):
    NONE = "none"
    EACH = "each"  # every player dealt in posts the ante
    BIG_BLIND = "bb"  # one ante for the table, posted by the big blind (TDA RP-11)


class Game(StrEnum):
    HOLDEM = "holdem"
    OMAHA = "omaha"

    @property
    def hole_card_count(self) -> int:
        return 2 if self is Game.HOLDEM else 4


class Street(StrEnum):
    PREFLOP = "preflop"
    FLOP = "flop"
    TURN = "turn"
    RIVER = "river"

    @property
    def board_card_count(self) -> int:
        """Cards dealt to the board when this street starts."""
        return _BOARD_CARDS[self]


_BOARD_CARDS = {Street.PREFLOP: 0, Street.FLOP: 3, Street.TURN: 1, Street.RIVER: 1}
STREETS: tuple[Street, ...] = (Street.PREFLOP, Street.FLOP, Street.TURN, Street.RIVER)

# Fixed limit: a bet and three raises per round; preflop the big blind is the bet (BET-1).
FIXED_LIMIT_RAISES = {Street.PREFLOP: 3, Street.FLOP: 4, Street.TURN: 4, Street.RIVER: 4}


def street_bet_size(limit: Limit, street: Street, big_blind: int) -> int:
    """The minimum bet (and the size of a full raise before anyone raised) on ``street``.

    Fixed limit uses the small bet (the big blind) preflop and on the flop and the big bet (twice
    the big blind) on the turn and river; no limit and pot limit use the big blind throughout.
    """
    if limit is Limit.FIXED_LIMIT and street in (Street.TURN, Street.RIVER):
        return 2 * big_blind
    return big_blind


def max_raises(limit: Limit, street: Street) -> int | None:
    """How many bets and raises a round allows (``None``: unlimited, BET-1)."""
    if limit is Limit.FIXED_LIMIT:
        return FIXED_LIMIT_RAISES[street]
    return None


class HandSetupError(ValueError):
    """A hand setup that cannot be played (seats, blinds or stakes that do not fit together)."""


@dataclass(frozen=True, slots=True)
class SeatSetup:
    """One player dealt into a hand."""

    seat: int  # table seat number, 1..table_size
    player: str  # player id
    stack: int  # chips at the start of the hand, > 0
    absent: bool = False  # CLK-1: dealt in and posts; the table acts for them by timeout


@dataclass(frozen=True, slots=True)
class HandSetup:
    """Everything the hand engine needs to know before the first card, as decided by the table.

    The button may be an empty seat (dead button, BTN-1) and the small blind may be missing
    (``small_blind_seat=None``, dead small blind). Heads-up the table passes the button as the
    small blind seat (BTN-2). Call ``validate()`` (the hand engine does) to check coherence.
    """

    hand_id: str
    table_size: int  # 2..10
    seats: tuple[SeatSetup, ...]  # players dealt in, ascending seat order, >= 2
    button: int  # button seat; may be an EMPTY seat (dead button, BTN-1)
    small_blind_seat: int | None  # None: no small blind this hand (dead small blind)
    big_blind_seat: int
    small_blind: int
    big_blind: int
    ante: int = 0
    ante_kind: AnteKind = AnteKind.NONE
    limit: Limit = Limit.NO_LIMIT
    game: Game = Game.HOLDEM
    # PEN-1: seats whose hands are killed at the deal (a penalty). They are dealt in, post their
    # antes and blinds and receive cards, but are folded before any action; at least one seat
    # dealt in stays live.
    killed: frozenset[int] = frozenset()

    def validate(self) -> None:
        """Raise ``HandSetupError`` naming the first thing that makes this setup unplayable."""
        self.validated_seat_numbers()

    def validated_seat_numbers(self) -> tuple[int, ...]:
        """``validate()``, then the seat numbers dealt in (``seat_numbers()``): the hand engine
        needs both for every hand, so one pass over the seats gives them.

        The common case is one strict pass (exact int types, seats strictly ascending); anything
        it does not accept goes through the full checks, which name the first problem (or accept
        what the strict pass was too strict for, such as an int subclass)."""
        size = self.table_size
        seats = self.seats
        if type(size) is not int or not MIN_TABLE_SIZE <= size <= MAX_TABLE_SIZE or len(seats) < 2:
            self._validate_fully()
            return self.seat_numbers()
        previous = 0
        seen: list[int] = []
        for seat in seats:
            number = seat.seat
            stack = seat.stack
            if type(number) is not int or not previous < number <= size or type(stack) is not int:
                break
            if stack <= 0 or not seat.player:
                break
            seen.append(number)
            previous = number
        else:
            numbers = tuple(seen)
            button = self.button
            big_seat = self.big_blind_seat
            small_seat = self.small_blind_seat
            big = self.big_blind
            small = self.small_blind
            ante = self.ante
            game = self.game
            if (
                len({seat.player for seat in seats}) == len(seats)
                and type(button) is int
                and 1 <= button <= size
                and big_seat in numbers
                and big_seat != button
                and (small_seat is None or (small_seat in numbers and small_seat != big_seat and small))
                and type(big) is int
                and big > 0
                and type(small) is int
                and 0 <= small <= big
                and type(ante) is int
                and ante >= 0
                and (ante > 0) == (self.ante_kind is not AnteKind.NONE)
                and isinstance(self.limit, Limit)
                and isinstance(game, Game)
                and (2 if game is Game.HOLDEM else 4) * len(seats) + 8 <= 52
                and (not self.killed or (self.killed < set(numbers) and type(self.killed) is frozenset))
            ):
                return numbers
        self._validate_fully()
        return self.seat_numbers()

    def _validate_fully(self) -> None:
        """``validate``, check by check in the documented order, naming the first problem."""
        if not isinstance(self.table_size, int) or not MIN_TABLE_SIZE <= self.table_size <= MAX_TABLE_SIZE:
            raise HandSetupError(
                f"table_size must be {MIN_TABLE_SIZE}..{MAX_TABLE_SIZE}, got {self.table_size!r}"
            )
        if len(self.seats) < 2:
            raise HandSetupError(f"a hand needs at least 2 players dealt in, got {len(self.seats)}")
        numbers = [seat.seat for seat in self.seats]
        for seat in self.seats:
            if not isinstance(seat.seat, int) or not 1 <= seat.seat <= self.table_size:
                raise HandSetupError(f"seat numbers are 1..{self.table_size}, got {seat.seat!r}")
            if not _is_chip_count(seat.stack) or seat.stack <= 0:
                raise HandSetupError(f"seat {seat.seat}: a stack is a positive int, got {seat.stack!r}")
            if not seat.player:
                raise HandSetupError(f"seat {seat.seat}: the player id is empty")
        if numbers != sorted(set(numbers)):
            raise HandSetupError(f"seats must be distinct and in ascending order, got {numbers}")
        players = [seat.player for seat in self.seats]
        if len(set(players)) != len(players):
            raise HandSetupError(f"a player can hold only one seat in a hand, got {players}")
        if not isinstance(self.button, int) or not 1 <= self.button <= self.table_size:
            raise HandSetupError(f"the button is a seat 1..{self.table_size}, got {self.button!r}")
        if self.big_blind_seat not in numbers:
            raise HandSetupError(
                f"the big blind seat {self.big_blind_seat} is not dealt in (seats {numbers})"
            )
        if self.big_blind_seat == self.button:
            # Heads-up the button posts the small blind (BTN-2); with more players it posts nothing.
            raise HandSetupError(f"the big blind seat {self.big_blind_seat} cannot hold the button")
        if self.small_blind_seat is not None:
            if self.small_blind_seat not in numbers:
                raise HandSetupError(
                    f"the small blind seat {self.small_blind_seat} is not dealt in (seats {numbers});"
                    " pass None for a dead small blind"
                )
            if self.small_blind_seat == self.big_blind_seat:
                raise HandSetupError(f"seat {self.big_blind_seat} cannot post both blinds")
        if not _is_chip_count(self.big_blind) or self.big_blind <= 0:
            raise HandSetupError(f"the big blind is a positive int, got {self.big_blind!r}")
        if not _is_chip_count(self.small_blind) or not 0 <= self.small_blind <= self.big_blind:
            raise HandSetupError(
                f"the small blind is an int 0..big blind ({self.big_blind}), got {self.small_blind!r}"
            )
        if self.small_blind_seat is not None and self.small_blind == 0:
            raise HandSetupError("a small blind seat is given but the small blind is 0")
        if not _is_chip_count(self.ante) or self.ante < 0:
            raise HandSetupError(f"the ante is an int >= 0, got {self.ante!r}")
        if (self.ante > 0) != (self.ante_kind is not AnteKind.NONE):
            raise HandSetupError(
                f"ante {self.ante} does not fit ante kind {self.ante_kind!r}: use AnteKind.NONE with ante 0"
                " and EACH or BIG_BLIND with a positive ante"
            )
        if not isinstance(self.limit, Limit) or not isinstance(self.game, Game):
            raise HandSetupError(f"unknown limit {self.limit!r} or game {self.game!r}")
        needed = self.game.hole_card_count * len(self.seats) + 8
        if needed > 52:
            raise HandSetupError(
                f"{len(self.seats)} players of {self.game} need {needed} cards; a deck has 52"
            )
        if not isinstance(self.killed, frozenset):
            raise HandSetupError(f"killed is a frozenset of seats, got {self.killed!r}")
        strangers = sorted(self.killed - set(numbers))
        if strangers:
            raise HandSetupError(f"killed seats {strangers} are not dealt in (seats {numbers})")
        if self.killed and len(self.killed) >= len(numbers):
            raise HandSetupError(f"every seat dealt in is killed ({numbers}): nobody could win the pot")

    def seat_numbers(self) -> tuple[int, ...]:
        return tuple(seat.seat for seat in self.seats)


def _is_chip_count(value: object) -> bool:
    # bool is an int subclass; True chips would be a bug upstream.
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))
