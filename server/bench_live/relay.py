"""The bare relay: a plain ``websockets`` server that only relays each action to its table.

It is what any WebSocket game server must at least do, with no game logic: the player's
``hello`` names its place (its token is its index: table ``index // table_size``); each ``act``
is answered by one ``table_event`` ``action_taken`` frame broadcast to the table's connections.
Measured with the same load generator as feltd, in the same run, it turns the cost of feltd's
own work into a ratio. ``websockets`` runs with its defaults (keepalive pings every 20 s, no
compression, as feltd's gateway), on the standard asyncio event loop (feltd runs on uvloop when
it is installed: ``server/event_loop.py``).

Run as ``python -m server.bench_live.relay --port P``; it prints ``relay listening on PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import signal

import msgpack
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

SUBPROTOCOL = "feltd.msgpack.v1"


class Relay:
    def __init__(self, table_size: int) -> None:
        self.table_size = table_size
        self.tables: dict[int, set[ServerConnection]] = {}
        self.seqs: dict[int, int] = {}

    async def handler(self, websocket: ServerConnection) -> None:
        table = 0
        joined = False
        try:
            hello = msgpack.unpackb(await websocket.recv())
            index = int(hello["token"])
            table, seat = index // self.table_size + 1, index % self.table_size + 1
            self.tables.setdefault(table, set()).add(websocket)
            joined = True
            await websocket.send(msgpack.packb({"type": "welcome", "player": str(index), "seat": seat}))
            async for frame in websocket:
                act = msgpack.unpackb(frame)
                seq = self.seqs.get(table, 0) + 1
                self.seqs[table] = seq
                event = {
                    "type": "table_event",
                    "table_id": table,
                    "seq": seq,
                    "event": {
                        "type": "action_taken",
                        "seat": seat,
                        "street": "preflop",
                        "action": act["action"],
                        "amount": act.get("amount") or 0,
                        "bet": 0,
                        "stack": 0,
                        "all_in": False,
                        "timed_out": False,
                    },
                }
                broadcast(self.tables[table], msgpack.packb(event))
        except (ConnectionClosed, KeyError, ValueError, TypeError, msgpack.UnpackException):
            pass
        finally:
            if joined:
                self.tables[table].discard(websocket)


async def main(host: str, port: int, table_size: int) -> None:
    relay = Relay(table_size)
    async with serve(relay.handler, host, port, subprotocols=[SUBPROTOCOL], compression=None) as server:  # type: ignore[list-item]
        bound = next(iter(server.sockets)).getsockname()[1]
        print(f"relay listening on {bound}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--table-size", type=int, default=9)
    options = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(main(options.host, options.port, options.table_size))
