"""A WebSocket connection that hands each message to its reader as it arrives.

``websockets``' asyncio connection puts every data frame in a queue (its ``Assembler``) and
wakes the connection's handler task to take it out: a future, a task step and a trip through
that queue for every frame a player sends, ~6 % of the server's CPU at 3,000 players acting as
fast as they can. Once a session has logged in, the gateway reads its frames one after the other
and never waits in between, so ``DirectConnection`` calls its ``reader`` with each message
(``bytes`` for a binary one, ``str`` for text) from ``data_received`` itself, in the order they
came. Before a reader is set (the upgrade, the ``hello`` and its answer) frames go through the
queue as usual; control frames (ping, pong, close) always stay with ``websockets``.

A fragmented message is put together here (at most ``MAX_FRAGMENTS`` frames; ``max_size``
bounds its bytes, as ``websockets`` checks it across fragments), and text that is not UTF-8
fails the connection with 1007, as ``websockets`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode, Frame, Opcode
from websockets.protocol import Event

log = logging.getLogger("feltd.gateway")

MAX_FRAGMENTS = 64  # frames of one message: empty continuation frames would cost memory, not bytes

Reader = Callable[[bytes | str], None]

_DATA = frozenset((Opcode.TEXT, Opcode.BINARY, Opcode.CONT))


class DirectConnection(ServerConnection):
    """``websockets``' server connection; with ``reader`` set, its messages go to the reader
    at once instead of waiting in the queue for ``recv``."""

    reader: Reader | None = None
    _fragments: list[Frame] | None = None
    _failing: asyncio.Task[None] | None = None

    def process_event(self, event: Event) -> None:
        reader = self.reader
        if self._failing is not None and isinstance(event, Frame) and event.opcode in _DATA:
            return  # failed: nothing more is read (queued, it would wait for a recv never made)
        if reader is None or not isinstance(event, Frame) or event.opcode not in _DATA:
            super().process_event(event)
            return
        fragments = self._fragments
        if event.opcode is Opcode.CONT:
            if fragments is None:  # the protocol refuses a continuation of nothing
                return
            fragments.append(event)
            if len(fragments) > MAX_FRAGMENTS:
                self.fail(CloseCode.MESSAGE_TOO_BIG, f"more than {MAX_FRAGMENTS} fragments")
                return
            if not event.fin:
                return
            self._fragments = None
            opcode = fragments[0].opcode
            data: bytes | bytearray | memoryview = b"".join(fragment.data for fragment in fragments)
        elif not event.fin:
            self._fragments = [event]
            return
        else:
            opcode, data = event.opcode, event.data
        message: bytes | str
        if opcode is Opcode.TEXT:
            try:
                message = bytes(data).decode() if isinstance(data, memoryview) else data.decode()
            except UnicodeDecodeError as error:
                self.fail(CloseCode.INVALID_DATA, f"{error.reason} at position {error.start}")
                return
        else:
            message = data if isinstance(data, bytes) else bytes(data)
        try:
            reader(message)
        except Exception:  # a bug: this connection ends, the others go on
            log.exception("a frame failed")
            self.fail(CloseCode.INTERNAL_ERROR, "the server failed on a frame")

    def fail(self, code: CloseCode, reason: str) -> None:
        """Close with ``code`` (what ``websockets`` does when a message cannot be read); nothing
        more is read."""
        self.reader = None
        self._fragments = None
        if self._failing is None:
            self._failing = self.loop.create_task(fail(self, code, reason))


async def fail(websocket: ServerConnection, code: CloseCode, reason: str) -> None:
    """What ``websockets`` does when it cannot go on with a connection: close with ``code``,
    then drop the TCP connection after ``close_timeout`` if the close handshake does not finish."""
    with contextlib.suppress(ConnectionClosed):
        async with websocket.send_context():
            websocket.protocol.fail(code, reason)
