"""The one type for "a connection the store may run SQL on": a plain asyncpg connection or one
borrowed from a pool (asyncpg hands out a proxy there). Both speak the same methods."""

from __future__ import annotations

from typing import TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

DbConnection: TypeAlias = "asyncpg.Connection[asyncpg.Record] | PoolConnectionProxy[asyncpg.Record]"
