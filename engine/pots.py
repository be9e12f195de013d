"""Main and side pots, and how a pot is split between tied winners (BET-3).

A side pot is formed at each all-in amount: the chips every player put in up to a level form a
pot that only the players still in the hand who put in at least that much can win. Folded
players' chips count toward the levels they reached but they are eligible for nothing. Adjacent
levels with the same eligible players are one pot. Dead money that belongs to the whole table
(the big blind ante, LVL-1) goes into the main pot, which every player still in is eligible for.

Splitting (BET-3): tied winners share as evenly as possible, and no player gets more than one
odd chip (TDA General Concept on odd chips); the odd chips go one each to the winners in order
from the first left of the button. Callers list winners in that order. When the same players tie
for several pots (a main pot and a side pot, say), all the chips they win are divided equally
between them, as if it were one pot (PokerStars' rule, which pokerkit implements too by merging
such pots): ``split_pot`` takes the position where the previous pot's odd chips stopped, so
splitting those pots one by one gives every player exactly their share of the sum, while each
pot keeps its own award in the hand's log.

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


def split_pot(amount: int, winners: Sequence[int], start: int = 0) -> tuple[int, ...]:
    """Each winner's share of ``amount``, winners in order from the first left of the button (BET-3).

    The odd chips (fewer than the winners) go one each to the winners from position ``start`` on,
    wrapping round. For the first pot the same players split, ``start`` is 0; for each further pot
    they split, it is where the previous pot's odd chips stopped (``next_odd_chip``), which makes
    the pots together split like their sum.
    """
    if not winners:
        raise PotError("a pot needs at least one winner")
    count = len(winners)
    if not 0 <= start < count:
        raise PotError(f"the first odd chip goes to one of the {count} winners, got position {start}")
    share, odd = divmod(amount, count)
    return tuple(share + ((i - start) % count < odd) for i in range(count))


def next_odd_chip(amount: int, winners: Sequence[int], start: int = 0) -> int:
    """Where the odd chips of the next pot the same ``winners`` split begin, after this one's."""
    return (start + amount % len(winners)) % len(winners)
