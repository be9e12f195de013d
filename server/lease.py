"""Leases in Redis with fencing tokens: which worker owns a tournament, and for how long.

A lease is a key ``{prefix}lease:{resource}`` holding ``{token}:{owner}`` with a time to live:
``acquire`` sets it only if absent (SET NX PX) and draws its token from the resource's counter
``{prefix}fence:{resource}`` (INCR) in the same Lua script, so every lease of a resource has a
larger token than all before it. ``renew`` and ``release`` act only while the key still holds
this very lease (a compare in Lua): a worker whose lease expired and was taken cannot extend or
delete its successor's.

A lease alone cannot stop a worker that paused past its expiry from writing: the token can.
Every write of the owner carries it (``server.store.fencing``) and PostgreSQL refuses a token
older than the newest it has seen.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, cast

import redis.asyncio as aioredis

DEFAULT_TTL_SECONDS = 10.0
DEFAULT_PREFIX = "feltd:"

# KEYS: lease, counter; ARGV: owner, ttl ms. The token, or nil when the lease is held.
_ACQUIRE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], token .. ':' .. ARGV[1], 'PX', ARGV[2])
return token
"""
# KEYS: lease; ARGV: the lease's value, ttl ms. 1 if extended, 0 if it is no longer ours.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
# KEYS: lease; ARGV: the lease's value. 1 if deleted, 0 if it was no longer ours.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
# KEYS: counter; ARGV: a token PostgreSQL recorded. The counter moves up to it, never down.
_RAISE_FLOOR = """
local now = tonumber(redis.call('GET', KEYS[1]) or '0')
if now < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
"""


@dataclass(frozen=True, slots=True)
class Lease:
    """``owner`` holds ``resource`` with fencing token ``token`` (until it expires)."""

    resource: str
    owner: str
    token: int

    @property
    def value(self) -> str:
        return f"{self.token}:{self.owner}"


class Leases:
    """Leases of one owner (a worker) on one Redis; ``ttl`` seconds each, renewed by the caller
    (every ``renew_every`` seconds, a third of the TTL)."""

    def __init__(
        self,
        redis: aioredis.Redis,
        *,
        owner: str | None = None,
        ttl: float = DEFAULT_TTL_SECONDS,
        prefix: str = DEFAULT_PREFIX,
    ) -> None:
        if ttl <= 0:
            raise ValueError(f"a lease lasts more than 0 seconds, got {ttl}")
        self.redis = redis
        self.owner = owner if owner is not None else f"worker-{secrets.token_hex(6)}"
        if not self.owner or ":" in self.owner:
            raise ValueError(f"an owner is a non-empty name without ':', got {self.owner!r}")
        self.ttl = ttl
        self.prefix = prefix
        self._acquire = redis.register_script(_ACQUIRE)
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)
        self._raise_floor = redis.register_script(_RAISE_FLOOR)

    @property
    def renew_every(self) -> float:
        return self.ttl / 3

    @property
    def _ttl_ms(self) -> int:
        return max(1, round(self.ttl * 1000))

    def lease_key(self, resource: str) -> str:
        return f"{self.prefix}lease:{resource}"

    def counter_key(self, resource: str) -> str:
        return f"{self.prefix}fence:{resource}"

    async def acquire(self, resource: str) -> Lease | None:
        """The lease of ``resource`` with a token larger than any before, or ``None`` while
        someone (this owner included) holds it."""
        token = await self._call(
            self._acquire, [self.lease_key(resource), self.counter_key(resource)], [self.owner, self._ttl_ms]
        )
        return None if token is None else Lease(resource, self.owner, int(token))

    async def renew(self, lease: Lease) -> bool:
        """Extend ``lease`` by the TTL from now; ``False`` if it expired (and maybe was taken)."""
        return bool(
            await self._call(self._renew, [self.lease_key(lease.resource)], [lease.value, self._ttl_ms])
        )

    async def release(self, lease: Lease) -> bool:
        """Give ``lease`` up (the next ``acquire`` by anyone gets the resource at once); ``False``
        if it was not held any more."""
        return bool(await self._call(self._release, [self.lease_key(lease.resource)], [lease.value]))

    async def holder(self, resource: str) -> Lease | None:
        """Who holds ``resource`` now, if anyone."""
        value = await self.redis.get(self.lease_key(resource))
        if value is None:
            return None
        text = value.decode() if isinstance(value, bytes) else str(value)
        token, _, owner = text.partition(":")
        return Lease(resource, owner, int(token))

    async def raise_floor(self, resource: str, token: int) -> None:
        """Make the next token of ``resource`` larger than ``token`` (one PostgreSQL recorded):
        after Redis lost its counters, new leases would otherwise all be fenced out."""
        await self._call(self._raise_floor, [self.counter_key(resource)], [token])

    @staticmethod
    async def _call(script: Any, keys: list[str], args: list[object]) -> Any:
        return await cast("Any", script)(keys=keys, args=args)


__all__ = ["DEFAULT_TTL_SECONDS", "Lease", "Leases"]
