"""The gateway: WebSocket connections, logins, and the way between clients and the bus.

Built on the ``websockets`` asyncio server (compression off, a small ``max_size``). Each
connection is a ``Session``: it speaks one subprotocol (``protocol.codec``), logs in with
``hello`` (a player's token, an operator's, or none: the rail), and from then on its frames are
decoded, checked and passed to the tournament coordinators and table actors over the bus, while
what they publish for it (its own table's events, its tournaments, its replies) is encoded and
queued for it.

Hostile or broken clients cost bounded memory and CPU, by the settings in ``Limits``: every
session's send queue holds at most ``max_queued_frames``. A client that does not read loses the
table events queued for it and gets a fresh snapshot of each table instead (a resync); one that
still cannot keep up after ``max_resyncs`` of them, or whose TCP window stays shut for
``send_timeout``, is closed (``too_slow``). Frames over ``protocol.MAX_FRAME_BYTES`` are refused,
over ``max_size`` the connection is closed by ``websockets``; a connection sending more than
``rate_per_second`` frames is answered ``rate_limited``; ``max_refused`` refused frames, or
``max_errors`` errors of any kind, in ``error_window`` close it (``too_many_errors``). A
connection must finish its HTTP upgrade within ``open_timeout`` and send ``hello`` within
``hello_timeout``; one that stops answering the WebSocket pings is dropped after
``heartbeat_seconds``. Past ``max_connections`` sessions an upgrade is answered HTTP 503, and past
``max_opening`` more TCP connections a new one is dropped as it is accepted. One session per
player: a second login takes over and the first is told ``taken_over``.

``GET /healthz`` and ``GET /metrics`` are answered on the same port, and ``GET /`` (with the other
files of ``server/web/``) serves the browser client.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode
from websockets.http11 import Request as HttpRequest
from websockets.http11 import Response
from websockets.protocol import OPEN

from engine.tournament.transfers import player_account
from protocol import PROTOCOL_VERSION
from protocol.client_messages import (
    Act,
    AddOn,
    Chat,
    ClientMessage,
    DeclineRebuy,
    HandHistory,
    HandList,
    Hello,
    LobbySubscribe,
    LobbyUnsubscribe,
    Ping,
    Rebuy,
    Register,
    SitIn,
    SitOut,
    TableJoin,
    TableLeave,
    TimeBank,
    TournamentSubscribe,
    TournamentUnsubscribe,
    Unregister,
)
from protocol.codec import SUBPROTOCOLS, Codec, codec_for
from protocol.errors import ErrorCode, ProtocolError
from protocol.kinds import GoodbyeReason, RegistrationStatus, Role
from protocol.operator_requests import (
    DealAbandon,
    DealAccept,
    DealAsk,
    DealPropose,
    OpSubscribe,
    OpTournamentCreate,
    OpTournamentDelete,
    OpTournamentEdit,
    OpTournamentList,
    OpUnsubscribe,
)
from protocol.operator_requests import OperatorRequest as OperatorRequestType
from protocol.server_messages import (
    Ack,
    Balance,
    Error,
    Goodbye,
    Lobby,
    LobbyUpdate,
    Pong,
    Registration,
    Seated,
    ServerMessage,
    TournamentSummary,
    Unseated,
    Welcome,
)
from server import hand_requests, views, wire
from server.bus import Bus, BusError, NoSuchAddress, Subscription
from server.clock import Clock, milliseconds
from server.direct import DirectConnection, fail
from server.messages import (
    LOBBY,
    OPERATIONS,
    OPERATORS,
    Caller,
    Follow,
    HelloAnswered,
    PlayerHello,
    Request,
    Resumed,
    Resync,
    TableFrames,
    ToPlayer,
    ToSession,
    operators_channel,
    player_channel,
    session_channel,
    table_channel,
    table_inbox,
    tournament_channel,
    tournament_inbox,
)
from server.metrics import Metrics
from server.static import StaticFiles
from server.store.connection import Store
from server.store.errors import StoreError
from server.store.players import Operator, Player

log = logging.getLogger("feltd.gateway")

MAX_TABLES_FOLLOWED = 16
HEARTBEAT_SECONDS = 20
HEARTBEAT_TICK = 0.1  # seconds between the heartbeat's slices (50 of 10,000 connections each)
FOLLOW_TRIES = 50  # times a player's follow of their table, not listed yet, is sent again
FOLLOW_RETRY_SECONDS = 0.1  # wall seconds between two of them
MAX_SIZE = 64 * 1024  # kept for importers: Limits().max_size
RATE_PER_SECOND = 20.0  # kept for importers: Limits().rate_per_second


@dataclass(frozen=True, slots=True)
class Limits:
    """What one connection, and all of them together, may cost the server (``feltd serve``
    flags; docs/protocol.md section 17). Times are wall-clock seconds."""

    max_size: int = MAX_SIZE  # websockets closes a connection sending a bigger frame (1009)
    # Frames received and not yet read (only while a hello awaits the store): then websockets
    # stops reading the socket. With max_size, a connection's worst case: 8 x 64 KiB.
    max_unread_frames: int = 8
    max_queued_frames: int = 512  # a session's send queue; then a resync, then ``too_slow``
    max_resyncs: int = 3  # in ``resync_window`` seconds, then the client is too slow
    resync_window: float = 60.0
    send_timeout: float = 30.0  # seconds a single frame may take to leave (then ``too_slow``)
    close_timeout: float = 5.0  # for the closing handshake, then the TCP connection is dropped
    open_timeout: float = 10.0  # the HTTP upgrade must be over within it (half-open TCP)
    hello_timeout: float = 10.0  # ``hello`` within it of the upgrade
    rate_per_second: float = RATE_PER_SECOND  # frames a connection may send a second (bursts of 2x)
    max_refused: int = 10  # refused frames in ``error_window`` seconds close the connection
    max_errors: int = 100  # refused requests of any kind in ``error_window`` close it too
    error_window: float = 60.0
    max_connections: int = 10_000  # WebSocket sessions; past it an upgrade gets HTTP 503
    max_opening: int = 1_000  # TCP connections still in their HTTP upgrade on top of the sessions

    def check(self) -> None:
        """``ValueError`` naming the first setting out of range."""
        counts = (
            "max_size",
            "max_unread_frames",
            "max_queued_frames",
            "max_resyncs",
            "max_refused",
            "max_errors",
        )
        for name in (*counts, "max_connections", "max_opening"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in (
            "resync_window",
            "send_timeout",
            "close_timeout",
            "open_timeout",
            "hello_timeout",
            "rate_per_second",
            "error_window",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")


GOODBYE_SECONDS = 1.0  # a session told goodbye is closed once it has left, or after this
OPERATOR_CHECK_SECONDS = 5.0  # an operator account removed closes its sessions within this


@dataclass(slots=True)
class _Following:
    """A table a session follows: as which audience, and whether its snapshot is still to come."""

    subscription: Subscription
    audience: views.Audience
    waiting: bool = True  # events are dropped until the snapshot (or resync) is queued
    last_seq: int = 0
    own: bool = False  # the player's own seat
    tournament_id: str | None = None  # the tournament of the own seat


@dataclass(slots=True)
class _FrameCache:
    """The last published table frames, encoded and framed (``server.wire``) once per
    (subprotocol, copy) for every session."""

    message: object = None
    encoded: dict[tuple[str, int], bytes] = field(default_factory=dict)


class Session:
    """One connection (see the module docstring).

    Its frames are written straight to the connection's transport, a session's frames of one
    turn of the event loop in one write (``Gateway.flush``): no task per session or per frame.
    The queue holds frames as they go on the wire (``server.wire``): a table's event is framed
    once for all of its followers.
    Only while the transport's buffer is over websockets' high-water mark (the client does not
    read) do frames wait in ``queue``, and a task (``_drain``) waits for it to empty."""

    __slots__ = (
        "__weakref__",
        "close_code",
        "close_reason",
        "closing",
        "codec",
        "draining",
        "errors",
        "flushed",
        "following",
        "gateway",
        "hellos_pending",
        "id",
        "lobby",
        "operator",
        "operator_id",
        "operator_streams",
        "pinged",
        "player",
        "queue",
        "reading",
        "refilled",
        "refused",
        "resume",
        "resyncs",
        "role",
        "scheduled",
        "subscriptions",
        "tokens",
        "tournaments",
        "websocket",
    )

    def __init__(self, gateway: Gateway, websocket: ServerConnection, codec: Codec) -> None:
        self.gateway = gateway
        self.websocket = websocket
        self.codec = codec
        self.id = f"s-{secrets.token_hex(6)}"
        self.player: str | None = None
        self.operator: str | None = None
        self.operator_id: int | None = None
        self.role: Role | None = None
        self.queue: deque[tuple[int | None, bytes]] = deque()  # (table id or None, wire frame)
        self.scheduled = False  # in the gateway's list of sessions to flush
        self.draining: asyncio.Task[None] | None = None  # waits for a full transport buffer
        # set once closing and what could be sent has been written (made when closing)
        self.flushed: asyncio.Event | None = None
        self.following: dict[int, _Following] = {}
        self.tournaments: dict[str, Subscription] = {}
        self.operator_streams: dict[str, Subscription] = {}  # channel -> subscription (op_subscribe)
        self.subscriptions: list[Subscription] = []
        self.lobby = False
        self.resume: dict[int, int] = {}
        self.hellos_pending: set[str] = set()
        self.close_code = 1000
        self.close_reason = ""
        # when each resync, refused frame, error came (in their windows): made when first needed
        self.resyncs: deque[float] | None = None
        self.refused: deque[float] | None = None
        self.errors: deque[float] | None = None
        self.tokens = 2 * gateway.limits.rate_per_second  # a full burst to start with
        self.refilled = time.monotonic()
        self.closing = False
        self.pinged = b""  # the payload of the heartbeat's last ping
        # done when the handler should stop waiting for the logged-in connection's frames (it
        # closes, or the session says goodbye): made when it starts waiting
        self.reading: asyncio.Future[None] | None = None

    @property
    def caller(self) -> Caller:
        return Caller(self.id, self.player, self.operator)

    # -- sending ----------------------------------------------------------------------------------

    def send(self, message: ServerMessage, table_id: int | None = None) -> None:
        self.enqueue(self.codec.encode(message), table_id)
        if isinstance(message, Error):
            self.gateway.counted_error(self, message)

    def enqueue(self, frame: bytes | str, table_id: int | None = None) -> None:
        """Queue one message's encoded payload."""
        self.put(wire.frame(frame), table_id)

    def put(self, frame: bytes, table_id: int | None = None) -> None:
        """Queue one frame as it goes on the wire (``server.wire``)."""
        if self.closing:
            return
        full = len(self.queue) >= self.gateway.limits.max_queued_frames
        if full and (not self._overflow() or table_id is not None):
            # a table's frame goes with the ones just dropped: the resync's snapshot covers it (sent
            # alone, it reached the client after the gap and before the snapshot, out of its hand)
            return
        self.queue.append((table_id, frame))
        if not self.scheduled and self.draining is None:
            self.gateway.schedule_flush(self)

    def _overflow(self) -> bool:
        """The client does not read: drop the queued table events and resync each table with a
        snapshot (True), or close the connection when that keeps happening (False)."""
        metrics = self.gateway.metrics
        limits = self.gateway.limits
        now = time.monotonic()
        resyncs = self.resyncs
        if resyncs is None:
            resyncs = self.resyncs = deque()
        while resyncs and resyncs[0] < now - limits.resync_window:
            resyncs.popleft()
        kept = deque(item for item in self.queue if item[0] is None)
        # replies it did not read fill the queue by themselves: a resync would not help
        unread_replies = len(kept) + len(self.following) >= limits.max_queued_frames
        if len(resyncs) >= limits.max_resyncs or unread_replies:
            metrics.slow_closes += 1
            self.close(GoodbyeReason.TOO_SLOW, "the connection did not read what it was sent")
            return False
        resyncs.append(now)
        metrics.resyncs += 1
        metrics.send_queue_drops += len(self.queue) - len(kept)
        self.queue = kept
        for table_id, following in list(self.following.items()):
            following.waiting = True
            self.gateway.request_follow(self, table_id, following, last_seq=None)
        return True

    def flush(self) -> None:
        """Write what is queued (``Gateway.flush``, once per turn of the event loop)."""
        self.scheduled = False
        if self.websocket.protocol.state is not OPEN:  # closing or closed: nothing more can leave
            self.queue.clear()
            self._done_if_closing()
            return
        if self.draining is not None:
            return  # it writes once the client has read
        if not self.websocket.paused:
            self._write()
        if self.queue:
            self.draining = asyncio.get_running_loop().create_task(self._drain(), name=f"drain {self.id}")
        else:
            self._done_if_closing()

    def _write(self) -> None:
        """The queued frames in one write to the transport, up to its high-water mark (at least
        one frame: past the mark the transport pauses us), after anything ``websockets`` itself
        has still to send."""
        websocket = self.websocket
        queue = self.queue
        transport = websocket.transport
        room = websocket.write_limit_high - transport.get_write_buffer_size()
        chunks = websocket.protocol.data_to_send()
        written = 0
        frames = 0
        while queue and (written == 0 or written < room):
            frame = queue.popleft()[1]
            chunks.append(frame)
            written += len(frame)
            frames += 1
        metrics = self.gateway.metrics
        metrics.frames_out += frames
        metrics.bytes_out += written
        transport.write(chunks[0] if len(chunks) == 1 else b"".join(chunks))

    async def _drain(self) -> None:
        """The transport's buffer is full: wait (``send_timeout`` at most each time) for the
        client to read it, then write more; a client that does not read within it is dropped."""
        websocket = self.websocket
        try:
            while self.queue and websocket.protocol.state is OPEN:
                async with asyncio.timeout(self.gateway.limits.send_timeout):
                    await websocket.drain()
                if websocket.protocol.state is OPEN and not websocket.paused:
                    self._write()
        except TimeoutError:
            # Its TCP window stayed shut: nothing more can leave, not even a goodbye or a close
            # frame, so the connection is dropped and what was queued for it freed.
            self.gateway.metrics.slow_closes += 1
            self.closing = True
            self.close_code, self.close_reason = GoodbyeReason.TOO_SLOW.close_code, "too_slow"
            websocket.transport.abort()
        except (ConnectionClosed, ConnectionError):
            pass
        finally:
            if websocket.protocol.state is not OPEN:
                self.queue.clear()
            self.draining = None
            self._done_if_closing()

    def _done_if_closing(self) -> None:
        if self.closing and not self.queue and self.draining is None:
            self.closed_event().set()

    def closed_event(self) -> asyncio.Event:
        if self.flushed is None:
            self.flushed = asyncio.Event()
        return self.flushed

    def close(self, reason: GoodbyeReason, text: str) -> None:
        """Say goodbye and close (after what is queued)."""
        if self.closing:
            return
        self.queue.append((None, wire.frame(self.codec.encode(Goodbye(reason=reason, message=text)))))
        self.closing = True
        self.close_code, self.close_reason = reason.close_code, reason.value
        if not self.scheduled and self.draining is None:
            self.gateway.schedule_flush(self)
        self.stop_reading()
        self.gateway.closing(self)

    def stop_reading(self, _: object = None) -> None:
        reading = self.reading
        if reading is not None and not reading.done():
            reading.set_result(None)

    # -- what the bus brings ------------------------------------------------------------------------

    def deliver(self, message: object) -> None:
        """A message published for this session (its own channel or its player's)."""
        if isinstance(message, ToSession | ToPlayer):
            inner = message.message
            if isinstance(inner, Seated):
                self.send(inner)
                self.gateway.seated(self, inner)
                return
            if isinstance(inner, Unseated):
                self.send(inner)
                self.gateway.unseated(self, inner)
                return
            if isinstance(inner, Registration):
                self.gateway.registration(self, inner)
            self.send(inner)
        elif isinstance(message, Resync):
            following = self.following.get(message.table_id)
            if following is None:
                return
            for frame in message.frames:
                self.send(frame, message.table_id)
            if message.frames:
                following.last_seq = max(following.last_seq, getattr(message.frames[-1], "seq", 0))
            following.waiting = False
        elif isinstance(message, HelloAnswered):
            self.hellos_pending.discard(message.tournament_id)
            if not self.hellos_pending:
                self.gateway.resume_rest(self)


class Gateway:
    """Sessions, the lobby, and the routes to the coordinators and tables."""

    def __init__(
        self,
        store: Store,
        bus: Bus,
        clock: Clock,
        metrics: Metrics,
        *,
        tournaments: Callable[[], list[str]],
        heartbeat_seconds: int = HEARTBEAT_SECONDS,
        limits: Limits | None = None,
    ) -> None:
        """``tournaments()`` lists the tournaments whose coordinators run (for a player's hello);
        ``limits``: what connections may cost (``Limits()``, the defaults, without it)."""
        self.store = store
        self.bus = bus
        self.clock = clock
        self.metrics = metrics
        self.tournaments = tournaments
        self.heartbeat_seconds = heartbeat_seconds
        self.sessions: dict[str, Session] = {}
        self.by_player: dict[str, Session] = {}
        self.lobby: dict[str, TournamentSummary] = {}
        self.lobby_sessions: set[Session] = set()
        self._cache = _FrameCache()
        self._to_flush: list[Session] = []  # sessions with frames queued in this turn of the loop
        self._lobby_subscription = bus.subscribe(LOBBY, self._lobby_update)
        self.server: Server | None = None
        self._closers: set[asyncio.Task[None]] = set()
        self._beating: asyncio.Task[None] | None = None
        self._revoking: asyncio.Task[None] | None = None
        self.limits = limits if limits is not None else Limits()
        self.limits.check()
        self.static = StaticFiles()

    # -- sending ----------------------------------------------------------------------------------

    def schedule_flush(self, session: Session) -> None:
        """Write ``session``'s frames at the end of this turn of the event loop: a table's event
        and what follows it from the same turn (the next turn, an ack) leave in one write."""
        session.scheduled = True
        if not self._to_flush:
            asyncio.get_running_loop().call_soon(self.flush)
        self._to_flush.append(session)

    def flush(self) -> None:
        sessions, self._to_flush = self._to_flush, []
        for session in sessions:
            try:
                session.flush()
            except Exception:  # a bug: the other sessions go on
                log.exception("session %s: flush failed", session.id)
                session.queue.clear()
                session.websocket.transport.abort()

    # -- serving ----------------------------------------------------------------------------------

    async def start(self, host: str, port: int) -> Server:
        gateway = self

        class Counted(DirectConnection):
            """Past ``max_connections + max_opening`` TCP connections (sessions and upgrades
            under way), a new one is dropped as it is accepted: a flood of connections that
            never send a request costs no more than that many."""

            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                super().connection_made(transport)
                limits = gateway.limits
                over = len(self.server.handler_tasks) > limits.max_connections + limits.max_opening
                if over and isinstance(transport, asyncio.WriteTransport):
                    gateway.metrics.connections_refused += 1
                    transport.abort()

        self.server = await serve(
            self._handler,
            host,
            port,
            subprotocols=list(SUBPROTOCOLS),  # type: ignore[arg-type]
            compression=None,
            max_size=self.limits.max_size,
            open_timeout=self.limits.open_timeout,
            close_timeout=self.limits.close_timeout,
            create_connection=Counted,
            max_queue=self.limits.max_unread_frames,
            ping_interval=None,  # one heartbeat task for all of them (_heartbeat)
            ping_timeout=None,
            process_request=self._http,
        )
        self._beating = asyncio.get_running_loop().create_task(self._heartbeat(), name="heartbeat")
        self._revoking = asyncio.get_running_loop().create_task(self._operators_removed(), name="operators")
        return self.server

    async def stop(self) -> None:
        for session in list(self.sessions.values()):
            session.close(GoodbyeReason.SHUTDOWN, "the server is stopping")
        if self.server is not None:
            await asyncio.sleep(0.05)
            self.server.close()
            await self.server.wait_closed()
        self._lobby_subscription.close()
        if self._beating is not None:
            self._beating.cancel()
        if self._revoking is not None:
            self._revoking.cancel()

    async def _operators_removed(self) -> None:
        """An operator account removed (`feltd admin operator remove`, from any process) ends
        the sessions it opened within ``OPERATOR_CHECK_SECONDS``: a revoked token keeps no power
        through a connection already logged in. One query for all operator sessions each time."""
        while True:
            await asyncio.sleep(OPERATOR_CHECK_SECONDS)
            # in a call of its own: its locals (the sessions) go when it returns, not at the
            # next check (a closed session kept until then, or for good as a loop variable)
            await self._check_operators()

    async def _check_operators(self) -> None:
        sessions = [s for s in self.sessions.values() if s.operator_id is not None and not s.closing]
        if not sessions:
            return
        try:
            ids = {s.operator_id for s in sessions if s.operator_id}
            present = await self.store.players.operators_present(ids)
        except Exception as error:  # the store down, a bug: checked again next time
            log.warning("operator accounts not checked: %r", error)
            return
        for session in sessions:
            if session.operator_id not in present and not session.closing:
                log.info("session %s: operator %s was removed: closed", session.id, session.operator)
                session.close(GoodbyeReason.KICKED, "this operator account was removed")

    async def _heartbeat(self) -> None:
        """Every connection is pinged every ``heartbeat_seconds``, and one that has not answered
        its previous ping by then is dropped (closed 1011, as websockets' keepalive does). One
        task does it for all of them, a slice every tick spread over the period, instead of a
        task, timer and future per connection. Ticks are short (``HEARTBEAT_TICK``) so that a
        slice is small: at 10,000 connections a tick a second pinged 500 at once, a 20-25 ms
        stop of the loop every second."""
        tick = min(HEARTBEAT_TICK, self.heartbeat_seconds / 4)
        ticks = max(1, round(self.heartbeat_seconds / tick))
        # the ids, not the sessions: a session closed during the period must not be kept alive
        # until it ends (the collector's periodic pass only freezes; reference counting frees it)
        ids: list[str] = []
        done = 0
        per_tick = 1
        beat = 0
        # a period is ``ticks`` ticks however few sessions there are: begun again as soon as every
        # session had been pinged, it pinged each of n < ticks sessions every n ticks (one alone
        # every 0.1 s), and a pong later than that was taken for a timeout (1011)
        ticked = 0
        while True:
            await asyncio.sleep(tick)
            if ticked == 0:
                ids = list(self.sessions)
                done = 0
                per_tick = -(-len(ids) // ticks)
                beat += 1
            ticked = (ticked + 1) % ticks
            if done < len(ids):
                self._ping(ids[done : done + per_tick], _PING_PREFIX + beat.to_bytes(4, "big"))
                done += per_tick

    def _ping(self, ids: list[str], payload: bytes) -> None:
        loop = asyncio.get_running_loop()
        for session_id in ids:
            session = self.sessions.get(session_id)
            if session is None:
                continue  # closed since the period began
            websocket = session.websocket
            if websocket.protocol.state is not OPEN:
                continue
            if session.pinged and session.pinged in websocket.pending_pings:
                late = fail(websocket, CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
                task = loop.create_task(late)
                self._closers.add(task)
                task.add_done_callback(self._closers.discard)
                continue
            # websockets' own bookkeeping of pings (what its ping() does, without the wait
            # for a full write buffer): its pong handler removes the entry
            websocket.pending_pings[payload] = (loop.create_future(), loop.time())
            session.pinged = payload
            websocket.protocol.send_ping(payload)
            websocket.send_data()

    def _http(self, connection: ServerConnection, request: HttpRequest) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return connection.respond(http.HTTPStatus.OK, "ok\n")
        if path == "/metrics":
            response = connection.respond(http.HTTPStatus.OK, self.metrics.render())
            response.headers["Content-Type"] = "text/plain; version=0.0.4; charset=utf-8"
            return response
        if "upgrade" not in request.headers.get("Connection", "").lower():
            page = self.static.response(path)
            if page is not None:
                return page
            return connection.respond(
                http.HTTPStatus.NOT_FOUND, "feltd: WebSocket at /, or GET /healthz, /metrics\n"
            )
        if len(self.sessions) >= self.limits.max_connections:
            self.metrics.connections_refused += 1
            response = connection.respond(
                http.HTTPStatus.SERVICE_UNAVAILABLE, "feltd: too many connections; try again later\n"
            )
            response.headers["Retry-After"] = "5"
            return response
        return None

    async def _handler(self, websocket: ServerConnection) -> None:
        if websocket.subprotocol is None:
            await websocket.close(1002, "offer feltd.msgpack.v1 or feltd.json.v1")
            return
        session = Session(self, websocket, codec_for(websocket.subprotocol))
        self.sessions[session.id] = session
        self.metrics.connections += 1
        self.metrics.connections_total += 1
        try:
            await self._serve(session)
        except ConnectionClosed:
            pass
        finally:
            session.closing = True
            # What it still sends is read and dropped: unread, it would stop websockets reading
            # the socket, and the client's close frame behind it, until close_timeout.
            drain = asyncio.create_task(_discard(websocket), name=f"drain {session.id}")
            if session.queue or session.draining is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(session.closed_event().wait(), 2.0)
            if session.draining is not None:
                session.draining.cancel()
            # with the code its goodbye named (returning from the handler would close with 1000)
            await session.websocket.close(session.close_code, session.close_reason)
            drain.cancel()
            self._forget(session)
            self.metrics.connections -= 1

    async def _serve(self, session: Session) -> None:
        websocket = session.websocket
        session.subscriptions.append(self.bus.subscribe(session_channel(session.id), session.deliver))
        hello_timeout = self.limits.hello_timeout
        try:
            async with asyncio.timeout(hello_timeout):
                while session.role is None:
                    frame = await websocket.recv()
                    hello = self._frame(session, frame, time.perf_counter())
                    if hello is not None:
                        await self._hello(session, hello)  # nothing else is read until it is answered
                    if session.closing:
                        return
        except TimeoutError:
            session.close(GoodbyeReason.HELLO_TIMEOUT, f"send hello within {hello_timeout:g} s")
            return
        # what the client sent right behind its hello, the usual way; then each frame as it
        # comes (server.direct), until the connection closes or the session says goodbye
        while len(websocket.recv_messages.frames):
            frame = await websocket.recv()
            self._frame(session, frame, time.perf_counter())
            if session.closing:
                return
        assert isinstance(websocket, DirectConnection)  # what Gateway.start serves
        reading = session.reading = asyncio.get_running_loop().create_future()
        websocket.connection_lost_waiter.add_done_callback(session.stop_reading)
        websocket.reader = lambda frame: self._read(session, frame)
        await reading

    def _read(self, session: Session, frame: bytes | str) -> None:
        """A logged-in session's frame, as it arrived; those after its goodbye are dropped."""
        if not session.closing:
            self._frame(session, frame, time.perf_counter())

    def closing(self, session: Session) -> None:
        """``session`` said goodbye: its handler closes it once the goodbye has left (or, for a
        session another login took over, right here, its reader being elsewhere)."""
        if session.id not in self.sessions:
            return

        async def close_after_goodbye() -> None:
            # once the writer has sent the goodbye, not when it has taken it from the queue: a
            # close while that frame is still being sent would lose it
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(session.closed_event().wait(), GOODBYE_SECONDS)
            await session.websocket.close(session.close_code, session.close_reason)

        task = asyncio.get_running_loop().create_task(close_after_goodbye())
        self._closers.add(task)
        task.add_done_callback(self._closers.discard)

    def _forget(self, session: Session) -> None:
        self.sessions.pop(session.id, None)
        if session.player is not None and self.by_player.get(session.player) is session:
            del self.by_player[session.player]
        for following in session.following.values():
            following.subscription.close()
        session.following.clear()
        for subscription in session.tournaments.values():
            subscription.close()
        for subscription in session.operator_streams.values():
            subscription.close()
        for subscription in session.subscriptions:
            subscription.close()
        self.lobby_sessions.discard(session)
        # what points back at the session goes, so that reference counting frees it and its
        # connection: the collector's periodic pass only freezes (server/collector.py), and a
        # cycle would wait for the complete pass, 15 minutes
        session.tournaments.clear()
        session.operator_streams.clear()
        session.subscriptions.clear()
        session.reading = None
        if isinstance(session.websocket, DirectConnection):
            session.websocket.reader = None

    # -- frames -----------------------------------------------------------------------------------

    def _frame(self, session: Session, frame: bytes | str, received_at: float) -> Hello | None:
        """Read one frame; a ``hello`` before the login is returned for the caller to await."""
        self.metrics.frames_in += 1
        if not self._rate_ok(session):
            limit = f"at most {self.limits.rate_per_second:g} a second"
            self._refuse(session, ErrorCode.RATE_LIMITED, f"too many messages: {limit}", None)
            return None
        try:
            message = session.codec.decode_client(frame)
        except ProtocolError as error:
            self._refuse(session, error.code, str(error), error.request_id)
            return None
        if isinstance(message, Hello) and session.role is None:
            return message
        try:
            self._message(session, message, received_at)
        except BusError as error:
            session.send(
                Error(
                    code=ErrorCode.SERVER_BUSY,
                    message=str(error),
                    request_id=_request_id(message),
                    fatal=False,
                )
            )
        except Exception:  # a bug: the other sessions and the tables go on
            log.exception("session %s: %s failed", session.id, type(message).__name__)
            session.send(
                Error(
                    code=ErrorCode.INTERNAL,
                    message="the server failed on that request; nothing changed",
                    request_id=_request_id(message),
                    fatal=False,
                )
            )
        return None

    def _rate_ok(self, session: Session) -> bool:
        now = time.monotonic()
        rate = self.limits.rate_per_second
        session.tokens = min(2 * rate, session.tokens + (now - session.refilled) * rate)
        session.refilled = now
        if session.tokens < 1:
            return False
        session.tokens -= 1
        return True

    def _refuse(self, session: Session, code: ErrorCode, text: str, request_id: str | None) -> None:
        self.metrics.protocol_errors += 1
        limits = self.limits
        fatal = session.role is None and code is not ErrorCode.RATE_LIMITED
        session.send(Error(code=code, message=text, request_id=request_id, fatal=fatal))
        if fatal:
            session.close(GoodbyeReason.FATAL_ERROR, text)
            return
        if code not in _REFUSED_FRAMES:
            return  # counted by send() with every other error
        now = time.monotonic()
        refused = session.refused
        if refused is None:
            refused = session.refused = deque()
        refused.append(now)
        while refused and refused[0] < now - limits.error_window:
            refused.popleft()
        if len(refused) >= limits.max_refused:
            self.metrics.error_closes += 1
            window = f"{limits.error_window:g} s"
            session.close(GoodbyeReason.TOO_MANY_ERRORS, f"{limits.max_refused} refused frames in {window}")

    def counted_error(self, session: Session, error: Error) -> None:
        """Every error a session is sent counts (the server's own failures aside): past
        ``max_errors`` in ``error_window`` the client is at fault and is closed."""
        if error.code in (ErrorCode.SERVER_BUSY, ErrorCode.INTERNAL) or session.closing:
            return
        limits = self.limits
        now = time.monotonic()
        errors = session.errors
        if errors is None:
            errors = session.errors = deque()
        errors.append(now)
        while errors and errors[0] < now - limits.error_window:
            errors.popleft()
        if len(errors) >= limits.max_errors:
            self.metrics.error_closes += 1
            window = f"{limits.error_window:g} s"
            session.close(GoodbyeReason.TOO_MANY_ERRORS, f"{limits.max_errors} errors in {window}")

    def _message(self, session: Session, message: ClientMessage, received_at: float) -> None:
        if isinstance(message, Ping):
            session.send(Pong(nonce=message.nonce, server_time_ms=milliseconds(self.clock.now())))
            return
        if isinstance(message, Hello):
            self._refuse(
                session, ErrorCode.ALREADY_AUTHENTICATED, "this connection is logged in already", None
            )
            return
        if session.role is None:
            self._refuse(session, ErrorCode.NOT_AUTHENTICATED, "send hello first", _request_id(message))
            return
        request_id = _request_id(message)
        if isinstance(message, LobbySubscribe):
            self.lobby_sessions.add(session)
            session.send(
                Lobby(tournaments=sorted(self.lobby.values(), key=lambda t: (t.start_ms, t.tournament_id)))
            )
            self._ack(session, request_id)
        elif isinstance(message, LobbyUnsubscribe):
            self.lobby_sessions.discard(session)
            self._ack(session, request_id)
        elif isinstance(message, TournamentSubscribe):
            if not self.bus.has_inbox(tournament_inbox(message.tournament_id)):
                self._not_found(session, self._no_tournament(message.tournament_id), request_id)
                return
            self._subscribe_tournament(session, message.tournament_id)
            self.bus.send(
                tournament_inbox(message.tournament_id), Request(session.caller, message, received_at)
            )
        elif isinstance(message, TournamentUnsubscribe):
            subscription = session.tournaments.pop(message.tournament_id, None)
            if subscription is not None:
                subscription.close()
            self._ack(session, request_id)
        elif isinstance(message, HandList | HandHistory):
            self._hand_request(session, message)
        elif isinstance(message, OperatorRequestType):
            self._operator_request(session, message, received_at)
        elif isinstance(message, _TOURNAMENT_REQUESTS):
            address = tournament_inbox(message.tournament_id)
            if not self.bus.has_inbox(address):
                self._not_found(session, self._no_tournament(message.tournament_id), request_id)
                return
            self.bus.send(address, Request(session.caller, message, received_at))
        elif isinstance(message, Act | TimeBank | Chat):
            address = table_inbox(message.table_id)
            if not self.bus.has_inbox(address):
                self._not_found(session, f"no table {message.table_id}", request_id)
                return
            self.bus.send(address, Request(session.caller, message, received_at))
        elif isinstance(message, TableJoin):
            self._join(session, message)
        elif isinstance(message, TableLeave):
            following = session.following.pop(message.table_id, None)
            if following is not None:
                following.subscription.close()
            self._ack(session, request_id)

    def _operator_request(self, session: Session, message: OperatorRequestType, received_at: float) -> None:
        """Operators only: the event stream here, schedule changes to the server's operations
        inbox, the rest to the tournament's coordinator (or, for a tournament no coordinator
        runs any more, to the operations inbox, which reads it from the store)."""
        request_id = message.request_id
        if session.role is not Role.OPERATOR:
            self._refuse(
                session, ErrorCode.FORBIDDEN, "only an operator's connection may do that", request_id
            )
            return
        if isinstance(message, OpSubscribe | OpUnsubscribe):
            channel = OPERATORS if message.tournament_id is None else operators_channel(message.tournament_id)
            current = session.operator_streams.pop(channel, None)
            if current is not None:
                current.close()
            if isinstance(message, OpSubscribe):

                def listener(event: object) -> None:
                    if isinstance(event, ToSession):
                        session.send(event.message)

                session.operator_streams[channel] = self.bus.subscribe(channel, listener)
            self._ack(session, request_id)
            return
        request = Request(session.caller, message, received_at)
        tournament_id = getattr(message, "tournament_id", None)
        scheduling = isinstance(
            message, OpTournamentCreate | OpTournamentEdit | OpTournamentDelete | OpTournamentList
        )
        if (
            not scheduling
            and tournament_id is not None
            and self.bus.has_inbox(tournament_inbox(tournament_id))
        ):
            self.bus.send(tournament_inbox(tournament_id), request)
        elif self.bus.has_inbox(OPERATIONS):
            self.bus.send(OPERATIONS, request)
        else:
            self._not_found(session, "this server takes no operator requests", request_id)

    def _hand_request(self, session: Session, message: HandList | HandHistory) -> None:
        """Stored hands are read from the store off the frame loop (``server.hand_requests``
        decides what the asker may see)."""
        role = session.role
        if role is None:
            return

        async def reply() -> None:
            try:
                answer = await hand_requests.answer(self.store.histories, role, session.player, message)
            except Exception:  # a bug: the other sessions and the tables go on
                log.exception("session %s: %s failed", session.id, type(message).__name__)
                answer = Error(
                    code=ErrorCode.INTERNAL,
                    message="the server failed on that request; nothing changed",
                    request_id=message.request_id,
                    fatal=False,
                )
            if not session.closing:
                session.send(answer)

        task = asyncio.get_running_loop().create_task(reply())
        self._closers.add(task)
        task.add_done_callback(self._closers.discard)

    def _ack(self, session: Session, request_id: str | None) -> None:
        if request_id is not None:
            session.send(Ack(request_id=request_id))

    def _no_tournament(self, tournament_id: str) -> str:
        known = self.lobby.get(tournament_id)
        if known is not None:  # over: its coordinator has stopped reading
            return f"tournament {tournament_id!r} is {known.status.value}: it takes no requests now"
        return f"no tournament {tournament_id!r}"

    def _not_found(self, session: Session, text: str, request_id: str | None) -> None:
        session.send(Error(code=ErrorCode.NOT_FOUND, message=text, request_id=request_id, fatal=False))

    # -- hello ------------------------------------------------------------------------------------

    async def _hello(self, session: Session, hello: Hello) -> None:
        if hello.protocol != PROTOCOL_VERSION:
            self._refuse(
                session,
                ErrorCode.UNSUPPORTED_VERSION,
                f"this server speaks protocol {PROTOCOL_VERSION}",
                None,
            )
            return
        player: Player | None = None
        operator: Operator | None = None
        if hello.token is not None:
            try:
                player = await self.store.players.authenticate(hello.token)
                if player is None:
                    operator = await self.store.players.authenticate_operator(hello.token)
            except StoreError as error:
                log.error("hello: the store did not answer: %s", error)
                self._refuse(
                    session, ErrorCode.SERVER_BUSY, "the server cannot check tokens now; try again", None
                )
                return
            if player is None and operator is None:
                self._refuse(session, ErrorCode.BAD_TOKEN, "that token names no player or operator", None)
                return
        if session.closing:
            return
        if player is not None:
            # a player is named by their id everywhere: on the wire, at the tables, in the ledger
            session.role = Role.PLAYER
            session.player = player.id
            old = self.by_player.get(player.id)
            if old is not None and old is not session:
                old.close(GoodbyeReason.TAKEN_OVER, "you logged in on another connection")
                self._forget(old)
            self.by_player[player.id] = session
        elif operator is not None:
            session.role = Role.OPERATOR
            session.operator = operator.name
            session.operator_id = operator.id
        else:
            session.role = Role.OBSERVER
        session.send(
            Welcome(
                protocol=PROTOCOL_VERSION,
                session_id=session.id,
                player=session.player,
                role=session.role,
                server_time_ms=milliseconds(self.clock.now()),
                heartbeat_seconds=self.heartbeat_seconds,
            )
        )
        session.resume = {entry.table_id: entry.last_seq for entry in hello.resume}
        if session.player is None:
            self.resume_rest(session)
            return
        session.subscriptions.append(self.bus.subscribe(player_channel(session.player), session.deliver))
        try:
            cents = await self.store.ledger.balance(player_account(session.player))
        except StoreError:
            cents = 0
        session.send(Balance(cents=max(0, cents)))
        tournaments = self.tournaments()
        session.hellos_pending = set(tournaments)
        for tournament_id in tournaments:
            try:
                self.bus.send(tournament_inbox(tournament_id), PlayerHello(session.caller))
            except BusError:
                session.hellos_pending.discard(tournament_id)
        if not session.hellos_pending:
            self.resume_rest(session)

    def resume_rest(self, session: Session) -> None:
        """After hello: follow the tables listed in ``resume`` the player does not sit at."""
        resume, session.resume = session.resume, {}
        for table_id, last_seq in resume.items():
            if table_id in session.following:
                continue
            self._follow(session, table_id, None, last_seq, own=False)

    # -- tables -----------------------------------------------------------------------------------

    def _join(self, session: Session, join: TableJoin) -> None:
        table_id = join.table_id
        if not self.bus.has_inbox(table_inbox(table_id)):
            self._not_found(session, f"no table {table_id}", join.request_id)
            return
        following = session.following.get(table_id)
        if following is not None:  # again: resume from last_seq (or a snapshot)
            following.waiting = True
            self.request_follow(session, table_id, following, join.last_seq, join.request_id)
            return
        if len(session.following) >= MAX_TABLES_FOLLOWED:
            session.send(
                Error(
                    code=ErrorCode.NOT_AVAILABLE,
                    message=f"at most {MAX_TABLES_FOLLOWED} tables at once",
                    request_id=join.request_id,
                    fatal=False,
                )
            )
            return
        self._follow(session, table_id, None, join.last_seq, own=False, request_id=join.request_id)

    def _follow(
        self,
        session: Session,
        table_id: int,
        seat: int | None,
        last_seq: int | None,
        *,
        own: bool,
        request_id: str | None = None,
        tournament_id: str | None = None,
    ) -> None:
        old = session.following.pop(table_id, None)
        if old is not None:
            old.subscription.close()
        if seat is not None:
            audience = views.Audience.seat(seat)
        elif session.role is Role.OPERATOR:
            audience = views.Audience.operators
        else:
            audience = views.Audience.rail

        def listener(message: object) -> None:
            self._table_message(session, table_id, message)

        subscription = self.bus.subscribe(table_channel(table_id), listener)
        following = _Following(subscription, audience, own=own, tournament_id=tournament_id)
        session.following[table_id] = following
        self.request_follow(session, table_id, following, last_seq, request_id)

    def request_follow(
        self,
        session: Session,
        table_id: int,
        following: _Following,
        last_seq: int | None,
        request_id: str | None = None,
        tries: int = 0,
    ) -> None:
        audience = following.audience
        seat = audience.seat_number if audience.viewer is views.Viewer.SEAT else None
        follow = Follow(session.caller, last_seq, seat, audience.viewer is views.Viewer.OPERATORS, request_id)
        try:
            self.bus.send(table_inbox(table_id), follow)
        except NoSuchAddress as error:
            # a table placed on another worker (--shard-tables) is listed once that worker opened
            # it, maybe after its players heard of their seats: a player's own table is asked
            # again shortly
            if following.own and tries < FOLLOW_TRIES:
                asyncio.get_running_loop().call_later(
                    FOLLOW_RETRY_SECONDS,
                    self._follow_again,
                    session,
                    table_id,
                    following,
                    last_seq,
                    request_id,
                    tries + 1,
                )
                return
            session.send(
                Error(code=ErrorCode.NOT_FOUND, message=str(error), request_id=request_id, fatal=False)
            )
        except BusError as error:
            session.send(
                Error(code=ErrorCode.NOT_FOUND, message=str(error), request_id=request_id, fatal=False)
            )

    def _follow_again(
        self,
        session: Session,
        table_id: int,
        following: _Following,
        last_seq: int | None,
        request_id: str | None,
        tries: int,
    ) -> None:
        if not session.closing and session.following.get(table_id) is following:
            self.request_follow(session, table_id, following, last_seq, request_id, tries)

    def _table_message(self, session: Session, table_id: int, message: object) -> None:
        following = session.following.get(table_id)
        if following is None or following.waiting:
            return
        if isinstance(message, TableFrames):
            if message.seq <= following.last_seq:
                return
            following.last_seq = message.seq
            copy = message.views.for_audience(following.audience)
            cache = self._cache
            if cache.message is not message:
                cache.message = message
                cache.encoded.clear()
            key = (session.codec.subprotocol, id(copy))
            frame = cache.encoded.get(key)
            if frame is None:
                frame = cache.encoded[key] = wire.frame(session.codec.encode(copy))
            session.put(frame, table_id)
        elif isinstance(message, ToSession):
            session.send(message.message, table_id)

    def seated(self, session: Session, seated: Seated) -> None:
        """The player's seat: follow that table as its seat (and stop following the one they left
        in that tournament; a seat in another tournament stays)."""
        self._leave_own(session, seated.tournament_id, keep=seated.table_id)
        self._subscribe_tournament(session, seated.tournament_id)
        last_seq = session.resume.pop(seated.table_id, None)
        self._follow(
            session, seated.table_id, seated.seat, last_seq, own=True, tournament_id=seated.tournament_id
        )

    def unseated(self, session: Session, unseated: Unseated) -> None:
        """No seat in that tournament any more: stop following it as a seat, whichever table
        the message names (a player sits at one table per tournament, and a seat's copies must
        not reach them once someone else may sit there)."""
        self._leave_own(session, unseated.tournament_id)
        following = session.following.get(unseated.table_id)
        if following is not None and following.own:
            following.subscription.close()
            del session.following[unseated.table_id]

    def _leave_own(self, session: Session, tournament_id: str, keep: int | None = None) -> None:
        for table_id, following in list(session.following.items()):
            if following.own and following.tournament_id in (tournament_id, None) and table_id != keep:
                following.subscription.close()
                del session.following[table_id]

    def registration(self, session: Session, registration: Registration) -> None:
        if registration.status in (
            RegistrationStatus.REGISTERED,
            RegistrationStatus.WAITING,
            RegistrationStatus.PLAYING,
        ):
            self._subscribe_tournament(session, registration.tournament_id)

    def _subscribe_tournament(self, session: Session, tournament_id: str) -> None:
        if tournament_id in session.tournaments:
            return

        def listener(message: object) -> None:
            if isinstance(message, ToSession):
                session.send(message.message)
            elif isinstance(message, Resumed):
                self._resumed(session, message.tournament_id)

        session.tournaments[tournament_id] = self.bus.subscribe(tournament_channel(tournament_id), listener)

    def _resumed(self, session: Session, tournament_id: str) -> None:
        """The tournament's coordinator started again, likely on another worker, its tables opened
        anew (their ``seq`` starting past the old ones'): the session keeps its connection, its
        seat's table is followed from a snapshot (what comes before it is dropped, not passed on
        as a jump in ``seq``), and its player is told again where they stand. A follow the old
        worker never answered is asked again too, or that table's frames would wait for it."""
        self.metrics.sessions_moved += 1
        for table_id, following in list(session.following.items()):
            own = following.own and following.tournament_id == tournament_id
            # an own table placed on another worker (--shard-tables) may not be listed yet: its
            # follow is sent again until it is
            if own or (following.waiting and self.bus.has_inbox(table_inbox(table_id))):
                following.waiting = True
                self.request_follow(session, table_id, following, last_seq=None)
        if session.player is not None:
            with contextlib.suppress(BusError):  # gone again: the next coordinator says Resumed too
                self.bus.send(tournament_inbox(tournament_id), PlayerHello(session.caller))

    # -- the lobby --------------------------------------------------------------------------------

    def _lobby_update(self, message: object) -> None:
        if not isinstance(message, LobbyUpdate):
            return
        self.lobby[message.tournament.tournament_id] = message.tournament
        encoded: dict[str, bytes] = {}
        for session in self.lobby_sessions:
            frame = encoded.get(session.codec.subprotocol)
            if frame is None:
                frame = encoded[session.codec.subprotocol] = wire.frame(session.codec.encode(message))
            session.put(frame)


# the frames docs/protocol.md calls refused: unread, or read and pointless
_REFUSED_FRAMES = frozenset(
    (
        ErrorCode.BAD_FRAME,
        ErrorCode.UNKNOWN_TYPE,
        ErrorCode.INVALID_FIELD,
        ErrorCode.TOO_LARGE,
        ErrorCode.WRONG_FRAME_KIND,
        ErrorCode.RATE_LIMITED,
        ErrorCode.ALREADY_AUTHENTICATED,
    )
)

# requests a tournament's coordinator answers (players'), and operators' schedule changes
_TOURNAMENT_REQUESTS = (
    Register,
    Unregister,
    Rebuy,
    DeclineRebuy,
    HandHistory,
    HandList,
    AddOn,
    SitOut,
    SitIn,
    DealAsk,
    DealPropose,
    DealAccept,
    DealAbandon,
)
_SCHEDULING = (OpTournamentCreate, OpTournamentEdit, OpTournamentDelete, OpTournamentList)


_PING_PREFIX = b"hb"


async def _discard(websocket: ServerConnection) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for _ in websocket:
            pass


def _request_id(message: ClientMessage) -> str | None:
    if isinstance(message, Act):
        return message.action_id
    value = getattr(message, "request_id", None)
    return value if isinstance(value, str) else None


__all__ = ["Gateway", "Session"]
