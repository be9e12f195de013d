"""The command-line flags every command that opens the store shares, and what they choose.

``--database-url`` wins, then ``$DATABASE_URL``, then the embedded server in ``--data-dir``. A
command checks its choice before it makes anything (``DatabaseChoice.check``) and says which
database it uses before it connects (``open_chosen_store``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from server.store.database_url import check_database_url, redact
from server.store.errors import DatabaseUrlError

if TYPE_CHECKING:
    from server.store.connection import Store

DEFAULT_DATA_DIR = "feltd-data"


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    """``--database-url`` (default ``DATABASE_URL``) and ``--data-dir`` (the embedded server's)."""
    parser.add_argument(
        "--database-url",
        metavar="URL",
        default=None,
        help="PostgreSQL to use, postgresql://USER@HOST:PORT/DATABASE (default: $DATABASE_URL; "
        "without either an embedded server runs in --data-dir)",
    )
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        default=DEFAULT_DATA_DIR,
        help="folder of the embedded PostgreSQL, kept across runs; unused with a database URL "
        f"(default: ./{DEFAULT_DATA_DIR})",
    )


@dataclass(frozen=True, slots=True)
class DatabaseChoice:
    """Which PostgreSQL a command uses: ``url`` from ``source``, or (``url`` None) the embedded
    server in ``data_dir``."""

    url: str | None
    source: str
    data_dir: Path

    def describe(self) -> str:
        """One line for people: where, and why there. The password is never shown."""
        if self.url is None:
            return f"embedded PostgreSQL in {self.data_dir} (no --database-url or $DATABASE_URL given)"
        return f"{redact(self.url)} (from {self.source})"

    def check(self) -> None:
        """Raise ``DatabaseUrlError`` / ``DataDirError`` if this choice cannot work; makes nothing."""
        if self.url is None:
            from server.store.embedded import check_data_dir

            check_data_dir(self.data_dir)
            return
        try:
            check_database_url(self.url)
        except DatabaseUrlError as error:
            raise DatabaseUrlError(f"{self.source}: {error}") from None


def database_choice(args: argparse.Namespace) -> DatabaseChoice:
    """The database ``args`` (from ``add_store_arguments``) and the environment choose."""
    data_dir = Path(args.data_dir)
    if args.database_url is not None:
        return DatabaseChoice(args.database_url, "--database-url", data_dir)
    env = os.environ.get("DATABASE_URL")
    if env:
        return DatabaseChoice(env, "$DATABASE_URL", data_dir)
    return DatabaseChoice(None, "embedded", data_dir)


@asynccontextmanager
async def open_chosen_store(
    choice: DatabaseChoice, *, out: TextIO | None = None, **options: Any
) -> AsyncIterator[Store]:
    """Check ``choice``, print ``database: ...`` on ``out`` (stdout), then ``open_store`` it."""
    from server.store.connection import open_store

    choice.check()
    print(f"database: {choice.describe()}", file=out or sys.stdout, flush=True)
    async with open_store(choice.url, choice.data_dir, **options) as store:
        yield store
