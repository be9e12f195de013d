"""Hand-for-hand play (HFH-1): a barrier that keeps every table on the same hand.

When the trigger is reached (by default: the next elimination is the money bubble) the tables
play synchronized rounds. Invariants of ``HandForHand``:

- in a round each table deals at most one hand; a table that has dealt waits until every table
  of the round has finished its hand (``TableMustWait`` says which ones it waits for);
- a round closes when every table of the round has finished; it returns the round's
  eliminations as one batch, simultaneous for ELIM-2 across tables, and the seconds the level
  clock loses for that hand;
- the set of tables changes only between rounds (tables are broken and balanced between hands).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.tournament.config import HandForHand as HandForHandSettings
from engine.tournament.config import HandForHandTrigger
from engine.tournament.standings import Bust
from engine.triads import can


class HandForHandError(ValueError):
    """A table did something the barrier does not allow now."""


class TableMustWait(HandForHandError):
    """The table already played this round's hand; it waits for the other tables."""


class UnknownTable(HandForHandError):
    """The table is not one of the tables playing hand-for-hand."""


class RoundInProgress(HandForHandError):
    """The set of tables can only change between rounds."""


def bubble_margin(settings: HandForHandSettings, tables: int) -> int:
    """How many players before the money bubble hand-for-hand starts (HFH-1): the setting, or by
    default one per table in play. Hands under way when it fires finish unsynchronized, and a
    hand busts well under one player per table on average, so the bubble then bursts inside a
    synchronized hand (``scripts/hand_for_hand_bubble.py`` measures how often)."""
    if settings.bubble_margin is not None:
        return settings.bubble_margin
    return max(1, tables)


def hand_for_hand_due(
    settings: HandForHandSettings,
    players_left: int,
    places_paid: int,
    tables: int,
    *,
    in_force: bool = False,
) -> bool:
    """HFH-1 trigger: is hand-for-hand play in force with these players, paid places and tables?

    Never with one table left (there is nothing to synchronize). ``bubble``: from
    ``bubble_margin`` players before the money bubble (``players_left <= places_paid + margin``)
    until it bursts; once ``in_force`` it stays until the bubble bursts, however the margin
    shrinks as tables break. ``players_left``: at or under the set number of players;
    ``never``: never.
    """
    if tables <= 1:
        return False
    if settings.trigger is HandForHandTrigger.BUBBLE:
        if places_paid <= 0 or players_left <= places_paid:
            return False
        return in_force or players_left <= places_paid + bubble_margin(settings, tables)
    if settings.trigger is HandForHandTrigger.PLAYERS_LEFT:
        return settings.players_left is not None and players_left <= settings.players_left
    return False


@dataclass(frozen=True, slots=True)
class HandDealt:
    round: int
    table_id: int


@dataclass(frozen=True, slots=True)
class RoundClosed:
    """Every table has finished hand-for-hand round ``round``; ``busts`` were simultaneous."""

    round: int
    tables: tuple[int, ...]
    busts: tuple[Bust, ...]
    deduction_seconds: int


HAND_FOR_HAND_SNAPSHOT_VERSION = 1


@dataclass(frozen=True, slots=True)
class HandForHandSnapshot:
    """A ``HandForHand`` barrier as plain, versioned data."""

    version: int
    tables: tuple[int, ...]
    deduction_seconds: int
    round: int
    dealt: tuple[int, ...]
    finished: tuple[int, ...]
    busts: tuple[Bust, ...]
    hands: int


class HandForHand:
    """The HFH-1 barrier over a set of tables (see the module docstring)."""

    def __init__(self, tables: Iterable[int], deduction_seconds: int) -> None:
        self._tables: frozenset[int] = frozenset(tables)
        self._deduction = deduction_seconds
        self._round = 1
        self._dealt: set[int] = set()
        self._finished: set[int] = set()
        self._busts: list[Bust] = []
        self.hands = 0  # synchronized hands closed so far

    @property
    def round(self) -> int:
        return self._round

    @property
    def tables(self) -> frozenset[int]:
        return self._tables

    @property
    def in_progress(self) -> bool:
        return bool(self._dealt)

    def waiting_for(self) -> tuple[int, ...]:
        """Tables that have not finished this round's hand."""
        return tuple(sorted(self._tables - self._finished))

    # -- the table set, between rounds ----------------------------------------------------------

    def verify_set_tables(self, tables: Iterable[int]) -> None:
        if self._dealt:
            raise RoundInProgress(
                f"round {self._round} is under way at tables {sorted(self._dealt)}; "
                "change the tables when it closes"
            )

    can_set_tables = can(verify_set_tables, HandForHandError)

    def set_tables(self, tables: Iterable[int]) -> None:
        """Replace the tables taking part (after breaks and moves, before the next round)."""
        self.verify_set_tables(tables)
        self._tables = frozenset(tables)

    # -- dealing --------------------------------------------------------------------------------

    def verify_deal(self, table_id: int) -> None:
        if table_id not in self._tables:
            raise UnknownTable(
                f"table {table_id} is not playing hand-for-hand (tables {sorted(self._tables)})"
            )
        if table_id in self._dealt:
            raise TableMustWait(
                f"table {table_id} already dealt hand-for-hand round {self._round}; "
                f"it waits for tables {list(self.waiting_for())}"
            )

    can_deal = can(verify_deal, HandForHandError)

    def deal(self, table_id: int) -> HandDealt:
        """Table ``table_id`` starts this round's hand."""
        self.verify_deal(table_id)
        self._dealt.add(table_id)
        return HandDealt(self._round, table_id)

    def cancel(self, table_id: int) -> None:
        """CRASH-1: the hand ``table_id`` dealt this round was rolled back; it deals again."""
        self._dealt.discard(table_id)

    def snapshot(self) -> HandForHandSnapshot:
        return HandForHandSnapshot(
            HAND_FOR_HAND_SNAPSHOT_VERSION,
            tuple(sorted(self._tables)),
            self._deduction,
            self._round,
            tuple(sorted(self._dealt)),
            tuple(sorted(self._finished)),
            tuple(self._busts),
            self.hands,
        )

    @classmethod
    def restore(cls, snapshot: HandForHandSnapshot) -> HandForHand:
        if snapshot.version != HAND_FOR_HAND_SNAPSHOT_VERSION:
            raise HandForHandError(
                f"hand-for-hand snapshot version {snapshot.version} is not {HAND_FOR_HAND_SNAPSHOT_VERSION}"
            )
        barrier = cls(snapshot.tables, snapshot.deduction_seconds)
        barrier._round = snapshot.round
        barrier._dealt = set(snapshot.dealt)
        barrier._finished = set(snapshot.finished)
        barrier._busts = list(snapshot.busts)
        barrier.hands = snapshot.hands
        return barrier

    # -- finishing ------------------------------------------------------------------------------

    def verify_finish(self, table_id: int) -> None:
        if table_id not in self._dealt or table_id in self._finished:
            raise HandForHandError(
                f"table {table_id} has no hand-for-hand hand under way in round {self._round}"
            )

    can_finish = can(verify_finish, HandForHandError)

    def finish(self, table_id: int, busts: Sequence[Bust] = ()) -> RoundClosed | None:
        """Table ``table_id`` finished its hand with ``busts``; returns the ``RoundClosed`` when it
        was the last table of the round, else ``None`` (the eliminations wait for the others)."""
        self.verify_finish(table_id)
        self._finished.add(table_id)
        self._busts.extend(busts)
        if self._finished < self._tables:
            return None
        closed = RoundClosed(self._round, tuple(sorted(self._dealt)), tuple(self._busts), self._deduction)
        self._round += 1
        self.hands += 1
        self._dealt.clear()
        self._finished.clear()
        self._busts = []
        return closed
