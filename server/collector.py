"""The garbage collector of a long-running ``feltd serve``: frozen survivors, rare full passes.

With CPython's default settings (700 / 10 / 10) a server holding thousands of connections and
tables stops for a full collection whenever the objects that survived since the last one reach
a quarter of the long-lived ones; each full pass walks every tracked object of every
connection, table and hand, and at 5,000 players that stalled the event loop for up to a second
(docs/benchmarks.md, "bench live"). Reference counting frees almost everything the server makes;
the cycle collector is only needed for the few cycles (sessions and their listeners, tasks and
their exceptions), and those can wait.

So: young collections run less often (``young`` allocations, not 700), automatic full
collections are off, and every ``period`` seconds the youngest generation is collected (at most
``young`` objects: a few milliseconds) and everything alive is frozen (``gc.freeze``: moved to
the permanent generation, a constant-time move), which keeps the middle generation, and the
automatic collections of it, small. A collection of the young and middle generations every 2 s
instead paused 20-145 ms at 5,000 players on a loaded machine, a full one every 10 s 160-340 ms.
Cyclic garbage is rare here (a few dozen objects a full pass found, at 5,000 players): cycles
among frozen objects wait for a complete pass (``gc.unfreeze``, a full collection, freeze again)
every ``thaw_every`` seconds, the one long pause (it walks every object), made rare.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

log = logging.getLogger("feltd.collector")

YOUNG = 50_000  # allocations between young collections (CPython's default: 700)
MIDDLE = 20  # young collections per middle-generation one (default 10)
PERIOD = 2.0  # seconds between a youngest-generation collection and a freeze
THAW_EVERY = 900.0  # seconds between complete passes over the frozen objects too


def tune() -> None:
    """Freeze what start-up made and turn the automatic full collections off (the generation-2
    threshold is out of reach); ``maintain`` does the rest."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, MIDDLE, 1_000_000)


async def maintain(period: float = PERIOD, thaw_every: float = THAW_EVERY) -> None:
    """Collect the youngest generation and freeze every ``period`` seconds, and collect
    everything every ``thaw_every`` seconds (run as a task for the server's life)."""
    thawed = time.monotonic()
    while True:
        await asyncio.sleep(period)
        started = time.monotonic()
        complete = started - thawed >= thaw_every
        if complete:
            gc.unfreeze()
            thawed = started
        found = gc.collect() if complete else gc.collect(0)
        gc.freeze()
        pause = time.monotonic() - started
        log.log(
            logging.INFO if complete or pause > 0.02 else logging.DEBUG,
            "%s collection: %d unreachable, %.1f ms, %d frozen",
            "complete" if complete else "periodic",
            found,
            pause * 1000,
            gc.get_freeze_count(),
        )
