"""A whole tournament played in-process on the pure engine and core, for tests and benchmarks.

``run_tournament(config, players, seed)`` registers ``players`` bots through the registration
machine (REG-1), seats them (SEAT-1, SEAT-2), and plays hands with random-policy bots
(``tournament_bot``) on ``engine.table.Table`` / ``engine.hand.Hand`` until the end (END-1).
Between hands it carries out the break/balance planner's moves (BRK-1, BRK-2, BAL-1, MOVE-1),
runs hand-for-hand rounds on the bubble (HFH-1), ranks eliminations (ELIM-1, ELIM-2), sells
rebuys when the config offers them and, when the clock's add-on break opens, offers the add-on
to every seated player (REG-5, BRK-T1), and pays the prizes
(``payouts.prizes_for_finishes``). It returns a
``SimulationResult`` with every money ``Transfer`` in order, so a store can replay the ledger.

Time is a logical clock (seconds since the start) and every table runs on its own, as on a real
site: an event queue holds each table's next moment. A hand is dealt and played when it starts
(``HAND_BASE_SECONDS`` plus ``SECONDS_PER_ACTION`` per action long) and applied when it ends;
in between the table is in a hand, and the planner may not touch it. When a hand ends, its busts
are ranked alone (ELIM-2), and if a table must break or the tables are out of balance the
planner runs over all tables, busy ones marked ``in_hand``. When the plan waits for hands under
way (``Plan.waiting_for``), tables that finish are held (they deal no new hand) until those
hands are over and the plan can be made. A table finishing during a break waits for its end
(BRK-T1); a new level applies from the next hand (LVL-1). When hand-for-hand becomes due, the
hands under way finish (their busts still count one by one), then every table plays
synchronized rounds through the ``HandForHand`` barrier: a round's busts are one batch, the
level clock stands still and loses the HFH-1 deduction per round instead.

Operator sanctions (PEN-1) can be scripted with ``sanctions``: a ``Penalty`` sits a player out
for some hands (``Table.penalize``: dealt in, posting, hand killed), a ``Disqualification``
removes them (``Table.disqualify``) with their chips, which leave play, and gives them the worst
place still open (``Standings.disqualify``; see ``engine.tournament.standings`` for the place and
the prizes). Each is carried out when a hand ends at the player's table once ``after_hand``
hands have been dealt in the tournament, before that hand's busts are ranked; one aimed at a
player who is out by then is dropped.

Invariants (an ``InvariantBroken`` error names the first that fails): every hand conserves its
table's chips (the table refuses it otherwise); after every plan the chips in play equal the
chips issued by entries, rebuys and add-ons less the chips removed by disqualifications, and no
move touches a table in a hand; every
``CHECK_SEATS_EVERY`` hands and at the end nobody is seated twice, no table is over its size and
the players seated are exactly the players left; at the end everyone has one
place, every transfer kept the player, pool and ticket accounts non-negative, the ledger sums to
zero and the pool is empty.

Everything random comes from one ``random.Random(seed)``: the same config, players and seed give
the same tournament, hand for hand.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.betting import AnteKind, HandSetup
from engine.hand import Hand
from engine.random_play import choose_action
from engine.table import ButtonRule as TableButtonRule
from engine.table import FirstButton as TableFirstButton
from engine.table import JoinRule, SeatedPlayer, Table, TableError, TableSettings
from engine.tournament.balancing import MoveReason, TableState, plan_tables
from engine.tournament.config import FirstButton, Level, TournamentConfig
from engine.tournament.handforhand import HandForHand, hand_for_hand_due
from engine.tournament.levels import clock_for, hand_for_hand_deduction_seconds
from engine.tournament.payouts import (
    PayoutStructure,
    effective_guarantee,
    overlay_transfer,
    prizes_for_finishes,
    structure_for,
)
from engine.tournament.registration import Registration
from engine.tournament.seating import open_tables, seat_players, table_count
from engine.tournament.standings import Bust, Finish, Standings, tournament_over
from engine.tournament.transfers import (
    CASHIER,
    Reason,
    Transfer,
    may_go_negative,
    player_account,
    pool_account,
)

_END = 0  # event kinds; a hand's end sorts before a start at the same second
_START = 1
_ADD_ON = 2  # the add-on break opens (or closes): every idle table's players are offered one
_NO_TABLE = -1  # the table id of an event for the whole tournament
# the whole-field checks (every seat of every table) run every this many hands
CHECK_SEATS_EVERY = 250
HAND_BASE_SECONDS = 12
SECONDS_PER_ACTION = 3
# the chance a bot facing a bet folds before random_play decides (see ``tournament_bot``)
FOLD_TO_BET_PROBABILITY = 0.4
REBUY_PROBABILITY = 0.6
ADD_ON_PROBABILITY = 0.7
# every bot's bankroll: enough for the entry and a few rebuys and add-ons
BANKROLL_BUY_INS = 12


class SimulationError(ValueError):
    """The simulation cannot run as asked (too few players, a field larger than the config allows)."""


class InvariantBroken(SimulationError):
    """A tournament invariant failed; the message says which, where and by how much."""


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress report: where the tournament stands after ``hands`` hands."""

    players_left: int
    tables: int
    level: int  # 1-based
    hands: int
    clock_seconds: int
    hand_for_hand: bool


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """Everything a simulated tournament did, for tests, the CLI and a ledger replay."""

    tournament_id: str
    seed: int
    entries: int
    hands: int
    actions: int
    moves: int
    balance_moves: int
    tables_broken: int
    redraws: int
    hand_for_hand_hands: int
    plans: int  # planner runs
    plans_waited: int  # planner runs that had to wait for hands under way
    rebuys: int
    add_ons: int
    chips_issued: int
    chips_removed: int  # taken out of play by disqualifications (PEN-1)
    disqualified: tuple[str, ...]  # in the order they were disqualified
    clock_seconds: int
    level_reached: int  # 1-based
    prize_pool: int  # cents, overlay included
    finishes: tuple[Finish, ...]
    transfers: tuple[Transfer, ...]
    structure: PayoutStructure

    def prize_of(self) -> dict[str, int]:
        """Cents each player won (prizes and seat tickets)."""
        won: dict[str, int] = defaultdict(int)
        for transfer in self.transfers:
            if transfer.reason in (Reason.PRIZE, Reason.TICKET):
                won[transfer.target.split(":")[-1]] += transfer.amount
        return dict(won)


Policy = Callable[[Hand, random.Random], int]


@dataclass(frozen=True, slots=True)
class Penalty:
    """PEN-1: sit ``player`` out for ``hands`` hands, from a hand ending after ``after_hand``."""

    after_hand: int
    player: str
    hands: int


@dataclass(frozen=True, slots=True)
class Disqualification:
    """PEN-1: disqualify ``player`` when a hand ends at their table after ``after_hand``."""

    after_hand: int
    player: str


Sanction = Penalty | Disqualification


def tournament_bot(hand: Hand, rng: random.Random) -> int:
    """Play ``hand`` to its end with ``engine.random_play``'s policy, tightened; returns the actions.

    ``random_play`` is built to make all-ins and side pots common; on its own it busts a field of
    10,000 in about 3,000 hands. Facing a bet, a tournament bot therefore first folds with
    ``FOLD_TO_BET_PROBABILITY`` and otherwise lets ``random_play`` choose: still many all-ins, but
    a tournament long enough for levels, breaks, balancing and the bubble to matter.
    """
    actions = 0
    draw = rng.random
    while not hand.is_over:
        # draw first: asking the hand for its legal actions costs more than a random number
        if draw() < FOLD_TO_BET_PROBABILITY and not hand.legal_actions().can_check:
            hand.fold()
        else:
            choose_action(hand, rng).apply(hand)
        actions += 1
    return actions


class _Ledger:
    """The transfers in order and each account's balance, checked as they are planned."""

    def __init__(self) -> None:
        self.transfers: list[Transfer] = []
        self.balances: dict[str, int] = defaultdict(int)

    def apply(self, transfers: tuple[Transfer, ...] | list[Transfer]) -> None:
        for transfer in transfers:
            self.balances[transfer.source] -= transfer.amount
            self.balances[transfer.target] += transfer.amount
            if self.balances[transfer.source] < 0 and not may_go_negative(transfer.source):
                raise InvariantBroken(
                    f"transfer {transfer.idempotency_key} leaves {transfer.source} at "
                    f"{self.balances[transfer.source]} cents; it may not go negative"
                )
            self.transfers.append(transfer)


def _table_settings(config: TournamentConfig) -> TableSettings:
    return TableSettings(
        size=config.table_size,
        button_rule=TableButtonRule(config.button_rule.value),
        first_button=TableFirstButton(config.first_button.value),
        join_rule=JoinRule(config.late_entry_position.value),
        limit=config.limit,
    )


def _next_big_blind(table: Table) -> int | None:
    """The seat posting the big blind in ``table``'s next hand (``None`` while it cannot deal or
    its first button is not drawn yet)."""
    if len(table.players) < 2:
        return None
    try:
        return table.next_positions().big_blind
    except TableError:
        return None


def _seat_after_button(seat: int, button: int, size: int) -> int:
    return (seat - button - 1) % size + 1


class _Tournament:
    """The mutable state of one simulated tournament (private: ``run_tournament`` drives it)."""

    def __init__(
        self,
        config: TournamentConfig,
        players: int,
        seed: int,
        policy: Policy,
        sanctions: Sequence[Sanction] = (),
    ) -> None:
        if players < 2:
            raise SimulationError(f"a tournament needs at least 2 players, got {players}")
        if players > config.max_players:
            raise SimulationError(f"{config.id} takes at most {config.max_players} players, got {players}")
        self.config = config
        self.rng = random.Random(seed)
        self.seed = seed
        self.policy = policy
        self.ledger = _Ledger()
        self.registration = Registration(config, start_at=0)
        self.names = [f"p{index:05d}" for index in range(1, players + 1)]
        self.hands = self.actions = self.moves = self.balance_moves = 0
        self.tables_broken = self.redraws = self.hfh_hands = self.rebuys = self.add_ons = 0
        self.now = 0
        self.paused = self.deducted = 0
        self.chips_issued = 0
        self.chips_removed = 0  # by disqualifications (PEN-1)
        self.disqualified: list[str] = []
        self.sanctions: dict[str, list[Sanction]] = defaultdict(list)
        for sanction in sorted(sanctions, key=lambda sanction: sanction.after_hand):
            self.sanctions[sanction.player].append(sanction)
        self.purchases = 0  # rebuys and add-ons sold: the pool changes only with them
        self.moved_times: dict[str, int] = defaultdict(int)
        self.tables: dict[int, Table] = {}
        self.button_pending: set[int] = set()  # tables seated with one player: no draw possible yet
        self.add_on_done = False
        self.barrier: HandForHand | None = None
        self.events: list[tuple[int, int, int, int]] = []  # (time, sequence, kind, table)
        self.seq = 0
        self.running: dict[int, tuple[HandSetup, dict[int, int]]] = {}  # hands under way
        self.held: set[int] = set()  # idle tables that may not deal yet
        self.parked: set[int] = set()  # idle tables with one player: they wait for company
        self.plan_waiting: frozenset[int] = frozenset()  # tables a pending plan waits for
        self.hfh_pending = False  # hand-for-hand starts once every hand under way has ended
        self.round_active = False  # a synchronized round is being played
        self.round_started = 0
        self.round_on_bubble = False
        self.count_of: dict[int, int] = {}
        self.histogram: Counter[int] = Counter()
        self.last_elimination_table: int | None = None
        self.add_on_offered: set[str] = set()
        self.finished = False
        self.plans = 0
        self.plans_waited = 0  # plans that had to wait for hands under way
        # one clock for the breaks and the add-on break; the registration sells add-ons in the
        # same clock's add-on window (REG-5, BRK-T1)
        self.clock = clock_for(config, start_wall_seconds=self.registration.start_wall_seconds)
        self.deduction = hand_for_hand_deduction_seconds(
            config.regular_level_minutes, config.hand_for_hand.deduction_minutes
        )
        self.level_index = 0
        self._structure: tuple[int, PayoutStructure] | None = None

    # -- money ----------------------------------------------------------------------------------

    def register_everyone(self) -> None:
        bankroll = (self.config.buy_in + (self.config.fee or 0)) * BANKROLL_BUY_INS
        for name in self.names:
            self.ledger.apply(
                [
                    Transfer(
                        CASHIER,
                        player_account(name),
                        bankroll,
                        f"{self.config.id}:deposit:{name}",
                        Reason.DEPOSIT,
                    )
                ]
            )
            outcome = self.registration.register(name, 0, self.ledger.balances[player_account(name)])
            self.ledger.apply(outcome.transfers)
        self.ledger.apply(self.registration.start(0).transfers)
        self.standings = Standings(self.registration.active)

    def structure(self) -> PayoutStructure:
        """The payout structure for the money in the pool now (final once purchases close).

        Recomputed only after a purchase: summing the payments is linear in the field."""
        if self._structure is None or self._structure[0] != self.purchases:
            pool = max(self.registration.pool_contributions, effective_guarantee(self.config))
            self._structure = (self.purchases, structure_for(self.config, pool, self.registration.entries))
        return self._structure[1]

    def purchases_closed(self) -> bool:
        return self.registration.rebuy_period_over(self.now) and (
            self.config.add_on is None or self.add_on_done
        )

    # -- seating --------------------------------------------------------------------------------

    def seat_everyone(self) -> None:
        seating = seat_players(self.registration.active, self.config.table_size, self.rng)
        opened = open_tables(seating, _table_settings(self.config), self.config.starting_stack, self.rng)
        self.tables = opened.tables
        self.chips_issued += self.config.starting_stack * len(self.registration.active)
        self.button_pending = {tid for tid, table in self.tables.items() if len(table.players) < 2}
        for table_id in sorted(self.tables):
            self.recount(table_id)
            self.schedule(0, _START, table_id)
        window = self.registration.add_on_window()
        if window is not None:
            self.schedule(int(window[0]), _ADD_ON, _NO_TABLE)

    def _first_button(self, table: Table) -> None:
        """SEAT-2 at ``table`` now, or (a lone player cannot draw) before its first hand."""
        if len(table.players) < 2:
            self.button_pending.add(int(table.table_id))
            return
        self.button_pending.discard(int(table.table_id))
        if self.config.first_button is FirstButton.DRAW:
            table.draw_button(self.rng)  # SEAT-2, also the final table's redraw (BRK-2)
        else:
            table.set_first_button(1)

    # -- the event loop -------------------------------------------------------------------------
    #
    # Every table runs on its own: a hand ends (END event), the table settles what the hand
    # changed, and deals again (START event) unless it is held. A table is held while a plan waits
    # for hands elsewhere to end (``plan_waiting``) or while hand-for-hand is about to start or
    # a synchronized round is still being played at other tables.

    def schedule(self, at: int, kind: int, table_id: int) -> None:
        self.seq += 1
        heapq.heappush(self.events, (at, self.seq, kind, table_id))

    def step(self) -> None:
        """Handle the next event; raises ``InvariantBroken`` if no table can ever deal again."""
        if not self.events:
            raise InvariantBroken(
                f"no table can deal: {self.standings.players_left} players left, {len(self.tables)} tables, "
                f"held {sorted(self.held)}, waiting for {sorted(self.plan_waiting)}"
            )
        at, _, kind, table_id = heapq.heappop(self.events)
        self.now = max(self.now, at)
        if kind == _ADD_ON:
            self.add_on_break()
            return
        if table_id not in self.tables:
            return  # broken since
        if kind == _END:
            self.end_hand(table_id)
        else:
            self.start_hand(table_id)

    def start_hand(self, table_id: int) -> None:
        """A table may deal: unless it is held, on a break, or short of players (BRK-T1, HFH-1)."""
        if table_id in self.running:
            return
        if self.plan_waiting or self.hfh_pending or self.round_active:
            self.held.add(table_id)
            return
        self.offer_add_ons(table_id)  # the add-on break is when they sell
        if not self.clock.can_start_hand(self.now):
            self.schedule(self.clock.resume_at(self.now), _START, table_id)
            return
        if len(self.tables[table_id].players) < 2:
            self.parked.add(table_id)
            return
        self.deal(table_id, self.now)

    def deal(self, table_id: int, at: int) -> None:
        """Deal and play a hand at ``table_id`` starting at ``at``; its END event applies it."""
        table = self.tables[table_id]
        if table_id in self.button_pending:
            self._first_button(table)
        hand_level = self.clock.start_hand(at, paused_seconds=self.paused, deducted_seconds=self.deducted)
        self.level_index = max(self.level_index, hand_level.index)
        level = hand_level.level
        self.hands += 1
        setup = table.start_hand(
            f"{self.config.id}-{self.hands}", level.small_blind, level.big_blind, level.ante, level.ante_kind
        )
        hand = Hand(setup, rng=self.rng)
        actions = self.policy(hand, self.rng)
        self.actions += actions
        self.running[table_id] = (setup, hand.finishing_stacks())
        self.schedule(at + HAND_BASE_SECONDS + SECONDS_PER_ACTION * actions, _END, table_id)

    def end_hand(self, table_id: int) -> None:
        """Apply a finished hand: busts (ELIM-1) or rebuys, then what the table may do next."""
        table = self.tables[table_id]
        setup, finishing = self.running.pop(table_id)
        result = table.finish_hand(finishing)  # refuses a hand that lost or made chips
        if self.sanctions:
            self.apply_sanctions(table_id)
        busts = []
        if result.busted:
            start = {seat_setup.seat: seat_setup.stack for seat_setup in setup.seats}
            for gone in result.busted:
                if not self.try_rebuy(table, gone):
                    after_button = _seat_after_button(gone.seat, setup.button, table.size)
                    busts.append(Bust(gone.player, start[gone.seat], table_id, after_button))
        self.held.add(table_id)
        if self.round_active and self.barrier is not None:
            closed = self.barrier.finish(table_id, busts)
            if closed is None:
                return  # the table waits for the rest of the synchronized round
            self.hfh_hands += 1
            # the level clock stood still (break time in the round is break time already) ...
            stood_at = self.clock.play_seconds(self.round_started, paused_seconds=self.paused)
            self.paused += self.clock.pause_seconds_between(self.round_started, self.now)
            if self.clock.play_seconds(self.now, paused_seconds=self.paused) != stood_at:
                raise InvariantBroken(
                    f"the level clock moved during the hand-for-hand round {self.round_started}-{self.now} s"
                )
            self.deducted += closed.deduction_seconds  # ... and loses the deduction instead
            if closed.busts:
                share = self.config.hand_for_hand.bubble_ties_share and self.round_on_bubble
                self.eliminate(list(closed.busts), share, closed.busts[-1].table_id)
            self.round_closed()
        elif busts:
            self.eliminate(busts, False, table_id)
        if self.finished:
            return
        self.offer_add_ons(table_id)  # a table whose hand ran into the add-on break
        if not self.round_active and not self.hfh_pending and self.hand_for_hand_due():
            self.hfh_pending = True  # tables finish their hands, then play synchronized rounds
        self.settle()

    def apply_sanctions(self, table_id: int) -> None:
        """PEN-1: carry out the sanctions due for the players at ``table_id``, between hands."""
        table = self.tables[table_id]
        for seated in table.players:
            due = self.sanctions.get(seated.player)
            while due and due[0].after_hand <= self.hands:
                sanction = due.pop(0)
                if isinstance(sanction, Penalty):
                    table.penalize(seated.seat, sanction.hands)
                    continue
                if not self.standings.can_disqualify(seated.player):
                    continue  # the last player left wins; there is nobody to finish below
                self.chips_removed += table.disqualify(seated.seat)
                self.standings.disqualify(seated.player)
                self.registration.eliminate(seated.player, self.now)
                self.disqualified.append(seated.player)
                due.clear()
                self.recount(table_id)
                if self.over():
                    self.finished = True
                break

    def round_closed(self) -> None:
        """A synchronized round closed: every table is idle; another round follows if still due."""
        self.round_active = False
        if not self.finished and self.hand_for_hand_due():
            self.hfh_pending = True
        else:
            self.barrier = None  # hand-for-hand is over

    def settle(self) -> None:
        """Between hands: plan if tables must break or balance, then release or start rounds."""
        # a waiting plan is made again as soon as one of the tables it waits for is idle
        if self.plan_waiting and all(table_id in self.running for table_id in self.plan_waiting):
            return
        if self.plan_waiting or self.plan_due():
            self.rebalance()
        if self.plan_waiting:
            return
        if self.hfh_pending:
            if self.running:
                return
            self.start_round()
            return
        for table_id in sorted(self.held):
            self.schedule(self.now, _START, table_id)
        self.held.clear()

    def start_round(self) -> None:
        """HFH-1: every table that can deal starts the same synchronized hand."""
        self.hfh_pending = False
        playing = [tid for tid in sorted(self.tables) if len(self.tables[tid].players) >= 2]
        if not self.hand_for_hand_due() or len(playing) < 2:
            self.barrier = None
            for table_id in sorted(self.held):
                self.schedule(self.now, _START, table_id)
            self.held.clear()
            return
        self.round_on_bubble = self.standings.players_left == self.structure().places_paid + 1
        at = self.clock.resume_at(self.now)
        for table_id in playing:
            self.offer_add_ons(table_id)
        if self.barrier is None:
            self.barrier = HandForHand(playing, self.deduction)
        else:
            self.barrier.set_tables(playing)  # tables broken or balanced since the last round
        self.round_active = True
        self.round_started = at
        self.held.difference_update(playing)
        for table_id in playing:
            self.barrier.deal(table_id)
            self.deal(table_id, at)

    def plan_due(self) -> bool:
        """Whether a table must break (BRK-1) or the tables are out of balance (BAL-1)."""
        if len(self.tables) > table_count(self.standings.players_left, self.config.table_size):
            return True
        counts = [count for count, tables in self.histogram.items() if tables]
        return max(counts) - min(counts) >= max(self.config.balancing.threshold, 2)

    def recount(self, table_id: int) -> None:
        """Keep the head-count histogram in step with ``table_id`` (gone when it was broken)."""
        before = self.count_of.pop(table_id, None)
        if before is not None:
            self.histogram[before] -= 1
        if table_id in self.tables:
            count = len(self.tables[table_id].players)
            self.count_of[table_id] = count
            self.histogram[count] += 1

    def hand_for_hand_due(self) -> bool:
        places = self.structure().places_paid
        tables = sum(number for count, number in self.histogram.items() if count >= 2)
        return hand_for_hand_due(self.config.hand_for_hand, self.standings.players_left, places, tables)

    def try_rebuy(self, table: Table, gone: SeatedPlayer) -> bool:
        """A busted bot rebuys (REG-5) when the registration allows it and it wants to."""
        rebuys = self.config.rebuys
        if rebuys is None:
            return False
        balance = self.ledger.balances[player_account(gone.player)]
        if not self.registration.can_rebuy(gone.player, self.now, balance, 0):
            return False
        if self.rng.random() >= REBUY_PROBABILITY:
            return False
        self.ledger.apply(self.registration.rebuy(gone.player, self.now, balance, 0).transfers)
        table.seat_player(gone.seat, gone.player, rebuys.chips)
        self.chips_issued += rebuys.chips
        self.rebuys += 1
        self.purchases += 1
        return True

    def add_on_break(self) -> None:
        """REG-5: the add-on window opens: every player at an idle table is offered the add-on now
        (a table in a hand is offered when its hand ends); when it closes, sales end."""
        window = self.registration.add_on_window()
        if window is None or self.add_on_done:
            return
        for table_id in sorted(self.tables):
            if table_id not in self.running:
                self.offer_add_ons(table_id)
        if self.now < window[1]:
            self.schedule(int(window[1]), _ADD_ON, _NO_TABLE)  # then ``offer_add_ons`` closes them

    def offer_add_ons(self, table_id: int) -> None:
        """In the add-on window (the add-on break) each bot still in may buy the add-on (REG-5)."""
        add_on = self.config.add_on
        if add_on is None or self.add_on_done:
            return
        window = self.registration.add_on_window()
        if window is None or self.now < window[0]:
            return
        if self.now >= window[1]:
            self.add_on_done = True
            return
        table = self.tables[table_id]
        for seated in table.players:
            if seated.player in self.add_on_offered:
                continue
            self.add_on_offered.add(seated.player)
            balance = self.ledger.balances[player_account(seated.player)]
            if self.rng.random() < ADD_ON_PROBABILITY and self.registration.can_add_on(
                seated.player, self.now, balance
            ):
                self.ledger.apply(self.registration.add_on(seated.player, self.now, balance).transfers)
                table.add_chips(seated.seat, add_on.chips)
                self.chips_issued += add_on.chips
                self.add_ons += 1
                self.purchases += 1

    def eliminate(self, busts: list[Bust], share: bool, table_id: int) -> None:
        self.standings.eliminate(busts, all_share=share)
        for bust in busts:
            self.registration.eliminate(bust.player, self.now)
        self.last_elimination_table = table_id
        for bust in busts:
            self.recount(bust.table_id)
        if self.over():
            self.finished = True

    def over(self) -> bool:
        players_left = self.standings.players_left
        if players_left <= 1:
            return True
        return self.purchases_closed() and tournament_over(players_left, self.structure().prizes)

    # -- between hands --------------------------------------------------------------------------

    def rebalance(self) -> None:
        """Ask the planner (BRK-1, BRK-2, BAL-1, MOVE-1) and carry out its plan between hands."""
        states = []
        for table_id, table in self.tables.items():
            positions = table.last_positions
            in_hand = table_id in self.running
            states.append(
                TableState(
                    table_id,
                    table.size,
                    {seated.seat: seated.player for seated in table.players},
                    big_blind_seat=positions.big_blind if positions is not None else None,
                    # before a table's first hand its drawn button anchors the order
                    button=positions.button if positions is not None else table.first_button,
                    in_hand=in_hand,
                    # MOVE-1: the table's own next big blind, right under either button rule
                    next_big_blind_seat=None if in_hand else _next_big_blind(table),
                )
            )
        plan = plan_tables(
            states,
            self.config.balancing,
            self.rng,
            moves_so_far=self.moved_times,
            last_elimination_table=self.last_elimination_table,
        )
        self.plans += 1
        self.plan_waiting = frozenset(plan.waiting_for)
        if plan.waiting_for:
            self.plans_waited += 1
        if plan.empty:
            return
        # take every mover out first, then seat them: a redraw's moves are a permutation
        lifted = {move.player: self.tables[move.from_table].unseat(move.from_seat) for move in plan.moves}
        touched: set[int] = set()
        for move in plan.moves:
            if move.from_table in self.running or move.to_table in self.running:
                raise InvariantBroken(f"{move} touches a table in a hand")
            seated = lifted[move.player]
            self.tables[move.to_table].seat_player(
                move.to_seat, move.player, seated.stack, seated.absent, penalty_hands=seated.penalty_hands
            )
            touched.update((move.from_table, move.to_table))
            self.moved_times[move.player] += 1
            self.moves += 1
            if move.reason is MoveReason.BALANCE:
                self.balance_moves += 1
        for table_break in plan.breaks:
            table = self.tables.pop(table_break.table_id)
            if table.players:
                raise InvariantBroken(f"table {table_break.table_id} was broken with players still seated")
            self.tables_broken += 1
            self.held.discard(table_break.table_id)
            self.parked.discard(table_break.table_id)
        for table_id in plan.redraw_tables:
            self._first_button(self.tables[table_id])
        if plan.redraw_tables:
            self.redraws += 1
        for table_id in touched:
            self.recount(table_id)
            if self.count_of.get(table_id, 0) > self.config.table_size:
                raise InvariantBroken(
                    f"table {table_id} holds {self.count_of[table_id]} players after a plan"
                )
        in_seats = sum(count * number for count, number in self.histogram.items())
        if in_seats != self.standings.players_left:
            raise InvariantBroken(
                f"{in_seats} players seated after a plan, {self.standings.players_left} left"
            )
        for table_id in sorted(self.parked):
            if table_id in self.tables and len(self.tables[table_id].players) >= 2:
                self.parked.discard(table_id)
                self.held.add(table_id)
        self.check_chips()

    # -- invariants -----------------------------------------------------------------------------

    def check_chips(self) -> None:
        """Chips in play = chips issued - chips removed by disqualifications (PEN-1)."""
        in_play = sum(table.chips for table in self.tables.values())
        expected = self.chips_issued - self.chips_removed
        if in_play != expected:
            raise InvariantBroken(
                f"after hand {self.hands}: {in_play} chips in play, expected {expected}"
                f" ({self.chips_issued} issued - {self.chips_removed} removed by disqualifications)"
            )

    def check_seats(self) -> None:
        seated = [seated.player for table in self.tables.values() for seated in table.players]
        if len(seated) != len(set(seated)):
            raise InvariantBroken(f"after hand {self.hands}: a player is seated twice")
        if set(seated) != self.standings.playing:
            raise InvariantBroken(
                f"after hand {self.hands}: {len(seated)} players seated, {self.standings.players_left} left"
            )
        for table_id, table in self.tables.items():
            if len(table.players) > table.size:
                raise InvariantBroken(
                    f"table {table_id} holds {len(table.players)} players in {table.size} seats"
                )

    # -- the end --------------------------------------------------------------------------------

    def finish(self) -> tuple[PayoutStructure, int]:
        stacks: dict[str, int] = {}
        order: dict[str, int] = {}
        for table in self.tables.values():
            positions = table.last_positions
            button = positions.button if positions is not None else 0
            for seated in table.players:
                stacks[seated.player] = seated.stack
                order[seated.player] = _seat_after_button(seated.seat, button, table.size)
        self.standings.finish(stacks, order)
        if not self.standings.complete:
            raise InvariantBroken("the tournament ended with players who have no place")
        pool = self.registration.pool_contributions
        overlay = overlay_transfer(self.config.id, pool, effective_guarantee(self.config))
        if overlay is not None:
            self.ledger.apply([overlay])
            pool += overlay.amount
        structure = structure_for(self.config, pool, self.registration.entries)
        self.ledger.apply(prizes_for_finishes(structure, self.standings.finishes, self.config.id))
        left = self.ledger.balances[pool_account(self.config.id)]
        if left != 0:
            raise InvariantBroken(f"the prize pool holds {left} cents after every prize was paid")
        total = sum(self.ledger.balances.values())
        if total != 0:
            raise InvariantBroken(f"the ledger does not balance: accounts sum to {total} cents")
        return structure, pool


# (small blind, big blind, big blind ante) of the default schedule, 15 minutes each
_DEFAULT_BLINDS = (
    (25, 50, 0), (50, 100, 0), (75, 150, 0), (100, 200, 200), (150, 300, 300), (200, 400, 400),
    (300, 600, 600), (400, 800, 800), (500, 1000, 1000), (600, 1200, 1200), (800, 1600, 1600),
    (1000, 2000, 2000), (1500, 3000, 3000), (2000, 4000, 4000), (3000, 6000, 6000), (4000, 8000, 8000),
    (5000, 10000, 10000), (6000, 12000, 12000), (8000, 16000, 16000), (10000, 20000, 20000),
)  # fmt: skip


def default_config(players: int) -> TournamentConfig:
    """The tournament ``feltd simulate tournament`` plays without ``--config``: a 10.00 + 1.00
    freezeout, 10,000 chips, 15-minute levels with a big blind ante from level 4, 9-max."""
    return TournamentConfig(
        id="simulated",
        name="Simulated freezeout",
        levels=tuple(
            Level(small, big, 15, ante, AnteKind.BIG_BLIND if ante else AnteKind.NONE)
            for small, big, ante in _DEFAULT_BLINDS
        ),
        buy_in=1000,
        fee=100,
        starting_stack=10000,
        max_players=max(players, 2),
    )


def run_tournament(
    config: TournamentConfig,
    players: int,
    seed: int,
    progress: Callable[[Progress], None] | None = None,
    *,
    progress_every: int = 1000,
    policy: Policy = tournament_bot,
    sanctions: Sequence[Sanction] = (),
) -> SimulationResult:
    """Play a whole tournament of ``players`` bots (see the module docstring) and return it.

    ``progress`` is called about every ``progress_every`` hands and once at the end. Raises
    ``InvariantBroken`` as soon as an invariant fails, ``SimulationError`` for a bad request.
    """
    state = _Tournament(config, players, seed, policy, sanctions)
    state.register_everyone()
    state.seat_everyone()
    next_report = progress_every

    def report() -> None:
        if progress is not None:
            progress(
                Progress(
                    state.standings.players_left,
                    len(state.tables),
                    state.level_index + 1,
                    state.hands,
                    state.now,
                    state.barrier is not None,
                )
            )

    next_check = CHECK_SEATS_EVERY
    while not state.finished:
        state.step()
        if state.hands >= next_check:
            state.check_chips()
            state.check_seats()
            next_check = state.hands + CHECK_SEATS_EVERY
        if state.hands >= next_report:
            report()
            next_report = state.hands + progress_every
    for table_id in list(state.running):  # hands under way when it ended: rolled back (CRASH-1 style)
        state.tables[table_id].cancel_hand()
        del state.running[table_id]
    state.check_chips()
    state.check_seats()
    report()
    structure, pool = state.finish()
    return SimulationResult(
        tournament_id=config.id,
        seed=seed,
        entries=state.registration.entries,
        hands=state.hands,
        actions=state.actions,
        moves=state.moves,
        balance_moves=state.balance_moves,
        tables_broken=state.tables_broken,
        redraws=state.redraws,
        hand_for_hand_hands=state.hfh_hands,
        plans=state.plans,
        plans_waited=state.plans_waited,
        rebuys=state.rebuys,
        add_ons=state.add_ons,
        chips_issued=state.chips_issued,
        chips_removed=state.chips_removed,
        disqualified=tuple(state.disqualified),
        clock_seconds=state.now,
        level_reached=state.level_index + 1,
        prize_pool=pool,
        finishes=state.standings.finishes,
        transfers=tuple(state.ledger.transfers),
        structure=structure,
    )
