"""Numbered SQL migrations, applied at start-up inside one transaction.

Files are ``migrations/NNNN_name.sql``; version ``NNNN`` is recorded in ``schema_migrations``.
Applying is idempotent (recorded versions are skipped), concurrent start-ups are serialized by a
transaction-scoped advisory lock, and a database that knows a version newer than this code's
newest is refused with ``SchemaTooNew`` instead of being written by code that does not know it.

Each applied migration's SHA-256 is recorded with it. A history this code cannot trust is refused
with ``MigrationHistoryError`` before anything is applied: a recorded migration whose file now has
another checksum (edited after it was applied), a file older than the newest applied version that
was never applied (out of order), or an applied version whose file is gone. Versions applied
before checksums were recorded get the checksum of the file they have now.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from server.store.dbconn import DbConnection
from server.store.errors import MigrationFileError, MigrationHistoryError, SchemaTooNew

MIGRATION_LOCK_ID = 0x6665_6C74_6400  # "feltd\0": one advisory lock id for every feltd database
STATEMENT_TIMEOUT_S = 120.0
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


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
        await conn.execute(
            "ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text",
            timeout=STATEMENT_TIMEOUT_S,
        )
        rows = await conn.fetch(
            "SELECT version, checksum FROM schema_migrations", timeout=STATEMENT_TIMEOUT_S
        )
        recorded = {int(row["version"]): row["checksum"] for row in rows}
        current = max(recorded, default=0)
        if current > newest:
            raise SchemaTooNew(current, newest)
        verify_history(migrations, recorded)
        by_version = {m.version: m for m in migrations}
        for version, checksum in recorded.items():
            if checksum is None:
                await conn.execute(
                    "UPDATE schema_migrations SET checksum = $2 WHERE version = $1",
                    version,
                    by_version[version].checksum,
                    timeout=STATEMENT_TIMEOUT_S,
                )
        applied: list[int] = []
        for migration in migrations:
            if migration.version in recorded:
                continue
            await conn.execute(migration.sql, timeout=STATEMENT_TIMEOUT_S)
            await conn.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                migration.version,
                migration.name,
                migration.checksum,
                timeout=STATEMENT_TIMEOUT_S,
            )
            applied.append(migration.version)
    return MigrationReport(tuple(applied), max([current, *applied]))


def verify_history(migrations: tuple[Migration, ...], recorded: dict[int, str | None]) -> None:
    """Raise ``MigrationHistoryError`` unless ``recorded`` (version -> checksum, None where none
    was kept) is what applying ``migrations`` in order would have recorded so far."""
    by_version = {m.version: m for m in migrations}
    current = max(recorded, default=0)
    for version in sorted(recorded):
        migration = by_version.get(version)
        if migration is None:
            raise MigrationHistoryError(
                f"the database records migration {version:04d}, but this feltd has no such file"
            )
        checksum = recorded[version]
        if checksum is not None and checksum != migration.checksum:
            raise MigrationHistoryError(
                f"migration {version:04d}_{migration.name} was edited after it was applied: "
                f"recorded checksum {checksum[:12]}..., the file's is {migration.checksum[:12]}..."
            )
    skipped = [m for m in migrations if m.version < current and m.version not in recorded]
    if skipped:
        raise MigrationHistoryError(
            f"migration {skipped[0].version:04d}_{skipped[0].name} is older than the newest applied "
            f"one ({current:04d}) but was never applied: the history is out of order"
        )
