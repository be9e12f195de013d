"""Registration and every purchase of a tournament (REG-1..6) as one state machine.

The machine decides; it moves no money. Each action follows the verify/can/do triad:
``verify_register(...)`` raises a specific ``RegistrationError``, ``can_register(...)`` says yes
or no, ``register(...)`` applies the action and returns an ``Outcome``: the frozen events that
record it and the ``Transfer``s the ledger must execute. A refused action changes nothing.
Money decisions take ``now`` (seconds on the same clock as ``start_at``) and, where money is
spent, the paying account's available ``balance`` in cents: the core never reads a balance.

Prices (REG-1). With a fee set, a purchase costs ``price + fee``: the price goes to the prize
pool and the fee to the house. With no fee set, the player pays the price alone and the house's
commission is taken out of it, as the seed's "the site will charge 9 % of the buy-in and 4 % on
rebuys" reads and as rake-style sites do: 9 % of a buy-in (or re-entry) and 4 % of a rebuy or
add-on go to the house, rounded down to the cent, the rest to the pool. A 10.00 buy-in with no
fee therefore puts 9.10 in the pool and 0.90 in the house.

Phases and invariants:

- ``REGISTERING`` (from the announcement to the start): register, unregister (until
  ``unregister_cutoff_minutes`` before ``start_at``), waiting list. At most ``max_players`` are
  registered; the next ``waiting_list`` pay at once and wait in order (REG-2); an unregistration
  promotes the first of them.
- ``RUNNING`` (after ``start``): everyone still waiting was refunded in full at the start; late
  registration is open for ``late_registration_minutes`` unless it closed earlier because every
  seat allocated at seating is taken or, without extended registration, at the first
  elimination (REG-4); rebuys, add-ons and re-entries within their periods and limits (REG-5).
- ``CANCELLED``: the tournament never started; everyone was refunded.
- A player is in at most one of: registered (active), eliminated, waiting. The money each
  player has in the tournament is exactly the sum of their ``payments``.

Idempotency keys are ``<tournament>:<player>:<action>:<n>:<leg>``, where ``n`` counts that
player's actions of that kind, so a retry of the same action plans the same key.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from engine.tournament.config import TournamentConfig
from engine.tournament.levels import clock_for
from engine.tournament.transfers import (
    HOUSE,
    Reason,
    Transfer,
    player_account,
    pool_account,
    ticket_account,
)
from engine.triads import can

ENTRY_COMMISSION_PERCENT = 9
REBUY_COMMISSION_PERCENT = 4


# --- errors -----------------------------------------------------------------------------------


class RegistrationError(ValueError):
    """An action the registration rules refuse; nothing changed."""


class WrongPhase(RegistrationError):
    """The action is not possible in the tournament's current phase."""


class AlreadyRegistered(RegistrationError):
    pass


class NotRegistered(RegistrationError):
    pass


class TournamentFull(RegistrationError):
    """The field and the waiting list are full, or late registration has no room."""


class InsufficientFunds(RegistrationError):
    pass


class CutoffPassed(RegistrationError):
    """Unregistration is closed: the cutoff before the start has passed."""


class LateRegistrationClosed(RegistrationError):
    pass


class NotOffered(RegistrationError):
    """The tournament has no rebuys, add-on or re-entry."""


class PeriodOver(RegistrationError):
    """The rebuy, add-on or re-entry period is over (or not begun)."""


class LimitReached(RegistrationError):
    """The per-player limit of rebuys, add-ons or re-entries is used up."""


class StackTooBig(RegistrationError):
    """A rebuy needs a stack at or under the threshold."""


class NotEliminated(RegistrationError):
    pass


class IsEliminated(RegistrationError):
    pass


class NotEnoughPlayers(RegistrationError):
    pass


# --- values -----------------------------------------------------------------------------------


class Phase(StrEnum):
    REGISTERING = "registering"
    RUNNING = "running"
    CANCELLED = "cancelled"


class PurchaseKind(StrEnum):
    ENTRY = "entry"
    RE_ENTRY = "re-entry"
    REBUY = "rebuy"
    ADD_ON = "add-on"


class CloseReason(StrEnum):
    """Why late registration is closed (REG-4)."""

    NOT_OFFERED = "not-offered"
    TIME = "time"
    SEATS_FULL = "seats-full"
    FULL = "full"  # max_players have registered: no entry can be taken whatever the seats say
    FIRST_ELIMINATION = "first-elimination"
    NOT_STARTED = "not-started"


@dataclass(frozen=True, slots=True)
class Price:
    """What a purchase puts in the pool and in the house; the buyer pays ``total``."""

    to_pool: int
    to_house: int

    @property
    def total(self) -> int:
        return self.to_pool + self.to_house


@dataclass(frozen=True, slots=True)
class Payment:
    """Money one purchase moved from ``source`` (a player's or ticket account) into the tournament."""

    player_id: str
    kind: PurchaseKind
    number: int
    source: str
    to_pool: int
    to_house: int


@dataclass(frozen=True, slots=True)
class Registered:
    player_id: str
    at: float
    via_ticket: bool
    late: bool


@dataclass(frozen=True, slots=True)
class Waitlisted:
    player_id: str
    at: float
    position: int  # 1 = next to be promoted


@dataclass(frozen=True, slots=True)
class Unregistered:
    player_id: str
    at: float
    was_waiting: bool


@dataclass(frozen=True, slots=True)
class Promoted:
    player_id: str
    at: float


@dataclass(frozen=True, slots=True)
class Started:
    at: float
    players: tuple[str, ...]
    seat_capacity: int


@dataclass(frozen=True, slots=True)
class WaitingRefunded:
    player_id: str
    at: float


@dataclass(frozen=True, slots=True)
class Cancelled:
    at: float
    refunded: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Purchased:
    """A rebuy, add-on or re-entry: ``chips`` to add to the player's stack (or a new stack)."""

    player_id: str
    at: float
    kind: PurchaseKind
    number: int
    chips: int


@dataclass(frozen=True, slots=True)
class Eliminated:
    player_id: str
    at: float


@dataclass(frozen=True, slots=True)
class LateRegistrationEnded:
    at: float
    reason: CloseReason


Event = (
    Registered
    | Waitlisted
    | Unregistered
    | Promoted
    | Started
    | WaitingRefunded
    | Cancelled
    | Purchased
    | Eliminated
    | LateRegistrationEnded
)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an action did (events) and the money it needs moved (transfers, in order)."""

    events: tuple[Event, ...]
    transfers: tuple[Transfer, ...]


REGISTRATION_SNAPSHOT_VERSION = 1


@dataclass(frozen=True, slots=True)
class RegistrationSnapshot:
    """A ``Registration`` as plain, versioned data (its config is saved beside it, once)."""

    version: int
    start_at: float
    start_wall_seconds: int
    phase: Phase
    registered: tuple[str, ...]
    waiting: tuple[str, ...]
    eliminated: tuple[str, ...]
    seat_capacity: int
    payments: tuple[Payment, ...]
    counters: tuple[tuple[str, str, int], ...]
    purchases: tuple[tuple[str, PurchaseKind, int], ...]
    late_closed: CloseReason | None


# --- prices -----------------------------------------------------------------------------------


def _commissioned(price: int, fee: int | None, percent: int) -> Price:
    if fee is not None:
        return Price(to_pool=price, to_house=fee)
    commission = price * percent // 100
    return Price(to_pool=price - commission, to_house=commission)


def _purchase_fee(config: TournamentConfig, fee: int | None) -> int | None:
    """A rebuy's or add-on's own fee; unset, it is 0 when the tournament has a fee, else commission."""
    if fee is not None:
        return fee
    return 0 if config.fee is not None else None


def entry_price(config: TournamentConfig) -> Price:
    """A first entry: buy-in to the pool and fee to the house, or 9 % commission out of the buy-in."""
    return _commissioned(config.buy_in, config.fee, ENTRY_COMMISSION_PERCENT)


def re_entry_price(config: TournamentConfig) -> Price:
    """A re-entry costs an entry unless ``re_entry.cost`` sets another price (same fee rule)."""
    if config.re_entry is None or config.re_entry.cost is None:
        return entry_price(config)
    return _commissioned(config.re_entry.cost, config.fee, ENTRY_COMMISSION_PERCENT)


def rebuy_price(config: TournamentConfig) -> Price:
    """A rebuy: cost to the pool and its fee to the house.

    With no fee anywhere (neither the tournament nor the rebuy), 4 % commission out of the cost;
    a tournament with a fee and a rebuy without one puts the whole rebuy in the pool.
    """
    if config.rebuys is None:
        raise NotOffered(f"tournament {config.id} has no rebuys")
    return _commissioned(
        config.rebuys.cost, _purchase_fee(config, config.rebuys.fee), REBUY_COMMISSION_PERCENT
    )


def add_on_price(config: TournamentConfig) -> Price:
    """An add-on is priced like a rebuy (4 % commission with no fee)."""
    if config.add_on is None:
        raise NotOffered(f"tournament {config.id} has no add-on")
    return _commissioned(
        config.add_on.cost, _purchase_fee(config, config.add_on.fee), REBUY_COMMISSION_PERCENT
    )


_ENTRIES = frozenset({PurchaseKind.ENTRY, PurchaseKind.RE_ENTRY})


# --- the machine ------------------------------------------------------------------------------


class Registration:
    """The registration and purchase state of one tournament, announced for ``start_at``.

    Registration is open from construction (the announcement, REG-1).
    """

    def __init__(
        self, config: TournamentConfig, start_at: float, *, start_wall_seconds: int | None = None
    ) -> None:
        """``start_wall_seconds`` places the start on the wall clock for the hourly breaks (only
        its minute of the hour matters); by default ``start_at`` is taken to be on it."""
        self.config = config
        self.start_at = start_at
        self.start_wall_seconds = int(start_at) if start_wall_seconds is None else start_wall_seconds
        self._add_on_window: tuple[float, float] | None = None
        self.phase = Phase.REGISTERING
        # Ordered sets (dicts): every check and change is O(1) in the size of the field.
        self._registered: dict[str, None] = {}  # in order of registration
        self._waiting: dict[str, None] = {}  # in order: the first is promoted first
        self._eliminated: dict[str, None] = {}  # in order of elimination
        self.seat_capacity = 0
        self._payments: dict[str, list[Payment]] = {}
        self._pool_total = 0  # sum of to_pool over the payments standing
        self._entry_payments = 0  # entries and re-entries among the payments standing
        self._counters: dict[tuple[str, str], int] = {}
        self._purchases: dict[tuple[str, PurchaseKind], int] = {}
        self._late_closed: CloseReason | None = None

    # -- queries ---------------------------------------------------------------------------------

    @property
    def tournament_id(self) -> str:
        return self.config.id

    @property
    def registered(self) -> list[str]:
        """Everyone registered (eliminated players included), in order of registration."""
        return list(self._registered)

    @property
    def waiting(self) -> list[str]:
        """The waiting list, the next to be promoted first (REG-2)."""
        return list(self._waiting)

    @property
    def eliminated(self) -> list[str]:
        """The eliminated players, in order of elimination."""
        return list(self._eliminated)

    def is_registered(self, player_id: str) -> bool:
        return player_id in self._registered

    def is_eliminated(self, player_id: str) -> bool:
        return player_id in self._eliminated

    @property
    def active_count(self) -> int:
        """How many registered players are not eliminated (O(1); ``active`` lists them)."""
        return len(self._registered) - len(self._eliminated)

    @property
    def payments(self) -> tuple[Payment, ...]:
        """Every purchase whose money is still in the tournament (refunded ones are gone)."""
        return tuple(p for player in self._payments.values() for p in player)

    def payments_of(self, player_id: str) -> tuple[Payment, ...]:
        return tuple(self._payments.get(player_id, ()))

    @property
    def pool_contributions(self) -> int:
        """Cents paid into the prize pool by purchases still standing (before any overlay)."""
        return self._pool_total

    @property
    def entries(self) -> int:
        """Entries and re-entries of players in the field (the field size for payouts)."""
        # every waiting player has exactly one entry standing: the one they paid to wait
        return self._entry_payments - len(self._waiting)

    @property
    def active(self) -> tuple[str, ...]:
        """Registered players not eliminated, in registration order."""
        gone = self._eliminated
        return tuple(p for p in self._registered if p not in gone)

    def purchases(self, player_id: str, kind: PurchaseKind) -> int:
        """How many purchases of ``kind`` the player has made (an entry counts as one)."""
        return self._purchases.get((player_id, kind), 0)

    def late_registration_closed(self, now: float) -> CloseReason | None:
        """Why late registration is closed at ``now``, or None while it is open (REG-4)."""
        if self.phase is not Phase.RUNNING:
            return CloseReason.NOT_STARTED
        if self._late_closed is not None:
            return self._late_closed
        if self.config.late_registration_minutes <= 0:
            return CloseReason.NOT_OFFERED
        if now >= self.start_at + self.config.late_registration_minutes * 60:
            return CloseReason.TIME
        return None

    def rebuy_period_over(self, now: float) -> bool:
        """True once the last rebuy period has ended (or when there are no rebuys)."""
        r = self.config.rebuys
        return r is None or now >= self.start_at + r.period_minutes * 60

    def add_on_window(self) -> tuple[float, float] | None:
        """When an add-on may be bought (REG-5, BRK-T1): the clock's add-on break.

        With rebuys that is ``LevelClock.add_on_break()`` -- the break at the end of the rebuy
        period, or right after the scheduled break(s) the period ends in -- and at least one
        minute long (an add-on break of 0 minutes still sells for a minute while tables play).
        Without rebuys, from the start until the longer of late registration and the add-on
        break length. None when the tournament has no add-on.
        """
        if self.config.add_on is None:
            return None
        if self._add_on_window is None:
            b = self.config.breaks.addon_break_minutes
            if self.config.rebuys is not None:
                window = clock_for(self.config, start_wall_seconds=self.start_wall_seconds).add_on_break()
                assert window is not None  # rebuys and an add-on always make an add-on break
                self._add_on_window = (
                    self.start_at + window.start,
                    self.start_at + max(window.end, window.start + 60),
                )
            else:
                self._add_on_window = (
                    self.start_at,
                    self.start_at + max(b, self.config.late_registration_minutes, 1) * 60,
                )
        return self._add_on_window

    # -- previews: the money of a purchase before it is made ------------------------------------

    def preview_register(
        self, player_id: str, now: float, balance: int, via_ticket: bool = False
    ) -> tuple[Transfer, ...]:
        """The transfers ``register`` would make now (the same keys), changing nothing; raises what
        ``verify_register`` raises. A server posts them first and registers once they committed,
        so a balance spent elsewhere meanwhile never leaves a registration without its money."""
        self.verify_register(player_id, now, balance, via_ticket)
        reason = Reason.TICKET if via_ticket else Reason.BUY_IN
        source = self._source(player_id, via_ticket)
        return self._payment_transfers(
            player_id, PurchaseKind.ENTRY, entry_price(self.config), source, reason
        )

    def preview_rebuy(self, player_id: str, now: float, balance: int, stack: int) -> tuple[Transfer, ...]:
        """The transfers ``rebuy`` would make now, changing nothing (see ``preview_register``)."""
        self.verify_rebuy(player_id, now, balance, stack)
        price = rebuy_price(self.config)
        return self._payment_transfers(
            player_id, PurchaseKind.REBUY, price, player_account(player_id), Reason.REBUY
        )

    def preview_add_on(self, player_id: str, now: float, balance: int) -> tuple[Transfer, ...]:
        """The transfers ``add_on`` would make now, changing nothing (see ``preview_register``)."""
        self.verify_add_on(player_id, now, balance)
        price = add_on_price(self.config)
        return self._payment_transfers(
            player_id, PurchaseKind.ADD_ON, price, player_account(player_id), Reason.ADD_ON
        )

    def rebuy_offered(self, player_id: str, now: float, stack: int) -> bool:
        """Whether a rebuy is on offer to ``player_id`` now, funds aside: the director offers it to
        a player who busts in the rebuy period (REG-5) and the purchase then checks the funds."""
        try:
            self.verify_rebuy(player_id, now, balance=rebuy_price(self.config).total, stack=stack)
        except RegistrationError:
            return False
        return True

    # -- saved state -----------------------------------------------------------------------------

    def snapshot(self) -> RegistrationSnapshot:
        return RegistrationSnapshot(
            version=REGISTRATION_SNAPSHOT_VERSION,
            start_at=self.start_at,
            start_wall_seconds=self.start_wall_seconds,
            phase=self.phase,
            registered=tuple(self._registered),
            waiting=tuple(self._waiting),
            eliminated=tuple(self._eliminated),
            seat_capacity=self.seat_capacity,
            payments=self.payments,
            counters=tuple((player, action, n) for (player, action), n in self._counters.items()),
            purchases=tuple((player, kind, n) for (player, kind), n in self._purchases.items()),
            late_closed=self._late_closed,
        )

    @classmethod
    def restore(cls, config: TournamentConfig, snapshot: RegistrationSnapshot) -> Registration:
        """Rebuild the registration of ``config`` from ``snapshot``."""
        if snapshot.version != REGISTRATION_SNAPSHOT_VERSION:
            raise RegistrationError(
                f"registration snapshot version {snapshot.version} is not {REGISTRATION_SNAPSHOT_VERSION}"
            )
        registration = cls(config, snapshot.start_at, start_wall_seconds=snapshot.start_wall_seconds)
        registration.phase = snapshot.phase
        registration._registered = dict.fromkeys(snapshot.registered)
        registration._waiting = dict.fromkeys(snapshot.waiting)
        registration._eliminated = dict.fromkeys(snapshot.eliminated)
        registration.seat_capacity = snapshot.seat_capacity
        for payment in snapshot.payments:
            registration._payments.setdefault(payment.player_id, []).append(payment)
            registration._pool_total += payment.to_pool
            if payment.kind in _ENTRIES:
                registration._entry_payments += 1
        registration._counters = {(player, action): n for player, action, n in snapshot.counters}
        registration._purchases = {(player, kind): n for player, kind, n in snapshot.purchases}
        registration._late_closed = snapshot.late_closed
        return registration

    def purchase_undone(self, player_id: str, keys: Iterable[str]) -> None:
        """A purchase whose money moved and was given back before it was recorded (a server
        crashed in between): its idempotency keys are spent, so the player's next purchase of
        that kind gets new ones (the same keys again would be taken for a replay, moving nothing)."""
        spent = set(keys)
        for kind in PurchaseKind:
            action = str(kind)
            n = self._next(player_id, action)
            if any(self._key(player_id, action, n, leg) in spent for leg in ("pool", "fee")):
                self._bump(player_id, action)

    # -- internal --------------------------------------------------------------------------------

    def _next(self, player_id: str, action: str) -> int:
        return self._counters.get((player_id, action), 0) + 1

    def _bump(self, player_id: str, action: str) -> int:
        n = self._next(player_id, action)
        self._counters[(player_id, action)] = n
        return n

    def _key(self, player_id: str, action: str, n: int, leg: str) -> str:
        return f"{self.config.id}:{player_id}:{action}:{n}:{leg}"

    def _pay(
        self, player_id: str, kind: PurchaseKind, price: Price, source: str, reason: Reason
    ) -> tuple[Transfer, ...]:
        transfers = self._payment_transfers(player_id, kind, price, source, reason)
        self._bump(player_id, str(kind))
        number = self._purchases.get((player_id, kind), 0) + 1
        self._purchases[(player_id, kind)] = number
        self._payments.setdefault(player_id, []).append(
            Payment(player_id, kind, number, source, price.to_pool, price.to_house)
        )
        self._pool_total += price.to_pool
        if kind in _ENTRIES:
            self._entry_payments += 1
        return transfers

    def _payment_transfers(
        self, player_id: str, kind: PurchaseKind, price: Price, source: str, reason: Reason
    ) -> tuple[Transfer, ...]:
        """The transfers the next purchase of ``kind`` by ``player_id`` makes (keys included),
        without making it: what ``preview`` shows and ``_pay`` records."""
        action = str(kind)
        n = self._next(player_id, action)
        transfers: list[Transfer] = []
        if price.to_pool:
            transfers.append(
                Transfer(
                    source,
                    pool_account(self.config.id),
                    price.to_pool,
                    self._key(player_id, action, n, "pool"),
                    reason,
                )
            )
        if price.to_house:
            transfers.append(
                Transfer(source, HOUSE, price.to_house, self._key(player_id, action, n, "fee"), Reason.FEE)
            )
        return tuple(transfers)

    def _refund(self, player_id: str, action: str) -> tuple[Transfer, ...]:
        """Give back everything the player paid in, to the account each payment came from."""
        n = self._bump(player_id, action)
        transfers: list[Transfer] = []
        for i, payment in enumerate(self._payments.pop(player_id, [])):
            self._pool_total -= payment.to_pool
            if payment.kind in _ENTRIES:
                self._entry_payments -= 1
            if payment.to_pool:
                transfers.append(
                    Transfer(
                        pool_account(self.config.id),
                        payment.source,
                        payment.to_pool,
                        self._key(player_id, action, n, f"pool{i}"),
                        Reason.REFUND,
                    )
                )
            if payment.to_house:
                transfers.append(
                    Transfer(
                        HOUSE,
                        payment.source,
                        payment.to_house,
                        self._key(player_id, action, n, f"fee{i}"),
                        Reason.REFUND,
                    )
                )
        for kind in PurchaseKind:
            self._purchases.pop((player_id, kind), None)
        return tuple(transfers)

    def _source(self, player_id: str, via_ticket: bool) -> str:
        return ticket_account(self.config.id, player_id) if via_ticket else player_account(player_id)

    @staticmethod
    def _require_funds(balance: int, price: Price, what: str) -> None:
        if balance < price.total:
            raise InsufficientFunds(f"{what} costs {price.total} cents; the account has {balance}")

    # -- register (REG-1, REG-2, REG-4) ----------------------------------------------------------

    def verify_register(self, player_id: str, now: float, balance: int, via_ticket: bool = False) -> None:
        """Raise unless ``player_id`` may register now, paying from an account holding ``balance``.

        ``via_ticket`` pays from the player's ticket to this tournament (REG-6) instead of cash.
        """
        if not player_id:
            raise RegistrationError("a player id must not be empty")
        if player_id in self._registered or player_id in self._waiting:
            raise AlreadyRegistered(f"{player_id} is already registered for {self.config.id}")
        if self.phase is Phase.CANCELLED:
            raise WrongPhase(f"tournament {self.config.id} was cancelled")
        if self.phase is Phase.RUNNING:
            reason = self.late_registration_closed(now)
            if reason is not None:
                raise LateRegistrationClosed(f"late registration for {self.config.id} is closed ({reason})")
        full = len(self._registered) >= self.config.max_players
        if full and (self.phase is Phase.RUNNING or len(self._waiting) >= self.config.waiting_list):
            raise TournamentFull(
                f"{self.config.id} has {len(self._registered)}/{self.config.max_players} players "
                f"and {len(self._waiting)}/{self.config.waiting_list} waiting"
            )
        self._require_funds(balance, entry_price(self.config), "registration")

    can_register = can(verify_register, RegistrationError)

    def register(self, player_id: str, now: float, balance: int, via_ticket: bool = False) -> Outcome:
        """Take buy-in + fee at once (REG-1); seat the player, or put them on the waiting list."""
        self.verify_register(player_id, now, balance, via_ticket)
        transfers = self._pay(
            player_id,
            PurchaseKind.ENTRY,
            entry_price(self.config),
            self._source(player_id, via_ticket),
            Reason.TICKET if via_ticket else Reason.BUY_IN,
        )
        events: list[Event] = []
        if len(self._registered) >= self.config.max_players:
            self._waiting[player_id] = None
            events.append(Waitlisted(player_id, now, len(self._waiting)))
        else:
            self._registered[player_id] = None
            late = self.phase is Phase.RUNNING
            events.append(Registered(player_id, now, via_ticket, late))
            if late:
                closed = self._full_reason()
                if closed is not None:
                    self._late_closed = closed
                    events.append(LateRegistrationEnded(now, closed))
        return Outcome(tuple(events), transfers)

    # -- unregister (REG-2, REG-3) ---------------------------------------------------------------

    def verify_unregister(self, player_id: str, now: float) -> None:
        if self.phase is not Phase.REGISTERING:
            raise WrongPhase(f"{self.config.id} has started; unregistration is closed")
        if player_id not in self._registered and player_id not in self._waiting:
            raise NotRegistered(f"{player_id} is not registered for {self.config.id}")
        cutoff = self.start_at - self.config.unregister_cutoff_minutes * 60
        if now > cutoff:
            raise CutoffPassed(
                f"unregistration closed {self.config.unregister_cutoff_minutes} min before the start "
                f"(at {cutoff}, now {now})"
            )

    can_unregister = can(verify_unregister, RegistrationError)

    def unregister(self, player_id: str, now: float) -> Outcome:
        """Refund buy-in and fee (a ticket back to the ticket); promote the first waiting player."""
        self.verify_unregister(player_id, now)
        was_waiting = player_id in self._waiting
        transfers = self._refund(player_id, "unregister")
        events: list[Event] = [Unregistered(player_id, now, was_waiting)]
        if was_waiting:
            del self._waiting[player_id]
        else:
            del self._registered[player_id]
            if self._waiting:
                promoted = next(iter(self._waiting))
                del self._waiting[promoted]
                self._registered[promoted] = None
                events.append(Promoted(promoted, now))
        return Outcome(tuple(events), transfers)

    # -- start and cancel ------------------------------------------------------------------------

    def verify_start(self, now: float) -> None:
        if self.phase is not Phase.REGISTERING:
            raise WrongPhase(f"{self.config.id} is {self.phase}, not registering")
        if now < self.start_at:
            raise WrongPhase(f"{self.config.id} starts at {self.start_at}, not before (now {now})")
        if len(self._registered) < self.config.min_players:
            raise NotEnoughPlayers(
                f"{self.config.id} needs {self.config.min_players} players, has {len(self._registered)}"
            )

    can_start = can(verify_start, RegistrationError)

    def start(self, now: float, seat_capacity: int | None = None) -> Outcome:
        """Start: refund everyone still waiting in full (REG-2) and note the seats allocated.

        ``seat_capacity`` is the number of seats at the tables allocated at seating; by default
        the fewest full tables that hold the field. Late registration closes when it is full.
        """
        self.verify_start(now)
        size = self.config.table_size
        capacity = seat_capacity if seat_capacity is not None else -(-len(self._registered) // size) * size
        self.phase = Phase.RUNNING
        self.seat_capacity = capacity
        events: list[Event] = [Started(now, tuple(self._registered), capacity)]
        transfers: list[Transfer] = []
        for player_id in self._waiting:
            transfers.extend(self._refund(player_id, "waiting-refund"))
            events.append(WaitingRefunded(player_id, now))
        self._waiting.clear()
        closed = self._full_reason()
        if self.config.late_registration_minutes > 0 and closed is not None:
            self._late_closed = closed
            events.append(LateRegistrationEnded(now, closed))
        return Outcome(tuple(events), tuple(transfers))

    def _full_reason(self) -> CloseReason | None:
        """REG-4/REG-2: late registration closes when the seats allocated at seating are taken,
        or when ``max_players`` have registered (every further registration would be refused
        with ``TournamentFull``, so the window must say closed, not open)."""
        if self.active_count >= self.seat_capacity:
            return CloseReason.SEATS_FULL
        if len(self._registered) >= self.config.max_players:
            return CloseReason.FULL
        return None

    def verify_cancel(self, now: float) -> None:
        if self.phase is not Phase.REGISTERING:
            raise WrongPhase(
                f"{self.config.id} is {self.phase}; a started tournament is settled, not cancelled"
            )

    can_cancel = can(verify_cancel, RegistrationError)

    def cancel(self, now: float) -> Outcome:
        """Call off a tournament that has not started (too few players): refund everyone in full."""
        self.verify_cancel(now)
        everyone = [*self._registered, *self._waiting]
        transfers: list[Transfer] = []
        for player_id in everyone:
            transfers.extend(self._refund(player_id, "cancel-refund"))
        self._registered.clear()
        self._waiting.clear()
        self.phase = Phase.CANCELLED
        return Outcome((Cancelled(now, tuple(everyone)),), tuple(transfers))

    # -- eliminations (REG-4 closes late registration) -------------------------------------------

    def verify_eliminate(self, player_id: str, now: float) -> None:
        if self.phase is not Phase.RUNNING:
            raise WrongPhase(f"{self.config.id} is not running")
        if player_id not in self._registered:
            raise NotRegistered(f"{player_id} is not in {self.config.id}")
        if player_id in self._eliminated:
            raise IsEliminated(f"{player_id} is already eliminated")

    can_eliminate = can(verify_eliminate, RegistrationError)

    def eliminate(self, player_id: str, now: float) -> Outcome:
        """Record a bust; the first one closes late registration unless it is extended (REG-4)."""
        self.verify_eliminate(player_id, now)
        self._eliminated[player_id] = None
        events: list[Event] = [Eliminated(player_id, now)]
        if (
            not self.config.extended_registration
            and self._late_closed is None
            and self.late_registration_closed(now) is None
        ):
            self._late_closed = CloseReason.FIRST_ELIMINATION
            events.append(LateRegistrationEnded(now, CloseReason.FIRST_ELIMINATION))
        return Outcome(tuple(events), ())

    # -- rebuys, add-ons, re-entries (REG-5) -----------------------------------------------------

    def _verify_active(self, player_id: str) -> None:
        if self.phase is not Phase.RUNNING:
            raise WrongPhase(f"{self.config.id} is not running")
        if player_id not in self._registered:
            raise NotRegistered(f"{player_id} is not in {self.config.id}")
        if player_id in self._eliminated:
            raise IsEliminated(f"{player_id} is eliminated")

    def verify_rebuy(self, player_id: str, now: float, balance: int, stack: int) -> None:
        """Raise unless a rebuy is allowed: in the period, stack at or under the threshold, in limits."""
        r = self.config.rebuys
        if r is None:
            raise NotOffered(f"{self.config.id} has no rebuys")
        self._verify_active(player_id)
        if not self.start_at <= now < self.start_at + r.period_minutes * 60:
            raise PeriodOver(f"the rebuy period is the first {r.period_minutes} min of {self.config.id}")
        if stack > self.config.rebuy_threshold:
            raise StackTooBig(
                f"a rebuy needs at most {self.config.rebuy_threshold} chips, the stack has {stack}"
            )
        done = self.purchases(player_id, PurchaseKind.REBUY)
        if r.max_per_player is not None and done >= r.max_per_player:
            raise LimitReached(f"{player_id} has used {done} of {r.max_per_player} rebuys")
        self._require_funds(balance, rebuy_price(self.config), "a rebuy")

    can_rebuy = can(verify_rebuy, RegistrationError)

    def rebuy(self, player_id: str, now: float, balance: int, stack: int) -> Outcome:
        self.verify_rebuy(player_id, now, balance, stack)
        assert self.config.rebuys is not None
        transfers = self._pay(
            player_id, PurchaseKind.REBUY, rebuy_price(self.config), player_account(player_id), Reason.REBUY
        )
        number = self.purchases(player_id, PurchaseKind.REBUY)
        return Outcome(
            (Purchased(player_id, now, PurchaseKind.REBUY, number, self.config.rebuys.chips),), transfers
        )

    def verify_add_on(self, player_id: str, now: float, balance: int) -> None:
        a = self.config.add_on
        window = self.add_on_window()
        if a is None or window is None:
            raise NotOffered(f"{self.config.id} has no add-on")
        self._verify_active(player_id)
        if not window[0] <= now < window[1]:
            raise PeriodOver(f"add-ons are sold from {window[0]} to {window[1]} (now {now})")
        done = self.purchases(player_id, PurchaseKind.ADD_ON)
        if done >= a.max_per_player:
            raise LimitReached(f"{player_id} has used {done} of {a.max_per_player} add-ons")
        self._require_funds(balance, add_on_price(self.config), "an add-on")

    can_add_on = can(verify_add_on, RegistrationError)

    def add_on(self, player_id: str, now: float, balance: int) -> Outcome:
        self.verify_add_on(player_id, now, balance)
        assert self.config.add_on is not None
        transfers = self._pay(
            player_id,
            PurchaseKind.ADD_ON,
            add_on_price(self.config),
            player_account(player_id),
            Reason.ADD_ON,
        )
        number = self.purchases(player_id, PurchaseKind.ADD_ON)
        return Outcome(
            (Purchased(player_id, now, PurchaseKind.ADD_ON, number, self.config.add_on.chips),), transfers
        )

    def verify_re_enter(self, player_id: str, now: float, balance: int) -> None:
        """Raise unless an eliminated player may buy a new entry: in the period, in limits, with funds."""
        e = self.config.re_entry
        if e is None:
            raise NotOffered(f"{self.config.id} has no re-entry")
        if self.phase is not Phase.RUNNING:
            raise WrongPhase(f"{self.config.id} is not running")
        if player_id not in self._eliminated:
            raise NotEliminated(f"{player_id} is not an eliminated player of {self.config.id}")
        if not self.start_at <= now < self.start_at + e.period_minutes * 60:
            raise PeriodOver(f"re-entry is open for the first {e.period_minutes} min of {self.config.id}")
        done = self.purchases(player_id, PurchaseKind.RE_ENTRY)
        if done >= e.max_per_player:
            raise LimitReached(f"{player_id} has used {done} of {e.max_per_player} re-entries")
        self._require_funds(balance, re_entry_price(self.config), "a re-entry")

    can_re_enter = can(verify_re_enter, RegistrationError)

    def re_enter(self, player_id: str, now: float, balance: int) -> Outcome:
        """A new entry with a full starting stack for an eliminated player."""
        self.verify_re_enter(player_id, now, balance)
        transfers = self._pay(
            player_id,
            PurchaseKind.RE_ENTRY,
            re_entry_price(self.config),
            player_account(player_id),
            Reason.BUY_IN,
        )
        del self._eliminated[player_id]
        number = self.purchases(player_id, PurchaseKind.RE_ENTRY)
        return Outcome(
            (Purchased(player_id, now, PurchaseKind.RE_ENTRY, number, self.config.starting_stack),), transfers
        )
