"""Databases on a server: make a fresh one from a server URL (for tests and benchmarks), drop it."""

from __future__ import annotations

import re
import uuid
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from server.store.connection import connecting

ADMIN_TIMEOUT_S = 30.0
_SAFE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def with_database(url: str, name: str) -> str:
    """``url`` pointing at database ``name`` on the same server."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def database_name(url: str) -> str:
    """The database ``url`` names (its path; a socket directory in the query has slashes too)."""
    return urlsplit(url).path.lstrip("/")


async def create_database(server_url: str, prefix: str = "feltd") -> str:
    """Create an empty database with a unique name on ``server_url``'s server; return its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    if not _SAFE_NAME.match(name):
        raise ValueError(f"database name prefix {prefix!r} must be lowercase letters, digits and _")
    with connecting(server_url):
        conn = await asyncpg.connect(server_url, timeout=ADMIN_TIMEOUT_S)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"', timeout=ADMIN_TIMEOUT_S)
    finally:
        await conn.close(timeout=ADMIN_TIMEOUT_S)
    return with_database(server_url, name)


async def drop_database(server_url: str, database_url: str) -> None:
    """Drop the database ``database_url`` names, disconnecting whoever is still in it."""
    name = database_name(database_url)
    if not _SAFE_NAME.match(name):
        raise ValueError(f"refusing to drop a database named {name!r}")
    with connecting(server_url):
        conn = await asyncpg.connect(server_url, timeout=ADMIN_TIMEOUT_S)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', timeout=ADMIN_TIMEOUT_S)
    finally:
        await conn.close(timeout=ADMIN_TIMEOUT_S)
