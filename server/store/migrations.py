"""Numbered SQL migrations, applied at start-up inside one transaction.

Files are ``migrations/NNNN_name.sql``; version ``NNNN`` is recorded in ``schema_migrations``.
Applying is idempotent (recorded versions are skipped), concurrent start-ups are serialized by a
transaction-scoped advisory lock, and a database that knows a version newer than this code's
newest is refused with ``SchemaTooNew`` instead of being written by code that does not know it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from server.store.dbconn import DbConnection
from server.store.errors import MigrationFileError, SchemaTooNew

MIGRATION_LOCK_ID = 0x6665_6C74_6400  # "feltd\0": one advisory lock id for every feltd database
STATEMENT_TIMEOUT_S = 120.0
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """What ``apply_migrations`` did: versions applied now, and the version the database is at."""

    applied: tuple[int, ...]
    version: int


def load_migrations(directory: Path | None = None) -> tuple[Migration, ...]:
    """The migrations shipped with the package (or in ``directory``), in version order."""
    if directory is None:
        files = [
            (entry.name, entry.read_text("utf-8"))
            for entry in resources.files("server.store").joinpath("migrations").iterdir()
            if entry.name.endswith(".sql")
        ]
    else:
        files = [(path.name, path.read_text("utf-8")) for path in directory.glob("*.sql")]
    migrations: dict[int, Migration] = {}
    for filename, sql in files:
        match = _NAME.match(filename)
        if match is None:
            raise MigrationFileError(f"migration file {filename!r} is not named NNNN_lowercase_name.sql")
        version = int(match.group(1))
        if version in migrations:
            raise MigrationFileError(
                f"two migration files share version {version}: "
                f"{migrations[version].name!r} and {match.group(2)!r}"
            )
        migrations[version] = Migration(version, match.group(2), sql)
    return tuple(migrations[v] for v in sorted(migrations))


async def apply_migrations(
    conn: DbConnection, migrations: tuple[Migration, ...] | None = None
) -> MigrationReport:
    """Bring the database to the newest migration, atomically; a no-op if it is there already.

    Raises ``SchemaTooNew`` (and changes nothing) if the database records a newer version.
    """
    if migrations is None:
        migrations = load_migrations()
    newest = migrations[-1].version if migrations else 0
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK_ID, timeout=STATEMENT_TIMEOUT_S)
        await conn.execute(
            """CREATE TABLE IF NOT EXISTS schema_migrations (
                   version    integer PRIMARY KEY,
                   name       text NOT NULL,
                   applied_at timestamptz NOT NULL DEFAULT now())""",
            timeout=STATEMENT_TIMEOUT_S,
        )
        rows = await conn.fetch("SELECT version FROM schema_migrations", timeout=STATEMENT_TIMEOUT_S)
        recorded = {int(row["version"]) for row in rows}
        current = max(recorded, default=0)
        if current > newest:
            raise SchemaTooNew(current, newest)
        applied: list[int] = []
        for migration in migrations:
            if migration.version in recorded:
                continue
            await conn.execute(migration.sql, timeout=STATEMENT_TIMEOUT_S)
            await conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                migration.version,
                migration.name,
                timeout=STATEMENT_TIMEOUT_S,
            )
            applied.append(migration.version)
    return MigrationReport(tuple(applied), max([current, *applied]))
