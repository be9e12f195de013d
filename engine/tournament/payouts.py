"""Prize structures: who gets how much of the pool, always in integer cents summing exactly.

A ``PayoutStructure`` lists the prize of each paid place, first place first; its prizes add up to
the prize pool to the cent. Three ways to make one:

- ``generate_structure``: any field size. About ``percent_paid`` % of the entries are paid
  (rounded half up, at least one place). The minimum cash ``m`` is at least 1.2 x the buy-in and
  near ``r(n)`` x the average prize, where ``r`` falls from 0.7 with two places paid to 0.25 for big
  fields (``r(n) = max(0.25, 0.7 * (2 / n) ** 0.3)``), so a small table pays like 65/35 or 47/29/23
  and a big field pays its min cash about 1.5-2 x the buy-in. The curve from ``m`` to first place
  is a power law in the place number::

      prize(i) = m + (F - m) * (i**-1 - n**-1) / (1 - n**-1)

  where ``F`` (first place) is the value that makes the curve sum to the pool. Every place but the
  first is then rounded to a "nice" amount (three significant figures, so 1,234.56 becomes
  1,230.00 and 27.34 becomes 27.30), the rounded places are kept non-increasing, and first place
  takes whatever the rounding left over, so the structure sums EXACTLY to the pool. If that ever
  left first place below second (tiny pools), the unrounded curve is apportioned by largest
  remainder instead. The curve math uses floats; only the rounded integers leave this module.
- ``structure_from_table``: an explicit table of basis points per place. With fewer entries
  than places, only as many places as entries are paid and their shares are scaled up.
- ``satellite_structure``: every seat winner gets the same prize, a ticket worth ``seat_value``
  (REG-6); one seat per full ``seat_value`` in the pool, and what is left over is cash for the
  next place. The satellite ends when the players left equal the seats (END-1).

Guarantees: ``overlay_transfer`` tops the pool up to the guarantee from the house
(``Reason.OVERLAY``). ``prizes_for_finishes`` turns finishes (ties included, ELIM-2) into
``Transfer``s: tied players share the prizes of the places they occupy equally in integer
cents, and the odd cents go one each to the first players in the finish's order (seat order
from the first seat after the button).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from engine.tournament.config import PayoutMode, TournamentConfig
from engine.tournament.transfers import (
    HOUSE,
    Reason,
    Transfer,
    player_account,
    pool_account,
    ticket_account,
)


class PayoutError(ValueError):
    """A structure or a list of finishes that cannot be paid as asked."""


class FinishLike(Protocol):
    """What ``prizes_for_finishes`` reads from a finish (standings.Finish has these fields)."""

    @property
    def place(self) -> int: ...

    @property
    def players(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class PayoutStructure:
    """Prize per place in cents, first place first. ``seats`` > 0 marks a satellite.

    In a satellite, places ``1 .. seats`` win a ticket to ``target`` worth ``prizes[i]`` each.
    """

    prizes: tuple[int, ...]
    seats: int = 0
    target: str = ""

    def __post_init__(self) -> None:
        if any(type(p) is not int or p <= 0 for p in self.prizes):
            raise PayoutError(f"every prize must be a positive integer of cents, got {self.prizes}")
        if any(later > earlier for earlier, later in zip(self.prizes, self.prizes[1:], strict=False)):
            raise PayoutError(f"prizes must not increase with the place, got {self.prizes}")
        if not 0 <= self.seats <= len(self.prizes):
            raise PayoutError(f"seats must be 0..{len(self.prizes)}, got {self.seats}")

    @property
    def pool(self) -> int:
        return sum(self.prizes)

    @property
    def places_paid(self) -> int:
        return len(self.prizes)

    def prize(self, place: int) -> int:
        """The prize of ``place`` (1-based); 0 outside the money."""
        return self.prizes[place - 1] if 1 <= place <= len(self.prizes) else 0

    def is_seat(self, place: int) -> bool:
        """True when ``place`` wins a satellite seat (a ticket) rather than cash."""
        return 1 <= place <= self.seats


# --- splitting an amount ----------------------------------------------------------------------


def split_by_weights(amount: int, weights: Sequence[float]) -> list[int]:
    """Split ``amount`` cents in proportion to ``weights``; the parts sum to ``amount`` exactly.

    Largest remainder (Hamilton) method: everyone gets the floor of their exact share, then the
    cents left over go one each to the largest fractional remainders. Tie rule: among equal
    remainders the earlier index wins, so callers pass players in seat order (first after the
    button first) and the odd cent follows the ELIM-2/BET-3 convention. All weights zero means
    equal weights.
    """
    if amount < 0:
        raise PayoutError(f"cannot split a negative amount ({amount})")
    if not weights:
        if amount:
            raise PayoutError(f"cannot split {amount} cents among nobody")
        return []
    if any(w < 0 for w in weights):
        raise PayoutError(f"weights must be >= 0, got {list(weights)}")
    total = sum(weights)
    if total <= 0:
        weights = [1] * len(weights)
        total = len(weights)
    if all(isinstance(w, int) for w in weights):
        # Exact integer arithmetic when we can: no float error decides a cent.
        int_weights = [int(w) for w in weights]
        int_total = int(total)
        floors = [amount * w // int_total for w in int_weights]
        remainders: list[float] = [float((amount * w) % int_total) for w in int_weights]
    else:
        exact = [amount * w / total for w in weights]
        floors = [int(x) for x in exact]
        remainders = [x - f for x, f in zip(exact, floors, strict=True)]
    left = amount - sum(floors)
    order = sorted(range(len(weights)), key=lambda i: (-remainders[i], i))
    for i in order[:left]:
        floors[i] += 1
    return floors


def split_equally(amount: int, count: int) -> list[int]:
    """``amount`` in ``count`` equal integer parts; the first ``amount % count`` get one cent more."""
    if count <= 0:
        raise PayoutError(f"cannot split among {count} players")
    base, odd = divmod(amount, count)
    return [base + 1 if i < odd else base for i in range(count)]


# --- structures -------------------------------------------------------------------------------


def places_paid(entries: int, percent_paid: int) -> int:
    """``percent_paid`` % of ``entries``, rounded half up, at least 1 and at most ``entries``."""
    if entries <= 0:
        return 0
    return max(1, min(entries, (entries * percent_paid + 50) // 100))


def nice_amount(cents: int) -> int:
    """Round to three significant figures (whole units of 10**(digits-3) cents)."""
    if cents < 1000:
        return cents
    unit = int(10 ** (len(str(cents)) - 3))
    return (cents + unit // 2) // unit * unit


def _curve(pool: int, places: int, buy_in: int) -> list[float]:
    n = places
    average = pool / n
    ratio = max(0.25, 0.7 * (2 / n) ** 0.3) if n > 1 else 1.0
    minimum = min(average, max(ratio * average, 1.2 * buy_in))
    weights = [(i**-1 - n**-1) / (1 - n**-1) if n > 1 else 1.0 for i in range(1, n + 1)]
    top_minus_min = (pool - n * minimum) / sum(weights)
    return [minimum + top_minus_min * w for w in weights]


def generate_structure(
    pool: int, entries: int, buy_in: int, percent_paid: int = 15, max_places: int | None = None
) -> PayoutStructure:
    """A structure for ``entries`` paying about ``percent_paid`` %, summing exactly to ``pool``.

    First place always pays strictly more than second (END-1 would otherwise end the tournament
    at once); a pool too small for that pays fewer places.

    See the module docstring for the curve and the rounding. ``pool`` 0 gives an empty structure.
    ``max_places`` caps the places paid (the number of distinct players who can finish, when
    re-entries make entries outnumber them), so every paid place is reached and the pool empties.
    """
    if pool < 0 or entries < 0 or buy_in < 0:
        raise PayoutError(f"pool, entries and buy-in must be >= 0 (got {pool}, {entries}, {buy_in})")
    places = min(places_paid(entries, percent_paid), pool, _cap(max_places))
    while places > 0:
        prizes = _prizes(pool, places, buy_in)
        # END-1 ends a tournament whose players left would all get the same prize: first place
        # must pay strictly more than second, or the tournament would be over as it starts.
        # Only a pool of a few cents can fail this; it then pays fewer places.
        if places == 1 or prizes[0] > prizes[1]:
            return PayoutStructure(prizes=tuple(prizes))
        places -= 1
    return PayoutStructure(prizes=())


def _prizes(pool: int, places: int, buy_in: int) -> list[int]:
    curve = _curve(pool, places, buy_in)
    rounded = [nice_amount(round(v)) for v in curve[1:]]
    for i in range(1, len(rounded)):
        rounded[i] = min(rounded[i], rounded[i - 1])
    first = pool - sum(rounded)
    prizes = [first, *rounded]
    if min(prizes) <= 0 or (rounded and first < rounded[0]):
        prizes = split_by_weights(pool, curve)
    return prizes


def _cap(max_places: int | None) -> int:
    if max_places is None:
        return 1 << 62
    if max_places < 1:
        raise PayoutError(f"max_places must be >= 1, got {max_places}")
    return max_places


def structure_from_table(
    pool: int, entries: int, table: Sequence[int], max_places: int | None = None
) -> PayoutStructure:
    """Pay ``table`` (basis points per place) of ``pool``; with fewer entries, scale the top places.

    Largest remainder keeps the sum exact; the place order breaks ties, so a higher place never
    gets less than a lower one with an equal share. ``max_places`` caps the places as in
    ``generate_structure``.

    Every paid place gets at least 1 cent: in a tiny pool a small share can round to 0 (10 cents
    over 90/5/5 % gives 9/1/0), and a paid place worth nothing is no paid place. Such places are
    raised to 1 cent, taken one cent at a time from the largest prize, so the sum stays exact and
    no place is dropped (there are never more places than cents: ``places <= pool``).
    """
    if not table:
        raise PayoutError("a payout table needs at least one place")
    places = min(len(table), entries, pool, _cap(max_places))
    if places <= 0:
        return PayoutStructure(prizes=())
    prizes = split_by_weights(pool, list(table[:places]))
    for place, prize in enumerate(prizes):
        if prize == 0:
            # ``places <= pool`` guarantees some prize of 2 cents or more while one is 0
            richest = max(range(places), key=lambda i: (prizes[i], i))  # the lowest of the richest
            prizes[richest] -= 1
            prizes[place] = 1
    return PayoutStructure(prizes=tuple(prizes))


def satellite_structure(pool: int, seat_value: int, target: str) -> PayoutStructure:
    """One seat (a ticket worth ``seat_value``) per full ``seat_value`` in the pool (REG-6).

    The rest of the pool is cash for the place after the last seat. A pool under one seat pays
    its whole amount as cash to first place.
    """
    if seat_value <= 0:
        raise PayoutError(f"a seat must be worth > 0 cents, got {seat_value}")
    if pool <= 0:
        return PayoutStructure(prizes=())
    seats, rest = divmod(pool, seat_value)
    prizes = [seat_value] * seats + ([rest] if rest else [])
    return PayoutStructure(prizes=tuple(prizes), seats=seats, target=target)


def structure_for(
    config: TournamentConfig, pool: int, entries: int, players: int | None = None
) -> PayoutStructure:
    """The structure ``config`` asks for, for this pool and number of entries.

    ``players`` (distinct players who will finish) caps the places paid when re-entries make
    ``entries`` larger, so that every paid place is reached; a satellite ignores it.
    """
    if config.satellite is not None:
        return satellite_structure(pool, config.satellite.seat_value, config.satellite.target)
    if config.payouts.mode is PayoutMode.TABLE:
        return structure_from_table(pool, entries, config.payouts.table, players)
    return generate_structure(pool, entries, config.buy_in, config.payouts.percent_paid, players)


def effective_guarantee(config: TournamentConfig) -> int:
    """The pool the house promises: the guarantee, and for a satellite at least its seats' value."""
    if config.satellite is not None:
        return max(config.guarantee, config.satellite.seats * config.satellite.seat_value)
    return config.guarantee


def overlay_amount(pool: int, guarantee: int) -> int:
    """How much the house adds so the pool reaches the guarantee (0 when it already does)."""
    return max(0, guarantee - pool)


def overlay_transfer(tournament_id: str, pool: int, guarantee: int) -> Transfer | None:
    """The house's payment of the shortfall into the pool (Reason.OVERLAY), or None."""
    amount = overlay_amount(pool, guarantee)
    if amount == 0:
        return None
    return Transfer(
        source=HOUSE,
        target=pool_account(tournament_id),
        amount=amount,
        idempotency_key=f"{tournament_id}:overlay",
        reason=Reason.OVERLAY,
    )


# --- paying finishes --------------------------------------------------------------------------


def prize_key(tournament_id: str, player_id: str, place: int) -> str:
    """The idempotency key of a prize: one per player and place, so a retry never pays twice."""
    return f"{tournament_id}:prize:{player_id}:{place}"


def prizes_for_finishes(
    structure: PayoutStructure,
    finishes: Sequence[FinishLike],
    tournament_id: str,
    ticket_holders: Collection[str] = (),
) -> list[Transfer]:
    """Pay each finish its prize out of the pool, splitting tied places equally (ELIM-2).

    A finish of ``k`` tied players at ``place`` shares the prizes of places ``place ..
    place + k - 1``; each gets the total // k and the first ``total % k`` in the finish's order get
    one cent more. Satellite seats (REG-6) are paid as tickets to the target event; a player in
    ``ticket_holders`` (already holding a seat there) gets that seat's value as cash instead, and a
    tie that straddles the last seat is paid in cash, since a ticket cannot be split.
    Places outside the money pay nothing. Raises ``PayoutError`` when finishes overlap.
    """
    taken: set[int] = set()
    seen: set[str] = set()
    holders = set(ticket_holders)
    transfers: list[Transfer] = []
    pool = pool_account(tournament_id)
    for finish in finishes:
        places = range(finish.place, finish.place + len(finish.players))
        if finish.place < 1 or not finish.players:
            raise PayoutError(f"a finish needs a place >= 1 and players, got {finish!r}")
        if taken.intersection(places):
            raise PayoutError(f"places {list(places)} are awarded twice")
        if seen.intersection(finish.players) or len(set(finish.players)) != len(finish.players):
            raise PayoutError(f"a player finishes twice: {finish.players}")
        taken.update(places)
        seen.update(finish.players)
        total = sum(structure.prize(p) for p in places)
        if total == 0:
            continue
        all_seats = all(structure.is_seat(p) for p in places)
        for player, amount in zip(finish.players, split_equally(total, len(finish.players)), strict=True):
            if amount == 0:
                continue
            as_ticket = all_seats and player not in holders
            if as_ticket:
                holders.add(player)
            transfers.append(
                Transfer(
                    source=pool,
                    target=(
                        ticket_account(structure.target, player) if as_ticket else player_account(player)
                    ),
                    amount=amount,
                    idempotency_key=prize_key(tournament_id, player, finish.place),
                    reason=Reason.TICKET if as_ticket else Reason.PRIZE,
                )
            )
    return transfers


def satellite_is_over(structure: PayoutStructure, players_left: int) -> bool:
    """A satellite ends when the players left equal the seats awarded (REG-6, END-1)."""
    return structure.seats > 0 and players_left <= structure.seats
