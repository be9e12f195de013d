"""server.wire frames a payload once for every follower of a table: its bytes must be the ones
``websockets`` itself would send for that payload (its own serializer is the oracle here)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from websockets.frames import Frame, Opcode

from server import wire


def _websockets_frame(payload: bytes | str) -> bytes:
    if isinstance(payload, str):
        return Frame(Opcode.TEXT, payload.encode()).serialize(mask=False)
    return Frame(Opcode.BINARY, payload).serialize(mask=False)


@given(st.binary(max_size=300))
def test_a_binary_frame_is_what_websockets_sends(payload: bytes) -> None:
    assert wire.frame(payload) == _websockets_frame(payload)


@given(st.text(max_size=200))
def test_a_text_frame_is_what_websockets_sends(payload: str) -> None:
    assert wire.frame(payload) == _websockets_frame(payload)


def test_each_length_encoding_is_what_websockets_sends() -> None:
    # 7-bit, 16-bit and 64-bit lengths, at their edges
    for size in (0, 125, 126, 127, 65535, 65536, 70000):
        payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
        assert len(payload) == size
        assert wire.frame(payload) == _websockets_frame(payload), size
