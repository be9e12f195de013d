"""The two bases every wire type derives from, and the constrained field types they share.

- ``Message``: a tagged struct. Its tag, the ``type`` field on the wire, is its class name in
  snake_case (``TableJoin`` -> ``"table_join"``) unless the class names another.
- ``Record``: a plain struct nested in a message (a seat, a pot, a tournament in the lobby).

Both are frozen, keyword-only and refuse unknown fields, so decoding validates: a frame with a
field this version does not define is refused, never half-read. The constraints below (``Meta``)
are checked when a frame is decoded, not when the server builds a message.

Every subclass repeats ``frozen=True, kw_only=True``: msgspec applies ``kw_only`` to the fields a
class itself defines, and mypy reads ``frozen`` from each class.
"""

from __future__ import annotations

import re
from typing import Annotated

import msgspec

from protocol import ID_MAX_CHARS, MAX_SAFE_INTEGER

_CAMEL_HUMP = re.compile(r"(?<!^)(?=[A-Z])")


def wire_name(class_name: str) -> str:
    """The ``type`` of a message class: ``TableJoin`` -> ``table_join``."""
    return _CAMEL_HUMP.sub("_", class_name).lower()


class Message(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="type", tag=wire_name
):
    """A message or an event: an object whose ``type`` says which."""


class Record(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A value inside a message."""


# Field types. Integers stay within what a JavaScript number holds exactly.
Id = Annotated[str, msgspec.Meta(min_length=1, max_length=ID_MAX_CHARS)]
"""A request id, an action id, a tournament id: 1 to ID_MAX_CHARS characters."""
Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INTEGER)]
"""A non-negative integer: chips, cents, a count, a sequence number."""
Positive = Annotated[int, msgspec.Meta(ge=1, le=MAX_SAFE_INTEGER)]
"""A positive integer: a table id, a hand number, a bet amount."""
Millis = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INTEGER)]
"""A moment: integer milliseconds since the Unix epoch (UTC)."""
Seat = Annotated[int, msgspec.Meta(ge=1, le=10)]
"""A seat number, 1 to the table's size (at most 10)."""
Card = Annotated[str, msgspec.Meta(pattern="^[2-9TJQKA][cdhs]$")]
"""A card: rank (2-9, T, J, Q, K, A) then suit (c, d, h, s), e.g. ``"As"``, ``"Td"``, ``"2c"``."""
