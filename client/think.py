"""How long a bot thinks before it acts: fixed, uniform or lognormal, in seconds.

A distribution is written ``fixed:S``, ``uniform:LOW,HIGH`` or ``lognormal:MEDIAN,SIGMA``
(``parse_think`` reads it; ``0`` alone means no thinking). Lognormal is the shape people's
decision times have: most quick, a long tail of slow ones; ``MEDIAN`` is its median and
``SIGMA`` the spread of its logarithm (0.5 to 1 looks human). ``scaled(factor)`` gives the same
shape ``factor`` times shorter or longer, for a server whose clock runs fast.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

__all__ = ["Fixed", "LogNormal", "ThinkTime", "ThinkTimeError", "Uniform", "parse_think"]


class ThinkTimeError(ValueError):
    """A think-time distribution that cannot be read or makes no sense."""


@dataclass(frozen=True, slots=True)
class Fixed:
    seconds: float

    def sample(self, rng: random.Random) -> float:
        return self.seconds

    def scaled(self, factor: float) -> Fixed:
        return Fixed(self.seconds * factor)

    def __str__(self) -> str:
        return f"fixed:{self.seconds:g}"


@dataclass(frozen=True, slots=True)
class Uniform:
    low: float
    high: float

    def sample(self, rng: random.Random) -> float:
        return rng.uniform(self.low, self.high)

    def scaled(self, factor: float) -> Uniform:
        return Uniform(self.low * factor, self.high * factor)

    def __str__(self) -> str:
        return f"uniform:{self.low:g},{self.high:g}"


@dataclass(frozen=True, slots=True)
class LogNormal:
    median: float
    sigma: float
    cap: float | None = None  # no sample above this (a shot clock the bot should not miss)

    def sample(self, rng: random.Random) -> float:
        value = rng.lognormvariate(math.log(self.median), self.sigma) if self.median > 0 else 0.0
        return value if self.cap is None else min(value, self.cap)

    def scaled(self, factor: float) -> LogNormal:
        return LogNormal(self.median * factor, self.sigma, None if self.cap is None else self.cap * factor)

    def __str__(self) -> str:
        return f"lognormal:{self.median:g},{self.sigma:g}"


ThinkTime = Fixed | Uniform | LogNormal


def _numbers(text: str, count: int, form: str) -> list[float]:
    parts = text.split(",") if text else []
    if len(parts) != count:
        raise ThinkTimeError(f"write {form}")
    try:
        values = [float(part) for part in parts]
    except ValueError:
        raise ThinkTimeError(f"write {form} with numbers, got {text!r}") from None
    if any(not math.isfinite(v) or v < 0 for v in values):
        raise ThinkTimeError(f"{form}: the numbers are finite and not negative, got {text!r}")
    return values


def parse_think(text: str) -> ThinkTime:
    """``fixed:S``, ``uniform:LOW,HIGH``, ``lognormal:MEDIAN,SIGMA`` or ``0`` (seconds)."""
    kind, _, rest = text.strip().partition(":")
    if kind in ("0", "none") and not rest:
        return Fixed(0.0)
    if kind == "fixed":
        (seconds,) = _numbers(rest, 1, "fixed:SECONDS")
        return Fixed(seconds)
    if kind == "uniform":
        low, high = _numbers(rest, 2, "uniform:LOW,HIGH")
        if low > high:
            raise ThinkTimeError(f"uniform:LOW,HIGH needs LOW <= HIGH, got {text!r}")
        return Uniform(low, high)
    if kind == "lognormal":
        median, sigma = _numbers(rest, 2, "lognormal:MEDIAN,SIGMA")
        return LogNormal(median, sigma)
    raise ThinkTimeError(
        f"{text!r} is not a think time: write fixed:S, uniform:LOW,HIGH or lognormal:MEDIAN,SIGMA (seconds)"
    )
