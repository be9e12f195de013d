"""The directors' journal: each tournament's inputs in order, and snapshots of its director.

Promises:

- ``JournalWriter.append(entry)`` returns once the entry is durable. Entries that arrive while
  a write is under way go out together next, one transaction for all of them (group commit, as
  the ledger writer does for money), so a busy server pays one commit for many tables' hands.
  An entry's hand histories are inserted in the same transaction: a hand is stored exactly when
  its result is.
- Sequence numbers are the caller's (1, 2, 3, ... per tournament, with no gaps): one writer per
  tournament, its coordinator. A number written twice is refused (``JournalError``): two servers
  must never drive one tournament.
- ``save_snapshot`` keeps a snapshot of the director as of entry ``seq``; ``snapshots`` lists the
  newest first, so a reader that finds the newest damaged falls back to the one before; ``prune``
  drops what no longer matters (entries and snapshots older than the second newest snapshot).
- ``entries_after(tid, seq)`` reads the inputs after a snapshot, in order.
- Every write takes an optional ``fence`` (``server.store.fencing``), checked in its transaction:
  a stale one raises ``FencedOut`` and nothing of that write is stored. In a group commit, a
  caller's stale fence fails that caller only; the others' entries go in without it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import asyncpg

from server.store.dbconn import DbConnection
from server.store.errors import FencedOut, JournalError
from server.store.fencing import Fence, fence_on
from server.store.histories import HandRecord, save_arguments, save_sql
from server.store.snapshots import TableSnapshot, save_ctes
from server.store.snapshots import save_arguments as snapshot_arguments

DEFAULT_TIMEOUT_S = 30.0

_APPEND_SQL = """
INSERT INTO director_inputs (tournament_id, seq, at, input)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::float8[], $4::bytea[])
"""


def _append_sql(hands: bool, tables: bool) -> str:
    """The entries, with their hands and tables if any, in one statement: one round trip, atomic
    on its own. Parameters: the entries' four arrays, then the tables' eight, then the hands'."""
    ctes = [save_ctes(5)] if tables else []
    if hands:
        entries = f"entries AS ({_APPEND_SQL.strip()}\nRETURNING 0)"
        return save_sql(13 if tables else 5, ", ".join([entries, *ctes]) + ", ")
    return f"WITH {ctes[0]}\n{_APPEND_SQL.strip()}\n" if ctes else _APPEND_SQL


_APPEND_SQLS = {
    (hands, tables): _append_sql(hands, tables) for hands in (False, True) for tables in (False, True)
}


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """Input ``seq`` of a tournament's director, at clock time ``at``, encoded."""

    tournament_id: str
    seq: int
    at: float
    data: bytes
    hands: tuple[HandRecord, ...] = ()
    tables: tuple[TableSnapshot, ...] = ()  # their snapshots as of the entry, in one batch


@dataclass(frozen=True, slots=True)
class StoredSnapshot:
    tournament_id: str
    seq: int
    format: int
    data: bytes


@dataclass(slots=True)
class _Waiting:
    entry: JournalEntry
    fence: Fence | None = None
    future: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class Journal:
    """The journal's tables on a pool; every query has a timeout."""

    def __init__(self, pool: asyncpg.Pool, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self._pool = pool
        self._timeout = timeout

    async def append(self, entries: Sequence[JournalEntry], *, fences: Iterable[Fence] = ()) -> None:
        """Write ``entries`` (and their hands) in one transaction, if every one of ``fences``
        holds (else ``FencedOut``, and nothing is written)."""
        if not entries:
            return
        hands = [hand for entry in entries for hand in entry.hands]
        tables = [table for entry in entries for table in entry.tables]
        fences = tuple(fences)
        async with self._pool.acquire(timeout=self._timeout) as conn:
            if not fences:  # one statement: a transaction of its own, no BEGIN and COMMIT to send
                await self._insert(conn, entries, hands, tables)
                return
            async with conn.transaction():
                await fence_on(conn, fences, timeout=self._timeout)
                await self._insert(conn, entries, hands, tables)

    async def _insert(
        self,
        conn: DbConnection,
        entries: Sequence[JournalEntry],
        hands: list[HandRecord],
        tables: list[TableSnapshot],
    ) -> None:
        arguments: list[object] = [
            [e.tournament_id for e in entries],
            [e.seq for e in entries],
            [e.at for e in entries],
            [e.data for e in entries],
        ]
        if tables:
            arguments.extend(snapshot_arguments(tables))
        if hands:
            arguments.extend(save_arguments(hands))
        sql = _APPEND_SQLS[bool(hands), bool(tables)]
        try:
            await conn.execute(sql, *arguments, timeout=self._timeout)
        except asyncpg.UniqueViolationError as error:
            if error.table_name not in (None, "director_inputs"):
                raise  # a hand's (two hands of one id in one write): not a second writer
            taken = ", ".join(f"{e.tournament_id}#{e.seq}" for e in entries)
            raise JournalError(f"journal entries already written (two writers?): {taken}") from None

    async def entries_after(self, tournament_id: str, seq: int) -> list[tuple[int, float, bytes]]:
        """(seq, at, data) of every entry after ``seq``, in order."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                "SELECT seq, at, input FROM director_inputs WHERE tournament_id = $1 AND seq > $2 "
                "ORDER BY seq",
                tournament_id,
                seq,
                timeout=self._timeout,
            )
        return [(row["seq"], row["at"], bytes(row["input"])) for row in rows]

    async def last_entry(self, tournament_id: str) -> tuple[int, float] | None:
        """(seq, at) of the newest entry, if any."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            row = await conn.fetchrow(
                "SELECT seq, at FROM director_inputs WHERE tournament_id = $1 ORDER BY seq DESC LIMIT 1",
                tournament_id,
                timeout=self._timeout,
            )
        return None if row is None else (row["seq"], row["at"])

    async def save_snapshot(self, snapshot: StoredSnapshot, *, fence: Fence | None = None) -> None:
        async with self._pool.acquire(timeout=self._timeout) as conn, conn.transaction():
            await fence_on(conn, () if fence is None else (fence,), timeout=self._timeout)
            await conn.execute(
                "INSERT INTO director_snapshots (tournament_id, seq, format, data) "
                "VALUES ($1, $2, $3, $4) ON CONFLICT (tournament_id, seq) "
                "DO UPDATE SET format = EXCLUDED.format, data = EXCLUDED.data",
                snapshot.tournament_id,
                snapshot.seq,
                snapshot.format,
                snapshot.data,
                timeout=self._timeout,
            )

    async def snapshots(self, tournament_id: str, *, limit: int = 2) -> list[StoredSnapshot]:
        """The newest ``limit`` snapshots, newest first."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                "SELECT seq, format, data FROM director_snapshots WHERE tournament_id = $1 "
                "ORDER BY seq DESC LIMIT $2",
                tournament_id,
                limit,
                timeout=self._timeout,
            )
        return [StoredSnapshot(tournament_id, row["seq"], row["format"], bytes(row["data"])) for row in rows]

    async def drop(self, tournament_id: str) -> None:
        """Forget a tournament's journal (its definition is replaced before anyone entered)."""
        async with self._pool.acquire(timeout=self._timeout) as conn, conn.transaction():
            await conn.execute("DELETE FROM director_inputs WHERE tournament_id = $1", tournament_id)
            await conn.execute("DELETE FROM director_snapshots WHERE tournament_id = $1", tournament_id)

    async def prune(self, tournament_id: str, *, fence: Fence | None = None) -> None:
        """Drop the entries and snapshots older than the second newest snapshot (the fallback
        needs that one and every entry after it)."""
        async with self._pool.acquire(timeout=self._timeout) as conn, conn.transaction():
            await fence_on(conn, () if fence is None else (fence,), timeout=self._timeout)
            keep = await conn.fetchval(
                "SELECT seq FROM director_snapshots WHERE tournament_id = $1 "
                "ORDER BY seq DESC OFFSET 1 LIMIT 1",
                tournament_id,
                timeout=self._timeout,
            )
            if keep is None:
                return
            await conn.execute(
                "DELETE FROM director_inputs WHERE tournament_id = $1 AND seq <= $2",
                tournament_id,
                keep,
                timeout=self._timeout,
            )
            await conn.execute(
                "DELETE FROM director_snapshots WHERE tournament_id = $1 AND seq < $2",
                tournament_id,
                keep,
                timeout=self._timeout,
            )


class JournalWriter:
    """Group commit for journal entries (see the module docstring)."""

    def __init__(self, journal: Journal, *, max_entries: int = 1000) -> None:
        self._journal = journal
        self._max_entries = max_entries
        self._pending: list[_Waiting] = []
        self._flusher: asyncio.Task[None] | None = None
        self.batches_written = 0

    async def append(self, entry: JournalEntry, *, fence: Fence | None = None) -> None:
        """Return once ``entry`` is durable; raises what the write raised (then it is not):
        ``FencedOut`` when ``fence`` is stale."""
        waiting = _Waiting(entry, fence)
        self._pending.append(waiting)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="journal-writer")
        await asyncio.shield(waiting.future)

    async def close(self) -> None:
        while self._flusher is not None and not self._flusher.done():
            await self._flusher

    async def _flush(self) -> None:
        while self._pending:
            group, self._pending = self._pending[: self._max_entries], self._pending[self._max_entries :]
            try:
                group = await self._append_fenced(group)
            except Exception as error:
                if len(group) > 1 and isinstance(error, JournalError):
                    for waiting in group:  # find whose entry it was: the others still go in
                        if not waiting.future.done():
                            await self._alone(waiting)
                    continue
                for waiting in group:
                    if not waiting.future.done():
                        waiting.future.set_exception(error)
                continue
            self.batches_written += 1 if group else 0
            for waiting in group:
                if not waiting.future.done():
                    waiting.future.set_result(None)

    async def _append_fenced(self, group: list[_Waiting]) -> list[_Waiting]:
        """Write ``group`` but for the callers whose fence is stale (each gets its ``FencedOut``);
        returns those written."""
        while group:
            try:
                await self._journal.append(
                    [w.entry for w in group], fences=[w.fence for w in group if w.fence is not None]
                )
                return group
            except FencedOut as refused:
                stale = Fence(refused.resource, refused.token)
                for waiting in group:
                    if waiting.fence == stale and not waiting.future.done():
                        waiting.future.set_exception(refused)
                group = [w for w in group if w.fence != stale]
        return group

    async def _alone(self, waiting: _Waiting) -> None:
        try:
            await self._journal.append(
                [waiting.entry], fences=() if waiting.fence is None else (waiting.fence,)
            )
        except Exception as error:
            waiting.future.set_exception(error)
        else:
            waiting.future.set_result(None)
