"""The garbage collector of a long-running ``feltd serve``: frozen survivors, rare full passes.

With CPython's default settings (700 / 10 / 10) a server holding thousands of connections and
tables stops for a full collection whenever the objects that survived since the last one reach
a quarter of the long-lived ones; each full pass walks every tracked object of every
connection, table and hand, and at 5,000 players that stalled the event loop for up to a second
(docs/benchmarks.md, "bench live"). Reference counting frees almost everything the server makes;
the cycle collector is only needed for the few cycles (tasks and their exceptions, in rare
paths), and those can wait.

So: young collections run less often (``young`` allocations, not 700), automatic full
collections are off, and every ``period`` seconds everything alive is frozen (``gc.freeze``:
moved to the permanent generation, a constant-time move that also resets the young count), which
keeps the young and middle generations, and the automatic collections of them, small. The
periodic pass collects nothing: at 3,000 players and ~3,500 actions/s a young collection before
each freeze found 0 unreachable objects in 231 passes (58 s), while it paused the loop 7.6 ms on
average (at most 26) four times a second, 5 % of the server's CPU (py-spy). Reference counting
frees what the server makes (a closed session too: the gateway breaks its cycles); the few
cycles left wait, frozen, for a complete pass (``gc.unfreeze``, a full collection, freeze again)
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
PERIOD = 0.25  # seconds between freezes
THAW_EVERY = 900.0  # seconds between complete passes over the frozen objects too


def tune() -> None:
    """Freeze what start-up made and turn the automatic full collections off (the generation-2
    threshold is out of reach); ``maintain`` does the rest."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, MIDDLE, 1_000_000)


async def maintain(period: float = PERIOD, thaw_every: float = THAW_EVERY) -> None:
    """Freeze every ``period`` seconds, and collect everything every ``thaw_every`` seconds
    (run as a task for the server's life)."""
    thawed = time.monotonic()
    while True:
        await asyncio.sleep(period)
        started = time.monotonic()
        complete = started - thawed >= thaw_every
        if not complete:
            gc.freeze()
            continue
        gc.unfreeze()
        thawed = started
        found = gc.collect()
        gc.freeze()
        # gc.get_freeze_count() walks the whole permanent generation, one object at a time: at
        # 10,000 players that walk alone stopped the loop for 220-290 ms, so only the complete
        # pass (which walks everything anyway) counts the frozen objects
        log.info(
            "complete collection: %d unreachable, %.1f ms, %d frozen",
            found,
            (time.monotonic() - started) * 1000,
            gc.get_freeze_count(),
        )
