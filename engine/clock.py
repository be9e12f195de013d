"""The action clock as pure accounting: shot clock, time banks, and the all-away hand counter.

No timers live here. The table actor passes ``now`` (float seconds from any monotonic origin) and
the moment the turn started; this module says when the shot clock runs out, when each time bank is
consumed, and whether the turn has timed out, in which case the actor plays the hand's timeout
(CLK-2: fold facing a bet, check otherwise).

How the table actor drives a hand with it (a timeout is a function of hand, clock and now):

1. after dealing and after every action, ``clock = start_turn(hand, banks, now=now,
   shot_clock=...)`` (``None`` once the hand is over) and sleep until ``clock.deadline`` or the
   player's action, whichever comes first (``clock.status(now)`` says which phase is running,
   for the players' display);
2. on the player's action at ``now``: ``hand.act(action, seat=...)``; on waking at the deadline:
   ``action = timeout_due(hand, clock, now)`` and, if it is not ``None``, ``hand.act(action)``;
3. either way ``banks = banks.after_turn(clock, now)``: the banks that started to run are spent.

Rules (docs/rules.md):

- CLK-3 the shot clock is 15 s when levels last 15 minutes or less, 30 s otherwise; each time bank
  adds one more shot clock. Players get 2 banks when the clock starts, 1 more at every scheduled
  break, 2 more when the bubble bursts (all settings).
- CLK-4 in heads-up and shootout events, when every player at a table has been away for 250 hands
  in a row the match ends and the biggest stack advances.

A time bank is consumed the moment it starts to run (the shot clock has expired and the player
still has not acted), as on the online sites the seeds describe: acting one second into a bank
still spends it.

An absent player (CLK-1: dealt in, acted for by timeout) gets the shot clock but no time bank
(our choice; the seeds are silent): they may come back at any moment of the hand, so the table
gives them a shot clock rather than folding at once, but it does not spend their banks, nor make
everyone wait through them, while they are away.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from engine.actions import Timeout
from engine.hand import Hand
from engine.triads import can

__all__ = [
    "DEFAULT_AWAY_HAND_LIMIT",
    "ActionClock",
    "AwayCounter",
    "ClockError",
    "ClockPhase",
    "ClockStatus",
    "NoTimeBankError",
    "StaleClockError",
    "TimeBankSettings",
    "TimeBanks",
    "UnknownPlayerError",
    "shot_clock_seconds",
    "start_turn",
    "timeout_due",
]

SHORT_LEVEL_MINUTES = 15
SHORT_SHOT_CLOCK = 15
LONG_SHOT_CLOCK = 30
DEFAULT_AWAY_HAND_LIMIT = 250


class ClockError(ValueError):
    """A clock or time-bank operation that is not allowed; the message says why."""


class NoTimeBankError(ClockError):
    """The player has fewer time banks than asked to spend."""


class UnknownPlayerError(ClockError):
    """The player has no time-bank account (not granted at the start of the clock)."""


class StaleClockError(ClockError):
    """A clock asked about a turn it does not time (another seat is to act)."""


def shot_clock_seconds(level_minutes: float, override: int | None = None) -> int:
    """The shot clock for a tournament whose levels last ``level_minutes`` (CLK-3).

    15 s for levels of 15 minutes or less, 30 s otherwise; ``override`` (a per-tournament setting,
    in seconds) wins when given.
    """
    if override is not None:
        if type(override) is not int or override <= 0:
            raise ClockError(f"a shot clock override is a positive number of seconds, got {override!r}")
        return override
    if level_minutes <= 0:
        raise ClockError(f"level length must be positive, got {level_minutes!r} minutes")
    return SHORT_SHOT_CLOCK if level_minutes <= SHORT_LEVEL_MINUTES else LONG_SHOT_CLOCK


@dataclass(frozen=True, slots=True)
class TimeBankSettings:
    initial: int = 2
    per_break: int = 1
    at_bubble: int = 2

    def __post_init__(self) -> None:
        for name in ("initial", "per_break", "at_bubble"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise ClockError(f"time bank setting {name} must be an int >= 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class TimeBanks:
    """Each player's count of unused time banks; every change returns a new value."""

    settings: TimeBankSettings = field(default_factory=TimeBankSettings)
    banks: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def start(cls, players: Iterable[str], settings: TimeBankSettings | None = None) -> TimeBanks:
        """The banks when the clock starts: ``settings.initial`` for every player."""
        chosen = settings if settings is not None else TimeBankSettings()
        return cls(settings=chosen, banks={player: chosen.initial for player in players})

    def remaining(self, player: str) -> int:
        if player not in self.banks:
            raise UnknownPlayerError(f"player {player!r} has no time banks")
        return self.banks[player]

    def add_player(self, player: str) -> TimeBanks:
        """A late entrant starts with the initial banks (an existing player keeps theirs)."""
        if player in self.banks:
            return self
        return replace(self, banks={**self.banks, player: self.settings.initial})

    def after_break(self) -> TimeBanks:
        """Every player gains ``per_break`` banks at a scheduled break."""
        return replace(self, banks={p: n + self.settings.per_break for p, n in self.banks.items()})

    def after_bubble(self) -> TimeBanks:
        """Every player left gains ``at_bubble`` banks when the bubble bursts."""
        return replace(self, banks={p: n + self.settings.at_bubble for p, n in self.banks.items()})

    def verify_spend(self, player: str, count: int = 1) -> None:
        if type(count) is not int or count < 0:
            raise ClockError(f"banks spent must be an int >= 0, got {count!r}")
        have = self.remaining(player)
        if count > have:
            raise NoTimeBankError(f"player {player!r} has {have} time bank(s), cannot spend {count}")

    can_spend = can(verify_spend, ClockError)

    def spend(self, player: str, count: int = 1) -> TimeBanks:
        """The banks after ``player`` spent ``count`` of theirs (as ``ClockStatus.banks_used``)."""
        self.verify_spend(player, count)
        return replace(self, banks={**self.banks, player: self.banks[player] - count})

    def after_turn(self, clock: ActionClock, now: float) -> TimeBanks:
        """The banks once the turn ``clock`` times ended at ``now``, by an action or by the
        timeout: its player spent every bank that had started to run (``clock.banks_used``).
        Raises ``ClockError`` for a clock that names no player (not made by ``start_turn``)."""
        if clock.player is None:
            raise ClockError("this clock names no player: start it with start_turn to charge its banks")
        return self.spend(clock.player, clock.banks_used(now))


class ClockPhase(StrEnum):
    SHOT_CLOCK = "shot_clock"
    TIME_BANK = "time_bank"
    TIMED_OUT = "timed_out"


@dataclass(frozen=True, slots=True)
class ClockStatus:
    """Where a turn's clock stands at some ``now``.

    ``banks_used`` counts banks consumed so far (a bank is consumed when it starts);
    ``expires_at`` is when the current phase ends (the deadline itself once timed out).
    """

    phase: ClockPhase
    banks_used: int
    expires_at: float
    seconds_left: float


@dataclass(frozen=True, slots=True)
class ActionClock:
    """One player's turn: it started at ``started_at`` with ``shot_clock`` seconds and
    ``banks_available`` time banks of ``shot_clock`` seconds each behind it. ``seat`` and
    ``player`` name whose turn it is (``start_turn`` fills them in), so that a clock is never
    applied to another player's turn or charged to another player's banks.
    """

    started_at: float
    shot_clock: float
    banks_available: int = 0
    seat: int | None = None
    player: str | None = None

    def __post_init__(self) -> None:
        if self.shot_clock <= 0:
            raise ClockError(f"the shot clock must be positive, got {self.shot_clock!r}")
        if type(self.banks_available) is not int or self.banks_available < 0:
            raise ClockError(f"banks available must be an int >= 0, got {self.banks_available!r}")
        if self.seat is not None and (type(self.seat) is not int or self.seat < 1):
            raise ClockError(f"a clock's seat is a seat number >= 1, got {self.seat!r}")

    @property
    def shot_clock_expires_at(self) -> float:
        return self.started_at + self.shot_clock

    def bank_expires_at(self, bank: int) -> float:
        """When bank number ``bank`` (1-based) runs out; it started when bank ``bank - 1`` ended."""
        if not 1 <= bank <= self.banks_available:
            raise ClockError(f"bank must be 1..{self.banks_available}, got {bank}")
        return self.started_at + self.shot_clock * (bank + 1)

    @property
    def deadline(self) -> float:
        """When the turn times out if every available bank is used."""
        return self.started_at + self.shot_clock * (self.banks_available + 1)

    def banks_used(self, now: float) -> int:
        """Banks consumed by ``now``: one as soon as each starts to run."""
        over = now - self.shot_clock_expires_at
        if over < 0:
            return 0
        return min(self.banks_available, math.floor(over / self.shot_clock) + 1)

    def timed_out(self, now: float) -> bool:
        return now >= self.deadline

    def status(self, now: float) -> ClockStatus:
        if self.timed_out(now):
            return ClockStatus(ClockPhase.TIMED_OUT, self.banks_available, self.deadline, 0.0)
        used = self.banks_used(now)
        if used == 0:
            expires = self.shot_clock_expires_at
            return ClockStatus(ClockPhase.SHOT_CLOCK, 0, expires, expires - now)
        expires = self.bank_expires_at(used)
        return ClockStatus(ClockPhase.TIME_BANK, used, expires, expires - now)


def start_turn(
    hand: Hand, banks: TimeBanks, *, now: float, shot_clock: float, absent: bool | None = None
) -> ActionClock | None:
    """The clock of the turn that starts at ``now`` in ``hand``: the player to act gets
    ``shot_clock`` seconds, then every time bank they have left, one after the other (CLK-3);
    an absent player gets the shot clock only (see the module docstring). ``absent`` defaults to
    how the hand was dealt (``hand.is_absent``); the table passes it when the player came back
    or left since. ``None`` once the hand is over. Raises ``UnknownPlayerError`` for a player
    with no time-bank account."""
    seat = hand.actor
    if seat is None:
        return None
    player = next(entry.player for entry in hand.setup.seats if entry.seat == seat)
    away = hand.is_absent(seat) if absent is None else absent
    available = banks.remaining(player)
    return ActionClock(
        started_at=now,
        shot_clock=shot_clock,
        banks_available=0 if away else available,
        seat=seat,
        player=player,
    )


_TIMEOUT = Timeout()


def timeout_due(hand: Hand, clock: ActionClock, now: float) -> Timeout | None:
    """What the table plays at ``now`` for the player whose turn ``clock`` times: ``Timeout()``
    once the shot clock and every time bank the player may use have run out (``now`` at or past
    ``clock.deadline``), ``None`` before then or when the hand is over. ``hand.act(Timeout())``
    folds the hand facing a bet and checks otherwise (CLK-2), marking the action ``timed_out``.
    Raises ``StaleClockError`` when the clock names another seat than the one to act: the turn
    it timed has ended, and the actor must start a clock for the new one."""
    seat = hand.actor
    if seat is None:
        return None
    if clock.seat is not None and clock.seat != seat:
        raise StaleClockError(f"the clock times seat {clock.seat}'s turn, but seat {seat} is to act")
    return _TIMEOUT if clock.timed_out(now) else None


@dataclass(frozen=True, slots=True)
class AwayCounter:
    """CLK-4: consecutive hands in which every player at the table was away.

    ``after_hand(all_away)`` returns the next counter; a hand with anyone present resets it.
    ``limit_reached`` says the match should end with the biggest stack advancing.
    """

    limit: int = DEFAULT_AWAY_HAND_LIMIT
    hands: int = 0

    def __post_init__(self) -> None:
        if type(self.limit) is not int or self.limit <= 0:
            raise ClockError(f"the away-hand limit must be a positive int, got {self.limit!r}")

    def after_hand(self, all_away: bool) -> AwayCounter:
        return replace(self, hands=self.hands + 1 if all_away else 0)

    def after_hand_with(self, absent: Iterable[bool]) -> AwayCounter:
        """``after_hand`` given each dealt-in player's absent flag for the hand."""
        flags = list(absent)
        return self.after_hand(bool(flags) and all(flags))

    @property
    def limit_reached(self) -> bool:
        return self.hands >= self.limit
