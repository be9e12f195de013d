"""The garbage collector of a long-running ``feltd serve``: frozen survivors, rare full passes.

With CPython's default settings (700 / 10 / 10) a server holding thousands of connections and
tables stops for a full collection whenever the objects that survived since the last one reach
a quarter of the long-lived ones; each full pass walks every tracked object of every
connection, table and hand, and at 5,000 players that stalled the event loop for up to a second
(docs/benchmarks.md, "bench live"). Reference counting frees almost everything the server makes;
the cycle collector is only needed for the few cycles (sessions and their listeners, tasks and
their exceptions), and those can wait.

So: young collections run less often (``young`` allocations, not 700), automatic full
collections are off, and every ``period`` seconds the young generations are collected and
everything that survived them is frozen (``gc.freeze``: moved to the permanent generation, never
walked again; a constant-time move). The pause is a young collection's, whatever the size of the
heap. What the server's periodic full passes found unreachable was a few dozen objects a pass
(bench live, 5,000 players), so cycles are rare: those among frozen objects are reclaimed by a
complete pass (``gc.unfreeze``, then a full collection, then freeze again) every ``thaw_every``
seconds, the one long pause (it walks every object), made rare.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

log = logging.getLogger("feltd.collector")

YOUNG = 50_000  # allocations between young collections (CPython's default: 700)
MIDDLE = 20  # young collections per middle-generation one (default 10)
PERIOD = 2.0  # seconds between a young collection and a freeze of what survived it
THAW_EVERY = 900.0  # seconds between complete passes over the frozen objects too


def tune() -> None:
    """Freeze what start-up made and turn the automatic full collections off (the generation-2
    threshold is out of reach); ``maintain`` does the rest."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, MIDDLE, 1_000_000)


async def maintain(period: float = PERIOD, thaw_every: float = THAW_EVERY) -> None:
    """Collect the young generations and freeze every ``period`` seconds, and collect
    everything every ``thaw_every`` seconds (run as a task for the server's life)."""
    thawed = time.monotonic()
    while True:
        await asyncio.sleep(period)
        started = time.monotonic()
        complete = started - thawed >= thaw_every
        if complete:
            gc.unfreeze()
            thawed = started
        found = gc.collect() if complete else gc.collect(1)
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
