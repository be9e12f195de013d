"""Building frozen, slotted dataclass values without their ``__init__``.

A frozen dataclass's ``__init__`` stores each field through ``object.__setattr__``, about twice
the cost of the slot descriptor's own ``__set__``. On the few paths that build values per seat
per hand (a table's seats after a hand, a hand's seat setups) the difference is a tenth of a
simulated tournament's time, so ``builder`` writes a constructor that goes through the
descriptors directly, unrolled, the way ``dataclasses`` writes ``__init__`` itself. It runs no
``__post_init__``: use it only for values whose fields the caller has already checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import TypeVar

T = TypeVar("T")


def builder(cls: type[T]) -> Callable[..., T]:
    """A constructor for ``cls`` taking every field positionally, in declaration order; equal,
    hashable and immutable like one built by ``cls(...)``."""
    if not is_dataclass(cls) or "__slots__" not in vars(cls):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    names = [field.name for field in fields(cls)]
    scope: dict[str, object] = {"new": object.__new__, "cls": cls}
    lines = [f"def build({', '.join(names)}):", "    value = new(cls)"]
    for number, name in enumerate(names):
        scope[f"set_{number}"] = getattr(cls, name).__set__
        lines.append(f"    set_{number}(value, {name})")
    lines.append("    return value")
    exec("\n".join(lines), scope)  # names are the dataclass's own field names
    build: Callable[..., T] = scope["build"]  # type: ignore[assignment]
    build.__doc__ = f"{cls.__name__}({', '.join(names)}), built through its slots"
    return build
