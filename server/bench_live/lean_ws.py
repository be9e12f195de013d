"""A minimal RFC 6455 client on an ``asyncio.Protocol``: the load generator's WebSocket.

It does only what a bot needs (the opening handshake with one subprotocol, binary frames out,
binary or text frames in, answering pings, a close) so that thousands of connections cost the
load generator little CPU: no task, timer or queue per connection (issue 13 found a load
generator on the ``websockets`` client to cost about twice the CPU and to lengthen the measured
tail). No extensions (the server compresses nothing), no fragmented frames out; fragmented
frames in are joined.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import random
from collections.abc import Callable

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


class HandshakeError(Exception):
    """The server did not switch protocols as asked."""


def _masked(opcode: int, payload: bytes, mask_bits: int) -> bytes:
    """One whole client frame (clients must mask, RFC 6455 5.3)."""
    n = len(payload)
    if n < 126:
        header = bytes((0x80 | opcode, 0x80 | n))
    elif n < 65536:
        header = bytes((0x80 | opcode, 0xFE)) + n.to_bytes(2, "big")
    else:
        header = bytes((0x80 | opcode, 0xFF)) + n.to_bytes(8, "big")
    mask = mask_bits.to_bytes(4, "big")
    # one big-integer XOR masks the whole payload without a Python loop over its bytes
    key = (mask * (n // 4 + 1))[:n]
    body = (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")
    return header + mask + body


class LeanWebSocket(asyncio.Protocol):
    """One client connection. ``on_message(payload)`` gets each whole data frame's payload;
    ``on_close(reason)`` is called once when the connection ends, however it ends."""

    def __init__(
        self,
        host: str,
        port: int,
        subprotocol: str,
        on_message: Callable[[bytes], None],
        on_close: Callable[[str], None],
        path: str = "/",
    ) -> None:
        self.host = host
        self.port = port
        self.path = path
        self.subprotocol = subprotocol
        self.on_message = on_message
        self.on_close = on_close
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed = False
        self._buffer = bytearray()
        self._handshaken = False
        self._fragments: list[bytes] = []
        self._key = base64.b64encode(os.urandom(16))

    # -- asyncio.Protocol ---------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        request = (
            f"GET {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {self._key.decode()}\r\n"
            f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {self.subprotocol}\r\n\r\n"
        )
        transport.write(request.encode("ascii"))

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        if not self._handshaken:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buffer[:end]).decode("latin-1")
            del buffer[: end + 4]
            error = self._check_handshake(head)
            if error is not None:
                if not self.opened.done():
                    self.opened.set_exception(HandshakeError(error))
                self._finish(f"handshake: {error}")
                return
            self._handshaken = True
            if not self.opened.done():
                self.opened.set_result(None)
        start = 0
        size = len(buffer)
        while size - start >= 2:
            first, second = buffer[start], buffer[start + 1]
            length = second & 0x7F
            at = start + 2
            if length == 126:
                if size - at < 2:
                    break
                length = int.from_bytes(buffer[at : at + 2], "big")
                at += 2
            elif length == 127:
                if size - at < 8:
                    break
                length = int.from_bytes(buffer[at : at + 8], "big")
                at += 8
            if second & 0x80:  # a server never masks: RFC 6455 5.1
                self._finish("protocol error: a masked server frame")
                return
            if size - at < length:
                break
            payload = bytes(buffer[at : at + length])
            start = at + length
            self._frame(first, payload)
            if self.closed:
                return
        if start:
            del buffer[:start]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(ConnectionError(f"connection lost before the handshake: {exc}"))
        self._finish("connection lost" if exc is None else f"connection lost: {exc}")

    # -- frames -------------------------------------------------------------------------------------

    def _frame(self, first: int, payload: bytes) -> None:
        opcode = first & 0x0F
        final = first & 0x80
        if opcode in (OP_BINARY, OP_TEXT):
            if final:
                self.on_message(payload)
            else:
                self._fragments = [payload]
        elif opcode == OP_CONTINUATION:
            self._fragments.append(payload)
            if final:
                whole = b"".join(self._fragments)
                self._fragments = []
                self.on_message(whole)
        elif opcode == OP_PING:
            self._write(OP_PONG, payload)
        elif opcode == OP_CLOSE:
            self._write(OP_CLOSE, payload[:2])
            code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
            self._finish(f"closed by the server ({code})")

    def _write(self, opcode: int, payload: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            # the mask only has to be unpredictable to scripts in a browser; a bench has none
            self.transport.write(_masked(opcode, payload, random.getrandbits(32)))

    def send(self, payload: bytes) -> None:
        """Send one binary frame (buffered by the transport: never blocks)."""
        self._write(OP_BINARY, payload)

    def close(self) -> None:
        """Drop the connection at once (a bench closing thousands skips the close handshake)."""
        if self.transport is not None:
            self.transport.abort()
        self._finish("closed by the client")

    def _finish(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
        self.on_close(reason)

    def _check_handshake(self, head: str) -> str | None:
        lines = head.split("\r\n")
        if not lines[0].startswith("HTTP/1.1 101"):
            return f"the server answered {lines[0]!r}"
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        accept = base64.b64encode(hashlib.sha1(self._key + _GUID).digest()).decode()
        if headers.get("sec-websocket-accept") != accept:
            return "wrong Sec-WebSocket-Accept"
        if headers.get("sec-websocket-protocol") != self.subprotocol:
            return f"the server chose subprotocol {headers.get('sec-websocket-protocol')!r}"
        return None


async def connect(
    host: str,
    port: int,
    subprotocol: str,
    on_message: Callable[[bytes], None],
    on_close: Callable[[str], None],
    *,
    timeout: float = 30.0,
) -> LeanWebSocket:
    """Open a connection and finish the handshake, or raise (OSError, HandshakeError, TimeoutError)."""
    loop = asyncio.get_running_loop()
    holder: list[LeanWebSocket] = []

    def factory() -> LeanWebSocket:
        protocol = LeanWebSocket(host, port, subprotocol, on_message, on_close)
        holder.append(protocol)
        return protocol

    async with asyncio.timeout(timeout):
        await loop.create_connection(factory, host, port)
        await holder[0].opened
    return holder[0]
