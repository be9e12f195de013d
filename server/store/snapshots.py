"""Table snapshots at hand boundaries, and the latest consistent state of a whole tournament.

Promises:

- ``Snapshots.save(batch)`` writes any number of table snapshots (of any tournaments) in one SQL
  statement, hence one round trip and one atomic transaction: a crash keeps all of a batch or
  none of it. Each batch gets a ``batch_id``; batch ids grow with commit order per table.
- Every committed batch is a consistent point. ``load_latest_state(tid)`` returns, for every table
  of the tournament, its newest snapshot at or before the newest batch (or at or before
  ``at_or_before_batch``); a table whose newest snapshot has no seats was broken and is left out.
  The coordinator keeps moves consistent by saving both tables of a move in the same batch.
- Every row carries its format (1: seats only, 2: with the engine's state) and is validated when
  loaded. A row that does not load (an unknown format, a state or seats that do not decode or do
  not describe a table) is skipped with a logged warning, and the whole tournament is loaded as
  of the batch before that row's: the newest consistent point that can be read.
- "Newest" is by snapshot id, drawn at insert time, so each table must be saved by one writer at
  a time (its table actor, or the coordinator between hands); different tables may be saved
  concurrently.
- ``save`` takes ``fences`` and ``SnapshotWriter.save`` a ``fence`` (``server.store.fencing``),
  checked in the batch's transaction: a stale one raises ``FencedOut`` and nothing of that write
  is stored; in the writer's batch, the other callers' snapshots still go in.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg
import msgspec

from engine.table import TableSnapshot as EngineTableSnapshot
from server.store.dbconn import DbConnection
from server.store.errors import FencedOut, SnapshotError
from server.store.fencing import Fence, fence_on
from server.store.postgres_text import is_storable

DEFAULT_TIMEOUT_S = 30.0
MAX_FALLBACKS = 100
log = logging.getLogger(__name__)
_STATE_ENCODER = msgspec.json.Encoder()
_STATE_DECODER = msgspec.json.Decoder(EngineTableSnapshot)


def _rows_sql(first: int, batch: str) -> str:
    """The INSERT of ``save_arguments``' eight arrays (parameters ``first`` to ``first + 7``) into
    the batch whose id the common table expression ``batch`` returns, in the order given."""
    p = [f"${first + i}" for i in range(8)]
    return f"""INSERT INTO table_snapshots (batch_id, tournament_id, table_id, hand_number, level, button,
                             seats, taken_at, format, state)
SELECT {batch}.id, u.tournament_id, u.table_id, u.hand_number, u.level, u.button, u.seats::jsonb, u.taken_at,
       CASE WHEN u.state IS NULL THEN 1 ELSE 2 END, u.state::jsonb
  FROM {batch}, unnest({p[0]}::text[], {p[1]}::bigint[], {p[2]}::bigint[], {p[3]}::int[], {p[4]}::int[],
                     {p[5]}::text[], {p[6]}::timestamptz[], {p[7]}::text[]) WITH ORDINALITY
       AS u(tournament_id, table_id, hand_number, level, button, seats, taken_at, state, n)
 ORDER BY u.n"""


_SAVE_SQL = f"""
WITH batch AS (INSERT INTO snapshot_batches DEFAULT VALUES RETURNING id)
{_rows_sql(1, "batch")}
RETURNING id, batch_id
"""


def save_ctes(first: int) -> str:
    """A batch of table snapshots as common table expressions (``snapshot_batch``, then
    ``snapshot_rows``) for another statement to run with its own writes: ``save_arguments``'
    eight arrays are its parameters ``first`` to ``first + 7`` (``server.store.journal`` stores
    the table a hand ended at with the hand, in one round trip)."""
    return (
        "snapshot_batch AS (INSERT INTO snapshot_batches DEFAULT VALUES RETURNING id), "
        f"snapshot_rows AS (\n{_rows_sql(first, 'snapshot_batch')}\nRETURNING id)"
    )


# A loose index scan: walk the tournament's distinct table ids through the index, then take each
# table's newest snapshot through the same index. Its cost grows with the number of tables, not
# with the number of hands played (a plain DISTINCT ON reads every snapshot ever taken).
_LATEST_SQL = """
WITH RECURSIVE tables AS (
    (SELECT table_id FROM table_snapshots WHERE tournament_id = $1 ORDER BY table_id LIMIT 1)
    UNION ALL
    SELECT (SELECT s.table_id FROM table_snapshots AS s
             WHERE s.tournament_id = $1 AND s.table_id > tables.table_id ORDER BY s.table_id LIMIT 1)
      FROM tables WHERE tables.table_id IS NOT NULL
)
SELECT latest.* FROM tables CROSS JOIN LATERAL (
    SELECT s.id, s.batch_id, s.table_id, s.hand_number, s.level, s.button, s.seats::text AS seats, s.taken_at,
           s.format, s.state::text AS state
      FROM table_snapshots AS s
     WHERE s.tournament_id = $1 AND s.table_id = tables.table_id AND ($2::bigint IS NULL OR s.batch_id <= $2)
     ORDER BY s.id DESC LIMIT 1
) AS latest
WHERE tables.table_id IS NOT NULL
ORDER BY latest.table_id
"""


_PRUNE_SQL = """
DELETE FROM table_snapshots AS s
 USING (SELECT table_id, max(id) AS keep_id FROM table_snapshots
         WHERE tournament_id = $1 AND batch_id <= $2 GROUP BY table_id) AS k
 WHERE s.tournament_id = $1 AND s.table_id = k.table_id AND s.id < k.keep_id
"""


@dataclass(frozen=True, slots=True)
class SeatSnapshot:
    """One occupied seat: who sits there, their chips, and their time banks left."""

    seat: int
    player_id: str
    stack: int
    time_banks: int


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """A table between hands. ``hand_number`` is the last hand finished (0 before the first).

    An empty ``seats`` records that the table was broken. ``state`` is the engine's own snapshot
    of the table (``engine.table.Table.snapshot``), all ``Table.from_snapshot`` needs to rebuild
    it; rows written before it existed have none (format 1).
    """

    tournament_id: str
    table_id: int
    hand_number: int
    level: int
    button: int | None
    seats: tuple[SeatSnapshot, ...]
    taken_at: datetime
    state: EngineTableSnapshot | None = None

    def __post_init__(self) -> None:
        verify_snapshot(self)

    @property
    def chips(self) -> int:
        return sum(seat.stack for seat in self.seats)


def verify_snapshot(snapshot: TableSnapshot) -> None:
    """Raise ``SnapshotError`` unless the snapshot describes a table between hands."""
    if not snapshot.tournament_id or type(snapshot.table_id) is not int or snapshot.table_id < 0:
        raise SnapshotError(
            f"a snapshot needs a tournament id and a table id >= 0, got {snapshot.table_id!r}"
        )
    ids = (snapshot.tournament_id, *(seat.player_id for seat in snapshot.seats))
    if not all(name and is_storable(name) for name in ids):
        raise SnapshotError(f"ids are non-empty UTF-8 text without NUL characters, got {ids!r}")
    if snapshot.hand_number < 0 or snapshot.level < 0:
        raise SnapshotError(
            f"hand number and level are not negative, got {snapshot.hand_number} "
            f"and {snapshot.level} at table {snapshot.table_id!r}"
        )
    if snapshot.taken_at.tzinfo is None:
        raise SnapshotError(f"taken_at must carry a time zone, got {snapshot.taken_at!r}")
    state = snapshot.state
    if state is not None:
        if state.table_id != snapshot.table_id:
            raise SnapshotError(f"table {snapshot.table_id}: its state is table {state.table_id}'s")
        if {(s.seat, s.player, s.stack) for s in state.seats} != {
            (s.seat, s.player_id, s.stack) for s in snapshot.seats
        }:
            raise SnapshotError(f"table {snapshot.table_id}: its state seats other players or stacks")
    seats = [seat.seat for seat in snapshot.seats]
    players = [seat.player_id for seat in snapshot.seats]
    if len(set(seats)) != len(seats) or len(set(players)) != len(players):
        raise SnapshotError(f"table {snapshot.table_id!r} lists a seat or a player twice: {snapshot.seats!r}")
    for seat in snapshot.seats:
        if type(seat.stack) is not int or seat.stack < 0 or seat.time_banks < 0 or seat.seat < 0:
            raise SnapshotError(
                f"seat {seat!r} at table {snapshot.table_id!r} needs a non-negative "
                "integer stack, seat number and time banks"
            )


@dataclass(frozen=True, slots=True)
class SavedSnapshots:
    """The batch a save became and the snapshot ids, in the order given."""

    batch_id: int
    snapshot_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TournamentState:
    """The tables of a tournament as of ``batch_id``, by table id."""

    tournament_id: str
    batch_id: int
    tables: tuple[TableSnapshot, ...]

    @property
    def chips(self) -> int:
        return sum(table.chips for table in self.tables)

    @property
    def players(self) -> frozenset[str]:
        return frozenset(seat.player_id for table in self.tables for seat in table.seats)


class Snapshots:
    """Writing and reading table snapshots on a pool; every query has a timeout."""

    def __init__(self, pool: asyncpg.Pool, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self._pool = pool
        self._timeout = timeout

    async def save(
        self, snapshots: Sequence[TableSnapshot], *, fences: Iterable[Fence] = ()
    ) -> SavedSnapshots:
        """Write a batch atomically in one round trip (see the module docstring); with
        ``fences``, in one transaction with their check."""
        if not snapshots:
            raise SnapshotError("a snapshot batch needs at least one table")
        fences = tuple(fences)
        async with self._pool.acquire(timeout=self._timeout) as conn:
            if not fences:
                return await save_on(conn, snapshots, timeout=self._timeout)
            async with conn.transaction():
                await fence_on(conn, fences, timeout=self._timeout)
                return await save_on(conn, snapshots, timeout=self._timeout)

    async def prune(self, tournament_id: str, keep_from_batch: int) -> int:
        """Delete the tournament's snapshots that no state at or after ``keep_from_batch`` can
        need: per table, everything older than its newest snapshot at or before that batch.
        Returns how many rows went. ``load_latest_state`` answers the same before and after."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            return await prune_on(conn, tournament_id, keep_from_batch, timeout=self._timeout)

    async def load_latest_state(
        self, tournament_id: str, *, at_or_before_batch: int | None = None
    ) -> TournamentState | None:
        """The newest consistent state of the tournament, or ``None`` if it has no snapshot."""
        for _ in range(MAX_FALLBACKS):
            async with self._pool.acquire(timeout=self._timeout) as conn:
                rows = await conn.fetch(_LATEST_SQL, tournament_id, at_or_before_batch, timeout=self._timeout)
            if not rows:
                return None
            batch_id = max(int(row["batch_id"]) for row in rows)
            try:
                tables = tuple(_load_row(tournament_id, row) for row in rows if row["seats"] != "[]")
            except _Damaged as damaged:
                log.warning(
                    "%s: table snapshot %d (batch %d) cannot be loaded (%s): using the batch before it",
                    tournament_id,
                    damaged.row_id,
                    damaged.batch_id,
                    damaged.reason,
                )
                at_or_before_batch = damaged.batch_id - 1
                continue
            return TournamentState(tournament_id, batch_id, tables)
        raise SnapshotError(f"{tournament_id}: the newest {MAX_FALLBACKS} snapshot batches cannot be loaded")


class SnapshotWriter:
    """Group commit for table snapshots: each table actor awaits ``save(snapshot)`` at its hand
    boundary; whatever arrives while a batch is being written goes out together in the next one,
    so a thousand tables cost a handful of round trips and no table waits for a timer.

    ``save`` returns once the snapshot is committed (its id), or raises what the write raised.
    At most ``max_pending`` snapshots wait; more callers wait for room (back-pressure, bounded
    memory). Each table must have at most one ``save`` in flight, as its actor naturally does.
    """

    def __init__(self, snapshots: Snapshots, *, max_batch: int = 2000, max_pending: int = 20000) -> None:
        self._snapshots = snapshots
        self._max_batch = max_batch
        self._pending: list[tuple[TableSnapshot, Fence | None, asyncio.Future[int]]] = []
        self._room = asyncio.Semaphore(max_pending)
        self._flusher: asyncio.Task[None] | None = None
        self.batches_written = 0

    async def save(self, snapshot: TableSnapshot, *, fence: Fence | None = None) -> int:
        await self._room.acquire()
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._pending.append((snapshot, fence, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="snapshot-writer")
        return await future

    async def close(self) -> None:
        """Wait until everything handed to ``save`` is written."""
        while self._flusher is not None and not self._flusher.done():
            await self._flusher

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending[: self._max_batch], self._pending[self._max_batch :]
            try:
                await self._save(batch)
            finally:
                for _ in batch:
                    self._room.release()

    async def _save(self, batch: list[tuple[TableSnapshot, Fence | None, asyncio.Future[int]]]) -> None:
        while batch:
            try:
                saved = await self._snapshots.save(
                    [snapshot for snapshot, _, _ in batch],
                    fences=[fence for _, fence, _ in batch if fence is not None],
                )
            except FencedOut as fenced:  # that owner's snapshots are refused, the others go again
                stale = Fence(fenced.resource, fenced.token)
                for _, fence, future in batch:
                    if fence == stale and not future.done():
                        future.set_exception(fenced)
                batch = [waiting for waiting in batch if waiting[1] != stale]
                continue
            except Exception as error:  # every caller of this batch gets the failure, with context
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                return
            self.batches_written += 1
            for (_, _, future), snapshot_id in zip(batch, saved.snapshot_ids, strict=True):
                if not future.done():
                    future.set_result(snapshot_id)
            return


async def prune_on(
    conn: DbConnection, tournament_id: str, keep_from_batch: int, *, timeout: float = DEFAULT_TIMEOUT_S
) -> int:
    """``Snapshots.prune`` on one connection."""
    status = await conn.execute(_PRUNE_SQL, tournament_id, keep_from_batch, timeout=timeout)
    return int(status.split()[-1])


async def save_on(
    conn: DbConnection, snapshots: Sequence[TableSnapshot], *, timeout: float = DEFAULT_TIMEOUT_S
) -> SavedSnapshots:
    """``Snapshots.save`` on one connection."""
    rows = await conn.fetch(_SAVE_SQL, *save_arguments(snapshots), timeout=timeout)
    # Identity values are drawn in insertion order, which is the ORDER BY of the given order.
    return SavedSnapshots(int(rows[0]["batch_id"]), tuple(sorted(int(row["id"]) for row in rows)))


def save_arguments(snapshots: Sequence[TableSnapshot]) -> tuple[list[object], ...]:
    """The eight arrays a batch of ``snapshots`` is written with (``save_on``, ``save_ctes``)."""
    return (
        [s.tournament_id for s in snapshots],
        [s.table_id for s in snapshots],
        [s.hand_number for s in snapshots],
        [s.level for s in snapshots],
        [s.button for s in snapshots],
        [_seats_json(s) for s in snapshots],
        [s.taken_at for s in snapshots],
        [None if s.state is None else _STATE_ENCODER.encode(s.state).decode() for s in snapshots],
    )


def _seats_json(snapshot: TableSnapshot) -> str:
    # msgspec, not json.dumps (a new JSONEncoder each call): the column is jsonb, which stores
    # the same value whichever valid JSON spells it
    return _STATE_ENCODER.encode(
        [[s.seat, s.player_id, s.stack, s.time_banks] for s in snapshot.seats]
    ).decode()


class _Damaged(Exception):
    def __init__(self, row_id: int, batch_id: int, reason: str) -> None:
        super().__init__(reason)
        self.row_id = row_id
        self.batch_id = batch_id
        self.reason = reason


def _load_row(tournament_id: str, row: asyncpg.Record) -> TableSnapshot:
    """The row as a validated snapshot, or ``_Damaged`` saying why not."""
    try:
        snapshot = _snapshot_from_row(tournament_id, row)
        verify_snapshot(snapshot)
    except (SnapshotError, ValueError, TypeError, KeyError, msgspec.DecodeError) as error:
        raise _Damaged(int(row["id"]), int(row["batch_id"]), f"{type(error).__name__}: {error}") from None
    return snapshot


def _snapshot_from_row(tournament_id: str, row: asyncpg.Record) -> TableSnapshot:
    seats = tuple(
        SeatSnapshot(int(seat), str(player), int(stack), int(banks))
        for seat, player, stack, banks in json.loads(row["seats"])
    )
    button = row["button"]
    state: EngineTableSnapshot | None = None
    if row["format"] == 2:
        try:
            state = _STATE_DECODER.decode(row["state"])
        except msgspec.DecodeError as error:
            raise SnapshotError(
                f"table {row['table_id']}: its saved state does not decode: {error}"
            ) from None
    elif row["format"] != 1:
        raise SnapshotError(f"table {row['table_id']}: snapshot format {row['format']} is unknown")
    return TableSnapshot(
        tournament_id,
        int(row["table_id"]),
        int(row["hand_number"]),
        int(row["level"]),
        None if button is None else int(button),
        seats,
        row["taken_at"],
        state,
    )
