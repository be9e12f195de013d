"""`feltd connect`: a protocol console. One JSON message per line in, one per line out.

It is the plainest client there is, for a person at a terminal or a shell script: it logs in
with a token (or as an observer), then prints every server message as a line of JSON (the
``feltd.json.v1`` form of docs/protocol.md) and sends every line typed on stdin as a client
message. A line that is not a valid client message is refused here, with the reason on stderr,
and never sent. ``--register`` buys in to a tournament right after the login, and ``--autoplay``
answers every turn with check or call, so a tournament can be filled from a few shells.
"""

from __future__ import annotations

import argparse

HELP = "A protocol console: log in, print server messages as JSON lines, send JSON lines typed on stdin."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd connect`; heavy imports belong in ``run`` so `--help` stays fast."""
    parser.add_argument(
        "url", nargs="?", default="ws://127.0.0.1:8765", help="the server's WebSocket address"
    )
    parser.add_argument(
        "--token",
        default=None,
        help="a player's token (feltd admin player add prints it); default $FELTD_TOKEN, "
        "else log in as an observer",
    )
    parser.add_argument("--register", metavar="TOURNAMENT", help="buy in to this tournament after login")
    parser.add_argument(
        "--autoplay", action="store_true", help="answer every turn with check or call, and nothing else"
    )


def run(args: argparse.Namespace) -> int:
    import asyncio
    import os

    from server.cli.exits import CommandError

    if not args.url.startswith(("ws://", "wss://")):
        raise CommandError(f"{args.url!r} is not a WebSocket address: write ws://HOST:PORT")
    token = args.token if args.token is not None else os.environ.get("FELTD_TOKEN") or None
    return asyncio.run(_run(args.url, token, args.register, args.autoplay))


async def _run(url: str, token: str | None, register: str | None, autoplay: bool) -> int:
    import asyncio
    import sys
    import threading

    from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

    from client.connection import Connection, LoginRefused
    from protocol import client_messages as cm
    from protocol import server_messages as sm
    from protocol import table_events as te
    from protocol.codec import JSON_SUBPROTOCOL
    from protocol.errors import ProtocolError
    from protocol.kinds import ActionKind
    from server.cli.exits import CommandError

    connection = Connection(url, token=token, subprotocol=JSON_SUBPROTOCOL, client_name="feltd-connect")

    def show(message: sm.ServerMessage) -> None:
        frame = connection.codec.encode(message)
        print(frame if isinstance(frame, str) else frame.decode(), flush=True)

    try:
        welcome = await connection.connect()
    except LoginRefused as refused:
        raise CommandError(f"the server refused the login: {refused}", status=1) from None
    except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as error:
        raise CommandError(f"cannot connect to {url}: {error}", status=1) from None
    show(welcome)
    if register is not None:
        await connection.send(cm.Register(tournament_id=register, request_id=f"connect-register-{register}"))
    hands: dict[int, int] = {}
    decisions = 0

    async def answer(table_id: int, legal: te.LegalView | None) -> None:
        nonlocal decisions
        if not autoplay or legal is None or table_id not in hands:
            return
        decisions += 1
        await connection.send(
            cm.Act(
                table_id=table_id,
                hand_number=hands[table_id],
                action_id=f"connect-{hands[table_id]}-{decisions}",
                action=ActionKind.CHECK_OR_CALL,
            )
        )

    async def read_server() -> None:
        while True:
            message = await connection.recv()
            show(message)
            if isinstance(message, sm.TableSnapshot):
                if message.hand_number is not None:
                    hands[message.table_id] = message.hand_number
                await answer(message.table_id, message.legal)
            elif isinstance(message, sm.TableEvent):
                if isinstance(message.event, te.HandStarted):
                    hands[message.table_id] = message.event.hand_number
                elif isinstance(message.event, te.Turn):
                    await answer(message.table_id, message.event.legal)

    lines: asyncio.Queue[str] = asyncio.Queue()
    loop = asyncio.get_running_loop()

    def pump_stdin() -> None:
        # A daemon thread, not asyncio.to_thread: a read blocked on a terminal must not keep the
        # process alive once the server has closed the connection.
        for line in iter(sys.stdin.readline, ""):
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, "")

    threading.Thread(target=pump_stdin, name="stdin", daemon=True).start()

    async def read_stdin() -> None:
        while True:
            line = await lines.get()
            if not line:
                return  # end of input: keep listening until the server closes
            if not line.strip():
                continue
            try:
                message = connection.codec.decode_client(line.strip())
            except ProtocolError as error:
                print(f"feltd connect: not sent: {error}", file=sys.stderr, flush=True)
                continue
            await connection.send(message)

    typing = asyncio.create_task(read_stdin())
    try:
        await read_server()
    except ConnectionClosed as closed:
        reason = closed.rcvd.reason if closed.rcvd is not None else ""
        print(
            f"feltd connect: the server closed the connection{': ' + reason if reason else ''}",
            file=sys.stderr,
        )
    finally:
        typing.cancel()
        await connection.close()
    return 0
