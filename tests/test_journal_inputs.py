"""CRASH-1: which purchases a restart must give back, read from the journal's inputs alone
(engine.tournament.inputs.unmatched_intents)."""

from __future__ import annotations

from engine.tournament import inputs
from engine.tournament.transfers import Reason, Transfer


def _intent(player: str, key: str, purchase: str = "register") -> inputs.Intent:
    transfer = Transfer(f"player:{player}", "pool:t1", 1000, key, Reason.BUY_IN)
    return inputs.Intent(now=0.0, player=player, purchase=purchase, transfers=(transfer,))


def test_crash_1_an_intent_without_its_purchase_is_unmatched() -> None:
    cut_short = _intent("alice", "k1")
    values: list[inputs.AnyInput] = [
        _intent("bob", "k2"),
        inputs.Register(now=0.0, player="bob", balance=5000),
        cut_short,
    ]
    assert inputs.unmatched_intents(values) == [cut_short]


def test_crash_1_an_intent_refunded_at_one_restart_is_not_refunded_at_the_next() -> None:
    first = _intent("alice", "k1")
    values: list[inputs.AnyInput] = [first, inputs.PurchaseUndone(now=1.0, player="alice", keys=("k1",))]
    assert inputs.unmatched_intents(values) == []


def test_crash_1_a_purchase_after_a_refund_is_not_taken_for_the_refunded_one() -> None:
    # Restart 1 refunded k1; the player then registered for real (k2). A second restart must
    # give back nothing: before, the registration closed the refunded intent (the first open
    # one) and left k2 open, so the second restart refunded a registration the director had.
    values: list[inputs.AnyInput] = [
        _intent("alice", "k1"),
        inputs.PurchaseUndone(now=1.0, player="alice", keys=("k1",)),
        _intent("alice", "k2"),
        inputs.Register(now=2.0, player="alice", balance=5000),
    ]
    assert inputs.unmatched_intents(values) == []


def test_crash_1_a_purchase_closes_the_newest_open_intent_of_its_kind() -> None:
    stale = _intent("alice", "k1", "rebuy")  # refused for want of funds: no purchase followed
    values: list[inputs.AnyInput] = [
        stale,
        _intent("alice", "k2", "rebuy"),
        inputs.Rebuy(now=3.0, player="alice", balance=0),
    ]
    assert inputs.unmatched_intents(values) == [stale]
