"""The wire contract between feltd and its clients: typed messages, one codec, error codes.

``protocol`` stands alone (it imports nothing of ``engine`` or ``server``), so a client or a bot
needs only this package. What lives where:

- ``protocol.kinds``: the enumerations the messages use (roles, actions, streets, reasons ...);
- ``protocol.structs``: the two bases every wire type derives from (tagged messages, plain records);
- ``protocol.client_messages``: what a client sends (``ClientMessage``);
- ``protocol.table_events``: what happens at a table (the ``event`` of a ``table_event``) and the
  records a table snapshot is made of;
- ``protocol.tournament_events``: what happens in a tournament (the ``event`` of a
  ``tournament_event``);
- ``protocol.server_messages``: what the server sends (``ServerMessage``);
- ``protocol.errors``: ``ErrorCode`` and ``ProtocolError``;
- ``protocol.codec``: the two WebSocket subprotocols and their codecs.

docs/protocol.md documents every message, field, error and flow.

The numbers below are part of the contract: both sides hold to them.
"""

PROTOCOL_VERSION = 1
"""The version a client names in ``hello``. A server speaks exactly one version."""

MAX_FRAME_BYTES = 16 * 1024
"""The largest frame a client may send (encoded bytes); larger ones are refused (``too_large``)."""

MAX_SERVER_FRAME_BYTES = 8 * 1024 * 1024
"""The largest frame the server sends (a lobby of thousands of tournaments); a client may refuse
larger ones."""

ID_MAX_CHARS = 64
"""``request_id``, ``action_id``, tournament ids and the ``client`` name: at most this many characters."""

TOKEN_MAX_CHARS = 256
"""An access token is at most this many characters (``feltd admin player add`` prints 43)."""

CHAT_MAX_CHARS = 200
"""A chat line is 1 to this many printable characters."""

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer a client sends: every integer on the wire fits a JavaScript number exactly."""
