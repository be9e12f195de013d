"""Breaking and balancing tables (BRK-1, BRK-2, BAL-1, MOVE-1), one step at a time.

The rule is ``next_step``: given where everyone sits (a ``TableIndex`` of head counts and of the
tables that are idle, and a ``TableState`` of any table it asks for), it returns the next thing
to do between hands: one ``Move``, a ``StartBreak``, a ``TableBreak`` of a table now empty, a
``Redraw``, or a ``Wait`` that names the idle tables to keep from dealing until a hand elsewhere
ends. It changes nothing itself. Two drivers apply its steps until it says ``None`` or ``Wait``:
the tournament director (``engine.tournament.director``) on its live tables, and
``plan_tables`` on plain table states (tests, tools). Each step reads only the tables it needs,
so a plan costs O(log n) in the number of tables, not O(n): a 300,000-player field has 33,000.

The procedure (every step is deterministic for a given ``rng`` state):

1. BRK-1 break. When the players left fit at one table fewer, a table is chosen to break: the
   table where the last elimination happened (P§12), a random idle table (S) or the first table
   of the operator's fixed order still in play (A); when that table is gone or the setting has
   no answer, the idle table with the fewest players, then the lowest number. A named table
   that is in a hand is waited for (its hand's end plans again). The chosen table deals no more
   (``StartBreak``); its players, one at a time and in random order, go to the idle table with
   the fewest players (ties: the lowest number) and take a random empty seat there (S, TDA
   R10B). When no idle table has a free seat, the rest wait at the breaking table (``Wait``)
   until hands elsewhere end: on a site with thousands of tables in play, some table finishes a
   hand every moment, so nobody waits long, and no table is held for a seat it might offer.
   The empty table closes (``TableBreak``).
2. BRK-2 redraw. When a break brings the tournament to a table count in
   ``settings.redraw_at_tables`` (the final table by default), everyone is reseated at random
   over the remaining tables (even head counts) and those tables draw for the button again. It
   needs every table idle: until then the idle tables are held (``Wait``).
3. BAL-1 balance (only while no table is breaking: a break changes every count). While the
   largest and the smallest table differ by ``settings.threshold`` or more (never less than 2),
   one player moves from a largest table to a smallest table; one move at a time from largest to
   smallest is the fewest moves that can close the gap. The source (TDA R11C, our fixed
   procedure): among the largest idle tables, the one whose player due the big blind next has
   been moved the fewest times, then the lowest table number. The destination: the smallest idle
   table with the lowest number. When no smallest table is idle the move waits for one's hand to
   end; when a smallest table is idle but no largest one is, it is held (``Wait``) until a
   largest table finishes its hand.
4. MOVE-1 who and where. The player moved is the one due the big blind next at the source. With
   ``same_position`` they take the empty seat whose turn for the big blind comes as near as
   possible to theirs (they were due next: the empty seat that would post the big blind next, or
   the nearest after it); with ``worst_position`` the empty seat that posts the big blind soonest,
   which is never the small blind. How many hands a newcomer in each empty seat waits for the big
   blind is the table's own answer (``Table.newcomer_big_blind_waits``) under either button rule,
   given in ``TableState.newcomer_waits``; a hand-built state without it is read from the last
   and next big blinds (see ``TableState``).

Tables in a hand are never touched: a player only moves between hands. A table left with one
player is never stuck: with seats for three or more, the players left then always fit at one
table fewer, so step 1 breaks a table. (At heads-up tables of two seats, 2/2/1 is already the
fewest tables: the lone player waits for the next elimination, which always lets a table break.)
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from engine.table import Table
from engine.tournament.config import Balancing, BreakOrder, MovedPlayerSeat
from engine.tournament.seating import table_count
from engine.triads import can


class PlanError(ValueError):
    """The table states given to the planner are inconsistent (a player seated twice, a bad seat)."""


class MoveReason(StrEnum):
    BALANCE = "balance"  # BAL-1
    BREAK = "break"  # BRK-1
    REDRAW = "redraw"  # BRK-2


@dataclass(frozen=True, slots=True)
class TableState:
    """What the planner needs to know about one table.

    ``big_blind_order`` (the occupied seats in the order they post the big blind, the next one
    first) and ``newcomer_waits`` (for each empty seat, how many hands a player seated there
    would wait before posting the big blind) are the table's own answers (``state_of`` builds
    them from an ``engine.table.Table``): the one source of truth for MOVE-1 under either button
    rule. A hand-built state may leave them out; they are then read from ``next_big_blind_seat``
    (the seat posting the next big blind) and ``big_blind_seat`` (the seat that posted the last
    one: under the dead button a newcomer between the two posts the next big blind), or before
    a table's first hand from ``button`` (the drawn first button). ``in_hand`` tables are left
    alone; a ``breaking`` table is being emptied by BRK-1.
    """

    table_id: int
    size: int
    seats: Mapping[int, str]
    big_blind_seat: int | None = None
    button: int | None = None
    in_hand: bool = False
    next_big_blind_seat: int | None = None
    big_blind_order: tuple[int, ...] | None = None
    newcomer_waits: Mapping[int, int] | None = None
    breaking: bool = False


class TableView(Protocol):
    """What ``next_step`` reads of the tables it picks, only when it needs it (the director
    answers from its live ``Table``s, ``plan_tables`` from plain ``TableState``s)."""

    def seats(self, table_id: int) -> Mapping[int, str]: ...

    def big_blind_order(self, table_id: int) -> Sequence[int]:
        """The occupied seats in the order they post the big blind, the next one first."""
        ...

    def newcomer_waits(self, table_id: int) -> Mapping[int, int]:
        """For each empty seat, the hands a player seated there now waits for the big blind."""
        ...


class StatesView:
    """A ``TableView`` over plain ``TableState``s."""

    def __init__(self, states: Mapping[int, TableState]) -> None:
        self.states = states

    def seats(self, table_id: int) -> Mapping[int, str]:
        return self.states[table_id].seats

    def big_blind_order(self, table_id: int) -> Sequence[int]:
        return _order(self.states[table_id])

    def newcomer_waits(self, table_id: int) -> Mapping[int, int]:
        return _waits(self.states[table_id])


class TablesView:
    """A ``TableView`` over live ``engine.table.Table``s (the table's own answers, MOVE-1)."""

    def __init__(self, tables: Mapping[int, Table]) -> None:
        self.tables = tables

    def seats(self, table_id: int) -> Mapping[int, str]:
        return {seated.seat: seated.player for seated in self.tables[table_id].players}

    def big_blind_order(self, table_id: int) -> Sequence[int]:
        table = self.tables[table_id]
        order = table.big_blind_order()
        return order if order else tuple(seated.seat for seated in table.players)

    def newcomer_waits(self, table_id: int) -> Mapping[int, int]:
        table = self.tables[table_id]
        waits = table.newcomer_big_blind_waits()
        # a table that cannot tell (no button yet) counts empty seats in seat order
        return waits if waits else {seat: number for number, seat in enumerate(table.empty_seats())}


def state_of(table: Table, *, in_hand: bool = False, breaking: bool = False) -> TableState:
    """The planner's view of a live table (between hands unless ``in_hand``)."""
    return TableState(
        table.table_id,
        table.size,
        {seated.seat: seated.player for seated in table.players},
        in_hand=in_hand,
        big_blind_order=None if in_hand else table.big_blind_order(),
        newcomer_waits=None if in_hand else table.newcomer_big_blind_waits(),
        breaking=breaking,
    )


@dataclass(frozen=True, slots=True)
class Move:
    """Move ``player`` from ``from_table``/``from_seat`` to ``to_table``/``to_seat``, between hands."""

    player: str
    from_table: int
    from_seat: int
    to_table: int
    to_seat: int
    reason: MoveReason


@dataclass(frozen=True, slots=True)
class TableBreak:
    """Table ``table_id`` closes: everyone seated there has been moved."""

    table_id: int


@dataclass(frozen=True, slots=True)
class StartBreak:
    """BRK-1: table ``table_id`` deals no more; its players move out as seats come free."""

    table_id: int


@dataclass(frozen=True, slots=True)
class Redraw:
    """BRK-2: ``broken`` close and everyone is reseated by ``moves`` over ``tables``, which then
    draw for the button. The moves form a permutation: lift every mover first, then seat them."""

    tables: tuple[int, ...]
    broken: tuple[int, ...]
    moves: tuple[Move, ...]


@dataclass(frozen=True, slots=True)
class Wait:
    """Nothing more can be done until a hand ends: keep ``hold`` (idle tables) from dealing.
    ``waiting_for`` names tables in a hand the plan needs, where it knows them."""

    hold: tuple[int, ...] = ()
    waiting_for: tuple[int, ...] = ()


Step = Move | StartBreak | TableBreak | Redraw | Wait


@dataclass(frozen=True, slots=True)
class Plan:
    """What ``plan_tables`` did over plain states: each player's move (from their seat before the
    plan to their seat after it), the tables closed, the tables that draw for the button again,
    the table still being broken (``breaking``), and where the plan stopped (``hold``,
    ``waiting_for``, as in ``Wait``). Apply it as ``apply_plan`` does."""

    moves: tuple[Move, ...] = ()
    breaks: tuple[TableBreak, ...] = ()
    redraw_tables: tuple[int, ...] = ()
    breaking: int | None = None
    hold: tuple[int, ...] = ()
    waiting_for: tuple[int, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.moves or self.breaks or self.redraw_tables or self.breaking is not None)


# --- the index ------------------------------------------------------------------------------------

_BUSY, _IDLE, _RESERVED = 0, 1, 2


class TableIndex:
    """Every table's head count, and the idle tables by head count.

    The director keeps it current (``put`` when a table's count or state changes, ``remove``
    when it closes) so that ``next_step`` finds the largest and smallest tables and the idle
    table it wants in O(log n). A table is busy (in a hand: never touched), idle (between hands)
    or reserved (being broken: counted, but neither a source nor a destination).
    Idle tables sit in two lazy heaps per head count, by number and by (times the player due
    their big blind has moved, number); stale entries are skipped when met and the heaps are
    rebuilt when stale entries outnumber the live ones.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._count: dict[int, int] = {}
        self._state: dict[int, int] = {}
        self._histogram = [0] * (size + 1)
        self._players = 0
        self._busy = 0
        self._idle: dict[int, tuple[int, int]] = {}  # idle table -> (count, times moved)
        self._idle_at = [0] * (size + 1)
        self._by_number: list[list[int]] = [[] for _ in range(size + 1)]
        self._by_moves: list[list[tuple[int, int]]] = [[] for _ in range(size + 1)]

    # -- updates ----------------------------------------------------------------------------------

    def put(
        self, table_id: int, count: int, *, idle: bool, times_moved: int = 0, reserved: bool = False
    ) -> None:
        """Record ``table_id`` with ``count`` players, idle or busy (or reserved for a break).
        ``times_moved`` is how often the player due its big blind next has been moved (MOVE-1)."""
        if not 0 <= count <= self.size:
            raise PlanError(f"table {table_id} cannot hold {count} players in {self.size} seats")
        self._drop(table_id)
        state = _RESERVED if reserved else _IDLE if idle else _BUSY
        self._count[table_id] = count
        self._state[table_id] = state
        self._histogram[count] += 1
        self._players += count
        if state == _BUSY:
            self._busy += 1
        elif state == _IDLE:
            self._idle[table_id] = (count, times_moved)
            self._idle_at[count] += 1
            heapq.heappush(self._by_number[count], table_id)
            heapq.heappush(self._by_moves[count], (times_moved, table_id))
            self._compact(count)

    def remove(self, table_id: int) -> None:
        """The table closed."""
        self._drop(table_id)

    def _drop(self, table_id: int) -> None:
        count = self._count.pop(table_id, None)
        if count is None:
            return
        state = self._state.pop(table_id)
        self._histogram[count] -= 1
        self._players -= count
        if state == _BUSY:
            self._busy -= 1
        elif state == _IDLE:
            del self._idle[table_id]
            self._idle_at[count] -= 1

    def _compact(self, count: int) -> None:
        live = self._idle_at[count]
        if len(self._by_number[count]) > 4 * live + 64:
            self._by_number[count] = sorted(t for t, (c, _) in self._idle.items() if c == count)
        if len(self._by_moves[count]) > 4 * live + 64:
            self._by_moves[count] = sorted((m, t) for t, (c, m) in self._idle.items() if c == count)

    # -- queries ----------------------------------------------------------------------------------

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._count

    @property
    def tables(self) -> int:
        return len(self._count)

    @property
    def players(self) -> int:
        return self._players

    @property
    def any_busy(self) -> bool:
        return self._busy > 0

    def tables_with(self, players: int) -> int:
        """How many tables seat at least ``players`` players."""
        return sum(self._histogram[players:])

    def count(self, table_id: int) -> int:
        return self._count[table_id]

    def is_idle(self, table_id: int) -> bool:
        return self._state.get(table_id) == _IDLE

    def largest(self) -> int:
        for count in range(self.size, -1, -1):
            if self._histogram[count]:
                return count
        return 0

    def smallest(self) -> int:
        for count in range(self.size + 1):
            if self._histogram[count]:
                return count
        return 0

    def lowest_idle(self, count: int) -> int | None:
        """The idle table with ``count`` players and the lowest number."""
        if not self._idle_at[count]:
            return None
        heap = self._by_number[count]
        idle = self._idle
        while heap:
            table_id = heap[0]
            entry = idle.get(table_id)
            if entry is not None and entry[0] == count:
                return table_id
            heapq.heappop(heap)
        return None

    def least_moved_idle(self, count: int) -> int | None:
        """The idle table with ``count`` players whose next big blind moved least, then lowest number."""
        if not self._idle_at[count]:
            return None
        heap = self._by_moves[count]
        idle = self._idle
        while heap:
            moved, table_id = heap[0]
            if idle.get(table_id) == (count, moved):
                return table_id
            heapq.heappop(heap)
        return None

    def idle_tables(self) -> list[int]:
        """Every idle table, by number (O(idle tables))."""
        return sorted(self._idle)

    def tables_in_hand(self) -> list[int]:
        """Every busy table, by number (O(tables): only for the few tables of a redraw)."""
        return sorted(t for t, state in self._state.items() if state == _BUSY)

    def all_tables(self) -> list[int]:
        return sorted(self._count)


# --- the steps ------------------------------------------------------------------------------------


def _order(state: TableState) -> list[int]:
    """The occupied seats in the order they post the big blind, the next one first."""
    if state.big_blind_order is not None and set(state.big_blind_order) == set(state.seats):
        return list(state.big_blind_order)
    anchor = _anchor(state)
    return sorted(state.seats, key=lambda seat: (seat - anchor - 1) % state.size)


def _waits(state: TableState) -> dict[int, int]:
    """For each empty seat, the hands a newcomer seated there waits before the big blind."""
    empty = [seat for seat in range(1, state.size + 1) if seat not in state.seats]
    if state.newcomer_waits is not None and set(state.newcomer_waits) == set(empty):
        return dict(state.newcomer_waits)
    anchor = _anchor(state)
    distances = [(seat - anchor - 1) % state.size for seat in state.seats]
    waits = {}
    for seat in empty:
        mine = (seat - anchor - 1) % state.size
        waits[seat] = sum(1 for distance in distances if distance < mine)
    return waits


def _anchor(state: TableState) -> int:
    """The seat the big-blind order of a hand-built state starts after.

    With the next big blind known: the last big blind's seat when the next one is the first
    player after it (the dead button's rule, which also holds whenever nobody between them
    left); otherwise the occupied seat just before the next big blind (its small blind under
    the forward-moving button). Never the seat before the next big blind when that seat is
    empty: a newcomer there would post the big blind at once (MOVE-1's case). Without it: the
    last big blind; before a table's first hand, the seat of its coming small blind (the first
    player after the button; heads-up, the button).
    """
    seats = sorted(state.seats)
    size = state.size
    upcoming = state.next_big_blind_seat
    if upcoming is not None and upcoming in state.seats:
        last = state.big_blind_seat
        if last is not None:
            after_last = min(seats, key=lambda seat: (seat - last - 1) % size)
            if after_last == upcoming:
                return last
        others = [seat for seat in seats if seat != upcoming]
        return max(others, key=lambda seat: (seat - upcoming - 1) % size) if others else upcoming
    if state.big_blind_seat is not None:
        return state.big_blind_seat
    if state.button is not None:
        button = state.button
        after = sorted(seats, key=lambda seat: (seat - button - 1) % size)
        return after[0] if len(after) >= 3 else button
    return size  # nothing known yet: the order starts at seat 1


def next_step(
    index: TableIndex,
    view: TableView,
    settings: Balancing,
    rng: random.Random,
    *,
    moves_so_far: Mapping[str, int] | None = None,
    last_elimination_table: int | None = None,
    breaking: int | None = None,
) -> Step | None:
    """The next step between hands (see the module docstring), or ``None`` when the tables are
    as they should be. ``breaking`` is the table a ``StartBreak`` began emptying, if any."""
    if index.tables == 0:
        return None
    moved = moves_so_far or {}
    if breaking is not None:
        return _empty_breaking_table(index, view, breaking, rng)
    if index.tables > table_count(index.players, index.size):
        return _start_break(index, view, settings, rng, last_elimination_table)
    return _balance(index, view, settings, moved)


def _start_break(
    index: TableIndex,
    view: TableView,
    settings: Balancing,
    rng: random.Random,
    last_elimination: int | None,
) -> Step:
    named: int | None = None
    if settings.break_order is BreakOrder.LAST_ELIMINATION:
        named = last_elimination if last_elimination is not None and last_elimination in index else None
    elif settings.break_order is BreakOrder.FIXED:
        named = next((table_id for table_id in settings.fixed_order if table_id in index), None)
    redraw = index.tables - 1 in settings.redraw_at_tables
    if redraw and index.any_busy:
        # the redraw reseats everyone at once: every table must be idle first
        return Wait(tuple(index.idle_tables()), tuple(index.tables_in_hand()))
    if named is not None and not index.is_idle(named):
        return Wait(waiting_for=(named,))
    if named is None and settings.break_order is BreakOrder.RANDOM:
        idle = index.idle_tables()
        named = rng.choice(idle) if idle else None
    if named is None:
        named = next(
            (t for c in range(index.size + 1) if (t := index.lowest_idle(c)) is not None),
            None,
        )
        if named is None:
            return Wait()  # every table is in a hand; the next hand to end plans again
    if redraw:
        return _redraw(index, view, named, rng)
    return StartBreak(named)


def _empty_breaking_table(index: TableIndex, view: TableView, breaking: int, rng: random.Random) -> Step:
    """BRK-1: the next player of the breaking table goes to the emptiest idle table."""
    leaving = view.seats(breaking)
    if not leaving:
        return TableBreak(breaking)
    for count in range(index.size):
        target_id = index.lowest_idle(count)
        if target_id is None:
            continue
        taken = view.seats(target_id)
        empty = [seat for seat in range(1, index.size + 1) if seat not in taken]
        from_seat = rng.choice(sorted(leaving))
        return Move(leaving[from_seat], breaking, from_seat, target_id, rng.choice(empty), MoveReason.BREAK)
    return Wait(hold=(breaking,))


def _redraw(index: TableIndex, view: TableView, broken: int, rng: random.Random) -> Redraw:
    """BRK-2: reseat everyone at random over every table but ``broken`` (all of them idle)."""
    seated = {table_id: view.seats(table_id) for table_id in index.all_tables()}
    start = {player: (t, seat) for t, seats in seated.items() for seat, player in seats.items()}
    players = sorted(start)
    rng.shuffle(players)
    table_ids = [table_id for table_id in sorted(seated) if table_id != broken]
    base, extra = divmod(len(players), len(table_ids))
    moves = []
    position = 0
    for number, table_id in enumerate(table_ids):
        for seat in sorted(rng.sample(range(1, index.size + 1), base + 1 if number < extra else base)):
            player = players[position]
            position += 1
            if start[player] != (table_id, seat):
                moves.append(Move(player, *start[player], table_id, seat, MoveReason.REDRAW))
    return Redraw(tuple(table_ids), (broken,), tuple(moves))


def _balance(
    index: TableIndex, view: TableView, settings: Balancing, moved: Mapping[str, int]
) -> Step | None:
    largest, smallest = index.largest(), index.smallest()
    # a gap of one can never close, whatever the threshold says
    if largest - smallest < max(settings.threshold, 2):
        return None
    target_id = index.lowest_idle(smallest)
    if target_id is None:
        return Wait()  # the short table is in a hand: its end plans again
    source_id = index.least_moved_idle(largest)
    if source_id is None:
        return Wait(hold=(target_id,))  # the short table waits for a full one to finish its hand
    from_seat = view.big_blind_order(source_id)[0]
    to_seat = _destination_seat(view.newcomer_waits(target_id), settings.moved_player_seat, hands_until=0)
    player = view.seats(source_id)[from_seat]
    return Move(player, source_id, from_seat, target_id, to_seat, MoveReason.BALANCE)


def _destination_seat(waits: Mapping[int, int], rule: MovedPlayerSeat, hands_until: int) -> int:
    """MOVE-1: the empty seat (``waits``: each empty seat's wait for the big blind) for a player
    ``hands_until`` hands from the big blind."""
    if rule is MovedPlayerSeat.WORST_POSITION:
        return min(waits, key=lambda seat: (waits[seat], seat))
    return min(waits, key=lambda seat: (abs(waits[seat] - hands_until), waits[seat], seat))


def times_moved(state: TableState, moved: Mapping[str, int]) -> int:
    """How often the player due the big blind next at ``state`` has been moved (0 if nobody)."""
    order = _order(state)
    return moved.get(state.seats[order[0]], 0) if order else 0


# --- plain states ---------------------------------------------------------------------------------


def verify_tables(tables: Sequence[TableState]) -> None:
    """Raise ``PlanError`` unless the tables are consistent: distinct ids, one size, valid seats,
    nobody seated twice."""
    ids = [table.table_id for table in tables]
    if len(set(ids)) != len(ids):
        raise PlanError(f"table ids must be distinct, got {sorted(ids)}")
    sizes = {table.size for table in tables}
    if len(sizes) > 1:
        raise PlanError(f"all tables must have the same size, got sizes {sorted(sizes)}")
    where: dict[str, int] = {}
    for table in tables:
        if table.size < 2:
            raise PlanError(f"table {table.table_id}: size must be >= 2, got {table.size}")
        for seat, player in table.seats.items():
            if not 1 <= seat <= table.size:
                raise PlanError(f"table {table.table_id}: seat {seat} is outside 1..{table.size}")
            if player in where:
                raise PlanError(f"player {player!r} is seated at tables {where[player]} and {table.table_id}")
            where[player] = table.table_id


can_plan_tables = can(verify_tables, PlanError)


def plan_tables(
    tables: Sequence[TableState],
    settings: Balancing,
    rng: random.Random,
    *,
    moves_so_far: Mapping[str, int] | None = None,
    last_elimination_table: int | None = None,
) -> Plan:
    """Apply ``next_step`` to plain ``tables`` until it has nothing more to do or must wait;
    return what it did as one ``Plan`` (the rule itself is ``next_step``).

    Promises, when no table is in a hand: afterwards the table count is the fewest that hold
    everyone and the largest and smallest tables differ by less than ``settings.threshold``.
    Never moves a player to or from a table in a hand. Same inputs and rng state, same plan.
    """
    verify_tables(tables)
    if not tables:
        return Plan()
    moved: dict[str, int] = dict(moves_so_far or {})
    states = {table.table_id: table for table in tables}
    seats = {table.table_id: dict(table.seats) for table in tables}
    index = TableIndex(tables[0].size)
    breaking = next((table.table_id for table in tables if table.breaking), None)

    current: dict[int, TableState] = dict(states)
    view = StatesView(current)

    def refresh(table_id: int) -> None:
        table = current[table_id] = _with_seats(states[table_id], seats[table_id])
        index.put(
            table_id,
            len(table.seats),
            idle=not table.in_hand,
            times_moved=times_moved(table, moved),
            reserved=table_id == breaking,
        )

    for table_id in states:
        refresh(table_id)
    moves: list[Move] = []
    breaks: list[TableBreak] = []
    redraw: tuple[int, ...] = ()
    stop = Wait()
    for _ in range(10 * sum(len(t.seats) for t in tables) + 10 * len(tables) + 10):
        step = next_step(
            index,
            view,
            settings,
            rng,
            moves_so_far=moved,
            last_elimination_table=last_elimination_table,
            breaking=breaking,
        )
        if step is None:
            break
        if isinstance(step, Wait):
            stop = step
            break
        if isinstance(step, Move):
            del seats[step.from_table][step.from_seat]
            seats[step.to_table][step.to_seat] = step.player
            moves.append(step)
            moved[step.player] = moved.get(step.player, 0) + 1
            refresh(step.from_table)
            refresh(step.to_table)
        elif isinstance(step, StartBreak):
            breaking = step.table_id
            refresh(breaking)
        elif isinstance(step, TableBreak):
            breaks.append(step)
            index.remove(step.table_id)
            del states[step.table_id], seats[step.table_id], current[step.table_id]
            breaking = None
            last_elimination_table = None  # a second break in one plan uses the fallback
        else:
            lifted = {move.player: seats[move.from_table].pop(move.from_seat) for move in step.moves}
            for move in step.moves:
                seats[move.to_table][move.to_seat] = lifted[move.player]
            moves.extend(step.moves)
            for table_id in step.broken:
                breaks.append(TableBreak(table_id))
                index.remove(table_id)
                del states[table_id], seats[table_id], current[table_id]
            for table_id in step.tables:
                refresh(table_id)
            redraw = step.tables
    else:
        raise PlanError("the planner did not settle: a step made no progress")
    collapsed = _collapse(moves)
    if redraw:  # everyone's seat comes from the redraw, whatever moved them before it
        collapsed = tuple(
            Move(m.player, m.from_table, m.from_seat, m.to_table, m.to_seat, MoveReason.REDRAW)
            for m in collapsed
        )
    return Plan(
        collapsed,
        tuple(breaks),
        redraw,
        breaking,
        stop.hold,
        stop.waiting_for,
    )


def _with_seats(state: TableState, seats: dict[int, str]) -> TableState:
    if seats == state.seats:
        return state
    # the table's own answers describe the seats it had: a changed table is read from its blinds
    return TableState(
        state.table_id,
        state.size,
        dict(seats),
        big_blind_seat=state.big_blind_seat,
        button=state.button,
        in_hand=state.in_hand,
        next_big_blind_seat=state.next_big_blind_seat,
        breaking=state.breaking,
    )


def _collapse(moves: list[Move]) -> tuple[Move, ...]:
    """One move per player: from their seat before the plan to their seat after it."""
    first: dict[str, Move] = {}
    last: dict[str, Move] = {}
    for move in moves:
        first.setdefault(move.player, move)
        last[move.player] = move
    collapsed = []
    for player, start in first.items():
        end = last[player]
        if (start.from_table, start.from_seat) != (end.to_table, end.to_seat):
            collapsed.append(
                Move(player, start.from_table, start.from_seat, end.to_table, end.to_seat, start.reason)
            )
    return tuple(collapsed)


def apply_plan(tables: Sequence[TableState], plan: Plan) -> dict[int, dict[int, str]]:
    """The seats after carrying out ``plan``: ``{table_id: {seat: player}}`` (broken tables gone)."""
    seats = {table.table_id: dict(table.seats) for table in tables}
    for move in plan.moves:
        del seats[move.from_table][move.from_seat]
    for move in plan.moves:
        seats[move.to_table][move.to_seat] = move.player
    for table_break in plan.breaks:
        del seats[table_break.table_id]
    return seats
