"""What can go wrong in the store, as small typed errors that say what was expected.

Every error the store raises is a ``StoreException``. Errors about bad input are also
``ValueError`` subclasses (the caller asked for something that can never work); errors about the
database itself are ``StoreError`` (``RuntimeError``) subclasses.
"""

from __future__ import annotations


class StoreException(Exception):
    """The base of every error the store raises on purpose."""


class StoreError(StoreException, RuntimeError):
    """The database is not in a state this code can work with."""


class SchemaTooNew(StoreError):
    """The database was migrated by a newer feltd than this one; refusing to touch it."""

    def __init__(self, database_version: int, code_version: int) -> None:
        super().__init__(
            f"database schema is at version {database_version}, newer than this feltd's newest "
            f"migration {code_version}: upgrade feltd before using this database"
        )
        self.database_version = database_version
        self.code_version = code_version


class MigrationFileError(StoreError):
    """A migration file is misnamed or two files share a version number."""


class MigrationHistoryError(StoreError):
    """The database's record of applied migrations disagrees with this feltd's files: a file was
    edited after it was applied (its checksum differs), or a version older than the newest
    applied one was never applied (an out-of-order history). Nothing is applied."""


class RoleSetupError(StoreError):
    """The restricted role the server connects as could not be made or granted its rights."""


class LedgerBusy(StoreError):
    """A post kept colliding with concurrent posts (deadlocks, serialization failures, keys
    posted concurrently) past the retries; nothing of it was posted, and the same keys may be
    posted again."""


class LedgerFailure(StoreError):
    """The database failed a ledger request in a way this code does not know: whether a post
    committed is unknown, and posting the same keys again is safe."""


class DatabaseUnavailable(StoreError):
    """The PostgreSQL server named could not be used: nothing answers, it refused the login, the
    database does not exist, or it did not answer in time. The message says which, and where."""


class EmbeddedServerError(StoreError):
    """The embedded PostgreSQL could not be started in its data folder."""


class DatabaseUrlError(StoreException, ValueError):
    """A database URL that is not a PostgreSQL URL (``postgresql://USER@HOST:PORT/DATABASE``)."""


class DataDirError(StoreException, ValueError):
    """A ``--data-dir`` the embedded PostgreSQL cannot use: a file, a missing parent folder, or a
    folder holding something other than feltd's PostgreSQL data."""


class LedgerError(StoreException, ValueError):
    """A ledger post that cannot be made as asked; nothing was posted."""


class InsufficientFunds(LedgerError):
    """An account that may not go negative would have: the whole batch was refused."""

    def __init__(self, account: str, balance: int, amount: int, idempotency_key: str) -> None:
        super().__init__(
            f"insufficient funds in {account}: balance {balance} cents, transfer {idempotency_key!r} "
            f"needs {amount} cents"
        )
        self.account = account
        self.balance = balance
        self.amount = amount
        self.idempotency_key = idempotency_key


class IdempotencyConflict(LedgerError):
    """An idempotency key already names a different money movement."""


class InvalidKey(LedgerError):
    """An idempotency key PostgreSQL cannot store (NUL, or not UTF-8)."""


class DuplicateKey(LedgerError):
    """The same idempotency key appears twice in one batch."""


class InvalidTransfer(LedgerError):
    """A transfer the ledger cannot store: an amount past 64 bits, a key past 1024 bytes, a reason
    the ledger does not know, or a balance it would take past 64 bits."""


class UnknownAccount(LedgerError):
    """An account name that is none of the forms in ``engine.tournament.transfers``."""


class PlayerError(StoreException, ValueError):
    """A player request that cannot be carried out."""


class PlayerExists(PlayerError):
    """That player name is taken."""


class UnknownPlayer(PlayerError):
    """No player has that name or id."""


class TournamentError(StoreException, ValueError):
    """A tournament request that cannot be carried out."""


class UnknownTournament(TournamentError):
    """No tournament has that id."""


class TournamentExists(TournamentError):
    """That tournament id is taken."""


class StatusTransitionError(TournamentError):
    """The tournament's status machine does not allow that step."""


class SnapshotError(StoreException, ValueError):
    """A table snapshot that does not describe a table."""


class HandHistoryError(StoreException, ValueError):
    """A hand history that cannot be stored or found."""


class JournalError(StoreError):
    """A director journal entry that cannot be written (its number is taken: two writers)."""


class FencedOut(StoreException):
    """A write carried a fencing token older than the one recorded for its resource: the writer's
    lease expired and another worker owns the resource now. Nothing of the write was stored, and
    trying again cannot help (so this is not a ``StoreError``, which callers retry)."""

    def __init__(self, resource: str, token: int, recorded: int) -> None:
        super().__init__(
            f"fenced out: {resource} is held with token {recorded}, this write carries token {token}"
        )
        self.resource = resource
        self.token = token
        self.recorded = recorded
