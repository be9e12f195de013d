"""`feltd serve`: the game server: players, observers and operators over WebSockets."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from server.cli.arguments import positive, positive_float

if TYPE_CHECKING:
    from server.gateway import Limits

HELP = "Run the server: the WebSocket game protocol, GET /healthz and /metrics, on one port."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd serve`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    parser.add_argument(
        "--role",
        choices=("all", "gateway", "worker"),
        default="all",
        help="all: the whole server in one process; gateway: client connections only, relayed "
        "through Redis to the workers; worker: the tournaments and their tables, its port answering "
        "GET /healthz and /metrics only (default: all)",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL"),
        metavar="URL",
        help="the Redis gateways and workers share (default: $REDIS_URL); not used by --role all",
    )
    parser.add_argument(
        "--redis-prefix",
        default="feltd",
        metavar="PREFIX",
        help="the start of every Redis key and channel: servers with another prefix do not meet",
    )
    parser.add_argument(
        "--lease-ttl",
        type=positive_float,
        default=10.0,
        metavar="SECONDS",
        help="--role worker: how long a worker's hold on a tournament lasts unless renewed (real "
        "seconds); a dead worker's tournaments resume elsewhere about this long after it died",
    )
    parser.add_argument(
        "--shard-tables",
        action="store_true",
        help="--role worker: host tables for every worker started so, and play this worker's "
        "tournaments' tables on those hosts (one tournament's tables spread over the workers; a "
        "dead worker's tables open again elsewhere, their hands dealt again). Default: off, a "
        "tournament's tables play in its coordinator's worker",
    )
    parser.add_argument(
        "--host",
        default=os.environ.get("FELTD_HOST", "127.0.0.1"),
        help="address to listen on (default: $FELTD_HOST, else 127.0.0.1)",
    )
    parser.add_argument(
        "--port",
        type=positive,
        default=os.environ.get("FELTD_PORT", "8765"),  # argparse checks a text default with ``type``
        help="port to listen on (default: $FELTD_PORT, else 8765)",
    )
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
    parser.add_argument(
        "--keep-finished",
        type=positive_float,
        default=10.0,
        metavar="MINUTES",
        help="keep a finished or cancelled tournament loaded this long after its end (real minutes; "
        "after that its standings and results are read from the database)",
    )
    limits = parser.add_argument_group(
        "client limits", "what connections may cost the server (docs/protocol.md section 17)"
    )
    limits.add_argument(
        "--max-connections",
        type=positive,
        default=10_000,
        metavar="N",
        help="WebSocket sessions at once; past it an upgrade is answered HTTP 503",
    )
    limits.add_argument(
        "--max-opening",
        type=positive,
        default=1_000,
        metavar="N",
        help="TCP connections still in their HTTP upgrade on top of the sessions; past it a new "
        "connection is dropped as it is accepted",
    )
    limits.add_argument(
        "--open-timeout", type=float, default=10.0, metavar="S", help="seconds to finish the HTTP upgrade"
    )
    limits.add_argument(
        "--hello-timeout", type=float, default=10.0, metavar="S", help="seconds to send hello after it"
    )
    limits.add_argument(
        "--heartbeat",
        type=positive,
        default=20,
        metavar="S",
        help="a WebSocket ping every S seconds; no pong within S seconds drops the connection",
    )
    limits.add_argument(
        "--rate",
        type=float,
        default=20.0,
        metavar="N",
        help="frames a connection may send per second of the tournament clock (bursts of 2N)",
    )
    limits.add_argument(
        "--max-refused",
        type=positive,
        default=10,
        metavar="N",
        help="refused frames (unreadable, unknown, rate-limited ...) in --error-window close the connection",
    )
    limits.add_argument(
        "--max-errors",
        type=positive,
        default=100,
        metavar="N",
        help="errors of any kind in --error-window close the connection",
    )
    limits.add_argument(
        "--error-window", type=float, default=60.0, metavar="S", help="seconds the two counts above cover"
    )
    limits.add_argument(
        "--send-queue",
        type=positive,
        default=512,
        metavar="N",
        help="frames queued for a client that does not read before it is resynced (then closed)",
    )
    limits.add_argument(
        "--send-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds one frame may take to leave before the connection is dropped as too slow",
    )
    add_store_arguments(parser)


def run(args: argparse.Namespace) -> int:

    from server import event_loop
    from server.cli.exits import CommandError

    if not args.speed > 0:
        raise CommandError(f"--speed must be > 0, got {args.speed}")
    if args.role != "all" and not args.redis_url:
        raise CommandError(f"--role {args.role} needs --redis-url (or REDIS_URL)")
    if args.shard_tables and args.role != "worker":
        raise CommandError("--shard-tables is for --role worker")
    if not args.resume_limit > 0:
        raise CommandError(f"--resume-limit must be > 0 minutes, got {args.resume_limit}")
    try:
        limits(args).check()
    except ValueError as error:
        raise CommandError(f"client limits: {error}") from None
    return event_loop.run(_run(args))


def limits(args: argparse.Namespace) -> Limits:
    from server.gateway import Limits

    return Limits(
        max_connections=args.max_connections,
        max_opening=args.max_opening,
        open_timeout=args.open_timeout,
        hello_timeout=args.hello_timeout,
        rate_per_second=args.rate,
        max_refused=args.max_refused,
        max_errors=args.max_errors,
        error_window=args.error_window,
        max_queued_frames=args.send_queue,
        send_timeout=args.send_timeout,
    )


async def _run(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    import signal

    import redis.asyncio as aioredis

    from server import collector, event_loop
    from server.app import FeltServer, Role
    from server.bus import Bus
    from server.clock import RealClock, ScaledClock
    from server.lease import Leases
    from server.redis_bus import RedisBus
    from server.store.options import database_choice, open_chosen_store

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    role = Role(args.role)
    redis_bus = None if role is Role.ALL else RedisBus(args.redis_url, prefix=args.redis_prefix)
    bus: Bus | None = redis_bus
    # workers hold their tournaments under leases: two workers never run one, and a dead one's
    # tournaments are taken up by another (the fencing token keeps a stalled one from writing)
    lease_redis = aioredis.from_url(args.redis_url) if role is Role.WORKER else None
    leases = (
        None
        if lease_redis is None or redis_bus is None
        else Leases(
            lease_redis,
            owner=f"worker-{redis_bus.process_id}",
            ttl=args.lease_ttl,
            prefix=f"{args.redis_prefix}:",
        )
    )
    async with open_chosen_store(database_choice(args)) as store:
        if redis_bus is not None:
            await redis_bus.start()
        clock = (
            RealClock()
            if args.speed == 1.0 and args.clock_anchor is None
            else ScaledClock(args.speed, anchor=args.clock_anchor)
        )
        server = FeltServer(
            store,
            clock=clock,
            resume_limit=args.resume_limit * 60,
            snapshot_every=args.snapshot_every,
            heartbeat_seconds=args.heartbeat,
            limits=limits(args),
            role=role,
            bus=bus,
            leases=leases,
            shard_tables=args.shard_tables,
            keep_finished_seconds=args.keep_finished * 60,
        )
        await server.start(args.host, args.port)
        collector.tune()
        collecting = asyncio.get_running_loop().create_task(collector.maintain())
        if redis_bus is not None:
            print(f"feltd {role} {redis_bus.process_id} on the Redis bus {args.redis_prefix!r}", flush=True)
        if server.gateway is not None:
            print(
                f"feltd serving on {server.url} (health: http://{server.host}:{server.port}/healthz)",
                flush=True,
            )
            print(f"browser client: http://{server.host}:{server.port}/ (log in with a token)", flush=True)
        else:
            print(f"feltd worker health: http://{server.host}:{server.port}/healthz", flush=True)
        if role is not Role.GATEWAY:
            print(f"tournaments loaded: {', '.join(sorted(server.coordinators)) or 'none yet'}", flush=True)
        print(f"event loop: {event_loop.name()}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
        print("feltd: stopping", flush=True)
        collecting.cancel()
        await server.stop()
        if redis_bus is not None:
            await redis_bus.close()
        if lease_redis is not None:
            await lease_redis.aclose()
    return 0
