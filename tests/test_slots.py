"""engine.slots.builder: a faster constructor that builds the very same frozen values."""

from __future__ import annotations

import dataclasses

import pytest

from engine.betting import SeatSetup
from engine.slots import builder
from engine.table import SeatedPlayer


def test_builder_makes_values_equal_to_the_dataclass_constructor() -> None:
    build = builder(SeatedPlayer)
    built = build(3, "p1", 1500, True, False, 2)
    plain = SeatedPlayer(3, "p1", 1500, True, False, 2)
    assert built == plain and hash(built) == hash(plain) and repr(built) == repr(plain)
    assert type(built) is SeatedPlayer
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.stack = 1  # type: ignore[misc]
    setup = builder(SeatSetup)(1, "p2", 40, False)
    assert setup == SeatSetup(seat=1, player="p2", stack=40, absent=False)


def test_builder_wants_every_field_and_a_slotted_dataclass() -> None:
    with pytest.raises(TypeError):
        builder(SeatedPlayer)(3, "p1")

    @dataclasses.dataclass(frozen=True)
    class Loose:
        value: int

    with pytest.raises(TypeError, match="not a slotted dataclass"):
        builder(Loose)
