"""Breaking and balancing tables (BRK-1, BRK-2, BAL-1, MOVE-1) as a planner over plain data.

``plan_tables(tables, settings, rng, ...)`` looks at every table's seats and returns a ``Plan``:
the tables to break, the seat moves to make (one per player), the tables whose button must be drawn
again after a redraw, and the tables the plan is waiting for. It changes nothing itself; the
coordinator carries the moves out between hands.

The procedure, in order (every step is deterministic for a given ``rng`` state):

1. BRK-1 break. While the players left fit at one table fewer, break a table: the table where
   the last elimination happened (P§12), a random idle table (S) or the first table of the
   operator's fixed order still in play (A). When the named table is gone (or the setting has
   no answer), the fallback is the idle table with the fewest players, then the highest number.
   Its players, in random order, each go to the idle table with the fewest players (ties drawn at
   random) and take a random empty seat there (S, TDA R10B).
2. BRK-2 redraw. When breaking brings the tournament to a table count in
   ``settings.redraw_at_tables`` (the final table by default), everyone is reseated at random
   over the remaining tables (even head counts) and those tables draw for the button again. A
   redraw needs every table idle: until then the plan breaks nothing and waits for the hands.
3. BAL-1 balance. While the largest and the smallest table differ by ``settings.threshold`` or
   more, move one player from a largest table to a smallest table. The source table (TDA R11C,
   our fixed procedure): among the largest idle tables, the one whose player due the big blind
   next has been moved the fewest times, then the lowest table number. The destination: the
   smallest idle table with the lowest number. One move at a time from largest to smallest is the
   fewest moves that can close the gap.
4. MOVE-1 who and where. The player moved is the one due the big blind next at the source table
   (``TableState.next_big_blind_seat``, from the table itself, under either button rule).
   With ``same_position`` they take the empty seat whose turn for the big blind is as near as
   possible to theirs (they were due next, so: the seat that takes the big blind next, or the
   nearest after it); with ``worst_position`` the empty seat that takes the big blind soonest.
   Under the dead-button rule a newcomer is never the small blind: the small blind always follows
   the last big blind, so both settings keep that promise.

Tables in a hand are never touched (a player only moves between hands): they are neither source
nor destination. When a step needs such a table, the planner stops there and lists the table in
``Plan.waiting_for``; the coordinator plans again when that hand ends. A table left with one
player is never stuck: with seats for three or more, the players left then always fit at one
table fewer, so step 1 breaks a table. (At heads-up tables of two seats, 2/2/1 is already the
fewest tables: the lone player waits for the next elimination, which always lets a table break.)
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from engine.tournament.config import Balancing, BreakOrder, MovedPlayerSeat
from engine.tournament.seating import table_count


class PlanError(ValueError):
    """The table states given to the planner are inconsistent (a player seated twice, a bad seat)."""


class MoveReason(StrEnum):
    BALANCE = "balance"  # BAL-1
    BREAK = "break"  # BRK-1
    REDRAW = "redraw"  # BRK-2


@dataclass(frozen=True, slots=True)
class TableState:
    """What the planner needs to know about one table.

    ``next_big_blind_seat`` is the seat that posts the big blind in the table's next hand, as the
    table itself says (``engine.table.Table.next_positions().big_blind``): the one source of truth
    for MOVE-1 under either button rule. Without it the order is guessed from the last hand: under
    the dead button the next big blind is the first player after ``big_blind_seat`` (the seat that
    posted the big blind in the last hand); under the forward-moving button that guess is wrong
    once a player between the button and the blinds has busted, so give the real seat. Before a
    table's first hand, ``button`` (the drawn first button) anchors the order instead. ``in_hand``
    tables are left alone.
    """

    table_id: int
    size: int
    seats: Mapping[int, str]
    big_blind_seat: int | None = None
    button: int | None = None
    in_hand: bool = False
    next_big_blind_seat: int | None = None


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
    """Table ``table_id`` closes; ``players`` were seated there and move by the plan's moves."""

    table_id: int
    players: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    """What to do between hands; ``redraw_tables`` draw a new button afterwards.

    Each player appears in at most one move, from their seat before the plan to their seat after
    it. A redraw's moves form a permutation, so apply a plan as ``apply_plan`` does: take every
    moving player out of their seat first, then seat them all.

    ``waiting_for`` names the tables in a hand that the rest of the plan needs: the coordinator
    deals no new hand there once their hand ends, and plans again when they are all idle.
    """

    moves: tuple[Move, ...] = ()
    breaks: tuple[TableBreak, ...] = ()
    redraw_tables: tuple[int, ...] = ()
    waiting_for: tuple[int, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.moves or self.breaks or self.redraw_tables)


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


def can_plan_tables(tables: Sequence[TableState]) -> bool:
    try:
        verify_tables(tables)
    except PlanError:
        return False
    return True


@dataclass(slots=True)
class _Work:
    """A table's seats while the plan is being built (mutable on purpose: it is the draft)."""

    table_id: int
    size: int
    seats: dict[int, str]
    anchor: int  # the seat the big-blind order starts after
    in_hand: bool

    def distance(self, seat: int) -> int:
        """1 for the first seat after the anchor ... ``size`` for the anchor seat itself."""
        return (seat - self.anchor - 1) % self.size + 1

    def big_blind_order(self) -> list[int]:
        """Occupied seats in the order they take the big blind, the next one first."""
        return sorted(self.seats, key=self.distance)

    def hands_until_big_blind(self, seat: int) -> int:
        """How many players take the big blind before whoever sits in ``seat`` (0: they are next)."""
        limit = self.distance(seat)
        return sum(1 for occupied in self.seats if occupied != seat and self.distance(occupied) < limit)

    def empty_seats(self) -> list[int]:
        return [seat for seat in range(1, self.size + 1) if seat not in self.seats]


@dataclass(slots=True)
class _Draft:
    tables: dict[int, _Work]
    moves: list[Move] = field(default_factory=list)
    breaks: list[TableBreak] = field(default_factory=list)
    waiting: set[int] = field(default_factory=set)

    def move(
        self, player: str, source: _Work, from_seat: int, target: _Work, to_seat: int, reason: MoveReason
    ) -> None:
        del source.seats[from_seat]
        target.seats[to_seat] = player
        self.moves.append(Move(player, source.table_id, from_seat, target.table_id, to_seat, reason))


def plan_tables(
    tables: Sequence[TableState],
    settings: Balancing,
    rng: random.Random,
    *,
    moves_so_far: Mapping[str, int] | None = None,
    last_elimination_table: int | None = None,
) -> Plan:
    """Plan breaks, redraws and balancing moves for ``tables`` (see the module docstring).

    Promises, when no table is in a hand: afterwards the table count is the fewest that hold
    everyone and the largest and smallest tables differ by less than ``settings.threshold``.
    Never moves a player to or from a table in a hand. Same inputs and rng state, same plan.
    """
    verify_tables(tables)
    if not tables:
        return Plan()
    moved = moves_so_far or {}
    draft = _Draft(
        {
            table.table_id: _Work(
                table.table_id,
                table.size,
                dict(table.seats),
                _anchor(table),
                table.in_hand,
            )
            for table in sorted(tables, key=lambda t: t.table_id)
        }
    )
    before = len(draft.tables)
    _break_tables(draft, settings, rng, last_elimination_table)
    redraw: tuple[int, ...] = ()
    if len(draft.tables) < before and len(draft.tables) in settings.redraw_at_tables:
        busy = [work.table_id for work in draft.tables.values() if work.in_hand]
        if busy or draft.waiting:
            # the redraw reseats everyone at once: break nothing until every table is idle,
            # or the redraw would be lost once the breaks were done
            return Plan(waiting_for=tuple(sorted({*busy, *draft.waiting})))
        redraw = _redraw(draft, tables, rng)
    elif not draft.waiting:  # a pending break comes first: it changes every count
        _balance(draft, settings, moved)
    return Plan(_collapse(draft.moves), tuple(draft.breaks), redraw, tuple(sorted(draft.waiting)))


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


def _anchor(table: TableState) -> int:
    """The seat the big-blind order starts after: the seat before the table's next big blind when
    it is known; else the last big blind; before a table's first hand, the seat of its coming
    small blind (the first player after the button; heads-up, the button)."""
    if table.next_big_blind_seat is not None and table.next_big_blind_seat in table.seats:
        return (table.next_big_blind_seat - 2) % table.size + 1
    if table.big_blind_seat is not None:
        return table.big_blind_seat
    if table.button is not None:
        button = table.button
        after = sorted(table.seats, key=lambda seat: (seat - button - 1) % table.size)
        return after[0] if len(after) >= 3 else button
    return table.size  # nothing known yet: the order starts at seat 1


def _break_tables(
    draft: _Draft, settings: Balancing, rng: random.Random, last_elimination: int | None
) -> None:
    players = sum(len(work.seats) for work in draft.tables.values())
    size = next(iter(draft.tables.values())).size
    while len(draft.tables) > table_count(players, size):
        chosen = _table_to_break(draft, settings, rng, last_elimination)
        if chosen is None:
            return
        target_tables = [w for w in draft.tables.values() if w is not chosen and not w.in_hand]
        free = sum(w.size - len(w.seats) for w in target_tables)
        if free < len(chosen.seats):
            # wait for the fewest tables in a hand whose empty seats make up the shortfall
            busy = sorted(
                (w for w in draft.tables.values() if w.in_hand and w is not chosen),
                key=lambda w: (len(w.seats) - w.size, w.table_id),
            )
            for work in busy:
                draft.waiting.add(work.table_id)
                free += work.size - len(work.seats)
                if free >= len(chosen.seats):
                    break
            return
        leaving = [chosen.seats[seat] for seat in sorted(chosen.seats)]
        rng.shuffle(leaving)
        seat_of = {player: seat for seat, player in chosen.seats.items()}
        # tables with free seats by head count: each player joins one of the emptiest (S)
        buckets: dict[int, list[_Work]] = {}
        for work in target_tables:
            if len(work.seats) < work.size:
                buckets.setdefault(len(work.seats), []).append(work)
        fewest = min(buckets, default=0)
        for player in leaving:
            while not buckets.get(fewest):
                fewest += 1
            candidates = buckets[fewest]
            target = candidates.pop(0 if len(candidates) == 1 else rng.randrange(len(candidates)))
            draft.move(
                player, chosen, seat_of[player], target, rng.choice(target.empty_seats()), MoveReason.BREAK
            )
            if len(target.seats) < target.size:
                buckets.setdefault(len(target.seats), []).append(target)
        draft.breaks.append(TableBreak(chosen.table_id, tuple(sorted(leaving))))
        del draft.tables[chosen.table_id]
        last_elimination = None  # a second break in one plan uses the fallback


def _table_to_break(
    draft: _Draft, settings: Balancing, rng: random.Random, last_elimination: int | None
) -> _Work | None:
    """The table BRK-1 breaks now, or ``None`` (and a waiting entry) if it is in a hand."""
    named: int | None = None
    if settings.break_order is BreakOrder.LAST_ELIMINATION:
        named = last_elimination if last_elimination in draft.tables else None
    elif settings.break_order is BreakOrder.FIXED:
        named = next((tid for tid in settings.fixed_order if tid in draft.tables), None)
    elif settings.break_order is BreakOrder.RANDOM:
        idle = [w for w in draft.tables.values() if not w.in_hand]
        if not idle:
            draft.waiting.update(draft.tables)
            return None
        return rng.choice(idle)
    if named is not None:
        work = draft.tables[named]
        if work.in_hand:
            draft.waiting.add(named)
            return None
        return work
    idle = [w for w in draft.tables.values() if not w.in_hand]
    if not idle:
        draft.waiting.update(draft.tables)
        return None
    return min(idle, key=lambda w: (len(w.seats), -w.table_id))


def _redraw(draft: _Draft, original: Sequence[TableState], rng: random.Random) -> tuple[int, ...]:
    """BRK-2: reseat everyone left at random over the remaining (idle) tables; returns their ids."""
    # the redraw starts from where everyone sat before this plan, so each player moves once
    start = {player: (t.table_id, seat) for t in original for seat, player in t.seats.items()}
    players = sorted(start)
    rng.shuffle(players)
    table_ids = sorted(draft.tables)
    base, extra = divmod(len(players), len(table_ids))
    draft.moves = []
    index = 0
    for position, table_id in enumerate(table_ids):
        work = draft.tables[table_id]
        seats = sorted(rng.sample(range(1, work.size + 1), base + 1 if position < extra else base))
        work.seats = {}
        for seat in seats:
            player = players[index]
            index += 1
            work.seats[seat] = player
            from_table, from_seat = start[player]
            if (from_table, from_seat) != (table_id, seat):
                draft.moves.append(Move(player, from_table, from_seat, table_id, seat, MoveReason.REDRAW))
    return tuple(table_ids)


def _balance(draft: _Draft, settings: Balancing, moved: Mapping[str, int]) -> None:
    extra_moves: dict[str, int] = {}
    while len(draft.tables) > 1:
        counts = {tid: len(w.seats) for tid, w in draft.tables.items()}
        largest, smallest = max(counts.values()), min(counts.values())
        # a gap of one can never close, whatever the threshold says
        if largest - smallest < max(settings.threshold, 2):
            return
        sources = [w for w in draft.tables.values() if counts[w.table_id] == largest]
        targets = [w for w in draft.tables.values() if counts[w.table_id] == smallest]
        idle_sources = [w for w in sources if not w.in_hand]
        idle_targets = [w for w in targets if not w.in_hand]
        if not idle_sources or not idle_targets:
            draft.waiting.update(w.table_id for w in (*sources, *targets) if w.in_hand)
            return

        def times_moved(work: _Work) -> int:
            player = work.seats[work.big_blind_order()[0]]
            return moved.get(player, 0) + extra_moves.get(player, 0)

        source = min(idle_sources, key=lambda w: (times_moved(w), w.table_id))
        target = min(idle_targets, key=lambda w: w.table_id)
        from_seat = source.big_blind_order()[0]
        player = source.seats[from_seat]
        to_seat = _destination_seat(
            target, settings.moved_player_seat, source.hands_until_big_blind(from_seat)
        )
        draft.move(player, source, from_seat, target, to_seat, MoveReason.BALANCE)
        extra_moves[player] = extra_moves.get(player, 0) + 1


def _destination_seat(target: _Work, rule: MovedPlayerSeat, hands_until: int) -> int:
    """MOVE-1: the empty seat at ``target`` for a player ``hands_until`` hands from the big blind."""
    empty = target.empty_seats()
    if rule is MovedPlayerSeat.WORST_POSITION:
        return min(empty, key=lambda s: (target.hands_until_big_blind(s), target.distance(s)))
    return min(
        empty,
        key=lambda s: (
            abs(target.hands_until_big_blind(s) - hands_until),
            target.hands_until_big_blind(s),
            target.distance(s),
        ),
    )


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
