"""One way in: ``open_store`` gives every command and the server a migrated, pooled store.

With a ``database_url`` (or ``DATABASE_URL``) it connects there; with none it starts the embedded
PostgreSQL in ``data_dir`` (kept across restarts) and stops it on exit. Same SQL either way.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from server.store.database_url import check_database_url, redact
from server.store.embedded import DEFAULT_DATA_DIR, EmbeddedPostgres, check_data_dir, database_url_from_env
from server.store.errors import DatabaseUnavailable, DatabaseUrlError
from server.store.histories import HandHistories
from server.store.journal import Journal, JournalWriter
from server.store.ledger import Ledger
from server.store.ledger_writer import LedgerWriter
from server.store.migrations import MigrationReport, apply_migrations
from server.store.players import Players
from server.store.snapshots import Snapshots, SnapshotWriter
from server.store.tournaments import Tournaments

CONNECT_TIMEOUT_S = 30.0
# asyncpg applies this to every query that does not pass its own timeout.
COMMAND_TIMEOUT_S = 30.0
CLOSE_TIMEOUT_S = 30.0
EMBEDDED_START_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class Store:
    """The store's parts, sharing one pool. ``url`` is where it is connected. ``ledger_writer``
    posts like ``ledger`` with group commit (one per process, shared by every caller)."""

    url: str
    pool: asyncpg.Pool
    migrations: MigrationReport
    ledger: Ledger
    players: Players
    tournaments: Tournaments
    snapshots: Snapshots
    histories: HandHistories
    ledger_writer: LedgerWriter
    snapshot_writer: SnapshotWriter
    journal: Journal
    journal_writer: JournalWriter


@contextmanager
def connecting(url: str) -> Iterator[None]:
    """Around a connection attempt to ``url``: its failures become ``DatabaseUnavailable`` (the
    server cannot be used: nothing answers, login refused, no such database, no answer in time)
    or ``DatabaseUrlError``, each with a message that names the server without its password."""
    check_database_url(url)
    where = f"PostgreSQL at {redact(url)}"
    try:
        yield
    except TimeoutError:
        raise DatabaseUnavailable(f"{where} did not answer within {CONNECT_TIMEOUT_S:.0f} s") from None
    except (asyncpg.InvalidAuthorizationSpecificationError, asyncpg.InvalidPasswordError) as error:
        raise DatabaseUnavailable(f"{where} refused the login: {error}") from None
    except asyncpg.InvalidCatalogNameError as error:
        raise DatabaseUnavailable(f"{where}: {error}") from None
    except asyncpg.PostgresError as error:
        raise DatabaseUnavailable(f"{where} refused the connection: {error}") from None
    except asyncpg.ClientConfigurationError as error:
        raise DatabaseUrlError(f"{redact(url)!r}: {error}") from None
    except asyncpg.InterfaceError as error:
        raise DatabaseUnavailable(f"{where}: {error}") from None
    except OSError as error:
        raise DatabaseUnavailable(f"cannot connect to {where}: {_os_reason(error)}") from None


async def connect_pool(url: str, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    """A pool whose every connection and query is bounded in time; failures as ``connecting``."""
    with connecting(url):
        pool = await asyncio.wait_for(
            asyncpg.create_pool(
                url,
                min_size=min_size,
                max_size=max_size,
                timeout=CONNECT_TIMEOUT_S,
                command_timeout=COMMAND_TIMEOUT_S,
            ),
            CONNECT_TIMEOUT_S,
        )
    assert pool is not None
    return pool


def _os_reason(error: OSError) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "connection refused (is the server running, on that host and port?)"
    if isinstance(error, socket.gaierror):
        return f"unknown host ({error.strerror})"
    # asyncpg joins the errors of every address it tried; the first names the cause.
    return error.strerror or str(error).splitlines()[0]


@asynccontextmanager
async def open_store(
    database_url: str | None = None,
    data_dir: Path | str = DEFAULT_DATA_DIR,
    *,
    min_size: int = 1,
    max_size: int = 10,
    migrate: bool = True,
) -> AsyncIterator[Store]:
    """Connect (or start the embedded server), apply migrations, yield a ``Store``; clean up on exit.

    ``database_url`` defaults to ``DATABASE_URL``. Raises ``SchemaTooNew`` before yielding if the
    database was migrated by a newer feltd, ``DatabaseUrlError`` / ``DataDirError`` for a URL or
    data folder that cannot work (before anything is made), ``DatabaseUnavailable`` when the server
    cannot be used and ``EmbeddedServerError`` when the embedded one does not start.
    """
    url = database_url or database_url_from_env()
    embedded: EmbeddedPostgres | None = None
    # Checked before the embedded server makes its folder or a pool connects.
    if url is None:
        check_data_dir(Path(data_dir))
    else:
        check_database_url(url)
    if url is None:
        embedded = await asyncio.wait_for(
            asyncio.to_thread(EmbeddedPostgres, Path(data_dir)), EMBEDDED_START_TIMEOUT_S
        )
        url = embedded.url
    try:
        pool = await connect_pool(url, min_size=min_size, max_size=max_size)
        try:
            if migrate:
                async with pool.acquire(timeout=CONNECT_TIMEOUT_S) as conn:
                    report = await apply_migrations(conn)
            else:
                report = MigrationReport((), 0)
            ledger = Ledger(pool)
            writer = LedgerWriter(ledger)
            snapshots = Snapshots(pool)
            snapshot_writer = SnapshotWriter(snapshots)
            journal = Journal(pool)
            journal_writer = JournalWriter(journal)
            try:
                yield Store(
                    url=url,
                    pool=pool,
                    migrations=report,
                    ledger=ledger,
                    players=Players(pool),
                    tournaments=Tournaments(pool),
                    snapshots=snapshots,
                    histories=HandHistories(pool),
                    ledger_writer=writer,
                    snapshot_writer=snapshot_writer,
                    journal=journal,
                    journal_writer=journal_writer,
                )
            finally:
                # Answer every post and save handed to the writers before the pool goes.
                await asyncio.wait_for(writer.close(), CLOSE_TIMEOUT_S)
                await asyncio.wait_for(snapshot_writer.close(), CLOSE_TIMEOUT_S)
                await asyncio.wait_for(journal_writer.close(), CLOSE_TIMEOUT_S)
        finally:
            await asyncio.wait_for(pool.close(), CLOSE_TIMEOUT_S)
    finally:
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)
