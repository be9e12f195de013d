"""`feltd bench engine`: Evaluations/s and full hands/s, with treys and pokerkit as peers.

Every engine is timed on the SAME work: the same random seven-card hands for the evaluators,
and for the hand engines the same deals and the same action sequences (recorded once from
feltd under a seeded random legal policy, then replayed by each engine with the policy's cost
left out). Work is converted to each library's own card type before the clock starts. A peer
that is not installed is skipped with a note.
"""

from __future__ import annotations

import argparse

# Only argparse is imported for real: `feltd --help` imports every leaf module. The names below
# are for the type checker alone (mypy treats any TYPE_CHECKING constant as typing's).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from engine.betting import HandSetup
    from engine.events import HandEvent

HELP = "Evaluations/s and full hands/s, with treys and pokerkit as peers."

_EVAL_POOL = 50_000
_CHUNK = 500


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd bench engine`; heavy imports belong in ``run`` so `--help` stays fast."""
    parser.add_argument(
        "--seconds", type=float, default=2.0, help="wall time of each measurement (default: 2.0)"
    )
    parser.add_argument(
        "--hands",
        type=int,
        default=200,
        help="random 9-handed hands in the hand workload; each engine replays all of them, in whole"
        " passes, for at least --seconds (default: 200)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of every random choice (default: 1)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="the hand engines are timed in this many alternating rounds, so that a change in the"
        " machine's speed during the run touches both (default: 5)",
    )


# A measured rate: (per second of wall time, per second of this process's CPU time). The CPU
# figure stays meaningful when other processes share the cores; the wall figure is the headline.
Rate = tuple[float, float]


def _rate(work: Sequence[Any], run_chunk: Callable[[Sequence[Any]], object], seconds: float) -> Rate:
    """Items per second of ``run_chunk`` cycling through ``work`` in chunks until ``seconds`` pass
    (at least one chunk). The clock is read once per chunk so its cost stays out of the figure."""
    import time

    chunks = [work[start : start + _CHUNK] for start in range(0, len(work), _CHUNK)]
    done = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    while True:
        for chunk in chunks:
            run_chunk(chunk)
            done += len(chunk)
            elapsed = time.perf_counter() - started
            if elapsed >= seconds:
                return done / elapsed, done / max(time.process_time() - cpu_started, 1e-9)


def _line(name: str, rate: Rate | None, unit: str, note: str = "") -> str:
    if rate is None:
        return f"  {name:<10}{'skipped':>14} {note}"
    wall, cpu = rate
    return f"  {name:<10}{wall:>14,.0f} {unit:<14} ({cpu:,.0f}/s of CPU time)"


def _ratio(label: str, ours: Rate | None, theirs: Rate | None) -> str:
    if ours is None or theirs is None:
        return f"  {label:<28}{'n/a':>10}"
    return f"  {label:<28}{ours[0] / theirs[0]:>9.1f}x  (CPU time: {ours[1] / theirs[1]:.1f}x)"


def _bench_evaluators(seed: int, seconds: float) -> dict[str, Rate | None]:
    import random

    from engine.cards import card_str
    from engine.evaluator import evaluate

    rng = random.Random(seed)
    deck = list(range(52))
    hands = [rng.sample(deck, 7) for _ in range(_EVAL_POOL)]
    rates: dict[str, Rate | None] = {}

    def feltd_chunk(chunk: Sequence[list[int]]) -> None:
        for cards in chunk:
            evaluate(cards)

    rates["feltd"] = _rate(hands, feltd_chunk, seconds)
    print(_line("feltd", rates["feltd"], "evaluations/s"), flush=True)

    try:
        import treys
    except ImportError:
        rates["treys"] = None
        print(_line("treys", None, "", "(treys not installed)"), flush=True)
    else:
        treys_cards = [treys.Card.new(card_str(card)) for card in range(52)]
        treys_hands = [([treys_cards[c] for c in h[:2]], [treys_cards[c] for c in h[2:]]) for h in hands]
        treys_eval = treys.Evaluator().evaluate

        def treys_chunk(chunk: Sequence[tuple[list[int], list[int]]]) -> None:
            for hole, board in chunk:
                treys_eval(hole, board)

        rates["treys"] = _rate(treys_hands, treys_chunk, seconds)
        print(_line("treys", rates["treys"], "evaluations/s"), flush=True)

    try:
        import pokerkit
    except ImportError:
        rates["pokerkit"] = None
        print(_line("pokerkit", None, "", "(pokerkit not installed)"), flush=True)
    else:
        # from_game with pre-parsed Card objects is the path pokerkit's own showdown takes.
        pk_cards = [next(iter(pokerkit.Card.parse(card_str(card)))) for card in range(52)]
        pk_hands = [(tuple(pk_cards[c] for c in h[:2]), tuple(pk_cards[c] for c in h[2:])) for h in hands]
        from_game = pokerkit.StandardHighHand.from_game

        def pokerkit_chunk(chunk: Sequence[tuple[tuple[Any, ...], tuple[Any, ...]]]) -> None:
            for hole, board in chunk:
                from_game(hole, board)

        rates["pokerkit"] = _rate(pk_hands, pokerkit_chunk, seconds)
        print(_line("pokerkit", rates["pokerkit"], "evaluations/s"), flush=True)
    return rates


# Replay operation codes: feltd needs only the decisions (it deals from its deck itself);
# pokerkit is also told every card dealt, as its own API requires.
_CHECK_OR_CALL, _FOLD, _BET_OR_RAISE, _DEAL_HOLE, _BURN, _DEAL_BOARD = range(6)
_PLAYERS = 9
_SMALL_BLIND, _BIG_BLIND = 50, 100


class _RecordedHand:
    """One hand of the workload, as feltd played it (a plain slotted class: see the imports)."""

    __slots__ = ("decisions", "deck", "events", "finishing", "order", "salt", "setup")

    def __init__(
        self,
        setup: HandSetup,
        deck: tuple[int, ...],
        salt: bytes,
        decisions: tuple[tuple[int, int], ...],  # (code, raise-to amount or 0), in order
        order: tuple[int, ...],  # seats in deal order: pokerkit's player indices
        finishing: tuple[int, ...],  # feltd's finishing stacks in deal order
        events: tuple[HandEvent, ...],
    ) -> None:
        self.setup = setup
        self.deck = deck
        self.salt = salt
        self.decisions = decisions
        self.order = order
        self.finishing = finishing
        self.events = events


def _record_hands(count: int, seed: int) -> list[_RecordedHand]:
    """``count`` random 9-handed no-limit hold'em hands played by feltd under the seeded random
    legal policy (``engine.random_play``), recorded with their decks and decisions."""
    import random

    from engine.betting import HandSetup, SeatSetup
    from engine.events import ActionKind, ActionTaken
    from engine.fairness import deal_order
    from engine.hand import Hand
    from engine.random_play import choose_action

    rng = random.Random(seed)
    seats = tuple(range(1, _PLAYERS + 1))
    recorded = []
    for number in range(count):
        button = rng.choice(seats)
        order = deal_order(seats, button)
        setup = HandSetup(
            hand_id=f"bench-{number}",
            table_size=_PLAYERS,
            seats=tuple(SeatSetup(seat, f"p{seat}", rng.randint(5, 150) * _BIG_BLIND) for seat in seats),
            button=button,
            small_blind_seat=order[0],
            big_blind_seat=order[1],
            small_blind=_SMALL_BLIND,
            big_blind=_BIG_BLIND,
        )
        hand = Hand(setup, rng=rng)
        while not hand.is_over:
            choose_action(hand, rng).apply(hand)
        decisions = []
        for event in hand.events:
            if isinstance(event, ActionTaken):
                if event.kind is ActionKind.FOLD:
                    decisions.append((_FOLD, 0))
                elif event.kind in (ActionKind.CHECK, ActionKind.CALL):
                    decisions.append((_CHECK_OR_CALL, 0))
                else:
                    decisions.append((_BET_OR_RAISE, event.to_amount))
        finishing = hand.finishing_stacks()
        recorded.append(
            _RecordedHand(
                setup=setup,
                # The cards the hand can use, in deal order (hole cards, burns, board): all that
                # pokerkit is given too, so both engines check the same cards.
                deck=hand.deck[: _PLAYERS * 2 + 8],
                salt=hand.salt,
                decisions=tuple(decisions),
                order=order,
                finishing=tuple(finishing[seat] for seat in order),
                events=tuple(hand.events),
            )
        )
    return recorded


def _replay_feltd(
    hands: Sequence[_RecordedHand], _check_or_call: int = _CHECK_OR_CALL, _fold: int = _FOLD
) -> None:
    from engine.hand import Hand

    # Unbound methods and local codes: the loop's own cost stays out of the engine's figure.
    check_or_call = Hand.check_or_call
    fold = Hand.fold
    bet_or_raise_to = Hand.bet_or_raise_to
    for recorded in hands:
        hand = Hand(recorded.setup, deck=recorded.deck, salt=recorded.salt)
        for code, amount in recorded.decisions:
            if code == _check_or_call:
                check_or_call(hand)
            elif code == _fold:
                fold(hand)
            else:
                bet_or_raise_to(hand, amount)


class _PokerkitHand:
    """One hand of the workload as pokerkit operations, with feltd's result to compare."""

    __slots__ = ("expected", "script", "stacks")

    def __init__(
        self,
        stacks: tuple[int, ...],
        script: tuple[tuple[int, Any, int], ...],  # (code, amount or cards, player index)
        expected: tuple[int, ...],
    ) -> None:
        self.stacks = stacks
        self.script = script
        self.expected = expected


def _pokerkit_script(recorded: _RecordedHand, pk_cards: Sequence[Any]) -> _PokerkitHand:
    """The pokerkit operations of a recorded hand, in the order feltd logged them, with every
    card already a pokerkit ``Card`` (parsing stays out of the timed replay)."""
    from engine.events import ActionKind, ActionTaken, HoleCardsDealt, StreetDealt
    from engine.fairness import layout_for

    burns = iter(layout_for(recorded.setup).burn_positions)
    index = {seat: i for i, seat in enumerate(recorded.order)}
    script: list[tuple[int, Any, int]] = []
    for event in recorded.events:
        if isinstance(event, HoleCardsDealt):
            script.append((_DEAL_HOLE, tuple(pk_cards[c] for c in event.cards), index[event.seat]))
        elif isinstance(event, StreetDealt):
            script.append((_BURN, (pk_cards[recorded.deck[next(burns)]],), 0))
            script.append((_DEAL_BOARD, tuple(pk_cards[c] for c in event.cards), 0))
        elif isinstance(event, ActionTaken):
            if event.kind is ActionKind.FOLD:
                script.append((_FOLD, 0, 0))
            elif event.kind in (ActionKind.CHECK, ActionKind.CALL):
                script.append((_CHECK_OR_CALL, 0, 0))
            else:
                script.append((_BET_OR_RAISE, event.to_amount, 0))
    starting = recorded.setup.seats
    by_seat = {seat.seat: seat.stack for seat in starting}
    return _PokerkitHand(tuple(by_seat[seat] for seat in recorded.order), tuple(script), recorded.finishing)


def _pokerkit_replayer(pokerkit: Any) -> Callable[[_PokerkitHand], Any]:
    """A function that plays one scripted hand in pokerkit and returns its final state."""
    automations = (
        pokerkit.Automation.ANTE_POSTING,
        pokerkit.Automation.BET_COLLECTION,
        pokerkit.Automation.BLIND_OR_STRADDLE_POSTING,
        pokerkit.Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
        pokerkit.Automation.HAND_KILLING,
        pokerkit.Automation.CHIPS_PUSHING,
        pokerkit.Automation.CHIPS_PULLING,
    )
    create_state = pokerkit.NoLimitTexasHoldem.create_state
    blinds = (_SMALL_BLIND, _BIG_BLIND)

    def replay(hand: _PokerkitHand) -> Any:
        state = create_state(automations, False, 0, blinds, _BIG_BLIND, hand.stacks, _PLAYERS)
        for code, argument, player in hand.script:
            if code == _CHECK_OR_CALL:
                state.check_or_call()
            elif code == _FOLD:
                state.fold()
            elif code == _BET_OR_RAISE:
                state.complete_bet_or_raise_to(argument)
            elif code == _DEAL_HOLE:
                state.deal_hole(argument, player)
            elif code == _BURN:
                state.burn_card(argument)
            else:
                state.deal_board(argument)
        return state

    return replay


def _timed_passes(run_pass: Callable[[], object], seconds: float) -> tuple[int, float, float]:
    """Whole passes of ``run_pass`` (at least one) until ``seconds`` of wall time: (passes, wall
    seconds, CPU seconds of this process)."""
    import time

    passes = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    while True:
        run_pass()
        passes += 1
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return passes, elapsed, max(time.process_time() - cpu_started, 1e-9)


def _bench_hands(
    count: int, seed: int, seconds: float, rounds: int
) -> tuple[dict[str, Rate | None], list[float]]:
    import time

    from engine.cards import card_str

    started = time.perf_counter()
    hands = _record_hands(count, seed)
    decisions = sum(len(hand.decisions) for hand in hands)
    print(
        f"  workload: {count:,} hands, {decisions:,} decisions, recorded from feltd's random policy"
        f" in {time.perf_counter() - started:.1f} s (not timed below)",
        flush=True,
    )

    def feltd_pass() -> None:
        _replay_feltd(hands)

    rates: dict[str, Rate | None] = {}
    try:
        import pokerkit
    except ImportError:
        passes, wall, cpu = _timed_passes(feltd_pass, seconds)
        rates["feltd"] = (passes * count / wall, passes * count / cpu)
        print(_line("feltd", rates["feltd"], "hands/s"), flush=True)
        rates["pokerkit"] = None
        print(_line("pokerkit", None, "", "(pokerkit not installed)"), flush=True)
        return rates, []
    pk_cards = [next(iter(pokerkit.Card.parse(card_str(card)))) for card in range(52)]
    scripts = [_pokerkit_script(hand, pk_cards) for hand in hands]
    replay = _pokerkit_replayer(pokerkit)
    agreements: list[int] = []

    def pokerkit_pass() -> None:
        # Comparing the final stacks costs a microsecond against milliseconds of replay; it shows
        # that pokerkit played the very same hands.
        agreements.append(sum(tuple(replay(script).stacks) == script.expected for script in scripts))

    # Alternating rounds: this machine's speed drifts by tens of percent over seconds (a shared
    # host), and timing one engine after the other would put the drift into the ratio.
    totals = {"feltd": [0.0, 0.0, 0.0], "pokerkit": [0.0, 0.0, 0.0]}  # hands, wall s, CPU s
    ratios: list[float] = []
    for _ in range(rounds):
        round_rates = {}
        for name, run_pass in (("pokerkit", pokerkit_pass), ("feltd", feltd_pass)):
            passes, wall, cpu = _timed_passes(run_pass, seconds / rounds)
            total = totals[name]
            total[0] += passes * count
            total[1] += wall
            total[2] += cpu
            round_rates[name] = passes / wall
        ratios.append(round_rates["feltd"] / round_rates["pokerkit"])
    for name, (played, wall, cpu) in totals.items():
        rates[name] = (played / wall, played / cpu)
    print(_line("feltd", rates["feltd"], "hands/s"), flush=True)
    print(_line("pokerkit", rates["pokerkit"], "hands/s"), flush=True)
    agree = min(agreements)
    print(f"  pokerkit finished {agree:,} of {count:,} hands on feltd's stacks, every pass", flush=True)
    return rates, ratios


def run(args: argparse.Namespace) -> int:
    import platform

    if args.seconds <= 0 or args.hands <= 0 or args.rounds <= 0:
        print("feltd bench engine: --seconds, --hands and --rounds must be positive")
        return 2
    print(
        f"feltd bench engine: Python {platform.python_version()} ({platform.python_implementation()}),"
        f" seed {args.seed}, {args.seconds:g} s per measurement"
    )
    _print_load("load before")
    print(f"7-card evaluations/s (the same {_EVAL_POOL:,} random hands for each library)")
    evals = _bench_evaluators(args.seed, args.seconds)
    print(
        f"Full {_PLAYERS}-handed no-limit hold'em hands/s (the same cards and decisions for each engine,"
        f" blinds {_SMALL_BLIND}/{_BIG_BLIND})"
    )
    hands, ratios = _bench_hands(args.hands, args.seed, args.seconds, args.rounds)
    print("Ratios")
    print(_ratio("evaluations feltd/treys", evals["feltd"], evals["treys"]))
    print(_ratio("evaluations feltd/pokerkit", evals["feltd"], evals["pokerkit"]))
    print(_ratio("hands feltd/pokerkit", hands["feltd"], hands["pokerkit"]))
    if ratios:
        import statistics

        ordered = sorted(ratios)
        median = statistics.median(ordered)
        print(
            f"  hands feltd/pokerkit, round by round: median {median:.1f}x of {len(ratios)} alternating"
            f" rounds (lowest {ordered[0]:.1f}x, highest {ordered[-1]:.1f}x)"
        )
    _print_load("load after")
    return 0


def _print_load(label: str) -> None:
    """Wall-clock rates drop when other processes share the cores; the load average says so."""
    import os

    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return
    print(f"{label}: {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs")
