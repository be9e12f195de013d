"""`feltd serve`: the game server: players, observers and operators over WebSockets."""

from __future__ import annotations

import argparse

from server.cli.arguments import positive

HELP = "Run the server: the WebSocket game protocol, GET /healthz and /metrics, on one port."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd serve`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=positive, default=8765, help="port to listen on")
    parser.add_argument(
        "--speed",
        type=float,
        default=1.0,
        metavar="X",
        help="run the tournament clock X times faster than real time (demos and tests)",
    )
    parser.add_argument(
        "--clock-anchor",
        type=float,
        default=None,
        metavar="EPOCH_SECONDS",
        help="with --speed: the accelerated clock reads anchor + (wall time - anchor) x speed, so "
        "servers restarted with the same anchor share one clock (default: the clock starts now)",
    )
    parser.add_argument(
        "--resume-limit",
        type=float,
        default=20.0,
        metavar="MINUTES",
        help="a running tournament the server finds down longer than this at start-up is settled "
        "by CANCEL-1 instead of resumed (tournament clock minutes)",
    )
    parser.add_argument(
        "--snapshot-every",
        type=positive,
        default=500,
        metavar="N",
        help="save each tournament's director after every N journal entries (a restart replays "
        "at most about N inputs)",
    )
    add_store_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from server.cli.exits import CommandError

    if not args.speed > 0:
        raise CommandError(f"--speed must be > 0, got {args.speed}")
    if not args.resume_limit > 0:
        raise CommandError(f"--resume-limit must be > 0 minutes, got {args.resume_limit}")
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    import signal

    from server.app import FeltServer
    from server.clock import RealClock, ScaledClock
    from server.store.options import database_choice, open_chosen_store

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    async with open_chosen_store(database_choice(args)) as store:
        clock = (
            RealClock()
            if args.speed == 1.0 and args.clock_anchor is None
            else ScaledClock(args.speed, anchor=args.clock_anchor)
        )
        server = FeltServer(
            store, clock=clock, resume_limit=args.resume_limit * 60, snapshot_every=args.snapshot_every
        )
        await server.start(args.host, args.port)
        print(
            f"feltd serving on {server.url} (health: http://{server.host}:{server.port}/healthz)", flush=True
        )
        print(f"browser client: http://{server.host}:{server.port}/ (log in with a token)", flush=True)
        print(f"tournaments loaded: {', '.join(sorted(server.coordinators)) or 'none yet'}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
        print("feltd: stopping", flush=True)
        await server.stop()
    return 0
