"""What a client sends: ``ClientMessage``, one tagged union.

Conventions (docs/protocol.md has the rules and examples):

- ``request_id``: a string the client chooses. Where it is optional, a request that carries one
  is answered by exactly one ``ack`` or one ``error`` naming it; without one, success is silent
  (its effects arrive as their own messages) and an error names no request. Where it is required
  (the requests that move money), it is also the idempotency key: the same ``request_id`` sent
  again (a resend after a reconnect) is answered as the first one was and moves no money twice.
- ``act`` has an ``action_id`` instead, with the same idempotency within the hand.

Operators' requests (``op_...``) and the final-table deal requests are in
``protocol.operator_requests``; they are members of ``ClientMessage`` too.
"""

from __future__ import annotations

from typing import Annotated, get_args

import msgspec

from protocol import CHAT_MAX_CHARS, ID_MAX_CHARS, TOKEN_MAX_CHARS
from protocol.kinds import ActionKind
from protocol.operator_requests import DealRequest, OperatorRequest
from protocol.structs import Count, Id, Message, Positive, Record

MAX_RESUME_TABLES = 16


class Resume(Record, frozen=True, kw_only=True):
    """A table the client was following and the last ``seq`` it received there."""

    table_id: Positive
    last_seq: Count


class Hello(Message, frozen=True, kw_only=True):
    """The first message on a connection. ``token`` is a player's or an operator's access token
    (``feltd admin player add`` prints a player's); ``None`` logs in as an observer. ``client``
    names the client software (free text, for the server's logs). ``resume`` lists the tables
    the client followed before a reconnect, each with the last ``seq`` it received."""

    protocol: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)]
    token: Annotated[str, msgspec.Meta(min_length=1, max_length=TOKEN_MAX_CHARS)] | None = None
    client: Annotated[str, msgspec.Meta(max_length=ID_MAX_CHARS)] = ""
    resume: Annotated[list[Resume], msgspec.Meta(max_length=MAX_RESUME_TABLES)] = msgspec.field(
        default_factory=list
    )


class Ping(Message, frozen=True, kw_only=True):
    """Asks for a ``pong`` with the same ``nonce`` and the server's clock."""

    nonce: Count


class LobbySubscribe(Message, frozen=True, kw_only=True):
    """Asks for the ``lobby`` now and a ``lobby_update`` whenever a tournament in it changes."""

    request_id: Id | None = None


class LobbyUnsubscribe(Message, frozen=True, kw_only=True):
    request_id: Id | None = None


class TournamentSubscribe(Message, frozen=True, kw_only=True):
    """Asks for the ``tournament_state`` now, again when it changes, and the tournament's public
    ``tournament_event``s."""

    tournament_id: Id
    request_id: Id | None = None


class TournamentUnsubscribe(Message, frozen=True, kw_only=True):
    tournament_id: Id
    request_id: Id | None = None


class Register(Message, frozen=True, kw_only=True):
    """Buy in: the buy-in and fee are taken from the balance (``balance`` follows)."""

    tournament_id: Id
    request_id: Id


class Unregister(Message, frozen=True, kw_only=True):
    """Give the place back before the start; the buy-in and fee are refunded."""

    tournament_id: Id
    request_id: Id


class Rebuy(Message, frozen=True, kw_only=True):
    """Buy a rebuy: when offered after busting (``rebuy_offered``), or at or under the rebuy
    threshold between hands, within the rebuy period."""

    tournament_id: Id
    request_id: Id


class DeclineRebuy(Message, frozen=True, kw_only=True):
    """Answer no to ``rebuy_offered`` at once (no answer by ``until_ms`` is a no too)."""

    tournament_id: Id
    request_id: Id


class AddOn(Message, frozen=True, kw_only=True):
    """Buy the add-on, in the add-on window."""

    tournament_id: Id
    request_id: Id


class TableJoin(Message, frozen=True, kw_only=True):
    """Follow a table: a ``table_snapshot``, or, with ``last_seq``, every ``table_event`` after it
    when the server still holds them (else a snapshot), then the table's events as they come."""

    table_id: Positive
    last_seq: Count | None = None
    request_id: Id | None = None


class TableLeave(Message, frozen=True, kw_only=True):
    """Stop following a table (a player stays seated: leaving the view is not leaving the seat)."""

    table_id: Positive
    request_id: Id | None = None


class Act(Message, frozen=True, kw_only=True):
    """A betting decision in hand ``hand_number`` at ``table_id``. ``amount`` is given for
    ``bet`` and ``raise`` only: the total the player's bet on this street reaches (raise *to*),
    not the increment. ``action_id`` is unique per decision: an ``act`` whose ``action_id`` was
    already applied in that hand is answered with ``ack`` and not applied again."""

    table_id: Positive
    hand_number: Positive
    action_id: Id
    action: ActionKind
    amount: Positive | None = None

    def __post_init__(self) -> None:
        sized = self.action is ActionKind.BET or self.action is ActionKind.RAISE
        if sized and self.amount is None:
            raise ValueError(f"{self.action.value} needs an amount: the total to bet or raise to")
        if not sized and self.amount is not None:
            raise ValueError(f"{self.action.value} takes no amount (only bet and raise do)")


class TimeBank(Message, frozen=True, kw_only=True):
    """Start one of the player's time banks now, while it is their turn: the deadline moves out by
    one shot clock (``time_bank_used``). Banks also start by themselves when the shot clock runs
    out, so a client never has to send this."""

    table_id: Positive
    hand_number: Positive
    request_id: Id | None = None


class SitOut(Message, frozen=True, kw_only=True):
    """Be away: still dealt in and posting, but acted for (check, else fold) when the shot clock
    runs out, with no time bank."""

    tournament_id: Id
    request_id: Id | None = None


class SitIn(Message, frozen=True, kw_only=True):
    """Be back (acting also brings a player back)."""

    tournament_id: Id
    request_id: Id | None = None


class Chat(Message, frozen=True, kw_only=True):
    """A chat line to the table, 1 to CHAT_MAX_CHARS printable characters (no line breaks)."""

    table_id: Positive
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=CHAT_MAX_CHARS)]
    request_id: Id | None = None

    def __post_init__(self) -> None:
        if not self.text.isprintable():
            raise ValueError("chat text must be printable characters: no line breaks or control characters")


MAX_HAND_LIST = 100


class HandList(Message, frozen=True, kw_only=True):
    """Asks for stored hands, newest first, at most ``limit``: a player's own hands (in
    ``tournament_id`` only, if given); an operator's must name the tournament. Answered by
    ``hand_histories``."""

    request_id: Id
    tournament_id: Id | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_HAND_LIST)] = 20


class HandHistory(Message, frozen=True, kw_only=True):
    """Asks for one stored hand, by the ``hand_id`` a ``hand_histories`` entry gives: a player
    gets only a hand they were dealt in, as they saw it; an operator gets any hand with every
    card. Answered by ``hand_record``."""

    request_id: Id
    hand_id: Id


ClientMessage = (
    Hello
    | Ping
    | LobbySubscribe
    | LobbyUnsubscribe
    | TournamentSubscribe
    | TournamentUnsubscribe
    | Register
    | Unregister
    | Rebuy
    | DeclineRebuy
    | AddOn
    | TableJoin
    | TableLeave
    | Act
    | TimeBank
    | SitOut
    | SitIn
    | Chat
    | HandList
    | HandHistory
    | OperatorRequest
    | DealRequest
)

CLIENT_MESSAGE_TYPES: tuple[type[Message], ...] = get_args(ClientMessage)
"""Every client message class, in the order of the union."""
