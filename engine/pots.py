"""Main and side pots, and how a pot is split between tied winners (BET-3).

A side pot is formed at each all-in amount: the chips every player put in up to a level form a
pot that only the players still in the hand who put in at least that much can win. Folded
players' chips count toward the levels they reached but they are eligible for nothing. Adjacent
levels with the same eligible players are one pot. Dead money that belongs to the whole table
(the big blind ante, LVL-1) goes into the main pot, which every player still in is eligible for.

Splitting (BET-3): tied winners share equally and the odd chips (what is left when the pot is
divided by the number of winners) go to the first winner left of the button, as the rule book
(docs/rules.md) states it and TDA Rule 20 writes it ("the odd chip(s)"); pokerkit, our test
oracle, does the same.
Callers list winners in order from the first left of the button. When the same players tie for
several pots (a main pot and a side pot, say), all the chips they win are divided as if it were
one pot (PokerStars' rule, which pokerkit implements too by merging such pots): ``split_pots``
splits such consecutive pots together, so every player gets exactly their share of the sum, while
each pot keeps its own award in the hand's log.

Pot formation is pokerkit's (``State.pots``), which the differential test holds us to.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate


class PotError(ValueError):
    """Contributions or winners that cannot form or split a pot."""


@dataclass(frozen=True, slots=True)
class Pot:
    amount: int
    eligible: tuple[int, ...]  # players who can win it, in order from the first left of the button


def build_pots(
    contributions: Mapping[int, int], contenders: Collection[int], dead_money: int = 0
) -> list[Pot]:
    """The main pot then the side pots for ``contributions`` (player -> chips put in, in order from
    the first player left of the button) when ``contenders`` are still in the hand.

    ``dead_money`` is added to the main pot. The pot amounts add up to the sum of the
    contributions plus the dead money (a level no contender reached would be a bug upstream: the
    uncalled part of a bet is returned before pots are built, so it raises ``PotError``).
    """
    if dead_money < 0 or any(amount < 0 for amount in contributions.values()):
        raise PotError(f"contributions are >= 0, got {dict(contributions)} and dead money {dead_money}")
    pots: list[Pot] = []
    amount = dead_money
    previous = 0
    for level in sorted(set(contributions.values())):
        for contribution in contributions.values():
            if contribution >= level:
                amount += level - previous
        eligible = tuple(p for p, c in contributions.items() if c >= level and p in contenders)
        while pots and pots[-1].eligible == eligible:
            amount += pots.pop().amount
        if amount:
            if not eligible:
                raise PotError(f"{amount} chips at level {level} that no player still in can win")
            pots.append(Pot(amount, eligible))
        amount = 0
        previous = level
    if amount:
        # Only dead money and no contributions at all.
        pots.append(Pot(amount, tuple(p for p in contributions if p in contenders)))
    return pots


def pot_levels(
    contributions: Sequence[int], contenders: Sequence[int], dead_money: int = 0
) -> list[tuple[int, tuple[int, ...]]]:
    """``build_pots`` for players numbered 0, 1, ... (``contributions[i]`` is player i's) with
    ``contenders`` in ascending order, as ``(amount, eligible)`` pairs: the very same pots,
    computed only at the contenders' levels (a folded player's level always merges into the
    contender level above it) and without building ``Pot`` values, for the showdown's hot path.
    Raises ``PotError`` as ``build_pots`` does."""
    levels = sorted({contributions[i] for i in contenders})
    if dead_money < 0 or max(contributions) > levels[-1] or min(contributions) < 0:
        # Negative amounts or chips above every contender: build_pots names the problem.
        formed = build_pots(dict(enumerate(contributions)), contenders, dead_money)
        return [(pot.amount, pot.eligible) for pot in formed]
    if len(levels) == 1:
        total = sum(contributions) + dead_money
        return [(total, tuple(contenders))] if total else []
    # The chips under a level L are sum(min(c, L)): the contributions below L, whole, plus L
    # for each contribution at or above it (prefix sums of the sorted contributions).
    ordered = sorted(contributions)
    prefix = [0, *accumulate(ordered)]
    count = len(ordered)
    pots: list[tuple[int, tuple[int, ...]]] = []
    below = 0  # the chips under the previous level
    amount = dead_money
    for level in levels:
        under = bisect_left(ordered, level)
        capped = prefix[under] + level * (count - under)
        amount += capped - below
        if amount:
            pots.append((amount, tuple([i for i in contenders if contributions[i] >= level])))
        amount = 0
        below = capped
    return pots


def split_pot(amount: int, winners: Sequence[int]) -> tuple[int, ...]:
    """Each winner's share of ``amount``, winners in order from the first left of the button
    (BET-3): equal shares, the odd chips to the first winner."""
    return split_pots((amount,), winners)[0]


def split_pots(amounts: Sequence[int], winners: Sequence[int]) -> list[tuple[int, ...]]:
    """Each winner's share of each of consecutive pots the same ``winners`` tie for, such that
    together they split like the sum of ``amounts`` (BET-3).

    Every pot first gives each winner its whole share (``amount // len(winners)``). The chips
    left over, pot by pot, then go to the winners in turn, each in as many rounds as the sum
    allows, and the chips too few for another round to the first winner: so nobody's award in a
    pot is negative, and the totals are exactly the sum's equal shares plus its odd chips to the
    first winner.
    """
    if not winners:
        raise PotError("a pot needs at least one winner")
    if any(amount < 0 for amount in amounts):
        raise PotError(f"pots are not negative, got {list(amounts)}")
    count = len(winners)
    if count == 1:
        return [(amount,) for amount in amounts]
    leftovers = [amount % count for amount in amounts]
    rounds, odd = divmod(sum(leftovers), count)
    # Who receives each leftover chip, in the order the pots hand them out.
    receivers = [*range(count)] * rounds + [0] * odd
    split: list[tuple[int, ...]] = []
    taken = 0
    for amount, leftover in zip(amounts, leftovers, strict=True):
        shares = [amount // count] * count
        for receiver in receivers[taken : taken + leftover]:
            shares[receiver] += 1
        taken += leftover
        split.append(tuple(shares))
    return split
