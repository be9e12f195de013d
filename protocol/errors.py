"""Error codes and the one exception the codec raises.

Every refusal the server sends is an ``error`` message with one of these codes; the same codes
name what ``protocol.codec`` refuses when it decodes a frame (``ProtocolError``). docs/protocol.md
says, for each code, which requests can get it and whether the connection survives it.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    # the frame itself (raised by the codec)
    BAD_FRAME = "bad_frame"  # not MessagePack/JSON, or not an object with a string ``type``
    UNKNOWN_TYPE = "unknown_type"  # ``type`` names no message of this protocol version
    INVALID_FIELD = "invalid_field"  # a known type with a missing, unknown, mistyped or out-of-range field
    TOO_LARGE = "too_large"  # a frame over MAX_FRAME_BYTES
    WRONG_FRAME_KIND = "wrong_frame_kind"  # text on feltd.msgpack.v1, binary on feltd.json.v1
    # the session
    UNSUPPORTED_VERSION = "unsupported_version"  # ``hello.protocol`` is not the server's version
    NOT_AUTHENTICATED = "not_authenticated"  # no ``hello`` yet, or the request needs a player's token
    ALREADY_AUTHENTICATED = "already_authenticated"  # a second ``hello`` on one connection
    BAD_TOKEN = "bad_token"  # the token names no player or operator
    FORBIDDEN = "forbidden"  # this role may not do that (an observer chatting, a player's op_ message)
    RATE_LIMITED = "rate_limited"  # too many messages (or chat lines) too fast; the message was dropped
    # what a request names
    NOT_FOUND = "not_found"  # no such tournament or table
    NOT_AVAILABLE = "not_available"  # not possible now: no rebuy offered, no add-on window, no time bank left
    NOT_REGISTERED = "not_registered"
    ALREADY_REGISTERED = "already_registered"
    REGISTRATION_CLOSED = "registration_closed"  # registering or unregistering is over (or not open yet)
    INSUFFICIENT_FUNDS = "insufficient_funds"  # the balance does not cover the price
    # at the table
    NOT_SEATED = "not_seated"  # the player has no seat at that table (or in that tournament)
    NOT_YOUR_TURN = "not_your_turn"
    ILLEGAL_ACTION = "illegal_action"  # the hand refuses it: the message says why (a raise too small ...)
    STALE_HAND = "stale_hand"  # ``hand_number`` is not the hand being played at that table
    # the server
    SERVER_BUSY = "server_busy"  # try again shortly
    INTERNAL = "internal"  # a bug on our side; the request changed nothing


class ProtocolError(Exception):
    """A frame the codec refuses (or a request the server refuses), as the ``error`` message that
    answers it: a code, a message for the person reading it, and the ``request_id`` (or
    ``action_id``) of the refused request when it could be read."""

    def __init__(self, code: ErrorCode, message: str, request_id: str | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.request_id = request_id

    def __repr__(self) -> str:
        return f"ProtocolError({self.code.value!r}, {self.message!r}, request_id={self.request_id!r})"
