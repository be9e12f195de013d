"""Tournaments in the store: definitions, the status machine, registrations and the waiting list,
entries, rebuys and add-ons, results and prizes.

Status machine (also enforced by a trigger in migrations/0003_tournaments.sql, whoever writes)::

    announced -> registering -> running -> finished
        \\______________\\___________\\-> cancelled

The store records; it does not decide. Who is registered or waiting, who may rebuy and who wins
what are the tournament core's decisions (``engine.tournament``). Every write that has money
attached takes the ``Transfer`` list and posts it in the same database transaction, so the record
and the money commit together or not at all.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

import asyncpg

from engine.tournament.config import parse_config
from engine.tournament.transfers import Transfer
from server.store.dbconn import DbConnection
from server.store.errors import StatusTransitionError, TournamentError, TournamentExists, UnknownTournament
from server.store.fencing import Fence, fence_on
from server.store.ledger import PostResult, in_transaction_with_retries, post_in_transaction, verify_post
from server.store.postgres_text import is_storable

DEFAULT_TIMEOUT_S = 30.0


class TournamentStatus(StrEnum):
    ANNOUNCED = "announced"
    REGISTERING = "registering"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


TRANSITIONS: Mapping[TournamentStatus, frozenset[TournamentStatus]] = {
    TournamentStatus.ANNOUNCED: frozenset({TournamentStatus.REGISTERING, TournamentStatus.CANCELLED}),
    TournamentStatus.REGISTERING: frozenset({TournamentStatus.RUNNING, TournamentStatus.CANCELLED}),
    TournamentStatus.RUNNING: frozenset({TournamentStatus.FINISHED, TournamentStatus.CANCELLED}),
    TournamentStatus.FINISHED: frozenset(),
    TournamentStatus.CANCELLED: frozenset(),
}


class RegistrationStatus(StrEnum):
    REGISTERED = "registered"
    WAITING = "waiting"
    UNREGISTERED = "unregistered"
    REFUNDED = "refunded"


class PaidWith(StrEnum):
    CASH = "cash"
    TICKET = "ticket"


class RebuyKind(StrEnum):
    REBUY = "rebuy"
    ADD_ON = "add-on"


def verify_transition(current: TournamentStatus, target: TournamentStatus) -> None:
    """Raise ``StatusTransitionError`` unless ``current -> target`` is a step of the machine."""
    if target not in TRANSITIONS[current]:
        allowed = ", ".join(sorted(TRANSITIONS[current])) or "nothing (it is over)"
        raise StatusTransitionError(
            f"a tournament that is {current} cannot become {target}; it can become {allowed}"
        )


def can_transition(current: TournamentStatus, target: TournamentStatus) -> bool:
    return target in TRANSITIONS[current]


def status_path(current: TournamentStatus, target: TournamentStatus) -> list[TournamentStatus]:
    """The shortest run of steps from ``current`` to ``target`` (empty when they are equal): what
    a writer that missed a step (a status write that failed) records to catch up. Raises
    ``StatusTransitionError`` when the machine has no way there."""
    paths: dict[TournamentStatus, list[TournamentStatus]] = {current: []}
    frontier = [current]
    while frontier:
        status = frontier.pop(0)
        if status is target:
            return paths[status]
        for step in sorted(TRANSITIONS[status]):
            if step not in paths:
                paths[step] = [*paths[status], step]
                frontier.append(step)
    raise StatusTransitionError(f"a tournament that is {current} can never become {target}")


@dataclass(frozen=True, slots=True)
class Tournament:
    id: str
    name: str
    status: TournamentStatus
    config_toml: str
    config: dict[str, Any]
    starts_at: datetime | None
    created_at: datetime
    number: int  # 1, 2, 3 ... in order of creation: the tournament's tables are numbered from it


@dataclass(frozen=True, slots=True)
class StatusChanged:
    """The event a status change records."""

    tournament_id: str
    from_status: TournamentStatus
    to_status: TournamentStatus
    changed_at: datetime


@dataclass(frozen=True, slots=True)
class Registration:
    tournament_id: str
    player_id: str
    status: RegistrationStatus
    paid_with: PaidWith
    queue_seq: int
    registered_at: datetime


@dataclass(frozen=True, slots=True)
class Entry:
    tournament_id: str
    player_id: str
    entry_number: int
    chips: int


@dataclass(frozen=True, slots=True)
class Rebuy:
    tournament_id: str
    player_id: str
    kind: RebuyKind
    number: int
    chips: int


@dataclass(frozen=True, slots=True)
class Result:
    """A finishing place (tied players share one) and the prize in cents."""

    player_id: str
    place: int
    prize: int


async def _write_results(
    conn: DbConnection, tournament_id: str, results: Sequence[Result], timeout: float
) -> None:
    await conn.execute(
        """INSERT INTO results (tournament_id, player_id, place, prize)
           SELECT $1, * FROM unnest($2::text[], $3::int[], $4::bigint[])
           ON CONFLICT (tournament_id, player_id) DO UPDATE
              SET place = EXCLUDED.place, prize = EXCLUDED.prize, finished_at = now()""",
        tournament_id,
        [r.player_id for r in results],
        [r.place for r in results],
        [r.prize for r in results],
        timeout=timeout,
    )


_TOURNAMENT_COLUMNS = (
    "id, name, status::text AS status, config_toml, config::text AS config, starts_at, created_at, number"
)
_REGISTRATION_COLUMNS = "tournament_id, player_id, status, paid_with, queue_seq, registered_at"


class Tournaments:
    """Tournament records on a pool; every query has a timeout."""

    def __init__(self, pool: asyncpg.Pool, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self._pool = pool
        self._timeout = timeout

    async def create(
        self,
        tournament_id: str,
        name: str,
        config_toml: str,
        config: Mapping[str, Any],
        *,
        starts_at: datetime | None = None,
    ) -> Tournament:
        """Record a new, announced tournament: the operator's TOML text and its parsed form."""
        if not tournament_id or ":" in tournament_id or not is_storable(tournament_id + name + config_toml):
            raise TournamentError(
                f"a tournament id is non-empty without ':' and all text UTF-8 without NUL, "
                f"got id {tournament_id!r}"
            )
        async with self._pool.acquire(timeout=self._timeout) as conn:
            try:
                row = await conn.fetchrow(
                    f"""INSERT INTO tournaments (id, name, config_toml, config, starts_at)
                        VALUES ($1, $2, $3, $4::jsonb, $5) RETURNING {_TOURNAMENT_COLUMNS}""",
                    tournament_id,
                    name,
                    config_toml,
                    json.dumps(dict(config)),
                    starts_at,
                    timeout=self._timeout,
                )
            except asyncpg.exceptions.UniqueViolationError as error:
                raise TournamentExists(f"a tournament with id {tournament_id!r} exists") from error
        assert row is not None
        return _tournament(row)

    async def create_from_toml(self, config_toml: str, *, starts_at: datetime | None = None) -> Tournament:
        """Validate an operator's TOML with ``engine.tournament.config.parse_config`` (its
        ``ConfigError`` names the bad field), then record it under the config's id and name."""
        config = parse_config(config_toml)
        return await self.create(
            config.id, config.name, config_toml, tomllib.loads(config_toml), starts_at=starts_at
        )

    async def get(self, tournament_id: str) -> Tournament:
        async with self._pool.acquire(timeout=self._timeout) as conn:
            row = await conn.fetchrow(
                f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments WHERE id = $1",
                tournament_id,
                timeout=self._timeout,
            )
        if row is None:
            raise UnknownTournament(f"no tournament has id {tournament_id!r}")
        return _tournament(row)

    async def reschedule(
        self, tournament_id: str, starts_at: datetime, *, fence: Fence | None = None
    ) -> None:
        """A new start time, before the start (announced or registering); with ``fence``, only
        if it holds (``FencedOut``)."""
        async with self._pool.acquire(timeout=self._timeout) as conn, conn.transaction():
            await fence_on(conn, () if fence is None else (fence,), timeout=self._timeout)
            done = await conn.execute(
                "UPDATE tournaments SET starts_at = $2, updated_at = now() "
                "WHERE id = $1 AND status IN ('announced', 'registering')",
                tournament_id,
                starts_at,
                timeout=self._timeout,
            )
        if done != "UPDATE 1":
            raise TournamentError(f"tournament {tournament_id!r} cannot be moved: unknown or already started")

    async def redefine(self, tournament_id: str, config_toml: str, starts_at: datetime | None) -> Tournament:
        """A new definition (and start time, if given) for a tournament before its start; the id
        in ``config_toml`` must stay the same. Nobody must have entered: the caller checks."""
        config = parse_config(config_toml)
        if config.id != tournament_id:
            raise TournamentError(f"the new definition names {config.id!r}, not {tournament_id!r}")
        if not is_storable(config.name + config_toml):
            raise TournamentError("a definition is UTF-8 text without NUL")
        async with self._pool.acquire(timeout=self._timeout) as conn:
            done = await conn.execute(
                "UPDATE tournaments SET config_toml = $2, name = $3, config = $4::jsonb, "
                "starts_at = coalesce($5, starts_at), updated_at = now() "
                "WHERE id = $1 AND status IN ('announced', 'registering')",
                tournament_id,
                config_toml,
                config.name,
                json.dumps(tomllib.loads(config_toml)),
                starts_at,
                timeout=self._timeout,
            )
        if done != "UPDATE 1":
            raise TournamentError(
                f"tournament {tournament_id!r} cannot be changed: unknown or already started"
            )
        return await self.get(tournament_id)

    async def all(self, status: TournamentStatus | None = None) -> list[Tournament]:
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                f"""SELECT {_TOURNAMENT_COLUMNS} FROM tournaments
                     WHERE $1::text IS NULL OR status::text = $1 ORDER BY starts_at NULLS LAST, id""",
                None if status is None else str(status),
                timeout=self._timeout,
            )
        return [_tournament(row) for row in rows]

    async def set_status(
        self,
        tournament_id: str,
        target: TournamentStatus,
        transfers: Sequence[Transfer] = (),
        *,
        fence: Fence | None = None,
        results: Sequence[Result] = (),
    ) -> tuple[StatusChanged, PostResult]:
        """Move the tournament to ``target`` (with the money of that step, e.g. refunds on a
        cancellation, and the finishing places of a tournament that ended, written in the same
        transaction); ``StatusTransitionError`` and nothing changes if the machine forbids it,
        ``FencedOut`` if ``fence`` is given and stale."""
        verify_post(transfers)

        async def work(conn: DbConnection) -> tuple[StatusChanged, PostResult]:
            await fence_on(conn, () if fence is None else (fence,), timeout=self._timeout)
            current = await conn.fetchval(
                "SELECT status::text FROM tournaments WHERE id = $1 FOR UPDATE",
                tournament_id,
                timeout=self._timeout,
            )
            if current is None:
                raise UnknownTournament(f"no tournament has id {tournament_id!r}")
            verify_transition(TournamentStatus(current), target)
            changed_at = await conn.fetchval(
                "UPDATE tournaments SET status = $2::tournament_status WHERE id = $1 RETURNING updated_at",
                tournament_id,
                str(target),
                timeout=self._timeout,
            )
            if results:
                await _write_results(conn, tournament_id, results, self._timeout)
            posted = await post_in_transaction(conn, transfers, timeout=self._timeout)
            return StatusChanged(tournament_id, TournamentStatus(current), target, changed_at), posted

        async with self._pool.acquire(timeout=self._timeout) as conn:
            return await in_transaction_with_retries(conn, work)

    async def status_history(
        self, tournament_id: str
    ) -> list[tuple[TournamentStatus | None, TournamentStatus]]:
        """Every status the tournament had, oldest first, as (from, to)."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                """SELECT from_status::text AS f, to_status::text AS t FROM tournament_status_changes
                    WHERE tournament_id = $1 ORDER BY id""",
                tournament_id,
                timeout=self._timeout,
            )
        return [
            (None if r["f"] is None else TournamentStatus(r["f"]), TournamentStatus(r["t"])) for r in rows
        ]

    async def register(
        self,
        tournament_id: str,
        player_id: str,
        *,
        status: RegistrationStatus = RegistrationStatus.REGISTERED,
        paid_with: PaidWith = PaidWith.CASH,
        transfers: Sequence[Transfer] = (),
    ) -> tuple[Registration, PostResult]:
        """Record a registration (or a place on the waiting list) with its buy-in and fee transfers.

        Only while the tournament is registering (or running, for late registration). A player who
        unregistered and comes back goes to the back of the queue.
        """
        if status not in (RegistrationStatus.REGISTERED, RegistrationStatus.WAITING):
            raise TournamentError(f"a new registration is registered or waiting, not {status}")
        verify_post(transfers)

        async def work(conn: DbConnection) -> tuple[Registration, PostResult]:
            await self._require_status(
                conn, tournament_id, (TournamentStatus.REGISTERING, TournamentStatus.RUNNING)
            )
            row = await conn.fetchrow(
                f"""INSERT INTO registrations (tournament_id, player_id, status, paid_with)
                    VALUES ($1, $2, $3, $4)
                    ON CONFLICT (tournament_id, player_id) DO UPDATE
                       SET status = EXCLUDED.status, paid_with = EXCLUDED.paid_with,
                           queue_seq = DEFAULT, registered_at = now(), updated_at = now()
                     WHERE registrations.status IN ('unregistered', 'refunded')
                    RETURNING {_REGISTRATION_COLUMNS}""",
                tournament_id,
                player_id,
                str(status),
                str(paid_with),
                timeout=self._timeout,
            )
            if row is None:
                raise TournamentError(
                    f"player {player_id!r} is already registered or waiting in tournament {tournament_id!r}"
                )
            posted = await post_in_transaction(conn, transfers, timeout=self._timeout)
            return _registration(row), posted

        async with self._pool.acquire(timeout=self._timeout) as conn:
            return await in_transaction_with_retries(conn, work)

    async def set_registration_status(
        self,
        tournament_id: str,
        player_id: str,
        status: RegistrationStatus,
        transfers: Sequence[Transfer] = (),
    ) -> tuple[Registration, PostResult]:
        """Change a registration (promote from the waiting list, unregister, refund) with its money."""
        verify_post(transfers)

        async def work(conn: DbConnection) -> tuple[Registration, PostResult]:
            row = await conn.fetchrow(
                f"""UPDATE registrations SET status = $3, updated_at = now()
                     WHERE tournament_id = $1 AND player_id = $2 RETURNING {_REGISTRATION_COLUMNS}""",
                tournament_id,
                player_id,
                str(status),
                timeout=self._timeout,
            )
            if row is None:
                raise TournamentError(f"player {player_id!r} has no registration in {tournament_id!r}")
            posted = await post_in_transaction(conn, transfers, timeout=self._timeout)
            return _registration(row), posted

        async with self._pool.acquire(timeout=self._timeout) as conn:
            return await in_transaction_with_retries(conn, work)

    async def registrations(
        self, tournament_id: str, status: RegistrationStatus | None = None
    ) -> list[Registration]:
        """Registrations in queue order (the waiting list's order when ``status`` is WAITING)."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                f"""SELECT {_REGISTRATION_COLUMNS} FROM registrations
                     WHERE tournament_id = $1 AND ($2::text IS NULL OR status = $2) ORDER BY queue_seq""",
                tournament_id,
                None if status is None else str(status),
                timeout=self._timeout,
            )
        return [_registration(row) for row in rows]

    async def waiting_list(self, tournament_id: str) -> list[Registration]:
        return await self.registrations(tournament_id, RegistrationStatus.WAITING)

    async def add_entry(self, entry: Entry, transfers: Sequence[Transfer] = ()) -> PostResult:
        """Record an entry (first buy-in or re-entry) and post its money, together."""
        verify_post(transfers)
        return await self._insert_with_money(
            "INSERT INTO entries (tournament_id, player_id, entry_number, chips) VALUES ($1, $2, $3, $4)",
            (entry.tournament_id, entry.player_id, entry.entry_number, entry.chips),
            transfers,
            f"entry {entry.entry_number} of {entry.player_id!r} in {entry.tournament_id!r}",
        )

    async def entries(self, tournament_id: str) -> list[Entry]:
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                "SELECT player_id, entry_number, chips FROM entries WHERE tournament_id = $1 "
                "ORDER BY created_at, player_id, entry_number",
                tournament_id,
                timeout=self._timeout,
            )
        return [Entry(tournament_id, r["player_id"], int(r["entry_number"]), int(r["chips"])) for r in rows]

    async def add_rebuy(self, rebuy: Rebuy, transfers: Sequence[Transfer] = ()) -> PostResult:
        """Record a rebuy or add-on and post its money, together."""
        verify_post(transfers)
        return await self._insert_with_money(
            "INSERT INTO rebuys (tournament_id, player_id, kind, number, chips) VALUES ($1, $2, $3, $4, $5)",
            (rebuy.tournament_id, rebuy.player_id, str(rebuy.kind), rebuy.number, rebuy.chips),
            transfers,
            f"{rebuy.kind} {rebuy.number} of {rebuy.player_id!r} in {rebuy.tournament_id!r}",
        )

    async def rebuys(self, tournament_id: str) -> list[Rebuy]:
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                "SELECT player_id, kind, number, chips FROM rebuys WHERE tournament_id = $1 "
                "ORDER BY created_at, player_id, kind, number",
                tournament_id,
                timeout=self._timeout,
            )
        return [
            Rebuy(tournament_id, r["player_id"], RebuyKind(r["kind"]), int(r["number"]), int(r["chips"]))
            for r in rows
        ]

    async def record_results(
        self, tournament_id: str, results: Sequence[Result], transfers: Sequence[Transfer] = ()
    ) -> PostResult:
        """Record finishing places and prizes with the prize transfers, together. Recording a
        player's result again overwrites the place and prize (a deal can change a prize)."""
        verify_post(transfers)

        async def work(conn: DbConnection) -> PostResult:
            await _write_results(conn, tournament_id, results, self._timeout)
            return await post_in_transaction(conn, transfers, timeout=self._timeout)

        async with self._pool.acquire(timeout=self._timeout) as conn:
            try:
                return await in_transaction_with_retries(conn, work)
            except asyncpg.exceptions.ForeignKeyViolationError as error:
                raise UnknownTournament(f"no tournament has id {tournament_id!r}") from error

    async def results(self, tournament_id: str) -> list[Result]:
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                "SELECT player_id, place, prize FROM results WHERE tournament_id = $1 "
                "ORDER BY place, player_id",
                tournament_id,
                timeout=self._timeout,
            )
        return [Result(r["player_id"], int(r["place"]), int(r["prize"])) for r in rows]

    async def _require_status(
        self, conn: DbConnection, tournament_id: str, allowed: tuple[TournamentStatus, ...]
    ) -> None:
        # FOR SHARE: a concurrent status change waits for this write, so nobody registers into a
        # tournament that has just been cancelled.
        current = await conn.fetchval(
            "SELECT status::text FROM tournaments WHERE id = $1 FOR SHARE",
            tournament_id,
            timeout=self._timeout,
        )
        if current is None:
            raise UnknownTournament(f"no tournament has id {tournament_id!r}")
        if TournamentStatus(current) not in allowed:
            raise StatusTransitionError(
                f"tournament {tournament_id!r} is {current}; this needs it to be " + " or ".join(allowed)
            )

    async def _insert_with_money(
        self, sql: str, values: tuple[object, ...], transfers: Sequence[Transfer], what: str
    ) -> PostResult:
        async def work(conn: DbConnection) -> PostResult:
            await conn.execute(sql, *values, timeout=self._timeout)
            return await post_in_transaction(conn, transfers, timeout=self._timeout)

        async with self._pool.acquire(timeout=self._timeout) as conn:
            try:
                return await in_transaction_with_retries(conn, work)
            except asyncpg.exceptions.UniqueViolationError as error:
                raise TournamentError(f"{what} is already recorded") from error
            except asyncpg.exceptions.ForeignKeyViolationError as error:
                raise UnknownTournament(f"{what}: no such tournament") from error
            except asyncpg.exceptions.CheckViolationError as error:
                raise TournamentError(f"{what}: {error}") from error


def _tournament(row: asyncpg.Record) -> Tournament:
    return Tournament(
        row["id"],
        row["name"],
        TournamentStatus(row["status"]),
        row["config_toml"],
        json.loads(row["config"]),
        row["starts_at"],
        row["created_at"],
        int(row["number"]),
    )


def _registration(row: asyncpg.Record) -> Registration:
    return Registration(
        row["tournament_id"],
        row["player_id"],
        RegistrationStatus(row["status"]),
        PaidWith(row["paid_with"]),
        int(row["queue_seq"]),
        row["registered_at"],
    )
