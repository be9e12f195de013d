"""Bus messages as bytes, for a bus between processes (``server.redis_bus``).

A message (``server.messages``) is plain data: frozen dataclasses, enums, tuples, ``protocol``
structs, ``Views``. msgpack alone would lose which class a value was and turn tuples into lists,
so ``encode`` first writes every value that is not a msgpack scalar as an array whose first item
says what it is, naming the class (``module:qualname``) where one is needed; ``decode`` rebuilds
the very same values (``==`` and types alike). Classes are looked up only in this project's
packages (``engine``, ``protocol``, ``server``) and only of the kinds above: nothing in a message
can make the decoder import or call anything else. No pickle.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import operator
from collections.abc import Callable
from typing import Any

import msgspec

from server.views import Views

# What an array's first item says it holds.
_TUPLE = 0
_LIST = 1
_DATACLASS = 2
_ENUM = 3
_STRUCT = 4
_FROZENSET = 5
_SET = 6
_VIEWS = 7
_TUPLE_CLASS = 8  # a tuple subclass with named fields (engine.events.ActionTaken)

# ``Views``: how the operators' copy relates to the others (copies that do not differ are the
# same object, and code compares them with ``is``).
_SAME_AS_PUBLIC = 0
_SAME_AS_OWNER = 1
_OWN = 2

_PACKAGES = ("engine.", "protocol.", "server.")
_SCALARS = frozenset({int, str, float, bool, bytes, type(None)})


class CodecError(ValueError):
    """Bytes that are no bus message of ours (corrupt, or from another version of the server)."""


def _tag(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


_classes: dict[str, type] = {}
_fields: dict[type, tuple[str, ...]] = {}
_struct_decoders: dict[str, msgspec.msgpack.Decoder[Any]] = {}
_encoder = msgspec.msgpack.Encoder()


def _class(tag: str) -> type:
    cls = _classes.get(tag)
    if cls is not None:
        return cls
    module_name, _, qualname = tag.partition(":")
    if not module_name.startswith(_PACKAGES) or not qualname:
        raise CodecError(f"no message class {tag!r}")
    try:
        found: object = importlib.import_module(module_name)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        raise CodecError(f"no message class {tag!r}") from None
    # the path may lead through an imported name (``server.app:logging.os.stat_result``): only
    # a class defined in our own packages is ever made from bytes
    if (
        not isinstance(found, type)
        or not found.__module__.startswith(_PACKAGES)
        or not (
            dataclasses.is_dataclass(found)
            or issubclass(found, enum.Enum | msgspec.Struct)
            or (issubclass(found, tuple) and hasattr(found, "__match_args__"))
        )
    ):
        raise CodecError(f"{tag!r} is not a message class")
    _classes[tag] = found
    return found


def _init_fields(cls: type) -> tuple[str, ...]:
    names = _fields.get(cls)
    if names is None:
        names = tuple(field.name for field in dataclasses.fields(cls) if field.init)
        _fields[cls] = names
    return names


# How to write each type and read each class, made once per type: a message is mostly a few
# classes over and over (a hand's events, the protocol's structs).
_writers: dict[type, Callable[[Any], object]] = {}
_dataclass_readers: dict[str, Callable[[list[Any]], object]] = {}


def _to_plain(value: object) -> object:
    kind = type(value)
    if kind in _SCALARS:
        return value
    writer = _writers.get(kind)
    if writer is None:
        writer = _writers[kind] = _writer(kind)
    return writer(value)


def _writer(kind: type) -> Callable[[Any], object]:
    if kind is tuple:
        return lambda value: [_TUPLE, *map(_to_plain, value)]
    tag = _tag(kind)
    if issubclass(kind, enum.Enum):  # before int and str: IntEnum and StrEnum are both
        return lambda value: [_ENUM, tag, value.value]
    if issubclass(kind, msgspec.Struct):
        encode_struct = _encoder.encode
        return lambda value: [_STRUCT, tag, encode_struct(value)]
    if issubclass(kind, Views):
        return _views_to_plain
    if dataclasses.is_dataclass(kind):
        names = _init_fields(kind)
        if not names:
            return lambda value: [_DATACLASS, tag]
        if len(names) == 1:
            name = names[0]
            return lambda value: [_DATACLASS, tag, _to_plain(getattr(value, name))]
        fields = operator.attrgetter(*names)
        return lambda value: [_DATACLASS, tag, *map(_to_plain, fields(value))]
    if issubclass(kind, tuple):
        return lambda value: [_TUPLE_CLASS, tag, *map(_to_plain, value)]
    if kind is list:
        return lambda value: [_LIST, *map(_to_plain, value)]
    if kind is frozenset:
        return lambda value: [_FROZENSET, *map(_to_plain, value)]
    if kind is set:
        return lambda value: [_SET, *map(_to_plain, value)]
    if kind is dict:
        return lambda value: {key: _to_plain(item) for key, item in value.items()}
    raise CodecError(f"cannot put a {kind.__qualname__} on the bus")


def _views_to_plain(value: Views[Any]) -> object:
    operators_mode = (
        _SAME_AS_PUBLIC
        if value.operators is value.public
        else _SAME_AS_OWNER
        if value.operators is value.owner
        else _OWN
    )
    return [
        _VIEWS,
        _to_plain(value.public),
        value.owner_seat,
        None if value.owner is value.public else _to_plain(value.owner),
        operators_mode,
        _to_plain(value.operators) if operators_mode == _OWN else None,
    ]


def _from_dataclass(plain: list[Any]) -> object:
    reader = _dataclass_readers.get(plain[1])
    if reader is None:
        reader = _dataclass_readers[plain[1]] = _dataclass_reader(_class(plain[1]))
    return reader(plain)


def _dataclass_reader(cls: type) -> Callable[[list[Any]], object]:
    if not dataclasses.is_dataclass(cls):
        raise CodecError(f"{_tag(cls)} is not a dataclass")
    names = _init_fields(cls)
    if any(field.kw_only for field in dataclasses.fields(cls) if field.init):
        return lambda plain: cls(**dict(zip(names, map(_from_plain, plain[2:]), strict=True)))

    def positional(plain: list[Any]) -> object:
        if len(plain) - 2 != len(names):
            raise CodecError(f"{_tag(cls)} has {len(names)} fields, not {len(plain) - 2}")
        return cls(*map(_from_plain, plain[2:]))

    return positional


def _from_enum(plain: list[Any]) -> object:
    return _class(plain[1])(plain[2])


def _from_struct(plain: list[Any]) -> object:
    decoder = _struct_decoders.get(plain[1])
    if decoder is None:
        cls = _class(plain[1])
        if not issubclass(cls, msgspec.Struct):
            raise CodecError(f"{plain[1]} is not a struct")
        decoder = _struct_decoders[plain[1]] = msgspec.msgpack.Decoder(cls)
    return decoder.decode(plain[2])


def _from_views(plain: list[Any]) -> object:
    _, public_plain, owner_seat, owner_plain, operators_mode, operators_plain = plain
    public = _from_plain(public_plain)
    owner = public if owner_plain is None else _from_plain(owner_plain)
    operators = (
        public
        if operators_mode == _SAME_AS_PUBLIC
        else owner
        if operators_mode == _SAME_AS_OWNER
        else _from_plain(operators_plain)
    )
    return Views(public, owner_seat, owner, operators)


def _from_tuple_class(plain: list[Any]) -> object:
    return _class(plain[1])(*map(_from_plain, plain[2:]))


_READERS: dict[int, Callable[[list[Any]], object]] = {
    _TUPLE: lambda plain: tuple(map(_from_plain, plain[1:])),
    _LIST: lambda plain: list(map(_from_plain, plain[1:])),
    _DATACLASS: _from_dataclass,
    _ENUM: _from_enum,
    _STRUCT: _from_struct,
    _FROZENSET: lambda plain: frozenset(map(_from_plain, plain[1:])),
    _SET: lambda plain: set(map(_from_plain, plain[1:])),
    _VIEWS: _from_views,
    _TUPLE_CLASS: _from_tuple_class,
}


def _from_plain(plain: object) -> object:
    kind = type(plain)
    if kind is list:
        reader = _READERS.get(plain[0])  # type: ignore[index]
        if reader is None:
            raise CodecError(f"unknown value kind {plain[0]!r}")  # type: ignore[index]
        return reader(plain)  # type: ignore[arg-type]
    if kind is dict:
        return {key: _from_plain(item) for key, item in plain.items()}  # type: ignore[attr-defined]
    return plain


def encode(message: object) -> bytes:
    """``message`` as bytes ``decode`` turns back into an equal message of the same types;
    ``CodecError`` for a value that cannot be written (an int past 64 bits, a foreign class)."""
    try:
        return _encoder.encode(_to_plain(message))
    except CodecError:
        raise
    except (TypeError, ValueError, OverflowError, RecursionError) as error:
        raise CodecError(f"cannot be sent on the bus: {error!r}") from None


def decode(data: bytes) -> object:
    """The message ``data`` holds; ``CodecError`` (and nothing else) for bytes that hold none."""
    try:
        return _from_plain(msgspec.msgpack.decode(data))
    except CodecError:
        raise
    except (
        msgspec.DecodeError,
        msgspec.ValidationError,
        TypeError,
        ValueError,
        IndexError,
        KeyError,
        AttributeError,
        OverflowError,
        RecursionError,
    ) as error:
        raise CodecError(f"not a bus message: {error!r}") from None
