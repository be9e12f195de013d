"""What the server's parts say to each other through ``server.bus``: the gateway, the tournament
coordinators and the table actors. Not the wire (``protocol`` is): these never leave the server.

Every message is a frozen dataclass of plain data (engine values, ``protocol`` structs, ints and
strings), so a bus between processes can encode it; the in-process bus passes them as they are.

Addresses and channels (``server.bus``):

- ``tournament_inbox(tid)``: a coordinator's inbox (requests from sessions, ``HandDone`` from its
  tables, ``PlayerAway`` ...);
- ``table_inbox(table_id)``: a table actor's inbox (``Deal``, ``TableUpdate``, ``Act`` ...);
- ``table_channel(table_id)``: what a table publishes to everyone following it (``TableFrames``);
- ``player_channel(name)``: messages for one player, wherever they are connected (``ToPlayer``);
- ``session_channel(session_id)``: replies to one connection (``ToSession``);
- ``tournament_channel(tid)``: a tournament's public messages (``ToSession``-like broadcasts);
- ``LOBBY``: lobby updates; ``OPERATORS``: the operators' event stream;
- ``table_host_inbox(host)``: a worker that hosts other workers' tables (``feltd serve
  --shard-tables``, ``server.table_host``): ``OpenTable``, ``ToTable``, ``DropTables``.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.betting import HandSetup
from engine.events import HandEvent
from engine.table import TableSnapshot
from engine.tournament.config import Level
from engine.tournament.director import DealHand, HoldReason
from protocol.client_messages import ClientMessage
from protocol.kinds import SeatChange
from protocol.server_messages import ServerMessage
from server.views import Views

LOBBY = "lobby"
OPERATORS = "operators"  # the operators' event stream, every tournament's
OPERATIONS = "operations"  # the server's inbox for operator requests no tournament answers


def desk_inbox(worker: str) -> str:
    """One worker's own operations desk (``worker``: its lease owner name): changes to the
    tournaments it runs, passed on by the desk that holds ``OPERATIONS``."""
    return f"{OPERATIONS}:{worker}"


def tournament_inbox(tournament_id: str) -> str:
    return f"tournament:{tournament_id}"


def tournament_of_inbox(address: str) -> str | None:
    """The tournament whose inbox ``address`` is, if it is one."""
    tournament, colon, rest = address.partition(":")
    return rest if tournament == "tournament" and colon and ":" not in rest else None


def tournament_channel(tournament_id: str) -> str:
    return f"tournament:{tournament_id}:events"


def operators_channel(tournament_id: str) -> str:
    """One tournament's part of the operators' event stream (everything also goes to OPERATORS)."""
    return f"operators:{tournament_id}"


def table_inbox(table_id: int) -> str:
    return f"table:{table_id}"


TABLE_HOSTS = "table-host:"  # the start of every table host's inbox address


def table_host_inbox(host_id: str) -> str:
    return f"{TABLE_HOSTS}{host_id}"


def table_channel(table_id: int) -> str:
    return f"table:{table_id}:events"


def player_channel(player: str) -> str:
    return f"player:{player}"


def session_channel(session_id: str) -> str:
    return f"session:{session_id}"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request: a connection, and the player behind it (``None``: an observer or an
    operator, ``operator`` set for the latter)."""

    session_id: str
    player: str | None
    operator: str | None = None


# --- sessions -> coordinators and tables ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Request:
    """A client's request, passed on as it came (already decoded and checked for shape);
    ``received_at`` is when its frame arrived (``time.perf_counter``), for the latency metric."""

    caller: Caller
    message: ClientMessage
    received_at: float = 0.0


@dataclass(frozen=True, slots=True)
class PlayerHello:
    """A player's session (re)opened: the coordinator tells it where the player stands in its
    tournament (``registration``, ``seated`` with reason ``reconnect``), then ``HelloAnswered``."""

    caller: Caller


@dataclass(frozen=True, slots=True)
class LobbyAsk:
    """A gateway that has just started (``feltd serve --role gateway``) asks a coordinator for
    its lobby summary: it missed those published before it listened."""


@dataclass(frozen=True, slots=True)
class HelloAnswered:
    """A coordinator has told a player's new session everything about its tournament."""

    tournament_id: str


@dataclass(frozen=True, slots=True)
class Follow:
    """``caller`` follows the table from ``last_seq`` (``None``: send a snapshot), seeing it as
    ``seat`` (the player's own seat there) or as the rail, or as an operator."""

    caller: Caller
    last_seq: int | None
    seat: int | None
    operator: bool = False
    request_id: str | None = None


# --- coordinators -> tables ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableUpdate:
    """The table's seats as the director has them now (``table``), the changes players see
    (``changes``: seat, kind, the player now there), and why it waits, if it does. Sent between
    hands, whenever the seats, the stacks or the hold change."""

    table: TableSnapshot
    changes: tuple[tuple[int, SeatChange], ...] = ()
    hold: HoldReason | None = None
    hold_until: float | None = None
    level: int = 0
    closed: bool = False
    stakes: Level | None = None  # the current level, for snapshots between hands
    time_banks: tuple[tuple[int, int], ...] = ()  # (seat, banks left) of every seated player


@dataclass(frozen=True, slots=True)
class Deal:
    """Deal this hand (the director's command) once the pause between hands is over."""

    command: DealHand
    table: TableSnapshot


# --- coordinators -> table hosts (``server.table_host``) ------------------------------------------


@dataclass(frozen=True, slots=True)
class OpenTable:
    """Start the actor of table ``table_id`` of ``tournament_id`` in the host's process; its
    ``epoch`` (greater at every opening of a tournament's table, across coordinators) goes with
    everything about it, so that what an older opening says is told apart."""

    table_id: int
    tournament_id: str
    epoch: int
    seq_from: int
    shot_clock: float
    hand_gap: float | None = None


@dataclass(frozen=True, slots=True)
class ToTable:
    """``message`` (a ``TableUpdate``, ``Deal`` or ``Request``) for the host's actor of table
    ``table_id`` opened with ``epoch``: it comes through the host's inbox, after the
    ``OpenTable``, in the order sent (the table's own address may not be in every process's
    directory yet)."""

    table_id: int
    epoch: int
    message: object


@dataclass(frozen=True, slots=True)
class DropTables:
    """Stop at once (no word to anyone) every actor of ``tournament_id`` opened with an epoch
    below ``epoch``: a coordinator that took the tournament over is about to open them again."""

    tournament_id: str
    epoch: int


# --- tables -> coordinators ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HandDone:
    """The hand ``hand_number`` at ``table_id`` is over: its finishing stacks by seat, the time banks
    each player spent in it, and what its history is rendered from (its setup and every event,
    operator events included), with when it started and ended."""

    table_id: int
    hand_number: int
    finishing_stacks: tuple[tuple[int, int], ...]
    banks_spent: tuple[tuple[str, int], ...]
    setup: HandSetup
    events: tuple[HandEvent, ...]
    level: int
    started_at: float
    ended_at: float
    epoch: int = 0  # the opening of the table that played it (``OpenTable.epoch``)


@dataclass(frozen=True, slots=True)
class PlayerAway:
    """A player timed out (away) or came back (CLK-1): the director marks the seat for the next
    hands' setups."""

    player: str
    away: bool


# --- anything -> sessions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToSession:
    """Send ``message`` to the connection(s) this is published to."""

    message: ServerMessage


@dataclass(frozen=True, slots=True)
class Resumed:
    """Published on ``tournament_channel`` when a coordinator has restored its tournament from the
    journal (its worker died or stopped, or the server restarted): what the sessions sent the
    one before it, and what it had not answered, is lost. A gateway asks again, for each of its
    sessions following the tournament, where the player sits (``PlayerHello``) and for a
    snapshot of each table it still waits for."""

    tournament_id: str


@dataclass(frozen=True, slots=True)
class ToPlayer:
    """A message for one player; ``seated``/``unseated`` also change what their session follows."""

    message: ServerMessage


@dataclass(frozen=True, slots=True)
class TableFrames:
    """One table event (or snapshot), in the copy each audience may see (``server.views``)."""

    table_id: int
    seq: int
    views: Views[ServerMessage]


@dataclass(frozen=True, slots=True)
class Resync:
    """Answer to ``Follow`` for one connection: the frames to send it (a snapshot, or the events
    after its last seq), in order."""

    table_id: int
    frames: tuple[ServerMessage, ...]
