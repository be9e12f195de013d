"""The operators' desk: the requests that change the schedule, and those for tournaments no
coordinator runs any more, answered by the server (one task, reading the ``operations`` inbox).

- ``op_tournament_create``: the definition is checked (a ``ConfigError`` names the bad field),
  recorded, and the tournament loaded at once (no waiting for the store to be polled).
- ``op_tournament_edit`` with a new definition: only while nobody has entered; the coordinator
  is stopped, its journal dropped, the definition replaced and the tournament loaded again. A new
  start time alone goes on to the tournament's coordinator, whose director moves the start.
- ``op_tournament_delete``: only while nobody has entered; the tournament is marked cancelled
  (the store keeps every tournament it ever had) and leaves the lobby.
- ``op_tournament_list``: every tournament in the store, running ones as their director has them.
- ``op_tournament_show`` / ``op_tournament_results`` for a finished or cancelled tournament: its
  director as the journal has it.

Workers sharing Redis (``server.app``): the one holding the desk's lease reads ``OPERATIONS``;
an edit of the definition or a delete of a tournament another worker runs is passed to that
worker's own desk (``desk_inbox``), which alone can stop its coordinator and knows its entrants.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
from collections import OrderedDict
from typing import TYPE_CHECKING

import msgspec
from redis.exceptions import RedisError

from engine.tournament.config import ConfigError, parse_config
from engine.tournament.director import Director
from protocol import kinds
from protocol.errors import ErrorCode
from protocol.kinds import OperatorEventKind
from protocol.operator_requests import (
    OpTournamentCreate,
    OpTournamentDelete,
    OpTournamentEdit,
    OpTournamentList,
    OpTournamentResults,
    OpTournamentShow,
)
from protocol.server_messages import (
    Ack,
    Error,
    LobbyRemoved,
    OpEvent,
    OpResults,
    OpTournament,
    OpTournaments,
    ServerMessage,
    TournamentSummary,
)
from server import announcements
from server.clock import milliseconds
from server.messages import (
    LOBBY,
    OPERATIONS,
    OPERATORS,
    Request,
    ToSession,
    desk_inbox,
    operators_channel,
    session_channel,
    tournament_inbox,
)
from server.recovery import load_director
from server.store.errors import StoreError, TournamentError, UnknownTournament
from server.store.tournaments import Tournament, TournamentStatus

if TYPE_CHECKING:
    from server.app import FeltServer

log = logging.getLogger("feltd.operations")

DEFAULT_START_SECONDS = 300.0  # a tournament created without a start time starts in five minutes
# a start this little in the past means now: the operator's "now" has aged on its way here
START_GRACE_SECONDS = 60.0
REPLIES_KEPT = 10_000  # answers remembered for requests sent again


class Refused(Exception):
    """An operator request the desk says no to: the code and the reason go back as ``error``."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


class OperationsDesk:
    """See the module docstring."""

    def __init__(self, server: FeltServer, address: str = OPERATIONS) -> None:
        """``address``: ``OPERATIONS`` (the desk operators' requests come to: one in a cluster,
        the worker holding its lease), or a worker's own ``desk_inbox``."""
        self.server = server
        self.inbox = server.bus.open_inbox(address, 10_000)
        # docs/protocol.md section 20: a change sent again under its request_id gets the first
        # answer and is not made twice (a client that lost the answer to a create may resend it)
        self.replies: OrderedDict[tuple[str, str], ServerMessage] = OrderedDict()
        # the summaries of tournaments over that no coordinator here holds (never loaded, or
        # unloaded after their end), read once from the journal: they change no more
        self.over: dict[str, TournamentSummary] = {}

    async def run(self) -> None:
        try:
            while True:
                message = await self.inbox.get()
                if isinstance(message, Request):
                    await self._answer(message)
        finally:
            self.server.bus.close_inbox(self.inbox.address)

    async def _answer(self, request: Request) -> None:
        message = request.message
        caller = request.caller
        request_id = getattr(message, "request_id", None)
        if (
            isinstance(message, OpTournamentEdit)
            and message.toml is None
            and caller.operator is not None
            and self.server.bus.has_inbox(tournament_inbox(message.tournament_id))
        ):
            # a new start alone is the running director's to make (the store is told by it):
            # changed here, the store would have it and the tournament would still start on time
            self.server.bus.send(tournament_inbox(message.tournament_id), request)
            return
        if isinstance(message, OpTournamentEdit | OpTournamentDelete):
            owner = await self._runs_elsewhere(message.tournament_id)
            if owner is not None:
                # its coordinator, and whether anyone has entered, are that worker's to know
                self.server.bus.send(desk_inbox(owner), request)
                return
        key = (caller.operator or "", str(request_id))
        changes = isinstance(message, OpTournamentCreate | OpTournamentEdit | OpTournamentDelete)
        if changes and caller.operator is not None and key in self.replies:
            self.server.bus.publish(session_channel(caller.session_id), ToSession(self.replies[key]))
            return
        try:
            if caller.operator is None:
                raise Refused(ErrorCode.FORBIDDEN, "only an operator's connection may do that")
            reply = await self._handle(message, caller.operator)
        except Refused as refused:
            reply = Error(code=refused.code, message=str(refused), request_id=request_id, fatal=False)
        except (TournamentError, ConfigError, ValueError) as error:
            reply = Error(
                code=ErrorCode.INVALID_FIELD, message=str(error), request_id=request_id, fatal=False
            )
        except StoreError as error:
            log.error("operator request %s failed: %s", type(message).__name__, error)
            reply = Error(code=ErrorCode.SERVER_BUSY, message=str(error), request_id=request_id, fatal=False)
        # readings are answered afresh; the store not answering is passing (then a resend may work)
        if (
            changes
            and caller.operator is not None
            and not (isinstance(reply, Error) and reply.code is ErrorCode.SERVER_BUSY)
        ):
            self.replies[key] = reply
            while len(self.replies) > REPLIES_KEPT:
                self.replies.popitem(last=False)
        self.server.bus.publish(session_channel(caller.session_id), ToSession(reply))

    async def _runs_elsewhere(self, tournament_id: str) -> str | None:
        """The worker (lease owner) that runs ``tournament_id`` if it is another one."""
        server = self.server
        leases = server.leases
        if leases is None or tournament_id in server.coordinators:
            return None
        try:
            holder = await leases.holder(tournament_id)
        except (RedisError, OSError) as error:
            log.warning("tournament %s: who runs it is unknown: %s", tournament_id, error)
            return None
        if holder is None or holder.owner == leases.owner:
            return None
        return holder.owner if server.bus.has_inbox(desk_inbox(holder.owner)) else None

    async def _handle(self, message: object, operator: str) -> ServerMessage:
        server = self.server
        store = server.store
        if isinstance(message, OpTournamentList):
            records = await store.tournaments.all()
            return OpTournaments(
                request_id=message.request_id, tournaments=[await self._summary(r) for r in records]
            )
        if isinstance(message, OpTournamentCreate):
            config = parse_config(message.toml)  # ConfigError: invalid_field, naming the field
            now = server.clock.now()
            start = message.start_ms / 1000 if message.start_ms is not None else now + DEFAULT_START_SECONDS
            if start < now - START_GRACE_SECONDS:
                raise Refused(ErrorCode.INVALID_FIELD, "start_ms is in the past")
            start = max(start, now)
            await store.tournaments.create_from_toml(message.toml, starts_at=_moment(start))
            await server.load()
            self._event(config.id, OperatorEventKind.COMMAND, operator, message, f"created {config.id}")
            return await self._show(message.request_id, config.id)
        if isinstance(message, OpTournamentEdit):
            return await self._edit(message, operator)
        if isinstance(message, OpTournamentDelete):
            record = await self._record(message.tournament_id)
            await self._require_empty(record)
            await server.drop(
                record.id, then=lambda: store.tournaments.set_status(record.id, TournamentStatus.CANCELLED)
            )
            server.bus.publish(LOBBY, LobbyRemoved(tournament_id=record.id))
            self._event(record.id, OperatorEventKind.COMMAND, operator, message, f"deleted {record.id}")
            return Ack(request_id=message.request_id)
        if isinstance(message, OpTournamentShow):
            return await self._show(message.request_id, message.tournament_id)
        if isinstance(message, OpTournamentResults):
            director = await self._director(message.tournament_id)
            return OpResults(
                request_id=message.request_id,
                tournament_id=message.tournament_id,
                status=announcements.STATUSES[director.status],
                prize_pool_cents=max(director.prize_pool, director.registration.pool_contributions),
                results=announcements.results(director),
            )
        tournament_id = str(getattr(message, "tournament_id", ""))
        record = await self._record(tournament_id)
        raise Refused(
            ErrorCode.NOT_AVAILABLE,
            f"tournament {tournament_id!r} is {record.status.value}: it takes no commands now",
        )

    async def _edit(self, message: OpTournamentEdit, operator: str) -> ServerMessage:
        server = self.server
        record = await self._record(message.tournament_id)
        if record.status not in (TournamentStatus.ANNOUNCED, TournamentStatus.REGISTERING):
            raise Refused(ErrorCode.NOT_AVAILABLE, f"{record.id} is {record.status.value}: too late to edit")
        start = None if message.start_ms is None else _moment(message.start_ms / 1000)
        if start is not None and start.timestamp() < server.clock.now():
            raise Refused(ErrorCode.INVALID_FIELD, "start_ms is in the past")
        if message.toml is None:
            if start is None:
                raise Refused(
                    ErrorCode.INVALID_FIELD, "nothing to change: give a new definition or start time"
                )
            await server.store.tournaments.reschedule(record.id, start)
        else:
            await self._require_empty(record)
            parse_config(message.toml)
            toml = message.toml

            async def redefine() -> None:
                await server.store.journal.drop(record.id)
                await server.store.tournaments.redefine(record.id, toml, start)

            await server.drop(record.id, then=redefine)
        await server.load()
        self._event(record.id, OperatorEventKind.COMMAND, operator, message, f"edited {record.id}")
        return await self._show(message.request_id, record.id)

    async def _require_empty(self, record: Tournament) -> None:
        if record.status not in (TournamentStatus.ANNOUNCED, TournamentStatus.REGISTERING):
            raise Refused(ErrorCode.NOT_AVAILABLE, f"{record.id} is {record.status.value}")
        coordinator = self.server.coordinators.get(record.id)
        if coordinator is not None and (
            coordinator.director.registration.registered or coordinator.director.registration.waiting
        ):
            raise Refused(
                ErrorCode.NOT_AVAILABLE,
                f"{record.id} has entrants: cancel it (they are refunded), or change only its start",
            )

    async def _record(self, tournament_id: str) -> Tournament:
        try:
            return await self.server.store.tournaments.get(tournament_id)
        except UnknownTournament:
            raise Refused(ErrorCode.NOT_FOUND, f"no tournament {tournament_id!r}") from None

    async def _director(self, tournament_id: str) -> Director:
        coordinator = self.server.coordinators.get(tournament_id)
        if coordinator is not None:
            return coordinator.director
        record = await self._record(tournament_id)
        restored = await load_director(self.server.store.journal, tournament_id)
        if restored is not None:
            return restored.director
        start = record.starts_at.timestamp() if record.starts_at is not None else self.server.clock.now()
        return Director(parse_config(record.config_toml), start_at=start, rng=random.Random(0))

    async def _show(self, request_id: str, tournament_id: str) -> OpTournament:
        coordinator = self.server.coordinators.get(tournament_id)
        if coordinator is not None:
            return coordinator.op_tournament(request_id)
        record = await self._record(tournament_id)
        director = await self._director(tournament_id)
        summary = announcements.summary(director, record.name)
        if record.status in (TournamentStatus.ANNOUNCED, TournamentStatus.CANCELLED):
            summary = _with_status(summary, record.status)
        return OpTournament(
            request_id=request_id,
            tournament=summary,
            state=announcements.state(director),
            toml=record.config_toml,
            players=announcements.players(director),
        )

    async def _summary(self, record: Tournament) -> TournamentSummary:
        coordinator = self.server.coordinators.get(record.id)
        if coordinator is not None:
            return announcements.summary(coordinator.director, coordinator.name)
        if record.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
            summary = self.over.get(record.id)
            if summary is None:
                director = await self._director(record.id)
                summary = _with_status(announcements.summary(director, record.name), record.status)
                self.over[record.id] = summary
            return summary
        try:
            config = parse_config(record.config_toml)
        except ConfigError:
            config = None
        start = record.starts_at.timestamp() if record.starts_at is not None else 0.0
        if config is None:
            log.warning("tournament %s: its stored definition no longer parses", record.id)
            raise Refused(ErrorCode.INTERNAL, f"tournament {record.id}'s definition no longer parses")
        summary = announcements.summary(Director(config, start_at=start, rng=random.Random(0)), record.name)
        return _with_status(summary, record.status)

    def _event(
        self, tournament_id: str, kind: OperatorEventKind, operator: str, message: object, text: str
    ) -> None:
        event = OpEvent(
            tournament_id=tournament_id,
            kind=kind,
            at_ms=milliseconds(self.server.clock.now()),
            text=text,
            operator=operator,
            command=str(type(message).__struct_config__.tag),  # type: ignore[attr-defined]
        )
        self.server.bus.publish(OPERATORS, ToSession(event))
        self.server.bus.publish(operators_channel(tournament_id), ToSession(event))


def _moment(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


def _with_status(summary: TournamentSummary, status: TournamentStatus) -> TournamentSummary:
    """The summary with the status the store records (a tournament no director runs)."""
    return msgspec.structs.replace(summary, status=kinds.TournamentStatus(status.value))


__all__ = ["OperationsDesk", "Refused"]
