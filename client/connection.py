"""A connection to a feltd server over the public protocol (``protocol`` alone, nothing of the
server's or the engine's insides).

``Connection`` opens a WebSocket with one of the two subprotocols, says ``hello``, and from then on
sends client messages and receives server messages as ``protocol`` structs. It keeps each table's
stream whole by the rules of docs/protocol.md section 8, so its reader sees every ``seq`` once:

- an event whose ``seq`` is not above the last one received is a duplicate and is dropped;
- an event more than one above it means events were lost: the connection sends ``table_join``
  with ``last_seq`` (once) and drops what arrives out of order until the missing events or a
  snapshot come;
- a snapshot replaces what was known, whatever its ``seq``.

It remembers the last ``seq`` of every table it follows (forgetting a table the player was moved
from, unseated from, or that closed), so that ``reconnect`` resumes each table where it stopped.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.typing import Subprotocol

from protocol import PROTOCOL_VERSION
from protocol.client_messages import ClientMessage, Hello, Resume, TableJoin
from protocol.codec import MSGPACK_SUBPROTOCOL, Codec, codec_for
from protocol.server_messages import (
    Error,
    Seated,
    ServerMessage,
    TableEvent,
    TableSnapshot,
    Unseated,
    Welcome,
)
from protocol.table_events import TableClosed

__all__ = ["Connection", "LoginRefused"]

MAX_RESUME = 16  # hello.resume names at most this many tables


class LoginRefused(RuntimeError):
    """The server refused the ``hello`` (a bad token, another protocol version)."""

    def __init__(self, error: Error) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.error = error


@dataclass(slots=True)
class Connection:
    """One session with a server (see the module docstring)."""

    url: str
    token: str | None = None
    subprotocol: str = MSGPACK_SUBPROTOCOL
    client_name: str = "feltd-client/1"
    open_timeout: float = 10.0
    welcome: Welcome | None = None
    last_seq: dict[int, int] = field(default_factory=dict)
    frames_in: int = 0
    bytes_in: int = 0
    frames_out: int = 0
    bytes_out: int = 0
    duplicates: int = 0  # table events dropped because their seq was already received
    gaps: int = 0  # times a table's seq jumped and the missing events were asked for again
    _resyncing: set[int] = field(default_factory=set)
    _tournament_of: dict[int, str] = field(default_factory=dict)
    _ws: ClientConnection | None = None
    _codec: Codec | None = None

    @property
    def codec(self) -> Codec:
        if self._codec is None:
            self._codec = codec_for(self.subprotocol)
        return self._codec

    @property
    def player(self) -> str | None:
        return None if self.welcome is None else self.welcome.player

    async def connect(self, *, resume: bool = False) -> Welcome:
        """Open the connection and log in; with ``resume``, name every table followed before and
        the last ``seq`` received there. Raises ``LoginRefused`` when the server says no."""
        self._ws = await websockets.connect(
            self.url,
            subprotocols=[Subprotocol(self.subprotocol)],
            compression=None,
            open_timeout=self.open_timeout,
        )
        self._resyncing.clear()
        tables = [Resume(table_id=t, last_seq=s) for t, s in sorted(self.last_seq.items())] if resume else []
        await self.send(
            Hello(
                protocol=PROTOCOL_VERSION,
                token=self.token,
                client=self.client_name,
                resume=tables[:MAX_RESUME],
            )
        )
        while True:
            message = await self.recv(self.open_timeout)
            if isinstance(message, Welcome):
                self.welcome = message
                return message
            if isinstance(message, Error):
                raise LoginRefused(message)

    async def reconnect(self) -> Welcome:
        """Drop the connection (if still open) and log in again, resuming every table."""
        await self.close()
        return await self.connect(resume=True)

    async def send(self, message: ClientMessage) -> None:
        await self.send_frame(self.codec.encode(message))

    async def send_frame(self, frame: bytes | str) -> None:
        """Send one frame as it is (``send`` encodes a message first; a test of the server's
        refusals sends bytes that are not one)."""
        if self._ws is None:
            raise ConnectionError("not connected")
        await self._ws.send(frame)
        self.frames_out += 1
        self.bytes_out += len(frame)

    async def recv(self, timeout: float | None = None) -> ServerMessage:
        """The next server message (``TimeoutError`` after ``timeout`` seconds), table streams
        kept in order (see the module docstring)."""
        if self._ws is None:
            raise ConnectionError("not connected")
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            ws = self._ws
            if ws is None:
                raise ConnectionError("not connected")
            if deadline is None:
                frame = await ws.recv()
            else:
                frame = await asyncio.wait_for(ws.recv(), max(0.0, deadline - loop.time()))
            self.frames_in += 1
            self.bytes_in += len(frame)
            message = self.codec.decode_server(frame)
            if await self._in_order(message):
                return message

    async def _in_order(self, message: ServerMessage) -> bool:
        """Whether ``message`` goes to the reader; keeps ``last_seq`` and asks for lost events."""
        if isinstance(message, TableEvent):
            table_id, seq = message.table_id, message.seq
            last = self.last_seq.get(table_id)
            if last is not None and seq <= last:
                self.duplicates += 1
                return False
            if last is not None and seq > last + 1:
                if table_id not in self._resyncing:
                    self._resyncing.add(table_id)
                    self.gaps += 1
                    await self.send(TableJoin(table_id=table_id, last_seq=last))
                return False
            self._resyncing.discard(table_id)
            if isinstance(message.event, TableClosed):
                self._forget(table_id)
            else:
                self.last_seq[table_id] = seq
        elif isinstance(message, TableSnapshot):
            self._resyncing.discard(message.table_id)
            self._tournament_of[message.table_id] = message.tournament_id
            self.last_seq[message.table_id] = message.seq
        elif isinstance(message, Seated):
            # a move: the table left behind sends nothing more, so it is not resumed either
            for table_id, tournament_id in list(self._tournament_of.items()):
                if tournament_id == message.tournament_id and table_id != message.table_id:
                    self._forget(table_id)
        elif isinstance(message, Unseated):
            self._forget(message.table_id)
        return True

    def _forget(self, table_id: int) -> None:
        self.last_seq.pop(table_id, None)
        self._tournament_of.pop(table_id, None)
        self._resyncing.discard(table_id)

    async def close(self) -> None:
        if self._ws is not None:
            ws, self._ws = self._ws, None
            await ws.close()

    @property
    def open(self) -> bool:
        return self._ws is not None and self._ws.state.name == "OPEN"
