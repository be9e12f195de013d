"""An event-loop lag probe: how late a periodic timer fires, to find a latency tail's stalls.

A process's loop that is busy (a long callback, a garbage collection, a wait for the CPU) runs
its timers late; a 10 ms timer's lateness, sampled all along, shows when and how long each
stall was. The bench's load generators keep one each and report it per window, so a tail that
is the generator's own can be told from the server's.
"""

from __future__ import annotations

import asyncio
import time
from array import array

INTERVAL = 0.010  # seconds between ticks


class LagProbe:
    """Ticks every ``interval`` seconds on the running loop and records each tick's lateness."""

    def __init__(self, interval: float = INTERVAL) -> None:
        self.interval = interval
        self.at = array("d")  # time.monotonic() of each tick
        self.late = array("d")  # seconds past when it was due
        self._loop = asyncio.get_running_loop()
        self._due = time.monotonic() + interval
        self._handle: asyncio.TimerHandle | None = self._loop.call_later(interval, self._tick)

    def _tick(self) -> None:
        now = time.monotonic()
        self.at.append(now)
        self.late.append(max(0.0, now - self._due))
        self._due = now + self.interval
        self._handle = self._loop.call_later(self.interval, self._tick)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def window(self, start: float, end: float) -> list[float]:
        """The lateness of the ticks in ``[start, end)`` (``time.monotonic()`` times)."""
        return [self.late[i] for i in range(len(self.at)) if start <= self.at[i] < end]
