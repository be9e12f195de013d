"""``engine.triads.can``: the can-method of a verify/can/do triad, made from the verify-method."""

from __future__ import annotations

import pytest

from engine.clock import TimeBanks
from engine.hand import Hand
from engine.table import Table
from engine.triads import can


class Refused(ValueError):
    pass


class Counter:
    def __init__(self) -> None:
        self.value = 0

    def verify_add(self, amount: int, *, limit: int = 10) -> None:
        if amount == 13:
            raise RuntimeError("a bug in the verify-method, not a refusal")
        if not 0 < amount <= limit - self.value:
            raise Refused(f"cannot add {amount} to {self.value} (limit {limit})")

    can_add = can(verify_add, Refused)


def verify_even(number: int) -> None:
    if number % 2:
        raise Refused(f"{number} is odd")


can_even = can(verify_even, Refused)


def test_can_answers_what_verify_accepts_on_a_method_and_a_function() -> None:
    counter = Counter()
    assert counter.can_add(3) is True and counter.can_add(11) is False, "expected True within the limit only"
    assert counter.can_add(11, limit=20) is True, "keyword arguments must reach the verify-method"
    counter.value = 8
    assert counter.can_add(3) is False, "the method must read its own instance"
    assert (can_even(4), can_even(5)) == (True, False)


def test_can_lets_anything_but_the_refusal_propagate() -> None:
    with pytest.raises(RuntimeError, match="a bug"):
        Counter().can_add(13)
    with pytest.raises(TypeError):
        can_even("four")  # type: ignore[arg-type]


def test_can_is_named_and_documented_as_a_can_method() -> None:
    assert (Counter.can_add.__name__, Counter.can_add.__qualname__) == ("can_add", "Counter.can_add")
    assert can_even.__name__ == "can_even" and can_even.__module__ == __name__
    assert "verify_add" in (Counter.can_add.__doc__ or "") and "Refused" in (Counter.can_add.__doc__ or "")


def test_engine_can_methods_are_made_from_their_verify_methods() -> None:
    for owner, names in (
        (Hand, ("fold", "check_or_call", "check", "call", "bet_or_raise_to", "timeout", "act", "kill")),
        (
            Table,
            ("seat_player", "unseat", "add_chips", "penalize", "disqualify", "start_hand", "finish_hand"),
        ),
        (TimeBanks, ("spend",)),
    ):
        for name in names:
            method = getattr(owner, f"can_{name}")
            assert method.__qualname__ == f"{owner.__name__}.can_{name}", f"{owner.__name__}.can_{name}"
            assert f"verify_{name}" in (method.__doc__ or ""), (
                f"{owner.__name__}.can_{name} must come from can()"
            )
