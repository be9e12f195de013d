"""The test services are real: a PostgreSQL and a Redis that keep what they are given."""

from __future__ import annotations

import asyncpg
import redis.asyncio as aioredis


async def test_postgres_round_trip(pg: asyncpg.Connection) -> None:
    await pg.execute("CREATE TABLE round_trip (id int PRIMARY KEY, name text NOT NULL)")
    await pg.execute("INSERT INTO round_trip VALUES ($1, $2)", 7, "seven")
    row = await pg.fetchrow("SELECT id, name FROM round_trip WHERE id = $1", 7)
    assert row is not None and (row["id"], row["name"]) == (7, "seven"), row
    assert await pg.fetchval("SELECT current_database()") != "postgres"


async def test_redis_round_trip(redis_client: aioredis.Redis, redis_prefix: str) -> None:
    key = redis_prefix + "round-trip"
    await redis_client.set(key, b"value")
    assert await redis_client.get(key) == b"value"
    assert await redis_client.incr(redis_prefix + "counter") == 1
