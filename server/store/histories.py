"""Finished hands: stored as rendered by ``engine.history`` (PHH and PokerStars text) with their
players, findable by hand id, by player and by tournament, and exported as files.

The store does not render: it keeps the texts it is given, byte for byte, so an export is exactly
what the table saw. Saving is idempotent on ``hand_id`` (a retried save stores nothing twice).

The PokerStars text stored is the operator's record (``format_pokerstars`` with ``hero=None``:
every player's ``Dealt to`` line). A player's own file is cut from it at export by
``engine.history.pokerstars.own_view``, which keeps only that player's hole cards and equals
rendering the hand for that player; nothing else in the text is private (hands shown at a
showdown are public, mucked hands are never written).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg
import msgspec

from engine.history.pokerstars import join_hands, own_view
from server.store.dbconn import DbConnection
from server.store.errors import HandHistoryError
from server.store.postgres_text import is_storable

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_LIMIT = 100
_ENCODER = msgspec.json.Encoder()
_TOML_TABLE_HEADER = re.compile(r"^([ \t]*)(\[\[?)", re.MULTILINE)


def save_sql(first: int = 1, prefix: str = "") -> str:
    """The statement that stores hands (``save_arguments``' eight arrays, as parameters ``first``
    to ``first + 7``); ``prefix``: more common table expressions to run in the same statement
    (``server.store.journal`` inserts its entries with their hands in one round trip)."""
    p = [f"${first + i}" for i in range(8)]
    return f"""
WITH {prefix}input AS (
    SELECT * FROM unnest({p[0]}::text[], {p[1]}::text[], {p[2]}::bigint[], {p[3]}::bigint[],
                         {p[4]}::timestamptz[], {p[5]}::text[], {p[6]}::text[], {p[7]}::text[])
        AS u(hand_id, tournament_id, table_id, hand_number, finished_at, players, phh, pokerstars)
), hands AS (
    INSERT INTO hand_histories (hand_id, tournament_id, table_id, hand_number, finished_at, players, phh,
                                pokerstars)
    SELECT hand_id, tournament_id, table_id, hand_number, finished_at, players::jsonb, phh, pokerstars
      FROM input
    ON CONFLICT (hand_id) DO NOTHING
    RETURNING hand_id, finished_at, players
)
INSERT INTO hand_players (hand_id, player_id, finished_at)
SELECT hands.hand_id, p.value ->> 'player_id', hands.finished_at
  FROM hands CROSS JOIN LATERAL jsonb_array_elements(hands.players) AS p
"""


_SAVE_SQL = save_sql()

_COLUMNS = (
    "hand_id, tournament_id, table_id, hand_number, finished_at, players::text AS players, phh, pokerstars"
)


@dataclass(frozen=True, slots=True)
class HandPlayer:
    """A player dealt into the hand: seat, chips at the start and at the end of the hand."""

    seat: int
    player_id: str
    starting_stack: int
    final_stack: int


@dataclass(frozen=True, slots=True)
class HandRecord:
    """One finished hand as rendered by ``engine.history``."""

    hand_id: str
    tournament_id: str
    table_id: int
    hand_number: int
    finished_at: datetime
    players: tuple[HandPlayer, ...]
    phh: str
    pokerstars: str

    def __post_init__(self) -> None:
        if not self.hand_id or not self.tournament_id or type(self.table_id) is not int:
            raise HandHistoryError("a hand history needs a hand id, a tournament id and a table id (an int)")
        if self.finished_at.tzinfo is None:
            raise HandHistoryError(f"finished_at must carry a time zone, got {self.finished_at!r}")
        ids = [p.player_id for p in self.players]
        texts = (self.hand_id, self.tournament_id, self.phh, self.pokerstars, *ids)
        if not all(is_storable(text) for text in texts):
            raise HandHistoryError(f"hand {self.hand_id!r}: texts must be UTF-8 without NUL characters")
        if not ids or len(set(ids)) != len(ids):
            raise HandHistoryError(f"hand {self.hand_id!r} needs players, each once; got {ids!r}")


class HandHistories:
    """Hand histories on a pool; every query has a timeout."""

    def __init__(self, pool: asyncpg.Pool, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self._pool = pool
        self._timeout = timeout

    async def save(self, hands: Sequence[HandRecord]) -> None:
        """Store finished hands in one statement; hands already stored (same id) are skipped."""
        if not hands:
            return
        async with self._pool.acquire(timeout=self._timeout) as conn:
            await self.save_on(conn, hands, timeout=self._timeout)

    @staticmethod
    async def save_on(
        conn: DbConnection, hands: Sequence[HandRecord], *, timeout: float = DEFAULT_TIMEOUT_S
    ) -> None:
        """``save`` on a connection the caller holds (inside its transaction)."""
        await conn.execute(_SAVE_SQL, *save_arguments(hands), timeout=timeout)

    async def get(self, hand_id: str) -> HandRecord:
        """The hand with this id; ``HandHistoryError`` if there is none."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            row = await conn.fetchrow(
                f"SELECT {_COLUMNS} FROM hand_histories WHERE hand_id = $1", hand_id, timeout=self._timeout
            )
        if row is None:
            raise HandHistoryError(f"no hand has id {hand_id!r}")
        return _record(row)

    async def by_tournament(self, tournament_id: str, *, limit: int | None = None) -> list[HandRecord]:
        """The tournament's hands, oldest first."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                f"SELECT {_COLUMNS} FROM hand_histories WHERE tournament_id = $1 "
                "ORDER BY finished_at, hand_id LIMIT $2",
                tournament_id,
                limit,
                timeout=self._timeout,
            )
        return [_record(row) for row in rows]

    async def by_player(
        self, player_id: str, *, limit: int = DEFAULT_LIMIT, before: datetime | None = None
    ) -> list[HandRecord]:
        """The player's hands, newest first; page with ``before`` (the last ``finished_at`` seen)."""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                f"""SELECT {", ".join("h." + c for c in _COLUMNS.split(", "))}
                      FROM hand_players AS p JOIN hand_histories AS h ON h.hand_id = p.hand_id
                     WHERE p.player_id = $1 AND ($2::timestamptz IS NULL OR p.finished_at < $2)
                     ORDER BY p.finished_at DESC, p.hand_id DESC LIMIT $3""",
                player_id,
                before,
                limit,
                timeout=self._timeout,
            )
        return [_record(row) for row in rows]

    async def select(
        self, *, tournament_id: str | None = None, player_id: str | None = None
    ) -> list[HandRecord]:
        """Every hand of a tournament, or of a player, or of a player in a tournament, oldest
        first; at least one of the two must be given."""
        if tournament_id is None and player_id is None:
            raise HandHistoryError("choose the hands by tournament, by player, or both")
        columns = ", ".join("h." + c for c in _COLUMNS.split(", "))
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(
                f"""SELECT {columns} FROM hand_histories AS h
                     WHERE ($1::text IS NULL OR h.tournament_id = $1)
                       AND ($2::text IS NULL OR EXISTS (
                               SELECT 1 FROM hand_players AS p
                                WHERE p.hand_id = h.hand_id AND p.player_id = $2))
                     ORDER BY h.finished_at, h.hand_id""",
                tournament_id,
                player_id,
                timeout=self._timeout,
            )
        return [_record(row) for row in rows]

    async def latest(
        self, *, tournament_id: str | None = None, player_id: str | None = None, limit: int = DEFAULT_LIMIT
    ) -> list[HandRecord]:
        """The newest ``limit`` hands of a tournament, of a player, or of a player in a
        tournament, newest first (``select``'s choice, without reading every hand)."""
        if tournament_id is None and player_id is None:
            raise HandHistoryError("choose the hands by tournament, by player, or both")
        columns = ", ".join("h." + c for c in _COLUMNS.split(", "))
        # each way down its own index, newest first: a player's hands, or a tournament's
        if player_id is not None:
            query = f"""SELECT {columns}
                          FROM hand_players AS p JOIN hand_histories AS h ON h.hand_id = p.hand_id
                         WHERE p.player_id = $2 AND ($1::text IS NULL OR h.tournament_id = $1)
                         ORDER BY p.finished_at DESC, p.hand_id DESC LIMIT $3"""
        else:
            # ($2 is always NULL here: one parameter list for both queries)
            query = f"""SELECT {columns} FROM hand_histories AS h
                         WHERE h.tournament_id = $1 AND $2::text IS NULL
                         ORDER BY h.finished_at DESC, h.hand_id DESC LIMIT $3"""
        async with self._pool.acquire(timeout=self._timeout) as conn:
            rows = await conn.fetch(query, tournament_id, player_id, limit, timeout=self._timeout)
        return [_record(row) for row in rows]

    async def export_phh(self, tournament_id: str) -> str:
        """The tournament's hands as one ``.phhs`` file: each hand under ``[n]``, oldest first."""
        return phhs_text(await self.by_tournament(tournament_id))

    async def export_pokerstars(self, tournament_id: str) -> str:
        """The tournament's hands as one PokerStars hand-history text file, oldest first."""
        return pokerstars_text(await self.by_tournament(tournament_id))


def phhs_text(hands: Sequence[HandRecord]) -> str:
    """PHH texts joined as pokerkit's ``HandHistory.dumps_all`` does (``[n]`` before each hand);
    a hand's own TOML sub-tables are renamed under its number so the file stays valid TOML."""
    parts = []
    for number, hand in enumerate(hands, start=1):
        body = _TOML_TABLE_HEADER.sub(rf"\g<1>\g<2>{number}.", hand.phh.strip())
        parts.append(f"[{number}]\n{body}\n")
    return "\n".join(parts)


def pokerstars_text(hands: Sequence[HandRecord], player: str | None = None) -> str:
    """The hands as one PokerStars file (each hand, then three blank lines); with ``player``, that
    player's own copy of each hand (only their hole cards)."""
    if player is None:
        return join_hands(hand.pokerstars for hand in hands)
    return join_hands(own_view(hand.pokerstars, player) for hand in hands)


def save_arguments(hands: Sequence[HandRecord]) -> tuple[list[object], ...]:
    """The eight arrays ``save_sql``'s statement takes for ``hands``."""
    return (
        [h.hand_id for h in hands],
        [h.tournament_id for h in hands],
        [h.table_id for h in hands],
        [h.hand_number for h in hands],
        [h.finished_at for h in hands],
        [_players_json(h) for h in hands],
        [h.phh for h in hands],
        [h.pokerstars for h in hands],
    )


def _players_json(hand: HandRecord) -> str:
    # msgspec, not json.dumps (a new JSONEncoder each call): the column is jsonb, which stores
    # the same value whichever valid JSON spells it
    return _ENCODER.encode(
        [
            {
                "seat": p.seat,
                "player_id": p.player_id,
                "starting_stack": p.starting_stack,
                "final_stack": p.final_stack,
            }
            for p in hand.players
        ]
    ).decode()


def _record(row: asyncpg.Record) -> HandRecord:
    players = tuple(
        HandPlayer(int(p["seat"]), str(p["player_id"]), int(p["starting_stack"]), int(p["final_stack"]))
        for p in json.loads(row["players"])
    )
    return HandRecord(
        row["hand_id"],
        row["tournament_id"],
        int(row["table_id"]),
        int(row["hand_number"]),
        row["finished_at"],
        players,
        row["phh"],
        row["pokerstars"],
    )
