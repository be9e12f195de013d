"""The wire contract: every message round-trips through both subprotocols, the JSON frames are the
ones docs/protocol.md shows, and decoding refuses anything else with a typed ``ProtocolError``
(never another exception, whatever the bytes: hypothesis fuzzes random and mutated frames).
The ``msgpack`` package reads our MessagePack frames as a client written from the doc would."""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import subprocess
import sys
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_examples import CLIENT, DOC, SERVER, TABLE_EVENTS, TOURNAMENT_EVENTS, doc_frames

from protocol import MAX_FRAME_BYTES, MAX_SAFE_INTEGER, PROTOCOL_VERSION
from protocol.client_messages import CLIENT_MESSAGE_TYPES, Act, Chat, Hello
from protocol.codec import JSON, MSGPACK, SUBPROTOCOLS, Codec, codec_for
from protocol.errors import ErrorCode, ProtocolError
from protocol.kinds import ActionKind, GoodbyeReason
from protocol.server_messages import SERVER_MESSAGE_TYPES, TableEvent, TournamentEvent
from protocol.structs import Message, wire_name
from protocol.table_events import TABLE_EVENT_TYPES
from protocol.tournament_events import TOURNAMENT_EVENT_TYPES

CODECS = [MSGPACK, JSON]
ALL = [*CLIENT, *SERVER]


def _id(message: object) -> str:
    return type(message).__name__


def _tag(cls: type[Message]) -> str:
    return str(cls.__struct_config__.tag)


def _frame(codec: Codec, value: Any) -> bytes | str:
    """A raw frame holding ``value`` (any plain data), as a client could send it."""
    return msgpack.packb(value) if codec.binary else json.dumps(value)


def _refused(codec: Codec, frame: Any, *, server: bool = False) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        (codec.decode_server if server else codec.decode_client)(frame)
    return caught.value


# --- the catalogue ----------------------------------------------------------------------------------


def test_protocol_every_message_and_event_type_has_an_example() -> None:
    assert {type(m) for m in CLIENT} == set(CLIENT_MESSAGE_TYPES)
    assert {type(m) for m in SERVER} == set(SERVER_MESSAGE_TYPES)
    assert {type(m) for m in TABLE_EVENTS} == set(TABLE_EVENT_TYPES)
    assert {type(m) for m in TOURNAMENT_EVENTS} == set(TOURNAMENT_EVENT_TYPES)


@pytest.mark.parametrize(
    "types", [CLIENT_MESSAGE_TYPES, SERVER_MESSAGE_TYPES, TABLE_EVENT_TYPES, TOURNAMENT_EVENT_TYPES]
)
def test_protocol_tags_are_distinct_snake_case_names(types: tuple[type[Message], ...]) -> None:
    tags = [_tag(cls) for cls in types]
    assert len(set(tags)) == len(tags), f"a tag is used twice: {tags}"
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", tag) for tag in tags), tags
    for cls in types:
        config = cls.__struct_config__
        assert config.frozen and config.forbid_unknown_fields and config.tag_field == "type", cls
        parameters = inspect.signature(cls).parameters.values()
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters), f"{cls} is keyword-only"


def test_protocol_wire_names_of_classes() -> None:
    assert wire_name("TableJoin") == "table_join"
    assert wire_name("AddOn") == "add_on"
    assert wire_name("HandForHandStarted") == "hand_for_hand_started"
    assert _tag(Chat) == "chat" and _tag(SERVER_MESSAGE_TYPES[14]) == "chat"


def test_protocol_stands_alone_without_engine_or_server() -> None:
    code = (
        "import sys, protocol.codec, protocol.kinds;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('engine', 'server', 'client'));"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_protocol_version_subprotocols_and_close_codes() -> None:
    assert PROTOCOL_VERSION == 1
    assert SUBPROTOCOLS == ("feltd.msgpack.v1", "feltd.json.v1")
    assert codec_for("feltd.msgpack.v1") is MSGPACK and codec_for("feltd.json.v1") is JSON
    with pytest.raises(ValueError, match="unknown subprotocol"):
        codec_for("feltd.cbor.v1")
    with pytest.raises(ValueError, match="unknown subprotocol"):
        codec_for(None)
    assert GoodbyeReason.SHUTDOWN.close_code == 1001
    assert GoodbyeReason.TAKEN_OVER.close_code == 1000
    assert GoodbyeReason.TOO_MANY_ERRORS.close_code == 1008


# --- round trips -------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS, ids=lambda codec: codec.subprotocol)
@pytest.mark.parametrize("message", ALL, ids=_id)
def test_protocol_every_message_round_trips_in_its_frame_kind(codec: Codec, message: Message) -> None:
    frame = codec.encode(message)
    assert isinstance(frame, bytes if codec.binary else str)
    decoded = (codec.decode_client if message in CLIENT else codec.decode_server)(frame)
    assert decoded == message and type(decoded) is type(message)


@pytest.mark.parametrize("message", ALL, ids=_id)
def test_protocol_msgpack_package_reads_the_same_object_as_the_json_frame(message: Message) -> None:
    read = msgpack.unpackb(MSGPACK.encode(message), raw=False)
    assert read == json.loads(JSON.encode(message))
    assert read["type"] == _tag(type(message))


def test_protocol_msgpack_frame_written_by_the_msgpack_package_decodes() -> None:
    frame = msgpack.packb(
        {
            "type": "act",
            "table_id": 12,
            "hand_number": 57,
            "action_id": "a1",
            "action": "raise",
            "amount": 600,
        }
    )
    assert MSGPACK.decode_client(frame) == Act(
        table_id=12, hand_number=57, action_id="a1", action=ActionKind.RAISE, amount=600
    )
    assert MSGPACK.decode_client(bytearray(frame)) == MSGPACK.decode_client(memoryview(frame))


def test_protocol_optional_fields_may_be_left_out_by_a_client() -> None:
    assert JSON.decode_client('{"type": "hello", "protocol": 1}') == Hello(protocol=1)
    assert JSON.decode_client('{"type": "table_join", "table_id": 3}').last_seq is None  # type: ignore[union-attr]


# --- docs/protocol.md --------------------------------------------------------------------------------


def _doc_message(frame: str) -> Message:
    """The message a doc frame holds, read as a client's or else as the server's."""
    try:
        return JSON.decode_client(frame)
    except ProtocolError as client_error:
        try:
            return JSON.decode_server(frame)
        except ProtocolError as server_error:
            pytest.fail(
                f"docs/protocol.md shows a frame nobody accepts: {frame}\n{client_error}\n{server_error}"
            )


def test_protocol_doc_examples_are_real_frames_and_show_every_message() -> None:
    frames = doc_frames()
    assert len(frames) > 50, "docs/protocol.md shows too few ```json examples"
    seen: set[type] = set()
    for frame in frames:
        written = json.loads(frame)
        message = _doc_message(frame)
        sent = json.loads(JSON.encode(message))
        if type(message) in CLIENT_MESSAGE_TYPES:
            # a client may leave optional fields out; whatever the doc writes must be what is read
            assert all(sent[key] == value for key, value in written.items()), f"{frame}\nreads as {sent}"
        else:
            assert sent == written, (
                f"the doc shows a frame the server does not send:\n{frame}\nit sends {sent}"
            )
        seen.add(type(message))
        if isinstance(message, TableEvent | TournamentEvent):
            seen.add(type(message.event))
    every = {*CLIENT_MESSAGE_TYPES, *SERVER_MESSAGE_TYPES, *TABLE_EVENT_TYPES, *TOURNAMENT_EVENT_TYPES}
    missing = sorted(cls.__name__ for cls in every - seen)
    assert not missing, f"docs/protocol.md shows no example of {missing}"


def test_protocol_doc_deck_check_recipe_verifies_the_docs_deck() -> None:
    """Section 14's recipe, written out independently, holds for the deck the doc reveals."""
    ranks, suits = "23456789TJQKA", "cdhs"
    revealed = [json.loads(frame)["event"] for frame in doc_frames() if '"type": "deck_revealed"' in frame]
    assert revealed
    for event in revealed:
        deck = event["deck"]
        assert sorted(deck) == sorted(r + s for r in ranks for s in suits), "a whole deck, each card once"
        data = bytes(ranks.index(card[0]) * 4 + suits.index(card[1]) for card in deck) + bytes.fromhex(
            event["salt"]
        )
        assert hashlib.sha256(data).hexdigest() == event["commitment"]


def test_protocol_doc_names_every_error_code_and_field() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [code.value for code in ErrorCode if f"`{code.value}`" not in text]
    assert not missing, f"docs/protocol.md does not explain error codes {missing}"
    fields = set()
    for cls in {*CLIENT_MESSAGE_TYPES, *SERVER_MESSAGE_TYPES, *TABLE_EVENT_TYPES, *TOURNAMENT_EVENT_TYPES}:
        fields |= set(cls.__struct_fields__)
    undocumented = sorted(name for name in fields if f"`{name}`" not in text)
    assert not undocumented, f"docs/protocol.md never names the fields {undocumented}"


# --- refusals ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS, ids=lambda codec: codec.subprotocol)
def test_protocol_malformed_frames_are_bad_frame(codec: Codec) -> None:
    malformed = b"\xc1\x00" if codec.binary else '{"type": "ping", "nonce": '
    assert _refused(codec, malformed).code is ErrorCode.BAD_FRAME
    trailing = (
        msgpack.packb({"type": "ping", "nonce": 1}) + b"\x00"
        if codec.binary
        else '{"type":"ping","nonce":1} x'
    )
    assert _refused(codec, trailing).code is ErrorCode.BAD_FRAME
    for value in ([1, 2], "ping", 7, None, {"nonce": 1}, {"type": 5, "nonce": 1}, {"type": None}):
        error = _refused(codec, _frame(codec, value))
        assert error.code is ErrorCode.BAD_FRAME, f"{value!r}: {error!r}"
    assert _refused(codec, 12345).code is ErrorCode.BAD_FRAME


@pytest.mark.parametrize("codec", CODECS, ids=lambda codec: codec.subprotocol)
def test_protocol_oversized_frames_are_too_large(codec: Codec) -> None:
    text = "x" * MAX_FRAME_BYTES
    error = _refused(codec, _frame(codec, {"type": "chat", "table_id": 1, "text": text}))
    assert error.code is ErrorCode.TOO_LARGE and str(MAX_FRAME_BYTES) in error.message
    if not codec.binary:
        # fewer characters than the limit, more bytes: three bytes each in UTF-8
        wide = '{"type":"chat","table_id":1,"text":"' + "€" * (MAX_FRAME_BYTES // 3 + 10) + '"}'
        assert len(wide) < MAX_FRAME_BYTES and _refused(codec, wide).code is ErrorCode.TOO_LARGE
    # just under the limit is read (and then refused for what it says, not for its size)
    fits = _frame(codec, {"type": "chat", "table_id": 1, "text": "x" * (MAX_FRAME_BYTES - 100)})
    assert _refused(codec, fits).code is ErrorCode.INVALID_FIELD


def test_protocol_wrong_frame_kind() -> None:
    assert _refused(MSGPACK, '{"type": "ping", "nonce": 1}').code is ErrorCode.WRONG_FRAME_KIND
    assert _refused(JSON, b'{"type": "ping", "nonce": 1}').code is ErrorCode.WRONG_FRAME_KIND
    assert _refused(MSGPACK, "x", server=True).code is ErrorCode.WRONG_FRAME_KIND


@pytest.mark.parametrize("codec", CODECS, ids=lambda codec: codec.subprotocol)
def test_protocol_unknown_types_are_unknown_type(codec: Codec) -> None:
    for kind in ("dance", "deal_split", "op_kick", "welcome", "op_event"):
        error = _refused(codec, _frame(codec, {"type": kind, "request_id": "r9"}))
        assert error.code is ErrorCode.UNKNOWN_TYPE and error.request_id == "r9", f"{kind}: {error!r}"
        assert kind in error.message
    # a client message is not a server message
    assert (
        _refused(codec, _frame(codec, {"type": "hello", "protocol": 1}), server=True).code
        is ErrorCode.UNKNOWN_TYPE
    )


INVALID: list[tuple[dict[str, Any], str]] = [
    ({"type": "ping", "nonce": 1, "extra": True}, "unknown field `extra`"),
    ({"type": "ping"}, "missing required field `nonce`"),
    ({"type": "ping", "nonce": "1"}, "Expected `int`"),
    ({"type": "ping", "nonce": -1}, ">= 0"),
    ({"type": "ping", "nonce": MAX_SAFE_INTEGER + 1}, "<= "),
    ({"type": "ping", "nonce": 1.5}, "Expected `int`"),
    ({"type": "table_join", "table_id": 0}, ">= 1"),
    ({"type": "table_join", "table_id": True}, "Expected `int`"),
    ({"type": "hello", "protocol": 1, "token": ""}, "length >= 1"),
    ({"type": "hello", "protocol": 1, "token": "t" * 257}, "length <= 256"),
    ({"type": "hello", "protocol": 1, "resume": [{"table_id": 1}]}, "last_seq"),
    ({"type": "register", "tournament_id": "t1"}, "request_id"),
    ({"type": "register", "tournament_id": "t1", "request_id": "r" * 65}, "length <= 64"),
    ({"type": "act", "table_id": 1, "hand_number": 1, "action_id": "a", "action": "bet"}, "needs an amount"),
    (
        {"type": "act", "table_id": 1, "hand_number": 1, "action_id": "a", "action": "fold", "amount": 5},
        "no amount",
    ),
    (
        {"type": "act", "table_id": 1, "hand_number": 1, "action_id": "a", "action": "allin"},
        "Invalid enum value",
    ),
    (
        {"type": "act", "table_id": 1, "hand_number": 1, "action_id": "a", "action": "raise", "amount": 0},
        ">= 1",
    ),
    ({"type": "chat", "table_id": 1, "text": ""}, "length >= 1"),
    ({"type": "chat", "table_id": 1, "text": "two\nlines"}, "printable"),
    ({"type": "chat", "table_id": 1, "text": "y" * 201}, "length <= 200"),
]


@pytest.mark.parametrize("codec", CODECS, ids=lambda codec: codec.subprotocol)
@pytest.mark.parametrize(
    ("value", "reason"), INVALID, ids=[f"{v['type']}-{i}" for i, (v, _) in enumerate(INVALID)]
)
def test_protocol_bad_fields_are_invalid_field_naming_the_problem(
    codec: Codec, value: dict[str, Any], reason: str
) -> None:
    error = _refused(codec, _frame(codec, value))
    assert error.code is ErrorCode.INVALID_FIELD, repr(error)
    assert reason in error.message and error.message.startswith(value["type"]), error.message


def test_protocol_refusals_name_the_request_they_refuse() -> None:
    bad_act = {"type": "act", "table_id": 1, "hand_number": 2, "action_id": "a-9", "action": "bet"}
    assert _refused(JSON, json.dumps(bad_act)).request_id == "a-9"
    bad_register = {"type": "register", "tournament_id": 5, "request_id": "reg-1"}
    assert _refused(MSGPACK, msgpack.packb(bad_register)).request_id == "reg-1"
    unnamed = {"type": "register", "tournament_id": 5, "request_id": 7}
    assert _refused(JSON, json.dumps(unnamed)).request_id is None


def test_protocol_deep_nesting_is_refused_not_a_crash() -> None:
    for depth in (100, 5_000):
        nested_json = '{"type":"ping","nonce":1,"x":' + "[" * depth + "]" * depth + "}"
        assert _refused(JSON, nested_json).code in (ErrorCode.INVALID_FIELD, ErrorCode.BAD_FRAME)
        nested_pack = b"\x83\xa4type\xa4ping\xa5nonce\x01\xa1x" + b"\x91" * depth + b"\x90"
        assert _refused(MSGPACK, nested_pack).code in (ErrorCode.INVALID_FIELD, ErrorCode.BAD_FRAME)
    surrogate = '{"type":"chat","table_id":1,"text":"\ud800"}'
    assert _refused(JSON, surrogate).code in (ErrorCode.BAD_FRAME, ErrorCode.INVALID_FIELD)


# --- fuzzing -----------------------------------------------------------------------------------------


def _decode_any(codec: Codec, frame: Any) -> None:
    """Decode ``frame`` both ways: a message, or a ProtocolError with a code, nothing else."""
    for decode in (codec.decode_client, codec.decode_server):
        try:
            message = decode(frame)
        except ProtocolError as error:
            assert isinstance(error.code, ErrorCode) and error.message
        else:
            assert isinstance(message, Message)


@settings(max_examples=400, deadline=None)
@given(frame=st.one_of(st.binary(max_size=2_000), st.text(max_size=2_000)))
def test_protocol_fuzz_random_frames_raise_only_protocol_error(frame: bytes | str) -> None:
    for codec in CODECS:
        _decode_any(codec, frame)


_ENCODED = [(codec, codec.encode(message)) for codec in CODECS for message in ALL]


@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_protocol_fuzz_mutated_valid_frames_raise_only_protocol_error(data: st.DataObject) -> None:
    codec, frame = data.draw(st.sampled_from(_ENCODED))
    raw = bytearray(frame if isinstance(frame, bytes) else frame.encode("utf-8"))
    for _ in range(data.draw(st.integers(1, 4))):
        operation = data.draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        at = data.draw(st.integers(0, max(len(raw) - 1, 0)))
        if operation == "flip" and raw:
            raw[at] ^= data.draw(st.integers(1, 255))
        elif operation == "insert":
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=8))
        elif operation == "delete" and raw:
            del raw[at : at + data.draw(st.integers(1, 8))]
        else:
            del raw[at:]
    mutated: bytes | str = bytes(raw) if codec.binary else raw.decode("utf-8", "replace")
    _decode_any(codec, mutated)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_protocol_fuzz_valid_objects_with_changed_fields_raise_only_protocol_error(
    data: st.DataObject,
) -> None:
    message = data.draw(st.sampled_from(ALL))
    value = json.loads(JSON.encode(message))
    keys = sorted(value)
    for _ in range(data.draw(st.integers(1, 3))):
        operation = data.draw(st.sampled_from(["replace", "add", "remove"]))
        if operation == "replace":
            value[data.draw(st.sampled_from(keys))] = data.draw(_JSON_VALUES)
        elif operation == "add":
            value[data.draw(st.text(max_size=12))] = data.draw(_JSON_VALUES)
        else:
            value.pop(data.draw(st.sampled_from(keys)), None)
    for codec in CODECS:
        try:
            frame = _frame(codec, value)
        except (OverflowError, TypeError, ValueError):  # msgpack cannot hold that integer
            continue
        _decode_any(codec, frame)
