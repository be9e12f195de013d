"""The server's clock, injectable: real time in production, faster time in tests and the demo.

Everything in the server that waits (shot clocks, the tournament's ticks, the pause between
hands) asks a ``Clock`` for the time and sleeps on it, never on ``time`` or ``asyncio.sleep``
directly. ``ScaledClock(speed)`` runs ``speed`` times faster than the wall: a 10-hour tournament
at ``speed=600`` takes a minute, and its timestamps still look like a real day's.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    """Seconds since the Unix epoch (``now``), and sleeping in those seconds."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...

    def to_wall(self, seconds: float) -> float:
        """How many real seconds ``seconds`` of this clock last (for timeouts on real I/O)."""
        ...


class RealClock:
    """The wall clock."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def to_wall(self, seconds: float) -> float:
        return seconds


class ScaledClock:
    """A clock ``speed`` times faster than the wall, starting at ``start`` (default: now).

    With ``anchor`` (seconds since the epoch) it reads ``anchor + (wall - anchor) * speed``
    instead: every process given the same anchor and speed reads the same time, so a server
    restarted in a test (or the crash campaign) finds its tournament's clock where it was."""

    def __init__(self, speed: float, start: float | None = None, *, anchor: float | None = None) -> None:
        if not speed > 0:
            raise ValueError(f"a clock's speed is > 0, got {speed!r}")
        self.speed = speed
        self._anchor = anchor
        self._origin = time.time() if start is None else start
        self._base = time.monotonic()

    def now(self) -> float:
        if self._anchor is not None:
            return self._anchor + (time.time() - self._anchor) * self.speed
        return self._origin + (time.monotonic() - self._base) * self.speed

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.speed)

    def to_wall(self, seconds: float) -> float:
        return seconds / self.speed


def milliseconds(seconds: float) -> int:
    """A time on the wire: integer milliseconds since the epoch."""
    return int(seconds * 1000)
