"""One way in: ``open_store`` gives every command and the server a migrated, pooled store.

With a ``database_url`` (or ``DATABASE_URL``) it connects there; with none it starts the embedded
PostgreSQL in ``data_dir`` (kept across restarts) and stops it on exit. Same SQL either way.

The URL names the database's owner: one connection as the owner applies the migrations and
grants the server's restricted role its rights (``server/store/roles.py``); the pool then logs
in as that role, so nothing the server runs can write a ledger table but through ``ledger_post``.
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
from server.store.roles import ServerRole, grant_server_role, server_role_from_env
from server.store.snapshots import Snapshots, SnapshotWriter
from server.store.tournaments import Tournaments

CONNECT_TIMEOUT_S = 30.0
# asyncpg applies this to every query that does not pass its own timeout.
COMMAND_TIMEOUT_S = 30.0
# A session that sits inside a transaction this long is ended by PostgreSQL: a worker frozen in
# the middle of a write (paused, cut off) would otherwise hold its fence row's lock, and with it
# the failover of its tournaments, for as long as TCP takes to notice (hours). No feltd
# transaction waits on anything but its own statements.
IDLE_IN_TRANSACTION_S = 15.0
CLOSE_TIMEOUT_S = 30.0
EMBEDDED_START_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class Store:
    """The store's parts, sharing one pool. ``url`` is the owner's URL it was opened with; the
    pool is logged in as ``role`` (None: as the owner, only when asked with ``restricted=False``).
    ``ledger_writer`` posts like ``ledger`` with group commit (one per process, shared by every
    caller)."""

    url: str
    pool: asyncpg.Pool
    role: ServerRole | None
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


async def _keep_session(conn: asyncpg.Connection) -> None:
    """What a connection goes back to the pool with: asyncpg has already rolled back a
    transaction left open, and there is nothing else to undo, since feltd leaves no session
    state on a pooled connection (no SET but SET LOCAL, no session advisory lock, LISTEN or
    cursor WITH HOLD). asyncpg's default reset (pg_advisory_unlock_all, CLOSE ALL, UNLISTEN *,
    RESET ALL) was one more round trip per acquire: a single ledger post paid two."""


async def connect_pool(
    url: str,
    *,
    min_size: int = 1,
    max_size: int = 10,
    role: ServerRole | None = None,
    idle_in_transaction: float = IDLE_IN_TRANSACTION_S,
) -> asyncpg.Pool:
    """A pool whose every connection and query is bounded in time, logged in as ``role`` (else as
    the URL's user), released without a reset query (``_keep_session``); failures as
    ``connecting``."""
    try:
        with connecting(url):
            pool = await asyncio.wait_for(
                asyncpg.create_pool(
                    url,
                    min_size=min_size,
                    max_size=max_size,
                    timeout=CONNECT_TIMEOUT_S,
                    command_timeout=COMMAND_TIMEOUT_S,
                    # None keeps what the URL says.
                    user=None if role is None else role.name,
                    password=None if role is None else role.password,
                    reset=_keep_session,
                    server_settings={
                        "idle_in_transaction_session_timeout": str(round(idle_in_transaction * 1000))
                    },
                ),
                CONNECT_TIMEOUT_S,
            )
    except DatabaseUnavailable as error:
        if role is None or "refused the login" not in str(error):
            raise
        raise DatabaseUnavailable(
            f"{error} (as the server's role {role.name!r}: where the server checks passwords, set "
            "FELTD_DB_ROLE_PASSWORD; the owner sets it on the role at start-up)"
        ) from None
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
    restricted: bool = True,
    role: ServerRole | None = None,
) -> AsyncIterator[Store]:
    """Connect (or start the embedded server), apply migrations, yield a ``Store``; clean up on exit.

    ``database_url`` defaults to ``DATABASE_URL``. Raises ``SchemaTooNew`` before yielding if the
    database was migrated by a newer feltd, ``DatabaseUrlError`` / ``DataDirError`` for a URL or
    data folder that cannot work (before anything is made), ``DatabaseUnavailable`` when the server
    cannot be used and ``EmbeddedServerError`` when the embedded one does not start.
    ``restricted`` (default) logs the pool in as ``role`` (default ``server_role_from_env()``),
    granted its rights first; ``RoleSetupError`` if that cannot be done.
    """
    server_role = (role or server_role_from_env()) if restricted else None
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
        report = MigrationReport((), 0)
        if migrate or server_role is not None:
            with connecting(url):
                owner = await asyncpg.connect(
                    url, timeout=CONNECT_TIMEOUT_S, command_timeout=COMMAND_TIMEOUT_S
                )
            try:
                if migrate:
                    report = await apply_migrations(owner)
                if server_role is not None:
                    await grant_server_role(owner, server_role)
            finally:
                await owner.close(timeout=CLOSE_TIMEOUT_S)
        pool = await connect_pool(url, min_size=min_size, max_size=max_size, role=server_role)
        try:
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
                    role=server_role,
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
