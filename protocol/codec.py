"""The two WebSocket subprotocols, one schema: ``feltd.msgpack.v1`` (MessagePack in binary frames)
and ``feltd.json.v1`` (JSON in text frames, for browsers and debugging).

A ``Codec`` encodes any message (``encode``) into the frame kind its subprotocol uses (``bytes``
for MessagePack, ``str`` for JSON) and decodes frames of either direction (``decode_client`` on
the server, ``decode_server`` in a client). Decoding validates the whole message against its
struct and raises only ``ProtocolError``, whatever the frame holds:

- ``wrong_frame_kind``: a text frame on the MessagePack subprotocol or a binary one on JSON;
- ``too_large``: more than MAX_FRAME_BYTES (client frames) or MAX_SERVER_FRAME_BYTES (server frames);
- ``bad_frame``: not MessagePack/JSON, or not an object with a string ``type``;
- ``unknown_type``: a ``type`` this version does not define (reserved names included);
- ``invalid_field``: a known type with a field missing, unknown, of the wrong type or out of range.

The decoders and encoders are built once and shared (msgspec reuses their state), and the
happy path is one msgspec call: the error path alone looks at a refused frame again, to tell an
unknown type from a bad field and to find the ``request_id`` to answer with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import msgspec

from protocol import ID_MAX_CHARS, MAX_FRAME_BYTES, MAX_SERVER_FRAME_BYTES
from protocol.client_messages import CLIENT_MESSAGE_TYPES, ClientMessage
from protocol.errors import ErrorCode, ProtocolError
from protocol.server_messages import SERVER_MESSAGE_TYPES, ServerMessage
from protocol.structs import Message

MSGPACK_SUBPROTOCOL: Final = "feltd.msgpack.v1"
JSON_SUBPROTOCOL: Final = "feltd.json.v1"
SUBPROTOCOLS: Final = (MSGPACK_SUBPROTOCOL, JSON_SUBPROTOCOL)
"""In the server's order of preference: a client that offers both gets MessagePack."""

Frame = bytes | bytearray | memoryview | str


def _tags(types: tuple[type[Message], ...]) -> frozenset[str]:
    return frozenset(str(cls.__struct_config__.tag) for cls in types)


_CLIENT_TYPES = _tags(CLIENT_MESSAGE_TYPES)
_SERVER_TYPES = _tags(SERVER_MESSAGE_TYPES)


class _Envelope(msgspec.Struct):
    """What the error path reads of a refused frame: its type and the id to answer with. Any
    other field is skipped, whatever it holds."""

    type: Any = None
    request_id: Any = None
    action_id: Any = None


class Codec:
    """One subprotocol's encoder and decoders. Use the shared ``MSGPACK`` and ``JSON`` codecs
    (``codec_for`` picks one by subprotocol name)."""

    subprotocol: str
    binary: bool  # the frame kind: binary (bytes) or text (str)

    def __init__(
        self,
        subprotocol: str,
        binary: bool,
        decode_client: Callable[[Any], Any],
        decode_server: Callable[[Any], Any],
        decode_envelope: Callable[[Any], _Envelope],
    ) -> None:
        """``decode_*``: the bound ``decode`` methods of msgspec decoders for ``ClientMessage``,
        ``ServerMessage`` and ``_Envelope`` in this subprotocol's format."""
        self.subprotocol = subprotocol
        self.binary = binary
        self._decode_client = decode_client
        self._decode_server = decode_server
        self._decode_envelope = decode_envelope

    def encode(self, message: Message) -> bytes | str:
        """The frame that carries ``message``: bytes (a binary frame) or str (a text frame)."""
        raise NotImplementedError

    def decode_client(self, frame: Frame) -> ClientMessage:
        """The client message in ``frame``; raises ``ProtocolError`` and nothing else."""
        message: ClientMessage = self._decode(frame, self._decode_client, _CLIENT_TYPES, MAX_FRAME_BYTES)
        return message

    def decode_server(self, frame: Frame) -> ServerMessage:
        """The server message in ``frame``; raises ``ProtocolError`` and nothing else."""
        message: ServerMessage = self._decode(
            frame, self._decode_server, _SERVER_TYPES, MAX_SERVER_FRAME_BYTES
        )
        return message

    def _frame_size(self, frame: object) -> int:
        """The frame's length in bytes; ``ProtocolError`` for the wrong kind of frame."""
        if isinstance(frame, str):
            if self.binary:
                raise ProtocolError(
                    ErrorCode.WRONG_FRAME_KIND,
                    f"{self.subprotocol} carries MessagePack in binary frames; got a text frame",
                )
            return len(frame)
        if isinstance(frame, bytes | bytearray | memoryview):
            if not self.binary:
                raise ProtocolError(
                    ErrorCode.WRONG_FRAME_KIND,
                    f"{self.subprotocol} carries JSON in text frames; got a binary frame",
                )
            return frame.nbytes if isinstance(frame, memoryview) else len(frame)
        raise ProtocolError(ErrorCode.BAD_FRAME, f"a frame is bytes or text, got {type(frame).__name__}")

    def _decode(
        self,
        frame: Frame,
        decode: Callable[[Any], Any],
        known_types: frozenset[str],
        max_bytes: int,
    ) -> Any:
        size = self._frame_size(frame)
        if size > max_bytes // 4 and isinstance(frame, str):
            # A character is 1 to 4 bytes in UTF-8: count the bytes only when it can matter.
            size = len(frame.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            raise ProtocolError(ErrorCode.TOO_LARGE, f"a frame is at most {max_bytes} bytes, got {size}")
        try:
            return decode(frame)
        except msgspec.ValidationError as error:
            raise self._refusal(frame, known_types, str(error)) from None
        except msgspec.DecodeError as error:
            raise ProtocolError(ErrorCode.BAD_FRAME, f"not {self._format()}: {error}") from None
        except Exception as error:  # whatever the bytes: never anything but ProtocolError
            raise ProtocolError(ErrorCode.BAD_FRAME, f"not {self._format()}: {error!r}") from None

    def _format(self) -> str:
        return "MessagePack" if self.binary else "JSON"

    def _refusal(self, frame: Frame, known_types: frozenset[str], reason: str) -> ProtocolError:
        """The error for a frame that parsed but did not validate."""
        try:
            envelope = self._decode_envelope(frame)
        except Exception:
            return ProtocolError(ErrorCode.BAD_FRAME, "a frame is an object (a map) with a string `type`")
        request_id = next(
            (
                value
                for value in (envelope.request_id, envelope.action_id)
                if isinstance(value, str) and 0 < len(value) <= ID_MAX_CHARS
            ),
            None,
        )
        kind = envelope.type
        if not isinstance(kind, str):
            return ProtocolError(
                ErrorCode.BAD_FRAME, "a frame is an object (a map) with a string `type`", request_id
            )
        shown = kind if len(kind) <= ID_MAX_CHARS else kind[:ID_MAX_CHARS] + "..."
        if kind not in known_types:
            return ProtocolError(ErrorCode.UNKNOWN_TYPE, f"no message has type {shown!r}", request_id)
        return ProtocolError(ErrorCode.INVALID_FIELD, f"{shown}: {reason}", request_id)


class MsgpackCodec(Codec):
    """``feltd.msgpack.v1``: MessagePack maps in binary frames."""

    def __init__(self) -> None:
        super().__init__(
            MSGPACK_SUBPROTOCOL,
            True,
            msgspec.msgpack.Decoder(ClientMessage).decode,
            msgspec.msgpack.Decoder(ServerMessage).decode,
            msgspec.msgpack.Decoder(_Envelope).decode,
        )
        self._encoder = msgspec.msgpack.Encoder()

    def encode(self, message: Message) -> bytes:
        return self._encoder.encode(message)


class JsonCodec(Codec):
    """``feltd.json.v1``: JSON objects in text frames (UTF-8)."""

    def __init__(self) -> None:
        super().__init__(
            JSON_SUBPROTOCOL,
            False,
            msgspec.json.Decoder(ClientMessage).decode,
            msgspec.json.Decoder(ServerMessage).decode,
            msgspec.json.Decoder(_Envelope).decode,
        )
        self._encoder = msgspec.json.Encoder()

    def encode(self, message: Message) -> str:
        return self._encoder.encode(message).decode("utf-8")


MSGPACK: Final = MsgpackCodec()
JSON: Final = JsonCodec()
_BY_NAME: Final[dict[str, Codec]] = {MSGPACK_SUBPROTOCOL: MSGPACK, JSON_SUBPROTOCOL: JSON}


def codec_for(subprotocol: str | None) -> Codec:
    """The codec of a negotiated subprotocol; ``ValueError`` for any other name."""
    codec = _BY_NAME.get(subprotocol) if subprotocol is not None else None
    if codec is None:
        raise ValueError(f"unknown subprotocol {subprotocol!r}; feltd speaks {', '.join(SUBPROTOCOLS)}")
    return codec
