"""`feltd bench live`: connected players over WebSockets against feltd and a bare relay."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from server.cli.arguments import positive

HELP = (
    "Players over real WebSockets (load generators in their own processes) against `feltd serve` "
    "and a bare websockets relay in the same run: latency, actions/s, CPU, memory, saturation."
)


def _seconds(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0, got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd bench live`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    parser.add_argument(
        "--players",
        type=positive,
        nargs="+",
        default=[1000, 5000, 10000],
        metavar="N",
        help="connected players, one measurement per number",
    )
    parser.add_argument("--rounds", type=positive, default=1, metavar="N", help="rounds per number (medians)")
    parser.add_argument(
        "--server", choices=("both", "feltd", "relay"), default="both", help="what to measure"
    )
    parser.add_argument("--processes", type=positive, default=2, metavar="N", help="load-generator processes")
    parser.add_argument("--think-min", type=_seconds, default=1.0, metavar="S", help="shortest think time")
    parser.add_argument("--think-max", type=_seconds, default=3.0, metavar="S", help="longest think time")
    parser.add_argument(
        "--warmup", type=_seconds, default=10.0, metavar="S", help="play before the measured window"
    )
    parser.add_argument("--seconds", type=_seconds, default=30.0, metavar="S", help="the measured window")
    parser.add_argument(
        "--no-saturation",
        dest="saturation",
        action="store_false",
        help="skip the saturation run (shorter and shorter think times until p99 passes 50 ms "
        "and the rate stops rising)",
    )
    parser.add_argument(
        "--saturation-players",
        type=positive,
        default=None,
        metavar="N",
        help="players in the saturation run (default: the smallest --players)",
    )
    parser.add_argument(
        "--step-warmup",
        type=_seconds,
        default=3.0,
        metavar="S",
        help="saturation: play before each step's window",
    )
    parser.add_argument(
        "--step-seconds", type=_seconds, default=10.0, metavar="S", help="saturation: each step's window"
    )
    parser.add_argument(
        "--lost-after",
        type=_seconds,
        default=5.0,
        metavar="S",
        help="an act whose broadcast has not come back after S seconds counts as an error",
    )
    parser.add_argument("--seed", type=int, default=1, help="the bots' random seed")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the table's rows as JSON")
    cluster = parser.add_argument_group(
        "a cluster", "feltd as gateway and worker processes over Redis (server/bench_live/cluster.py)"
    )
    cluster.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=None,
        metavar="N",
        help="`feltd serve --role worker` processes, one configuration per number (0: the one "
        "--role all process); no saturation run",
    )
    cluster.add_argument(
        "--gateways", type=positive, nargs="+", default=[1], metavar="M", help="--role gateway processes"
    )
    cluster.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL"),
        metavar="URL",
        help="the Redis to use when there is no redis-server binary to start one per round "
        "(default: $REDIS_URL)",
    )
    add_store_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from server.bench_live.run import run_live_bench
    from server.cli.exits import CommandError
    from server.store.embedded import EmbeddedPostgres
    from server.store.options import database_choice

    if args.think_max < args.think_min:
        raise CommandError(f"--think-max {args.think_max:g} is below --think-min {args.think_min:g}")
    if args.server == "relay":
        return run_live_bench(args, None)
    if args.workers is not None and any(n < 0 for n in args.workers):
        raise CommandError(f"--workers takes numbers >= 0, got {args.workers}")
    choice = database_choice(args)
    choice.check()
    print(f"database: {choice.describe()}; the bench works in scratch databases it drops", flush=True)
    bench: Callable[[argparse.Namespace, str], int] = run_live_bench
    if args.workers is not None:
        from server.bench_live.cluster import run_cluster_bench

        bench = run_cluster_bench
    if choice.url is not None:
        return bench(args, choice.url)
    embedded = EmbeddedPostgres(choice.data_dir)
    try:
        return bench(args, embedded.url)
    finally:
        embedded.stop()
