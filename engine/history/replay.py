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

The replay reads what pokerkit reads. Where a file says something live play never does, the
replay reads it as pokerkit does and says so in ``ReplayResult.notes``; live play is unchanged:

- Amounts are whole units of the hand's ``PhhHand.scale`` (dollars and cents: scale 100; see
  engine.history.phh); results are in those units.
- An unknown starting stack (``inf``, as the iPoker histories have) is played as a stack deeper
  than anything the hand asks, so that player is never all-in; its finishing stack is unknown.
- Heads-up, a lone ante is the big blind's whether written ``[0, A]`` (the spec, pokerkit since
  0.2) or ``[A, 0]`` (before).
- An action missing from the file (the file names another player than the one to act, or deals
  a board or shows hands while someone is still to act) is filled in as pokerkit repairs a
  history: that player checks when it can and otherwise folds.
- A fold where a check was possible (live play refuses it: ``NoBetToFold``) is played as the hand
  folded at once (``Hand.kill``): its chips stay in the pot as a fold's do, so the stacks are the
  file's.
- A file whose actions stop before the hand ends is accepted without finishing stacks.

Rule differences. Our rules differ from pokerkit's in three documented cases (engine.hand): a
short all-in does not reopen the betting to a player who already acted (BET-2), the others call
the full big blind after a short big blind (BET-2), and an all-in player's per-player ante is
contested like its other chips where pokerkit, with ``ante_trimming_status`` false, puts every
ante in the main pot. The replay does not switch to pokerkit's rules for such a hand: it plays
the hand under ours, and when our engine refuses the file's raise for the reopening rule
(``BettingNotReopened``), or ends on other stacks than the file's in a hand where a short big
blind was called or an all-in player had posted a per-player ante with trimming off, the result
is accepted as a *departure* (``ReplayResult.departure`` names the rule) instead of a failure:
the file's actions were legal under its site's rules, ours are the ones we play, and both
outcomes are printed. Why not a pokerkit mode: card rooms play these cases as we do (TDA Rule
43; the full blind to call, see engine.hand), so a real history rarely departs (none of the
10,000 Pluribus, 26 WSOP and 91 HandHQ hands replayed when this was written did), and a second
set of betting rules in the replay would be an engine of its own to keep right.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.betting import AnteKind, Game, HandSetup, Limit, SeatSetup, Street
from engine.cards import Card, cards_str
from engine.events import ActionTaken, AntePosted, BlindKind, BlindPosted, HandEvent
from engine.hand import BettingNotReopened, Hand, NoBetToFold, deck_for
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
    notes: tuple[str, ...] = ()  # how the file was read where it differs from a live hand


@dataclass(frozen=True, slots=True)
class RefusedAction:
    """An action our engine would not take: which one (0-based index in ``actions``) and why."""

    index: int
    action: str
    reason: str


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """The outcome of one replay, amounts in the hand's units (``PhhHand.scale``).

    ``finishing_stacks`` are ours, in PHH player order: ``None`` when the hand could not be set
    up, was refused or the history ends before the hand does (``complete`` is then false); an
    entry is ``None`` for a player whose starting stack the file does not know. ``expected`` is
    the file's. ``notes`` name every place where the replay read the file, or played it, other
    than a live hand would be played (see the module docstring)."""

    label: str
    finishing_stacks: tuple[int | None, ...] | None
    expected: tuple[int, ...] | None
    refused: RefusedAction | None = None
    error: str | None = None  # the hand could not be set up at all
    setup: HandSetup | None = None
    events: tuple[HandEvent, ...] = ()  # our engine's log, as far as the replay went
    notes: tuple[str, ...] = ()
    complete: bool = True  # False: the file's actions stop while a player is still to act
    scale: int = 1
    # One of the documented cases where our rules play the file's hand differently from the
    # rules its site (and pokerkit) played: which rule, and how (see the module docstring).
    departure: str | None = None

    @property
    def accepted(self) -> bool:
        """Every action of the file was played (a history that stops early included), or our
        engine stopped or ended elsewhere only by a documented rule difference (``departure``)."""
        return self.error is None and (self.refused is None or self.departure is not None)

    @property
    def agrees(self) -> bool:
        """Played under our rules without a departure and, when the file has them, at the
        file's finishing stacks."""
        if self.refused is not None or self.error is not None or self.departure is not None:
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
    notes: list[str] = []

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
    if count == 2 and sum(1 for amount in antes if amount) == 1 and not antes[big_index]:
        # Heads-up the spec reverses the antes as it does the blinds ([0, A]: p1, the big blind,
        # posts A), as pokerkit does since 0.2; histories written before (and by hand) put the
        # big blind's ante first ([A, 0]). A lone ante heads-up is the big blind's either way.
        antes = antes[::-1]
        notes.append(
            f"antes {list(phh.antes)} heads-up: read as the big blind's ante (p1's, as written"
            " before pokerkit 0.2 reversed heads-up antes like the blinds)"
        )
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

    actions = []
    unknown: set[int] = set()
    hole: dict[int, tuple[Card, ...]] = {}
    board: list[Card] = []
    for text in phh.actions:
        action = parse_action(text, phh.scale)
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

    stacks = _known_stacks(phh, tuple(actions), notes)
    if ante_kind is AnteKind.EACH and len(set(antes)) > 1:
        # per-player antes that differ must be short stacks posting all they have
        for index, amount in enumerate(antes):
            if amount != ante and amount != stacks[index]:
                raise PhhUnsupportedError(f"{label}: antes {list(phh.antes)} differ between players")

    button_field = phh.user_fields.get("_button")
    button = button_field if isinstance(button_field, int) else seats[-1]
    players = phh.players if phh.players is not None else tuple(f"p{index + 1}" for index in range(count))
    if len(set(players)) != count:
        players = tuple(f"{name}#{index + 1}" for index, name in enumerate(players))
    for index, stack in enumerate(stacks):
        if stack <= 0:
            raise PhhError(f"{label}: starting stack of p{index + 1} must be positive, got {stack}")
    ordered = sorted(range(count), key=lambda index: seats[index])
    setup = HandSetup(
        hand_id=str(phh.hand) if phh.hand is not None else label,
        table_size=table_size,
        seats=tuple(SeatSetup(seats[i], players[i], stacks[i]) for i in ordered),
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
    return ReplayPlan(setup, tuple(seats), hole, tuple(board), tuple(actions), tuple(notes))


def _known_stacks(phh: PhhHand, actions: Sequence[PhhAction], notes: list[str]) -> list[int]:
    """The starting stacks, an unknown one (``inf``) made deeper than anything the hand can ask
    of it: more than every forced bet and every bet size of the file together, so that player
    is never all-in and every action of the file means what it says."""
    unknown = [index for index, stack in enumerate(phh.starting_stacks) if stack is None]
    if not unknown:
        return [stack for stack in phh.starting_stacks if stack is not None]
    deep = (
        sum(phh.antes)
        + sum(phh.blinds_or_straddles)
        + sum(action.amount or 0 for action in actions)
        + sum(stack or 0 for stack in phh.starting_stacks)
        + 1
    )
    names = ", ".join(f"p{index + 1}" for index in unknown)
    notes.append(
        f"starting stacks of {names} unknown (inf): played as deep stacks, their finishing stacks unknown"
    )
    return [deep if stack is None else stack for stack in phh.starting_stacks]


def replay(phh: PhhHand) -> ReplayResult:
    """Play ``phh`` through our engine (see the module docstring); never raises for a bad hand."""
    label = phh.label()
    scale = phh.scale
    try:
        plan = plan_replay(phh)
        hand = Hand(plan.setup, deck=deck_for(plan.setup, plan.hole_cards, plan.board), salt=b"\0" * 16)
    except ValueError as exc:
        return ReplayResult(label, None, phh.finishing_stacks, error=str(exc), scale=scale)
    notes = list(plan.notes)

    def refused(index: int, text: str, reason: str, departure: str | None = None) -> ReplayResult:
        return ReplayResult(
            label,
            None,
            phh.finishing_stacks,
            RefusedAction(index, text, reason),
            None,
            plan.setup,
            tuple(hand.events),
            tuple(notes),
            scale=scale,
            departure=departure,
        )

    board_seen = 0
    player_of = {seat: index + 1 for index, seat in enumerate(plan.seats)}
    for index, action in enumerate(plan.actions):
        if action.kind is PhhActionKind.DEAL_BOARD:
            assert action.cards is not None
            # a board dealt while someone is still to act: the file left out their actions
            while len(hand.board) < board_seen + len(action.cards) and hand.actor is not None:
                _fill_missing(hand, index, action, player_of, notes)
            dealt = hand.board[board_seen : board_seen + len(action.cards)]
            if dealt != action.cards:
                reason = (
                    f"the engine has dealt {cards_str(dealt) or 'nothing'} at this point,"
                    f" not {cards_str(action.cards)}"
                )
                return refused(index, action.text, reason)
            board_seen += len(action.cards)
            continue
        if action.kind is PhhActionKind.SHOW_MUCK:
            while hand.actor is not None:  # a showdown while someone is still to act: as above
                _fill_missing(hand, index, action, player_of, notes)
            continue
        if action.kind is PhhActionKind.DEAL_HOLE:
            continue
        assert action.player is not None
        seat = plan.seats[action.player - 1]
        try:
            while hand.actor is not None and hand.actor != seat and not hand.has_folded(seat):
                _fill_missing(hand, index, action, player_of, notes)
            if action.kind is PhhActionKind.FOLD:
                _fold(hand, seat, index, action, notes)
            elif action.kind is PhhActionKind.CHECK_CALL:
                hand.check_or_call(seat=seat)
            else:
                assert action.amount is not None
                hand.bet_or_raise_to(action.amount, seat=seat)
        except BettingNotReopened as exc:
            return refused(index, action.text, f"{type(exc).__name__}: {exc}", _REOPENING)
        except ValueError as exc:
            return refused(index, action.text, f"{type(exc).__name__}: {exc}")
    if not hand.is_over:
        # The file stops before the hand ends (a history cut short): every action it has was
        # played; there are no finishing stacks to give.
        notes.append(f"the history ends while seat {hand.actor} is still to act: no finishing stacks")
        return ReplayResult(
            label,
            None,
            phh.finishing_stacks,
            None,
            None,
            plan.setup,
            tuple(hand.events),
            tuple(notes),
            complete=False,
            scale=scale,
        )
    stacks = hand.finishing_stacks()
    known = phh.starting_stacks
    ours = tuple(None if known[i] is None else stacks[seat] for i, seat in enumerate(plan.seats))
    events = tuple(hand.events)
    departure = None
    if phh.finishing_stacks is not None and phh.finishing_stacks != ours:
        departure = _stacks_departure(phh, plan.setup, events)
    return ReplayResult(
        label,
        ours,
        phh.finishing_stacks,
        None,
        None,
        plan.setup,
        events,
        tuple(notes),
        scale=scale,
        departure=departure,
    )


_REOPENING = (
    "BET-2 reopening: under our rules an all-in for less than a full raise does not reopen the"
    " betting to a player who already acted; the file's site (as pokerkit) let that player raise"
)
_SHORT_BIG_BLIND = (
    "BET-2 short big blind: under our rules the others call the full big blind; the file's site"
    " (as pokerkit) had them call what the short big blind posted"
)
_DEAD_ANTES = (
    "antes: with ante_trimming_status false the file's site (as pokerkit) put every ante in the"
    " main pot; under our rules an all-in player's ante is contested like its other chips"
)


def _stacks_departure(phh: PhhHand, setup: HandSetup, events: Sequence[HandEvent]) -> str | None:
    """Which documented rule difference explains our other finishing stacks, if one does."""
    blinds = {event.blind: event.amount for event in events if isinstance(event, BlindPosted)}
    if BlindKind.BIG in blinds and max(blinds.values()) < setup.big_blind:
        called = any(
            isinstance(event, ActionTaken) and event.street is Street.PREFLOP and event.amount
            for event in events
        )
        if called:
            return _SHORT_BIG_BLIND
    all_in = any(
        isinstance(event, ActionTaken | AntePosted | BlindPosted) and event.all_in for event in events
    )
    if setup.ante_kind is AnteKind.EACH and not phh.ante_trimming_status and all_in:
        return _DEAD_ANTES
    return None


def _fill_missing(
    hand: Hand, index: int, action: PhhAction, player_of: Mapping[int, int], notes: list[str]
) -> None:
    """The actor has no action in the file before ``action``: as pokerkit repairs a history, the
    actor checks when that is possible and otherwise folds; noted."""
    actor = hand.actor
    assert actor is not None
    if hand.can_check(seat=actor):
        hand.check_or_call(seat=actor)
        played = "a check"
    else:
        hand.fold(seat=actor)
        played = "a fold"
    notes.append(
        f"p{player_of[actor]} has no action before action {index} {action.text!r}: played as {played},"
        " as pokerkit fills in a missing action"
    )


def _fold(hand: Hand, seat: int, index: int, action: PhhAction, notes: list[str]) -> None:
    """``pN f``. A fold where a check was possible, which live play refuses (``NoBetToFold``,
    engine.hand), is what another site's history may hold: the replay plays it as the hand
    folded at once (``Hand.kill``: its chips stay in the pot, as a fold's do) and notes it."""
    try:
        hand.fold(seat=seat)
    except NoBetToFold:
        hand.kill(seat)
        notes.append(
            f"action {index} {action.text!r}: a fold where a check was possible, which live play"
            " refuses; played as the hand folded at once"
        )
