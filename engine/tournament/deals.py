"""Final-table deals (DEAL-1..4): ICM and chip-chop splits, validation, the negotiation, the aftermath.

ICM (the Malmuth-Harville model): a player finishes first with probability stack / total chips;
given who finished above, the next place is drawn the same way among the rest. A player's equity
is the expected prize under that model.

- ``icm_exact``: subset dynamic programming over bitmasks. ``reach[T]`` is the probability that
  the set ``T`` of players fills the top ``|T|`` places (in any order); each mask is final before
  any superset is visited because supersets are larger integers, so one pass in numeric order
  suffices: O(2**n * n) for n players, at most 20 (ten players take a few milliseconds). Places
  beyond the last prize are never expanded.
- ``icm_monte_carlo``: beyond 20 players. Harville's finish order is a Plackett-Luce ranking,
  which is sampled exactly by sorting ``Exp(1) / stack`` keys; it returns the mean prize of
  each player and its standard error, from a seeded ``random.Random``.

Equities are floats; ``split_by_weights`` (largest remainder) turns them into integer cents that
add up exactly to the amount dealt.

Chip chop: every remaining player first gets the smallest prize still to be awarded (what they
are sure to win), and the rest is divided in proportion to chips.

An amount left to play for (DEAL-3, at most ``deals.max_left_to_play_percent`` % of the total
pool) is taken out fairly: proportionally to each player's share above that guaranteed
minimum, so nobody is pushed under what they had already locked up. The players then play on
for it, winner takes all, with levels shortened by up to half but never under 15 minutes
(``shortened_levels``, DEAL-4). A deal that leaves nothing to play for ends the tournament and
the chip leader is its winner (DEAL-4).

DEAL-2: ``DealNegotiation`` pauses the clock (``clock_paused``) from the moment every player has
asked for a deal until a deal is agreed or the talks are abandoned.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from engine.tournament.config import Level, TournamentConfig
from engine.tournament.payouts import PayoutStructure, split_by_weights
from engine.tournament.transfers import Reason, Transfer, player_account, pool_account
from engine.triads import can

EXACT_ICM_MAX_PLAYERS = 20
MIN_SHORTENED_LEVEL_MINUTES = 15


class DealError(ValueError):
    """A deal that the rules do not allow or whose numbers do not add up."""


class DealsNotAllowed(DealError):
    """Deals are off for this tournament (a satellite, or the operator's setting) (DEAL-1)."""


class NotFinalTable(DealError):
    """Deals are only made at the final table (DEAL-1)."""


class NotAgreed(DealError):
    """Not every remaining player has agreed (DEAL-1)."""


class AmountsDoNotAddUp(DealError):
    pass


class TooMuchLeftToPlay(DealError):
    pass


class WrongNegotiationPhase(DealError):
    pass


class DealMethod(StrEnum):
    ICM = "icm"
    CHIP_CHOP = "chip-chop"
    CUSTOM = "custom"  # any split all agree to


# --- ICM ----------------------------------------------------------------------------------------


def _check_icm_input(stacks: Sequence[int], prizes: Sequence[int]) -> None:
    if not stacks:
        raise DealError("ICM needs at least one player")
    if any(s <= 0 for s in stacks):
        raise DealError(f"every stack must be > 0 chips, got {list(stacks)}")
    if any(p < 0 for p in prizes):
        raise DealError(f"prizes must be >= 0, got {list(prizes)}")


def icm_exact(stacks: Sequence[int], prizes: Sequence[int]) -> list[float]:
    """Each player's expected prize under Malmuth-Harville, exactly (up to 20 players).

    ``prizes[k]`` is the prize of place ``k + 1``; places past the players are ignored and
    missing places pay 0. The equities sum to the prizes of the first ``len(stacks)`` places.
    """
    _check_icm_input(stacks, prizes)
    n = len(stacks)
    if n > EXACT_ICM_MAX_PLAYERS:
        raise DealError(f"exact ICM is for up to {EXACT_ICM_MAX_PLAYERS} players, got {n}")
    paid = [float(p) for p in prizes[:n]]
    places = len(paid)
    total = float(sum(stacks))
    size = 1 << n
    chips = [0.0] * size  # chips held by the players in each mask
    count = [0] * size
    for mask in range(1, size):
        low = mask & -mask
        i = low.bit_length() - 1
        chips[mask] = chips[mask ^ low] + stacks[i]
        count[mask] = count[mask ^ low] + 1
    reach = [0.0] * size
    reach[0] = 1.0
    equity = [0.0] * n
    for mask in range(size):
        k = count[mask]
        p = reach[mask]
        if p == 0.0 or k >= places:
            continue
        rest = total - chips[mask]
        prize = paid[k]
        for i in range(n):
            bit = 1 << i
            if mask & bit:
                continue
            q = p * stacks[i] / rest
            reach[mask | bit] += q
            equity[i] += q * prize
    return equity


@dataclass(frozen=True, slots=True)
class IcmEstimate:
    """Monte Carlo ICM: mean prize per player and the standard error of each mean."""

    equities: tuple[float, ...]
    standard_errors: tuple[float, ...]
    trials: int


def icm_monte_carlo(
    stacks: Sequence[int], prizes: Sequence[int], rng: random.Random, trials: int = 20_000
) -> IcmEstimate:
    """Estimate ICM equities by sampling Harville finish orders (any number of players)."""
    _check_icm_input(stacks, prizes)
    if trials < 2:
        raise DealError(f"Monte Carlo needs at least 2 trials, got {trials}")
    n = len(stacks)
    paid = [float(p) for p in prizes[:n]]
    places = len(paid)
    sums = [0.0] * n
    squares = [0.0] * n
    expovariate = rng.expovariate
    indices = range(n)
    for _ in range(trials):
        keys = [expovariate(1.0) / stacks[i] for i in indices]
        order = sorted(indices, key=keys.__getitem__)
        for place in range(places):
            i = order[place]
            prize = paid[place]
            sums[i] += prize
            squares[i] += prize * prize
    means = [s / trials for s in sums]
    errors = [
        math.sqrt(max(0.0, (sq / trials - m * m)) * trials / (trials - 1) / trials)
        for sq, m in zip(squares, means, strict=True)
    ]
    return IcmEstimate(tuple(means), tuple(errors), trials)


def icm_equities(
    stacks: Sequence[int], prizes: Sequence[int], rng: random.Random | None = None, trials: int = 20_000
) -> list[float]:
    """Exact ICM up to 20 players; Monte Carlo (needs ``rng``) beyond."""
    if len(stacks) <= EXACT_ICM_MAX_PLAYERS:
        return icm_exact(stacks, prizes)
    if rng is None:
        raise DealError(f"ICM for {len(stacks)} players is estimated by Monte Carlo and needs an rng")
    return list(icm_monte_carlo(stacks, prizes, rng, trials).equities)


# --- splits -----------------------------------------------------------------------------------


def icm_split(stacks: Sequence[int], prizes: Sequence[int], rng: random.Random | None = None) -> list[int]:
    """ICM equities in integer cents summing exactly to the prizes of the remaining places."""
    amount = sum(prizes[: len(stacks)])
    return split_by_weights(amount, icm_equities(stacks, prizes, rng))


def chip_chop(stacks: Sequence[int], prizes: Sequence[int]) -> list[int]:
    """Everyone gets the smallest remaining prize, the rest goes in proportion to chips."""
    _check_icm_input(stacks, prizes)
    remaining = list(prizes[: len(stacks)]) + [0] * max(0, len(stacks) - len(prizes))
    floor = min(remaining)
    rest = split_by_weights(sum(remaining) - floor * len(stacks), list(stacks))
    return [floor + r for r in rest]


@dataclass(frozen=True, slots=True)
class DealPlan:
    """A proposed deal: cents paid now to each player, and what is left to play for."""

    method: DealMethod
    shares: Mapping[str, int]
    left_to_play: int

    @property
    def dealt(self) -> int:
        return sum(self.shares.values())


def take_left_to_play(shares: Sequence[int], minimum: int, left_to_play: int) -> list[int]:
    """Remove ``left_to_play`` from ``shares`` in proportion to each share above ``minimum``."""
    above = [max(0, s - minimum) for s in shares]
    if left_to_play > sum(above):
        raise TooMuchLeftToPlay(
            f"cannot leave {left_to_play} to play for: only {sum(above)} is above the guaranteed minimum"
        )
    cuts = split_by_weights(left_to_play, above) if left_to_play else [0] * len(shares)
    return [s - c for s, c in zip(shares, cuts, strict=True)]


def propose_deal(
    method: DealMethod,
    players: Sequence[str],
    stacks: Sequence[int],
    remaining_prizes: Sequence[int],
    left_to_play: int = 0,
    rng: random.Random | None = None,
) -> DealPlan:
    """Compute an ICM or chip-chop deal for ``players`` (seat order) over the unawarded prizes.

    ``remaining_prizes[k]`` is the prize of the k-th best place still to be awarded. The
    shares plus ``left_to_play`` add up exactly to the prizes of ``len(players)`` places.
    """
    if len(players) != len(stacks) or len(set(players)) != len(players):
        raise DealError(f"need one stack per distinct player, got {list(players)} and {list(stacks)}")
    if method is DealMethod.ICM:
        shares = icm_split(stacks, remaining_prizes, rng)
    elif method is DealMethod.CHIP_CHOP:
        shares = chip_chop(stacks, remaining_prizes)
    else:
        raise DealError("a custom deal is written by the players; build the DealPlan directly")
    n = len(players)
    minimum = min(list(remaining_prizes[:n]) + [0] * max(0, n - len(remaining_prizes)))
    shares = take_left_to_play(shares, minimum, left_to_play)
    return DealPlan(method, dict(zip(players, shares, strict=True)), left_to_play)


# --- validation (DEAL-1, DEAL-3) ----------------------------------------------------------------


def verify_deal_allowed(config: TournamentConfig, tables_left: int) -> None:
    """Raise unless a deal may be discussed now: allowed, not a satellite, at the final table."""
    if config.satellite is not None:
        raise DealsNotAllowed(f"{config.id} is a satellite: no deals (DEAL-1)")
    if not config.deals.allowed:
        raise DealsNotAllowed(f"{config.id} does not allow deals")
    if tables_left != 1:
        raise NotFinalTable(f"deals are made at the final table only ({tables_left} tables are left)")


def max_left_to_play(config: TournamentConfig, total_pool: int) -> int:
    """The most that may be left to play for: ``max_left_to_play_percent`` % of the total pool."""
    return total_pool * config.deals.max_left_to_play_percent // 100


def left_to_play_above_minimums(remaining_prizes: Sequence[int], players: int, percent: int = 10) -> int:
    """The live tour's measure (DEAL-3, A): ``percent`` % of what remains after every minimum cash.

    What remains is the unawarded prizes of ``players`` places less ``players`` times the
    smallest of them; the result is rounded down to the cent.
    """
    if players < 1 or not 0 <= percent <= 100:
        raise DealError(f"need players >= 1 and percent 0..100, got {players} and {percent}")
    prizes = list(remaining_prizes[:players]) + [0] * max(0, players - len(remaining_prizes))
    return (sum(prizes) - min(prizes) * players) * percent // 100


def verify_deal(
    config: TournamentConfig,
    tables_left: int,
    plan: DealPlan,
    remaining_players: Sequence[str],
    agreed: Sequence[str],
    remaining_prizes: Sequence[int],
    total_pool: int,
    required_left_to_play: int = 0,
) -> None:
    """Raise unless ``plan`` is a valid deal (DEAL-1, DEAL-3); ``can_deal`` is the boolean form.

    Valid: deals allowed here, at the final table, one non-negative share for each remaining
    player and nobody else, every one of them agreed, shares plus the amount left add up to the
    unawarded prizes exactly, and the amount left is between the operator's requirement and
    the ``max_left_to_play_percent`` cap.
    """
    verify_deal_allowed(config, tables_left)
    if set(plan.shares) != set(remaining_players):
        raise DealError(
            f"a deal pays exactly the remaining players {sorted(remaining_players)}, "
            f"got {sorted(plan.shares)}"
        )
    missing = sorted(set(remaining_players) - set(agreed))
    if missing:
        raise NotAgreed(f"every remaining player must agree; not yet: {missing}")
    if any(amount < 0 for amount in plan.shares.values()) or plan.left_to_play < 0:
        raise AmountsDoNotAddUp(f"shares and the amount left must be >= 0, got {dict(plan.shares)}")
    available = sum(remaining_prizes[: len(remaining_players)])
    if plan.dealt + plan.left_to_play != available:
        raise AmountsDoNotAddUp(
            f"shares {plan.dealt} + left to play {plan.left_to_play} must equal the unawarded {available}"
        )
    cap = max_left_to_play(config, total_pool)
    if plan.left_to_play > cap:
        raise TooMuchLeftToPlay(f"at most {cap} may be left to play for, got {plan.left_to_play}")
    if plan.left_to_play < min(required_left_to_play, cap):
        raise TooMuchLeftToPlay(
            f"the operator requires {required_left_to_play} left to play for, got {plan.left_to_play}"
        )


can_deal = can(verify_deal, DealError)


# --- the negotiation (DEAL-2) -----------------------------------------------------------------


class NegotiationPhase(StrEnum):
    ASKING = "asking"  # some players have asked for a deal; the clock runs
    NEGOTIATING = "negotiating"  # every player asked: the clock is paused
    AGREED = "agreed"
    ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class DealAsked:
    player_id: str
    everyone_asked: bool


@dataclass(frozen=True, slots=True)
class DealProposed:
    plan: DealPlan


@dataclass(frozen=True, slots=True)
class DealAccepted:
    player_id: str
    everyone_accepted: bool


@dataclass(frozen=True, slots=True)
class DealAbandoned:
    player_id: str


DealEvent = DealAsked | DealProposed | DealAccepted | DealAbandoned


class DealNegotiation:
    """The talks at the final table. ``clock_paused`` is what the coordinator obeys (DEAL-2).

    Invariants: a proposal exists only while negotiating; acceptances belong to the current
    proposal (a new proposal clears them); AGREED means every player accepted that proposal.
    """

    def __init__(self, config: TournamentConfig, tables_left: int, players: Sequence[str]) -> None:
        verify_deal_allowed(config, tables_left)
        if len(players) < 2 or len(set(players)) != len(players):
            raise DealError(f"a deal needs two or more distinct players, got {list(players)}")
        self.players = tuple(players)
        self.phase = NegotiationPhase.ASKING
        self.asked: set[str] = set()
        self.accepted: set[str] = set()
        self.plan: DealPlan | None = None

    @property
    def clock_paused(self) -> bool:
        return self.phase is NegotiationPhase.NEGOTIATING

    def _verify_player(self, player_id: str) -> None:
        if player_id not in self.players:
            raise DealError(f"{player_id} is not at the final table")

    def verify_ask(self, player_id: str) -> None:
        self._verify_player(player_id)
        if self.phase is not NegotiationPhase.ASKING:
            raise WrongNegotiationPhase(f"players ask for a deal only before the talks (now {self.phase})")
        if player_id in self.asked:
            raise WrongNegotiationPhase(f"{player_id} already asked for a deal")

    can_ask = can(verify_ask, DealError)

    def ask(self, player_id: str) -> DealAsked:
        self.verify_ask(player_id)
        self.asked.add(player_id)
        everyone = self.asked == set(self.players)
        if everyone:
            self.phase = NegotiationPhase.NEGOTIATING
        return DealAsked(player_id, everyone)

    def verify_propose(self, plan: DealPlan) -> None:
        if self.phase is not NegotiationPhase.NEGOTIATING:
            raise WrongNegotiationPhase(f"a deal is proposed while negotiating (now {self.phase})")
        if set(plan.shares) != set(self.players):
            raise DealError(f"a deal pays exactly {sorted(self.players)}, got {sorted(plan.shares)}")

    can_propose = can(verify_propose, DealError)

    def propose(self, plan: DealPlan) -> DealProposed:
        self.verify_propose(plan)
        self.plan = plan
        self.accepted.clear()
        return DealProposed(plan)

    def verify_accept(self, player_id: str) -> None:
        self._verify_player(player_id)
        if self.phase is not NegotiationPhase.NEGOTIATING or self.plan is None:
            raise WrongNegotiationPhase("there is no proposal to accept")
        if player_id in self.accepted:
            raise WrongNegotiationPhase(f"{player_id} already accepted")

    can_accept = can(verify_accept, DealError)

    def accept(self, player_id: str) -> DealAccepted:
        self.verify_accept(player_id)
        self.accepted.add(player_id)
        everyone = self.accepted == set(self.players)
        if everyone:
            self.phase = NegotiationPhase.AGREED
        return DealAccepted(player_id, everyone)

    def verify_abandon(self, player_id: str) -> None:
        self._verify_player(player_id)
        if self.phase in (NegotiationPhase.AGREED, NegotiationPhase.ABANDONED):
            raise WrongNegotiationPhase(f"the talks are over ({self.phase})")

    can_abandon = can(verify_abandon, DealError)

    def abandon(self, player_id: str) -> DealAbandoned:
        """Any player may walk away; the clock runs again and play goes on."""
        self.verify_abandon(player_id)
        self.phase = NegotiationPhase.ABANDONED
        return DealAbandoned(player_id)


# --- the aftermath (DEAL-4) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DealConclusion:
    """What an agreed deal does: pay now, and either end (chip leader wins) or play on."""

    transfers: tuple[Transfer, ...]
    ends_tournament: bool
    winner: str | None  # the chip leader, when the deal ends the tournament
    continuation: PayoutStructure | None  # winner takes what is left, when play goes on


def conclude_deal(
    tournament_id: str, plan: DealPlan, players: Sequence[str], stacks: Sequence[int], deal_number: int = 1
) -> DealConclusion:
    """Turn an agreed deal into pool → player transfers (Reason.DEAL) and its consequence.

    The chip leader (the first of equals in ``players``' seat order) wins a deal that leaves
    nothing to play for; otherwise the rest is played for, winner takes all.
    """
    if len(players) != len(stacks):
        raise DealError("need one stack per player")
    pool = pool_account(tournament_id)
    transfers = tuple(
        Transfer(
            pool,
            player_account(player),
            plan.shares[player],
            f"{tournament_id}:deal:{deal_number}:{player}",
            Reason.DEAL,
        )
        for player in players
        if plan.shares.get(player, 0) > 0
    )
    if plan.left_to_play == 0:
        leader = players[max(range(len(players)), key=lambda i: (stacks[i], -i))]
        return DealConclusion(transfers, True, leader, None)
    return DealConclusion(transfers, False, None, PayoutStructure(prizes=(plan.left_to_play,)))


def shortened_levels(levels: Sequence[Level], percent: int = 50) -> tuple[Level, ...]:
    """Levels for play after a partial deal: ``percent`` shorter (at most half), never under 15 min.

    A level already 15 minutes or shorter keeps its length.
    """
    if not 0 <= percent <= 50:
        raise DealError(f"levels may be shortened by 0..50 %, got {percent}")
    out = []
    for level in levels:
        cut = level.minutes - level.minutes * percent // 100
        minutes = max(cut, min(level.minutes, MIN_SHORTENED_LEVEL_MINUTES))
        out.append(replace(level, minutes=minutes))
    return tuple(out)
