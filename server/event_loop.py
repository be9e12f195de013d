"""The event loop ``feltd serve`` runs on: uvloop's when it is installed, asyncio's otherwise.

uvloop (libuv) makes the loop's own work, the transports' writes and reads and the timers,
cheaper than the standard selector loop; the server behaves the same on either. Setting
``FELTD_EVENT_LOOP=asyncio`` keeps the standard loop (to compare them, or to rule uvloop out).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any


def name() -> str:
    """``uvloop`` or ``asyncio``: the loop ``run`` uses."""
    if os.environ.get("FELTD_EVENT_LOOP", "") == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[Any, Any, int]) -> int:
    if name() == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
