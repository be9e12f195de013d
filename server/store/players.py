"""Players and operators: unique names, access tokens shown once and kept only as SHA-256.

A token is 32 random bytes (``secrets.token_urlsafe``), so a fast hash is enough: nobody can
guess one, and a leaked table of hashes does not let anyone log in.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from engine.tournament.transfers import player_account
from server.store.errors import PlayerError, PlayerExists, UnknownPlayer
from server.store.postgres_text import is_storable

DEFAULT_TIMEOUT_S = 30.0
MAX_NAME_LENGTH = 64


@dataclass(frozen=True, slots=True)
class Player:
    id: str
    name: str
    created_at: datetime

    @property
    def account(self) -> str:
        """The player's ledger account name."""
        return player_account(self.id)


@dataclass(frozen=True, slots=True)
class NewPlayer:
    """A created player and its access token; the token is never stored or shown again."""

    player: Player
    token: str


@dataclass(frozen=True, slots=True)
class Operator:
    id: int
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class NewOperator:
    operator: Operator
    token: str


def new_token() -> str:
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def verify_name(name: str) -> None:
    """Raise ``PlayerError`` unless ``name`` is 1..64 printable characters without edge spaces."""
    if not name or len(name) > MAX_NAME_LENGTH:
        raise PlayerError(f"a name is 1 to {MAX_NAME_LENGTH} characters, got {len(name)}")
    if name != name.strip() or not name.isprintable():
        raise PlayerError(f"a name is printable with no leading or trailing spaces, got {name!r}")


class Players:
    """Player and operator accounts on a connection pool; every query has a timeout."""

    def __init__(self, pool: asyncpg.Pool, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self._pool = pool
        self._timeout = timeout

    async def add(self, name: str, *, player_id: str | None = None) -> NewPlayer:
        """Create a player (id from a sequence unless given); raises ``PlayerExists`` if taken."""
        verify_name(name)
        if player_id is not None and not (player_id and is_storable(player_id)):
            raise PlayerError(f"a player id is non-empty UTF-8 text without NUL, got {player_id!r}")
        token = new_token()
        async with self._pool.acquire(timeout=self._timeout) as conn:
            try:
                if player_id is None:
                    row = await conn.fetchrow(
                        "INSERT INTO players (name, token_hash) VALUES ($1, $2) "
                        "RETURNING id, name, created_at",
                        name,
                        hash_token(token),
                        timeout=self._timeout,
                    )
                else:
                    row = await conn.fetchrow(
                        "INSERT INTO players (id, name, token_hash) VALUES ($1, $2, $3) "
                        "RETURNING id, name, created_at",
                        player_id,
                        name,
                        hash_token(token),
                        timeout=self._timeout,
                    )
            except asyncpg.exceptions.UniqueViolationError as error:
                taken = f"named {name!r}" if player_id is None else f"named {name!r} or with id {player_id!r}"
                raise PlayerExists(f"a player {taken} exists") from error
        assert row is not None
        return NewPlayer(Player(row["id"], row["name"], row["created_at"]), token)

    async def get(self, name: str) -> Player:
        """The player called ``name``; ``UnknownPlayer`` if none."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            row = await conn.fetchrow(
                "SELECT id, name, created_at FROM players WHERE name = $1", name, timeout=self._timeout
            )
        if row is None:
            raise UnknownPlayer(f"no player is named {name!r}")
        return Player(row["id"], row["name"], row["created_at"])

    async def get_by_id(self, player_id: str) -> Player:
        async with self._pool.acquire(timeout=self._timeout) as conn:
            row = await conn.fetchrow(
                "SELECT id, name, created_at FROM players WHERE id = $1", player_id, timeout=self._timeout
            )
        if row is None:
            raise UnknownPlayer(f"no player has id {player_id!r}")
        return Player(row["id"], row["name"], row["created_at"])

    async def authenticate(self, token: str) -> Player | None:
        """The player holding ``token``, or ``None``."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            row = await conn.fetchrow(
                "SELECT id, name, created_at FROM players WHERE token_hash = $1",
                hash_token(token),
                timeout=self._timeout,
            )
        return None if row is None else Player(row["id"], row["name"], row["created_at"])

    async def add_operator(self, name: str) -> NewOperator:
        verify_name(name)
        token = new_token()
        async with self._pool.acquire(timeout=self._timeout) as conn:
            try:
                row = await conn.fetchrow(
                    "INSERT INTO operators (name, token_hash) VALUES ($1, $2) RETURNING id, name, created_at",
                    name,
                    hash_token(token),
                    timeout=self._timeout,
                )
            except asyncpg.exceptions.UniqueViolationError as error:
                raise PlayerExists(f"an operator named {name!r} exists") from error
        assert row is not None
        return NewOperator(Operator(int(row["id"]), row["name"], row["created_at"]), token)

    async def operators(self) -> list[Operator]:
        """Every operator account, oldest first (never a token: only hashes are kept)."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                "SELECT id, name, created_at FROM operators ORDER BY id", timeout=self._timeout
            )
        return [Operator(int(row["id"]), row["name"], row["created_at"]) for row in rows]

    async def operators_present(self, ids: Iterable[int]) -> set[int]:
        """Which of the operator ids still name an account (a removed one is missing)."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                "SELECT id FROM operators WHERE id = ANY($1::bigint[])", list(ids), timeout=self._timeout
            )
        return {int(row["id"]) for row in rows}

    async def remove_operator(self, name: str) -> bool:
        """Revoke an operator: its token opens no connection from now on, and the gateways close
        the sessions it opened (``Gateway._operators_removed``). False if no such operator."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            removed = await conn.fetchval(
                "DELETE FROM operators WHERE name = $1 RETURNING id", name, timeout=self._timeout
            )
        return removed is not None

    async def authenticate_operator(self, token: str) -> Operator | None:
        async with self._pool.acquire(timeout=self._timeout) as conn:
            row = await conn.fetchrow(
                "SELECT id, name, created_at FROM operators WHERE token_hash = $1",
                hash_token(token),
                timeout=self._timeout,
            )
        return None if row is None else Operator(int(row["id"]), row["name"], row["created_at"])
