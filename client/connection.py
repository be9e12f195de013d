"""A connection to a feltd server over the public protocol (``protocol`` alone, nothing of the
server's or the engine's insides).

``Connection`` opens a WebSocket with one of the two subprotocols, says ``hello``, and from then on
sends client messages and receives server messages as ``protocol`` structs. It remembers the last
``seq`` it received at every table (snapshots included) so that ``reconnect`` resumes each table
where it stopped, and the action ids it sent so that a resend after a reconnect is the same.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.typing import Subprotocol

from protocol import PROTOCOL_VERSION
from protocol.client_messages import ClientMessage, Hello, Resume
from protocol.codec import MSGPACK_SUBPROTOCOL, Codec, codec_for
from protocol.server_messages import Error, ServerMessage, TableEvent, TableSnapshot, Welcome

__all__ = ["Connection", "LoginRefused"]


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
        tables = [Resume(table_id=t, last_seq=s) for t, s in sorted(self.last_seq.items())] if resume else []
        await self.send(
            Hello(protocol=PROTOCOL_VERSION, token=self.token, client=self.client_name, resume=tables[:16])
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
        if self._ws is None:
            raise ConnectionError("not connected")
        await self._ws.send(self.codec.encode(message))

    async def recv(self, timeout: float | None = None) -> ServerMessage:
        """The next server message (``TimeoutError`` after ``timeout`` seconds)."""
        if self._ws is None:
            raise ConnectionError("not connected")
        frame = await (asyncio.wait_for(self._ws.recv(), timeout) if timeout is not None else self._ws.recv())
        self.frames_in += 1
        self.bytes_in += len(frame)
        message = self.codec.decode_server(frame)
        if isinstance(message, TableEvent):
            self.last_seq[message.table_id] = max(self.last_seq.get(message.table_id, 0), message.seq)
        elif isinstance(message, TableSnapshot):
            self.last_seq[message.table_id] = message.seq
        return message

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
            self._ws = None

    @property
    def open(self) -> bool:
        return self._ws is not None and self._ws.state.name == "OPEN"
