"""Print how long exact ICM takes for 6..20 players and Monte Carlo for 100 (a benchmark, not a test).

Run: .venv/bin/python scripts/bench_icm.py
"""

from __future__ import annotations

import random
import time

from engine.tournament.deals import icm_exact, icm_monte_carlo


def main() -> None:
    rng = random.Random(2026)
    for players in (6, 8, 10, 12, 15, 18, 20):
        stacks = [rng.randint(1_000, 100_000) for _ in range(players)]
        prizes = [1_000_000 // (place + 1) for place in range(players)]
        repeats = 20 if players <= 12 else 1
        started = time.perf_counter()
        for _ in range(repeats):
            equities = icm_exact(stacks, prizes)
        elapsed = (time.perf_counter() - started) / repeats
        print(
            f"icm exact   {players:3d} players, {players:2d} places: {elapsed * 1000:9.2f} ms "
            f"(sum {sum(equities):.2f} of {sum(prizes)})"
        )
    stacks = [rng.randint(1_000, 100_000) for _ in range(100)]
    prizes = [1_000_000 // (place + 1) for place in range(15)]
    started = time.perf_counter()
    estimate = icm_monte_carlo(stacks, prizes, random.Random(1), trials=20_000)
    elapsed = time.perf_counter() - started
    print(
        f"icm monte carlo 100 players, 20000 trials: {elapsed * 1000:9.2f} ms, "
        f"largest standard error {max(estimate.standard_errors):.2f} cents"
    )


if __name__ == "__main__":
    main()
