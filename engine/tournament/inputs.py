"""The director's inputs as values: what a journal records and a recovery replays.

Every call that changes a ``Director`` has a value here, and ``apply(director, value)`` makes the
call. A director restored from a snapshot and given the same values in the same order (with the
generator state the snapshot holds) makes the same commands: that is how a server that crashed
gets its tournament back (CRASH-1), and why a journal needs nothing else. The values are msgspec
structs, encoded with ``encode`` and read back with ``decode``, tagged by kind.

``Intent`` is the one value that changes nothing: a server notes it before it moves a player's
money for a purchase, so that a crash between the money and the purchase's own input can be found
and the money given back (see ``unmatched_intents``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import msgspec

from engine.tournament.deals import DealMethod, DealPlan
from engine.tournament.director import Command, Director
from engine.tournament.settlement import InMoneyMethod
from engine.tournament.transfers import Transfer

INPUTS_FORMAT: Final = 1


class Input(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    """One input to the director at clock time ``now`` (seconds)."""

    now: float


class Register(Input, frozen=True, kw_only=True, tag="register"):
    player: str
    balance: int
    via_ticket: bool = False


class Unregister(Input, frozen=True, kw_only=True, tag="unregister"):
    player: str


class Rebuy(Input, frozen=True, kw_only=True, tag="rebuy"):
    player: str
    balance: int


class DeclineRebuy(Input, frozen=True, kw_only=True, tag="decline_rebuy"):
    player: str


class AddOn(Input, frozen=True, kw_only=True, tag="add_on"):
    player: str
    balance: int


class Tick(Input, frozen=True, kw_only=True, tag="tick"):
    """The clock reached ``now`` (levels, breaks, the start, registration closing)."""


class StartNow(Input, frozen=True, kw_only=True, tag="start_now"):
    """An operator starts the tournament before its scheduled time."""


class Reschedule(Input, frozen=True, kw_only=True, tag="reschedule"):
    """An operator moves the start (before it) to ``start_at``."""

    start_at: float


class HandEnded(Input, frozen=True, kw_only=True, tag="hand_ended"):
    table_id: int
    stacks: dict[int, int]  # seat -> chips at the end of the hand
    banks_spent: dict[str, int] = msgspec.field(default_factory=dict)


class Recover(Input, frozen=True, kw_only=True, tag="recover"):
    """After a restore: deal again the hands that were under way (CRASH-1); the clock did not
    run from ``down_since`` to ``now`` (the server was down)."""

    down_since: float | None = None


class TableLost(Input, frozen=True, kw_only=True, tag="table_lost"):
    """The table's actor was lost with the process it ran in: the hand under way there is dealt
    again from its start (CRASH-1 at one table)."""

    table_id: int


class Pause(Input, frozen=True, kw_only=True, tag="pause"):
    pass


class Resume(Input, frozen=True, kw_only=True, tag="resume"):
    pass


class Penalize(Input, frozen=True, kw_only=True, tag="penalize"):
    player: str
    hands: int


class Disqualify(Input, frozen=True, kw_only=True, tag="disqualify"):
    player: str


class SitOut(Input, frozen=True, kw_only=True, tag="sit_out"):
    player: str
    absent: bool


class Cancel(Input, frozen=True, kw_only=True, tag="cancel"):
    in_money: InMoneyMethod = InMoneyMethod.CHIPS


class DealAsk(Input, frozen=True, kw_only=True, tag="deal_ask"):
    player: str


class DealPropose(Input, frozen=True, kw_only=True, tag="deal_propose"):
    method: DealMethod = DealMethod.ICM
    left_to_play: int = 0
    shares: dict[str, int] | None = None  # a custom split the players agreed on


class DealAccept(Input, frozen=True, kw_only=True, tag="deal_accept"):
    player: str


class DealAbandon(Input, frozen=True, kw_only=True, tag="deal_abandon"):
    player: str


class Intent(Input, frozen=True, kw_only=True, tag="intent"):
    """A purchase about to move money (``transfers``); changes nothing in the director."""

    player: str
    purchase: str  # the kind of the input that records it: register, rebuy or add_on
    transfers: tuple[Transfer, ...]


class PurchaseUndone(Input, frozen=True, kw_only=True, tag="purchase_undone"):
    """An ``Intent`` whose money was given back at a restart: its keys are spent."""

    player: str
    keys: tuple[str, ...]


AnyInput = (
    Register
    | Unregister
    | Rebuy
    | DeclineRebuy
    | AddOn
    | Tick
    | StartNow
    | Reschedule
    | HandEnded
    | Recover
    | TableLost
    | Pause
    | Resume
    | Penalize
    | Disqualify
    | SitOut
    | Cancel
    | DealAsk
    | DealPropose
    | DealAccept
    | DealAbandon
    | Intent
    | PurchaseUndone
)

_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(AnyInput)


def encode(value: AnyInput) -> bytes:
    return _ENCODER.encode(value)


def decode(data: bytes) -> AnyInput:
    """The input in ``data``; raises ``msgspec.DecodeError`` or ``msgspec.ValidationError``."""
    return _DECODER.decode(data)


def apply(director: Director, value: AnyInput) -> list[Command]:
    """Give ``director`` the input: the commands it answers (its errors propagate, and then
    nothing changed)."""
    now = value.now
    match value:
        case Register():
            return director.register(value.player, now, value.balance, via_ticket=value.via_ticket)
        case Unregister():
            return director.unregister(value.player, now)
        case Rebuy():
            return director.rebuy(value.player, now, value.balance)
        case DeclineRebuy():
            return director.decline_rebuy(value.player, now)
        case AddOn():
            return director.add_on(value.player, now, value.balance)
        case Tick():
            return director.tick(now)
        case StartNow():
            return director.start_now(now)
        case Reschedule():
            return director.reschedule(now, value.start_at)
        case HandEnded():
            return director.hand_ended(
                value.table_id, dict(value.stacks), now, banks_spent=dict(value.banks_spent)
            )
        case Recover():
            return director.recover(now, down_since=value.down_since)
        case TableLost():
            return director.table_lost(value.table_id, now)
        case Pause():
            return director.pause(now)
        case Resume():
            return director.resume(now)
        case Penalize():
            return director.penalize(value.player, value.hands, now)
        case Disqualify():
            return director.disqualify(value.player, now)
        case SitOut():
            return director.sit_out(value.player, value.absent)
        case Cancel():
            return director.cancel(now, value.in_money)
        case DealAsk():
            return director.deal_ask(value.player, now)
        case DealPropose():
            plan = (
                None
                if value.shares is None
                else DealPlan(DealMethod.CUSTOM, dict(value.shares), value.left_to_play)
            )
            return director.deal_propose(now, value.method, value.left_to_play, plan)
        case DealAccept():
            return director.deal_accept(value.player, now)
        case DealAbandon():
            return director.deal_abandon(value.player, now)
        case Intent():
            return []
        case PurchaseUndone():
            return director.purchase_undone(value.player, value.keys)
    raise TypeError(f"not a director input: {value!r}")  # pragma: no cover - the union is closed


def unmatched_intents(values: Iterable[AnyInput]) -> list[Intent]:
    """The intents no input of their purchase, by the same player, followed: money that may have
    moved for a purchase the director never recorded (a crash in between).

    A purchase closes the player's newest open intent of its kind (the coordinator writes the
    intent, posts, then records the purchase, so the two are adjacent in its life), and a
    ``PurchaseUndone`` closes the intent whose keys it names: an intent refunded at one restart
    is not refunded again at the next, and a later purchase of the same kind is not mistaken
    for the refunded one."""
    open_intents: list[Intent] = []
    for value in values:
        if isinstance(value, Intent):
            open_intents.append(value)
        elif isinstance(value, Register | Rebuy | AddOn):
            kind = {Register: "register", Rebuy: "rebuy", AddOn: "add_on"}[type(value)]
            for index in range(len(open_intents) - 1, -1, -1):
                intent = open_intents[index]
                if intent.player == value.player and intent.purchase == kind:
                    del open_intents[index]
                    break
        elif isinstance(value, PurchaseUndone):
            keys = set(value.keys)
            open_intents = [
                intent
                for intent in open_intents
                if intent.player != value.player
                or not keys.intersection(t.idempotency_key for t in intent.transfers)
            ]
    return open_intents
