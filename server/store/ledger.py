"""The double-entry ledger: executes the tournament core's ``Transfer`` intents, at most once each.

Promises of ``Ledger.post``:

- A batch is atomic: one call of the ``ledger_post`` database function (one statement, one round
  trip; inside the caller's transaction if there is one). Either every new transfer in it is
  posted or none: a key that a racing post commits while this one runs aborts the whole call
  (serialization failure), and the call is made again, when that key is a replay or a conflict
  (a single transfer is answered as the replay or the conflict at once: there is nothing else
  in its call to undo).
- Each transfer becomes one ledger transaction of two entries (source -amount, target +amount),
  keyed by its idempotency key.
- Keys already in the ledger are *replays*: if the stored movement is the same (source, target,
  amount, reason) it is skipped and its first result returned; the rest of the batch is posted.
  A key that names a different movement raises ``IdempotencyConflict`` and nothing is posted.
- Transfers apply in the order given; if any would take an account that may not go negative
  (everything but ``house`` and ``cashier``) below zero at its step, ``InsufficientFunds`` is
  raised and nothing is posted.
- Concurrent posts are safe: every account a batch touches is locked (a transaction-scoped
  advisory lock per account, taken in one global order) before its balance is read, so posts
  serialize per account without deadlocks; deadlocks and serialization failures that happen
  anyway are retried. The locks are held only while the statement runs (plus the caller's
  transaction, if any), which is what keeps a rush on one pool fast.

Many concurrent callers posting small batches should share ``server.store.ledger_writer.LedgerWriter``
(``store.ledger_writer``): the same promises per caller, one database transaction and one durable
commit for whatever arrives together.

The database enforces the invariants independently of this module (migrations/0001_ledger.sql,
made cheaper by 0006_ledger_post_fast.sql): zero-sum transactions (after every INSERT of entries and
at commit), balance = sum of entries, no negative balances, append-only. Since 0011 every entry
carries its account's running balance and a link of a per-account hash chain, ``ledger_post`` is
the only way in for the server's role (``server/store/roles.py``), and ``check`` recomputes the
chains, so an edit made around the triggers, even by a superuser, is found. Since 0012 each fresh
transfer is one statement inside ``ledger_post`` (the UPDATE of its two accounts computes their
balances and links from the rows it locks and feeds the entries' INSERT).

Every error these functions raise is a ``server.store.errors.StoreException``: bad input is a
``LedgerError`` before anything is sent, refusals are ``LedgerError`` subclasses, collisions past
the retries ``LedgerBusy``, anything else the database or the connection does ``LedgerFailure``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import asyncpg

from engine.tournament.transfers import (
    Account,
    AccountError,
    Reason,
    Transfer,
    may_go_negative,
)
from server.store.dbconn import DbConnection
from server.store.errors import (
    DuplicateKey,
    IdempotencyConflict,
    InsufficientFunds,
    InvalidKey,
    InvalidTransfer,
    LedgerBusy,
    LedgerError,
    LedgerFailure,
    StoreException,
    UnknownAccount,
)
from server.store.fencing import Fence, fence_on
from server.store.postgres_text import is_storable

DEFAULT_TIMEOUT_S = 30.0
RETRIES = 8
MAX_KEY_BYTES = 1024  # far below what the key's btree index can hold (about 2700 bytes)
MAX_AMOUNT = 2**63 - 1  # bigint
_REASONS = frozenset(str(reason) for reason in Reason)
T = TypeVar("T")
_RETRYABLE = (asyncpg.exceptions.SerializationError, asyncpg.exceptions.DeadlockDetectedError)

_POST_SQL = """
SELECT out_key, out_id, out_created_at, out_replayed
  FROM ledger_post($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])
"""


def account_kind(account: str) -> str:
    """The kind of a ledger account from its name (``player:7`` is a player account, ...)."""
    if not is_storable(account):
        raise UnknownAccount(f"ledger account {account!r} is not UTF-8 text without NUL")
    try:
        return str(Account.parse(account).kind)
    except AccountError as error:
        raise UnknownAccount(str(error)) from None


@dataclass(frozen=True, slots=True)
class PostedTransaction:
    """One transfer's ledger transaction; ``replayed`` if it was posted by an earlier call."""

    idempotency_key: str
    transaction_id: int
    created_at: datetime
    replayed: bool


@dataclass(frozen=True, slots=True)
class PostResult:
    """The outcome of a batch, one ``PostedTransaction`` per transfer, in the batch's order."""

    transactions: tuple[PostedTransaction, ...]

    @property
    def posted(self) -> tuple[PostedTransaction, ...]:
        return tuple(t for t in self.transactions if not t.replayed)

    @property
    def replayed(self) -> tuple[PostedTransaction, ...]:
        return tuple(t for t in self.transactions if t.replayed)


@dataclass(frozen=True, slots=True)
class Seal:
    """A digest of the ledger's transactions up to ``last_id``, kept outside the database (an
    anchor file): a later ledger that does not hold the same transactions up to there has had
    its history removed or rewritten, which no check inside the database can see after a
    superuser's ``TRUNCATE ... RESTART IDENTITY``."""

    last_id: int
    transactions: int
    digest: str


@dataclass(frozen=True, slots=True)
class LedgerCheck:
    """The result of auditing the whole ledger; ``problems`` is empty when it is sound.
    ``seal`` is the ledger's seal as checked (to keep as the next anchor)."""

    transactions: int
    entries: int
    accounts: int
    problems: tuple[str, ...]
    seal: Seal | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_post(transfers: Sequence[Transfer]) -> None:
    """Raise the ``LedgerError`` that makes this batch impossible whatever the balances are."""
    seen: set[str] = set()
    for transfer in transfers:
        if not isinstance(transfer, Transfer):
            raise InvalidTransfer(f"the ledger posts Transfer values, got {type(transfer).__name__}")
        if not isinstance(transfer.idempotency_key, str) or not is_storable(transfer.idempotency_key):
            raise InvalidKey(f"idempotency key {transfer.idempotency_key!r} is not UTF-8 text without NUL")
        size = len(transfer.idempotency_key.encode("utf-8"))
        if not 1 <= size <= MAX_KEY_BYTES:
            raise InvalidKey(
                f"idempotency key {transfer.idempotency_key[:40]!r}... is {size} bytes, "
                f"expected 1 to {MAX_KEY_BYTES}"
            )
        if type(transfer.amount) is not int or not 0 < transfer.amount <= MAX_AMOUNT:
            raise InvalidTransfer(
                f"transfer {transfer.idempotency_key!r}: amount {transfer.amount!r} is not 1 to 2^63-1 cents"
            )
        if not isinstance(transfer.reason, str) or str(transfer.reason) not in _REASONS:
            raise InvalidTransfer(
                f"transfer {transfer.idempotency_key!r}: unknown reason {transfer.reason!r}"
            )
        if transfer.idempotency_key in seen:
            raise DuplicateKey(f"idempotency key {transfer.idempotency_key!r} appears twice in one batch")
        seen.add(transfer.idempotency_key)
        account_kind(transfer.source)
        account_kind(transfer.target)


def can_post(transfers: Sequence[Transfer]) -> bool:
    """Whether ``verify_post`` accepts the batch (funds are only known when posting)."""
    try:
        verify_post(transfers)
    except StoreException:
        return False
    return True


def first_shortfall(transfers: Iterable[Transfer], balances: dict[str, int]) -> InsufficientFunds | None:
    """Apply ``transfers`` in order to ``balances``; the first step that overdraws, if any."""
    running = dict(balances)
    for transfer in transfers:
        before = running.get(transfer.source, 0)
        if before < transfer.amount and not may_go_negative(transfer.source):
            return InsufficientFunds(transfer.source, before, transfer.amount, transfer.idempotency_key)
        running[transfer.source] = before - transfer.amount
        running[transfer.target] = running.get(transfer.target, 0) + transfer.amount
    return None


class Ledger:
    """Posting and reading money on a pool of connections. Every query has a timeout."""

    def __init__(self, pool: asyncpg.Pool, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self._pool = pool
        self._timeout = timeout

    async def post(self, transfers: Sequence[Transfer], *, fences: Iterable[Fence] = ()) -> PostResult:
        """Post a batch atomically (see the module docstring for every promise); with ``fences``,
        only if each still holds, checked in the post's transaction (else ``FencedOut``, and
        nothing is posted)."""
        transfers = tuple(transfers)
        verify_post(transfers)
        fences = tuple(fences)
        if not transfers:
            return PostResult(())
        try:
            async with self._pool.acquire(timeout=self._timeout) as conn:
                if not fences:
                    # post_on without its verify_post: the batch was verified above.
                    return await with_retries(
                        lambda: post_in_transaction(conn, transfers, timeout=self._timeout)
                    )

                async def fenced(conn: DbConnection) -> PostResult:
                    await fence_on(conn, fences, timeout=self._timeout)
                    return await post_in_transaction(conn, transfers, timeout=self._timeout)

                return await in_transaction_with_retries(conn, fenced)
        except StoreException:
            raise
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as error:
            raise LedgerFailure(
                f"the ledger post of {len(transfers)} transfer(s) failed ({type(error).__name__}: {error}); "
                "whether it committed is unknown, and posting the same keys again is safe"
            ) from error

    async def balance(self, account: str) -> int:
        """The account's balance in cents; 0 for an account that never moved money."""
        account_kind(account)
        async with self._pool.acquire(timeout=self._timeout) as conn:
            value = await conn.fetchval(
                "SELECT balance FROM accounts WHERE name = $1", account, timeout=self._timeout
            )
        return int(value) if value is not None else 0

    async def balances(self, accounts: Iterable[str] | None = None) -> dict[str, int]:
        """Balances of ``accounts`` (missing ones are 0), or of every account when ``None``."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            if accounts is None:
                rows = await conn.fetch("SELECT name, balance FROM accounts", timeout=self._timeout)
                return {row["name"]: int(row["balance"]) for row in rows}
            wanted = list(accounts)
            rows = await conn.fetch(
                "SELECT name, balance FROM accounts WHERE name = ANY($1::text[])",
                wanted,
                timeout=self._timeout,
            )
        found = {row["name"]: int(row["balance"]) for row in rows}
        return {name: found.get(name, 0) for name in wanted}

    async def payments_from(self, source: str, reason: Reason) -> dict[str, int]:
        """How many ``reason`` transactions each account received from ``source`` (a prize
        pool's winners, each counted once per payment): what an audit for double payments reads."""
        account_kind(source)
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                """
                SELECT credit.account, count(*) AS paid
                  FROM ledger_transactions AS t
                  JOIN ledger_entries AS debit ON debit.transaction_id = t.id AND debit.amount < 0
                  JOIN ledger_entries AS credit ON credit.transaction_id = t.id AND credit.amount > 0
                 WHERE t.reason = $2::ledger_reason AND debit.account = $1
                 GROUP BY credit.account
                """,
                source,
                str(reason),
                timeout=self._timeout,
            )
        return {row["account"]: int(row["paid"]) for row in rows}

    async def check(self, anchor: Seal | None = None) -> LedgerCheck:
        """Audit everything (``check_on``), and that the ledger extends ``anchor`` if given."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            return await check_on(conn, timeout=self._timeout, anchor=anchor)


async def with_retries(work: Callable[[], Awaitable[T]]) -> T:
    """Run ``work()``, again after a deadlock or a serialization failure (the database rolled
    the failed try back, so nothing of it remains)."""
    for attempt in range(RETRIES):
        try:
            return await work()
        except _RETRYABLE as error:
            if attempt == RETRIES - 1:
                raise LedgerBusy(
                    f"still colliding with concurrent posts after {RETRIES} tries: {error}"
                ) from error
            # Back off a little so the transaction we collided with can finish.
            await asyncio.sleep(0.005 * (attempt + 1))
    raise AssertionError("unreachable")


async def in_transaction_with_retries(conn: DbConnection, work: Callable[[DbConnection], Awaitable[T]]) -> T:
    """Run ``work(conn)`` in a transaction, from the start again if it has to be retried."""

    async def attempt() -> T:
        async with conn.transaction():
            return await work(conn)

    return await with_retries(attempt)


async def post_on(
    conn: DbConnection, transfers: Sequence[Transfer], *, timeout: float = DEFAULT_TIMEOUT_S
) -> PostResult:
    """``Ledger.post`` on one connection that is not inside a transaction: one statement, one
    round trip, atomic on its own."""
    verify_post(transfers)
    return await with_retries(lambda: post_in_transaction(conn, transfers, timeout=timeout))


async def post_in_transaction(
    conn: DbConnection, transfers: Sequence[Transfer], *, timeout: float = DEFAULT_TIMEOUT_S
) -> PostResult:
    """Post with the ``ledger_post`` database function, inside the caller's transaction if there
    is one, so other rows can commit with the money or not at all."""
    if not transfers:
        return PostResult(())
    args = (
        [t.idempotency_key for t in transfers],
        [str(t.reason) for t in transfers],
        [t.source for t in transfers],
        [t.target for t in transfers],
        [t.amount for t in transfers],
    )
    try:
        rows = await conn.fetch(_POST_SQL, *args, timeout=timeout)
    except _RETRYABLE:
        # A key posted concurrently (ledger_post aborts the whole call), a deadlock: the caller's
        # retry loop asks again, as a whole transaction if it is inside one.
        raise
    except asyncpg.exceptions.RaiseError as error:
        raise _ledger_error(error) from error
    except asyncpg.exceptions.CheckViolationError as error:
        # Only a writer that bypassed ledger_post's locks can get here; say what we know.
        if error.constraint_name == "accounts_balance_not_negative":
            raise InsufficientFunds(_failing_account(error), 0, 0, "") from error
        if error.constraint_name == "accounts_name_matches_kind":
            raise UnknownAccount(str(error)) from error
        raise LedgerFailure(f"the database refused the post: {error}") from error
    except (asyncpg.exceptions.DataError, asyncpg.exceptions.ProgramLimitExceededError) as error:
        raise InvalidTransfer(f"the database cannot store this batch: {error}") from error
    except (OverflowError, asyncpg.exceptions._base.DataError) as error:
        # Refused by the client before sending (a value that does not fit its column type).
        raise InvalidTransfer(f"this batch cannot be sent: {error}") from error
    known = {
        row["out_key"]: PostedTransaction(
            row["out_key"], int(row["out_id"]), row["out_created_at"], bool(row["out_replayed"])
        )
        for row in rows
    }
    missing = [t.idempotency_key for t in transfers if t.idempotency_key not in known]
    if missing:
        raise LedgerFailure(f"ledger_post answered no row for key(s) {missing[:3]}")
    return PostResult(tuple(known[t.idempotency_key] for t in transfers))


def _ledger_error(error: asyncpg.exceptions.RaiseError) -> LedgerError | LedgerFailure:
    """The typed error for a ``ledger_post`` refusal (its HINT says which)."""
    hint = getattr(error, "hint", None) or ""
    message = getattr(error, "message", None) or str(error)
    if hint == "feltd:insufficient_funds":
        detail = json.loads(getattr(error, "detail", None) or "{}")
        return InsufficientFunds(
            str(detail["account"]), int(detail["balance"]), int(detail["amount"]), str(detail["key"])
        )
    if hint == "feltd:idempotency_conflict":
        return IdempotencyConflict(message)
    if hint == "feltd:invalid":
        return InvalidTransfer(message)
    return LedgerFailure(f"ledger_post refused: {message}")


def link(
    prev: bytes | None, transaction_id: int, key: str, account: str, amount: int, balance_after: int
) -> bytes:
    """An entry's link in its account's hash chain, as migration 0011's ``ledger_link`` makes it."""
    text = f"{transaction_id}|{amount}|{balance_after}|{len(key)}:{key}|{len(account)}:{account}"
    return hashlib.sha256((prev or b"") + text.encode("utf-8")).digest()


async def _chain_problems(conn: DbConnection, timeout: float) -> list[str]:
    """Walk every account's entries in order: each running balance and link must recompute, and
    the account's balance and head must be its newest entry's."""
    problems: list[str] = []
    heads = {
        row["name"]: (int(row["balance"]), None if row["head"] is None else bytes(row["head"]))
        for row in await conn.fetch("SELECT name, balance, head FROM accounts", timeout=timeout)
    }
    seen: set[str] = set()
    account: str | None = None
    running = 0
    prev: bytes | None = None
    broken = False

    def close(name: str | None) -> None:
        if name is None or broken or name not in heads:
            return
        if heads[name][1] != prev:
            problems.append(f"account {name}: its chain head is not the link of its newest entry")

    async for row in conn.cursor(
        """SELECT e.id, e.transaction_id, e.account, e.amount, e.balance_after, e.hash,
                  t.idempotency_key AS key
             FROM ledger_entries AS e LEFT JOIN ledger_transactions AS t ON t.id = e.transaction_id
            ORDER BY e.account, e.id""",
        prefetch=5000,
        timeout=timeout,
    ):
        if row["account"] != account:
            close(account)
            account, running, prev, broken = row["account"], 0, None, False
            seen.add(account)
            if account not in heads:
                problems.append(f"account {account} has entries but no account row")
        if broken or len(problems) >= 1000:
            continue
        running += int(row["amount"])
        if row["balance_after"] != running:
            problems.append(
                f"account {account}: entry {row['id']} says balance {row['balance_after']}, "
                f"but its entries up to it sum to {running}"
            )
            broken = True
            continue
        expected = link(
            prev, int(row["transaction_id"]), str(row["key"]), str(account), int(row["amount"]), running
        )
        if row["hash"] is None or bytes(row["hash"]) != expected:
            problems.append(
                f"account {account}: entry {row['id']} (transaction {row['transaction_id']}) "
                "does not recompute as the next link of its chain (forged or edited)"
            )
            broken = True
            continue
        prev = expected
    close(account)
    for name, (_, head) in sorted(heads.items()):
        if head is not None and name not in seen:
            problems.append(f"account {name} has a chain head but no entries")
    return problems


def _failing_account(error: asyncpg.exceptions.CheckViolationError) -> str:
    detail = getattr(error, "detail", None) or ""
    # "Failing row contains (player:7, player, -5, ...)."
    return detail.partition("(")[2].partition(",")[0] or "an account"


async def check_on(
    conn: DbConnection, *, timeout: float = DEFAULT_TIMEOUT_S, anchor: Seal | None = None
) -> LedgerCheck:
    """``Ledger.check`` on one connection, in one repeatable-read snapshot: each transaction has
    the two entries summing to zero that ``ledger_post`` writes, each account's running balances
    and hash chain recompute and end at its balance and head, no forbidden negative balance, all
    balances sum to zero, no sign of a TRUNCATE, and (given ``anchor``) the transactions up to
    the anchor's are the ones it sealed."""
    problems: list[str] = []
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        counts = await conn.fetchrow(
            """SELECT (SELECT count(*) FROM ledger_transactions) AS transactions,
                      (SELECT count(*) FROM ledger_entries) AS entries,
                      (SELECT count(*) FROM accounts) AS accounts,
                      (SELECT coalesce(sum(balance), 0) FROM accounts) AS total""",
            timeout=timeout,
        )
        assert counts is not None
        for row in await conn.fetch(
            """SELECT t.id, t.idempotency_key, count(e.id) AS n, coalesce(sum(e.amount), 0) AS total
                 FROM ledger_transactions AS t LEFT JOIN ledger_entries AS e ON e.transaction_id = t.id
                GROUP BY t.id HAVING count(e.id) <> 2 OR coalesce(sum(e.amount), 0) <> 0
                ORDER BY t.id LIMIT 1000""",
            timeout=timeout,
        ):
            problems.append(
                f"transaction {row['id']} ({row['idempotency_key']}) has {row['n']} entries "
                f"summing to {row['total']}, expected the 2 summing to 0 that ledger_post writes"
            )
        problems.extend(await _chain_problems(conn, timeout))
        if counts["transactions"] == 0:
            # TRUNCATE empties the tables but (unless told otherwise) not their id sequence.
            handed_out = await conn.fetchval(
                "SELECT pg_sequence_last_value(pg_get_serial_sequence('ledger_transactions', 'id'))",
                timeout=timeout,
            )
            if handed_out is not None:
                problems.append(
                    f"the ledger has no transactions, but transaction ids up to {handed_out} were "
                    "handed out: its tables were emptied (TRUNCATE)"
                )
        for row in await conn.fetch(
            """SELECT a.name, a.balance, coalesce(s.total, 0) AS total
                 FROM accounts AS a
                 LEFT JOIN (SELECT account, sum(amount) AS total FROM ledger_entries GROUP BY account) AS s
                   ON s.account = a.name
                WHERE a.balance <> coalesce(s.total, 0)
                ORDER BY a.name LIMIT 1000""",
            timeout=timeout,
        ):
            problems.append(
                f"account {row['name']} has balance {row['balance']}, but its entries sum to {row['total']}"
            )
        for row in await conn.fetch(
            "SELECT name, balance FROM accounts WHERE balance < 0 AND kind NOT IN ('house', 'cashier') "
            "ORDER BY name LIMIT 1000",
            timeout=timeout,
        ):
            problems.append(f"account {row['name']} has negative balance {row['balance']}")
        if counts["total"] != 0:
            problems.append(f"all balances sum to {int(counts['total'])}, expected 0")
        seal = await _seal(conn, None, timeout)
        if anchor is not None:
            then = await _seal(conn, anchor.last_id, timeout)
            if (then.transactions, then.digest) != (anchor.transactions, anchor.digest):
                problems.append(
                    f"the ledger does not extend its anchor: {anchor.transactions} transactions up to id "
                    f"{anchor.last_id} were sealed, now {then.transactions} there and another digest "
                    "(history removed or rewritten)"
                )
    return LedgerCheck(
        int(counts["transactions"]),
        int(counts["entries"]),
        int(counts["accounts"]),
        tuple(problems),
        seal,
    )


async def _seal(conn: DbConnection, up_to: int | None, timeout: float) -> Seal:
    digest = hashlib.sha256()
    count = 0
    last_id = 0
    async for row in conn.cursor(
        "SELECT id, idempotency_key, reason::text AS reason FROM ledger_transactions "
        "WHERE $1::bigint IS NULL OR id <= $1 ORDER BY id",
        up_to,
        prefetch=5000,
        timeout=timeout,
    ):
        key = str(row["idempotency_key"])
        digest.update(f"{row['id']}|{len(key)}:{key}|{row['reason']}\n".encode())
        count += 1
        last_id = int(row["id"])
    return Seal(last_id if up_to is None else up_to, count, digest.hexdigest())


__all__ = [
    "Ledger",
    "LedgerCheck",
    "PostResult",
    "PostedTransaction",
    "Reason",
    "Seal",
    "account_kind",
    "can_post",
    "check_on",
    "first_shortfall",
    "in_transaction_with_retries",
    "post_in_transaction",
    "post_on",
    "verify_post",
    "with_retries",
]
