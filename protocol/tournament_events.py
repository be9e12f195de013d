"""What happens in a tournament: the ``event`` of a ``tournament_event``.

They go to every connection subscribed to the tournament (``tournament_subscribe``) and to its
players, except ``rebuy_offered``, which goes to the player it is offered to only. Money is in
integer cents, times in integer milliseconds since the Unix epoch.
"""

from __future__ import annotations

from typing import get_args

from protocol.kinds import AnteKind, BreakKind, CloseReason, DealMethod, DealPhase, SettlementKind
from protocol.structs import Count, Message, Millis, Positive, Record


class PlaceResult(Record, frozen=True, kw_only=True):
    """A place at the end: the players who finished there (several when they shared it) and
    the prize each of them won."""

    place: Positive
    players: list[str]
    prize_cents: Count


class TournamentStarted(Message, frozen=True, kw_only=True):
    players: Count
    tables: Count


class RegistrationClosed(Message, frozen=True, kw_only=True):
    reason: CloseReason


class LevelStarted(Message, frozen=True, kw_only=True):
    """Level ``level`` (1-based) applies from the next hand each table deals, until ``ends_ms``
    (``None`` when the clock is stopped)."""

    level: Positive
    small_blind: Count
    big_blind: Count
    ante: Count
    ante_kind: AnteKind
    ends_ms: Millis | None


class BreakStarted(Message, frozen=True, kw_only=True):
    """Tables finish their hand and hold until ``until_ms``."""

    kind: BreakKind
    until_ms: Millis


class BreakEnded(Message, frozen=True, kw_only=True):
    pass


class AddOnsOffered(Message, frozen=True, kw_only=True):
    """Every player still in may buy the add-on (``add_on``) until ``until_ms``."""

    until_ms: Millis


class RebuyOffered(Message, frozen=True, kw_only=True):
    """To the busted player only: buy a rebuy (``rebuy``) before ``until_ms`` or be eliminated.
    The seat is kept and the table waits meanwhile."""

    until_ms: Millis


class HandForHandStarted(Message, frozen=True, kw_only=True):
    """No table starts a hand until every table has finished the last one (the bubble is near)."""

    players_left: Count
    places_paid: Count


class HandForHandEnded(Message, frozen=True, kw_only=True):
    hands: Count


class BubbleBurst(Message, frozen=True, kw_only=True):
    """Everyone left is in the money. ``in_sync``: the bursting elimination came in a
    hand-for-hand round."""

    in_sync: bool


class FinalTable(Message, frozen=True, kw_only=True):
    table_id: Positive


class Eliminated(Message, frozen=True, kw_only=True):
    """``player`` finished in ``place``; ``shared_places`` players busted together and share the
    prizes of the places they occupy (1 when alone). ``prize_cents`` is what ``player`` won."""

    player: str
    place: Positive
    shared_places: Positive
    prize_cents: Count


class Paused(Message, frozen=True, kw_only=True):
    """An operator paused the tournament: tables finish their hand and hold."""


class Resumed(Message, frozen=True, kw_only=True):
    pass


class TournamentEnded(Message, frozen=True, kw_only=True):
    results: list[PlaceResult]


class DealShare(Record, frozen=True, kw_only=True):
    """One player's part of a deal: their chips now and the cents the deal gives them."""

    player: str
    chips: Count
    cents: Count


class DealTalks(Message, frozen=True, kw_only=True):
    """DEAL-2/3: where the final table's deal talks stand. ``players``: everyone at the table
    (all must accept); ``asked`` and ``accepted`` so far; once proposed, ``method``, ``shares``
    and ``left_to_play_cents`` (kept to be played for); ``remaining_cents``: the prizes not yet
    paid, which the deal divides. The clock is stopped while ``phase`` is ``negotiating``."""

    phase: DealPhase
    players: list[str]
    asked: list[str]
    accepted: list[str]
    method: DealMethod | None
    shares: list[DealShare]
    left_to_play_cents: Count
    remaining_cents: Count


class DealDone(Message, frozen=True, kw_only=True):
    """DEAL-4: the deal was paid (balances follow). ``ends``: nothing was left to play for and
    the tournament is over; else play goes on for ``left_to_play_cents``."""

    shares: list[DealShare]
    left_to_play_cents: Count
    ends: bool


class Cancelled(Message, frozen=True, kw_only=True):
    """The tournament was cancelled and its money settled this way (balances follow)."""

    kind: SettlementKind


TournamentEventBody = (
    TournamentStarted
    | RegistrationClosed
    | LevelStarted
    | BreakStarted
    | BreakEnded
    | AddOnsOffered
    | RebuyOffered
    | HandForHandStarted
    | HandForHandEnded
    | BubbleBurst
    | FinalTable
    | Eliminated
    | Paused
    | Resumed
    | TournamentEnded
    | Cancelled
    | DealTalks
    | DealDone
)

TOURNAMENT_EVENT_TYPES: tuple[type[Message], ...] = get_args(TournamentEventBody)
"""Every tournament event class, in the order of the union."""
