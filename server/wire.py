"""A server's WebSocket data frames as they go on the wire (RFC 6455, section 5.2), built once.

A table's event goes to every follower of the table in the same few frames: the gateway frames
each (message, audience) once and writes those bytes to each connection, instead of asking
``websockets`` to build the same frame again for every one of them. A server's frames are not
masked and are never fragmented here, and compression is off (``Gateway.start``), so a frame is
its header and the payload as it is. Control frames (ping, pong, close) stay with ``websockets``.
"""

from __future__ import annotations

import struct

_BINARY = 0x82  # FIN and opcode 2
_TEXT = 0x81  # FIN and opcode 1
_SHORT = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")


def frame(payload: bytes | str) -> bytes:
    """One final, unmasked frame: binary for bytes, text (UTF-8) for a str."""
    if isinstance(payload, str):
        data, first = payload.encode(), _TEXT
    else:
        data, first = payload, _BINARY
    size = len(data)
    if size < 126:
        return bytes((first, size)) + data
    if size < 65536:
        return _SHORT.pack(first, 126, size) + data
    return _LONG.pack(first, 127, size) + data
