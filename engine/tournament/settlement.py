"""Settling a tournament that stopped and cannot go on (CANCEL-1, CRASH-1 money, REG-7).

``settle(stopped)`` decides how the money of a stopped tournament is divided and returns the
transfers, in an order the ledger can execute one by one without the pool going negative
(money into the pool first). The decision follows the rule book's CANCEL-1 (docs/rules.md) literally:

1. no hand was ever dealt: ``REFUND_ALL``, every registration back to where it came from (REG-7).
   This comes first, before any restart: the seed (P§17) says without condition that "if there
   is a server crash before the tournament has started the registered players will get a
   refund", so a quick restart does not save a tournament that never dealt a hand;
2. it can restart within 20 minutes: ``RESTART``, nothing moves (hands in progress roll back to
   their start, CRASH-1: ``rolled_back_stacks``);
3. a Sit & Go: always ``PRIZE_POOL``;
4. within 30 minutes of the start: ``ROLLBACK``, every entry ever made (the eliminated
   included) gets its buy-in and fee back;
5. the prize pool (what the entries paid in) exceeds 85 % of the guarantee, or the tournament is a
   freezeout, or the last rebuy period has ended: ``PRIZE_POOL``;
6. otherwise ``RETURN_AND_SHARE``: remaining players get their fees and pool contributions back
   plus a share of the eliminated players' contributions.

How money is divided: remaining players always get their fees back (from the house, to the
account each fee came from). A prize-pool payout in the money gives each remaining player the
smallest prize not yet awarded (the prize of place ``n`` for ``n`` players left) and divides
the rest of the pool by chips, or by ICM if the operator chooses; before the money it divides
the pool 50 % equally and 50 % by chips (the equal half is ``pool // 2``, the chip half the
rest). The eliminated players' contributions in ``RETURN_AND_SHARE`` are divided the same
50/50 way. Chips are those at the start of the hand in progress (CRASH-1). Only a prize-pool
payout pays the guarantee's overlay; any overlay already in the pool goes back to the house in
the other cases. Prizes already paid stay paid: if the pool cannot cover a refund because of
them, the house makes up the difference. Every split is ``split_by_weights`` (largest
remainder, ties to the player first in seat order), so the parts add up to the whole exactly and
the pool ends at zero.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from engine.tournament.deals import EXACT_ICM_MAX_PLAYERS, icm_equities
from engine.tournament.payouts import PayoutStructure, split_by_weights, split_equally
from engine.tournament.registration import Payment
from engine.tournament.transfers import HOUSE, Reason, Transfer, player_account, pool_account

RESTART_WINDOW_MINUTES = 20
ROLLBACK_WINDOW_MINUTES = 30
GUARANTEE_PERCENT_FOR_PAYOUT = 85


class SettlementError(ValueError):
    """The stopped tournament's data cannot be settled as given."""


class SettlementKind(StrEnum):
    RESTART = "restart"
    REFUND_ALL = "refund-all"
    ROLLBACK = "rollback"
    PRIZE_POOL = "prize-pool"
    RETURN_AND_SHARE = "return-and-share"


class InMoneyMethod(StrEnum):
    CHIPS = "chips"
    ICM = "icm"


@dataclass(frozen=True, slots=True)
class StoppedTournament:
    """Everything settlement needs to know about a tournament that stopped.

    ``remaining`` maps each player still in to their chips at the start of the hand in progress,
    in seat order (first seat after the button first): that order breaks cent ties.
    ``payments`` are all purchases still standing, the eliminated players' included.
    """

    tournament_id: str
    payments: tuple[Payment, ...]
    remaining: Mapping[str, int]
    structure: PayoutStructure
    minutes_since_start: float
    can_restart_within_20_minutes: bool = False
    first_hand_dealt: bool = True
    prizes_paid: Mapping[str, int] = field(default_factory=dict)
    overlay_paid: int = 0
    guarantee: int = 0
    freezeout: bool = True
    rebuy_period_over: bool = True
    sit_and_go: bool = False

    @property
    def contributions(self) -> int:
        """What the entries paid into the pool."""
        return sum(p.to_pool for p in self.payments)

    @property
    def pool_balance(self) -> int:
        """What is in the pool account now."""
        return self.contributions + self.overlay_paid - sum(self.prizes_paid.values())

    @property
    def in_the_money(self) -> bool:
        return 0 < len(self.remaining) <= self.structure.places_paid


@dataclass(frozen=True, slots=True)
class Settlement:
    kind: SettlementKind
    transfers: tuple[Transfer, ...]


def decide(stopped: StoppedTournament) -> SettlementKind:
    """Which CANCEL-1 branch applies (see the module docstring for the order)."""
    if not stopped.first_hand_dealt:
        return SettlementKind.REFUND_ALL  # REG-7 before any restart (P§17 is unconditional)
    if stopped.can_restart_within_20_minutes:
        return SettlementKind.RESTART
    if stopped.sit_and_go:
        return SettlementKind.PRIZE_POOL
    if stopped.minutes_since_start < ROLLBACK_WINDOW_MINUTES:
        return SettlementKind.ROLLBACK
    if (
        stopped.contributions * 100 > stopped.guarantee * GUARANTEE_PERCENT_FOR_PAYOUT
        or stopped.freezeout
        or stopped.rebuy_period_over
    ):
        return SettlementKind.PRIZE_POOL
    return SettlementKind.RETURN_AND_SHARE


def rolled_back_stacks(start_of_hand: Mapping[str, int]) -> dict[str, int]:
    """CRASH-1: every stack is what it was when the hand in progress began."""
    if any(chips < 0 for chips in start_of_hand.values()):
        raise SettlementError(f"stacks must be >= 0, got {dict(start_of_hand)}")
    return dict(start_of_hand)


class _Plan:
    """Transfers being planned, keeping money into the pool ahead of money out of it."""

    def __init__(self, tournament_id: str, kind: SettlementKind) -> None:
        self.tid = tournament_id
        self.kind = kind
        self.pool = pool_account(tournament_id)
        self.into_pool: list[Transfer] = []
        self.out: list[Transfer] = []
        self.pool_in = 0
        self.pool_out = 0

    def move(self, source: str, target: str, amount: int, key: str, reason: Reason) -> None:
        if amount <= 0:
            return
        transfer = Transfer(source, target, amount, f"{self.tid}:settle:{self.kind}:{key}", reason)
        if target == self.pool:
            self.into_pool.append(transfer)
            self.pool_in += amount
        else:
            self.out.append(transfer)
        if source == self.pool:
            self.pool_out += amount

    def close(self, pool_balance: int) -> Settlement:
        """Square the pool with the house so it ends at exactly zero."""
        left = pool_balance + self.pool_in - self.pool_out
        if left < 0:
            self.move(HOUSE, self.pool, -left, "house-cover", Reason.SETTLEMENT)
        elif left > 0:
            self.move(self.pool, HOUSE, left, "house-return", Reason.SETTLEMENT)
        return Settlement(self.kind, (*self.into_pool, *self.out))


def _refund_payments(plan: _Plan, payments: Sequence[Payment], pool_too: bool = True) -> None:
    for p in payments:
        tag = f"{p.player_id}:{p.kind}:{p.number}"
        if pool_too:
            plan.move(plan.pool, p.source, p.to_pool, f"{tag}:pool", Reason.REFUND)
        plan.move(HOUSE, p.source, p.to_house, f"{tag}:fee", Reason.REFUND)


def _fifty_fifty(amount: int, chips: Sequence[int]) -> list[int]:
    equal = split_equally(amount // 2, len(chips))
    by_chips = split_by_weights(amount - amount // 2, list(chips))
    return [a + b for a, b in zip(equal, by_chips, strict=True)]


def settle(
    stopped: StoppedTournament,
    in_money_method: InMoneyMethod = InMoneyMethod.CHIPS,
    rng: random.Random | None = None,
) -> Settlement:
    """The CANCEL-1 settlement of ``stopped``: its kind and the transfers, summing exactly.

    ``in_money_method`` lets the operator divide an in-the-money prize-pool payout by ICM
    instead of chips (``rng`` is needed only for ICM beyond 20 players: without it that case
    raises ``SettlementError``, and nothing is planned).
    """
    if any(chips < 0 for chips in stopped.remaining.values()):
        raise SettlementError(f"stacks must be >= 0, got {dict(stopped.remaining)}")
    if stopped.pool_balance < 0:
        raise SettlementError(f"the pool cannot hold {stopped.pool_balance} cents")
    kind = decide(stopped)
    plan = _Plan(stopped.tournament_id, kind)
    if kind is SettlementKind.RESTART:
        return Settlement(kind, ())
    if kind in (SettlementKind.REFUND_ALL, SettlementKind.ROLLBACK):
        _refund_payments(plan, stopped.payments)
        return plan.close(stopped.pool_balance)

    players = list(stopped.remaining)
    chips = [stopped.remaining[p] for p in players]
    if not players:
        raise SettlementError("a stopped tournament with no players left is simply over")
    remaining = set(players)
    remaining_payments = [p for p in stopped.payments if p.player_id in remaining]
    if kind is SettlementKind.PRIZE_POOL:
        _refund_payments(plan, remaining_payments, pool_too=False)
        overlay_due = max(0, stopped.guarantee - stopped.contributions - stopped.overlay_paid)
        plan.move(HOUSE, plan.pool, overlay_due, "overlay", Reason.OVERLAY)
        amount = stopped.pool_balance + overlay_due
        shares = _prize_pool_shares(stopped, amount, players, chips, in_money_method, rng)
    else:
        mine = sum(p.to_pool for p in remaining_payments)
        _refund_payments(plan, remaining_payments)
        # The overlay is paid only by a prize-pool payout: what is in the pool beyond the
        # contributions is not the eliminated players' to share.
        eliminated_share = max(0, stopped.pool_balance - stopped.overlay_paid - mine)
        shares = _fifty_fifty(eliminated_share, chips)
    for player, amount in zip(players, shares, strict=True):
        plan.move(plan.pool, player_account(player), amount, f"{player}:share", Reason.SETTLEMENT)
    return plan.close(stopped.pool_balance)


def _prize_pool_shares(
    stopped: StoppedTournament,
    amount: int,
    players: Sequence[str],
    chips: Sequence[int],
    method: InMoneyMethod,
    rng: random.Random | None,
) -> list[int]:
    n = len(players)
    if not stopped.in_the_money:
        return _fifty_fifty(amount, chips)
    if method is InMoneyMethod.ICM and all(c > 0 for c in chips):
        if n > EXACT_ICM_MAX_PLAYERS and rng is None:
            raise SettlementError(
                f"ICM for {n} players is estimated by Monte Carlo: settle(..., InMoneyMethod.ICM, rng) "
                f"needs an rng beyond {EXACT_ICM_MAX_PLAYERS} players"
            )
        prizes = list(stopped.structure.prizes[:n])
        return split_by_weights(amount, icm_equities(chips, prizes, rng))
    smallest = stopped.structure.prize(n)
    if smallest * n > amount:
        return split_by_weights(amount, list(chips))
    rest = split_by_weights(amount - smallest * n, list(chips))
    return [smallest + r for r in rest]


def refund_registrations(tournament_id: str, payments: Sequence[Payment]) -> tuple[Transfer, ...]:
    """REG-7: a crash before the first hand refunds every registration to where it came from."""
    stopped = StoppedTournament(
        tournament_id=tournament_id,
        payments=tuple(payments),
        remaining={},
        structure=PayoutStructure(prizes=()),
        minutes_since_start=0,
        first_hand_dealt=False,
    )
    return settle(stopped).transfers
