"""The tournament director: a whole tournament between hands, as a pure state machine.

Inputs are method calls, each taking ``now`` (seconds on the clock ``start_at`` is on): a player
registers or unregisters (``register``, ``unregister``), buys a rebuy or an add-on (``rebuy``,
``add_on``) or declines a rebuy (``decline_rebuy``); a hand ended at a table with its finishing
stacks (``hand_ended``); the clock reached a moment (``tick``; ``next_wakeup`` says when the
next one is due); an operator command (``start``, ``pause``, ``resume``, ``cancel``,
``penalize``, ``disqualify``, ``sit_out``); the players' deal talks (``deal_ask``,
``deal_propose``, ``deal_accept``, ``deal_abandon``). Each returns the ``Command``s it gives, in
order: deal the next hand at a table with this setup (``DealHand``), seat or move players, close
a table, hold a table and why, post these transfers, and the announcements players and
operators see (a level, a break, the bubble, the final table, an elimination with its place and
prize, the end). A refused input raises a typed error (``DirectorError`` or the rule module's
own: ``RegistrationError``, ``DealError`` ...) and changes nothing. ``random.Random`` is given
(the OS CSPRNG in production, a seeded one in tests); nothing here reads a clock or does I/O.
The in-process simulation (``engine.tournament.simulation``) and the server's coordinator are
two drivers of this same code; neither holds a tournament rule.

What it decides, between hands only, with the rule modules:
- REG-1..5 through ``Registration``: buy-ins and fees, the waiting list, late registration
  (a late entrant takes a random empty seat at the idle table with the fewest players, a new
  table when every seat is taken, and is dealt in at once: REG-4), rebuys offered to a player
  who busts in the rebuy period (the seat is kept for ``REBUY_DECISION_SECONDS``, the table
  waits; no answer is a no), rebuys at or under the threshold between hands and add-ons in the
  add-on break (chips bought while the table is in a hand are added when it ends).
- SEAT-1/SEAT-2 at the start (``seating``), BRK-1/BRK-2/BAL-1/MOVE-1 after every hand through
  ``balancing.next_step`` over a ``TableIndex`` kept current here (O(log n) a plan).
- HFH-1 through ``HandForHand``: from ``bubble_margin`` players before the bubble, tables that
  finish hold until every hand under way has ended, then every table plays synchronized rounds;
  a round's busts are one batch (ELIM-2), the level clock stands still during it and loses the
  deduction. ``bubble_burst_in_sync`` records whether the bubble burst inside a round.
- ELIM-1/ELIM-2/END-1 through ``Standings``; prizes are paid as players finish once the payout
  structure is final (late registration and every purchase closed; the overlay of a guarantee
  is posted then), the rest at the end. LVL-1 and BRK-T1 through ``LevelClock``: a level applies
  from the next hand dealt; a table reaching a break finishes its hand and waits (``TableHeld``
  with ``HoldReason.BREAK``); CLK-3 time banks (at the start, at every break, at the bubble).
- PEN-1 (penalties now, disqualification when the player's hand ends), DEAL-1..4 at the final
  table (the clock stops while every player talks), CANCEL-1 on ``cancel``, pause and resume.

Saved state (CRASH-1): ``snapshot()`` is every piece of state as plain, versioned frozen
dataclasses (msgspec encodes and decodes them); ``Director.restore(snapshot, rng)`` rebuilds it.
A hand in progress is not part of it: its table is restored as it was when the hand began and
``recover(now)`` deals that hand again (same hand number and level), so a crash costs nobody a
chip. ``table_lost(table_id, now)`` does the same for one table in a live director (the process
playing its hands died). Invariants: chips in play = chips issued - chips removed
(``check_chips``); a player sits at most once and every player left sits somewhere or waits for
a seat (``check_seats``); no table in a hand is touched.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from engine.betting import HandSetup
from engine.table import (
    ButtonDraw,
    FirstButton,
    SeatedPlayer,
    Table,
    TableError,
    TableSettings,
    TableSnapshot,
)
from engine.tournament.balancing import (
    Move,
    Redraw,
    StartBreak,
    TableBreak,
    TableIndex,
    TablesView,
    Wait,
    next_step,
)
from engine.tournament.config import Level, TournamentConfig, validate_config
from engine.tournament.deals import (
    DealError,
    DealMethod,
    DealNegotiation,
    DealPlan,
    NegotiationPhase,
    conclude_deal,
    propose_deal,
    verify_deal,
)
from engine.tournament.handforhand import HandForHand, HandForHandSnapshot, hand_for_hand_due
from engine.tournament.levels import (
    BreakKind,
    BreakWindow,
    LevelClock,
    clock_for,
    hand_for_hand_deduction_seconds,
)
from engine.tournament.payouts import (
    PayoutStructure,
    effective_guarantee,
    overlay_transfer,
    prizes_for_finishes,
    satellite_is_over,
    structure_for,
)
from engine.tournament.registration import (
    CloseReason,
    LateRegistrationEnded,
    Outcome,
    Promoted,
    PurchaseKind,
    Registered,
    Registration,
    RegistrationSnapshot,
    Unregistered,
    Waitlisted,
)
from engine.tournament.registration import Purchased as Bought
from engine.tournament.seating import open_tables, seat_players, table_count
from engine.tournament.settlement import (
    InMoneyMethod,
    Settlement,
    SettlementKind,
    StoppedTournament,
    settle,
)
from engine.tournament.standings import Bust, Finish, Standings, StandingsSnapshot, tournament_over
from engine.tournament.transfers import Account, Reason, Transfer

DIRECTOR_SNAPSHOT_VERSION = 1
# how long a player who busts in the rebuy period has to decide; the table waits for them
REBUY_DECISION_SECONDS = 20


# --- errors ---------------------------------------------------------------------------------------


class DirectorError(ValueError):
    """An input the director refuses now; nothing changed. The message says why."""


class WrongStatus(DirectorError):
    """The tournament is not in a state that takes this input (not started, over, cancelled)."""


class UnknownTable(DirectorError):
    """No such table in play."""


class NoHandAtTable(DirectorError):
    """A hand result for a table that has no hand under way, or stacks that do not fit it."""


class NotPlaying(DirectorError):
    """The player is not seated in this tournament."""


class NoRebuyOffered(DirectorError):
    """The player has no rebuy decision pending."""


# --- values ---------------------------------------------------------------------------------------


class Status(StrEnum):
    REGISTERING = "registering"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class HoldReason(StrEnum):
    """Why an idle table does not deal."""

    BREAK = "break"  # BRK-T1: a scheduled or add-on break
    HAND_FOR_HAND = "hand-for-hand"  # HFH-1: waiting for the other tables
    BALANCING = "balancing"  # a plan waits for a hand elsewhere to end
    BREAKING = "breaking"  # BRK-1: the table closes once its players have seats elsewhere
    PAUSED = "paused"  # an operator paused the tournament
    DEAL = "deal"  # DEAL-2: the players are talking about a deal
    REBUY = "rebuy"  # a busted player decides whether to rebuy
    SHORT_HANDED = "short-handed"  # fewer than two players: waiting for the balancer


class Stop(StrEnum):
    """What stops the level clock (LVL-1 counts play time only)."""

    OPERATOR = "operator"
    DEAL = "deal"
    HAND_FOR_HAND = "hand-for-hand"
    OUTAGE = "outage"  # the server was down (CRASH-1): no level time passed


@dataclass(frozen=True, slots=True)
class RunningHand:
    """A hand under way: rolled back and dealt again by ``recover`` after a restore."""

    table_id: int
    hand_number: int
    level_index: int
    started_at: float
    synchronized: bool


@dataclass(frozen=True, slots=True)
class PendingRebuy:
    """A busted player deciding whether to rebuy; their seat at ``table_id`` is kept meanwhile."""

    player: str
    table_id: int
    seat: int
    until: float
    start_stack: int  # chips they started the hand with, for ELIM-2 if they decline
    seat_after_button: int


# --- commands ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PostTransfers:
    """Move this money through the ledger, in order (each transfer is idempotent by its key)."""

    transfers: tuple[Transfer, ...]


@dataclass(frozen=True, slots=True)
class DealHand:
    """Deal hand ``hand_number`` at ``table_id`` with ``setup`` (the table is busy until
    ``hand_ended``). ``level`` is 1-based; ``time_banks`` are each dealt-in seat's banks (CLK-3)."""

    table_id: int
    hand_number: int
    setup: HandSetup
    level: int
    synchronized: bool
    shot_clock_seconds: int
    time_banks: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class TableOpened:
    """A table opens with these players (its first button drawn when ``draw`` is given)."""

    table_id: int
    seats: tuple[SeatedPlayer, ...]
    draw: ButtonDraw | None


@dataclass(frozen=True, slots=True)
class PlayerSeated:
    """A late entrant (REG-4), or a player back in their seat after a rebuy."""

    table_id: int
    seat: int
    player: str
    stack: int


@dataclass(frozen=True, slots=True)
class PlayerMoved:
    """``move`` was carried out between hands; the player brought ``stack`` chips."""

    move: Move
    stack: int


@dataclass(frozen=True, slots=True)
class TableClosed:
    table_id: int


@dataclass(frozen=True, slots=True)
class ButtonDrawn:
    """SEAT-2 at a table (a table that opened short-handed, or the final table's redraw, BRK-2)."""

    table_id: int
    draw: ButtonDraw | None  # None: the button was placed on seat 1 (``FirstButton.SEAT_ONE``)


@dataclass(frozen=True, slots=True)
class TablesRedrawn:
    """BRK-2: everyone was reseated at random over ``tables`` (the ``PlayerMoved`` before it)."""

    tables: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TableHeld:
    """An idle table does not deal for ``reason`` (until ``until`` when that is known)."""

    table_id: int
    reason: HoldReason
    until: float | None = None


@dataclass(frozen=True, slots=True)
class ChipsAdded:
    """A rebuy or an add-on reached the player's stack."""

    table_id: int
    seat: int
    player: str
    chips: int
    kind: PurchaseKind


@dataclass(frozen=True, slots=True)
class PlayerRegistered:
    player: str
    late: bool
    waiting_position: int | None  # on the waiting list (REG-2), else None


@dataclass(frozen=True, slots=True)
class PlayerUnregistered:
    player: str


@dataclass(frozen=True, slots=True)
class PlayerPromoted:
    """REG-2: the first waiting player took a place that came free."""

    player: str


@dataclass(frozen=True, slots=True)
class TournamentStarted:
    players: int
    tables: int


@dataclass(frozen=True, slots=True)
class RegistrationClosed:
    reason: CloseReason


@dataclass(frozen=True, slots=True)
class LevelStarted:
    number: int  # 1-based
    level: Level


@dataclass(frozen=True, slots=True)
class BreakStarted:
    kind: BreakKind
    until: float


@dataclass(frozen=True, slots=True)
class BreakEnded:
    pass


@dataclass(frozen=True, slots=True)
class AddOnsOffered:
    """REG-5: the add-on window is open until ``until``; every player still in may buy one."""

    until: float


@dataclass(frozen=True, slots=True)
class PurchasesClosed:
    """No more rebuys, add-ons or entries: the prize pool and the payouts are final."""

    pool: int
    places_paid: int


@dataclass(frozen=True, slots=True)
class RebuyOffered:
    player: str
    until: float


@dataclass(frozen=True, slots=True)
class Purchased:
    player: str
    kind: PurchaseKind
    number: int
    chips: int


@dataclass(frozen=True, slots=True)
class HandForHandStarted:
    players_left: int
    places_paid: int


@dataclass(frozen=True, slots=True)
class HandForHandEnded:
    hands: int


@dataclass(frozen=True, slots=True)
class BubbleBurst:
    in_sync: bool  # the bursting elimination came in a synchronized hand-for-hand round


@dataclass(frozen=True, slots=True)
class FinalTable:
    table_id: int


@dataclass(frozen=True, slots=True)
class PlayerEliminated:
    player: str
    place: int
    shared_places: int
    prize: int  # cents (the prize owed, paid now or once the structure is final)
    table_id: int


@dataclass(frozen=True, slots=True)
class PlayerPenalized:
    player: str
    hands: int


@dataclass(frozen=True, slots=True)
class PlayerDisqualified:
    player: str
    place: int
    chips_removed: int


@dataclass(frozen=True, slots=True)
class TournamentPaused:
    pass


@dataclass(frozen=True, slots=True)
class TournamentResumed:
    pass


@dataclass(frozen=True, slots=True)
class DealTalks:
    """DEAL-2: the phase of the talks and who asked/accepted; ``plan`` once proposed."""

    phase: NegotiationPhase
    asked: tuple[str, ...]
    accepted: tuple[str, ...]
    plan: DealPlan | None


@dataclass(frozen=True, slots=True)
class DealDone:
    """DEAL-4: the agreed deal was paid; ``ends`` when nothing is left to play for."""

    shares: tuple[tuple[str, int], ...]
    left_to_play: int
    ends: bool


@dataclass(frozen=True, slots=True)
class TournamentEnded:
    finishes: tuple[Finish, ...]
    prize_pool: int
    prizes: tuple[tuple[str, int], ...]  # every player paid, with the cents they received


@dataclass(frozen=True, slots=True)
class TournamentCancelled:
    kind: SettlementKind


Command = (
    PostTransfers
    | DealHand
    | TableOpened
    | PlayerSeated
    | PlayerMoved
    | TableClosed
    | ButtonDrawn
    | TablesRedrawn
    | TableHeld
    | ChipsAdded
    | PlayerRegistered
    | PlayerUnregistered
    | PlayerPromoted
    | TournamentStarted
    | RegistrationClosed
    | LevelStarted
    | BreakStarted
    | BreakEnded
    | AddOnsOffered
    | PurchasesClosed
    | RebuyOffered
    | Purchased
    | HandForHandStarted
    | HandForHandEnded
    | BubbleBurst
    | FinalTable
    | PlayerEliminated
    | PlayerPenalized
    | PlayerDisqualified
    | TournamentPaused
    | TournamentResumed
    | DealTalks
    | DealDone
    | TournamentEnded
    | TournamentCancelled
)


# --- saved state ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DealTalksSnapshot:
    players: tuple[str, ...]
    phase: NegotiationPhase
    asked: tuple[str, ...]
    accepted: tuple[str, ...]
    plan: DealPlan | None


@dataclass(frozen=True, slots=True)
class DirectorSnapshot:
    """Every piece of a tournament's state but the hands in progress, as plain data."""

    version: int
    config: TournamentConfig
    status: Status
    registration: RegistrationSnapshot
    standings: StandingsSnapshot | None
    tables: tuple[TableSnapshot, ...]
    running: tuple[RunningHand, ...]
    hands_dealt: int
    stopped_seconds: int
    deducted_seconds: int
    stops: tuple[Stop, ...]
    stopped_at: float | None
    level_index: int
    break_announced: int | None  # end of the break announced last (seconds since the start)
    add_ons: str  # "before", "open", "closed"
    purchases_final: bool
    barrier: HandForHandSnapshot | None
    hand_for_hand: str  # "off", "pending", "round"
    round_started: int
    round_on_bubble: bool
    bubble_burst_in_sync: bool | None
    final_table_announced: bool
    held: tuple[tuple[int, HoldReason], ...]
    breaking: int | None
    plan_hold: tuple[int, ...]
    button_pending: tuple[int, ...]
    last_elimination_table: int | None
    moved: tuple[tuple[str, int], ...]
    chips_issued: int
    chips_removed: int
    owed: tuple[tuple[str, int, PurchaseKind], ...]
    pending_rebuys: tuple[PendingRebuy, ...]
    pending_busts: tuple[tuple[int, tuple[Bust, ...]], ...]
    disqualify_after_hand: tuple[str, ...]
    waiting_for_seat: tuple[str, ...]
    paid: tuple[int, ...]  # places whose prizes were posted
    deferred: tuple[Finish, ...]  # finishes whose prizes wait for the final structure
    overlay_posted: int
    prizes_posted: tuple[tuple[str, int], ...]
    ticket_holders: tuple[str, ...]
    time_banks: tuple[tuple[str, int], ...]
    bank_offset: int
    deal: DealTalksSnapshot | None
    deals_done: int
    continuation: PayoutStructure | None
    next_table_id: int
    now: float
    rng_state: tuple[int, tuple[int, ...], float | None] | None
    # a default: snapshots saved before it was kept still decode
    players_at_end: int = 0


# --- the director ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Table:
    """A table in play: its seats and button (``Table``) and the director's bookkeeping."""

    table: Table
    hand: RunningHand | None = None
    setup: HandSetup | None = None


@dataclass(slots=True)
class _Hold:
    by_table: dict[int, HoldReason] = field(default_factory=dict)
    by_reason: dict[HoldReason, set[int]] = field(default_factory=dict)

    def put(self, table_id: int, reason: HoldReason) -> bool:
        """Hold ``table_id`` for ``reason``; True when that is news."""
        before = self.by_table.get(table_id)
        if before is reason:
            return False
        if before is not None:
            self.by_reason[before].discard(table_id)
        self.by_table[table_id] = reason
        self.by_reason.setdefault(reason, set()).add(table_id)
        return True

    def release(self, table_id: int) -> None:
        before = self.by_table.pop(table_id, None)
        if before is not None:
            self.by_reason[before].discard(table_id)

    def tables(self, reason: HoldReason) -> list[int]:
        return sorted(self.by_reason.get(reason, ()))


class Director:
    """One tournament's director (see the module docstring)."""

    def __init__(
        self,
        config: TournamentConfig,
        *,
        start_at: float,
        rng: random.Random,
        start_wall_seconds: int | None = None,
        first_table_id: int = 1,
    ) -> None:
        """``first_table_id``: the id of the tournament's first table (the others follow it), so
        that a server running several tournaments numbers every table once."""
        self.config = validate_config(config)
        self.rng = rng
        self.registration = Registration(config, start_at, start_wall_seconds=start_wall_seconds)
        self.clock: LevelClock = clock_for(config, start_wall_seconds=self.registration.start_wall_seconds)
        self.status = Status.REGISTERING
        self.standings: Standings | None = None
        self.settings = TableSettings(
            size=config.table_size,
            button_rule=config.button_rule,
            first_button=config.first_button,
            join_rule=config.late_entry_position,
            limit=config.limit,
        )
        self._tables: dict[int, _Table] = {}
        self._live: dict[int, Table] = {}  # the same tables, for the planner's view
        self._view = TablesView(self._live)
        self._index = TableIndex(config.table_size)
        self._seat_of: dict[str, int] = {}  # player -> table id
        self.hands_dealt = 0
        self._stopped_seconds = 0  # level clock stood still (HFH rounds, pauses, deal talks)
        self._deducted_seconds = 0  # HFH-1 deductions
        self._stops: set[Stop] = set()
        self._stopped_at: float | None = None
        self.level_index = 0
        self._break_announced: int | None = None
        self._add_ons = "before"
        self._purchases_final = False
        self._barrier: HandForHand | None = None
        self._hfh = "off"
        self._round_started = 0
        self._round_on_bubble = False
        self.bubble_burst_in_sync: bool | None = None
        self._final_table_announced = False
        self._hold = _Hold()
        self._breaking: int | None = None
        self._plan_hold: set[int] = set()
        self._button_pending: set[int] = set()
        self._last_elimination_table: int | None = None
        self._moved: dict[str, int] = {}
        self.chips_issued = 0
        self.chips_removed = 0
        self._owed: dict[str, list[tuple[int, PurchaseKind]]] = {}
        self._pending_rebuys: dict[str, PendingRebuy] = {}
        self._pending_busts: dict[int, list[Bust]] = {}
        self._disqualify_after_hand: set[str] = set()
        self._waiting_for_seat: list[str] = []
        self._paid: set[int] = set()
        self._deferred: list[Finish] = []
        self._overlay_posted = 0
        self._prizes_posted: dict[str, int] = {}
        self._ticket_holders: set[str] = set()
        self._banks: dict[str, int] = {}
        self._bank_offset = 0
        self._negotiation: DealNegotiation | None = None
        self.deals_done = 0
        self._continuation: PayoutStructure | None = None
        self._next_table_id = first_table_id
        self._table_base = first_table_id - 1
        self._players_at_end = 0
        self._level_at_cache: tuple[tuple[int, int, int], int | None] | None = None
        self._wakeup_cache: tuple[tuple[object, ...], float | None] | None = None
        self._structure_cache: tuple[tuple[int, int], PayoutStructure] | None = None
        self._out: list[Command] = []
        self._now = float(start_at)  # the latest ``now`` given, for the level clock and wakeups

    # ==========================================================================================
    # reading

    @property
    def start_at(self) -> float:
        return self.registration.start_at

    def elapsed(self, now: float) -> int:
        """Whole seconds since the start (0 before it)."""
        return max(0, int(now - self.registration.start_at))

    @property
    def players_left(self) -> int:
        """Players still in (registered players before the start; at the end, those it ended with)."""
        if self.standings is None:
            return self.registration.active_count
        if self.status is Status.FINISHED:
            return self._players_at_end
        return self.standings.players_left

    @property
    def table_count(self) -> int:
        return len(self._tables)

    def has_table(self, table_id: int) -> bool:
        return table_id in self._tables

    def players_seated(self) -> list[str]:
        """Everyone seated, table by table (O(players))."""
        return [s.player for t in sorted(self._tables) for s in self._tables[t].table.players]

    @property
    def tables(self) -> dict[int, Table]:
        """The tables in play by id (read only: the director alone changes them)."""
        return {table_id: entry.table for table_id, entry in self._tables.items()}

    def table(self, table_id: int) -> Table:
        entry = self._tables.get(table_id)
        if entry is None:
            raise UnknownTable(f"table {table_id} is not in play")
        return entry.table

    def table_of(self, player: str) -> int | None:
        """The table ``player`` sits at (``None``: not seated)."""
        return self._seat_of.get(player)

    def running_hands(self) -> tuple[RunningHand, ...]:
        return tuple(entry.hand for entry in self._tables.values() if entry.hand is not None)

    def hold_reason(self, table_id: int) -> HoldReason | None:
        return self._hold.by_table.get(table_id)

    @property
    def now(self) -> float:
        """The latest ``now`` the director was given."""
        return self._now

    @property
    def purchases_final(self) -> bool:
        """Late registration and every purchase are over: the prize pool and payouts are final."""
        return self._purchases_final

    @property
    def paused(self) -> bool:
        """An operator paused the tournament."""
        return Stop.OPERATOR in self._stops

    def next_level_at(self) -> float | None:
        """When the next level begins (on the clock ``start_at`` is on), while the clock runs."""
        at = self._next_level_at()
        return None if at is None else self.start_at + at

    @property
    def hand_for_hand(self) -> bool:
        return self._hfh != "off"

    @property
    def hand_for_hand_hands(self) -> int:
        return 0 if self._barrier is None else self._barrier.hands

    def structure(self) -> PayoutStructure:
        """The payout structure for the money in the pool now (final once ``purchases_final``)."""
        if self._continuation is not None:
            return self._continuation
        if self._purchases_final and self._structure_cache is not None:
            return self._structure_cache[1]  # nothing changes the pool any more
        pool = max(self.registration.pool_contributions, effective_guarantee(self.config))
        key = (pool, self.registration.entries)
        if self._structure_cache is None or self._structure_cache[0] != key:
            self._structure_cache = (key, structure_for(self.config, pool, self.registration.entries))
        return self._structure_cache[1]

    @property
    def prize_pool(self) -> int:
        return self.registration.pool_contributions + self._overlay_posted

    def time_banks(self, player: str) -> int:
        return self._banks.get(player, 0) + self._bank_offset

    @property
    def prizes_paid(self) -> dict[str, int]:
        """Cents posted to each player so far: prizes and deal shares."""
        return dict(self._prizes_posted)

    def chips_in_play(self) -> int:
        """Every stack at every table (O(tables)); with chips bought but not yet added."""
        owed = sum(chips for items in self._owed.values() for chips, _ in items)
        return sum(entry.table.chips for entry in self._tables.values()) + owed

    # ==========================================================================================
    # inputs: registration and purchases

    def register(self, player: str, now: float, balance: int, *, via_ticket: bool = False) -> list[Command]:
        """REG-1/2/4: take the buy-in and fee; a late entrant is seated and dealt in at once."""
        if self.status in (Status.FINISHED, Status.CANCELLED):
            raise WrongStatus(f"tournament {self.config.id} is {self.status}")
        outcome = self.registration.register(player, now, balance, via_ticket)
        self._post(outcome.transfers)
        self._registration_events(outcome)
        if self.status is Status.RUNNING:
            assert self.standings is not None
            self.standings.add_player(player)
            self._add_banks(player)
            self.chips_issued += self.config.starting_stack
            self._seat_newcomer(player, self.config.starting_stack, now)
            self._structure_changed(now)
        return self._flush()

    def unregister(self, player: str, now: float) -> list[Command]:
        """REG-2/REG-3: refund buy-in and fee; the first waiting player takes the place."""
        outcome = self.registration.unregister(player, now)
        self._post(outcome.transfers)
        self._registration_events(outcome)
        return self._flush()

    def rebuy(self, player: str, now: float, balance: int) -> list[Command]:
        """REG-5: a rebuy, for a busted player deciding or a seated player at or under the
        threshold. Chips reach the stack now, or when the player's hand ends."""
        self._require_running()
        pending = self._pending_rebuys.get(player)
        if pending is not None:
            outcome = self.registration.rebuy(player, now, balance, 0)
            chips = self._purchase(outcome)
            del self._pending_rebuys[player]
            entry = self._tables[pending.table_id]
            entry.table.seat_player(pending.seat, player, chips)
            self._seat_of[player] = pending.table_id
            self._out.append(PlayerSeated(pending.table_id, pending.seat, player, chips))
            self._rebuy_decided(pending.table_id, now)
            return self._flush()
        table_id = self._seat_of.get(player)
        if table_id is None:
            raise NotPlaying(f"{player} is not seated in {self.config.id}")
        seated = self._seated(player)
        outcome = self.registration.rebuy(player, now, balance, seated.stack)
        self._give_chips(player, self._purchase(outcome), PurchaseKind.REBUY)
        return self._flush()

    def purchase_undone(self, player: str, keys: tuple[str, ...]) -> list[Command]:
        """A purchase refunded before it was recorded (CRASH-1): its keys are not used again."""
        self.registration.purchase_undone(player, keys)
        return self._flush()

    def preview_register(self, player: str, now: float, balance: int) -> tuple[Transfer, ...]:
        """What ``register`` would post now, changing nothing (``Registration.preview_register``):
        a server posts it first, then registers (the same keys: the second post moves nothing)."""
        if self.status in (Status.FINISHED, Status.CANCELLED):
            raise WrongStatus(f"tournament {self.config.id} is {self.status}")
        return self.registration.preview_register(player, now, balance)

    def preview_rebuy(self, player: str, now: float, balance: int) -> tuple[Transfer, ...]:
        """What ``rebuy`` would post now, changing nothing."""
        self._require_running()
        if player in self._pending_rebuys:
            return self.registration.preview_rebuy(player, now, balance, 0)
        return self.registration.preview_rebuy(player, now, balance, self._seated(player).stack)

    def preview_add_on(self, player: str, now: float, balance: int) -> tuple[Transfer, ...]:
        """What ``add_on`` would post now, changing nothing."""
        self._require_running()
        if player not in self._seat_of:
            raise NotPlaying(f"{player} is not seated in {self.config.id}")
        return self.registration.preview_add_on(player, now, balance)

    def decline_rebuy(self, player: str, now: float) -> list[Command]:
        """The busted player does not rebuy: they are eliminated with their hand's busts."""
        pending = self._pending_rebuys.pop(player, None)
        if pending is None:
            raise NoRebuyOffered(f"{player} has no rebuy to decide")
        self._pending_busts.setdefault(pending.table_id, []).append(
            Bust(player, pending.start_stack, pending.table_id, pending.seat_after_button)
        )
        self._rebuy_decided(pending.table_id, now)
        return self._flush()

    def add_on(self, player: str, now: float, balance: int) -> list[Command]:
        """REG-5: an add-on in the add-on break; the chips reach the stack now or after the hand."""
        self._require_running()
        if player not in self._seat_of:
            raise NotPlaying(f"{player} is not seated in {self.config.id}")
        outcome = self.registration.add_on(player, now, balance)
        self._give_chips(player, self._purchase(outcome), PurchaseKind.ADD_ON)
        return self._flush()

    # ==========================================================================================
    # inputs: the clock

    def start(self, now: float) -> list[Command]:
        """SEAT-1/SEAT-2: start now (an operator's "start now", or the scheduled time reached)."""
        if self.status is not Status.REGISTERING:
            raise WrongStatus(f"tournament {self.config.id} is {self.status}, not registering")
        outcome = self.registration.start(now)
        self._post(outcome.transfers)
        self._registration_events(outcome)
        self.status = Status.RUNNING
        players = self.registration.active
        self.standings = Standings(players)
        for player in players:
            self._add_banks(player)
        seating = seat_players(players, self.config.table_size, self.rng)
        opened = open_tables(seating, self.settings, self.config.starting_stack, self.rng)
        self.chips_issued += self.config.starting_stack * len(players)
        for number in sorted(opened.tables):
            table = opened.tables[number]
            table_id = table.table_id = self._table_base + number
            self._add_table(table)
            for seated in table.players:
                self._seat_of[seated.player] = table_id
            if len(table.players) < 2:
                self._button_pending.add(table_id)
            self._next_table_id = max(self._next_table_id, table_id + 1)
            self._out.append(TableOpened(table_id, table.players, opened.draws.get(number)))
        self._out.append(TournamentStarted(len(players), len(opened.tables)))
        self._out.append(LevelStarted(1, self.clock.levels[0]))
        for table_id in sorted(self._tables):
            self._reindex(table_id)
        if self._over():
            self._finish(now)
            return self._flush()
        self._tick(now)
        for table_id in sorted(self._tables):
            self._settle_table(table_id, now)
        return self._flush()

    def reschedule(self, now: float, start_at: float) -> list[Command]:
        """Before the start: the tournament starts at ``start_at`` instead (not in the past)."""
        if self.status is not Status.REGISTERING:
            raise WrongStatus(f"tournament {self.config.id} is {self.status}, not registering")
        if start_at < now:
            raise DirectorError(f"a tournament cannot be moved to a time already past ({start_at} < {now})")
        self._move_start(start_at)
        return self._flush()

    def _move_start(self, start_at: float) -> None:
        registration = self.registration
        registration.start_wall_seconds += int(start_at - registration.start_at)
        registration.start_at = start_at
        self.clock = clock_for(self.config, start_wall_seconds=registration.start_wall_seconds)
        self._level_at_cache = None
        # ``_now`` began at the old start: left there, the level clock would count from a moment
        # that has not come (a start moved a day earlier put every level change a day away)
        self._now = min(self._now, start_at)
        self._wakeup_cache = None

    def start_now(self, now: float) -> list[Command]:
        """An operator's "start now", before the scheduled time: the start moves to ``now`` (the
        level clock, the breaks and late registration count from it), then ``start``."""
        if self.status is not Status.REGISTERING:
            raise WrongStatus(f"tournament {self.config.id} is {self.status}, not registering")
        if now < self.registration.start_at:
            self._move_start(now)
        return self.start(now)

    def tick(self, now: float) -> list[Command]:
        """The clock reached ``now``: the scheduled start, breaks, levels, windows, deadlines."""
        if self.status is Status.REGISTERING:
            if now >= self.registration.start_at:
                if self.registration.can_start(now):
                    return self.start(now)
                return self.cancel(now)
            return []
        if self.status is not Status.RUNNING:
            return []
        self._tick(now)
        return self._flush()

    def next_wakeup(self) -> float | None:
        """When ``tick`` next has something to do (``None``: nothing is scheduled). Cheap to ask
        after every input: the answer is kept until time passes it or what it depends on changes."""
        if self.status is Status.REGISTERING:
            return self.registration.start_at
        if self.status is not Status.RUNNING:
            return None
        key = (
            self.level_index,
            self._stopped_seconds,
            self._deducted_seconds,
            len(self._stops),
            self._add_ons,
            self._purchases_final,
            self._break_announced,
            min((pending.until for pending in self._pending_rebuys.values()), default=None),
        )
        cached = self._wakeup_cache
        if cached is not None and cached[0] == key and (cached[1] is None or cached[1] > self._now):
            return cached[1]
        wakeup = self._work_out_next_wakeup()
        self._wakeup_cache = (key, wakeup)
        return wakeup

    def _work_out_next_wakeup(self) -> float | None:
        start = self.registration.start_at
        elapsed = self.elapsed(self._now)
        times: list[float] = [pending.until for pending in self._pending_rebuys.values()]
        window = self.clock.next_break(elapsed)
        if window is not None:
            times.append(start + (window.start if window.start > elapsed else window.end))
        add_on = self.registration.add_on_window()
        if add_on is not None and self._add_ons != "closed":
            times.append(add_on[0] if self._add_ons == "before" else add_on[1])
        if not self._purchases_final:
            times.append(start + self.config.late_registration_minutes * 60)
            if self.config.rebuys is not None:
                times.append(start + self.config.rebuys.period_minutes * 60)
        level_at = self._next_level_at()
        if level_at is not None:
            times.append(start + level_at)
        future = [t for t in times if t > self._now]
        return min(future) if future else None

    # ==========================================================================================
    # inputs: hands

    def hand_ended(
        self,
        table_id: int,
        finishing_stacks: Mapping[int, int],
        now: float,
        *,
        banks_spent: Mapping[str, int] | None = None,
    ) -> list[Command]:
        """The hand at ``table_id`` ended with ``finishing_stacks`` (by seat): busts, rebuys,
        eliminations, plans, and what the table does next. ``banks_spent`` are the time banks
        each player used in the hand (CLK-3)."""
        entry = self._tables.get(table_id)
        if entry is None:
            raise UnknownTable(f"table {table_id} is not in play")
        if entry.hand is None or entry.setup is None:
            raise NoHandAtTable(f"table {table_id} has no hand under way")
        try:
            result = entry.table.finish_hand(finishing_stacks)
        except TableError as error:
            raise NoHandAtTable(str(error)) from None
        setup = entry.setup
        entry.hand = None
        entry.setup = None
        self._now = max(self._now, now)
        for player, spent in (banks_spent or {}).items():
            if spent and player in self._banks:
                self._banks[player] = max(-self._bank_offset, self._banks[player] - spent)
        table = entry.table
        start = {seat_setup.seat: seat_setup.stack for seat_setup in setup.seats}
        busts: list[Bust] = []
        rebuy_wait = False
        for gone in result.busted:
            self._seat_of.pop(gone.player, None)
            self._disqualify_after_hand.discard(gone.player)
            owed = self._owed.pop(gone.player, None)
            if owed:  # chips bought during the hand: they were never all-in with them
                chips = sum(amount for amount, _ in owed)
                table.seat_player(
                    gone.seat, gone.player, chips, gone.absent, penalty_hands=gone.penalty_hands
                )
                self._seat_of[gone.player] = table_id
                for amount, kind in owed:
                    self._out.append(ChipsAdded(table_id, gone.seat, gone.player, amount, kind))
                continue
            after_button = (gone.seat - setup.button - 1) % table.size + 1
            if self.registration.rebuy_offered(gone.player, now, 0):
                until = now + REBUY_DECISION_SECONDS
                self._pending_rebuys[gone.player] = PendingRebuy(
                    gone.player, table_id, gone.seat, until, start[gone.seat], after_button
                )
                self._out.append(RebuyOffered(gone.player, until))
                rebuy_wait = True
                continue
            busts.append(Bust(gone.player, start[gone.seat], table_id, after_button))
        self._apply_owed(table_id)
        self._disqualify_at(table_id, now)
        if rebuy_wait:
            self._pending_busts.setdefault(table_id, []).extend(busts)
            self._reindex(table_id)
            self._put_hold(table_id, HoldReason.REBUY, None)
            return self._flush()
        self._reindex(table_id)
        self._after_busts(table_id, busts, now)
        return self._flush()

    def recover(self, now: float, *, down_since: float | None = None) -> list[Command]:
        """CRASH-1, after ``restore``: deal again every hand that was under way, at its start
        (same hand number and level; a new deck). With ``down_since``, the time from then to
        ``now`` (the outage) is not play time: the level clock did not run."""
        if down_since is not None and self.status is Status.RUNNING and down_since < now:
            self._stop(Stop.OUTAGE, down_since)
            self._restart(Stop.OUTAGE, now)
        self._now = max(self._now, now)
        for table_id in sorted(self._tables):
            entry = self._tables[table_id]
            hand = entry.hand
            if hand is None or entry.setup is not None:
                continue
            if hand.synchronized and self._barrier is not None:
                self._barrier.deal(table_id)
            self._deal(table_id, hand.started_at, again=hand)
        return self._flush()

    def table_lost(self, table_id: int, now: float) -> list[Command]:
        """CRASH-1 at one table: the table was lost (the process playing its hands died) and is
        open again elsewhere. The hand under way there is rolled back to its start and dealt
        again (same hand number and level, a new deck), as ``recover`` does for every table after
        a restore; a table between hands (or held) is left as it is."""
        entry = self._tables.get(table_id)
        if entry is None:
            raise UnknownTable(f"table {table_id} is not in play")
        self._now = max(self._now, now)
        hand = entry.hand
        if hand is None:
            return self._flush()
        if entry.setup is not None:
            entry.table.cancel_hand()
            entry.setup = None
        if hand.synchronized and self._barrier is not None:
            self._barrier.cancel(table_id)
            self._barrier.deal(table_id)
        self._deal(table_id, hand.started_at, again=hand)
        return self._flush()

    # ==========================================================================================
    # inputs: operators

    def pause(self, now: float) -> list[Command]:
        """Stop the tournament: tables finish their hands and wait; the level clock stops."""
        self._require_running()
        if Stop.OPERATOR in self._stops:
            raise WrongStatus(f"tournament {self.config.id} is already paused")
        self._stop(Stop.OPERATOR, now)
        self._out.append(TournamentPaused())
        for table_id in sorted(self._tables):
            if self._tables[table_id].hand is None and self._hold.by_table.get(table_id) is None:
                self._put_hold(table_id, HoldReason.PAUSED, None)
        return self._flush()

    def resume(self, now: float) -> list[Command]:
        self._require_running()
        if Stop.OPERATOR not in self._stops:
            raise WrongStatus(f"tournament {self.config.id} is not paused")
        self._restart(Stop.OPERATOR, now)
        self._out.append(TournamentResumed())
        self._wake(self._hold.tables(HoldReason.PAUSED), now)
        return self._flush()

    def penalize(self, player: str, hands: int, now: float) -> list[Command]:
        """PEN-1: sit ``player`` out for their next ``hands`` hands (dealt in, posting, killed)."""
        self._require_running()
        seated = self._seated(player)
        self._tables[self._seat_of[player]].table.penalize(seated.seat, hands)
        self._out.append(PlayerPenalized(player, hands))
        return self._flush()

    def disqualify(self, player: str, now: float) -> list[Command]:
        """PEN-1: disqualify ``player`` now, or when their table's hand ends."""
        self._require_running()
        table_id = self._seat_of.get(player)
        if table_id is None:
            raise NotPlaying(f"{player} is not seated in {self.config.id}")
        assert self.standings is not None
        if not self.standings.can_disqualify(player):
            raise DirectorError(f"{player} is the last player left and cannot be disqualified")
        self._disqualify_after_hand.add(player)
        if self._tables[table_id].hand is None and self._hold.by_table.get(table_id) is not HoldReason.REBUY:
            self._disqualify_at(table_id, now)
            self._reindex(table_id)
            if self._over():
                self._finish(now)
            else:
                self._replan(now)
                self._settle_table(table_id, now)
        return self._flush()

    def sit_out(self, player: str, absent: bool) -> list[Command]:
        """Mark a player away (CLK-1: still dealt in, folded or checked on time) or back."""
        self._require_running()
        seated = self._seated(player)
        self._tables[self._seat_of[player]].table.set_absent(seated.seat, absent)
        return self._flush()

    def cancel(self, now: float, in_money_method: InMoneyMethod = InMoneyMethod.CHIPS) -> list[Command]:
        """CANCEL-1: settle a tournament that cannot go on (a registering one is refunded)."""
        if self.status in (Status.FINISHED, Status.CANCELLED):
            raise WrongStatus(f"tournament {self.config.id} is {self.status}")
        if self.status is Status.REGISTERING:
            outcome = self.registration.cancel(now)
            self._post(outcome.transfers)
            self.status = Status.CANCELLED
            self._out.append(TournamentCancelled(SettlementKind.REFUND_ALL))
            return self._flush()
        settlement = self._settlement(now, in_money_method)
        self._post(settlement.transfers)
        self.status = Status.CANCELLED
        self._out.append(TournamentCancelled(settlement.kind))
        return self._flush()

    def _settlement(self, now: float, method: InMoneyMethod) -> Settlement:
        remaining: dict[str, int] = {}
        for table_id in sorted(self._tables):
            table = self._tables[table_id].table
            positions = table.last_positions
            button = positions.button if positions is not None else (table.first_button or 0)
            for seated in sorted(table.players, key=lambda s: (s.seat - button - 1) % table.size):
                remaining[seated.player] = seated.stack  # a hand in progress: its start (CRASH-1)
        for pending in self._pending_rebuys.values():
            remaining[pending.player] = 0
        stopped = StoppedTournament(
            tournament_id=self.config.id,
            payments=self.registration.payments,
            remaining=remaining,
            structure=self.structure(),
            minutes_since_start=self.elapsed(now) / 60,
            first_hand_dealt=self.hands_dealt > 0,
            prizes_paid=dict(self._prizes_posted),
            overlay_paid=self._overlay_posted,
            guarantee=effective_guarantee(self.config),
            freezeout=self.config.is_freezeout,
            rebuy_period_over=self.registration.rebuy_period_over(now),
            sit_and_go=self.config.sit_and_go,
        )
        return settle(stopped, method, self.rng)

    # ==========================================================================================
    # inputs: deals (DEAL-1..4)

    def deal_ask(self, player: str, now: float) -> list[Command]:
        """A player at the final table asks for a deal; once all have, the clock stops (DEAL-2)."""
        self._require_running()
        assert self.standings is not None
        if self._negotiation is None or self._negotiation.phase in (
            NegotiationPhase.AGREED,
            NegotiationPhase.ABANDONED,
        ):
            players = [seated.player for entry in self._tables.values() for seated in entry.table.players]
            self._negotiation = DealNegotiation(self.config, len(self._tables), sorted(players))
        asked = self._negotiation.ask(player)
        if asked.everyone_asked:
            self._stop(Stop.DEAL, now)
        self._talks()
        return self._flush()

    def deal_propose(
        self,
        now: float,
        method: DealMethod = DealMethod.ICM,
        left_to_play: int = 0,
        plan: DealPlan | None = None,
    ) -> list[Command]:
        """Propose an ICM or chip-chop deal over the unawarded prizes (or the players' own
        ``plan``); the table must be between hands, the stacks are its stacks."""
        self._require_running()
        talks = self._require_talks()
        players, stacks = self._final_table_stacks()
        prizes = self._remaining_prizes(len(players))
        if plan is None:
            plan = propose_deal(method, players, stacks, prizes, left_to_play, self.rng)
        verify_deal(
            self.config,
            len(self._tables),
            plan,
            players,
            players,
            prizes,
            self.prize_pool,
        )
        talks.propose(plan)
        self._talks()
        return self._flush()

    def deal_accept(self, player: str, now: float) -> list[Command]:
        """A player accepts the proposal; when all have, the deal is paid (DEAL-4)."""
        self._require_running()
        talks = self._require_talks()
        accepted = talks.accept(player)
        self._talks()
        if accepted.everyone_accepted:
            assert talks.plan is not None
            self._conclude(talks.plan, now)
        return self._flush()

    def deal_abandon(self, player: str, now: float) -> list[Command]:
        """Any player walks away: the clock runs again and play goes on."""
        talks = self._require_talks()
        talks.abandon(player)
        self._talks()
        if Stop.DEAL in self._stops:
            self._restart(Stop.DEAL, now)
        self._wake(self._hold.tables(HoldReason.DEAL), now)
        return self._flush()

    def _require_talks(self) -> DealNegotiation:
        if self._negotiation is None or self._negotiation.phase in (
            NegotiationPhase.AGREED,
            NegotiationPhase.ABANDONED,
        ):
            raise DealError("nobody has asked for a deal")
        return self._negotiation

    def _talks(self) -> None:
        talks = self._negotiation
        assert talks is not None
        self._out.append(
            DealTalks(talks.phase, tuple(sorted(talks.asked)), tuple(sorted(talks.accepted)), talks.plan)
        )

    def _final_table_stacks(self) -> tuple[list[str], list[int]]:
        if len(self._tables) != 1:
            raise DealError(f"deals are made at the final table only ({len(self._tables)} tables)")
        (entry,) = self._tables.values()
        if entry.hand is not None:
            raise DealError("a deal is worked out between hands: wait for the hand to end")
        table = entry.table
        positions = table.last_positions
        button = positions.button if positions is not None else (table.first_button or 0)
        seated = sorted(table.players, key=lambda s: (s.seat - button - 1) % table.size)
        return [s.player for s in seated], [s.stack for s in seated]

    def _remaining_prizes(self, players: int) -> list[int]:
        structure = self.structure()
        return [structure.prize(place) for place in range(1, players + 1)]

    def _conclude(self, plan: DealPlan, now: float) -> None:
        players, stacks = self._final_table_stacks()
        self.deals_done += 1
        conclusion = conclude_deal(self.config.id, plan, players, stacks, self.deals_done)
        self._post(conclusion.transfers)
        for player, amount in plan.shares.items():
            self._prizes_posted[player] = self._prizes_posted.get(player, 0) + amount
        self._paid.update(range(1, len(players) + 1))  # the deal pays these places
        self._out.append(
            DealDone(tuple(sorted(plan.shares.items())), plan.left_to_play, conclusion.ends_tournament)
        )
        self._negotiation = None
        if Stop.DEAL in self._stops:
            self._restart(Stop.DEAL, now)
        if conclusion.ends_tournament:
            assert conclusion.winner is not None
            self._finish(now, leader=conclusion.winner)
            return
        # play on for what is left, winner takes all (DEAL-4). The levels keep their schedule:
        # the live tour's shortening is a may, and rebasing a running clock would jump levels.
        self._continuation = conclusion.continuation
        self._paid.difference_update({1})
        self._wake(self._hold.tables(HoldReason.DEAL), now)

    # ==========================================================================================
    # the machinery

    def _seated(self, player: str) -> SeatedPlayer:
        table_id = self._seat_of.get(player)
        if table_id is None:
            raise NotPlaying(f"{player} is not seated in {self.config.id}")
        table = self._tables[table_id].table
        seat = table.seat_of(player)
        seated = None if seat is None else table.player_at(seat)
        if seated is None:
            raise NotPlaying(f"{player} is not seated at table {table_id}")
        return seated

    def _require_running(self) -> None:
        if self.status is not Status.RUNNING:
            raise WrongStatus(f"tournament {self.config.id} is {self.status}, not running")

    def _flush(self) -> list[Command]:
        out, self._out = self._out, []
        return out

    def _post(self, transfers: Iterable[Transfer]) -> None:
        transfers = tuple(transfers)
        if transfers:
            self._out.append(PostTransfers(transfers))

    def _registration_events(self, outcome: Outcome) -> None:
        for event in outcome.events:
            if isinstance(event, Registered):
                self._out.append(PlayerRegistered(event.player_id, event.late, None))
            elif isinstance(event, Waitlisted):
                self._out.append(PlayerRegistered(event.player_id, False, event.position))
            elif isinstance(event, Unregistered):
                self._out.append(PlayerUnregistered(event.player_id))
            elif isinstance(event, Promoted):
                self._out.append(PlayerPromoted(event.player_id))
            elif isinstance(event, LateRegistrationEnded):
                self._out.append(RegistrationClosed(event.reason))

    def _purchase(self, outcome: Outcome) -> int:
        """Post a rebuy's or add-on's money; returns the chips it bought."""
        self._post(outcome.transfers)
        chips = 0
        for event in outcome.events:
            if isinstance(event, Bought):
                chips += event.chips
                self._out.append(Purchased(event.player_id, event.kind, event.number, event.chips))
        self.chips_issued += chips
        return chips

    def _give_chips(self, player: str, chips: int, kind: PurchaseKind) -> None:
        table_id = self._seat_of[player]
        entry = self._tables[table_id]
        if entry.hand is not None:
            self._owed.setdefault(player, []).append((chips, kind))
            return
        seat = entry.table.seat_of(player)
        assert seat is not None
        entry.table.add_chips(seat, chips)
        self._out.append(ChipsAdded(table_id, seat, player, chips, kind))

    def _apply_owed(self, table_id: int) -> None:
        if not self._owed:
            return
        table = self._tables[table_id].table
        for seated in table.players:
            owed = self._owed.pop(seated.player, None)
            for chips, kind in owed or ():
                table.add_chips(seated.seat, chips)
                self._out.append(ChipsAdded(table_id, seated.seat, seated.player, chips, kind))

    def _add_banks(self, player: str) -> None:
        self._banks[player] = self.config.clock.banks_at_start - self._bank_offset

    def _stop(self, reason: Stop, now: float) -> None:
        if not self._stops:
            self._stopped_at = now
        self._stops.add(reason)

    def _restart(self, reason: Stop, now: float) -> None:
        self._stops.discard(reason)
        if not self._stops and self._stopped_at is not None:
            start = self.elapsed(self._stopped_at)
            self._stopped_seconds += self.clock.pause_seconds_between(start, self.elapsed(now))
            self._stopped_at = None

    def _clock_seconds(self) -> int:
        """Stopped seconds so far, a stop in force counted up to now."""
        stopped = self._stopped_seconds
        if self._stopped_at is not None:
            stopped += self.clock.pause_seconds_between(
                self.elapsed(self._stopped_at), self.elapsed(self._now)
            )
        return stopped

    def _next_level_at(self) -> int | None:
        """Seconds since the start when the next level begins, if the clock runs (worked out
        again only when the level, the stopped or the deducted seconds change)."""
        if self._stops:
            return None
        key = (self.level_index, self._stopped_seconds, self._deducted_seconds)
        cached = self._level_at_cache
        if (
            cached is not None
            and cached[0] == key
            and (cached[1] is None or cached[1] > self.elapsed(self._now))
        ):
            return cached[1]
        at = self._work_out_next_level_at()
        self._level_at_cache = (key, at)
        return at

    def _work_out_next_level_at(self) -> int | None:
        levels = self.clock.levels
        if self.level_index + 1 >= len(levels):
            return None
        end = sum(level.minutes for level in levels[: self.level_index + 1]) * 60
        now = self.elapsed(self._now)
        played = self.clock.play_seconds(
            now, paused_seconds=self._stopped_seconds, deducted_seconds=self._deducted_seconds
        )
        left = end - played
        at = now
        while left > 0:
            window = self.clock.next_break(at)
            if window is None or window.start >= at + left:
                return at + left
            left -= max(0, window.start - at)
            at = window.end
        return at

    def _tick(self, now: float) -> None:
        elapsed = self.elapsed(now)
        self._now = max(self._now, now)
        # rebuy decisions that ran out
        for pending in sorted(self._pending_rebuys.values(), key=lambda p: (p.until, p.player)):
            if pending.until <= now:
                del self._pending_rebuys[pending.player]
                self._pending_busts.setdefault(pending.table_id, []).append(
                    Bust(pending.player, pending.start_stack, pending.table_id, pending.seat_after_button)
                )
                self._rebuy_decided(pending.table_id, now)
                if self.status is not Status.RUNNING:
                    return
        # breaks (BRK-T1)
        window = self.clock.break_at(elapsed)
        if window is not None:
            self._announce_break(window)
        else:
            if self._break_announced is not None:
                self._break_announced = None
                self._out.append(BreakEnded())
            self._wake(self._hold.tables(HoldReason.BREAK), now)
        # add-ons (REG-5)
        add_on = self.registration.add_on_window()
        if add_on is not None:
            if self._add_ons == "before" and now >= add_on[0]:
                self._add_ons = "open"
                self._out.append(AddOnsOffered(add_on[1]))
            if self._add_ons == "open" and now >= add_on[1]:
                self._add_ons = "closed"
        # levels (LVL-1): announced when they begin; a hand uses the level in force when dealt
        index = self.clock.level_index_at(
            elapsed, paused_seconds=self._clock_seconds(), deducted_seconds=self._deducted_seconds
        )
        if index > self.level_index:
            self.level_index = index
            self._out.append(LevelStarted(index + 1, self.clock.levels[index]))
        self._structure_changed(now)

    def _announce_break(self, window: BreakWindow) -> None:
        if self._break_announced == window.end:
            return
        self._break_announced = window.end
        self._out.append(BreakStarted(window.kind, self.start_at + window.end))
        if window.kind is BreakKind.SCHEDULED:  # CLK-3: a time bank more at every scheduled break
            self._bank_offset += self.config.clock.banks_per_break

    def _structure_changed(self, now: float) -> None:
        """Once late registration and every purchase have closed, the structure is final: post
        the overlay and the prizes of the players who finished before (END-1 may follow)."""
        if self._purchases_final or self.status is not Status.RUNNING:
            return
        registration = self.registration
        if registration.late_registration_closed(now) is None:
            return
        if not registration.rebuy_period_over(now):
            return
        if self.config.add_on is not None and self._add_ons != "closed":
            return
        self._purchases_final = True
        self._structure_cache = None
        overlay = overlay_transfer(
            self.config.id, registration.pool_contributions, effective_guarantee(self.config)
        )
        if overlay is not None:
            self._post((overlay,))
            self._overlay_posted = overlay.amount
        structure = self.structure()
        self._out.append(PurchasesClosed(self.prize_pool, structure.places_paid))
        deferred, self._deferred = self._deferred, []
        for finish in deferred:
            self._pay(finish)
        if self._over():
            self._finish(now)

    # -- tables ---------------------------------------------------------------------------------------

    def _reindex(self, table_id: int) -> None:
        entry = self._tables.get(table_id)
        if entry is None:
            self._index.remove(table_id)
            return
        busy = entry.hand is not None
        count = len(entry.table.players)
        # a table being broken or waiting on rebuy decisions is neither a source nor a destination
        if busy or table_id == self._breaking or table_id in self._pending_busts:
            self._index.put(table_id, count, idle=False, reserved=not busy)
            return
        moved = 0
        if count >= 2:
            order = entry.table.big_blind_order()
            if order:
                player = entry.table.player_at(order[0])
                moved = self._moved.get(player.player, 0) if player is not None else 0
        self._index.put(table_id, count, idle=True, times_moved=moved)

    def _add_table(self, table: Table, hand: RunningHand | None = None) -> None:
        self._tables[table.table_id] = _Table(table, hand)
        self._live[table.table_id] = table

    def _put_hold(self, table_id: int, reason: HoldReason, until: float | None) -> None:
        if self._hold.put(table_id, reason):
            self._out.append(TableHeld(table_id, reason, until))

    def _wake(self, table_ids: Iterable[int], now: float) -> None:
        for table_id in sorted(table_ids):
            if table_id in self._tables and self._tables[table_id].hand is None:
                self._hold.release(table_id)
                self._settle_table(table_id, now)

    def _settle_table(self, table_id: int, now: float) -> None:
        """An idle table: deal, or hold it and say why. With hand-for-hand pending, the last
        table to be idle starts the synchronized round (HFH-1)."""
        if self.status is not Status.RUNNING:
            return
        entry = self._tables.get(table_id)
        if entry is None or entry.hand is not None:
            return
        elapsed = self.elapsed(now)
        reason: HoldReason | None = None
        until: float | None = None
        if table_id in self._pending_busts:
            reason = HoldReason.REBUY
        elif table_id == self._breaking:
            reason = HoldReason.BREAKING
        elif table_id in self._plan_hold:
            reason = HoldReason.BALANCING
        elif Stop.OPERATOR in self._stops:
            reason = HoldReason.PAUSED
        elif Stop.DEAL in self._stops:
            reason = HoldReason.DEAL
        elif (window := self.clock.break_at(elapsed)) is not None:
            self._announce_break(window)
            reason = HoldReason.BREAK
            until = self.start_at + self.clock.resume_at(elapsed)
        elif self._try_round(now):
            return
        elif self._hfh != "off":
            reason = HoldReason.HAND_FOR_HAND
        elif len(entry.table.players) < 2:
            reason = HoldReason.SHORT_HANDED
        if reason is not None:
            self._put_hold(table_id, reason, until)
            return
        self._hold.release(table_id)
        self._deal(table_id, now)

    def _deal(self, table_id: int, now: float, *, again: RunningHand | None = None) -> None:
        entry = self._tables[table_id]
        table = entry.table
        if table_id in self._button_pending:
            self._draw_button(table_id)
        elapsed = self.elapsed(now)
        if again is None:
            hand_level = self.clock.start_hand(
                elapsed, paused_seconds=self._clock_seconds(), deducted_seconds=self._deducted_seconds
            )
            index = hand_level.index
            self.hands_dealt += 1
            number = self.hands_dealt
        else:
            index, number = again.level_index, again.hand_number
        level = self.clock.levels[index]
        if index > self.level_index:
            self.level_index = index
            self._out.append(LevelStarted(index + 1, level))
        setup = table.start_hand(
            f"{self.config.id}-{number}", level.small_blind, level.big_blind, level.ante, level.ante_kind
        )
        synchronized = self._hfh == "round" if again is None else again.synchronized
        entry.hand = RunningHand(table_id, number, index, now, synchronized)
        entry.setup = setup
        self._reindex(table_id)
        held, offset = self._banks, self._bank_offset
        banks = tuple([(seat.seat, held.get(seat.player, 0) + offset) for seat in setup.seats])
        self._out.append(
            DealHand(table_id, number, setup, index + 1, synchronized, self.config.shot_clock, banks)
        )

    def _draw_button(self, table_id: int) -> None:
        """SEAT-2 at a table that could not draw before (or the final table's redraw, BRK-2)."""
        table = self._tables[table_id].table
        if len(table.players) < 2:
            self._button_pending.add(table_id)
            return
        self._button_pending.discard(table_id)
        if self.config.first_button is FirstButton.DRAW:
            self._out.append(ButtonDrawn(table_id, table.draw_button(self.rng)))
        else:
            table.set_first_button(1)
            self._out.append(ButtonDrawn(table_id, None))

    def _seat_newcomer(self, player: str, stack: int, now: float) -> None:
        """REG-4: a late entrant takes a random empty seat at the emptiest idle table; a new
        table opens when no table has a seat; when only tables in a hand have one, the player
        waits for the first of them to finish."""
        target = next(
            (t for c in range(self.config.table_size) if (t := self._index.lowest_idle(c)) is not None),
            None,
        )
        if target is None:
            free = self._index.players < self._index.tables * self.config.table_size
            if free:
                self._waiting_for_seat.append(player)
                return
            target = self._next_table_id
            self._next_table_id += 1
            table = Table(self.settings, table_id=target)
            self._add_table(table)
            self._button_pending.add(target)
            self._out.append(TableOpened(target, (), None))
        table = self._tables[target].table
        seat = self.rng.choice(table.empty_seats())
        table.seat_player(seat, player, stack)
        self._seat_of[player] = target
        self._out.append(PlayerSeated(target, seat, player, stack))
        self._reindex(target)
        if target in self._button_pending and len(table.players) >= 2:
            self._draw_button(target)
        self._settle_table(target, now)

    def _seat_waiting(self, table_id: int) -> None:
        """Late entrants waiting for a seat take this idle table's empty seats."""
        table = self._tables[table_id].table
        while self._waiting_for_seat and table.empty_seats():
            player = self._waiting_for_seat.pop(0)
            seat = self.rng.choice(table.empty_seats())
            table.seat_player(seat, player, self.config.starting_stack)
            self._seat_of[player] = table_id
            self._out.append(PlayerSeated(table_id, seat, player, self.config.starting_stack))
        self._reindex(table_id)

    # -- after a hand ---------------------------------------------------------------------------

    def _rebuy_decided(self, table_id: int, now: float) -> None:
        if any(p.table_id == table_id for p in self._pending_rebuys.values()):
            return  # others at the table are still deciding
        busts = self._pending_busts.pop(table_id, [])
        self._hold.release(table_id)
        self._reindex(table_id)
        self._after_busts(table_id, busts, now)

    def _after_busts(self, table_id: int, busts: list[Bust], now: float) -> None:
        """A table's hand is settled: rank its busts, plan, and go on."""
        if self._waiting_for_seat and table_id != self._breaking:
            self._seat_waiting(table_id)
        if self._hfh == "round" and self._barrier is not None and self._barrier.can_finish(table_id):
            closed = self._barrier.finish(table_id, busts)
            if closed is None:
                self._put_hold(table_id, HoldReason.HAND_FOR_HAND, None)
                return  # the table waits for the rest of the synchronized round
            # the level clock stood still during the round and loses the deduction instead
            self._restart(Stop.HAND_FOR_HAND, now)
            self._deducted_seconds += closed.deduction_seconds
            self._hfh = "pending"
            if closed.busts:
                share = self.config.hand_for_hand.bubble_ties_share and self._round_on_bubble
                self._eliminate(list(closed.busts), share, closed.busts[-1].table_id, now, in_sync=True)
        elif busts:
            self._eliminate(busts, False, table_id, now, in_sync=False)
        if self.status is not Status.RUNNING:
            return
        due = self._hand_for_hand_due()
        if self._hfh == "off" and due:
            self._hfh = "pending"
            self._out.append(HandForHandStarted(self.players_left, self.structure().places_paid))
        elif self._hfh == "pending" and not due:
            self._end_hand_for_hand(now)
        self._replan(now)
        if not self._try_round(now):
            self._settle_table(table_id, now)

    def _try_round(self, now: float) -> bool:
        """HFH-1: once every hand under way has ended, start the synchronized round (unless a
        break, a pause or deal talks hold the tables: their end wakes them and comes back here).
        True when the tables are taken care of (held, or dealt the round); False when there is
        no round to start (not pending, hands still under way, or hand-for-hand just ended)."""
        if self._hfh != "pending" or self._index.any_busy or self._pending_busts:
            return False
        elapsed = self.elapsed(now)
        window = self.clock.break_at(elapsed)
        if window is not None or self._stops:
            if window is not None:
                self._announce_break(window)
                reason, until = HoldReason.BREAK, self.start_at + self.clock.resume_at(elapsed)
            elif Stop.OPERATOR in self._stops:
                reason, until = HoldReason.PAUSED, None
            else:
                reason, until = HoldReason.DEAL, None
            for table_id in sorted(self._tables):
                self._put_hold(table_id, reason, until)
            return True
        return self._start_round(now)

    def _hand_for_hand_due(self) -> bool:
        return hand_for_hand_due(
            self.config.hand_for_hand,
            self.players_left,
            self.structure().places_paid,
            self._index.tables_with(2),
            in_force=self._hfh != "off",
        )

    def _end_hand_for_hand(self, now: float) -> None:
        hands = self.hand_for_hand_hands
        self._hfh = "off"
        self._out.append(HandForHandEnded(hands))
        self._wake(self._hold.tables(HoldReason.HAND_FOR_HAND), now)

    def _round_tables(self) -> list[int]:
        return [
            table_id
            for table_id in sorted(self._tables)
            if len(self._tables[table_id].table.players) >= 2
            and table_id != self._breaking
            and table_id not in self._plan_hold
        ]

    def _start_round(self, now: float) -> bool:
        """HFH-1: every table that can deal starts the same synchronized hand. When fewer than
        two tables can play (or it is no longer due), hand-for-hand ends instead: False."""
        playing = self._round_tables()
        if len(playing) < 2 or not self._hand_for_hand_due():
            self._end_hand_for_hand(now)
            return False
        self._round_on_bubble = self.players_left == self.structure().places_paid + 1
        if self._barrier is None:
            deduction = hand_for_hand_deduction_seconds(
                self.config.regular_level_minutes, self.config.hand_for_hand.deduction_minutes
            )
            self._barrier = HandForHand(playing, deduction)
        else:
            self._barrier.set_tables(playing)  # tables broken or balanced since the last round
        self._hfh = "round"
        self._round_started = self.elapsed(now)
        self._stop(Stop.HAND_FOR_HAND, now)
        for table_id in playing:
            self._hold.release(table_id)
            self._barrier.deal(table_id)
            self._deal(table_id, now)
        return True

    def _eliminate(self, busts: list[Bust], share: bool, table_id: int, now: float, *, in_sync: bool) -> None:
        """ELIM-1/ELIM-2: rank the busts, pay their prizes, note the bubble and the end."""
        assert self.standings is not None
        paid_places = self.structure().places_paid
        before = self.standings.players_left
        finishes = self.standings.eliminate(busts, all_share=share)
        for bust in busts:
            self._registration_events(self.registration.eliminate(bust.player, now))
            self._banks.pop(bust.player, None)
            self._seat_of.pop(bust.player, None)
        self._last_elimination_table = table_id
        # each at the table they busted at: a hand-for-hand round ends with every table's busts
        bust_tables = {bust.player: bust.table_id for bust in busts}
        structure = self.structure()
        for finish in finishes:
            total = sum(structure.prize(p) for p in range(finish.place, finish.place + finish.shared_places))
            for player in finish.players:
                self._out.append(
                    PlayerEliminated(
                        player,
                        finish.place,
                        finish.shared_places,
                        total // len(finish.players),
                        bust_tables.get(player, table_id),
                    )
                )
            self._pay(finish)
        after = self.standings.players_left
        if paid_places and before > paid_places >= after and self.bubble_burst_in_sync is None:
            self.bubble_burst_in_sync = in_sync
            self._out.append(BubbleBurst(in_sync))
            self._bank_offset += self.config.clock.banks_at_bubble
        if self._over():
            self._finish(now)

    def _pay(self, finish: Finish) -> None:
        """Post a finish's prize once the structure is final (else keep it for then)."""
        if not self._purchases_final:
            self._deferred.append(finish)
            return
        places = set(range(finish.place, finish.place + finish.shared_places))
        if places & self._paid:
            return
        self._paid.update(places)
        transfers = prizes_for_finishes(self.structure(), [finish], self.config.id, self._ticket_holders)
        for transfer in transfers:
            player = Account.parse(transfer.target).player_id
            if transfer.reason is Reason.TICKET:
                self._ticket_holders.add(player)
            self._prizes_posted[player] = self._prizes_posted.get(player, 0) + transfer.amount
        self._post(transfers)

    def _over(self) -> bool:
        """END-1: one player left, every player left paid the same, or a satellite's seats."""
        if self.standings is None:
            return False
        left = self.standings.players_left
        if left <= 1:
            return True
        if not self._purchases_final:
            return False
        structure = self.structure()
        if structure.seats and satellite_is_over(structure, left):
            return True
        return tournament_over(left, structure.prizes)

    def _finish(self, now: float, leader: str | None = None) -> None:
        """END-1: place the players left by their chips and pay everyone still owed."""
        assert self.standings is not None
        self._structure_changed_final(now)
        stacks: dict[str, int] = {}
        order: dict[str, int] = {}
        for entry in self._tables.values():
            table = entry.table
            positions = table.last_positions
            button = positions.button if positions is not None else 0
            for seated in table.players:
                stacks[seated.player] = seated.stack
                order[seated.player] = (seated.seat - button - 1) % table.size + 1
        for pending in self._pending_rebuys.values():
            stacks[pending.player] = 0
        if leader is not None and leader in stacks:
            stacks[leader] = max(stacks.values()) + 1  # DEAL-4: the chip leader wins a full deal
        self._players_at_end = len(stacks)
        if stacks:
            finishes = self.standings.finish(stacks, order)
            for finish in finishes:
                self._pay(finish)
        self.status = Status.FINISHED
        self._out.append(
            TournamentEnded(
                self.standings.finishes, self.prize_pool, tuple(sorted(self._prizes_posted.items()))
            )
        )

    def _structure_changed_final(self, now: float) -> None:
        """At the end every purchase is over whatever the clock says: make the structure final."""
        if self._purchases_final:
            return
        self._purchases_final = True
        self._structure_cache = None
        overlay = overlay_transfer(
            self.config.id, self.registration.pool_contributions, effective_guarantee(self.config)
        )
        if overlay is not None:
            self._post((overlay,))
            self._overlay_posted = overlay.amount
        deferred, self._deferred = self._deferred, []
        for finish in deferred:
            self._pay(finish)

    def _disqualify_at(self, table_id: int, now: float) -> None:
        """PEN-1: carry out the disqualifications waiting for this table's hand to end."""
        if not self._disqualify_after_hand:
            return
        assert self.standings is not None
        table = self._tables[table_id].table
        for seated in table.players:
            if seated.player not in self._disqualify_after_hand:
                continue
            self._disqualify_after_hand.discard(seated.player)
            if not self.standings.can_disqualify(seated.player):
                continue  # the last player left wins; there is nobody to finish below
            chips = table.disqualify(seated.seat) + sum(c for c, _ in self._owed.pop(seated.player, []))
            self.chips_removed += chips
            finish = self.standings.disqualify(seated.player)
            self._registration_events(self.registration.eliminate(seated.player, now))
            self._seat_of.pop(seated.player, None)
            self._banks.pop(seated.player, None)
            self._out.append(PlayerDisqualified(seated.player, finish.place, chips))
            self._pay(finish)

    # -- plans ------------------------------------------------------------------------------------

    def _replan(self, now: float) -> None:
        """BRK-1/BRK-2/BAL-1/MOVE-1: carry out the planner's steps between hands."""
        index = self._index
        if (
            self._breaking is None
            and not self._plan_hold
            and (self._final_table_announced or len(self._tables) != 1)
            and index.tables <= table_count(index.players, index.size)
            and index.largest() - index.smallest() < max(self.config.balancing.threshold, 2)
        ):
            return  # nothing to break or balance: the common case after a hand, answered at once
        released = set(self._plan_hold)
        self._plan_hold.clear()
        touched: set[int] = set()
        for _ in range(4 * self._index.players + 4 * self._index.tables + 8):
            step = next_step(
                self._index,
                self._view,
                self.config.balancing,
                self.rng,
                moves_so_far=self._moved,
                last_elimination_table=self._last_elimination_table,
                breaking=self._breaking,
            )
            if step is None:
                break
            if isinstance(step, Wait):
                self._plan_hold = set(step.hold) - ({self._breaking} if self._breaking else set())
                for table_id in self._plan_hold:
                    self._put_hold(table_id, HoldReason.BALANCING, None)
                break
            if isinstance(step, Move):
                self._move(step)
                touched.update((step.from_table, step.to_table))
            elif isinstance(step, StartBreak):
                self._breaking = step.table_id
                self._reindex(step.table_id)
                self._put_hold(step.table_id, HoldReason.BREAKING, None)
            elif isinstance(step, TableBreak):
                self._close(step.table_id)
                touched.discard(step.table_id)
                released.discard(step.table_id)
                self._last_elimination_table = None
            else:
                self._redraw(step)
                touched.update(step.tables)
        else:  # pragma: no cover - the planner always settles
            raise DirectorError("the planner did not settle")
        if len(self._tables) == 1 and not self._final_table_announced:
            self._final_table_announced = True
            self._out.append(FinalTable(next(iter(self._tables))))
        released -= self._plan_hold
        for table_id in sorted((released | touched) - self._plan_hold):
            if table_id in self._tables and self._tables[table_id].hand is None:
                if self._hold.by_table.get(table_id) in (HoldReason.BALANCING, HoldReason.SHORT_HANDED):
                    self._hold.release(table_id)
                if table_id not in self._hold.by_table:
                    self._settle_table(table_id, now)

    def _move(self, move: Move) -> None:
        source = self._tables[move.from_table].table
        target = self._tables[move.to_table].table
        seated = source.unseat(move.from_seat)
        target.seat_player(
            move.to_seat, move.player, seated.stack, seated.absent, penalty_hands=seated.penalty_hands
        )
        self._seat_of[move.player] = move.to_table
        self._moved[move.player] = self._moved.get(move.player, 0) + 1
        self._out.append(PlayerMoved(move, seated.stack))
        self._reindex(move.from_table)
        self._reindex(move.to_table)
        if move.to_table in self._button_pending and len(target.players) >= 2:
            self._draw_button(move.to_table)

    def _close(self, table_id: int) -> None:
        entry = self._tables.pop(table_id)
        del self._live[table_id]
        if entry.table.players:
            raise DirectorError(f"table {table_id} closed with players seated")
        self._index.remove(table_id)
        self._hold.release(table_id)
        self._button_pending.discard(table_id)
        self._plan_hold.discard(table_id)
        if self._breaking == table_id:
            self._breaking = None
        self._out.append(TableClosed(table_id))

    def _redraw(self, step: Redraw) -> None:
        lifted = {
            move.player: self._tables[move.from_table].table.unseat(move.from_seat) for move in step.moves
        }
        for move in step.moves:
            seated = lifted[move.player]
            self._tables[move.to_table].table.seat_player(
                move.to_seat, move.player, seated.stack, seated.absent, penalty_hands=seated.penalty_hands
            )
            self._seat_of[move.player] = move.to_table
            self._moved[move.player] = self._moved.get(move.player, 0) + 1
            self._out.append(PlayerMoved(move, seated.stack))
        for table_id in step.broken:
            self._close(table_id)
        self._out.append(TablesRedrawn(step.tables))
        for table_id in step.tables:
            self._draw_button(table_id)
            self._reindex(table_id)

    # ==========================================================================================
    # saved state (CRASH-1)

    def snapshot(self) -> DirectorSnapshot:
        """Everything but the hands in progress, as plain, versioned data. A table in a hand is
        saved as it was when the hand began; ``restore`` + ``recover`` deal that hand again."""
        negotiation = self._negotiation
        rng_state = self.rng.getstate() if type(self.rng) is random.Random else None
        return DirectorSnapshot(
            version=DIRECTOR_SNAPSHOT_VERSION,
            config=self.config,
            status=self.status,
            registration=self.registration.snapshot(),
            standings=None if self.standings is None else self.standings.snapshot(),
            tables=tuple(self._tables[t].table.snapshot() for t in sorted(self._tables)),
            running=self.running_hands(),
            hands_dealt=self.hands_dealt,
            stopped_seconds=self._stopped_seconds,
            deducted_seconds=self._deducted_seconds,
            stops=tuple(sorted(self._stops)),
            stopped_at=self._stopped_at,
            level_index=self.level_index,
            break_announced=self._break_announced,
            add_ons=self._add_ons,
            purchases_final=self._purchases_final,
            barrier=None if self._barrier is None else self._barrier.snapshot(),
            hand_for_hand=self._hfh,
            round_started=self._round_started,
            round_on_bubble=self._round_on_bubble,
            bubble_burst_in_sync=self.bubble_burst_in_sync,
            final_table_announced=self._final_table_announced,
            held=tuple(sorted(self._hold.by_table.items())),
            breaking=self._breaking,
            plan_hold=tuple(sorted(self._plan_hold)),
            button_pending=tuple(sorted(self._button_pending)),
            last_elimination_table=self._last_elimination_table,
            moved=tuple(sorted(self._moved.items())),
            chips_issued=self.chips_issued,
            chips_removed=self.chips_removed,
            owed=tuple((p, chips, kind) for p, items in self._owed.items() for chips, kind in items),
            pending_rebuys=tuple(self._pending_rebuys.values()),
            pending_busts=tuple((t, tuple(b)) for t, b in sorted(self._pending_busts.items())),
            disqualify_after_hand=tuple(sorted(self._disqualify_after_hand)),
            waiting_for_seat=tuple(self._waiting_for_seat),
            paid=tuple(sorted(self._paid)),
            deferred=tuple(self._deferred),
            overlay_posted=self._overlay_posted,
            prizes_posted=tuple(sorted(self._prizes_posted.items())),
            ticket_holders=tuple(sorted(self._ticket_holders)),
            time_banks=tuple(sorted(self._banks.items())),
            bank_offset=self._bank_offset,
            deal=None
            if negotiation is None
            else DealTalksSnapshot(
                negotiation.players,
                negotiation.phase,
                tuple(sorted(negotiation.asked)),
                tuple(sorted(negotiation.accepted)),
                negotiation.plan,
            ),
            deals_done=self.deals_done,
            continuation=self._continuation,
            next_table_id=self._next_table_id,
            now=self._now,
            rng_state=rng_state,
            players_at_end=self._players_at_end,
        )

    @classmethod
    def restore(cls, snapshot: DirectorSnapshot, rng: random.Random) -> Director:
        """Rebuild a director from ``snapshot`` (a seeded ``rng`` gets the saved state back).
        The hands that were under way are rolled back: call ``recover`` to deal them again."""
        if snapshot.version != DIRECTOR_SNAPSHOT_VERSION:
            raise DirectorError(
                f"director snapshot version {snapshot.version} is not {DIRECTOR_SNAPSHOT_VERSION}"
            )
        registration = Registration.restore(snapshot.config, snapshot.registration)
        director = cls(
            snapshot.config,
            start_at=registration.start_at,
            rng=rng,
            start_wall_seconds=registration.start_wall_seconds,
        )
        if snapshot.rng_state is not None and type(rng) is random.Random:
            version, state, gauss = snapshot.rng_state
            rng.setstate((version, tuple(state), gauss))
        director.registration = registration
        director.status = snapshot.status
        director.standings = None if snapshot.standings is None else Standings.restore(snapshot.standings)
        running = {hand.table_id: hand for hand in snapshot.running}
        for table_snapshot in snapshot.tables:
            table = Table.from_snapshot(table_snapshot)
            director._add_table(table, running.get(table.table_id))
            for seated in table.players:
                director._seat_of[seated.player] = table.table_id
        director.hands_dealt = snapshot.hands_dealt
        director._stopped_seconds = snapshot.stopped_seconds
        director._deducted_seconds = snapshot.deducted_seconds
        director._stops = set(snapshot.stops)
        director._stopped_at = snapshot.stopped_at
        director.level_index = snapshot.level_index
        director._break_announced = snapshot.break_announced
        director._add_ons = snapshot.add_ons
        director._purchases_final = snapshot.purchases_final
        director._barrier = None if snapshot.barrier is None else HandForHand.restore(snapshot.barrier)
        if director._barrier is not None:
            for hand in snapshot.running:
                if hand.synchronized:
                    director._barrier.cancel(hand.table_id)  # dealt again by ``recover``
        director._hfh = snapshot.hand_for_hand
        director._round_started = snapshot.round_started
        director._round_on_bubble = snapshot.round_on_bubble
        director.bubble_burst_in_sync = snapshot.bubble_burst_in_sync
        director._players_at_end = snapshot.players_at_end
        director._final_table_announced = snapshot.final_table_announced
        for table_id, reason in snapshot.held:
            director._hold.put(table_id, reason)
        director._breaking = snapshot.breaking
        director._plan_hold = set(snapshot.plan_hold)
        director._button_pending = set(snapshot.button_pending)
        director._last_elimination_table = snapshot.last_elimination_table
        director._moved = dict(snapshot.moved)
        director.chips_issued = snapshot.chips_issued
        director.chips_removed = snapshot.chips_removed
        for player, chips, kind in snapshot.owed:
            director._owed.setdefault(player, []).append((chips, kind))
        director._pending_rebuys = {pending.player: pending for pending in snapshot.pending_rebuys}
        director._pending_busts = {table_id: list(busts) for table_id, busts in snapshot.pending_busts}
        director._disqualify_after_hand = set(snapshot.disqualify_after_hand)
        director._waiting_for_seat = list(snapshot.waiting_for_seat)
        director._paid = set(snapshot.paid)
        director._deferred = list(snapshot.deferred)
        director._overlay_posted = snapshot.overlay_posted
        director._prizes_posted = dict(snapshot.prizes_posted)
        director._ticket_holders = set(snapshot.ticket_holders)
        director._banks = dict(snapshot.time_banks)
        director._bank_offset = snapshot.bank_offset
        if snapshot.deal is not None:
            talks = DealNegotiation(snapshot.config, 1, snapshot.deal.players)
            talks.phase = snapshot.deal.phase
            talks.asked = set(snapshot.deal.asked)
            talks.accepted = set(snapshot.deal.accepted)
            talks.plan = snapshot.deal.plan
            director._negotiation = talks
        director.deals_done = snapshot.deals_done
        director._continuation = snapshot.continuation
        director._next_table_id = snapshot.next_table_id
        # before the start no table exists yet: the first one will take the next id
        director._table_base = snapshot.next_table_id - 1
        director._now = snapshot.now
        for table_id in sorted(director._tables):
            director._reindex(table_id)
        return director

    # ==========================================================================================
    # invariants

    def check_chips(self) -> None:
        """Chips in play = chips issued - chips removed by disqualifications (O(tables))."""
        in_play = self.chips_in_play()
        expected = self.chips_issued - self.chips_removed
        if in_play != expected:
            raise DirectorError(
                f"{in_play} chips in play, expected {expected} ({self.chips_issued} issued - "
                f"{self.chips_removed} removed by disqualifications)"
            )

    def check_seats(self) -> None:
        """Nobody sits twice, no table is over its size, the players seated (with those deciding
        on a rebuy or waiting for a seat) are exactly the players left (O(players))."""
        seated = [s.player for entry in self._tables.values() for s in entry.table.players]
        if len(seated) != len(set(seated)):
            raise DirectorError("a player is seated twice")
        everyone = set(seated) | set(self._pending_rebuys) | set(self._waiting_for_seat)
        playing = set() if self.standings is None else set(self.standings.playing)
        if self.status is Status.RUNNING and everyone != playing:
            raise DirectorError(
                f"{len(everyone)} players seated or waiting, {len(playing)} left: "
                f"{sorted(everyone ^ playing)[:5]} differ"
            )
        for table_id, entry in self._tables.items():
            if len(entry.table.players) > entry.table.size:
                raise DirectorError(f"table {table_id} seats {len(entry.table.players)} players")
            if self._index.count(table_id) != len(entry.table.players):
                raise DirectorError(f"table {table_id}: the index counts {self._index.count(table_id)}")
