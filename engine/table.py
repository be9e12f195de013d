"""A table across hands: seats, stacks, and who has the button and the blinds next.

The hand engine plays one hand from a ``HandSetup``; this module is what lives between hands. A
``Table`` holds seats ``1..size`` (a player id, a stack, an absent flag) and remembers where the
button and the blinds were, so it can decide the next hand's positions under the tournament's
button rule, build the next ``HandSetup``, and apply the hand's result.

Rules (docs/rules.md):

- SEAT-2 the first button goes to the highest card of a one-card draw (ties by suit, spades >
  hearts > diamonds > clubs), or to seat 1 (the first occupied seat from seat 1).
- BTN-1 dead button (default): the big blind moves to the next player each hand, so nobody posts
  it twice in a row and nobody misses it; the small blind is last hand's big blind if that player
  is still here (otherwise there is no small blind); the button is the seat that was the small
  blind last hand, which may now be empty (a dead button) — and when there was no small blind
  last hand the button stays where it was, so the same player may keep it (P§7).
  Forward-moving button (S): the button moves one occupied seat clockwise; the blinds are the next
  two players; players may skip a blind as others bust. When a newcomer would make last hand's
  big blind post it again, the button and blinds move one more seat.
- BTN-2 heads-up: the button posts the small blind and acts first before the flop. The last big
  blind, if still here, gets the button; so going from three players to two never gives anyone
  the big blind twice in a row, under either rule.
- BTN-3 / CLK-1 every seated player with chips is dealt in, present or not; absence is passed to
  the hand, which folds or checks them on ``timeout()``.
- REG-4 a player seated between hands is dealt in at once in any position, blinds included; with
  ``JoinRule.NOT_BETWEEN_BLINDS_AND_BUTTON`` (TDA) a newcomer whose seat lies between the button and
  the big blind (the small blind excepted) is not dealt in until the button has passed them.

- PEN-1 penalties (TDA R71): ``penalize(seat, hands)`` sits a player out for their next ``hands``
  hands: they are dealt in, post, and their hand is killed at the deal (``HandSetup.killed``);
  ``SeatedPlayer.penalty_hands`` counts the hands left and goes down by one at the end of each hand
  they are dealt. Penalties given during a hand start with the next one; a second penalty adds
  to the first. A hand needs a live player to win the pot: in the rare hand where every player
  dealt in is serving a penalty (heads-up, both penalized) nobody's hand is killed, and the hand
  still counts toward every penalty, so penalties always end. ``disqualify(seat)`` (between
  hands) removes the player and returns the chips it takes out of play.

Invariants: seats change only between hands (mid-hand calls raise ``HandInProgressError`` and
change nothing); stacks are non-negative integers; a player sits at most once; a player whose
stack reaches zero at the end of a hand is removed and reported as busted.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from engine.betting import MAX_TABLE_SIZE, MIN_TABLE_SIZE, AnteKind, Game, HandSetup, Limit, SeatSetup
from engine.cards import Card, shuffled_deck
from engine.slots import builder
from engine.triads import can

__all__ = [
    "ButtonDraw",
    "ButtonNotDrawnError",
    "ButtonRule",
    "FirstButton",
    "HandInProgressError",
    "HandResult",
    "JoinRule",
    "NoHandInProgressError",
    "NotEnoughPlayersError",
    "PenaltyError",
    "PlayerSeatedError",
    "Positions",
    "SeatEmptyError",
    "SeatError",
    "SeatTakenError",
    "SeatedPlayer",
    "StackError",
    "Table",
    "TableError",
    "TableSettings",
    "TableSnapshot",
]

TABLE_SNAPSHOT_VERSION = 1


class ButtonRule(StrEnum):
    DEAD = "dead"  # P§7: the big blind moves one player a hand; button and small blind follow
    FORWARD = "forward"  # S: the button moves one player a hand; blinds may be skipped


class FirstButton(StrEnum):
    DRAW = "draw"  # P§6: high card, ties by suit (spades > hearts > diamonds > clubs)
    SEAT_ONE = "seat_one"  # S


class JoinRule(StrEnum):
    ANY = "any"  # A, P§8: dealt in at once, in any position, blinds included
    NOT_BETWEEN_BLINDS_AND_BUTTON = "not_between_blinds_and_button"  # TDA R8A


class TableError(ValueError):
    """A table operation that is not allowed now; the message says why."""


class HandInProgressError(TableError):
    """Seats, stacks and positions only change between hands."""


class NoHandInProgressError(TableError):
    """A hand result was given but no hand was started."""


class SeatError(TableError):
    """A seat number outside ``1..size``."""


class SeatTakenError(TableError):
    """The seat already has a player."""


class SeatEmptyError(TableError):
    """The seat has no player."""


class PlayerSeatedError(TableError):
    """The player already sits at this table."""


class StackError(TableError):
    """A stack or chip amount that is not a valid integer, or results that do not match the hand."""


class PenaltyError(TableError):
    """A penalty that is not a positive whole number of hands (PEN-1)."""


class NotEnoughPlayersError(TableError):
    """A hand needs at least two players with chips."""


class ButtonNotDrawnError(TableError):
    """With ``FirstButton.DRAW`` the first button must be drawn (``draw_button``) before a hand."""


@dataclass(frozen=True, slots=True)
class TableSettings:
    size: int = 9
    button_rule: ButtonRule = ButtonRule.DEAD
    first_button: FirstButton = FirstButton.DRAW
    join_rule: JoinRule = JoinRule.ANY
    limit: Limit = Limit.NO_LIMIT
    game: Game = Game.HOLDEM

    def __post_init__(self) -> None:
        if not MIN_TABLE_SIZE <= self.size <= MAX_TABLE_SIZE:
            raise TableError(f"a table has {MIN_TABLE_SIZE}..{MAX_TABLE_SIZE} seats, got {self.size}")


@dataclass(frozen=True, slots=True)
class SeatedPlayer:
    seat: int
    player: str
    stack: int
    absent: bool = False
    # seated since the last hand under the TDA join rule and not dealt in yet
    waiting: bool = False
    # PEN-1: hands still to sit out (dealt in, posting, hand killed)
    penalty_hands: int = 0


_new_seated = builder(SeatedPlayer)
_new_seat_setup = builder(SeatSetup)


@dataclass(frozen=True, slots=True)
class Positions:
    """Where the next hand's button and blinds are, and who is dealt in (ascending seats).

    ``button`` may be an empty seat (dead button); ``small_blind`` is ``None`` when there is no
    small blind; heads-up ``button == small_blind``. ``waiting`` are seats not dealt in (TDA).
    """

    button: int
    small_blind: int | None
    big_blind: int
    dealt_in: tuple[int, ...]
    waiting: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ButtonDraw:
    """The first-button draw (SEAT-2): each seat's card, in seat order, and the winning seat."""

    cards: tuple[tuple[int, Card], ...]
    button: int


@dataclass(frozen=True, slots=True)
class HandResult:
    """What a finished hand changed at the table: the busted players (stack 0), by seat order."""

    hand_id: str
    busted: tuple[SeatedPlayer, ...]


@dataclass(frozen=True, slots=True)
class _LastHand:
    positions: Positions
    big_blind_player: str


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """A table between hands as plain data (msgspec encodes it): everything ``Table.restore``
    needs. A hand in progress is not part of it: a table snapshotted during a hand gives the
    stacks and positions of that hand's start (CRASH-1 rolls the hand back)."""

    version: int
    table_id: int
    settings: TableSettings
    seats: tuple[SeatedPlayer, ...]
    first_button: int | None
    last_positions: Positions | None
    last_big_blind_player: str | None


class Table:
    """Seats and the button across hands (see the module docstring for the rules)."""

    def __init__(self, settings: TableSettings | None = None, table_id: int = 1) -> None:
        self.settings = settings if settings is not None else TableSettings()
        self.table_id = table_id
        self._seats: dict[int, SeatedPlayer] = {}
        self._first_button: int | None = None
        self._last: _LastHand | None = None
        self._current: tuple[str, Positions, HandSetup] | None = None
        self._serving: frozenset[int] = frozenset()  # seats serving a penalty in the hand under way
        # what the seats imply, kept until the seats or the button change (``_changed``)
        self._players: tuple[SeatedPlayer, ...] | None = None
        self._positions: Positions | None = None

    # -- reading -------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self.settings.size

    @property
    def hand_in_progress(self) -> bool:
        return self._current is not None

    @property
    def current_setup(self) -> HandSetup | None:
        return None if self._current is None else self._current[2]

    def _changed(self) -> None:
        """Seats, stacks or the button changed: forget what was worked out from them."""
        self._players = None
        self._positions = None

    @property
    def players(self) -> tuple[SeatedPlayer, ...]:
        """Everyone seated, in seat order."""
        players = self._players
        if players is None:
            players = self._players = tuple(self._seats[seat] for seat in sorted(self._seats))
        return players

    def big_blind_order(self) -> tuple[int, ...]:
        """The occupied seats in the order they will post the big blind, the next one first
        (counted with the players seated now; empty before two players can play)."""
        candidates = self._candidates()
        if len(candidates) < 2:
            return ()
        try:
            big = self.next_positions().big_blind
        except ButtonNotDrawnError:
            return ()
        start = candidates.index(big)
        return tuple(candidates[start:] + candidates[:start])

    def newcomer_big_blind_waits(self) -> dict[int, int]:
        """MOVE-1: for each empty seat, how many hands a player seated there now would wait
        before posting the big blind (0: they post it next hand), as this table's button rule
        decides with them seated. Empty when the table cannot tell (no button yet)."""
        waits: dict[int, int] = {}
        if self._first_button is None and self._last is None:
            return waits
        probe = Table(self.settings, self.table_id)
        probe._first_button = self._first_button
        probe._last = self._last
        for seat in self.empty_seats():
            probe._seats = dict(self._seats)
            probe._seats[seat] = SeatedPlayer(seat, "\x00newcomer", 1)
            probe._changed()
            try:
                waits[seat] = probe.hands_until_big_blind(seat)
            except TableError:
                return {}
        return waits

    def seat_of(self, player: str) -> int | None:
        for seated in self._seats.values():
            if seated.player == player:
                return seated.seat
        return None

    def player_at(self, seat: int) -> SeatedPlayer | None:
        return self._seats.get(seat)

    def empty_seats(self) -> tuple[int, ...]:
        return tuple(seat for seat in range(1, self.size + 1) if seat not in self._seats)

    @property
    def chips(self) -> int:
        """The sum of the stacks at the table."""
        return sum(seated.stack for seated in self._seats.values())

    @property
    def last_positions(self) -> Positions | None:
        """The positions of the last hand dealt here (``None`` before the first hand)."""
        return None if self._last is None else self._last.positions

    @property
    def last_big_blind_player(self) -> str | None:
        """Who posted the big blind last hand: with ``last_positions`` and ``players``, what a
        between-hands snapshot needs to ``restore`` the table."""
        return None if self._last is None else self._last.big_blind_player

    # -- seating -------------------------------------------------------------------------------

    def _verify_between_hands(self, what: str) -> None:
        if self._current is not None:
            raise HandInProgressError(f"cannot {what} during hand {self._current[0]}; wait for it to end")

    def _verify_seat_number(self, seat: int) -> None:
        if type(seat) is not int or not 1 <= seat <= self.size:
            raise SeatError(f"seat must be 1..{self.size}, got {seat!r}")

    def verify_seat_player(self, seat: int, player: str, stack: int) -> None:
        """Raise the reason ``seat_player`` would be refused (a hand in progress, a taken seat...)."""
        self._verify_between_hands(f"seat {player!r}")
        self._verify_seat_number(seat)
        if seat in self._seats:
            raise SeatTakenError(f"seat {seat} is taken by {self._seats[seat].player!r}")
        if not player:
            raise TableError("a player id must be a non-empty string")
        where = self.seat_of(player)
        if where is not None:
            raise PlayerSeatedError(f"player {player!r} already sits in seat {where}")
        if type(stack) is not int or stack <= 0:
            raise StackError(f"a seated player needs a positive integer stack, got {stack!r}")

    can_seat_player = can(verify_seat_player, TableError)

    def seat_player(
        self, seat: int, player: str, stack: int, absent: bool = False, *, penalty_hands: int = 0
    ) -> SeatedPlayer:
        """Seat ``player`` with ``stack`` chips in the empty ``seat``, between hands.

        Once hands have been played here, the newcomer is flagged ``waiting`` under the TDA join
        rule; whether they are dealt in is decided per hand by ``next_positions``. A player moved
        here brings the hands left of a penalty (``penalty_hands``, PEN-1).
        """
        self.verify_seat_player(seat, player, stack)
        if type(penalty_hands) is not int or penalty_hands < 0:
            raise PenaltyError(f"penalty hands are a whole number >= 0, got {penalty_hands!r}")
        waiting = self._last is not None and self.settings.join_rule is JoinRule.NOT_BETWEEN_BLINDS_AND_BUTTON
        seated = SeatedPlayer(
            seat=seat, player=player, stack=stack, absent=absent, waiting=waiting, penalty_hands=penalty_hands
        )
        self._seats[seat] = seated
        self._changed()
        return seated

    def verify_unseat(self, seat: int) -> None:
        self._verify_between_hands(f"unseat seat {seat}")
        self._verify_seat_number(seat)
        if seat not in self._seats:
            raise SeatEmptyError(f"seat {seat} is empty")

    can_unseat = can(verify_unseat, TableError)

    def unseat(self, seat: int) -> SeatedPlayer:
        """Take the player in ``seat`` away (moved), between hands; returns them (``penalty_hands``
        included: a penalty follows a player to their new table). To disqualify, ``disqualify``."""
        self.verify_unseat(seat)
        self._changed()
        return self._seats.pop(seat)

    def verify_add_chips(self, seat: int, amount: int) -> None:
        self._verify_between_hands(f"add chips to seat {seat}")
        self._verify_seat_number(seat)
        if seat not in self._seats:
            raise SeatEmptyError(f"seat {seat} is empty")
        if type(amount) is not int or amount <= 0:
            raise StackError(f"chips added must be a positive integer, got {amount!r}")

    can_add_chips = can(verify_add_chips, TableError)

    def add_chips(self, seat: int, amount: int) -> SeatedPlayer:
        """Add a rebuy or add-on to the stack in ``seat``, between hands."""
        self.verify_add_chips(seat, amount)
        seated = replace(self._seats[seat], stack=self._seats[seat].stack + amount)
        self._seats[seat] = seated
        self._changed()
        return seated

    def set_absent(self, seat: int, absent: bool) -> SeatedPlayer:
        """Mark a player away or back. Allowed at any moment: presence is not a seat change
        (CLK-1: an absent player may come back during the hand; the flag feeds the next setup).
        """
        self._verify_seat_number(seat)
        if seat not in self._seats:
            raise SeatEmptyError(f"seat {seat} is empty")
        seated = replace(self._seats[seat], absent=absent)
        self._seats[seat] = seated
        self._changed()
        return seated

    # -- penalties (PEN-1) -----------------------------------------------------------------------

    def verify_penalize(self, seat: int, hands: int) -> None:
        """Raise ``SeatError``/``SeatEmptyError`` for a bad seat, ``PenaltyError`` unless ``hands``
        is a positive int. Allowed at any moment: during a hand it applies from the next one."""
        self._verify_seat_number(seat)
        if seat not in self._seats:
            raise SeatEmptyError(f"seat {seat} is empty")
        if type(hands) is not int or hands <= 0:
            raise PenaltyError(f"a penalty is a positive whole number of hands, got {hands!r}")

    can_penalize = can(verify_penalize, TableError)

    def penalize(self, seat: int, hands: int) -> SeatedPlayer:
        """PEN-1: sit the player in ``seat`` out for the next ``hands`` hands they are dealt (they
        post, and their hand is killed at the deal); added to any penalty still being served."""
        self.verify_penalize(seat, hands)
        seated = self._seats[seat]
        seated = replace(seated, penalty_hands=seated.penalty_hands + hands)
        self._seats[seat] = seated
        self._changed()
        return seated

    def verify_disqualify(self, seat: int) -> None:
        self._verify_between_hands(f"disqualify seat {seat}")
        self._verify_seat_number(seat)
        if seat not in self._seats:
            raise SeatEmptyError(f"seat {seat} is empty")

    can_disqualify = can(verify_disqualify, TableError)

    def disqualify(self, seat: int) -> int:
        """PEN-1: remove the player in ``seat`` between hands; returns their chips, which leave play
        (the tournament counts them as removed, not as chips anyone can win)."""
        self.verify_disqualify(seat)
        self._changed()
        return self._seats.pop(seat).stack

    # -- the first button ----------------------------------------------------------------------

    def draw_button(self, rng: random.Random | None = None) -> ButtonDraw:
        """Deal one card to each seated player; the highest card (ties by suit) gets the button.

        Cards are ints ``rank*4+suit`` with suits ordered c < d < h < s, so the highest int wins
        (SEAT-2). Also used for the final-table redraw (BRK-2): it forgets where the blinds were.
        """
        self._verify_between_hands("draw for the button")
        seats = sorted(self._seats)
        if len(seats) < 2:
            raise NotEnoughPlayersError(f"a button draw needs two players, the table has {len(seats)}")
        deck = shuffled_deck(rng)
        cards = tuple((seat, deck[index]) for index, seat in enumerate(seats))
        winner = max(cards, key=lambda seat_card: seat_card[1])[0]
        self._first_button = winner
        self._changed()
        self._last = None
        return ButtonDraw(cards=cards, button=winner)

    def set_first_button(self, seat: int) -> None:
        """Put the first button on ``seat`` (an operator's choice, or ``FirstButton.SEAT_ONE``)."""
        self._verify_between_hands("place the button")
        self._verify_seat_number(seat)
        self._first_button = seat
        self._changed()
        self._last = None

    # -- positions -----------------------------------------------------------------------------

    def _candidates(self) -> list[int]:
        return sorted(seat for seat, seated in self._seats.items() if seated.stack > 0)

    @staticmethod
    def _next_after(seat: int, candidates: list[int]) -> int:
        """The first candidate seat clockwise after ``seat`` (``seat`` itself if it is the only one)."""
        for candidate in candidates:
            if candidate > seat:
                return candidate
        return candidates[0]

    @staticmethod
    def _previous_before(seat: int, candidates: list[int]) -> int:
        for candidate in reversed(candidates):
            if candidate < seat:
                return candidate
        return candidates[-1]

    @staticmethod
    def _strictly_between(start: int, seat: int, end: int) -> bool:
        """Whether ``seat`` lies clockwise strictly after ``start`` and strictly before ``end``."""
        if start < end:
            return start < seat < end
        return seat > start or seat < end

    def _first_hand_button(self, candidates: list[int]) -> int:
        if self._first_button is None:
            if self.settings.first_button is FirstButton.DRAW:
                raise ButtonNotDrawnError("draw for the first button (draw_button) before the first hand")
            return candidates[0]
        # the drawn button's player may have been moved away before the first hand
        if self._first_button in candidates:
            return self._first_button
        return self._next_after(self._first_button, candidates)

    def _positions_for(self, candidates: list[int]) -> Positions:
        dealt_in = tuple(candidates)
        last = self._last
        if last is None:
            button = self._first_hand_button(candidates)
            if len(candidates) == 2:
                return Positions(button, button, self._next_after(button, candidates), dealt_in)
            small = self._next_after(button, candidates)
            return Positions(button, small, self._next_after(small, candidates), dealt_in)
        previous = last.positions
        last_big_present = (
            previous.big_blind in candidates
            and self._seats[previous.big_blind].player == last.big_blind_player
        )
        if len(candidates) == 2:
            # BTN-2: the last big blind, if still here, takes the button and the small blind
            if last_big_present:
                button = previous.big_blind
            elif self.settings.button_rule is ButtonRule.DEAD:
                # the big blind moves on to the next player; the other one has the button
                big = self._next_after(previous.big_blind, candidates)
                button = self._next_after(big, candidates)
            else:
                button = self._next_after(previous.button, candidates)
            return Positions(button, button, self._next_after(button, candidates), dealt_in)
        if self.settings.button_rule is ButtonRule.FORWARD:
            button = self._next_after(previous.button, candidates)
            small = self._next_after(button, candidates)
            big = self._next_after(small, candidates)
            if last_big_present and big == previous.big_blind:
                # a newcomer just after the button or between the blinds would hand the last big
                # blind a second one; everything moves one more seat instead
                button, small, big = small, big, self._next_after(big, candidates)
            return Positions(button, small, big, dealt_in)
        big = self._next_after(previous.big_blind, candidates)
        small_blind: int | None = previous.big_blind if last_big_present else None
        button = previous.small_blind if previous.small_blind is not None else previous.button
        if button == big or (small_blind is not None and button == small_blind):
            # Only reachable after arrivals (heads-up becoming three-handed, newcomers behind the
            # big blind): keep the big blind moving and seat the small blind and the button just
            # before it, so the hand still has a button before the blinds.
            small_blind = self._previous_before(big, candidates)
            button = self._previous_before(small_blind, candidates)
        return Positions(button, small_blind, big, dealt_in)

    def next_positions(self) -> Positions:
        """The next hand's button, blinds and dealt-in seats; changes nothing.

        Raises ``NotEnoughPlayersError`` with fewer than two players with chips and
        ``ButtonNotDrawnError`` when the first button still has to be drawn.
        """
        positions = self._positions
        if positions is None:
            positions = self._positions = self._work_out_positions()
        return positions

    def _work_out_positions(self) -> Positions:
        candidates = self._candidates()
        if len(candidates) < 2:
            raise NotEnoughPlayersError(
                f"a hand needs two players with chips, the table has {len(candidates)}"
            )
        positions = self._positions_for(candidates)
        if self.settings.join_rule is not JoinRule.NOT_BETWEEN_BLINDS_AND_BUTTON or self._last is None:
            return positions
        waiting = [
            seat
            for seat in candidates
            if self._seats[seat].waiting
            and seat != positions.small_blind
            and self._strictly_between(positions.button, seat, positions.big_blind)
        ]
        if not waiting or len(candidates) - len(waiting) < 2:
            return positions
        remaining = [seat for seat in candidates if seat not in waiting]
        return replace(self._positions_for(remaining), waiting=tuple(waiting))

    def hands_until_big_blind(self, seat: int) -> int:
        """How many hands are dealt before the one in which ``seat`` posts the big blind.

        0 means it posts the big blind next hand. Counted with the players now seated (busts and
        arrivals to come can change it); a seat not dealt in next hand counts in its clockwise
        place. The balancer moves the player with the smallest count (MOVE-1).
        """
        self._verify_seat_number(seat)
        if seat not in self._seats:
            raise SeatEmptyError(f"seat {seat} is empty")
        positions = self.next_positions()
        if seat == positions.big_blind:
            return 0
        order = self._candidates()
        if seat not in order:
            raise StackError(f"seat {seat} has no chips and will not be dealt in")
        start = order.index(positions.big_blind)
        rotated = order[start:] + order[:start]
        return rotated.index(seat)

    # -- hands ---------------------------------------------------------------------------------

    def verify_start_hand(self) -> None:
        self._verify_between_hands("start a hand")
        self.next_positions()

    can_start_hand = can(verify_start_hand, TableError)

    def start_hand(
        self,
        hand_id: str,
        small_blind: int,
        big_blind: int,
        ante: int = 0,
        ante_kind: AnteKind = AnteKind.NONE,
    ) -> HandSetup:
        """Fix the next hand's positions and return its ``HandSetup``; the table is then busy
        until ``finish_hand`` (or ``cancel_hand``) is called.
        """
        self.verify_start_hand()
        positions = self.next_positions()
        serving = frozenset(seat for seat in positions.dealt_in if self._seats[seat].penalty_hands > 0)
        # A hand needs a live player: if everyone dealt in is serving, nobody's hand is killed.
        killed = serving if len(serving) < len(positions.dealt_in) else frozenset()
        seats = self._seats
        dealt = [seats[seat] for seat in positions.dealt_in]
        setup = HandSetup(
            hand_id=hand_id,
            table_size=self.size,
            seats=tuple([_new_seat_setup(s.seat, s.player, s.stack, s.absent) for s in dealt]),
            button=positions.button,
            small_blind_seat=positions.small_blind,
            big_blind_seat=positions.big_blind,
            small_blind=small_blind,
            big_blind=big_blind,
            ante=ante,
            ante_kind=ante_kind,
            limit=self.settings.limit,
            game=self.settings.game,
            killed=killed,
        )
        self._current = (hand_id, positions, setup)
        self._serving = serving
        return setup

    def cancel_hand(self) -> None:
        """Forget the hand in progress as if it was never dealt (CRASH-1 rollback): stacks and
        positions stay as they were at its start.
        """
        if self._current is None:
            raise NoHandInProgressError("no hand is in progress")
        self._current = None
        self._serving = frozenset()

    def verify_finish_hand(self, finishing_stacks: Mapping[int, int]) -> None:
        """Raise unless ``finishing_stacks`` gives each dealt-in seat a non-negative integer and
        conserves the chips the hand started with.
        """
        if self._current is None:
            raise NoHandInProgressError("no hand is in progress")
        hand_id, positions, setup = self._current
        expected = set(positions.dealt_in)
        if set(finishing_stacks) != expected:
            raise StackError(
                f"hand {hand_id}: finishing stacks must name seats {sorted(expected)},"
                f" got {sorted(finishing_stacks)}"
            )
        for seat, stack in finishing_stacks.items():
            if type(stack) is not int or stack < 0:
                raise StackError(
                    f"hand {hand_id}: seat {seat} finishing stack must be an int >= 0, got {stack!r}"
                )
        before = sum(seat_setup.stack for seat_setup in setup.seats)
        after = sum(finishing_stacks.values())
        if before != after:
            raise StackError(
                f"hand {hand_id}: chips not conserved, started with {before}, finished with {after}"
            )

    can_finish_hand = can(verify_finish_hand, TableError)

    def finish_hand(self, finishing_stacks: Mapping[int, int]) -> HandResult:
        """Apply the finished hand's stacks (by seat), remember its positions, remove and return
        the players left with no chips (ELIM-1).
        """
        self.verify_finish_hand(finishing_stacks)
        assert self._current is not None
        hand_id, positions, _setup = self._current
        seats, serving = self._seats, self._serving
        for seat, stack in finishing_stacks.items():
            seated = seats[seat]
            left = seated.penalty_hands - 1 if seat in serving else seated.penalty_hands
            seats[seat] = _new_seated(seat, seated.player, stack, seated.absent, False, left)
        self._serving = frozenset()
        self._last = _LastHand(positions, seats[positions.big_blind].player)
        busted = tuple(seats.pop(seat) for seat in sorted(finishing_stacks) if not finishing_stacks[seat])
        self._changed()
        self._current = None
        return HandResult(hand_id=hand_id, busted=busted)

    def restore(
        self,
        players: Iterable[SeatedPlayer],
        last_positions: Positions | None,
        big_blind_player: str | None,
        first_button: int | None = None,
    ) -> None:
        """Rebuild a table from a snapshot taken between hands (crash recovery, CRASH-1): the
        seated players, the last hand's positions and big blind player, and the first button if
        no hand was dealt yet.
        """
        self._verify_between_hands("restore a snapshot")
        seats = {seated.seat: seated for seated in players}
        for seat in seats:
            self._verify_seat_number(seat)
        if last_positions is not None and big_blind_player is None:
            raise TableError("a snapshot with last positions must name the last big blind player")
        self._seats = seats
        self._changed()
        self._first_button = first_button
        if last_positions is None or big_blind_player is None:
            self._last = None
        else:
            self._last = _LastHand(last_positions, big_blind_player)

    @property
    def first_button(self) -> int | None:
        """The drawn or placed first button (``None`` until chosen)."""
        return self._first_button

    # -- saved state -----------------------------------------------------------------------------

    def snapshot(self) -> TableSnapshot:
        """The table as plain, versioned data; during a hand, as it was when the hand began."""
        last = self._last
        return TableSnapshot(
            version=TABLE_SNAPSHOT_VERSION,
            table_id=self.table_id,
            settings=self.settings,
            seats=self.players,
            first_button=self._first_button,
            last_positions=None if last is None else last.positions,
            last_big_blind_player=None if last is None else last.big_blind_player,
        )

    @classmethod
    def from_snapshot(cls, snapshot: TableSnapshot) -> Table:
        """Rebuild a table from ``snapshot``; raises ``TableError`` for a version or content it
        cannot trust (an unknown version, seats outside the table, a player seated twice)."""
        if snapshot.version != TABLE_SNAPSHOT_VERSION:
            raise TableError(
                f"table snapshot version {snapshot.version} is not {TABLE_SNAPSHOT_VERSION}: cannot restore"
            )
        players = [seated.player for seated in snapshot.seats]
        seats = {seated.seat for seated in snapshot.seats}
        if len(set(players)) != len(players) or len(seats) != len(players):
            raise TableError(
                f"table {snapshot.table_id} snapshot repeats a player or a seat: {snapshot.seats!r}"
            )
        if any(type(seated.stack) is not int or seated.stack <= 0 for seated in snapshot.seats):
            raise StackError(f"table {snapshot.table_id} snapshot holds a stack that is not a positive int")
        table = cls(snapshot.settings, snapshot.table_id)
        table.restore(
            snapshot.seats, snapshot.last_positions, snapshot.last_big_blind_player, snapshot.first_button
        )
        return table
