"""`feltd admin tournament`: schedule tournaments from TOML files and list them."""

from __future__ import annotations

import argparse

HELP = "Tournaments: create one from a TOML file (with its start time), list them."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd admin tournament`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create",
        help="record a tournament from a TOML file; a running server picks it up and starts it on time",
    )
    create.add_argument("file", metavar="FILE", help="the tournament's TOML (UTF-8; money in cents)")
    create.add_argument(
        "--start",
        metavar="AT",
        default="+5m",
        help="when play starts: an ISO time (2026-12-24T20:00:00+00:00), or +N followed by s, m or h "
        "from now (default +5m)",
    )
    listing = actions.add_parser("list", help="every tournament: id, status, start, name")
    for sub in (create, listing):
        add_store_arguments(sub)


def parse_start(text: str, now: float) -> float:
    """``AT`` as seconds since the epoch: an ISO time with a zone, ``now``, or ``+N[s|m|h]``."""
    import datetime as dt

    from server.cli.exits import CommandError

    if text == "now":
        return now
    if text.startswith("+"):
        units = {"s": 1, "m": 60, "h": 3600}
        number, unit = text[1:-1], text[-1:]
        if unit not in units or not number.isdigit():
            raise CommandError(f"--start {text!r}: write +N followed by s, m or h (like +5m)")
        return now + int(number) * units[unit]
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(
            f"--start {text!r} is not a time: write 2026-12-24T20:00:00+00:00 or +5m"
        ) from None
    if moment.tzinfo is None:
        raise CommandError(f"--start {text!r} needs a time zone, like +00:00")
    return moment.timestamp()


def run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    import datetime as dt
    import time

    from engine.tournament.config import ConfigError, parse_config
    from server.cli.exits import CommandError
    from server.cli.files import read_text
    from server.store.errors import TournamentExists
    from server.store.options import database_choice, open_chosen_store

    if args.action == "create":
        text = read_text(args.file)
        try:
            config = parse_config(text)
        except ConfigError as error:
            raise CommandError(f"{args.file}: {error}") from None
        start = dt.datetime.fromtimestamp(parse_start(args.start, time.time()), dt.UTC)
        async with open_chosen_store(database_choice(args)) as store:
            try:
                record = await store.tournaments.create_from_toml(text, starts_at=start)
            except TournamentExists as error:
                raise CommandError(str(error)) from None
        print(f"tournament {record.id!r} ({record.name}) created, status {record.status}")
        limits = f"{config.max_players} players at most, buy-in {config.buy_in} cents"
        print(f"starts at {start.isoformat()} ({limits})")
        return 0
    async with open_chosen_store(database_choice(args)) as store:
        records = await store.tournaments.all()
    if not records:
        print("no tournaments")
        return 0
    print(f"{'id':<24} {'status':<12} {'starts':<26} name")
    for record in records:
        starts = record.starts_at.isoformat() if record.starts_at is not None else "-"
        print(f"{record.id:<24} {record.status.value:<12} {starts:<26} {record.name}")
    return 0
