"""Numbered migrations: a fresh database gets them all, a second start-up changes nothing, a
database from a newer feltd is refused, concurrent start-ups apply each migration once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from server.store.connection import open_store
from server.store.databases import create_database, drop_database
from server.store.errors import MigrationFileError, SchemaTooNew
from server.store.migrations import apply_migrations, load_migrations


@pytest.fixture
async def empty_db(postgres_server_url: str) -> AsyncIterator[str]:
    url = await create_database(postgres_server_url, "feltd_test_migrations")
    try:
        yield url
    finally:
        await drop_database(postgres_server_url, url)


async def _tables(conn: asyncpg.Connection) -> set[str]:
    rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return {row["tablename"] for row in rows}


def test_shipped_migrations_are_numbered_from_one_without_gaps() -> None:
    versions = [m.version for m in load_migrations()]
    assert versions == list(range(1, len(versions) + 1)), f"expected 1..n, got {versions}"


async def test_fresh_apply_then_second_apply_is_a_no_op(empty_db: str) -> None:
    newest = load_migrations()[-1].version
    conn = await asyncpg.connect(empty_db, timeout=30)
    try:
        first = await apply_migrations(conn)
        assert first.applied == tuple(range(1, newest + 1)), f"expected every migration, got {first.applied}"
        assert first.version == newest
        tables = await _tables(conn)
        expected = {
            "schema_migrations",
            "accounts",
            "ledger_transactions",
            "ledger_entries",
            "players",
            "operators",
            "tournaments",
            "registrations",
            "entries",
            "rebuys",
            "results",
            "table_snapshots",
            "hand_histories",
            "hand_players",
        }
        assert expected <= tables, f"missing tables: {expected - tables}"
        rows = await conn.fetch("SELECT version FROM schema_migrations ORDER BY 1")
        recorded = [r["version"] for r in rows]
        assert recorded == list(range(1, newest + 1)), recorded

        second = await apply_migrations(conn)
        assert second.applied == (), f"a second apply should do nothing, it applied {second.applied}"
        assert second.version == newest
        assert await _tables(conn) == tables
        assert await conn.fetchval("SELECT count(*) FROM schema_migrations") == newest
    finally:
        await conn.close()


async def test_database_newer_than_the_code_is_refused(empty_db: str) -> None:
    conn = await asyncpg.connect(empty_db, timeout=30)
    try:
        await apply_migrations(conn)
        newest = load_migrations()[-1].version
        await conn.execute(
            "INSERT INTO schema_migrations (version, name) VALUES ($1, 'from_the_future')", newest + 1
        )
        with pytest.raises(SchemaTooNew) as raised:
            await apply_migrations(conn)
        assert (raised.value.database_version, raised.value.code_version) == (newest + 1, newest)
        assert "upgrade feltd" in str(raised.value)
    finally:
        await conn.close()
    with pytest.raises(SchemaTooNew):
        async with open_store(empty_db):
            pass


async def test_a_newer_database_is_refused_before_anything_is_written(empty_db: str) -> None:
    conn = await asyncpg.connect(empty_db, timeout=30)
    try:
        await conn.execute(
            "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
        await conn.execute("INSERT INTO schema_migrations (version, name) VALUES (999, 'future')")
        with pytest.raises(SchemaTooNew):
            await apply_migrations(conn)
        assert await _tables(conn) == {"schema_migrations"}, "a refused database was written to"
    finally:
        await conn.close()


async def test_concurrent_start_ups_apply_each_migration_once(empty_db: str) -> None:
    conns = [await asyncpg.connect(empty_db, timeout=30) for _ in range(4)]
    try:
        reports = await asyncio.gather(*(apply_migrations(c) for c in conns))
        applied = sorted(v for r in reports for v in r.applied)
        newest = load_migrations()[-1].version
        assert applied == list(range(1, newest + 1)), f"each migration once, got {applied}"
    finally:
        for conn in conns:
            await conn.close()


async def test_a_failing_migration_leaves_nothing_behind(empty_db: str, tmp_path: Path) -> None:
    (tmp_path / "0001_good.sql").write_text("CREATE TABLE good (id int);")
    (tmp_path / "0002_bad.sql").write_text("CREATE TABLE bad (id int); SELECT no_such_function();")
    conn = await asyncpg.connect(empty_db, timeout=30)
    try:
        with pytest.raises(asyncpg.exceptions.UndefinedFunctionError):
            await apply_migrations(conn, load_migrations(tmp_path))
        assert await _tables(conn) == set(), "a failed start-up must roll back every migration of it"
    finally:
        await conn.close()


def test_misnamed_or_duplicate_migration_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "1_short.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationFileError, match="NNNN"):
        load_migrations(tmp_path)
    (tmp_path / "1_short.sql").unlink()
    (tmp_path / "0001_a.sql").write_text("SELECT 1;")
    (tmp_path / "0001_b.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationFileError, match="share version 1"):
        load_migrations(tmp_path)
