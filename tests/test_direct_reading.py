"""A logged-in connection's frames go to the gateway as they arrive (server/direct.py), over real
sockets: in order with what came right behind the hello, fragmented messages put together, and
the closes ``websockets`` itself makes for text that is not UTF-8 and for too many fragments."""

from __future__ import annotations

import asyncio

from server_harness import running_server
from test_hostile_clients import decode, next_message, open_raw, say_hello, until_closed
from websockets.asyncio.client import ClientConnection

from protocol import PROTOCOL_VERSION
from protocol import client_messages as cm
from protocol import server_messages as sm
from protocol.codec import JSON, MSGPACK
from server.direct import MAX_FRAGMENTS


async def pongs(ws: ClientConnection, count: int) -> list[int]:
    nonces: list[int] = []
    while len(nonces) < count:
        message = decode(await asyncio.wait_for(ws.recv(), 20))
        if isinstance(message, sm.Pong):
            nonces.append(message.nonce)
    return nonces


async def test_frames_right_behind_the_hello_are_answered_in_order(postgres_server_url: str) -> None:
    async with running_server(postgres_server_url) as harness:
        ws = await open_raw(harness)
        # hello and three pings in one go: the pings wait in websockets' queue while the hello
        # is answered, then the session reads directly: the order holds across the switch
        hello = MSGPACK.encode(cm.Hello(protocol=PROTOCOL_VERSION, client="direct"))
        for frame in [hello, *(MSGPACK.encode(cm.Ping(nonce=n)) for n in (1, 2, 3))]:
            await ws.send(frame)
        await next_message(ws, sm.Welcome)
        for n in (4, 5):
            await ws.send(MSGPACK.encode(cm.Ping(nonce=n)))
        assert await pongs(ws, 5) == [1, 2, 3, 4, 5]
        await ws.close()


async def test_a_fragmented_message_is_put_together(postgres_server_url: str) -> None:
    async with running_server(postgres_server_url) as harness:
        ws = await open_raw(harness)
        await say_hello(ws)
        frame = MSGPACK.encode(cm.Ping(nonce=77))
        await ws.send([frame[:1], frame[1:3], frame[3:]])  # three frames: first, continuation, last
        await ws.send(MSGPACK.encode(cm.Ping(nonce=78)))
        assert await pongs(ws, 2) == [77, 78]
        json = await open_raw(harness, json=True)
        await json.send(JSON.encode(cm.Hello(protocol=PROTOCOL_VERSION, client="direct")))
        await next_message(json, sm.Welcome)
        text = str(JSON.encode(cm.Ping(nonce=79)))
        await json.send([text[:5], text[5:]])
        assert await pongs(json, 1) == [79]
        await ws.close()
        await json.close()


async def test_text_that_is_not_utf8_closes_1007(postgres_server_url: str) -> None:
    async with running_server(postgres_server_url) as harness:
        ws = await open_raw(harness, json=True)
        await ws.send(JSON.encode(cm.Hello(protocol=PROTOCOL_VERSION, client="direct")))
        await next_message(ws, sm.Welcome)
        await ws.send(b'{"type": "ping", "nonce": 1, "x": "\xff"}', text=True)
        _, code = await until_closed(ws)
        assert code == 1007
        # the server goes on
        other = await open_raw(harness)
        await say_hello(other)
        await other.send(MSGPACK.encode(cm.Ping(nonce=5)))
        assert await pongs(other, 1) == [5]
        await other.close()


async def test_too_many_fragments_close_1009(postgres_server_url: str) -> None:
    async with running_server(postgres_server_url) as harness:
        ws = await open_raw(harness)
        await say_hello(ws)
        await ws.send([b""] * (MAX_FRAGMENTS + 5))
        _, code = await until_closed(ws)
        assert code == 1009
