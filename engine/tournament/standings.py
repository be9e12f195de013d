"""Who finishes where (ELIM-1, ELIM-2, END-1).

Invariants of ``Standings``:

- every entered player is either still playing or has exactly one ``Finish``;
- finishes fill the places from the bottom up: the players eliminated together take the worst
  places still free, so at the end places ``1 .. N`` are each covered exactly once;
- a ``Finish`` of tied players covers places ``place .. place + len(players) - 1``; its players
  are in seat order from the first seat after the button, the order ELIM-2 gives odd cents in.

Eliminations in one hand, or in one synchronized hand-for-hand round across tables (HFH-1), are
passed together as one batch of ``Bust`` records: the batch is ranked by the stacks the players
started that hand with, more chips finishing higher, equal stacks tying (ELIM-2).

Disqualification (PEN-1, TDA R71): a disqualified player's chips are removed from play (the
table's ``disqualify`` returns them, the tournament counts them as removed: chips in play = issued
- removed) and the player finishes like an elimination, alone, at the worst place still open
when the disqualification is recorded (``disqualify``). The source rule books (docs/rules.md) say
nothing about the place; PokerStars' rules allow "disqualification from the tournament (with
partial or full forfeiture of winnings)". So: prizes already paid are not taken back (nothing is
clawed back from the ledger); the prizes of the places they might still have reached are
forfeited by fixing their place at the moment of disqualification, and the place they get is
paid as any other (a player disqualified in the money keeps that place's prize; one disqualified
before the money wins nothing). Sites typically also forfeit unpaid winnings in cases of
collusion or chip dumping and redistribute them; that is an operator's ledger decision outside
the standings, not modelled here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby

from engine.triads import can


class StandingsError(ValueError):
    """An elimination or an ending that does not fit the standings (unknown player, busted twice)."""


@dataclass(frozen=True, slots=True)
class Bust:
    """A player eliminated in a hand, with the chips they started that hand with.

    ``seat_after_button`` is 1 for the first seat after the button at their table, 2 for the next,
    and so on; with ``table_id`` it orders tied players for the odd-cent rule.
    """

    player: str
    start_stack: int
    table_id: int = 0
    seat_after_button: int = 0


@dataclass(frozen=True, slots=True)
class Finish:
    """``players`` occupy places ``place .. place + shared_places - 1`` and share their prizes."""

    place: int
    players: tuple[str, ...]
    shared_places: int


def eliminated(stacks: Mapping[str, int]) -> tuple[str, ...]:
    """ELIM-1: the players with no chips left, sorted."""
    return tuple(sorted(player for player, stack in stacks.items() if stack <= 0))


def rank_busts(busts: Sequence[Bust], worst_place: int, *, all_share: bool = False) -> tuple[Finish, ...]:
    """ELIM-2: the places of players eliminated together, the best place first.

    ``worst_place`` is the number of players in the tournament before these eliminations, so the
    batch takes places ``worst_place - len(busts) + 1 .. worst_place``. With ``all_share`` (bubble
    ties share, TDA RP-8A) the whole batch is one tie whatever its stacks.
    """
    if not busts:
        return ()
    best_place = worst_place - len(busts) + 1
    if best_place < 1:
        raise StandingsError(f"{len(busts)} eliminations cannot fit in the {worst_place} places left")

    def tie_order(bust: Bust) -> tuple[int, int, str]:
        return (bust.seat_after_button, bust.table_id, bust.player)

    if all_share:
        groups = [sorted(busts, key=tie_order)]
    else:
        by_stack = sorted(busts, key=lambda bust: -bust.start_stack)
        groups = [
            sorted(group, key=tie_order) for _, group in groupby(by_stack, key=lambda bust: bust.start_stack)
        ]
    finishes = []
    place = best_place
    for group in groups:
        finishes.append(Finish(place, tuple(bust.player for bust in group), len(group)))
        place += len(group)
    return tuple(finishes)


def tournament_over(players_left: int, prizes: Sequence[int] = ()) -> bool:
    """END-1: one player left, or every player left would receive the same prize.

    ``prizes[i]`` is the prize (cents, or seats) for place ``i + 1``, never increasing with the
    place; places past the end pay nothing. The equal-prize ending applies only when every
    player left is paid (a satellite with as many players left as seats), never to a field
    where nobody left is paid.
    """
    if players_left <= 1:
        return True
    if players_left > len(prizes):
        return False
    # prizes never increase with the place (``PayoutStructure``'s invariant), so the places left
    # all pay the same exactly when the first and the last of them do: O(1) at any field size
    return prizes[0] > 0 and prizes[players_left - 1] == prizes[0]


STANDINGS_SNAPSHOT_VERSION = 1


@dataclass(frozen=True, slots=True)
class StandingsSnapshot:
    """``Standings`` as plain, versioned data."""

    version: int
    playing: tuple[str, ...]
    entered: int
    finishes: tuple[Finish, ...]
    disqualified: tuple[str, ...]


class Standings:
    """The finish order of one tournament, built up elimination by elimination."""

    def __init__(self, players: Iterable[str]) -> None:
        self._playing: set[str] = set(players)
        self._entered = len(self._playing)
        self._finishes: list[Finish] = []
        self._disqualified: set[str] = set()

    @property
    def players_left(self) -> int:
        return len(self._playing)

    @property
    def playing(self) -> frozenset[str]:
        return frozenset(self._playing)

    @property
    def finishes(self) -> tuple[Finish, ...]:
        """Every finish so far, best place first."""
        return tuple(sorted(self._finishes, key=lambda finish: finish.place))

    def add_player(self, player: str) -> None:
        """A late entrant (REG-4) or a re-entry under a new entry id joins the players left."""
        if player in self._playing:
            raise StandingsError(f"player {player!r} is already playing")
        self._playing.add(player)
        self._entered += 1

    def verify_eliminate(self, busts: Sequence[Bust]) -> None:
        names = [bust.player for bust in busts]
        if len(set(names)) != len(names):
            raise StandingsError(f"a player is eliminated twice in one batch: {sorted(names)}")
        unknown = sorted(set(names) - self._playing)
        if unknown:
            raise StandingsError(f"cannot eliminate players who are not playing: {unknown}")
        if busts and len(busts) >= len(self._playing):
            raise StandingsError(
                f"eliminating {len(busts)} of {len(self._playing)} players would leave nobody to win"
            )

    can_eliminate = can(verify_eliminate, StandingsError)

    def eliminate(self, busts: Sequence[Bust], *, all_share: bool = False) -> tuple[Finish, ...]:
        """ELIM-1/ELIM-2: record the players eliminated together; returns their finishes."""
        self.verify_eliminate(busts)
        finishes = rank_busts(busts, len(self._playing), all_share=all_share)
        for bust in busts:
            self._playing.discard(bust.player)
        self._finishes.extend(finishes)
        return finishes

    @property
    def disqualified(self) -> frozenset[str]:
        """The players disqualified so far (PEN-1)."""
        return frozenset(self._disqualified)

    def verify_disqualify(self, player: str) -> None:
        """Raise unless ``player`` is still playing and is not the last player left."""
        if player not in self._playing:
            raise StandingsError(f"cannot disqualify {player!r}: not playing")
        if len(self._playing) <= 1:
            raise StandingsError(f"cannot disqualify {player!r}, the last player left")

    can_disqualify = can(verify_disqualify, StandingsError)

    def disqualify(self, player: str) -> Finish:
        """PEN-1: ``player`` is disqualified and takes, alone, the worst place still open (see
        the module docstring); returns that finish."""
        self.verify_disqualify(player)
        finish = Finish(len(self._playing), (player,), 1)
        self._playing.discard(player)
        self._disqualified.add(player)
        self._finishes.append(finish)
        return finish

    def verify_finish(self, stacks: Mapping[str, int]) -> None:
        if set(stacks) != self._playing:
            raise StandingsError(
                f"final stacks must name exactly the players left: expected {sorted(self._playing)}, "
                f"got {sorted(stacks)}"
            )

    can_finish = can(verify_finish, StandingsError)

    def finish(
        self, stacks: Mapping[str, int], seat_after_button: Mapping[str, int] | None = None
    ) -> tuple[Finish, ...]:
        """END-1: place the players left by their chips (more chips higher, equal chips tie).

        With one player left that player is first. In a satellite that ends with several players
        left they all win the same prize, so their order only decides who is listed first.
        """
        self.verify_finish(stacks)
        order = seat_after_button or {}
        busts = [Bust(player, stack, 0, order.get(player, 0)) for player, stack in stacks.items()]
        finishes = rank_busts(busts, len(self._playing))
        self._playing.clear()
        self._finishes.extend(finishes)
        return finishes

    def is_playing(self, player: str) -> bool:
        return player in self._playing

    def snapshot(self) -> StandingsSnapshot:
        return StandingsSnapshot(
            STANDINGS_SNAPSHOT_VERSION,
            tuple(sorted(self._playing)),
            self._entered,
            tuple(self._finishes),
            tuple(sorted(self._disqualified)),
        )

    @classmethod
    def restore(cls, snapshot: StandingsSnapshot) -> Standings:
        if snapshot.version != STANDINGS_SNAPSHOT_VERSION:
            raise StandingsError(
                f"standings snapshot version {snapshot.version} is not {STANDINGS_SNAPSHOT_VERSION}"
            )
        standings = cls(snapshot.playing)
        standings._entered = snapshot.entered
        standings._finishes = list(snapshot.finishes)
        standings._disqualified = set(snapshot.disqualified)
        return standings

    @property
    def complete(self) -> bool:
        """Every entered player has a place."""
        return not self._playing and sum(f.shared_places for f in self._finishes) == self._entered
