"""`feltd admin tournament`: schedule and run tournaments.

Without ``--url``, ``create`` and ``list`` work on the database (a running server picks a new
tournament up within 2 s). With ``--url ws://HOST:PORT`` and an operator's token (``--token`` or
``$FELTD_TOKEN``; ``feltd admin operator add`` prints one), every action is an ``op_`` request to
the running server (docs/protocol.md section 20), answered before the command exits: a refusal
is one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
from typing import Any

HELP = "Tournaments: create, edit, list, show, start, pause, cancel... (on a running server with --url)."

# the actions only a running server can carry out, and what each does
_ONLINE: dict[str, str] = {
    "edit": "before the start: a new definition (--file) and/or start time (--start)",
    "delete": "take a tournament nobody has entered off the schedule",
    "show": "one tournament in full: summary, clock, players",
    "start": "start now, before the scheduled time",
    "pause": "stop the clock: every table finishes its hand, then waits",
    "resume": "start the clock again",
    "cancel": "stop for good and settle by CANCEL-1 (players are told what they got)",
    "register": "register a player (by id), paying from their balance",
    "unregister": "before the start: refund a player and take them off",
    "remove-no-shows": "before the start: refund and unregister every player who never connected",
    "message": "a notice to every player, one table (--table) or one player (--player)",
    "penalize": "PEN-1: a player sits out their next HANDS hands",
    "disqualify": "PEN-1: a player is out now (or when their hand ends)",
    "sit-out": "mark a player away (dealt in, checked or folded at once), or back with --back",
    "results": "places and prizes so far",
}
REPLY_TIMEOUT_S = 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd admin tournament`; heavy imports belong in ``run`` so `--help` stays fast."""
    from server.store.options import add_store_arguments

    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create",
        help="record a tournament from a TOML file; a running server picks it up and starts it on time",
    )
    create.add_argument("file", metavar="FILE", help="the tournament's TOML (UTF-8; money in cents)")
    _start_flag(create, "+5m")
    listing = actions.add_parser("list", help="every tournament: id, status, start, name")
    for sub in (create, listing):
        add_store_arguments(sub)
        _server_flags(sub, required=False)
    for action, text in _ONLINE.items():
        sub = actions.add_parser(action, help=f"{text} (needs --url)")
        sub.add_argument("tournament", metavar="TOURNAMENT", help="the tournament's id")
        if action in ("register", "unregister", "penalize", "disqualify", "sit-out"):
            sub.add_argument("player", metavar="PLAYER", help="the player's id")
        if action == "penalize":
            sub.add_argument("hands", metavar="HANDS", type=_positive, help="hands to sit out")
        if action == "edit":
            sub.add_argument("--file", metavar="FILE", help="a new TOML definition (nobody entered yet)")
            _start_flag(sub, None)
        if action == "cancel":
            sub.add_argument(
                "--in-money",
                choices=("chips", "icm"),
                default="chips",
                help="after the bubble, share the money left by chips or by ICM",
            )
        if action == "message":
            sub.add_argument("text", metavar="TEXT", help="what to tell them (up to 500 characters)")
            to = sub.add_mutually_exclusive_group()
            to.add_argument("--table", type=_positive, metavar="N", help="only the players at table N")
            to.add_argument("--player", metavar="PLAYER", help="only this player")
        if action == "sit-out":
            sub.add_argument("--back", action="store_true", help="mark the player back instead")
        _server_flags(sub, required=True)


def _positive(text: str) -> int:
    from server.cli.arguments import positive

    return positive(text)


def _start_flag(parser: argparse.ArgumentParser, default: str | None) -> None:
    parser.add_argument(
        "--start",
        metavar="AT",
        default=default,
        help="when play starts: an ISO time (2026-12-24T20:00:00+00:00), or +N followed by s, m or h "
        "from now (the server's clock with --url)",
    )


def _server_flags(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--url",
        metavar="URL",
        default=None,
        help="a running server's WebSocket address (ws://HOST:PORT)"
        + ("" if required else "; without it, the database is used directly"),
    )
    parser.add_argument(
        "--token", default=None, help="an operator's token (feltd admin operator add); default $FELTD_TOKEN"
    )


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
    import os

    from server.cli.exits import CommandError

    if args.url is None:
        if args.action not in ("create", "list"):
            raise CommandError(f"{args.action} needs a running server: give --url ws://HOST:PORT")
        return asyncio.run(_offline(args))
    if not args.url.startswith(("ws://", "wss://")):
        raise CommandError(f"--url {args.url!r} is not a WebSocket address: write ws://HOST:PORT")
    token = args.token if args.token is not None else os.environ.get("FELTD_TOKEN") or None
    if token is None:
        raise CommandError("an operator's token is needed: give --token T or set $FELTD_TOKEN")
    # read and check the definition before anything goes on the wire
    toml = _definition(args.file) if getattr(args, "file", None) is not None else None
    return asyncio.run(_online(args, token, toml))


def _definition(path: str) -> str:
    from engine.tournament.config import ConfigError, parse_config
    from server.cli.exits import CommandError
    from server.cli.files import read_text

    text = read_text(path)
    try:
        parse_config(text)
    except ConfigError as error:
        raise CommandError(f"{path}: {error}") from None
    return text


async def _offline(args: argparse.Namespace) -> int:
    import datetime as dt
    import time

    from engine.tournament.config import parse_config
    from server.cli.exits import CommandError
    from server.store.errors import TournamentExists
    from server.store.options import database_choice, open_chosen_store

    if args.action == "create":
        text = _definition(args.file)
        config = parse_config(text)
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


def _request(args: argparse.Namespace, request_id: str, toml: str | None, now: float) -> Any:
    """The ``op_`` request the action names."""
    from protocol import operator_requests as op
    from protocol.kinds import InMoneyMethod

    action = args.action
    start_ms = None if getattr(args, "start", None) is None else int(parse_start(args.start, now) * 1000)
    if action == "create":
        assert toml is not None
        return op.OpTournamentCreate(request_id=request_id, toml=toml, start_ms=start_ms)
    if action == "list":
        return op.OpTournamentList(request_id=request_id)
    common: dict[str, Any] = {"request_id": request_id, "tournament_id": args.tournament}
    if action == "edit":
        return op.OpTournamentEdit(**common, toml=toml, start_ms=start_ms)
    if action == "cancel":
        return op.OpTournamentCancel(**common, in_money=InMoneyMethod(args.in_money))
    if action == "message":
        return op.OpMessage(**common, text=args.text, table_id=args.table, player=args.player)
    if action == "penalize":
        return op.OpPenalize(**common, player=args.player, hands=args.hands)
    if action == "sit-out":
        return op.OpSitOut(**common, player=args.player, away=not args.back)
    with_player: dict[str, type[Any]] = {
        "register": op.OpPlayerRegister,
        "unregister": op.OpPlayerUnregister,
        "disqualify": op.OpDisqualify,
    }
    if action in with_player:
        return with_player[action](**common, player=args.player)
    plain: dict[str, type[Any]] = {
        "delete": op.OpTournamentDelete,
        "show": op.OpTournamentShow,
        "start": op.OpTournamentStart,
        "pause": op.OpTournamentPause,
        "resume": op.OpTournamentResume,
        "remove-no-shows": op.OpRemoveNoShows,
        "results": op.OpTournamentResults,
    }
    return plain[action](**common)


async def _online(args: argparse.Namespace, token: str, toml: str | None) -> int:
    import time
    import uuid

    import msgspec
    from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

    from client.connection import Connection, LoginRefused
    from protocol import server_messages as sm
    from protocol.errors import ProtocolError
    from protocol.kinds import Role
    from server.cli.exits import FAILED, CommandError

    connection = Connection(args.url, token=token, client_name="feltd-admin")
    try:
        welcome = await connection.connect()
    except LoginRefused as refused:
        raise CommandError(f"the server refused the login: {refused}", FAILED) from None
    except (OSError, InvalidHandshake, InvalidURI, TimeoutError, ConnectionClosed) as error:
        raise CommandError(f"cannot connect to {args.url}: {error}", FAILED) from None
    except ProtocolError as error:
        raise CommandError(f"{args.url} does not speak feltd's protocol: {error}", FAILED) from None
    try:
        if welcome.role is not Role.OPERATOR:
            raise CommandError(f"that token is not an operator's (it logs in as {welcome.role})", FAILED)
        request_id = f"admin-{uuid.uuid4().hex[:12]}"
        try:
            request = _request(args, request_id, toml, welcome.server_time_ms / 1000)
        except msgspec.ValidationError as error:
            raise CommandError(str(error)) from None
        await connection.send(request)
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while True:
            try:
                message = await connection.recv(max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                raise CommandError(f"no answer from {args.url} in {REPLY_TIMEOUT_S:.0f} s", FAILED) from None
            except ConnectionClosed as closed:
                reason = closed.rcvd.reason if closed.rcvd is not None else ""
                raise CommandError(f"the server closed the connection {reason}".strip(), FAILED) from None
            except ProtocolError as error:
                raise CommandError(f"the server's answer cannot be read: {error}", FAILED) from None
            if isinstance(message, sm.Error) and (message.request_id in (request_id, None)):
                raise CommandError(f"refused ({message.code}): {message.message}", FAILED)
            if getattr(message, "request_id", None) == request_id:
                break
    finally:
        await connection.close()
    _show_reply(args, message)
    return 0


_DONE = {
    "delete": "deleted",
    "start": "started",
    "pause": "paused (each table stops at the end of its hand)",
    "resume": "resumed",
    "cancel": "cancelled and settled (CANCEL-1)",
    "register": "registered {player}",
    "unregister": "unregistered {player} (refunded)",
    "remove-no-shows": "no-shows removed (refunded)",
    "message": "message sent",
    "penalize": "penalized {player}",
    "disqualify": "disqualified {player}",
    "sit-out": "sat {player} out",
}


def _show_reply(args: argparse.Namespace, message: object) -> None:
    import datetime as dt

    from protocol import server_messages as sm

    def when(ms: int) -> str:
        return dt.datetime.fromtimestamp(ms // 1000, dt.UTC).isoformat()

    if isinstance(message, sm.OpTournaments):
        if not message.tournaments:
            print("no tournaments")
            return
        print(f"{'id':<24} {'status':<12} {'starts':<26} {'entrants':>8} name")
        for summary in message.tournaments:
            print(
                f"{summary.tournament_id:<24} {summary.status.value:<12} {when(summary.start_ms):<26} "
                f"{summary.entrants:>8} {summary.name}"
            )
    elif isinstance(message, sm.OpTournament):
        summary = message.tournament
        print(f"tournament {summary.tournament_id!r} ({summary.name}), status {summary.status.value}")
        print(f"starts at {when(summary.start_ms)}")
        print(
            f"entrants {summary.entrants}, players left {summary.players_left}, "
            f"prize pool {summary.prize_pool_cents} cents"
        )
        if message.state is not None and message.state.level > 0:  # started
            state = message.state
            print(
                f"level {state.level} ({state.small_blind}/{state.big_blind}), "
                f"clock {'paused' if state.paused else 'running'}"
            )
        for player in message.players:
            where = f"table {player.table_id} seat {player.seat}" if player.table_id is not None else "-"
            chips = "-" if player.chips is None else str(player.chips)
            place = "" if player.place is None else f" place {player.place} prize {player.prize_cents}"
            away = " away" if player.away else ""
            print(f"  {player.player} {player.status.value} {where} chips {chips}{away}{place}")
    elif isinstance(message, sm.OpResults):
        print(
            f"tournament {message.tournament_id!r}, status {message.status.value}, "
            f"prize pool {message.prize_pool_cents} cents"
        )
        for result in message.results:
            print(f"  {result.place:>4} {', '.join(result.players)} {result.prize_cents} cents")
    else:
        done = _DONE.get(args.action, "done").format(player=getattr(args, "player", ""))
        if args.action == "sit-out" and args.back:
            done = f"marked {args.player} back"
        print(f"tournament {args.tournament!r}: {done}")
