"""The tournament clock: the level in force, breaks, and the hand-for-hand deduction.

LVL-1 Blinds rise on a schedule of minutes of *play*; a level is fixed when a hand starts, so a
new level applies from the next hand. Play time is the time since the start minus the breaks,
minus the time the clock stood still for hand-for-hand, plus the minutes deducted per
hand-for-hand hand (HFH-1: 1 minute per hand when levels are under 20 minutes, else 2).

BRK-T1 Breaks are ``BreakWindow``s in seconds since the start:

- ``hourly``: at ``:at_minute`` past every wall-clock hour for ``minutes``, the same moment at every
  table (S). The wall-clock start is an input; a tournament that starts exactly at ``:55`` has
  its first break an hour later.
- ``every``: after every ``every_minutes`` of play.
- a rebuy tournament with an add-on adds a short add-on break (``addon_break_minutes``) when the
  rebuy period ends; if that moment falls inside a scheduled break the add-on break follows it.
  ``LevelClock.add_on_break()`` is that window and the one source of truth for when add-ons are
  sold (``Registration.add_on_window``, REG-5); ``clock_for(config)`` builds the clock of a config.

A break starts at a table only when its hand is finished: a hand under way plays on, and the
table may not start another hand until the break is over (``verify_start_hand``).

Time is ``now``, integer seconds since the start; nothing here reads a clock.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from engine.tournament.config import BreakMode, Breaks, Level, TournamentConfig
from engine.triads import can

HOUR = 3600


class LevelsError(ValueError):
    """The clock was asked something impossible (no levels, a time before the start)."""


class OnBreak(LevelsError):
    """A table tried to start a hand during a break."""


class BreakKind(StrEnum):
    SCHEDULED = "scheduled"
    ADD_ON = "add-on"


@dataclass(frozen=True, slots=True)
class BreakWindow:
    """A break from ``start`` (inclusive) to ``end`` (exclusive), seconds since the start."""

    start: int
    end: int
    kind: BreakKind

    @property
    def seconds(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class HandLevel:
    """The level a hand is played at, fixed when the hand starts (LVL-1)."""

    index: int  # 0-based index into the schedule
    level: Level
    started_at: int


def add_on_break_at(config: TournamentConfig) -> int | None:
    """When ``config``'s add-on break is due, in seconds since the start: the end of the rebuy
    period (``None`` unless the tournament has both rebuys and an add-on)."""
    if config.rebuys is None or config.add_on is None:
        return None
    return config.rebuys.period_minutes * 60


def clock_for(config: TournamentConfig, *, start_wall_seconds: int = 0) -> LevelClock:
    """The level clock of ``config`` started at ``start_wall_seconds`` on the wall clock."""
    return LevelClock(
        config.levels,
        config.breaks,
        start_wall_seconds=start_wall_seconds,
        add_on_break_at=add_on_break_at(config),
    )


def hand_for_hand_deduction_seconds(level_minutes: int, setting_minutes: int | None = None) -> int:
    """HFH-1: seconds the level clock loses per hand-for-hand hand (the setting, else 1 min when
    levels are under 20 minutes, else 2)."""
    if setting_minutes is not None:
        return setting_minutes * 60
    return 60 if level_minutes < 20 else 120


class LevelClock:
    """Levels and breaks of one tournament. Pure: every answer is a function of ``now``."""

    def __init__(
        self,
        levels: Sequence[Level],
        breaks: Breaks,
        *,
        start_wall_seconds: int = 0,
        add_on_break_at: int | None = None,
    ) -> None:
        """``start_wall_seconds`` is the wall-clock start (any epoch; only its minute of the hour
        matters); ``add_on_break_at`` is when the rebuy period ends, in seconds since the start,
        for a tournament with an add-on (``None`` otherwise)."""
        if not levels:
            raise LevelsError("a tournament needs at least one level")
        self._levels = tuple(levels)
        self._breaks = breaks
        self._start_wall = start_wall_seconds
        self._add_on_pending = add_on_break_at
        self._add_on_window: BreakWindow | None = None  # once generated (even when 0 minutes long)
        self._windows: list[BreakWindow] = []
        # for bisection: each window's start and end, and the break seconds before each window
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._before: list[int] = []
        self._scheduled = 0  # scheduled breaks generated so far
        self._break_total = 0
        self._exhausted = breaks.mode is BreakMode.NONE and add_on_break_at is None
        self._generated_to = 0  # every break starting before this second is in ``_windows``
        # play seconds at which each level ends
        ends, total = [], 0
        for level in self._levels:
            total += level.minutes * 60
            ends.append(total)
        self._level_ends = tuple(ends)

    @property
    def levels(self) -> tuple[Level, ...]:
        return self._levels

    # -- breaks ---------------------------------------------------------------------------------

    def _next_scheduled_start(self) -> int | None:
        mode = self._breaks.mode
        if mode is BreakMode.HOURLY:
            first = (self._breaks.at_minute * 60 - self._start_wall % HOUR) % HOUR or HOUR
            return first + self._scheduled * HOUR
        if mode is BreakMode.EVERY:
            return (self._scheduled + 1) * self._breaks.every_minutes * 60 + self._break_total
        return None

    def _extend(self, horizon: int) -> None:
        """Generate break windows until one starts after ``horizon``."""
        while not self._exhausted and self._generated_to <= horizon:
            last_end = self._windows[-1].end if self._windows else 0
            scheduled = self._next_scheduled_start()
            addon = self._add_on_pending
            if addon is not None and (scheduled is None or addon < scheduled):
                start = max(addon, last_end)
                window = BreakWindow(start, start + self._breaks.addon_break_minutes * 60, BreakKind.ADD_ON)
                self._add_on_pending = None
                self._add_on_window = window
            elif scheduled is not None:
                start = max(scheduled, last_end)
                window = BreakWindow(start, start + self._breaks.minutes * 60, BreakKind.SCHEDULED)
                self._scheduled += 1
                if addon is not None and window.start <= addon < window.end:
                    self._add_on_pending = window.end
            else:
                self._exhausted = True
                return
            self._generated_to = window.start + 1
            if window.seconds > 0:  # a zero-minute break is no break
                self._windows.append(window)
                self._starts.append(window.start)
                self._ends.append(window.end)
                self._before.append(self._break_total)
                self._break_total += window.seconds

    def add_on_break(self) -> BreakWindow | None:
        """BRK-T1/REG-5: the add-on break (``None`` without one): from the end of the rebuy period,
        or from the end of the scheduled break(s) that period ends in. Its length is
        ``addon_break_minutes`` and may be 0 (no pause for the tables, see ``Registration``)."""
        # every round of ``_extend`` either generates the add-on window or moves past a
        # scheduled break that starts no later than it, so this ends
        while self._add_on_pending is not None and not self._exhausted:
            self._extend(self._add_on_pending)
        return self._add_on_window

    def breaks_until(self, now: int) -> tuple[BreakWindow, ...]:
        """Every break that has started by ``now``."""
        self._extend(now)
        return tuple(self._windows[: bisect_right(self._starts, now)])

    def break_at(self, now: int) -> BreakWindow | None:
        """The break in force at ``now``, if any."""
        self._extend(now)
        # windows never overlap: the only candidate is the last one starting at or before now
        index = bisect_right(self._starts, now) - 1
        if index >= 0 and now < self._ends[index]:
            return self._windows[index]
        return None

    def next_break(self, now: int) -> BreakWindow | None:
        """The break in force at ``now`` or, if none, the next one to start (``None``: no more)."""
        self._extend(now)  # afterwards a window starting after ``now`` exists, unless none ever will
        index = bisect_right(self._ends, now)
        return self._windows[index] if index < len(self._windows) else None

    def break_seconds_until(self, now: int) -> int:
        """Seconds of break between the start and ``now``."""
        self._extend(now)
        index = bisect_left(self._starts, now) - 1  # the last window starting before now
        if index < 0:
            return 0
        return self._before[index] + min(self._ends[index], now) - self._starts[index]

    def pause_seconds_between(self, start: int, end: int) -> int:
        """HFH-1: the seconds of ``[start, end)`` that are not break time.

        The level clock stands still while a synchronized hand-for-hand round is played; the part
        of that time inside a break is already left out of play time as break time, so only the
        rest may be added to ``paused_seconds`` (counting it twice runs the clock backwards).
        """
        if end <= start:
            return 0
        return (end - start) - (self.break_seconds_until(end) - self.break_seconds_until(start))

    # -- levels ---------------------------------------------------------------------------------

    def play_seconds(self, now: int, *, paused_seconds: int = 0, deducted_seconds: int = 0) -> int:
        """Seconds of level clock run by ``now``: elapsed minus breaks minus pauses plus
        hand-for-hand deductions."""
        if now < 0:
            raise LevelsError(f"now is seconds since the start and cannot be negative, got {now}")
        return max(0, now - self.break_seconds_until(now) - paused_seconds + deducted_seconds)

    def level_index_at(self, now: int, *, paused_seconds: int = 0, deducted_seconds: int = 0) -> int:
        """LVL-1: the 0-based level in force at ``now`` (the last level stays once the schedule ends)."""
        played = self.play_seconds(now, paused_seconds=paused_seconds, deducted_seconds=deducted_seconds)
        for index, end in enumerate(self._level_ends):
            if played < end:
                return index
        return len(self._levels) - 1

    def level_at(self, now: int, *, paused_seconds: int = 0, deducted_seconds: int = 0) -> Level:
        return self._levels[
            self.level_index_at(now, paused_seconds=paused_seconds, deducted_seconds=deducted_seconds)
        ]

    # -- starting a hand ------------------------------------------------------------------------

    def verify_start_hand(self, now: int) -> None:
        """Raise ``OnBreak`` if a table may not start a hand at ``now`` (BRK-T1)."""
        window = self.break_at(now)
        if window is not None:
            raise OnBreak(
                f"on a {window.kind} break until {window.end} s; a hand may start from then (now {now} s)"
            )

    can_start_hand = can(verify_start_hand, OnBreak)

    def start_hand(self, now: int, *, paused_seconds: int = 0, deducted_seconds: int = 0) -> HandLevel:
        """Start a hand at ``now``: the level in force now is the hand's level to its end (LVL-1)."""
        self.verify_start_hand(now)
        index = self.level_index_at(now, paused_seconds=paused_seconds, deducted_seconds=deducted_seconds)
        return HandLevel(index, self._levels[index], now)

    def resume_at(self, now: int) -> int:
        """When a table that finished a hand at ``now`` may start the next one (now, or a break's end)."""
        window = self.break_at(now)
        while window is not None:  # an add-on break may follow a scheduled one at once
            now = window.end
            window = self.break_at(now)
        return now
