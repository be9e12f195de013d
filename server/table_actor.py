"""One asyncio task per table: it owns the hand in progress and the action clock, and is the only
code that plays a hand at that table.

The tournament's coordinator decides what happens between hands (the director owns the seats
and the button): it sends the table its seats (``TableUpdate``) and each hand to deal (``Deal``).
The actor deals it once the pause between hands is over (``HAND_GAP_SECONDS``, so a table of
absent players cannot race), plays it with the players' actions and the clock, publishes every
event to the table's followers in the copy each may see (``server.views``), and reports the end
(``HandDone``). It never touches the seats.

The clock (CLK-1..3): the player to act gets the shot clock, then each of their time banks in
turn (announced by ``time_bank_used``), then the hand plays ``Timeout`` for them (a check if
they may, else a fold: CLK-2) and they are away from then on (``PlayerAway`` to the
coordinator). An away player (timed out, disconnected and timed out, or sitting out) is acted
for at once: dealt in, posting, checked or folded; any action of theirs brings them back.
Disconnection changes nothing: a disconnected player keeps their clock.

Resends: an ``act`` whose ``action_id`` the same player had applied in the hand under way is
answered ``ack`` again and not applied (ids are the player's own: two players may pick the same).
Followers: ``Follow`` gets the events after the follower's last ``seq`` when the table still
holds them (the hand under way and the one before), else a snapshot.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from dataclasses import dataclass, replace

from engine.actions import Action, BetOrRaiseTo, Call, Check, CheckOrCall, Fold, Timeout
from engine.betting import AnteKind
from engine.clock import ActionClock, timeout_due
from engine.hand import Hand, HandError, HandOver, NotYourTurn
from engine.table import Table
from engine.tournament.config import Level
from engine.tournament.director import HoldReason
from protocol.client_messages import Act, Chat, SitIn, SitOut, TimeBank
from protocol.errors import ErrorCode
from protocol.kinds import ActionKind, SeatChange
from protocol.server_messages import Ack, ChatLine, Error, ServerMessage, TableEvent
from protocol.server_messages import TableSnapshot as WireSnapshot
from protocol.table_events import TableClosed, TableEventBody, TimeBankUsed, Turn
from server import views
from server.bus import Bus, BusError
from server.clock import Clock, milliseconds
from server.messages import (
    Caller,
    Deal,
    Follow,
    HandDone,
    PlayerAway,
    Request,
    Resync,
    TableFrames,
    TableUpdate,
    ToSession,
    session_channel,
    table_channel,
    table_inbox,
    tournament_inbox,
)
from server.metrics import Metrics

log = logging.getLogger("feltd.table")

HAND_GAP_SECONDS = 3.0  # the least time between two hands at a table (clock seconds)
HISTORY_HANDS = 2  # hands of events kept for followers who resume
INBOX_CAPACITY = 10_000
CHAT_LINES = 5  # per player per CHAT_WINDOW_SECONDS (docs/protocol.md)
CHAT_WINDOW_SECONDS = 10.0

_ACTIONS: dict[ActionKind, Action] = {
    ActionKind.FOLD: Fold(),
    ActionKind.CHECK: Check(),
    ActionKind.CALL: Call(),
    ActionKind.CHECK_OR_CALL: CheckOrCall(),
}
_TIMEOUT = Timeout()


@dataclass(slots=True)
class _Turn:
    """The clock of the turn under way: whose, and which phase is running."""

    clock: ActionClock
    seat: int
    player: str
    banks_started: int = 0  # time banks announced so far in this turn


def _with_absent(deal: Deal, player: str, absent: bool) -> Deal:
    """``deal`` with ``player`` away (or back): a sit-out or sit-in that arrives after the next hand
    was planned, before it is dealt, counts for that hand (the table's away seats come from it)."""
    setup = deal.command.setup
    seats = tuple(replace(entry, absent=absent) if entry.player == player else entry for entry in setup.seats)
    return replace(deal, command=replace(deal.command, setup=replace(setup, seats=seats)))


class TableActor:
    """The actor of one table (see the module docstring). ``run`` until the table closes."""

    def __init__(
        self,
        table_id: int,
        tournament_id: str,
        bus: Bus,
        clock: Clock,
        *,
        shot_clock: float,
        rng: random.Random | None = None,
        hand_gap: float = HAND_GAP_SECONDS,
        metrics: Metrics | None = None,
        seq_from: int = 0,
        epoch: int = 0,
    ) -> None:
        """``seq_from``: the ``seq`` before the first event (a table opened again after a restart
        starts past every ``seq`` its clients saw before, so a resume from one gets a snapshot)."""
        self.table_id = table_id
        self.tournament_id = tournament_id
        self.bus = bus
        self.clock = clock
        self.shot_clock = shot_clock
        self.rng = rng  # None: the OS CSPRNG shuffles (production)
        self.hand_gap = hand_gap
        self.inbox = bus.open_inbox(table_inbox(table_id), INBOX_CAPACITY)
        self.channel = table_channel(table_id)
        self.coordinator = tournament_inbox(tournament_id)
        self.table: Table | None = None
        self.level = 0
        self.hand: Hand | None = None
        self.hand_views: views.HandViews | None = None
        self.hand_started_at = 0.0
        self.position = 0  # events of the hand already published (Hand.events_since)
        self.seq = seq_from
        self.epoch = epoch  # which opening of the table this is (``OpenTable``): in each HandDone
        self.frames: deque[tuple[int, int, views.Views[ServerMessage]]] = deque()  # (hand, seq, views)
        self.pending: Deal | None = None
        self.last_hand_end = -1e18
        self.turn: _Turn | None = None
        self.banks: dict[int, int] = {}  # seat -> time banks left
        self.spent: dict[str, int] = {}  # player -> banks spent in the hand under way
        self.away: set[int] = set()  # seats acted for at once
        self.applied: set[tuple[str, str]] = set()  # (player, action id) applied in the hand under way
        self.hold: HoldReason | None = None
        self.hold_until: float | None = None
        self.closed = False
        self.chat_times: dict[str, deque[float]] = {}
        self.hands_played = 0
        self.actions = 0
        self.metrics = metrics
        self.shown: Hand | None = None  # the hand just over, for snapshots until the seats arrive
        self.stakes: Level | None = None  # the current level (the coordinator's), for snapshots between hands
        # follows that came before the table's first seats (a client may join a table as soon as
        # it exists, before the coordinator's first update reaches it): answered when they come
        self.early_follows: list[Follow] = []

    # -- the loop ---------------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            while not self.closed:
                wake = self._wake_at()
                message: object | None
                if wake is None:
                    message = await self.inbox.get()
                else:
                    delay = wake - self.clock.now()
                    message = self.inbox.get_nowait()
                    if message is None and delay > 0:
                        message = await self.inbox.get(within=self.clock.to_wall(delay))
                now = self.clock.now()
                if message is not None:
                    try:
                        self._handle(message, now)
                    except Exception:
                        # one message this table cannot take must not stop it for every player
                        # at it: the message is dropped, the table goes on
                        log.exception("table %s: %s refused", self.table_id, type(message).__name__)
                try:
                    self._on_time(self.clock.now())
                except Exception:
                    log.exception("table %s: its clock failed", self.table_id)
                    # a wake time left in the past would spin without ever yielding
                    await asyncio.sleep(self.clock.to_wall(1.0))
        finally:
            self.bus.close_inbox(self.inbox.address)

    def _wake_at(self) -> float | None:
        if self.turn is not None:
            return self._phase_end(self.turn)
        if self.pending is not None and self.hand is None:
            return self.last_hand_end + self.hand_gap
        return None

    def _on_time(self, now: float) -> None:
        if self.hand is None and self.pending is not None and now >= self.last_hand_end + self.hand_gap:
            deal, self.pending = self.pending, None
            self._deal(deal, now)
        turn = self.turn
        if turn is not None and self.hand is not None and now >= self._phase_end(turn):
            self._clock_ran_out(turn, now)

    def _handle(self, message: object, now: float) -> None:
        if isinstance(message, Request):
            self._request(message, now)
        elif isinstance(message, Deal):
            self.pending = message
        elif isinstance(message, TableUpdate):
            self._update(message, now)
        elif isinstance(message, Follow):
            self._follow(message, now)
        else:
            log.warning("table %s: ignored %r", self.table_id, type(message).__name__)

    # -- from the coordinator ---------------------------------------------------------------------

    def _update(self, update: TableUpdate, now: float) -> None:
        self.table = Table.from_snapshot(update.table)
        self.shown = None
        self.level = update.level or self.level
        self.stakes = update.stakes or self.stakes
        if self.hand is None:
            if update.time_banks:
                self.banks = dict(update.time_banks)
            by_seat = {seated.seat: seated for seated in self.table.players}
            for seat, change in update.changes:
                self._publish(views.seat_changed(seat, change, by_seat.get(seat)), now)
            if update.hold is not None and (update.hold, update.hold_until) != (self.hold, self.hold_until):
                until = None if update.hold_until is None else milliseconds(update.hold_until)
                self._publish(views.table_held(update.hold, until), now)
            self.hold, self.hold_until = update.hold, update.hold_until
        if update.closed:
            self.closed = True
            self._publish(views.public(TableClosed()), now)
        self._answer_early_follows(now)

    def _answer_early_follows(self, now: float) -> None:
        early, self.early_follows = self.early_follows, []
        for follow in early:
            self._follow(follow, now)

    def _deal(self, deal: Deal, now: float) -> None:
        command = deal.command
        self.table = Table.from_snapshot(deal.table)
        self.level = command.level
        self.hold = self.hold_until = None
        self._answer_early_follows(now)
        hand = Hand(command.setup, rng=self.rng)
        self.hand = hand
        self.hand_started_at = now
        self.hand_views = views.HandViews(command.hand_number)
        self.position = 0
        self.banks = dict(command.time_banks)
        self.spent = {}
        self.applied = set()
        self.away = {seat.seat for seat in command.setup.seats if seat.absent}
        while self.frames and self.frames[0][0] < command.hand_number - (HISTORY_HANDS - 1):
            self.frames.popleft()
        self._flush(now)
        self._next_turn(now)

    # -- requests from players ----------------------------------------------------------------------

    def _request(self, request: Request, now: float) -> None:
        message = request.message
        caller = request.caller
        if isinstance(message, Act):
            self._act(caller, message, now, request.received_at)
        elif isinstance(message, TimeBank):
            self._time_bank(caller, message, now)
        elif isinstance(message, SitOut | SitIn):
            self._sit(caller, isinstance(message, SitOut), message.request_id, now)
        elif isinstance(message, Chat):
            self._chat(caller, message, now)

    def _reply(self, caller: Caller, message: ServerMessage) -> None:
        self.bus.publish(session_channel(caller.session_id), ToSession(message))

    def _error(self, caller: Caller, code: ErrorCode, text: str, request_id: str | None) -> None:
        self._reply(caller, Error(code=code, message=text, request_id=request_id, fatal=False))

    def _seat_of(self, player: str | None) -> int | None:
        if player is None:
            return None
        if self.hand is not None and not self.hand.is_over:
            for entry in self.hand.setup.seats:
                if entry.player == player:
                    return entry.seat
        if self.table is not None:
            return self.table.seat_of(player)
        return None

    def _act(self, caller: Caller, act: Act, now: float, received_at: float) -> None:
        seat = self._seat_of(caller.player)
        if seat is None:
            self._error(
                caller, ErrorCode.NOT_SEATED, f"you have no seat at table {self.table_id}", act.action_id
            )
            return
        hand = self.hand
        if hand is None or self.hand_views is None or act.hand_number != self.hand_views.hand_number:
            current = None if self.hand_views is None else self.hand_views.hand_number
            self._error(
                caller,
                ErrorCode.STALE_HAND,
                f"hand {act.hand_number} is not the hand being played at table {self.table_id} ({current})",
                act.action_id,
            )
            return
        applied = (caller.player or "", act.action_id)
        if applied in self.applied:
            self._reply(caller, Ack(request_id=act.action_id))  # a resend: applied once already
            return
        if act.amount is not None:
            action: Action = BetOrRaiseTo(act.amount)
        else:
            action = _ACTIONS[act.action]
        try:
            hand.verify_act(action, seat=seat)
        except (NotYourTurn, HandOver) as error:
            self._error(caller, ErrorCode.NOT_YOUR_TURN, str(error), act.action_id)
            return
        except HandError as error:
            self._error(caller, ErrorCode.ILLEGAL_ACTION, str(error), act.action_id)
            return
        self._charge_banks(now)
        hand.act(action, seat=seat)
        self.applied.add(applied)
        self.actions += 1
        if seat in self.away:
            self._back(seat, caller.player, now)
        self._flush(now)
        self._reply(caller, Ack(request_id=act.action_id))
        if self.metrics is not None:
            self.metrics.actions += 1
            if received_at:
                self.metrics.action_latency.observe(time.perf_counter() - received_at)
        self._next_turn(now)

    def _time_bank(self, caller: Caller, message: TimeBank, now: float) -> None:
        seat = self._seat_of(caller.player)
        turn = self.turn
        if seat is None:
            self._error(
                caller, ErrorCode.NOT_SEATED, f"you have no seat at table {self.table_id}", message.request_id
            )
            return
        if self.hand_views is None or message.hand_number != self.hand_views.hand_number:
            self._error(caller, ErrorCode.STALE_HAND, "that hand is not being played", message.request_id)
            return
        if turn is None or turn.seat != seat:
            self._error(caller, ErrorCode.NOT_YOUR_TURN, "it is not your turn", message.request_id)
            return
        left = turn.clock.banks_available - turn.banks_started
        if left <= 0:
            self._error(caller, ErrorCode.NOT_AVAILABLE, "you have no time bank left", message.request_id)
            return
        if turn.banks_started == 0:
            # the rest of the shot clock is given up: the first bank starts now
            turn.clock = ActionClock(
                started_at=now - turn.clock.shot_clock,
                shot_clock=turn.clock.shot_clock,
                banks_available=turn.clock.banks_available,
                seat=seat,
                player=turn.player,
            )
        self._start_bank(turn, now)
        if message.request_id is not None:
            self._reply(caller, Ack(request_id=message.request_id))

    def _sit(self, caller: Caller, away: bool, request_id: str | None, now: float) -> None:
        seat = self._seat_of(caller.player)
        if seat is None or caller.player is None:
            self._error(
                caller, ErrorCode.NOT_SEATED, f"you have no seat at table {self.table_id}", request_id
            )
            return
        if self.hand is None and self.pending is not None:
            self.pending = _with_absent(self.pending, caller.player, away)
        if away and seat not in self.away:
            self._away(seat, caller.player, now)
            turn = self.turn
            if turn is not None and turn.seat == seat:
                self._clock_ran_out(turn, now, at_once=True)
        elif not away and seat in self.away:
            self._back(seat, caller.player, now)
        if request_id is not None:
            self._reply(caller, Ack(request_id=request_id))

    def _chat(self, caller: Caller, chat: Chat, now: float) -> None:
        player = caller.player
        if player is None:
            self._error(caller, ErrorCode.FORBIDDEN, "only players seated here may chat", chat.request_id)
            return
        if self._seat_of(player) is None:
            self._error(
                caller, ErrorCode.NOT_SEATED, f"you have no seat at table {self.table_id}", chat.request_id
            )
            return
        times = self.chat_times.setdefault(player, deque())
        while times and times[0] <= now - CHAT_WINDOW_SECONDS:
            times.popleft()
        if len(times) >= CHAT_LINES:
            self._error(
                caller, ErrorCode.RATE_LIMITED, f"at most {CHAT_LINES} lines per 10 s", chat.request_id
            )
            return
        times.append(now)
        line = ChatLine(table_id=self.table_id, player=player, text=chat.text, at_ms=milliseconds(now))
        self.bus.publish(self.channel, ToSession(line))
        if chat.request_id is not None:
            self._reply(caller, Ack(request_id=chat.request_id))

    # -- the clock ---------------------------------------------------------------------------------

    def _phase_end(self, turn: _Turn) -> float:
        if turn.banks_started == 0:
            return turn.clock.shot_clock_expires_at
        return turn.clock.bank_expires_at(turn.banks_started)

    def _next_turn(self, now: float) -> None:
        hand = self.hand
        self.turn = None
        if hand is None:
            return
        if hand.is_over:
            self._hand_over(now)
            return
        legal = hand.turn()
        assert legal is not None
        seat = legal.seat
        player = next(entry.player for entry in hand.setup.seats if entry.seat == seat)
        if seat in self.away:
            # away: acted for at once (no shot clock: a table of absent players does not wait); the
            # seat gets no `legal`, as it cannot act on it (docs/protocol.md, section 11)
            banks = self.banks.get(seat, 0)
            self._publish(
                views.public(Turn(seat=seat, deadline_ms=milliseconds(now), time_banks=banks, legal=None)),
                now,
            )
            self._play(_TIMEOUT, seat, now)
            return
        clock = ActionClock(
            started_at=now, shot_clock=self.shot_clock, banks_available=self.banks.get(seat, 0), seat=seat,
            player=player,
        )  # fmt: skip
        self.turn = _Turn(clock, seat, player)
        deadline = milliseconds(clock.shot_clock_expires_at)
        self._publish(views.turn(legal, deadline_ms=deadline, time_banks=self.banks.get(seat, 0)), now)

    def _start_bank(self, turn: _Turn, now: float) -> None:
        turn.banks_started += 1
        left = turn.clock.banks_available - turn.banks_started
        event = TimeBankUsed(
            seat=turn.seat,
            deadline_ms=milliseconds(turn.clock.bank_expires_at(turn.banks_started)),
            time_banks=left,
        )
        self._publish(views.public(event), now)

    def _clock_ran_out(self, turn: _Turn, now: float, *, at_once: bool = False) -> None:
        """The running phase of the turn ended: the next time bank starts, or the hand times the
        player out (CLK-2) and they are away from now on."""
        hand = self.hand
        assert hand is not None
        if not at_once and turn.banks_started < turn.clock.banks_available:
            self._start_bank(turn, now)
            return
        action = _TIMEOUT if at_once else timeout_due(hand, turn.clock, now)
        if action is None:
            return  # not yet: the clock's deadline is still ahead
        self._charge_banks(now)
        if turn.seat not in self.away:
            self._away(turn.seat, turn.player, now)
        self._play(action, turn.seat, now)

    def _charge_banks(self, now: float) -> None:
        turn = self.turn
        if turn is None or not turn.banks_started:
            return
        self.banks[turn.seat] = max(0, self.banks.get(turn.seat, 0) - turn.banks_started)
        self.spent[turn.player] = self.spent.get(turn.player, 0) + turn.banks_started
        turn.banks_started = 0

    def _play(self, action: Action, seat: int, now: float) -> None:
        hand = self.hand
        assert hand is not None
        self.turn = None
        hand.act(action, seat=seat)
        self._flush(now)
        self._next_turn(now)

    def _away(self, seat: int, player: str, now: float) -> None:
        self.away.add(seat)
        self._publish(self._seat_view(seat, SeatChange.AWAY, away=True), now)
        self._tell_coordinator(PlayerAway(player, True))

    def _back(self, seat: int, player: str | None, now: float) -> None:
        self.away.discard(seat)
        self._publish(self._seat_view(seat, SeatChange.BACK, away=False), now)
        if player is not None:
            self._tell_coordinator(PlayerAway(player, False))

    def _seat_view(self, seat: int, change: SeatChange, *, away: bool) -> views.Views[TableEventBody]:
        seated = None if self.table is None else self.table.player_at(seat)
        # the table's seats are as the hand began until the coordinator sends the new ones: during
        # a hand and after it, the seat's stack is the hand's
        hand = self.hand if self.hand is not None else self.shown
        if seated is not None and hand is not None:
            dealt = any(entry.seat == seat and entry.player == seated.player for entry in hand.setup.seats)
            if dealt:
                seated = replace(seated, stack=hand.stacks[seat])
        return views.seat_changed(seat, change, seated, away=away)

    def _tell_coordinator(self, message: object) -> None:
        try:
            self.bus.send(self.coordinator, message)
        except BusError as error:
            log.error("table %s: could not tell the coordinator %r: %s", self.table_id, message, error)

    # -- the end of a hand --------------------------------------------------------------------------

    def _hand_over(self, now: float) -> None:
        hand = self.hand
        hand_views = self.hand_views
        assert hand is not None and hand_views is not None
        self.turn = None
        self.hands_played += 1
        self.last_hand_end = now
        done = HandDone(
            table_id=self.table_id,
            hand_number=hand_views.hand_number,
            finishing_stacks=tuple(hand.finishing_stacks().items()),
            banks_spent=tuple(sorted(self.spent.items())),
            setup=hand.setup,
            events=tuple(hand.events),
            level=self.level,
            started_at=self.hand_started_at,
            ended_at=now,
            epoch=self.epoch,
        )
        self.hand = None
        self.shown = hand
        if self.metrics is not None:
            self.metrics.hands += 1
        self._tell_coordinator(done)

    # -- publishing ---------------------------------------------------------------------------------

    def _flush(self, now: float) -> None:
        """Publish the hand's events since the last flush."""
        hand = self.hand
        hand_views = self.hand_views
        if hand is None or hand_views is None:
            return
        new, self.position = hand.events_since(self.position)
        for event in new:
            event_views = hand_views.views(event)
            if event_views is not None:
                self._publish(event_views, now)

    def _publish(self, body: views.Views[TableEventBody], now: float) -> None:
        self.seq += 1
        seq = self.seq
        table_id = self.table_id
        frames: views.Views[ServerMessage] = body.map(
            lambda event: TableEvent(table_id=table_id, seq=seq, event=event)
        )
        number = self.hand_views.hand_number if self.hand_views is not None else 0
        self.frames.append((number, seq, frames))
        self.bus.publish(self.channel, TableFrames(table_id, seq, frames))

    # -- followers ---------------------------------------------------------------------------------

    def _follow(self, follow: Follow, now: float) -> None:
        if self.table is None and self.hand is None:
            self.early_follows.append(follow)
            return
        if follow.seat is not None:
            audience = views.Audience.seat(follow.seat)
        elif follow.operator:
            audience = views.Audience.operators
        else:
            audience = views.Audience.rail
        last = follow.last_seq
        held = self.frames
        # the events after ``last`` are all still held: none is missing, or the oldest held follows it
        covered = last is not None and (
            last == self.seq or (0 <= last < self.seq and held and held[0][1] <= last + 1)
        )
        if covered:
            assert last is not None
            frames = [copies.for_audience(audience) for _, seq, copies in held if seq > last]
        else:
            frames = [self.snapshot(audience, now)]
        self.bus.publish(session_channel(follow.caller.session_id), Resync(self.table_id, tuple(frames)))
        if follow.request_id is not None:
            self._reply(follow.caller, Ack(request_id=follow.request_id))

    def snapshot(self, audience: views.Audience, now: float) -> WireSnapshot:
        hand = self.hand if self.hand is not None else self.shown
        turn = self.turn
        stakes = self.stakes if hand is None else hand.setup
        state = views.TableState(
            table_id=self.table_id,
            tournament_id=self.tournament_id,
            seq=self.seq,
            level=self.level,
            small_blind=0 if stakes is None else stakes.small_blind,
            big_blind=0 if stakes is None else stakes.big_blind,
            ante=0 if stakes is None else stakes.ante,
            ante_kind=AnteKind.NONE if stakes is None else stakes.ante_kind,
            hand_number=None if self.hand_views is None else self.hand_views.hand_number,
            deadline_ms=None if turn is None else milliseconds(self._phase_end(turn)),
            time_banks=dict(self.banks),
            away=frozenset(self.away) if hand is not None else None,
            hold_reason=self.hold,
            hold_until_ms=None if self.hold_until is None else milliseconds(self.hold_until),
            closed=self.closed,
        )
        if hand is None and self.table is None:
            raise RuntimeError(f"table {self.table_id} has neither seats nor a hand yet")
        return views.snapshot(audience, state, table=self.table, hand=hand)
