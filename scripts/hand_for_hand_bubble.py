"""HFH-1 on the money bubble: how often it bursts inside a synchronized hand-for-hand round.

Runs ``feltd simulate tournament``'s default freezeout (15 % paid) for 20 seeds at each field
size and prints, per size: runs, bubbles burst in sync, hand-for-hand hands (median, min, max)
and the time taken. The director starts hand-for-hand ``bubble_margin`` players before the
bubble (default: one per table in play), because hands already under way when it fires finish
unsynchronized.

    python scripts/hand_for_hand_bubble.py [--sizes 500 2000 10000] [--seeds 20] [--margin N]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time

from engine.tournament.config import HandForHand
from engine.tournament.simulation import default_config, run_tournament


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000, 10000], help="field sizes")
    parser.add_argument("--seeds", type=int, default=20, help="seeds per size (1..N)")
    parser.add_argument("--margin", type=int, default=None, help="bubble_margin (default: one per table)")
    args = parser.parse_args(argv)
    print(
        f"{'players':>8} {'runs':>5} {'in sync':>8} {'share':>6} {'hfh hands med/min/max':>22} {'seconds':>8}"
    )
    worst = 1.0
    for players in args.sizes:
        config = dataclasses.replace(
            default_config(players), hand_for_hand=HandForHand(bubble_margin=args.margin)
        )
        started = time.perf_counter()
        in_sync = 0
        hands = []
        for seed in range(1, args.seeds + 1):
            result = run_tournament(config, players, seed)
            in_sync += bool(result.bubble_burst_in_sync)
            hands.append(result.hand_for_hand_hands)
        share = in_sync / args.seeds
        worst = min(worst, share)
        spread = f"{statistics.median(hands):g}/{min(hands)}/{max(hands)}"
        print(
            f"{players:>8} {args.seeds:>5} {in_sync:>8} {share:>6.0%} {spread:>22} "
            f"{time.perf_counter() - started:>8.1f}",
            flush=True,
        )
    print(f"lowest share in sync: {worst:.0%} (target: at least 95 %)")
    return 0 if worst >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
