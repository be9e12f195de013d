"""One asyncio task per tournament: the director (``engine.tournament.director``) in a thin shell.

The coordinator feeds the director what happens (players' requests, hands ending at its tables,
the clock) and carries out what it answers: money through the ledger (in order, retried until
it commits: every transfer is idempotent by its key), hands dealt and seats changed at the table
actors, and what players, followers and the lobby are told. It holds no tournament rule.

Money requests (register, rebuy, add-on) are posted before the director records them: the
director previews the transfers (the same idempotency keys), the ledger commits them or refuses
(not enough money), and only then does the director register the player. A request's
``request_id`` is its idempotency key: the same id again gets the first answer, and moves no
money twice.

At every hand's end the table's state (``server.store.snapshots``) and the hand's history (PHH and
PokerStars text, with the places of the players who finished in it) are stored with the journal
entry of the hand's result, in its write.

Given a ``fence`` (its worker's lease token, ``server.store.fencing``), every write it makes
carries it: journal entries and their hands, director snapshots and prunes, table snapshots,
ledger posts, status and start-time changes. The first ``FencedOut`` (another worker owns the
tournament now) stops it at once: ``fenced_out`` is set, ``on_fenced`` called, and nothing more
is written or posted.

Given ``shard_tables`` (``feltd serve --shard-tables``, issue 15), its tables are not played in
its own process but by the table hosts (``server.table_host``) the bus's directory lists: each new
table goes to the host with the fewest of this tournament's tables (``OpenTable``), and what the
coordinator tells a table goes through that host (``ToTable``), in order. A host whose address
leaves the directory (its process died) has lost its tables: each is opened again on a live host
and its hand under way rolled back and dealt again from its start (``TableLost``, journaled:
CRASH-1 at one table). Every opening has an ``epoch``, greater than any before it, also after a
takeover (the lease token is in it): a ``HandDone`` of an older opening is ignored, and a
coordinator that takes the tournament up first has the older openings stopped (``DropTables``).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import random
import secrets
import zlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

import asyncpg
import msgspec

from engine.history.phh import PhhError, dumps_phh, export_phh
from engine.history.pokerstars import BuyIn, StarsHandContext, StarsTournament, format_pokerstars
from engine.history.pokerstars import Finish as StarsFinish
from engine.table import Table
from engine.table import TableSnapshot as EngineTableSnapshot
from engine.tournament import director as d
from engine.tournament import inputs
from engine.tournament.balancing import MoveReason
from engine.tournament.config import TournamentConfig
from engine.tournament.deals import DealError, DealMethod
from engine.tournament.registration import (
    AlreadyRegistered,
    InsufficientFunds,
    NotRegistered,
    RegistrationError,
    TournamentFull,
)
from engine.tournament.settlement import InMoneyMethod
from engine.tournament.transfers import Account, Reason, Transfer, player_account
from protocol import kinds
from protocol.client_messages import (
    AddOn,
    DeclineRebuy,
    Rebuy,
    Register,
    SitIn,
    SitOut,
    TournamentSubscribe,
    Unregister,
)
from protocol.errors import ErrorCode
from protocol.operator_requests import (
    DealAccept,
    DealAsk,
    DealPropose,
    DealRequest,
    OpDisqualify,
    OperatorRequest,
    OpMessage,
    OpPenalize,
    OpPlayerRegister,
    OpPlayerUnregister,
    OpRemoveNoShows,
    OpSitOut,
    OpSubscribe,
    OpTournamentCancel,
    OpTournamentEdit,
    OpTournamentPause,
    OpTournamentResults,
    OpTournamentResume,
    OpTournamentShow,
    OpTournamentStart,
    OpUnsubscribe,
)
from protocol.server_messages import (
    Ack,
    Balance,
    Error,
    LobbyUpdate,
    Notice,
    OpEvent,
    OpResults,
    OpTournament,
    Registration,
    Seated,
    ServerMessage,
    TournamentEvent,
    Unseated,
)
from protocol.tournament_events import RebuyOffered as WireRebuyOffered
from server import announcements
from server.bus import Bus, BusError, NoSuchAddress
from server.clock import Clock, milliseconds
from server.messages import (
    LOBBY,
    OPERATORS,
    TABLE_HOSTS,
    Caller,
    Deal,
    DropTables,
    HandDone,
    HelloAnswered,
    LobbyAsk,
    OpenTable,
    PlayerAway,
    PlayerHello,
    Request,
    Resumed,
    TableUpdate,
    ToPlayer,
    ToSession,
    ToTable,
    operators_channel,
    player_channel,
    session_channel,
    table_inbox,
    tournament_channel,
    tournament_inbox,
)
from server.metrics import Metrics
from server.recovery import load_director
from server.store.connection import Store
from server.store.errors import FencedOut, JournalError, StoreError, TournamentError, UnknownPlayer
from server.store.errors import InsufficientFunds as LedgerInsufficientFunds
from server.store.fencing import Fence
from server.store.histories import HandPlayer, HandRecord
from server.store.journal import JournalEntry, StoredSnapshot
from server.store.snapshots import SeatSnapshot
from server.store.snapshots import TableSnapshot as StoredTableSnapshot
from server.store.tournaments import Result, TournamentStatus, status_path
from server.table_actor import TableActor

log = logging.getLogger("feltd.coordinator")

INBOX_CAPACITY = 100_000
REPLIES_KEPT = 10_000  # money requests remembered for idempotent answers
POST_RETRY_SECONDS = 1.0
SNAPSHOT_EVERY = 500  # journal entries between two snapshots of the director
RESUME_LIMIT_SECONDS = 20 * 60.0  # a tournament down longer is settled by CANCEL-1, not resumed
HOST_CHECK_SECONDS = 1.0  # wall seconds between two looks for table hosts gone (sharded tables)
ORPHANS_WAIT_SECONDS = 10.0  # how long a takeover waits for the older openings' addresses to go
_EPOCH_BITS = 32  # an epoch is the lease token, then the opening's number under that token

# announcements after which followers get a new ``tournament_state``
_STATE_CHANGES = (
    d.LevelStarted,
    d.BreakStarted,
    d.BreakEnded,
    d.HandForHandStarted,
    d.HandForHandEnded,
    d.BubbleBurst,
    d.FinalTable,
    d.TournamentPaused,
    d.TournamentResumed,
    d.PurchasesClosed,
    d.DealTalks,  # every player asking stops the clock (DEAL-2), walking away starts it again
    d.DealDone,
)
_MOVED = {
    MoveReason.BALANCE: kinds.SeatReason.BALANCE,
    MoveReason.BREAK: kinds.SeatReason.TABLE_BROKEN,
    MoveReason.REDRAW: kinds.SeatReason.REDRAW,
}


@dataclass(frozen=True, slots=True)
class Stop:
    """Stop the coordinator (the server is shutting down)."""


def error_code(error: Exception) -> ErrorCode:
    """The wire error for a refusal of the tournament core or the ledger."""
    if isinstance(error, AlreadyRegistered):
        return ErrorCode.ALREADY_REGISTERED
    if isinstance(error, NotRegistered | d.NotPlaying):
        return ErrorCode.NOT_REGISTERED
    if isinstance(error, InsufficientFunds | LedgerInsufficientFunds):
        return ErrorCode.INSUFFICIENT_FUNDS
    if isinstance(error, TournamentFull | d.WrongStatus):
        return ErrorCode.REGISTRATION_CLOSED
    if isinstance(error, RegistrationError):
        name = type(error).__name__
        if name in ("LateRegistrationClosed", "CutoffPassed", "WrongPhase"):
            return ErrorCode.REGISTRATION_CLOSED
        return ErrorCode.NOT_AVAILABLE
    if isinstance(error, d.NoRebuyOffered):
        return ErrorCode.NOT_AVAILABLE
    if isinstance(error, UnknownPlayer):
        return ErrorCode.NOT_FOUND
    return ErrorCode.NOT_AVAILABLE


class Coordinator:
    """The coordinator of one tournament (see the module docstring)."""

    def __init__(
        self,
        config: TournamentConfig,
        *,
        name: str,
        number: int,
        start_at: float,
        store: Store,
        bus: Bus,
        clock: Clock,
        metrics: Metrics | None = None,
        rng: random.Random | None = None,
        table_rng: Callable[[int], random.Random | None] | None = None,
        hand_gap: float | None = None,
        journal: bool = False,
        toml: str = "",
        snapshot_every: int = SNAPSHOT_EVERY,
        fence: Fence | None = None,
        on_fenced: Callable[[FencedOut], None] | None = None,
        shard_tables: bool = False,
    ) -> None:
        """``number`` is the tournament's number in the store: its tables are numbered from
        ``number * 1_000_000``; ``rng`` decides seats and draws (the OS CSPRNG by default),
        ``table_rng(table_id)`` gives a table its shuffler (``None``: the OS CSPRNG); ``fence``
        goes with every write, ``on_fenced`` hears of the first refused one; ``shard_tables``:
        the tables are played by the table hosts of the cluster (module docstring)."""
        self.config = config
        self.toml = toml  # the definition as written (operators see it)
        self.snapshot_every = snapshot_every
        self.seen: set[str] = set()  # players connected since they registered or the server started
        self.name = name
        self.number = number
        self.store = store
        self.bus = bus
        self.clock = clock
        self.metrics = metrics
        self.table_rng = table_rng
        self.hand_gap = hand_gap
        # The director's generator is a Mersenne Twister seeded from the OS CSPRNG: its state is
        # saved with the director and replayed after a crash; it draws seats and buttons, never a
        # deck (each table shuffles from its own generator, the OS CSPRNG in production).
        self.director = d.Director(
            config,
            start_at=start_at,
            rng=rng if rng is not None else random.Random(secrets.randbits(256)),
            start_wall_seconds=int(start_at),
            first_table_id=number * 1_000_000 + 1,
        )
        self.inbox = bus.open_inbox(tournament_inbox(config.id), INBOX_CAPACITY)
        self.actors: dict[int, TableActor] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.replies: OrderedDict[tuple[str, str], ServerMessage] = OrderedDict()
        self.sent_tables: dict[int, EngineTableSnapshot] = {}
        self.stars = StarsTournament(max(1, number), BuyIn(config.buy_in, config.fee or 0, "USD"))
        self.finished = asyncio.Event()
        self.stopping = False
        self._rebuying: set[str] = set()  # busted players offered a rebuy: seated again if they buy
        # Every director input, in order, also in memory when asked for (tests replay them).
        self.journal: list[inputs.AnyInput] | None = [] if journal else None
        self.seq = 0  # the last journal entry written
        self.snapshot_seq = -1  # the entry the newest saved snapshot includes (-1: none yet)
        self.resumed_from: int | None = None  # the snapshot a restart resumed from
        self.fence = fence
        self.on_fenced = on_fenced
        self.fenced_out: FencedOut | None = None
        self.shard_tables = shard_tables
        self.hosts: dict[int, str] = {}  # table -> the host playing it (sharded tables)
        self.epochs: dict[int, int] = {}  # table -> its opening's epoch (sharded tables)
        self._load: dict[str, int] = {}  # host -> tables of this tournament it plays
        self._lost_hosts: dict[str, int] = {}  # host gone -> the first epoch after it was
        self.tables_lost = 0
        self._epoch_base = (0 if fence is None else fence.token) << _EPOCH_BITS
        self._openings = 0
        self._live_hosts: list[str] = []
        self._live_hosts_at = -1e18  # loop time the list was read
        self._next_host_check = 0.0

    # -- saved state ------------------------------------------------------------------------------

    async def save_first_snapshot(self) -> None:
        """A new tournament's snapshot 0 (its generator's state included), durable before any
        input is written: every journal has a snapshot to replay from."""
        data = msgspec.msgpack.encode(self.director.snapshot())
        await self.store.journal.save_snapshot(
            StoredSnapshot(self.config.id, 0, d.DIRECTOR_SNAPSHOT_VERSION, data), fence=self.fence
        )
        self.snapshot_seq = 0

    async def restore(self) -> float | None:
        """Rebuild the director from the journal: the newest snapshot that reads (a damaged one
        is skipped with a warning), then every input after it. The money those inputs moved is
        posted again (the same keys: nothing moves twice) and a purchase whose money moved but
        which was never recorded is refunded. Returns the clock time of the last input (when
        the tournament was last known to be alive), or ``None`` when there is nothing to restore."""
        restored = await load_director(self.store.journal, self.config.id)
        if restored is None:
            return None
        self.director = restored.director
        self.seq = restored.seq
        self.snapshot_seq = self.resumed_from = restored.base_seq
        if self.journal is not None:
            self.journal.extend(restored.replayed)
        if restored.transfers:
            await self._post(restored.transfers)
        recorded = {t.idempotency_key for t in restored.transfers}
        for intent in inputs.unmatched_intents(restored.replayed):
            await self._refund_intent(intent, recorded)
        return restored.last_at

    async def _refund_intent(self, intent: inputs.Intent, recorded: set[str]) -> None:
        """A purchase cut short by a crash: its money may have moved. Post it again (a replay if
        it had: nothing moves; refused for want of funds if it had not: nothing to give back),
        then its exact reversal: either way the player ends where they began.

        Money a recorded purchase moved under the same keys is never given back: an intent left
        open by a journal written before refused posts closed theirs (the next purchase took the
        same keys) would otherwise refund a seat the player holds."""
        keys = tuple(t.idempotency_key for t in intent.transfers)
        if recorded.intersection(keys):
            log.warning(
                "%s: %s's open %s is a recorded purchase's", self.config.id, intent.player, intent.purchase
            )
            return
        try:
            await self._post(list(intent.transfers))
        except LedgerInsufficientFunds:
            # the money never moved: close the intent and spend its keys, nothing to give back
            await self._give(inputs.PurchaseUndone(now=self.director.now, player=intent.player, keys=keys))
            return
        reversal = [
            Transfer(t.target, t.source, t.amount, f"{t.idempotency_key}:undone", Reason.REFUND)
            for t in intent.transfers
        ]
        try:
            await self._post(reversal)
        except LedgerInsufficientFunds as error:
            # only a journal that already lost track of this money gets here: say so, and start
            # the tournament anyway (a refund the pool cannot cover is the operator's to settle)
            log.error(
                "%s: %s's cut-short %s cannot be given back: %s",
                self.config.id,
                intent.player,
                intent.purchase,
                error,
            )
            self._op_event(
                OpKind.ERROR,
                f"{intent.player}'s {intent.purchase} cut short by a restart was not given back: {error}",
                self.director.now,
                player=intent.player,
            )
            return
        await self._give(inputs.PurchaseUndone(now=self.director.now, player=intent.player, keys=keys))
        log.warning(
            "%s: %s's %s was cut short by a restart: refunded", self.config.id, intent.player, intent.purchase
        )

    async def resume(self, last_alive: float, limit: float = RESUME_LIMIT_SECONDS) -> None:
        """After ``restore``: open every table again and carry on: the hands that were under way
        are dealt again from their start (CRASH-1), the time the server was down does not count
        as play; a tournament down longer than ``limit`` seconds is settled by CANCEL-1."""
        director = self.director
        if self.shard_tables and director.tables:
            await self._drop_older_openings(sorted(director.tables))
        now = self.clock.now()
        for table_id in sorted(director.tables):
            self._open_table(table_id, seq_from=milliseconds(now))
            self._update_table(table_id, (), None, False)
        # Before the tables, which have not run yet, publish anything: a gateway hears of this
        # first and has its sessions there wait for a snapshot instead of meeting a jump in seq.
        # They also wait on requests a worker that died never answered.
        self.bus.publish(tournament_channel(self.config.id), Resumed(self.config.id))
        if director.status is d.Status.RUNNING:
            if now - last_alive > limit:
                log.warning("%s: down for %.0f s: cancelled (CANCEL-1)", self.config.id, now - last_alive)
                # settled as of when it stopped (its last journal entry): the time it was down
                # is not play, so it neither reaches the 30-minute line nor ends a rebuy period
                value: inputs.AnyInput = inputs.Cancel(now=last_alive)
            else:
                value = inputs.Recover(now=now, down_since=last_alive)
            await self._dispatch(await self._give(value), now)
        status = {
            d.Status.REGISTERING: TournamentStatus.REGISTERING,
            d.Status.RUNNING: TournamentStatus.RUNNING,
            d.Status.FINISHED: TournamentStatus.FINISHED,
            d.Status.CANCELLED: TournamentStatus.CANCELLED,
        }.get(self.director.status)
        recorded = (await self.store.tournaments.get(self.config.id)).status
        if status is not None and status is not recorded:
            await self._status(status)

    def publish_lobby(self) -> None:
        """Tell the lobby about this tournament as it is now."""
        self.bus.publish(LOBBY, LobbyUpdate(tournament=announcements.summary(self.director, self.name)))

    # -- the loop ---------------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            while not self.stopping and self.director.status in (d.Status.REGISTERING, d.Status.RUNNING):
                wake = self.director.next_wakeup()
                message = self.inbox.get_nowait()
                if message is None:
                    delay = None if wake is None else wake - self.clock.now()
                    # sharded tables: wake up to look for hosts gone, whatever else is due
                    limit = HOST_CHECK_SECONDS if self.hosts else None
                    if delay is None and limit is None:
                        message = await self.inbox.get()
                    elif delay is None or delay > 0:
                        wall = self.clock.to_wall(delay) if delay is not None else HOST_CHECK_SECONDS
                        message = await self.inbox.get(within=wall if limit is None else min(wall, limit))
                now = self.clock.now()
                if message is not None:
                    await self._handle(message, now)
                if self.hosts:
                    await self._check_hosts()
                if wake is not None and self.clock.now() >= wake:
                    at = self.clock.now()
                    await self._dispatch(await self._give(inputs.Tick(now=at)), at)
                if self.seq - self.snapshot_seq >= self.snapshot_every:
                    self.save_snapshot()
        except FencedOut as error:
            self._fenced(error)
        finally:
            self.finished.set()
            self.bus.close_inbox(self.inbox.address)
            for actor in self.actors.values():
                actor.closed = True

    async def _handle(self, message: object, now: float) -> None:
        if isinstance(message, HandDone):
            await self._hand_done(message, now)
        elif isinstance(message, Request):
            await self._request(message, now)
        elif isinstance(message, PlayerAway):
            if self.director.table_of(message.player) is not None:
                value = inputs.SitOut(now=now, player=message.player, absent=message.away)
                await self._dispatch(await self._give(value), now)
        elif isinstance(message, PlayerHello):
            self._hello(message.caller)
        elif isinstance(message, Stop):
            self.stopping = True
        elif isinstance(message, LobbyAsk):
            self.publish_lobby()

    async def _give(self, value: inputs.AnyInput, hands: tuple[HandRecord, ...] = ()) -> list[d.Command]:
        """Give the director an input and write it to the journal before anything it answers is
        carried out: a restart replays the journal and gets the same director (CRASH-1). An input
        the director refuses raises here, changed nothing and is not written."""
        commands = inputs.apply(self.director, value)
        await self._write(value, hands)
        return commands

    async def _write(
        self,
        value: inputs.AnyInput,
        hands: tuple[HandRecord, ...] = (),
        tables: tuple[StoredTableSnapshot, ...] = (),
    ) -> None:
        """Append ``value`` to the journal (with the hands it ends and the tables' states after
        it), retrying until it is durable: nothing may happen that a restart would not know about."""
        self.seq += 1
        if self.journal is not None:
            self.journal.append(value)
        entry = JournalEntry(self.config.id, self.seq, value.now, inputs.encode(value), hands, tables)
        while True:
            try:
                await self.store.journal_writer.append(entry, fence=self.fence)
                return
            except JournalError:
                if await self._written(entry):  # an earlier try committed after all
                    return
                raise
            except (TimeoutError, StoreError, OSError) as error:
                log.error("%s: journal entry %d not written, retrying: %s", self.config.id, entry.seq, error)
                await asyncio.sleep(POST_RETRY_SECONDS)

    async def _written(self, entry: JournalEntry) -> bool:
        for seq, _, data in await self.store.journal.entries_after(self.config.id, entry.seq - 1):
            if seq == entry.seq:
                return data == entry.data
        return False

    def save_snapshot(self) -> None:
        """Save the director as of the last journal entry (in the background), then prune what the
        journal no longer needs. Called between inputs, once everything they answered is done."""
        snapshot = StoredSnapshot(
            self.config.id,
            self.seq,
            d.DIRECTOR_SNAPSHOT_VERSION,
            msgspec.msgpack.encode(self.director.snapshot()),
        )
        self.snapshot_seq = self.seq

        async def save() -> None:
            await self.store.journal.save_snapshot(snapshot, fence=self.fence)
            await self.store.journal.prune(self.config.id, fence=self.fence)

        self._background(save(), f"director snapshot {snapshot.seq}")

    # -- requests ---------------------------------------------------------------------------------

    def _reply(self, caller: Caller, message: ServerMessage) -> None:
        self.bus.publish(session_channel(caller.session_id), ToSession(message))

    def _refuse(
        self, caller: Caller, error: Exception, request_id: str | None, code: ErrorCode | None = None
    ) -> Error:
        code = error_code(error) if code is None else code
        refusal = Error(code=code, message=str(error), request_id=request_id, fatal=False)
        self._reply(caller, refusal)
        return refusal

    async def _request(self, request: Request, now: float) -> None:
        message = request.message
        caller = request.caller
        if isinstance(message, TournamentSubscribe):
            self._reply(caller, announcements.state(self.director))
            if message.request_id is not None:
                self._reply(caller, Ack(request_id=message.request_id))
            return
        if isinstance(message, OperatorRequest):
            await self._operate(request, message, now)
            return
        player = caller.player
        if player is None:
            request_id = getattr(message, "request_id", None)
            code = ErrorCode.FORBIDDEN if caller.operator else ErrorCode.NOT_AUTHENTICATED
            self._reply(
                caller,
                Error(code=code, message="only players may do that", request_id=request_id, fatal=False),
            )
            return
        self.seen.add(player)
        if isinstance(message, SitOut | SitIn):
            await self._sit(caller, player, isinstance(message, SitOut), message.request_id, request, now)
            return
        if isinstance(message, DealRequest):
            await self._deal(caller, player, message, now)
            return
        if not isinstance(message, Register | Unregister | Rebuy | DeclineRebuy | AddOn):
            return
        key = (player, message.request_id)
        if key in self.replies:  # the same request again: the first answer, no money moved twice
            self._reply(caller, self.replies[key])
            return
        try:
            if isinstance(message, Register):
                await self._buy(player, now, self.director.preview_register, "register")
            elif isinstance(message, Rebuy):
                await self._buy(player, now, self.director.preview_rebuy, "rebuy")
            elif isinstance(message, AddOn):
                await self._buy(player, now, self.director.preview_add_on, "add_on")
            elif isinstance(message, Unregister):
                await self._dispatch(await self._give(inputs.Unregister(now=now, player=player)), now)
            else:
                await self._dispatch(await self._give(inputs.DeclineRebuy(now=now, player=player)), now)
        except (RegistrationError, d.DirectorError, LedgerInsufficientFunds) as error:
            self._remember(key, self._refuse(caller, error, message.request_id))
            return
        ack = Ack(request_id=message.request_id)
        self._remember(key, ack)
        self._reply(caller, ack)

    async def _deal(self, caller: Caller, player: str, message: DealRequest, now: float) -> None:
        """DEAL-1..4: a player at the final table asks, proposes, accepts or walks away."""
        value: inputs.AnyInput
        if isinstance(message, DealAsk):
            value = inputs.DealAsk(now=now, player=player)
        elif isinstance(message, DealPropose):
            if self.director.table_of(player) is None:
                raise_refusal = d.NotPlaying(f"{player} is not at the final table")
                self._refuse(caller, raise_refusal, message.request_id)
                return
            method = DealMethod.ICM if message.method is kinds.DealMethod.ICM else DealMethod.CHIP_CHOP
            value = inputs.DealPropose(now=now, method=method, left_to_play=message.left_to_play_cents)
        elif isinstance(message, DealAccept):
            value = inputs.DealAccept(now=now, player=player)
        else:
            value = inputs.DealAbandon(now=now, player=player)
        try:
            commands = await self._give(value)
        except (d.DirectorError, DealError) as error:
            self._refuse(caller, error, message.request_id)
            return
        await self._dispatch(commands, now)
        self._reply(caller, Ack(request_id=message.request_id))

    # -- operators ---------------------------------------------------------------------------------

    async def _operate(self, request: Request, message: OperatorRequest, now: float) -> None:
        """An operator's command for this tournament: carried out through the director's inputs
        (journaled like any other), answered, and noted in the operators' event stream."""
        caller = request.caller
        operator = caller.operator
        if isinstance(message, OpSubscribe | OpUnsubscribe):  # the gateway answers these
            return
        if operator is None:
            self._reply(
                caller,
                Error(
                    code=ErrorCode.FORBIDDEN,
                    message="only an operator's connection may do that",
                    request_id=message.request_id,
                    fatal=False,
                ),
            )
            return
        # NUL is in no player id (the store refuses it), so no player's request shares this key
        key = (f"\0operator:{operator}", message.request_id)
        reading = isinstance(message, OpTournamentShow | OpTournamentResults)  # answered afresh
        if key in self.replies and not reading:
            self._reply(caller, self.replies[key])
            return
        director = self.director
        reply: ServerMessage = Ack(request_id=message.request_id)
        did = type(message).__name__
        try:
            if isinstance(message, OpTournamentShow):
                reply = self.op_tournament(message.request_id)
                did = ""
            elif isinstance(message, OpTournamentResults):
                reply = self.op_results(message.request_id)
                did = ""
            elif isinstance(message, OpTournamentStart):
                await self._dispatch(await self._give(inputs.StartNow(now=now)), now)
                did = "started the tournament now"
            elif isinstance(message, OpTournamentPause):
                await self._dispatch(await self._give(inputs.Pause(now=now)), now)
                did = "paused the tournament"
            elif isinstance(message, OpTournamentResume):
                await self._dispatch(await self._give(inputs.Resume(now=now)), now)
                did = "resumed the tournament"
            elif isinstance(message, OpTournamentCancel):
                method = (
                    InMoneyMethod.ICM if message.in_money is kinds.InMoneyMethod.ICM else InMoneyMethod.CHIPS
                )
                await self._dispatch(await self._give(inputs.Cancel(now=now, in_money=method)), now)
                did = f"cancelled the tournament (in the money: {method.value})"
            elif isinstance(message, OpTournamentEdit):
                if message.toml is not None:
                    raise d.DirectorError("a new definition is taken by the server, not the tournament")
                if message.start_ms is None:
                    raise d.DirectorError("nothing to change: give a new definition or start time")
                start = message.start_ms / 1000
                await self._dispatch(await self._give(inputs.Reschedule(now=now, start_at=start)), now)
                await self._reschedule_record(start)
                reply = self.op_tournament(message.request_id)
                did = f"moved the start to {dt.datetime.fromtimestamp(start, dt.UTC).isoformat()}"
            elif isinstance(message, OpPlayerRegister):
                await self.store.players.get_by_id(message.player)  # UnknownPlayer: not_found
                await self._buy(message.player, now, director.preview_register, "register")
                did = f"registered {message.player}"
            elif isinstance(message, OpPlayerUnregister):
                await self._dispatch(await self._give(inputs.Unregister(now=now, player=message.player)), now)
                did = f"unregistered {message.player} (refunded)"
            elif isinstance(message, OpRemoveNoShows):
                if director.status is not d.Status.REGISTERING:
                    raise d.WrongStatus(
                        "no-shows are removed before the start; after it absent players are blinded "
                        "off (CLK-2): disqualify one to remove them"
                    )
                gone = [p for p in director.registration.registered if p not in self.seen]
                for player in gone:
                    await self._dispatch(await self._give(inputs.Unregister(now=now, player=player)), now)
                did = f"removed {len(gone)} no-shows ({', '.join(gone) or 'none'})"
            elif isinstance(message, OpPenalize):
                value: inputs.AnyInput = inputs.Penalize(now=now, player=message.player, hands=message.hands)
                await self._dispatch(await self._give(value), now)
                did = f"penalized {message.player}: {message.hands} hands out"
            elif isinstance(message, OpDisqualify):
                await self._dispatch(await self._give(inputs.Disqualify(now=now, player=message.player)), now)
                did = f"disqualified {message.player}"
            elif isinstance(message, OpSitOut):
                if director.table_of(message.player) is None:
                    raise d.NotPlaying(f"{message.player} has no seat in {self.config.id}")
                value = inputs.SitOut(now=now, player=message.player, absent=message.away)
                await self._dispatch(await self._give(value), now)
                table_id = director.table_of(message.player)
                if table_id is not None:
                    as_player = Caller(caller.session_id, message.player)
                    sit: SitOut | SitIn = (
                        SitOut(tournament_id=self.config.id)
                        if message.away
                        else SitIn(tournament_id=self.config.id)
                    )
                    self._to_table(table_id, Request(as_player, sit, request.received_at))
                did = f"sat {message.player} {'out' if message.away else 'in'}"
            elif isinstance(message, OpMessage):
                self._notice(message, now)
                where = (
                    f"table {message.table_id}"
                    if message.table_id is not None
                    else message.player or "every player"
                )
                did = f"sent a message to {where}"
            else:
                raise d.DirectorError(f"{type(message).__name__} is not a tournament's to answer")
        except (
            RegistrationError,
            d.DirectorError,
            DealError,
            LedgerInsufficientFunds,
            UnknownPlayer,
        ) as error:
            # a command the tournament's status does not allow (pause before the start...) is
            # not_available; registration_closed is for registering only
            code = (
                ErrorCode.NOT_AVAILABLE
                if isinstance(error, d.WrongStatus) and not isinstance(message, OpPlayerRegister)
                else None
            )
            self._remember(key, self._refuse(caller, error, message.request_id, code))
            return
        if not reading:
            self._remember(key, reply)
        self._reply(caller, reply)
        if did:
            self._op_event(
                kinds.OperatorEventKind.COMMAND, did, now, operator=operator, command=_wire_type(message)
            )

    async def _reschedule_record(self, start: float) -> None:
        try:
            await self.store.tournaments.reschedule(
                self.config.id, dt.datetime.fromtimestamp(start, dt.UTC), fence=self.fence
            )
        except StoreError as error:
            log.warning("%s: new start not recorded: %s", self.config.id, error)
        self.publish_lobby()

    def _notice(self, message: OpMessage, now: float) -> None:
        notice = Notice(
            tournament_id=self.config.id,
            table_id=message.table_id,
            text=message.text,
            at_ms=milliseconds(now),
        )
        if message.player is not None:
            self.bus.publish(player_channel(message.player), ToPlayer(notice))
        elif message.table_id is not None:
            if not self.director.has_table(message.table_id):
                raise d.DirectorError(f"no table {message.table_id} in {self.config.id}")
            for seated in self.director.table(message.table_id).players:
                self.bus.publish(player_channel(seated.player), ToPlayer(notice))
        else:  # its players follow the tournament's channel, as do its observers
            self.bus.publish(tournament_channel(self.config.id), ToSession(notice))

    def op_tournament(self, request_id: str) -> OpTournament:
        director = self.director
        return OpTournament(
            request_id=request_id,
            tournament=announcements.summary(director, self.name),
            state=announcements.state(director),
            toml=self.toml,
            players=announcements.players(director),
        )

    def op_results(self, request_id: str) -> OpResults:
        director = self.director
        return OpResults(
            request_id=request_id,
            tournament_id=self.config.id,
            status=announcements.STATUSES[director.status],
            prize_pool_cents=max(director.prize_pool, director.registration.pool_contributions),
            results=announcements.results(director),
        )

    def _op_event(self, kind: kinds.OperatorEventKind, text: str, now: float, **fields: object) -> None:
        event = OpEvent(
            tournament_id=self.config.id,
            kind=kind,
            at_ms=milliseconds(now),
            text=text,
            **fields,  # type: ignore[arg-type]
        )
        self.bus.publish(OPERATORS, ToSession(event))
        self.bus.publish(operators_channel(self.config.id), ToSession(event))

    def _status_event(self, status: kinds.TournamentStatus, now: float) -> None:
        self._op_event(OpKind.STATUS, f"{self.config.id} is {status.value}", now, status=status)

    def _paid_events(self, transfers: Iterable[Transfer], now: float) -> None:
        for transfer in transfers:
            if transfer.reason in _PAYOUTS and transfer.target.startswith("player:"):
                player = Account.parse(transfer.target).player_id
                self._op_event(
                    OpKind.PAID,
                    f"{player} was paid {transfer.amount} cents ({transfer.reason.value})",
                    now,
                    player=player,
                    cents=transfer.amount,
                    reason=transfer.reason.value,
                )

    def _remember(self, key: tuple[str, str], reply: ServerMessage) -> None:
        self.replies[key] = reply
        while len(self.replies) > REPLIES_KEPT:
            self.replies.popitem(last=False)

    async def _buy(
        self,
        player: str,
        now: float,
        preview: Callable[[str, float, int], tuple[Transfer, ...]],
        buy: str,
    ) -> None:
        """Post the purchase's money first (refused: nothing happened), then record it (the
        director's ``buy`` input). The journal notes the intent before the money moves, so a
        restart can give back money whose purchase was never recorded."""
        balance = await self.store.ledger.balance(player_account(player))
        transfers = preview(player, now, balance)
        await self._write(inputs.Intent(now=now, player=player, purchase=buy, transfers=tuple(transfers)))
        # InsufficientFunds if spent meanwhile; a failure that leaves it unknown whether the money
        # moved (a timeout, a dropped connection) is retried under the same keys until it is known
        try:
            await self._post(list(transfers))
        except LedgerInsufficientFunds:
            # refused: nothing moved. Close the intent and spend its keys, or a restart would find
            # it open when the player's next purchase has taken the same keys, and refund that one
            keys = tuple(t.idempotency_key for t in transfers)
            await self._give(inputs.PurchaseUndone(now=now, player=player, keys=keys))
            raise
        purchase: inputs.AnyInput
        if buy == "register":
            purchase = inputs.Register(now=now, player=player, balance=balance)
        elif buy == "rebuy":
            purchase = inputs.Rebuy(now=now, player=player, balance=balance)
        else:
            purchase = inputs.AddOn(now=now, player=player, balance=balance)
        commands = await self._give(purchase)
        # the director's PostTransfers names these transfers: _dispatch sends the new balance
        await self._dispatch(commands, now, posted={t.idempotency_key for t in transfers})

    async def _sit(
        self, caller: Caller, player: str, away: bool, request_id: str | None, request: Request, now: float
    ) -> None:
        table_id = self.director.table_of(player)
        if table_id is None:
            self._reply(
                caller,
                Error(
                    code=ErrorCode.NOT_SEATED,
                    message="you have no seat in this tournament",
                    request_id=request_id,
                    fatal=False,
                ),
            )
            return
        await self._dispatch(await self._give(inputs.SitOut(now=now, player=player, absent=away)), now)
        self._to_table(table_id, request)  # the table marks the seat and acknowledges

    def _hello(self, caller: Caller) -> None:
        if caller.player is not None:
            self.seen.add(caller.player)
        try:
            self._tell_where(caller)
        finally:
            self.bus.publish(session_channel(caller.session_id), HelloAnswered(self.config.id))

    def _tell_where(self, caller: Caller) -> None:
        player = caller.player
        if player is None:
            return
        registration = self.director.registration
        status: kinds.RegistrationStatus | None = None
        position = None
        if player in registration.waiting:
            status, position = kinds.RegistrationStatus.WAITING, registration.waiting.index(player) + 1
        elif registration.is_registered(player):
            if registration.is_eliminated(player):
                status = kinds.RegistrationStatus.ELIMINATED
            elif self.director.status is d.Status.RUNNING:
                status = kinds.RegistrationStatus.PLAYING
            else:
                status = kinds.RegistrationStatus.REGISTERED
        if status is None:
            return
        self._reply(
            caller, Registration(tournament_id=self.config.id, status=status, waiting_position=position)
        )
        self._reply(caller, announcements.state(self.director))
        table_id = self.director.table_of(player)
        if table_id is not None:
            seat = self.director.table(table_id).seat_of(player)
            if seat is not None:
                self._reply(
                    caller,
                    Seated(
                        tournament_id=self.config.id,
                        table_id=table_id,
                        seat=seat,
                        reason=kinds.SeatReason.RECONNECT,
                    ),
                )

    # -- hands ------------------------------------------------------------------------------------

    async def _hand_done(self, done: HandDone, now: float) -> None:
        epoch = self.epochs.get(done.table_id)
        if epoch is not None and done.epoch != epoch:
            # an older opening of the table, lost or stopped since: its hand is dealt again
            log.warning(
                "%s: hand %s of table %s's opening %s ignored (the table's is %s)",
                self.config.id,
                done.hand_number,
                done.table_id,
                done.epoch,
                epoch,
            )
            return
        value = inputs.HandEnded(
            now=now,
            table_id=done.table_id,
            stacks=dict(done.finishing_stacks),
            banks_spent=dict(done.banks_spent),
        )
        try:
            commands = inputs.apply(self.director, value)
        except d.DirectorError as error:
            log.error(
                "%s: hand %s at table %s refused: %s", self.config.id, done.hand_number, done.table_id, error
            )
            self._op_event(
                OpKind.ERROR, f"hand {done.hand_number} at table {done.table_id} refused: {error}", now
            )
            return
        # the hand's history and the table's state go in with its result: stored exactly when the
        # tournament knows it
        await self._write(value, (self._history(done, commands),), self._table_state(done.table_id, now))
        await self._dispatch(commands, now, ended=done.table_id)

    def _history(self, done: HandDone, commands: list[d.Command]) -> HandRecord:
        dealt = {seat.player for seat in done.setup.seats}
        finishes = [
            StarsFinish(c.player, c.place, c.prize)
            for c in commands
            if isinstance(c, d.PlayerEliminated) and c.player in dealt
        ]
        for command in commands:
            if isinstance(command, d.TournamentEnded):
                paid = dict(command.prizes)
                placed = {finish.player for finish in finishes}
                finishes += [
                    StarsFinish(player, finish.place, paid.get(player, 0))
                    for finish in command.finishes
                    for player in finish.players
                    if player in dealt and player not in placed
                ]
        started = dt.datetime.fromtimestamp(done.started_at, dt.UTC)
        level = max(1, done.level)
        try:
            phh = dumps_phh(
                export_phh(done.setup, done.events, table=done.table_id, level=level, started_at=started)
            )
        except PhhError as error:
            phh = f"# not expressible as PHH: {error}\n"
        context = StarsHandContext(
            done.hand_number, done.table_id % 1_000_000, level, started, tuple(finishes)
        )
        text = format_pokerstars(done.setup, done.events, self.stars, context)
        stacks = dict(done.finishing_stacks)
        return HandRecord(
            hand_id=done.setup.hand_id,
            tournament_id=self.config.id,
            table_id=done.table_id,
            hand_number=done.hand_number,
            finished_at=dt.datetime.fromtimestamp(done.ended_at, dt.UTC),
            players=tuple(
                HandPlayer(seat.seat, seat.player, seat.stack, stacks.get(seat.seat, 0))
                for seat in done.setup.seats
            ),
            phh=phh,
            pokerstars=text,
        )

    # -- carrying out the director's commands ------------------------------------------------------

    async def _dispatch(
        self,
        commands: Iterable[d.Command],
        now: float,
        *,
        posted: set[str] | None = None,
        ended: int | None = None,
    ) -> None:
        director = self.director
        changes: dict[int, list[tuple[int, kinds.SeatChange]]] = {}
        holds: dict[int, tuple[d.HoldReason, float | None]] = {}
        closed: set[int] = set()
        deals: list[d.DealHand] = []
        to_players: list[tuple[str, ServerMessage]] = []
        events: list[ServerMessage] = []
        accounts: set[str] = set()
        paid: dict[str, int] = {}  # cents to each player in these commands
        state_changed = lobby_changed = False
        touched: set[int] = set() if ended is None else {ended}
        for command in commands:
            if isinstance(command, d.PostTransfers):
                fresh = [t for t in command.transfers if posted is None or t.idempotency_key not in posted]
                if fresh:
                    await self._post(fresh)
                accounts.update(t.source for t in command.transfers)
                accounts.update(t.target for t in command.transfers)
                lobby_changed = True
                self._paid_events(command.transfers, now)
                for transfer in command.transfers:
                    if transfer.reason in _PAYOUTS and transfer.target.startswith("player:"):
                        player = Account.parse(transfer.target).player_id
                        paid[player] = paid.get(player, 0) + transfer.amount
            elif isinstance(command, d.DealHand):
                deals.append(command)
            elif isinstance(command, d.TableOpened):
                self._open_table(command.table_id)
                touched.add(command.table_id)
                for seated in command.seats:
                    changes.setdefault(command.table_id, []).append((seated.seat, kinds.SeatChange.JOINED))
                    to_players.append(
                        (seated.player, self._seated(command.table_id, seated.seat, kinds.SeatReason.START))
                    )
                    to_players.append((seated.player, self._registration(kinds.RegistrationStatus.PLAYING)))
            elif isinstance(command, d.PlayerSeated):
                touched.add(command.table_id)
                changes.setdefault(command.table_id, []).append((command.seat, kinds.SeatChange.JOINED))
                reason = (
                    kinds.SeatReason.REBUY
                    if command.player in self._rebuying
                    else kinds.SeatReason.LATE_REGISTRATION
                )
                to_players.append((command.player, self._seated(command.table_id, command.seat, reason)))
                to_players.append((command.player, self._registration(kinds.RegistrationStatus.PLAYING)))
            elif isinstance(command, d.PlayerMoved):
                move = command.move
                touched.update((move.from_table, move.to_table))
                changes.setdefault(move.from_table, []).append((move.from_seat, kinds.SeatChange.MOVED_OUT))
                changes.setdefault(move.to_table, []).append((move.to_seat, kinds.SeatChange.MOVED_IN))
                to_players.append(
                    (move.player, self._seated(move.to_table, move.to_seat, _MOVED[move.reason]))
                )
            elif isinstance(command, d.TableClosed):
                closed.add(command.table_id)
                touched.add(command.table_id)
            elif isinstance(command, d.TableHeld):
                holds[command.table_id] = (command.reason, command.until)
                touched.add(command.table_id)
            elif isinstance(command, d.ChipsAdded):
                touched.add(command.table_id)
                changes.setdefault(command.table_id, []).append((command.seat, kinds.SeatChange.CHIPS_ADDED))
            elif isinstance(command, d.PlayerRegistered):
                status = (
                    kinds.RegistrationStatus.WAITING
                    if command.waiting_position
                    else kinds.RegistrationStatus.REGISTERED
                )
                to_players.append((command.player, self._registration(status, command.waiting_position)))
                lobby_changed = True
                where = f" (waiting, {command.waiting_position})" if command.waiting_position else ""
                self._op_event(
                    OpKind.REGISTERED, f"{command.player} registered{where}", now, player=command.player
                )
            elif isinstance(command, d.PlayerUnregistered):
                to_players.append((command.player, self._registration(kinds.RegistrationStatus.UNREGISTERED)))
                lobby_changed = True
                self._op_event(
                    OpKind.UNREGISTERED, f"{command.player} unregistered", now, player=command.player
                )
            elif isinstance(command, d.PlayerPromoted):
                to_players.append((command.player, self._registration(kinds.RegistrationStatus.REGISTERED)))
            elif isinstance(command, d.RebuyOffered):
                self._rebuying.add(command.player)
                offer = WireRebuyOffered(until_ms=milliseconds(command.until))
                to_players.append(
                    (command.player, TournamentEvent(tournament_id=self.config.id, event=offer))
                )
            elif isinstance(command, d.PlayerEliminated):
                self._rebuying.discard(command.player)
                unseat = self._unseated(command.table_id, kinds.UnseatReason.ELIMINATED)
                to_players.append((command.player, unseat))
                to_players.append((command.player, self._registration(kinds.RegistrationStatus.ELIMINATED)))
                state_changed = lobby_changed = True
                self._op_event(
                    OpKind.ELIMINATED,
                    f"{command.player} finished {command.place}, prize {command.prize} cents",
                    now,
                    player=command.player,
                    place=command.place,
                    cents=command.prize,
                )
            elif isinstance(command, d.PlayerDisqualified):
                table_id = self._last_table_of(command.player)
                if table_id is not None:
                    unseat = self._unseated(table_id, kinds.UnseatReason.DISQUALIFIED)
                    to_players.append((command.player, unseat))
                to_players.append((command.player, self._registration(kinds.RegistrationStatus.ELIMINATED)))
                state_changed = lobby_changed = True
                # the operators' stream reports every player who leaves, however they leave
                self._op_event(
                    OpKind.ELIMINATED,
                    f"{command.player} was disqualified in place {command.place} "
                    f"({command.chips_removed} chips out of play)",
                    now,
                    player=command.player,
                    place=command.place,
                    cents=0,
                )
            elif isinstance(command, d.TournamentStarted):
                await self._status(TournamentStatus.RUNNING)
                self._status_event(kinds.TournamentStatus.RUNNING, now)
                state_changed = lobby_changed = True
            elif isinstance(command, d.TournamentEnded):
                await self._status(TournamentStatus.FINISHED)
                self._status_event(kinds.TournamentStatus.FINISHED, now)
                for table_id in self._table_ids():
                    closed.add(table_id)
                    touched.add(table_id)
                for finish in command.finishes[:1]:
                    for player in finish.players:
                        table_id = self._last_table_of(player)
                        if table_id is not None:
                            unseat = self._unseated(table_id, kinds.UnseatReason.TOURNAMENT_ENDED)
                            to_players.append((player, unseat))
                        # the tournament is over for the winners too (docs/protocol.md, section 6)
                        ended_for = self._registration(kinds.RegistrationStatus.ELIMINATED)
                        to_players.append((player, ended_for))
                state_changed = lobby_changed = True
            elif isinstance(command, d.TournamentCancelled):
                await self._status(TournamentStatus.CANCELLED)
                self._status_event(kinds.TournamentStatus.CANCELLED, now)
                # a balance alone does not say what the settlement gave: each player is told
                for player, cents in sorted(paid.items()):
                    text = (
                        f"{self.config.id} was cancelled and settled ({command.kind.value}): "
                        f"{cents} cents to you"
                    )
                    notice = Notice(
                        tournament_id=self.config.id, table_id=None, text=text, at_ms=milliseconds(now)
                    )
                    to_players.append((player, notice))
                for table_id in self._table_ids():
                    closed.add(table_id)
                    touched.add(table_id)
                state_changed = lobby_changed = True
            if isinstance(command, _STATE_CHANGES):
                state_changed = True
            body = announcements.tournament_event(command, director)
            if body is not None:
                events.append(TournamentEvent(tournament_id=self.config.id, event=body))
        # seats first (so a follower's snapshot has them), then the players, then the hands
        for table_id in sorted(touched | set(holds)):
            self._update_table(table_id, changes.get(table_id, ()), holds.get(table_id), table_id in closed)
        channel = tournament_channel(self.config.id)
        for event in events:
            self.bus.publish(channel, ToSession(event))
        for player, message in to_players:
            self.bus.publish(player_channel(player), ToPlayer(message))
        for deal in deals:
            table = director.table(deal.table_id)
            self._to_table(deal.table_id, Deal(deal, table.snapshot()))
        players = [Account.parse(a).player_id for a in accounts if a.startswith("player:")]
        if players:
            await self._balances(players)
        if state_changed:
            self.bus.publish(channel, ToSession(announcements.state(director)))
        if lobby_changed or state_changed:
            self.bus.publish(LOBBY, LobbyUpdate(tournament=announcements.summary(director, self.name)))

    def _seated(self, table_id: int, seat: int, reason: kinds.SeatReason) -> Seated:
        return Seated(tournament_id=self.config.id, table_id=table_id, seat=seat, reason=reason)

    def _unseated(self, table_id: int, reason: kinds.UnseatReason) -> Unseated:
        return Unseated(tournament_id=self.config.id, table_id=table_id, reason=reason)

    def _registration(
        self, status: kinds.RegistrationStatus, waiting_position: int | None = None
    ) -> Registration:
        return Registration(tournament_id=self.config.id, status=status, waiting_position=waiting_position)

    def _last_table_of(self, player: str) -> int | None:
        for table_id, snapshot in self.sent_tables.items():
            if any(seated.player == player for seated in snapshot.seats):
                return table_id
        return None

    def _open_table(self, table_id: int, seq_from: int = 0) -> None:
        epoch = 0
        if self.shard_tables:
            self._openings += 1
            epoch = self._epoch_base + self._openings
            self.epochs[table_id] = epoch
            host = self._place(table_id)
            if host is not None:
                self.hosts[table_id] = host
                self._load[host] = self._load.get(host, 0) + 1
                order = OpenTable(
                    table_id, self.config.id, epoch, seq_from, self.config.shot_clock, self.hand_gap
                )
                self._send(host, order)
                return
        actor = TableActor(
            table_id,
            self.config.id,
            self.bus,
            self.clock,
            seq_from=seq_from,
            shot_clock=self.config.shot_clock,
            rng=None if self.table_rng is None else self.table_rng(table_id),
            metrics=self.metrics,
            epoch=epoch,
            **({} if self.hand_gap is None else {"hand_gap": self.hand_gap}),
        )
        self.actors[table_id] = actor
        if self.metrics is not None:
            self.metrics.tables += 1
        self._background(actor.run(), f"table {table_id}", done=lambda: self._actor_ended(table_id))

    def _forget_host_of(self, table_id: int) -> None:
        host = self.hosts.pop(table_id, None)
        self.epochs.pop(table_id, None)
        if host is not None:
            self._load[host] -= 1
            if not self._load[host]:
                del self._load[host]

    def _table_ids(self) -> list[int]:
        """The tables open: played here or by a host."""
        return sorted({*self.actors, *self.hosts})

    def _to_table(self, table_id: int, message: object) -> None:
        host = self.hosts.get(table_id)
        if host is None:
            self._send(table_inbox(table_id), message)
        else:
            self._send(host, ToTable(table_id, self.epochs[table_id], message))

    def _hosts(self, *, fresh: bool = False) -> list[str]:
        """The table hosts the directory lists, read at most once a check (a directory holds
        every table's address: tens of thousands)."""
        loop_now = asyncio.get_running_loop().time()
        if fresh or loop_now - self._live_hosts_at >= HOST_CHECK_SECONDS:
            self._live_hosts = [a for a in self.bus.addresses() if a.startswith(TABLE_HOSTS)]
            self._live_hosts_at = loop_now
        return self._live_hosts

    def _place(self, table_id: int) -> str | None:
        """The live host with the fewest of this tournament's tables (ties: a hash of the table
        and the host, so that tournaments starting together spread too); ``None``: no host."""
        hosts = [host for host in self._hosts() if self.bus.has_inbox(host)]
        if not hosts:
            return None
        load = self._load
        return min(hosts, key=lambda host: (load.get(host, 0), zlib.crc32(f"{table_id}@{host}".encode())))

    async def _check_hosts(self) -> None:
        """Tables whose host left the directory (its process died) are opened again on a live
        host, their hand under way dealt again from its start (CRASH-1 at one table)."""
        loop_now = asyncio.get_running_loop().time()
        if loop_now < self._next_host_check:
            return
        self._next_host_check = loop_now + HOST_CHECK_SECONDS
        for host, epoch in list(self._lost_hosts.items()):
            if self.bus.has_inbox(host):
                # taken for dead, it was only stalled: it claimed its addresses again, the old
                # openings' with them; they stop (the addresses go, the new openings claim theirs)
                log.warning("%s: table host %s is back: its older tables stop", self.config.id, host)
                self._send(host, DropTables(self.config.id, epoch))
                del self._lost_hosts[host]
        gone = {host for host in self._load if not self.bus.has_inbox(host)}
        if not gone:
            return
        lost = sorted(table_id for table_id, host in self.hosts.items() if host in gone)
        log.warning(
            "%s: table hosts %s are gone with %d tables: opened again elsewhere",
            self.config.id,
            ", ".join(sorted(gone)),
            len(lost),
        )
        self._hosts(fresh=True)
        for host in gone:
            self._lost_hosts[host] = self._epoch_base + self._openings + 1
        for table_id in lost:
            self._forget_host_of(table_id)
            if not self.director.has_table(table_id):
                continue
            now = self.clock.now()
            self._open_table(table_id, seq_from=milliseconds(now))
            self._update_table(table_id, (), None, False)
            commands = await self._give(inputs.TableLost(now=now, table_id=table_id))
            self.tables_lost += 1
            await self._dispatch(commands, now)

    async def _drop_older_openings(self, tables: list[int]) -> None:
        """A takeover: the tables older coordinators opened may still be played somewhere (their
        host lives on). Every host is told to stop them; wait (a while) for their addresses to go,
        so that the new openings do not share them."""
        for host in self._hosts(fresh=True):
            self._send(host, DropTables(self.config.id, self._epoch_base + 1))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ORPHANS_WAIT_SECONDS
        while loop.time() < deadline:
            left = [t for t in tables if self.bus.has_inbox(table_inbox(t))]
            if not left:
                return
            await asyncio.sleep(0.05)
        log.warning(
            "%s: %d tables of an older opening are still listed: opened anyway", self.config.id, len(left)
        )

    def _actor_ended(self, table_id: int) -> None:
        self.actors.pop(table_id, None)
        if self.metrics is not None:
            self.metrics.tables -= 1

    def _update_table(
        self,
        table_id: int,
        changes: Iterable[tuple[int, kinds.SeatChange]],
        hold: tuple[d.HoldReason, float | None] | None,
        closed: bool,
    ) -> None:
        director = self.director
        if director.has_table(table_id):
            snapshot = director.table(table_id).snapshot()
        else:
            snapshot = self.sent_tables.get(table_id, Table(table_id=table_id).snapshot())
        before = self.sent_tables.get(table_id)
        explicit = dict(changes)
        if before is not None:  # who left without a move: eliminated (or disqualified)
            now_seated = {seated.seat for seated in snapshot.seats}
            for seated in before.seats:
                if seated.seat not in now_seated and seated.seat not in explicit:
                    out = seated.player in director.standings.disqualified if director.standings else False
                    explicit[seated.seat] = (
                        kinds.SeatChange.DISQUALIFIED if out else kinds.SeatChange.ELIMINATED
                    )
        self.sent_tables[table_id] = snapshot
        reason, until = hold if hold is not None else (director.hold_reason(table_id), None)
        levels = director.clock.levels
        update = TableUpdate(
            table=snapshot,
            changes=tuple(sorted(explicit.items())),
            hold=reason,
            hold_until=until,
            level=director.level_index + 1,
            closed=closed,
            stakes=levels[min(director.level_index, len(levels) - 1)],
            time_banks=tuple((seated.seat, director.time_banks(seated.player)) for seated in snapshot.seats),
        )
        self._to_table(table_id, update)
        if closed:
            self.sent_tables.pop(table_id, None)
            self._forget_host_of(table_id)

    def _send(self, address: str, message: object) -> None:
        try:
            self.bus.send(address, message)
        except BusError as error:
            log.error("%s: %s", self.config.id, error)
            if isinstance(error, NoSuchAddress) and address.startswith(TABLE_HOSTS):
                self._next_host_check = 0.0  # a host gone: look for its tables at once

    # -- money and records ------------------------------------------------------------------------

    async def _post(self, transfers: list[Transfer]) -> None:
        """Post ``transfers`` (in order), retrying until they commit: a tournament's money never
        stays planned and unposted. A refusal the ledger will always give is a bug: logged, and
        the transfers retried anyway (an operator must see it)."""
        while True:
            try:
                await self.store.ledger_writer.post(transfers, fence=self.fence)
                return
            except LedgerInsufficientFunds:
                raise
            except (TimeoutError, StoreError, OSError) as error:
                log.error(
                    "%s: posting %d transfers failed, retrying: %s", self.config.id, len(transfers), error
                )
                await asyncio.sleep(POST_RETRY_SECONDS)

    async def _balances(self, players: Iterable[str]) -> None:
        names = sorted(set(players))
        try:
            balances = await self.store.ledger.balances([player_account(name) for name in names])
        except StoreError as error:
            log.warning("%s: balances not read: %s", self.config.id, error)
            return
        for name in names:
            cents = balances.get(player_account(name), 0)
            self.bus.publish(player_channel(name), ToPlayer(Balance(cents=max(0, cents))))

    async def _status(self, status: TournamentStatus) -> None:
        # a finished tournament's places and prizes go to the results table with the status, so
        # a site's own systems read them from the database (the journal is pruned, not a report)
        results = self._results() if status is TournamentStatus.FINISHED else ()
        while True:  # retried like the journal and the ledger: a lost status would outlive us
            try:
                recorded = (await self.store.tournaments.get(self.config.id)).status
                # an earlier write that failed left a step out: record it on the way
                for step in status_path(recorded, status):
                    final = results if step is status else ()
                    await self.store.tournaments.set_status(
                        self.config.id, step, fence=self.fence, results=final
                    )
                return
            except TournamentError as error:  # deleted meanwhile, or a status it can never reach
                log.error("%s: status %s not recorded: %s", self.config.id, status, error)
                return
            except (
                TimeoutError,
                StoreError,
                OSError,
                asyncpg.PostgresError,
                asyncpg.InterfaceError,
            ) as error:
                log.error("%s: status %s not recorded, retrying: %s", self.config.id, status, error)
                await asyncio.sleep(POST_RETRY_SECONDS)

    def _results(self) -> list[Result]:
        standings = self.director.standings
        if standings is None:
            return []
        paid = self.director.prizes_paid
        return [
            Result(player, finish.place, paid.get(player, 0))
            for finish in standings.finishes
            for player in finish.players
        ]

    def _table_state(self, table_id: int, now: float) -> tuple[StoredTableSnapshot, ...]:
        """The table's state between hands, to store (none for a table broken or empty)."""
        director = self.director
        if not director.has_table(table_id):
            return ()
        table = director.table(table_id)
        positions = table.last_positions
        seats = tuple(
            SeatSnapshot(seated.seat, seated.player, seated.stack, director.time_banks(seated.player))
            for seated in table.players
        )
        if not seats:
            return ()
        stored = StoredTableSnapshot(
            self.config.id,
            table_id,
            director.hands_dealt,
            director.level_index + 1,
            None if positions is None else positions.button,
            seats,
            dt.datetime.fromtimestamp(now, dt.UTC),
            table.snapshot(),
        )
        return (stored,)

    def _background(self, work: Awaitable[object], what: str, done: Callable[[], None] | None = None) -> None:
        async def supervised() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except FencedOut as error:
                self._fenced(error)
            except Exception:
                log.exception("%s: %s failed", self.config.id, what)
            finally:
                if done is not None:
                    done()

        task = asyncio.create_task(supervised(), name=f"{self.config.id}: {what}")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _fenced(self, error: FencedOut) -> None:
        """Another worker owns the tournament now: stop, and say so once."""
        self.stopping = True
        for actor in self.actors.values():
            actor.closed = True
        if self.fenced_out is not None:
            return
        self.fenced_out = error
        log.error("%s: %s: this worker stops it", self.config.id, error)
        if self.on_fenced is not None:
            self.on_fenced(error)

    def abandon(self) -> None:
        """Stop at once, writing nothing more (the lease is lost): the tables and every write
        under way are cancelled. The hands they were playing are dealt again by the next owner
        (CRASH-1)."""
        self.stopping = True
        for actor in self.actors.values():
            actor.closed = True
        for task in list(self.tasks):
            task.cancel()

    async def close(self) -> None:
        """Stop the tables and wait for background writes."""
        if not self.finished.is_set():  # never ran: nobody else closes the inbox
            self.bus.close_inbox(self.inbox.address)
        for actor in self.actors.values():
            actor.closed = True
            with contextlib.suppress(BusError):
                self.bus.send(
                    actor.inbox.address,
                    TableUpdate(table=Table(table_id=actor.table_id).snapshot(), closed=True),
                )
        for table_id, host in list(self.hosts.items()):
            closing = TableUpdate(table=Table(table_id=table_id).snapshot(), closed=True)
            with contextlib.suppress(BusError):
                self.bus.send(host, ToTable(table_id, self.epochs[table_id], closing))
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=self.clock.to_wall(0) + 10)


OpKind = kinds.OperatorEventKind
# money leaving the tournament for a player, reported to operators as ``paid``
_PAYOUTS = frozenset({Reason.PRIZE, Reason.DEAL, Reason.SETTLEMENT, Reason.REFUND, Reason.BOUNTY})


def _wire_type(message: object) -> str:
    """The ``type`` a protocol message has on the wire."""
    return str(type(message).__struct_config__.tag)  # type: ignore[attr-defined]


__all__ = ["Coordinator", "Stop", "error_code"]
