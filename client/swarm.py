"""A crowd of bots in one process: started with a ramp (a bounded number connecting at once),
run until the tournament is over for every one of them (or a deadline), measured together.

``Swarm.progress_line`` is the one-line live summary (connected, registered, hands, actions/s,
p99 over the last interval, errors) and ``Swarm.report`` the final numbers (``LoadStats.report``,
frames and bytes of every connection included).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from client.bot import Bot, Chaos
from client.connection import Connection
from client.stats import LoadStats
from client.strategies import Strategy
from client.think import Fixed, ThinkTime
from protocol.codec import MSGPACK_SUBPROTOCOL

__all__ = ["BotAccount", "Swarm"]

CONNECTING_AT_ONCE = 32


@dataclass(frozen=True, slots=True)
class BotAccount:
    """A player account a bot logs in with, and how it plays."""

    player: str
    token: str
    strategy: Strategy


class Swarm:
    """Bots for ``accounts``, all in ``tournament_id`` (see the module docstring)."""

    def __init__(
        self,
        url: str,
        tournament_id: str,
        accounts: Sequence[BotAccount],
        *,
        think: ThinkTime | None = None,
        chaos: Chaos | None = None,
        seed: int = 0,
        subprotocol: str = MSGPACK_SUBPROTOCOL,
        connecting_at_once: int = CONNECTING_AT_ONCE,
    ) -> None:
        self.stats = LoadStats()
        self.stats.bots = len(accounts)
        gate = asyncio.Semaphore(connecting_at_once)
        self.bots = [
            Bot(
                Connection(url, token=account.token, subprotocol=subprotocol, client_name="feltd-bots/1"),
                tournament_id,
                account.strategy,
                self.stats,
                think=think or Fixed(0.0),
                chaos=chaos or Chaos(),
                seed=seed * 1_000_003 + index,
                name=account.player,
                gate=gate,
            )
            for index, account in enumerate(accounts)
        ]
        self._last_tick = time.monotonic()
        self._last_broadcast = 0
        self.elapsed: float | None = None

    async def run(
        self,
        *,
        progress: Callable[[Swarm], None] | None = None,
        every: float = 1.0,
        deadline: float | None = None,
    ) -> bool:
        """Run every bot until each is done; ``progress(self)`` every ``every`` seconds. With
        ``deadline`` (seconds), bots still playing then are stopped; returns whether all finished."""
        self.stats.started = time.monotonic()
        self._last_tick = self.stats.started
        tasks = [asyncio.create_task(bot.run(), name=f"bot {bot.name}") for bot in self.bots]
        everyone = asyncio.gather(*tasks)
        ticker = asyncio.create_task(self._tick(progress, every)) if progress is not None else None
        finished = True
        try:
            if deadline is None:
                await everyone
            else:
                try:
                    await asyncio.wait_for(asyncio.shield(everyone), deadline)
                except TimeoutError:
                    finished = False
                    for task in tasks:
                        task.cancel()
                    await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            if ticker is not None:
                ticker.cancel()
            self.elapsed = time.monotonic() - self.stats.started
        return finished

    async def _tick(self, progress: Callable[[Swarm], None], every: float) -> None:
        while True:
            await asyncio.sleep(every)
            progress(self)

    def totals(self) -> tuple[int, int, int, int]:
        """Frames in, bytes in, frames out, bytes out: closed connections' and open ones'."""
        s = self.stats
        frames_in, bytes_in, frames_out, bytes_out = s.frames_in, s.bytes_in, s.frames_out, s.bytes_out
        for bot in self.bots:
            c = bot.connection
            frames_in += c.frames_in
            bytes_in += c.bytes_in
            frames_out += c.frames_out
            bytes_out += c.bytes_out
        return frames_in, bytes_in, frames_out, bytes_out

    def interval(self) -> tuple[float, int, float]:
        """Since the last call: actions seen broadcast per second, latency samples, their p99."""
        now = time.monotonic()
        s = self.stats
        seconds = max(1e-9, now - self._last_tick)
        rate = (s.broadcast - self._last_broadcast) / seconds
        self._last_tick, self._last_broadcast = now, s.broadcast
        samples, p99 = s.window()
        return rate, samples, p99

    def progress_line(self) -> str:
        """connected, registered, hands, actions/s and p99 since the last line, errors."""
        s = self.stats
        rate, samples, p99 = self.interval()
        latency = f"p99 {p99 * 1000:.1f} ms" if samples else "p99 -"
        errors = sum(s.errors.values())
        return (
            f"connected {s.connected}/{s.bots}  registered {s.registered}  hands {len(s.hands)}  "
            f"actions/s {rate:.1f}  {latency}  errors {errors}  reconnects {s.reconnects}"
        )

    def report(self) -> dict[str, Any]:
        frames_in, bytes_in, frames_out, bytes_out = self.totals()
        return self.stats.report(
            frames_in=frames_in,
            bytes_in=bytes_in,
            frames_out=frames_out,
            bytes_out=bytes_out,
            elapsed=self.elapsed,
        )
