"""What the server sends: ``ServerMessage``, one tagged union.

A client must be ready for a message it does not expect at any moment (a ``seated`` after a
move, a ``goodbye`` before a shutdown); replies to a request name its ``request_id``.
"""

from __future__ import annotations

from typing import get_args

from protocol.errors import ErrorCode
from protocol.kinds import (
    AnteKind,
    Game,
    GoodbyeReason,
    HoldReason,
    Limit,
    OperatorEventKind,
    RegistrationStatus,
    Role,
    SeatReason,
    Street,
    TableStatus,
    TournamentStatus,
    UnseatReason,
)
from protocol.structs import Card, Count, Id, Message, Millis, Positive, Record, Seat
from protocol.table_events import Hex64, LegalView, SeatView, TableEventBody
from protocol.tournament_events import PlaceResult, TournamentEventBody

# --- the session ----------------------------------------------------------------------------------


class Welcome(Message, frozen=True, kw_only=True):
    """The answer to a good ``hello``. ``player`` names the player the token belongs to (``None``
    for operators and observers). The server pings the connection every ``heartbeat_seconds``
    (WebSocket ping frames). ``server_time_ms`` is the server's clock, to set deadlines against."""

    protocol: Count
    session_id: str
    player: str | None
    role: Role
    server_time_ms: Millis
    heartbeat_seconds: Positive


class Pong(Message, frozen=True, kw_only=True):
    nonce: Count
    server_time_ms: Millis


class Error(Message, frozen=True, kw_only=True):
    """A refused request (or frame): nothing changed. ``request_id`` names the request (its
    ``request_id``, or an ``act``'s ``action_id``) when it could be read. ``fatal``: the server
    closes the connection next (after a ``goodbye``)."""

    code: ErrorCode
    message: str
    request_id: str | None
    fatal: bool


class Ack(Message, frozen=True, kw_only=True):
    """The request ``request_id`` (or an ``act``'s ``action_id``) succeeded; its effects arrive as
    their own messages, possibly before this one."""

    request_id: str


class Goodbye(Message, frozen=True, kw_only=True):
    """The server closes the connection next, for ``reason``; ``message`` says more."""

    reason: GoodbyeReason
    message: str


# --- lobby and money ----------------------------------------------------------------------------


class TournamentSummary(Record, frozen=True, kw_only=True):
    """One tournament as the lobby lists it. Money in cents. ``start_ms`` is the scheduled start;
    ``late_registration_until_ms`` the end of late registration (``None``: none, or not known
    before the start). ``entrants`` counts entries (re-entries included); ``players_left`` who
    still has chips."""

    tournament_id: Id
    name: str
    status: TournamentStatus
    game: Game
    limit: Limit
    buy_in_cents: Count
    fee_cents: Count
    starting_stack: Count
    entrants: Count
    players_left: Count
    max_players: Count
    prize_pool_cents: Count
    guarantee_cents: Count
    start_ms: Millis
    late_registration_until_ms: Millis | None
    rebuys: bool
    add_on: bool


class Lobby(Message, frozen=True, kw_only=True):
    """Every tournament listed, in start order (sent on ``lobby_subscribe``)."""

    tournaments: list[TournamentSummary]


class LobbyUpdate(Message, frozen=True, kw_only=True):
    """A tournament was added to the lobby or changed: replace it (by ``tournament_id``)."""

    tournament: TournamentSummary


class LobbyRemoved(Message, frozen=True, kw_only=True):
    """A tournament left the lobby (over for a while, or withdrawn)."""

    tournament_id: Id


class Balance(Message, frozen=True, kw_only=True):
    """The player's available money, after a hello and after every change."""

    cents: Count


class Registration(Message, frozen=True, kw_only=True):
    """Where the player stands in a tournament: after a hello (for each tournament they are in),
    and after every change (registered, waiting, promoted, unregistered, seated, out)."""

    tournament_id: Id
    status: RegistrationStatus
    waiting_position: Positive | None


# --- seats and tables ---------------------------------------------------------------------------


class Seated(Message, frozen=True, kw_only=True):
    """The player sits at ``table_id``, ``seat`` (first seat, every move, after a rebuy, and again
    after a hello). The server follows that table for the player at once (a ``table_snapshot``
    follows) and stops sending the table they left."""

    tournament_id: Id
    table_id: Positive
    seat: Seat
    reason: SeatReason


class Unseated(Message, frozen=True, kw_only=True):
    """The player no longer sits at ``table_id`` in the tournament, for ``reason``."""

    tournament_id: Id
    table_id: Positive
    reason: UnseatReason


class TableSnapshot(Message, frozen=True, kw_only=True):
    """A table as it is now, as the recipient may see it; the ``table_event`` that follows has
    ``seq + 1``. ``hand_number``, ``button``, ``street``, ``commitment`` are ``None`` between
    hands; ``pots`` are the chips collected from earlier streets (main pot first; this street's
    bets are in each seat's ``bet``); ``to_act`` and ``deadline_ms`` name whose turn it is and
    until when; ``legal`` only in the snapshot for that seat. Blinds and ante are those of the
    hand under way, else of the current level."""

    table_id: Positive
    seq: Count
    tournament_id: Id
    table_size: Seat
    status: TableStatus
    hold_reason: HoldReason | None
    hold_until_ms: Millis | None
    level: Count
    small_blind: Count
    big_blind: Count
    ante: Count
    ante_kind: AnteKind
    limit: Limit
    game: Game
    hand_number: Positive | None
    button: Seat | None
    seats: list[SeatView]
    pots: list[Count]
    board: list[Card]
    street: Street | None
    to_act: Seat | None
    deadline_ms: Millis | None
    legal: LegalView | None
    commitment: Hex64 | None


class TableEvent(Message, frozen=True, kw_only=True):
    """The event numbered ``seq`` at ``table_id`` (seq counts up by one per event of that table)."""

    table_id: Positive
    seq: Positive
    event: TableEventBody


class ChatLine(Message, frozen=True, kw_only=True, tag="chat"):
    """A chat line at ``table_id`` from ``player``, as the server received it at ``at_ms``."""

    table_id: Positive
    player: str
    text: str
    at_ms: Millis


# --- tournaments --------------------------------------------------------------------------------


class TournamentState(Message, frozen=True, kw_only=True):
    """A tournament's clock and numbers, on ``tournament_subscribe`` and whenever they change.
    ``level`` is 1-based (0 before the start); ``next_level_ms``, ``next_break_ms`` and
    ``break_until_ms`` are ``None`` when not scheduled (or the clock is stopped). ``payouts_cents``
    is the prize of each paid place, first place first; ``payouts_final`` says whether it can
    still change (entries, rebuys, add-ons still open)."""

    tournament_id: Id
    status: TournamentStatus
    paused: bool
    level: Count
    small_blind: Count
    big_blind: Count
    ante: Count
    ante_kind: AnteKind
    next_level_ms: Millis | None
    next_break_ms: Millis | None
    break_until_ms: Millis | None
    players_left: Count
    entrants: Count
    average_stack: Count
    prize_pool_cents: Count
    payouts_cents: list[Count]
    payouts_final: bool
    hand_for_hand: bool


class TournamentEvent(Message, frozen=True, kw_only=True):
    tournament_id: Id
    event: TournamentEventBody


class Notice(Message, frozen=True, kw_only=True):
    """An operator's message to the players of a tournament, of one table, or to one player; and,
    when a tournament is cancelled, what its settlement gave the player."""

    tournament_id: Id
    table_id: Positive | None
    text: str
    at_ms: Millis


# --- operators --------------------------------------------------------------------------------


class OpPlayer(Record, frozen=True, kw_only=True):
    """A player of a tournament as an operator sees them. ``table_id``, ``seat`` and ``chips``
    while seated; ``place`` and ``prize_cents`` once out; ``away``: dealt in but acted for."""

    player: str
    status: RegistrationStatus
    table_id: Positive | None
    seat: Seat | None
    chips: Count | None
    away: bool
    place: Positive | None
    prize_cents: Count | None


class OpTournaments(Message, frozen=True, kw_only=True):
    """Answers ``op_tournament_list``."""

    request_id: Id
    tournaments: list[TournamentSummary]


class OpTournament(Message, frozen=True, kw_only=True):
    """Answers ``op_tournament_show``, ``op_tournament_create`` and ``op_tournament_edit``:
    the tournament's summary, its state once loaded, its definition and its players."""

    request_id: Id
    tournament: TournamentSummary
    state: TournamentState | None
    toml: str
    players: list[OpPlayer]


class OpResults(Message, frozen=True, kw_only=True):
    """Answers ``op_tournament_results``: the places decided so far, first place first."""

    request_id: Id
    tournament_id: Id
    status: TournamentStatus
    prize_pool_cents: Count
    results: list[PlaceResult]


class OpEvent(Message, frozen=True, kw_only=True):
    """One entry of the operators' event stream (``op_subscribe``). The fields a ``kind`` uses
    are set, the others ``None``: ``player`` (registered, unregistered, eliminated, paid),
    ``place`` (eliminated), ``cents`` and ``reason`` (paid: prize, deal, settlement, refund,
    bounty), ``status`` (status), ``operator`` and ``command`` (command), ``text`` (what
    happened, in words, for every kind)."""

    tournament_id: Id
    kind: OperatorEventKind
    at_ms: Millis
    text: str
    player: str | None = None
    place: Positive | None = None
    cents: Count | None = None
    reason: str | None = None
    status: TournamentStatus | None = None
    operator: str | None = None
    command: str | None = None


# --- stored hands --------------------------------------------------------------------------------


class HandSummary(Record, frozen=True, kw_only=True):
    """A stored hand in a ``hand_histories`` list: ``players`` dealt in, in seat order."""

    hand_id: str
    tournament_id: str
    table_id: Positive
    hand_number: Positive
    finished_at_ms: Millis
    players: list[str]


class HandHistories(Message, frozen=True, kw_only=True):
    """The answer to ``hand_list``: stored hands, newest first."""

    request_id: str
    hands: list[HandSummary]


class HandRecord(Message, frozen=True, kw_only=True):
    """The answer to ``hand_history``: one stored hand as the asker may see it, in the fields of
    the Poker Hand History format (PHH). ``players``, ``seats``, ``starting_stacks``,
    ``finishing_stacks``, ``antes`` and ``blinds_or_straddles`` are in PHH player order (the
    first seat after the button first, the button last); ``actions`` are PHH action lines in order (``d dh p1
    AsKd`` deals hole cards, ``????`` where the asker may not see them; ``d db`` the board;
    ``pN f``, ``cc``, ``cbr AMOUNT``; ``pN sm CARDS`` shows at the showdown)."""

    request_id: str
    hand_id: str
    tournament_id: str
    table_id: Positive
    hand_number: Positive
    finished_at_ms: Millis
    variant: str
    seat_count: Positive
    players: list[str]
    seats: list[Positive]
    starting_stacks: list[Count]
    finishing_stacks: list[Count]
    antes: list[Count]
    blinds_or_straddles: list[Count]
    actions: list[str]


ServerMessage = (
    Welcome
    | Pong
    | Error
    | Ack
    | Goodbye
    | Lobby
    | LobbyUpdate
    | LobbyRemoved
    | Balance
    | Registration
    | Seated
    | Unseated
    | TableSnapshot
    | TableEvent
    | ChatLine
    | TournamentState
    | TournamentEvent
    | Notice
    | OpTournaments
    | OpTournament
    | OpResults
    | OpEvent
    | HandHistories
    | HandRecord
)

SERVER_MESSAGE_TYPES: tuple[type[Message], ...] = get_args(ServerMessage)
"""Every server message class, in the order of the union."""
