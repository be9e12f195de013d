"""Money intents: what the tournament core asks the ledger to move.

The core never touches a balance. It returns ``Transfer`` values naming two accounts, an amount
in integer cents, a reason and an idempotency key; the store executes them later, atomically and
at most once per key. Accounts are named by strings so that a plan can be logged, compared and
replayed as plain data:

- ``player:<player_id>``        a player's cash balance (never negative)
- ``pool:<tournament_id>``      a tournament's prize pool (never negative)
- ``ticket:<tournament_id>:<player_id>``  a seat ticket to a tournament (never negative)
- ``house``                     the site's revenue; pays guarantee overlays, so it may go negative
- ``cashier``                   the outside world (deposits, withdrawals); may go negative
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

HOUSE = "house"
CASHIER = "cashier"


class Reason(StrEnum):
    """Why money moved; the store keeps it on every ledger transaction."""

    BUY_IN = "buy-in"
    FEE = "fee"
    REBUY = "rebuy"
    ADD_ON = "add-on"
    REFUND = "refund"
    PRIZE = "prize"
    DEAL = "deal"
    SETTLEMENT = "settlement"
    DEPOSIT = "deposit"
    WITHDRAWAL = "withdrawal"
    BOUNTY = "bounty"
    OVERLAY = "overlay"
    TICKET = "ticket"


class TransferError(ValueError):
    """A transfer that can never be valid (non-positive amount, same account on both sides)."""


def player_account(player_id: str) -> str:
    return f"player:{player_id}"


def pool_account(tournament_id: str) -> str:
    return f"pool:{tournament_id}"


def ticket_account(tournament_id: str, player_id: str) -> str:
    return f"ticket:{tournament_id}:{player_id}"


def may_go_negative(account: str) -> bool:
    """Only the house (overlays) and the cashier (the outside world) can run a deficit."""
    return account in (HOUSE, CASHIER)


@dataclass(frozen=True, slots=True)
class Transfer:
    """Move ``amount`` cents from ``source`` to ``target``, at most once per ``idempotency_key``."""

    source: str
    target: str
    amount: int
    idempotency_key: str
    reason: Reason

    def __post_init__(self) -> None:
        if type(self.amount) is not int or self.amount <= 0:
            raise TransferError(f"a transfer moves a positive integer of cents, got {self.amount!r}")
        if self.source == self.target:
            raise TransferError(f"a transfer needs two accounts, got {self.source!r} twice")
        if not self.idempotency_key:
            raise TransferError("a transfer needs an idempotency key")


def net_by_account(transfers: Iterable[Transfer]) -> dict[str, int]:
    """Each account's net change; by construction the values sum to zero."""
    net: dict[str, int] = defaultdict(int)
    for transfer in transfers:
        net[transfer.source] -= transfer.amount
        net[transfer.target] += transfer.amount
    return dict(net)
