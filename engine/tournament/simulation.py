"""A whole tournament played in-process by bots, for tests, benchmarks and the CLI.

``run_tournament(config, players, seed)`` (or a ``Simulation`` driven step by step) is a driver
of ``engine.tournament.director.Director``, the way the server's coordinator is another: it holds
no tournament rule. It keeps an event queue of logical time (seconds since the start), bots
(``tournament_bot``) that play each hand the director deals on ``engine.hand.Hand``, and a
ledger that checks every transfer the director posts. What the simulation adds is only what a
real site has around a director:

- time: a hand dealt at ``t`` ends at ``t + HAND_BASE_SECONDS + SECONDS_PER_ACTION * actions``;
  meanwhile its table is in a hand. The director's ``next_wakeup`` is scheduled as a tick.
  Events at the same second run in a fixed order (hand ends, ticks; then by table), a function
  of the state, so a restored simulation replays the same order.
- bots: each hand is played with its own ``random.Random`` seeded from the seed and the hand
  number (so a hand rolled back and dealt again plays the same way); bankrolls of
  ``BANKROLL_BUY_INS`` buy-ins are deposited first; busted bots rebuy with
  ``REBUY_PROBABILITY`` when offered and buy the add-on with ``ADD_ON_PROBABILITY``.
- operators: ``sanctions`` script PEN-1 penalties and disqualifications, given to the director
  when a hand ends at the player's table once ``after_hand`` hands have been dealt.

Invariants (``InvariantBroken`` names the first that fails): every transfer keeps the player,
pool and ticket accounts non-negative; every ``check_every`` hands and at the end the director's
own checks hold (chips in play = chips issued - chips removed; everyone left is seated once); at
the end everyone has one place, the ledger sums to zero and the pool is empty.

``Simulation.snapshot()`` saves the director's snapshot with the simulation's own state (time,
counters, the ledger, the bots' generator); ``Simulation.restore`` continues from it exactly as
the run that never stopped (the hands under way are rolled back and dealt again, CRASH-1).
"""

from __future__ import annotations

import heapq
import random
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.betting import AnteKind
from engine.cards import FULL_DECK
from engine.hand import Hand
from engine.random_play import play_choice
from engine.tournament.balancing import MoveReason
from engine.tournament.config import Level, TournamentConfig
from engine.tournament.director import (
    AddOnsOffered,
    Command,
    DealHand,
    Director,
    DirectorError,
    DirectorSnapshot,
    HoldReason,
    PlayerMoved,
    PostTransfers,
    RebuyOffered,
    Status,
    TableClosed,
    TableHeld,
    TablesRedrawn,
    TournamentEnded,
)
from engine.tournament.payouts import PayoutStructure
from engine.tournament.registration import add_on_price, rebuy_price
from engine.tournament.standings import Finish
from engine.tournament.transfers import (
    CASHIER,
    Account,
    Reason,
    Transfer,
    may_go_negative,
    player_account,
    pool_account,
)

_END = 0  # event kinds: at the same second, hand ends come before ticks
_TICK = 1
_NO_TABLE = -1
# the whole-field checks run every this many hands at least (and every table-count of hands)
CHECK_SEATS_EVERY = 250
# ticks in a row with no hand under way before the simulation calls the tournament stalled
IDLE_TICKS_LIMIT = 1000
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
    registering: bool = False  # before the start: ``players_left`` counts the players registered


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
    plan_holds: int  # tables held by a plan waiting for a hand elsewhere, or being broken
    bubble_burst_in_sync: bool | None  # None: no money bubble (nobody paid, or paid from the start)
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
        """Cents each player won (prizes, deals and seat tickets)."""
        won: dict[str, int] = defaultdict(int)
        for transfer in self.transfers:
            if transfer.reason in (Reason.PRIZE, Reason.TICKET, Reason.DEAL):
                won[Account.parse(transfer.target).player_id] += transfer.amount
        return dict(won)


Policy = Callable[[Hand, random.Random], int]
# Told of every hand once its end is applied: the deal, the hand played, the director's answer
# to its end (eliminations with their places and prizes), and when it started (seconds).
HandWatcher = Callable[[DealHand, Hand, list[Command], int], None]


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
    ``FOLD_TO_BET_PROBABILITY`` and otherwise plays ``choose_action``'s choice (the same draws,
    made here directly: one look at the legal actions per decision). Still many all-ins, but a
    tournament long enough for levels, breaks, balancing and the bubble to matter.
    """
    actions = 0
    draw = rng.random
    legal_actions = hand.legal_actions
    while not hand.is_over:
        legal = legal_actions()
        # draw first, as ``choose_action`` draws after this one
        if draw() < FOLD_TO_BET_PROBABILITY and not legal.can_check:
            hand.fold()
        else:
            play_choice(hand, legal, rng)
        actions += 1
    return actions


class _Ledger:
    """The transfers in order and each account's balance, checked as they are posted."""

    def __init__(self, transfers: Sequence[Transfer] = ()) -> None:
        self.transfers: list[Transfer] = []
        self.balances: dict[str, int] = defaultdict(int)
        self.apply(transfers)

    def apply(self, transfers: Sequence[Transfer]) -> None:
        for transfer in transfers:
            self.balances[transfer.source] -= transfer.amount
            self.balances[transfer.target] += transfer.amount
            if self.balances[transfer.source] < 0 and not may_go_negative(transfer.source):
                raise InvariantBroken(
                    f"transfer {transfer.idempotency_key} leaves {transfer.source} at "
                    f"{self.balances[transfer.source]} cents; it may not go negative"
                )
            self.transfers.append(transfer)


@dataclass(frozen=True, slots=True)
class Counters:
    hands: int = 0
    actions: int = 0
    moves: int = 0
    balance_moves: int = 0
    tables_broken: int = 0
    redraws: int = 0
    plan_holds: int = 0  # tables held because a plan waited for a hand elsewhere (or a break)
    rebuys: int = 0
    add_ons: int = 0


@dataclass(frozen=True, slots=True)
class SimulationSnapshot:
    """A simulation between two events, as plain data (see ``Simulation.snapshot``)."""

    director: DirectorSnapshot
    seed: int
    players: int
    now: int
    tick_at: int | None
    counters: Counters
    transfers: tuple[Transfer, ...]
    bots_state: tuple[int, tuple[int, ...], float | None]
    penalties: tuple[Penalty, ...]  # sanctions still to come, by kind (plain data has no unions)
    disqualifications: tuple[Disqualification, ...]
    disqualified: tuple[str, ...]


class Simulation:
    """One simulated tournament, driven event by event (``run_tournament`` runs it to the end)."""

    def __init__(
        self,
        config: TournamentConfig,
        players: int,
        seed: int,
        policy: Policy = tournament_bot,
        sanctions: Sequence[Sanction] = (),
        on_hand: HandWatcher | None = None,
    ) -> None:
        if players < 2:
            raise SimulationError(f"a tournament needs at least 2 players, got {players}")
        if players > config.max_players:
            raise SimulationError(f"{config.id} takes at most {config.max_players} players, got {players}")
        self.config = config
        self.seed = seed
        self.players = players
        self.policy = policy
        self.director = Director(config, start_at=0, rng=random.Random(seed))
        self.bots = random.Random(seed + 1)
        self.hand_rng = random.Random()
        self.ledger = _Ledger()
        self.now = 0
        self.events: list[tuple[int, int, int]] = []  # (time, kind, table)
        self.tick_at: int | None = None
        self.playing: dict[int, dict[int, int]] = {}  # table -> finishing stacks of its hand
        self.counters: dict[str, int] = dict.fromkeys(Counters.__slots__, 0)
        self.sanctions: dict[str, list[Sanction]] = defaultdict(list)
        for sanction in sorted(sanctions, key=lambda sanction: sanction.after_hand):
            self.sanctions[sanction.player].append(sanction)
        self.disqualified: list[str] = []
        self._idle_ticks = 0
        self.on_hand = on_hand
        self._hands: dict[int, tuple[DealHand, Hand, int]] = {}  # kept for ``on_hand`` only
        self._restart_at: dict[int, int] = {}  # table -> start of a hand dealt again after a restore

    @property
    def finished(self) -> bool:
        return self.director.status is Status.FINISHED

    # -- setting up -------------------------------------------------------------------------------

    def register_everyone(self, report: Callable[[], None] | None = None, every: int = 25_000) -> None:
        """Deposit every bot's bankroll and register it (REG-1); ``report`` every ``every`` bots."""
        bankroll = (self.config.buy_in + (self.config.fee or 0)) * BANKROLL_BUY_INS
        for index in range(1, self.players + 1):
            name = f"p{index:05d}"
            deposit = Transfer(
                CASHIER, player_account(name), bankroll, f"{self.config.id}:deposit:{name}", Reason.DEPOSIT
            )
            self.ledger.apply((deposit,))
            self._handle(self.director.register(name, 0, self.ledger.balances[player_account(name)]))
            if report is not None and index % every == 0:
                report()

    def start(self) -> None:
        self._handle(self.director.start(0))

    # -- the event loop ---------------------------------------------------------------------------

    def step(self) -> None:
        """Handle the next event; ``InvariantBroken`` if nothing can ever happen again."""
        if not self.events:
            raise InvariantBroken(
                f"nothing left to happen: {self.director.players_left} players left, "
                f"{self.director.table_count} tables, none in a hand and no tick due"
            )
        at, kind, table_id = heapq.heappop(self.events)
        self.now = max(self.now, at)
        if kind == _TICK:
            if self.tick_at == at:
                self.tick_at = None
                self._idle_ticks = self._idle_ticks + 1 if not self.playing else 0
                if self._idle_ticks > IDLE_TICKS_LIMIT:
                    raise InvariantBroken(
                        f"stalled: {IDLE_TICKS_LIMIT} ticks with no table in a hand, "
                        f"{self.director.players_left} players left at {self.director.table_count} tables"
                    )
                self._handle(self.director.tick(at))
            return
        stacks = self.playing.pop(table_id)
        self._sanction(table_id)
        commands = self.director.hand_ended(table_id, stacks, self.now)
        if self.on_hand is not None:
            deal, hand, started = self._hands.pop(table_id)
            self.on_hand(deal, hand, commands, started)
        self._handle(commands)

    def _schedule_tick(self) -> None:
        wakeup = self.director.next_wakeup()
        if wakeup is None:
            return
        at = max(self.now, int(-(-wakeup // 1)))
        if self.tick_at is None or at < self.tick_at:
            self.tick_at = at
            heapq.heappush(self.events, (at, _TICK, _NO_TABLE))

    def _handle(self, commands: list[Command]) -> None:
        queue = deque(commands)
        while queue:
            command = queue.popleft()
            if isinstance(command, DealHand):
                self._play(command)
            elif isinstance(command, PostTransfers):
                self.ledger.apply(command.transfers)
            elif isinstance(command, RebuyOffered):
                queue.extend(self._decide_rebuy(command.player))
            elif isinstance(command, AddOnsOffered):
                queue.extend(self._offer_add_ons())
            elif isinstance(command, PlayerMoved):
                if command.move.reason is not MoveReason.REDRAW:
                    self.counters["moves"] += 1
                if command.move.reason is MoveReason.BALANCE:
                    self.counters["balance_moves"] += 1
            elif isinstance(command, TableClosed):
                self.counters["tables_broken"] += 1
            elif isinstance(command, TableHeld):
                if command.reason in (HoldReason.BALANCING, HoldReason.BREAKING):
                    self.counters["plan_holds"] += 1
            elif isinstance(command, TablesRedrawn):
                self.counters["redraws"] += 1
            elif isinstance(command, TournamentEnded):
                self.events.clear()
        if not self.finished:
            self._schedule_tick()

    def _play(self, deal: DealHand) -> None:
        """Play the dealt hand now (with its own generator); apply it when it ends."""
        rng = self.hand_rng
        rng.seed(self.seed * 4_294_967_296 + deal.hand_number)
        # a uniform shuffle by random sort keys: half the cost of random.shuffle's 51 draws
        draw = rng.random
        hand = Hand(deal.setup, deck=sorted(FULL_DECK, key=lambda _: draw()), rng=rng)
        actions = self.policy(hand, rng)
        started = self._restart_at.pop(deal.table_id, self.now)
        if deal.hand_number > self.counters["hands"]:
            self.counters["hands"] = deal.hand_number
            self.counters["actions"] += actions
        self.playing[deal.table_id] = hand.finishing_stacks()
        if self.on_hand is not None:
            self._hands[deal.table_id] = (deal, hand, started)
        end = started + HAND_BASE_SECONDS + SECONDS_PER_ACTION * actions
        heapq.heappush(self.events, (end, _END, deal.table_id))

    def _decide_rebuy(self, player: str) -> list[Command]:
        balance = self.ledger.balances[player_account(player)]
        wants = self.bots.random() < REBUY_PROBABILITY
        if wants and balance >= rebuy_price(self.config).total:
            self.counters["rebuys"] += 1
            return self.director.rebuy(player, self.now, balance)
        return self.director.decline_rebuy(player, self.now)

    def _offer_add_ons(self) -> list[Command]:
        """REG-5: the add-on break opened: every bot still seated may buy the add-on."""
        out: list[Command] = []
        price = add_on_price(self.config).total
        for player in self.director.players_seated():
            balance = self.ledger.balances[player_account(player)]
            wants = self.bots.random() < ADD_ON_PROBABILITY and balance >= price
            if wants and self.director.registration.can_add_on(player, self.now, balance):
                self.counters["add_ons"] += 1
                out.extend(self.director.add_on(player, self.now, balance))
        return out

    def _sanction(self, table_id: int) -> None:
        """PEN-1: hand the director the sanctions due for the players at ``table_id``."""
        if not self.sanctions:
            return
        for seated in self.director.table(table_id).players:
            due = self.sanctions.get(seated.player)
            while due and due[0].after_hand <= self.counters["hands"]:
                sanction = due.pop(0)
                if isinstance(sanction, Penalty):
                    self._handle(self.director.penalize(seated.player, sanction.hands, self.now))
                    continue
                try:
                    self._handle(self.director.disqualify(seated.player, self.now))
                except DirectorError:
                    continue  # the last player left wins; there is nobody to finish below
                self.disqualified.append(seated.player)
                due.clear()

    # -- checks and results -----------------------------------------------------------------------

    def check(self) -> None:
        try:
            self.director.check_chips()
            self.director.check_seats()
        except DirectorError as error:
            raise InvariantBroken(f"after hand {self.counters['hands']}: {error}") from None

    def progress(self) -> Progress:
        director = self.director
        return Progress(
            director.players_left,
            director.table_count,
            director.level_index + 1,
            self.counters["hands"],
            self.now,
            director.hand_for_hand,
            director.status is Status.REGISTERING,
        )

    def result(self) -> SimulationResult:
        director = self.director
        assert director.standings is not None
        if not director.standings.complete:
            raise InvariantBroken("the tournament ended with players who have no place")
        left = self.ledger.balances[pool_account(self.config.id)]
        if left != 0:
            raise InvariantBroken(f"the prize pool holds {left} cents after every prize was paid")
        total = sum(self.ledger.balances.values())
        if total != 0:
            raise InvariantBroken(f"the ledger does not balance: accounts sum to {total} cents")
        return SimulationResult(
            tournament_id=self.config.id,
            seed=self.seed,
            entries=director.registration.entries,
            hands=self.counters["hands"],
            actions=self.counters["actions"],
            moves=self.counters["moves"],
            balance_moves=self.counters["balance_moves"],
            tables_broken=self.counters["tables_broken"],
            redraws=self.counters["redraws"],
            hand_for_hand_hands=director.hand_for_hand_hands,
            plan_holds=self.counters["plan_holds"],
            bubble_burst_in_sync=director.bubble_burst_in_sync,
            rebuys=self.counters["rebuys"],
            add_ons=self.counters["add_ons"],
            chips_issued=director.chips_issued,
            chips_removed=director.chips_removed,
            disqualified=tuple(self.disqualified),
            clock_seconds=self.now,
            level_reached=director.level_index + 1,
            prize_pool=director.prize_pool,
            finishes=director.standings.finishes,
            transfers=tuple(self.ledger.transfers),
            structure=director.structure(),
        )

    # -- saved state ------------------------------------------------------------------------------

    def snapshot(self) -> SimulationSnapshot:
        """The simulation between two events: the director's snapshot and the driver's state."""
        version, state, gauss = self.bots.getstate()
        return SimulationSnapshot(
            director=self.director.snapshot(),
            seed=self.seed,
            players=self.players,
            now=self.now,
            tick_at=self.tick_at,
            counters=Counters(**self.counters),
            transfers=tuple(self.ledger.transfers),
            bots_state=(version, tuple(state), gauss),
            penalties=tuple(s for items in self.sanctions.values() for s in items if isinstance(s, Penalty)),
            disqualifications=tuple(
                s for items in self.sanctions.values() for s in items if isinstance(s, Disqualification)
            ),
            disqualified=tuple(self.disqualified),
        )

    @classmethod
    def restore(cls, snapshot: SimulationSnapshot, policy: Policy = tournament_bot) -> Simulation:
        """Continue from ``snapshot``: the hands that were under way are dealt again at their
        start (CRASH-1) and play as they did, so the run ends as the one that never stopped."""
        config = snapshot.director.config
        sanctions: list[Sanction] = [*snapshot.penalties, *snapshot.disqualifications]
        simulation = cls(config, snapshot.players, snapshot.seed, policy, sanctions)
        simulation.director = Director.restore(snapshot.director, random.Random())
        version, state, gauss = snapshot.bots_state
        simulation.bots.setstate((version, tuple(state), gauss))
        simulation.now = snapshot.now
        simulation.counters = {name: getattr(snapshot.counters, name) for name in Counters.__slots__}
        simulation.ledger = _Ledger(snapshot.transfers)
        simulation.disqualified = list(snapshot.disqualified)
        if snapshot.tick_at is not None:
            simulation.tick_at = snapshot.tick_at
            heapq.heappush(simulation.events, (snapshot.tick_at, _TICK, _NO_TABLE))
        for hand in simulation.director.running_hands():
            simulation._restart_at[hand.table_id] = int(hand.started_at)
        simulation._handle(simulation.director.recover(simulation.now))
        return simulation


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
    before_start: Callable[[Simulation], None] | None = None,
    on_hand: HandWatcher | None = None,
) -> SimulationResult:
    """Play a whole tournament of ``players`` bots (see the module docstring) and return it.

    ``progress`` is called about every ``progress_every`` hands, and once registration is done
    and once at the end. ``before_start`` sees the simulation after registration; ``on_hand``
    sees every hand (``HandWatcher``: for hand histories, it keeps each hand's events). Raises
    ``InvariantBroken`` as soon as an invariant fails, ``SimulationError`` for a bad request.
    """
    simulation = Simulation(config, players, seed, policy, sanctions, on_hand)
    if progress is not None:
        progress(simulation.progress())
        simulation.register_everyone(lambda: progress(simulation.progress()))
    else:
        simulation.register_everyone()
    if before_start is not None:
        before_start(simulation)
    simulation.start()
    next_report = progress_every
    next_check = CHECK_SEATS_EVERY
    while not simulation.finished:
        simulation.step()
        hands = simulation.counters["hands"]
        if hands >= next_check:
            simulation.check()
            # the checks cost O(players): every (a few times the tables) hands, O(1) a hand
            next_check = hands + max(CHECK_SEATS_EVERY, 4 * simulation.director.table_count)
        if progress is not None and hands >= next_report:
            progress(simulation.progress())
            next_report = hands + progress_every
    simulation.check()
    if progress is not None:
        progress(simulation.progress())
    return simulation.result()
