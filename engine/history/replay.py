"""Replaying imported PHH hands through our engine.

``plan_replay`` turns a ``PhhHand`` into our ``HandSetup``, the dealt cards and the player actions;
``replay`` builds the hand with a deck that deals exactly those cards (``deck_for``) and plays the
actions one by one. The first action our engine refuses stops the replay and is reported with the
hand, the action and the engine's reason; otherwise the result carries our finishing stacks in
PHH player order, to compare with the file's ``finishing_stacks``.

Dealer actions are checked, not played: the deck is fixed before the first card, so a ``d db``
must name the cards our engine deals at that point. Unknown hole cards (``d dh p2 ????``, a hand
that folded unseen) are filled with unused cards by ``deck_for``; cards a player shows later
fill in their unknown hand. ``sm`` actions are not replayed either: our
engine decides who shows (BET-4) and the pots do not depend on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.betting import AnteKind, Game, HandSetup, Limit, SeatSetup
from engine.cards import Card, cards_str
from engine.events import HandEvent
from engine.hand import Hand, deck_for
from engine.history.phh import PhhAction, PhhActionKind, PhhError, PhhHand, PhhUnsupportedError, parse_action

__all__ = ["RefusedAction", "ReplayPlan", "ReplayResult", "plan_replay", "replay"]

# PHH variant -> (game, limit); "_limit" may turn NT into pot-limit hold'em (see engine.history.phh)
_VARIANTS = {
    "NT": (Game.HOLDEM, Limit.NO_LIMIT),
    "FT": (Game.HOLDEM, Limit.FIXED_LIMIT),
    "PO": (Game.OMAHA, Limit.POT_LIMIT),
}
_LIMITS = {"nl": Limit.NO_LIMIT, "pl": Limit.POT_LIMIT, "fl": Limit.FIXED_LIMIT}


@dataclass(frozen=True, slots=True)
class ReplayPlan:
    """What a PHH hand means for our engine. ``seats[i]`` is PHH player ``i + 1``'s seat."""

    setup: HandSetup
    seats: tuple[int, ...]
    hole_cards: dict[int, tuple[Card, ...]]
    board: tuple[Card, ...]
    actions: tuple[PhhAction, ...]


@dataclass(frozen=True, slots=True)
class RefusedAction:
    """An action our engine would not take: which one (0-based index in ``actions``) and why."""

    index: int
    action: str
    reason: str


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """The outcome of one replay. ``finishing_stacks`` are ours, in PHH player order (``None``
    when the hand could not be set up or was refused); ``expected`` is the file's."""

    label: str
    finishing_stacks: tuple[int, ...] | None
    expected: tuple[int, ...] | None
    refused: RefusedAction | None = None
    error: str | None = None  # the hand could not be set up at all
    setup: HandSetup | None = None
    events: tuple[HandEvent, ...] = ()  # our engine's log, as far as the replay went

    @property
    def agrees(self) -> bool:
        """Replayed without refusal and, when the file has them, to the same finishing stacks."""
        if self.refused is not None or self.error is not None or self.finishing_stacks is None:
            return False
        return self.expected is None or self.expected == self.finishing_stacks


def _effective(values: Sequence[int]) -> list[int]:
    # heads-up, the spec's forced-bet arrays are reversed: p1 (the big blind) posts the second one
    return list(values[::-1]) if len(values) == 2 else list(values)


def plan_replay(phh: PhhHand) -> ReplayPlan:
    """Our setup, dealt cards and player actions for ``phh``; raises ``PhhError`` (or
    ``PhhUnsupportedError``) when it cannot be represented."""
    label = phh.label()
    if phh.variant not in _VARIANTS:
        raise PhhUnsupportedError(f"{label}: variant {phh.variant!r} is not played here (NT, FT, PO are)")
    game, limit = _VARIANTS[phh.variant]
    limit_field = phh.user_fields.get("_limit")
    if limit_field is not None:
        if limit_field not in _LIMITS:
            raise PhhError(f"{label}: _limit must be one of {sorted(_LIMITS)}, got {limit_field!r}")
        limit = _LIMITS[limit_field]
    count = phh.player_count
    if count < 2:
        raise PhhError(f"{label}: a hand needs two players, got {count}")
    seats = phh.seats if phh.seats is not None else tuple(range(1, count + 1))
    table_size = phh.seat_count if phh.seat_count is not None else max(max(seats), count)
    if len(set(seats)) != count:
        raise PhhError(f"{label}: seats {list(seats)} are not distinct")

    blinds = _effective(phh.blinds_or_straddles or (0,) * count)
    posters = [index for index, amount in enumerate(blinds) if amount > 0]
    if not posters:
        raise PhhUnsupportedError(
            f"{label}: no big blind in blinds_or_straddles {list(phh.blinds_or_straddles)}"
        )
    if len(posters) > 2:
        raise PhhUnsupportedError(f"{label}: straddles are not played here ({list(phh.blinds_or_straddles)})")
    big_index = max(posters, key=lambda index: (blinds[index], index))
    small_index = next((index for index in posters if index != big_index), None)
    big_blind = blinds[big_index]
    small_blind = 0 if small_index is None else blinds[small_index]
    bet = phh.min_bet if phh.variant != "FT" else phh.small_bet
    if bet is not None and bet != big_blind:
        raise PhhUnsupportedError(f"{label}: a minimum bet {bet} other than the big blind {big_blind}")

    antes = _effective(phh.antes)
    if not any(antes):
        ante_kind, ante = AnteKind.NONE, 0
    elif all(antes):
        ante_kind, ante = AnteKind.EACH, max(antes)
    elif sum(1 for amount in antes if amount) == 1 and antes[big_index]:
        ante_kind, ante = AnteKind.BIG_BLIND, antes[big_index]
    else:
        raise PhhUnsupportedError(
            f"{label}: antes {list(phh.antes)} are neither per player nor a big-blind ante"
        )
    if ante_kind is AnteKind.EACH and len(set(antes)) > 1:
        # per-player antes that differ must be short stacks posting all they have
        for index, amount in enumerate(antes):
            if amount != ante and amount != phh.starting_stacks[index]:
                raise PhhUnsupportedError(f"{label}: antes {list(phh.antes)} differ between players")

    button_field = phh.user_fields.get("_button")
    button = button_field if isinstance(button_field, int) else seats[-1]
    players = phh.players if phh.players is not None else tuple(f"p{index + 1}" for index in range(count))
    if len(set(players)) != count:
        players = tuple(f"{name}#{index + 1}" for index, name in enumerate(players))
    for index, stack in enumerate(phh.starting_stacks):
        if stack <= 0:
            raise PhhError(f"{label}: starting stack of p{index + 1} must be positive, got {stack}")
    ordered = sorted(range(count), key=lambda index: seats[index])
    setup = HandSetup(
        hand_id=str(phh.hand) if phh.hand is not None else label,
        table_size=table_size,
        seats=tuple(SeatSetup(seats[i], players[i], phh.starting_stacks[i]) for i in ordered),
        button=button,
        small_blind_seat=None if small_index is None else seats[small_index],
        big_blind_seat=seats[big_index],
        small_blind=small_blind,
        big_blind=big_blind,
        ante=ante,
        ante_kind=ante_kind,
        limit=limit,
        game=game,
    )
    setup.validate()

    actions = []
    unknown: set[int] = set()
    hole: dict[int, tuple[Card, ...]] = {}
    board: list[Card] = []
    for text in phh.actions:
        action = parse_action(text)
        if action.player is not None and not 1 <= action.player <= count:
            raise PhhError(f"{label}: action {text!r} names a player outside p1..p{count}")
        if action.kind is PhhActionKind.DEAL_HOLE:
            assert action.player is not None
            seat = seats[action.player - 1]
            if action.cards is None:
                unknown.add(seat)  # a folded hand nobody saw; cards shown later may fill it in
            else:
                hole[seat] = hole.get(seat, ()) + action.cards
        elif action.kind is PhhActionKind.DEAL_BOARD:
            if action.cards is None:
                raise PhhUnsupportedError(f"{label}: unknown board cards in {text!r} cannot be replayed")
            board.extend(action.cards)
        elif action.kind is PhhActionKind.SHOW_MUCK and action.cards is not None:
            assert action.player is not None
            seat = seats[action.player - 1]
            if seat in unknown:
                hole[seat] = action.cards
                unknown.discard(seat)
        actions.append(action)
    return ReplayPlan(setup, tuple(seats), hole, tuple(board), tuple(actions))


def replay(phh: PhhHand) -> ReplayResult:
    """Play ``phh`` through our engine (see the module docstring); never raises for a bad hand."""
    label = phh.label()
    try:
        plan = plan_replay(phh)
        hand = Hand(plan.setup, deck=deck_for(plan.setup, plan.hole_cards, plan.board), salt=b"\0" * 16)
    except ValueError as exc:
        return ReplayResult(label, None, phh.finishing_stacks, error=str(exc))
    board_seen = 0
    for index, action in enumerate(plan.actions):
        if action.kind is PhhActionKind.DEAL_BOARD:
            assert action.cards is not None
            dealt = hand.board[board_seen : board_seen + len(action.cards)]
            if dealt != action.cards:
                reason = (
                    f"the engine has dealt {cards_str(dealt) or 'nothing'} at this point,"
                    f" not {cards_str(action.cards)}"
                )
                return ReplayResult(
                    label, None, phh.finishing_stacks, RefusedAction(index, action.text, reason)
                )
            board_seen += len(action.cards)
            continue
        if action.kind in (PhhActionKind.DEAL_HOLE, PhhActionKind.SHOW_MUCK):
            continue
        assert action.player is not None
        seat = plan.seats[action.player - 1]
        try:
            if action.kind is PhhActionKind.FOLD:
                hand.fold(seat=seat)
            elif action.kind is PhhActionKind.CHECK_CALL:
                hand.check_or_call(seat=seat)
            else:
                assert action.amount is not None
                hand.bet_or_raise_to(action.amount, seat=seat)
        except ValueError as exc:
            reason = f"{type(exc).__name__}: {exc}"
            refused = RefusedAction(index, action.text, reason)
            return ReplayResult(
                label, None, phh.finishing_stacks, refused, None, plan.setup, tuple(hand.events)
            )
    if not hand.is_over:
        reason = f"the history ends while seat {hand.actor} is still to act"
        refused = RefusedAction(len(plan.actions), "<end of actions>", reason)
        return ReplayResult(label, None, phh.finishing_stacks, refused, None, plan.setup, tuple(hand.events))
    stacks = hand.finishing_stacks()
    ours = tuple(stacks[seat] for seat in plan.seats)
    return ReplayResult(label, ours, phh.finishing_stacks, None, None, plan.setup, tuple(hand.events))
