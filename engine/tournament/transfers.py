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


class AccountError(TransferError):
    """A string that is not the name of a ledger account."""


class AccountKind(StrEnum):
    PLAYER = "player"
    POOL = "pool"
    TICKET = "ticket"
    HOUSE = "house"
    CASHIER = "cashier"


@dataclass(frozen=True, slots=True)
class Account:
    """A ledger account as a value: its kind, and whose it is. ``str(account)`` is its name in
    the ledger (the module docstring lists the forms, ``player_account`` and its two siblings
    write them); ``Account.parse`` reads one back."""

    kind: AccountKind
    tournament_id: str = ""  # pools and tickets
    player_id: str = ""  # players and tickets

    @classmethod
    def parse(cls, name: str) -> Account:
        """The account named ``name``; ``AccountError`` if it names none."""
        if name == HOUSE:
            return cls(AccountKind.HOUSE)
        if name == CASHIER:
            return cls(AccountKind.CASHIER)
        kind, sep, rest = name.partition(":")
        if sep and rest:
            if kind == AccountKind.PLAYER:
                return cls(AccountKind.PLAYER, player_id=rest)
            if kind == AccountKind.POOL:
                return cls(AccountKind.POOL, tournament_id=rest)
            tournament, sep2, player = rest.partition(":")
            if kind == AccountKind.TICKET and sep2 and tournament and player:
                return cls(AccountKind.TICKET, tournament, player)
        raise AccountError(
            f"unknown ledger account {name!r}: expected house, cashier, player:<id>, pool:<tid> "
            "or ticket:<tid>:<pid>"
        )

    def __str__(self) -> str:
        if self.kind is AccountKind.PLAYER:
            return player_account(self.player_id)
        if self.kind is AccountKind.POOL:
            return pool_account(self.tournament_id)
        if self.kind is AccountKind.TICKET:
            return ticket_account(self.tournament_id, self.player_id)
        return str(self.kind)

    @property
    def may_go_negative(self) -> bool:
        """Only the house (overlays) and the cashier (the outside world) can run a deficit."""
        return self.kind in (AccountKind.HOUSE, AccountKind.CASHIER)


# The names, written here and read by ``Account.parse`` (plain f-strings: they are built for
# every transfer).
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
