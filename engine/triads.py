"""The can-method of a verify/can/do triad, made from its verify-method.

Every state change in the engine is a triad, as in pokerkit's ``state.py`` (STYLE.md):
``verify_x(...)`` raises a small, specific error saying why ``x`` is refused, ``can_x(...)``
answers the same question with a bool, and ``x(...)`` does it. The can-method holds no rule of
its own: it is the verify-method with the refusal caught, so it is written once, here::

    class Table:
        def verify_unseat(self, seat: int) -> None:
            ...  # raises a TableError subclass naming the reason

        can_unseat = can(verify_unseat, TableError)

It works the same on a module-level function (``can_plan = can(verify_plan, PlanError)``) and on
a method, where the result binds like any method; type checkers see the verify-method's
parameters with a ``bool`` result.

Only ``refusal`` (the module's base error) is caught: any other exception is a bug in the
verify-method and propagates, never turning into a silent ``False``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec

__all__ = ["can"]

P = ParamSpec("P")


def can(verify: Callable[P, object], refusal: type[Exception]) -> Callable[P, bool]:
    """The can-method of ``verify``: the same arguments, ``True`` when ``verify`` returns and
    ``False`` when it raises ``refusal`` (or a subclass). Named after ``verify`` with ``verify_``
    replaced by ``can_``."""

    def allowed(*args: P.args, **kwargs: P.kwargs) -> bool:
        try:
            verify(*args, **kwargs)
        except refusal:
            return False
        return True

    # Named and documented as if written out, so that help(), reprs and tracebacks read right.
    name = getattr(verify, "__name__", "check")
    allowed.__name__ = f"can_{name.removeprefix('verify_')}"
    owner = getattr(verify, "__qualname__", name).rpartition(".")[0]
    allowed.__qualname__ = f"{owner}.{allowed.__name__}" if owner else allowed.__name__
    allowed.__module__ = getattr(verify, "__module__", allowed.__module__)
    allowed.__doc__ = (
        f"Whether ``{name}`` accepts these arguments: ``True`` where it returns, ``False`` where it"
        f" raises ``{refusal.__name__}``."
    )
    return allowed
