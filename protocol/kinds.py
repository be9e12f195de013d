"""The enumerations the messages use. On the wire each is its value, a snake_case string.

They are the protocol's own words, not the engine's: the server maps its values onto these in one
place (``server.views`` for tables), so a client never sees an engine spelling.
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """Who a connection speaks for, decided by the token given in ``hello``."""

    PLAYER = "player"  # a player's token: plays, sees its own hole cards
    OPERATOR = "operator"  # an operator's token: sees every hole card (never the deck before it is used)
    OBSERVER = "observer"  # no token: the rail; sees lobby, tournaments and tables, no hole card


class GoodbyeReason(StrEnum):
    """Why the server is about to close the connection (``goodbye``)."""

    TAKEN_OVER = "taken_over"  # the same player logged in on another connection
    SHUTDOWN = "shutdown"  # the server is stopping; reconnect later
    TOO_MANY_ERRORS = "too_many_errors"  # the connection sent too many refused frames
    FATAL_ERROR = "fatal_error"  # after an ``error`` with ``fatal: true`` (a bad token, a wrong version ...)
    HELLO_TIMEOUT = "hello_timeout"  # no ``hello`` in time after the connection opened
    TOO_SLOW = "too_slow"  # the client did not read what it was sent, even after a resync
    KICKED = "kicked"  # an operator closed this session

    @property
    def close_code(self) -> int:
        """The WebSocket close code the server closes with after this goodbye (RFC 6455 7.4.1):
        1001 going away for a shutdown, 1008 policy violation for a client at fault, 1000 else."""
        return _CLOSE_CODES.get(self, 1000)


_CLOSE_CODES = {
    GoodbyeReason.SHUTDOWN: 1001,
    GoodbyeReason.TOO_MANY_ERRORS: 1008,
    GoodbyeReason.FATAL_ERROR: 1008,
    GoodbyeReason.HELLO_TIMEOUT: 1008,
    GoodbyeReason.TOO_SLOW: 1008,
}


class ActionKind(StrEnum):
    """A betting decision. ``check_or_call`` is only ever requested (``act``): the table records
    the check or the call it became."""

    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    BET = "bet"
    RAISE = "raise"
    CHECK_OR_CALL = "check_or_call"


class Street(StrEnum):
    PREFLOP = "preflop"
    FLOP = "flop"
    TURN = "turn"
    RIVER = "river"


class BlindKind(StrEnum):
    SMALL = "small"
    BIG = "big"


class AnteKind(StrEnum):
    NONE = "none"
    EACH = "each"  # every player dealt in posts the ante
    BIG_BLIND = "big_blind"  # one ante for the table, posted by the big blind


class Limit(StrEnum):
    NO_LIMIT = "no_limit"
    POT_LIMIT = "pot_limit"
    FIXED_LIMIT = "fixed_limit"


class Game(StrEnum):
    HOLDEM = "holdem"  # two hole cards
    OMAHA = "omaha"  # four hole cards


class KillReason(StrEnum):
    """Why a hand was killed (folded by the table, out of turn if need be)."""

    PENALTY = "penalty"  # a sit-out penalty: killed at the deal
    RULING = "ruling"  # an operator's ruling during the hand


class TableStatus(StrEnum):
    PLAYING = "playing"  # a hand is under way
    IDLE = "idle"  # between hands (the next one is about to be dealt, or too few players)
    HELD = "held"  # between hands and not dealing, for ``hold_reason``
    CLOSED = "closed"  # the table broke or the tournament ended; no more events


class HoldReason(StrEnum):
    """Why a table between hands does not deal."""

    BREAK = "break"  # a scheduled or add-on break
    HAND_FOR_HAND = "hand_for_hand"  # waiting for the other tables to finish their hand
    BALANCING = "balancing"  # players move here or away once a hand elsewhere ends
    BREAKING = "breaking"  # the table closes once its players have seats elsewhere
    PAUSED = "paused"  # an operator paused the tournament
    DEAL = "deal"  # the players are talking about a deal
    REBUY = "rebuy"  # a busted player decides whether to rebuy
    SHORT_HANDED = "short_handed"  # fewer than two players: waiting for players to be moved in


class SeatChange(StrEnum):
    """What changed at a seat between hands (``seat_changed``)."""

    JOINED = "joined"  # a player took the seat (tournament start, late registration)
    MOVED_IN = "moved_in"  # a player moved here from another table
    MOVED_OUT = "moved_out"  # the player moved to another table; the seat is empty
    ELIMINATED = "eliminated"  # the player is out; the seat is empty
    DISQUALIFIED = "disqualified"  # an operator removed the player and their chips
    CHIPS_ADDED = "chips_added"  # a rebuy or an add-on reached the stack
    AWAY = "away"  # the player sat out or timed out: dealt in, acted for at the shot clock
    BACK = "back"  # the player is back


class SeatReason(StrEnum):
    """Why the player sits where ``seated`` says."""

    START = "start"  # the tournament's seat draw
    LATE_REGISTRATION = "late_registration"
    BALANCE = "balance"  # moved to balance the tables
    TABLE_BROKEN = "table_broken"  # the player's table closed
    REDRAW = "redraw"  # everyone was reseated at random (the final table)
    REBUY = "rebuy"  # back in the seat after a rebuy
    RECONNECT = "reconnect"  # where the player already sits, told again after a hello


class UnseatReason(StrEnum):
    """Why the player no longer sits anywhere in a tournament (``unseated``)."""

    ELIMINATED = "eliminated"
    DISQUALIFIED = "disqualified"
    TOURNAMENT_ENDED = "tournament_ended"
    TOURNAMENT_CANCELLED = "tournament_cancelled"


class TournamentStatus(StrEnum):
    ANNOUNCED = "announced"  # listed; registration not open yet
    REGISTERING = "registering"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class RegistrationStatus(StrEnum):
    """Where a player stands in one tournament (``registration``)."""

    REGISTERED = "registered"  # has a place; the tournament has not seated them yet
    WAITING = "waiting"  # on the waiting list (``waiting_position`` says where)
    UNREGISTERED = "unregistered"  # unregistered, or refunded from the waiting list
    PLAYING = "playing"  # seated (``seated`` says where)
    ELIMINATED = "eliminated"  # out of the tournament (or it ended for them)


class BreakKind(StrEnum):
    SCHEDULED = "scheduled"
    ADD_ON = "add_on"  # the short break when the rebuy period ends, to buy add-ons


class CloseReason(StrEnum):
    """Why (late) registration closed."""

    NOT_OFFERED = "not_offered"  # the tournament has no late registration
    TIME = "time"  # the late registration period is over
    SEATS_FULL = "seats_full"  # every seat at the tables is taken
    FULL = "full"  # the maximum number of players registered
    FIRST_ELIMINATION = "first_elimination"
    NOT_STARTED = "not_started"  # the tournament has not started: late registration is not open yet


class SettlementKind(StrEnum):
    """How a cancelled tournament's money was settled (docs/payouts.md)."""

    REFUND_ALL = "refund_all"  # before the start: every registration refunded
    ROLLBACK = "rollback"  # early: every entry's buy-in and fee refunded
    PRIZE_POOL = "prize_pool"  # the prize pool paid out to the players left
    RETURN_AND_SHARE = "return_and_share"  # contributions returned plus a share of the eliminated's


class PurchaseKind(StrEnum):
    ENTRY = "entry"
    RE_ENTRY = "re_entry"
    REBUY = "rebuy"
    ADD_ON = "add_on"


class DealMethod(StrEnum):
    """How a final-table deal divides the prizes not yet paid (DEAL-3)."""

    ICM = "icm"
    CHIP_CHOP = "chip_chop"


class DealPhase(StrEnum):
    ASKING = "asking"  # some players have asked; the clock runs
    NEGOTIATING = "negotiating"  # every player asked: the clock is stopped
    AGREED = "agreed"
    ABANDONED = "abandoned"


class InMoneyMethod(StrEnum):
    """How a cancelled tournament's money is shared by the players left (CANCEL-1)."""

    CHIPS = "chips"
    ICM = "icm"


class OperatorEventKind(StrEnum):
    """What an ``op_event`` reports."""

    REGISTERED = "registered"
    UNREGISTERED = "unregistered"
    ELIMINATED = "eliminated"
    PAID = "paid"  # money left the tournament for a player: a prize, a deal share, a settlement, a refund
    STATUS = "status"  # the tournament's status changed
    COMMAND = "command"  # an operator's command was carried out
    ERROR = "error"  # something went wrong that an operator should look at
