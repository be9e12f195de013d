"""Fencing tokens in PostgreSQL: a write is stored only if its owner still holds its resource.

A worker that holds a tournament's lease (``server.lease``) writes with ``Fence(resource, token)``,
the lease's token. ``fence_on(conn, fences)``, called inside the write's transaction, runs
``feltd_fence`` (migration 0013): it locks each resource's row until the transaction ends, raises
``FencedOut`` (and the transaction rolls back) when a newer token was recorded, and records a
newer one. ``claim`` does that alone, at acquisition, so the previous owner is fenced out before
the new one reads anything.

Every store write that takes ``fence=`` (or ``fences=``) makes this check in its own transaction;
``None`` (or nothing) writes unchecked, as a single process or the admin CLI does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import asyncpg

from server.store.dbconn import DbConnection
from server.store.errors import FencedOut

DEFAULT_TIMEOUT_S = 30.0
FENCED_OUT_SQLSTATE = "FD001"


@dataclass(frozen=True, slots=True, order=True)
class Fence:
    """Writes to ``resource`` (a tournament id: its coordinator and tables) under lease ``token``."""

    resource: str
    token: int


async def fence_on(
    conn: DbConnection, fences: Iterable[Fence], *, timeout: float = DEFAULT_TIMEOUT_S
) -> None:
    """Check (and record) ``fences`` inside the caller's transaction; ``FencedOut`` if one is stale.
    Nothing is sent for no fences."""
    unique = sorted(set(fences))
    if not unique:
        return
    try:
        await conn.execute(
            "SELECT feltd_fence($1::text[], $2::bigint[])",
            [f.resource for f in unique],
            [f.token for f in unique],
            timeout=timeout,
        )
    except asyncpg.PostgresError as error:
        refused = fenced_out(error)
        if refused is None:
            raise
        raise refused from None


def fenced_out(error: BaseException) -> FencedOut | None:
    """The ``FencedOut`` an asyncpg error stands for, if it is ``feltd_fence``'s refusal."""
    if getattr(error, "sqlstate", None) != FENCED_OUT_SQLSTATE:
        return None
    detail = json.loads(getattr(error, "detail", None) or "{}")
    return FencedOut(
        str(detail.get("resource", "")), int(detail.get("token", 0)), int(detail.get("recorded", 0))
    )


async def claim(pool: asyncpg.Pool, fence: Fence, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
    """Record ``fence`` as the resource's newest token now, before its new owner reads or writes:
    from its commit on, every write with an older token is refused. ``FencedOut`` if the token is
    not newer than the recorded one (equal included: a Redis that lost its last increment handed
    out the live owner's token again)."""
    async with pool.acquire(timeout=timeout) as conn, conn.transaction():
        try:
            await conn.execute(
                "SELECT feltd_claim($1::text, $2::bigint)", fence.resource, fence.token, timeout=timeout
            )
        except asyncpg.PostgresError as error:
            refused = fenced_out(error)
            if refused is None:
                raise
            raise refused from None


async def recorded(pool: asyncpg.Pool, resource: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> int | None:
    """The newest token recorded for ``resource``, if any."""
    async with pool.acquire(timeout=timeout) as conn:
        value = await conn.fetchval(
            "SELECT token FROM write_fences WHERE resource = $1", resource, timeout=timeout
        )
    return None if value is None else int(value)


__all__ = ["FENCED_OUT_SQLSTATE", "Fence", "claim", "fence_on", "fenced_out", "recorded"]
