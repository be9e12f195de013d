"""`feltd bench engine`: Evaluations/s and full hands/s, with treys and pokerkit as peers.

Every engine is timed on the SAME work: the same random seven-card hands for the evaluators,
and for the hand engines the same deals and the same action sequences (recorded once from
feltd under a seeded random legal policy, then replayed by each engine with the policy's cost
left out). Work is converted to each library's own card type before the clock starts. A peer
that is not installed is skipped with a note.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

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
        default=2_000,
        help="number of distinct random 9-handed hands in the hand workload (default: 2000)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of every random choice (default: 1)")


def _rate(work: Sequence[Any], run_chunk: Callable[[Sequence[Any]], object], seconds: float) -> float:
    """Items per second of ``run_chunk`` cycling through ``work`` in chunks until ``seconds`` pass
    (at least one chunk). The clock is read once per chunk so its cost stays out of the figure."""
    import time

    chunks = [work[start : start + _CHUNK] for start in range(0, len(work), _CHUNK)]
    done = 0
    started = time.perf_counter()
    elapsed = 0.0
    while True:
        for chunk in chunks:
            run_chunk(chunk)
            done += len(chunk)
            elapsed = time.perf_counter() - started
            if elapsed >= seconds:
                return done / elapsed


def _line(name: str, rate: float | None, unit: str, note: str = "") -> str:
    figure = f"{rate:>14,.0f} {unit}" if rate is not None else f"{'skipped':>14} {note}"
    return f"  {name:<10}{figure}"


def _ratio(label: str, ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None or theirs == 0:
        return f"  {label:<28}{'n/a':>10}"
    return f"  {label:<28}{ours / theirs:>9.1f}x"


def _bench_evaluators(seed: int, seconds: float) -> dict[str, float | None]:
    import random

    from engine.cards import card_str
    from engine.evaluator import evaluate

    rng = random.Random(seed)
    deck = list(range(52))
    hands = [rng.sample(deck, 7) for _ in range(_EVAL_POOL)]
    rates: dict[str, float | None] = {}

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


def run(args: argparse.Namespace) -> int:
    import platform

    if args.seconds <= 0 or args.hands <= 0:
        print("feltd bench engine: --seconds and --hands must be positive")
        return 2
    print(
        f"feltd bench engine: Python {platform.python_version()} ({platform.python_implementation()}),"
        f" seed {args.seed}, {args.seconds:g} s per measurement"
    )
    print(f"7-card evaluations/s (the same {_EVAL_POOL:,} random hands for each library)")
    evals = _bench_evaluators(args.seed, args.seconds)
    print("Ratios")
    print(_ratio("evaluations feltd/treys", evals["feltd"], evals["treys"]))
    print(_ratio("evaluations feltd/pokerkit", evals["feltd"], evals["pokerkit"]))
    return 0
