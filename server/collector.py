"""The garbage collector of a long-running ``feltd serve``: frozen survivors, rare full passes.

With CPython's default settings (700 / 10 / 10) a server holding thousands of connections and
tables stops for a full collection whenever the objects that survived since the last one reach
a quarter of the long-lived ones; each full pass walks every tracked object of every
connection, table and hand, and at 5,000 players that stalled the event loop for up to a second
(docs/benchmarks.md, "bench live"). Reference counting frees almost everything the server makes;
the cycle collector is only needed for the few cycles (sessions and their listeners, tasks and
their exceptions), and those can wait.

So: young collections run less often (``young`` allocations, not 700), automatic full
collections are off, and every ``period`` seconds the youngest generation is collected and
everything alive is frozen (``gc.freeze``: moved to the permanent generation, a constant-time
move), which keeps the middle generation, and the automatic collections of it, small. The young
pass costs in proportion to what survived since the one before: every 2 s it paused 40-60 ms at
10,000 players (556 actions/s), every 0.25 s 7 ms (p50; at most 24), for the same CPU in all. A
collection of the young and middle generations every 2 s instead paused 20-145 ms at 5,000
players on a loaded machine, a full one every 10 s 160-340 ms. Cyclic garbage is rare here (a
few dozen objects a full pass found, at 5,000 players): cycles among frozen objects wait for a
complete pass (``gc.unfreeze``, a full collection, freeze again) every ``thaw_every`` seconds,
the one long pause (it walks every object), made rare.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

log = logging.getLogger("feltd.collector")

YOUNG = 50_000  # allocations between young collections (CPython's default: 700)
MIDDLE = 20  # young collections per middle-generation one (default 10)
PERIOD = 0.25  # seconds between a youngest-generation collection and a freeze
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
        if complete:
            # gc.get_freeze_count() walks the whole permanent generation, one object at a time:
            # at 10,000 players that walk alone stopped the loop for 220-290 ms, so only the
            # complete pass (which walks everything anyway) counts the frozen objects
            log.info(
                "complete collection: %d unreachable, %.1f ms, %d frozen",
                found,
                pause * 1000,
                gc.get_freeze_count(),
            )
        else:
            log.log(
                logging.INFO if pause > 0.02 else logging.DEBUG,
                "periodic collection: %d unreachable, %.1f ms",
                found,
                pause * 1000,
            )
