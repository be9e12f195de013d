"""What a crowd of bots measured: actions, errors by kind, reconnects, frames and bytes, and the
action->broadcast latency (from the moment an action was due to the moment the bot saw its own
``action_taken``), with percentiles over the whole run and over the last progress interval.

Latencies are kept as a list of floats: a run of a few million actions is a few dozen MB, and
exact percentiles need no binning decisions.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LoadStats", "percentile"]


def percentile(ordered: list[float], fraction: float) -> float:
    """The nearest-rank percentile of already sorted values (0.0 for none)."""
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass(slots=True)
class LoadStats:
    """Counters shared by every bot of one process (one event loop: no locks needed)."""

    started: float = field(default_factory=time.monotonic)
    bots: int = 0
    connected: int = 0  # connections open now
    registered: int = 0  # bots whose registration the server acknowledged
    finished: int = 0  # bots whose tournament is over for them
    actions: int = 0  # act frames sent (a resend after a reconnect counts again)
    broadcast: int = 0  # own actions seen come back as action_taken
    timed_out: int = 0  # turns the table acted for a bot
    reconnects: int = 0
    chaos: Counter[str] = field(default_factory=Counter)  # disconnects, sit-outs, bad frames made on purpose
    errors: Counter[str] = field(default_factory=Counter)  # server error codes, and client-side failures
    latencies: list[float] = field(default_factory=list)  # seconds
    hands: set[tuple[int, int]] = field(default_factory=set)  # (table, hand) seen by any bot
    frames_in: int = 0  # of connections already closed; open ones are added by the owner
    bytes_in: int = 0
    frames_out: int = 0
    bytes_out: int = 0
    _window_from: int = 0  # index in latencies where the progress interval began

    def latency(self, seconds: float) -> None:
        self.latencies.append(seconds)

    def window(self) -> tuple[int, float]:
        """Latencies since the last call: how many, and their p99 in seconds."""
        recent = sorted(self.latencies[self._window_from :])
        self._window_from = len(self.latencies)
        return len(recent), percentile(recent, 0.99)

    def report(
        self,
        *,
        frames_in: int,
        bytes_in: int,
        frames_out: int,
        bytes_out: int,
        elapsed: float | None = None,
    ) -> dict[str, Any]:
        """The final report as plain data (JSON-ready); frames and bytes are the totals of
        every connection, open or closed."""
        seconds = elapsed if elapsed is not None else time.monotonic() - self.started
        ordered = sorted(self.latencies)

        def ms(value: float) -> float:
            return round(value * 1000, 2)

        return {
            "seconds": round(seconds, 2),
            "bots": self.bots,
            "registered": self.registered,
            "finished": self.finished,
            "hands": len(self.hands),
            "actions": self.actions,
            "actions_per_second": round(self.broadcast / seconds, 1) if seconds > 0 else 0.0,
            "timed_out": self.timed_out,
            "reconnects": self.reconnects,
            "chaos": dict(sorted(self.chaos.items())),
            "errors": dict(sorted(self.errors.items())),
            "latency_ms": {
                "samples": len(ordered),
                "p50": ms(percentile(ordered, 0.50)),
                "p95": ms(percentile(ordered, 0.95)),
                "p99": ms(percentile(ordered, 0.99)),
                "max": ms(ordered[-1] if ordered else 0.0),
            },
            "frames_in_per_second": round(frames_in / seconds, 1) if seconds > 0 else 0.0,
            "bytes_in_per_second": round(bytes_in / seconds) if seconds > 0 else 0,
            "frames_out_per_second": round(frames_out / seconds, 1) if seconds > 0 else 0.0,
            "bytes_out_per_second": round(bytes_out / seconds) if seconds > 0 else 0,
            "frames_in": frames_in,
            "bytes_in": bytes_in,
            "frames_out": frames_out,
            "bytes_out": bytes_out,
        }
