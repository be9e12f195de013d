"""A logged-in connection's frames go to the gateway as they arrive (server/direct.py), over real
sockets: in order with what came right behind the hello, fragmented messages put together, and
the closes ``websockets`` itself makes for text that is not UTF-8 and for too many fragments."""

from __future__ import annotations

import asyncio
import gc
import weakref

from server_harness import running_server, tournament_toml, wait_until
from test_hostile_clients import decode, next_message, open_raw, say_hello, until_closed
from websockets.asyncio.client import ClientConnection
from websockets.frames import Frame, Opcode

from protocol import PROTOCOL_VERSION
from protocol import client_messages as cm
from protocol import server_messages as sm
from protocol.codec import JSON, MSGPACK
from server.direct import MAX_FRAGMENTS
from server.gateway import OPERATOR_CHECK_SECONDS


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


async def test_a_closed_session_is_freed_without_the_cycle_collector(postgres_server_url: str) -> None:
    """The collector's periodic pass only freezes (server/collector.py): a session left in a
    reference cycle when its connection closes would wait for the complete pass, 15 minutes, so
    one client opening and closing connections could hold ~10 KB each that long. Closed, a
    session (and its connection) must go by reference counting alone."""
    # a heartbeat of 1 s: each session pinged within a second of its opening
    async with running_server(postgres_server_url, heartbeat_seconds=1) as harness:
        gateway = harness.server.gateway
        token = (await harness.store.players.add("churn", player_id="churn")).token
        operator = (await harness.store.players.add_operator("churner")).token
        tournament_id = await harness.create(tournament_toml("churn", players=9), starts_in=3600)
        refs: list[weakref.ref[object]] = []
        gc.collect()
        gc.disable()
        try:
            # an observer, a player, a player following a tournament, an operator
            for round_ in range(4):
                ws = await open_raw(harness)
                await say_hello(ws, (None, token, token, operator)[round_])
                if round_ == 2:
                    follow = cm.TournamentSubscribe(tournament_id=tournament_id, request_id="t")
                    await ws.send(MSGPACK.encode(follow))
                await ws.send(MSGPACK.encode(cm.Ping(nonce=round_)))
                assert await pongs(ws, 1) == [round_]
                (session,) = gateway.sessions.values()
                refs.append(weakref.ref(session))
                refs.append(weakref.ref(session.websocket))
                # the heartbeat has pinged it: it once held the last session it pinged until
                # its next ping of another (forever, with none left)
                await wait_until(lambda: all(s.pinged for s in gateway.sessions.values()), 10, "a ping")
                if round_ == 3:  # open while the gateway checks its operators' accounts (it held them)
                    await asyncio.sleep(OPERATOR_CHECK_SECONDS * 1.5)
                del session
                await ws.close()
                deadline = asyncio.get_running_loop().time() + 10
                while gateway.sessions or harness.server.gateway.metrics.connections:
                    assert asyncio.get_running_loop().time() < deadline, "the session was not closed"
                    await asyncio.sleep(0.01)
            # the handler tasks finish and are released (later on a loaded machine); a cycle
            # keeps them however long this waits, the collector being off
            deadline = asyncio.get_running_loop().time() + 5
            while any(ref() is not None for ref in refs) and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.05)
            alive = [type(ref()).__name__ for ref in refs if ref() is not None]
            assert alive == [], f"kept alive after closing: {alive}"
        finally:
            gc.enable()


async def test_a_connection_that_does_not_answer_pings_is_closed_1011(postgres_server_url: str) -> None:
    """The heartbeat's drop goes through the same close as a frame that cannot be read
    (server.direct.fail): 1011, as websockets' own keepalive."""
    async with running_server(postgres_server_url, heartbeat_seconds=1) as harness:
        ws = await open_raw(harness)
        await say_hello(ws)
        real = ws.protocol.send_frame

        def no_pongs(frame: Frame) -> None:
            if frame.opcode is not Opcode.PONG:
                real(frame)

        ws.protocol.send_frame = no_pongs  # type: ignore[method-assign]
        _, code = await until_closed(ws)
        assert code == 1011


async def test_a_pong_later_than_a_tick_is_no_timeout(postgres_server_url: str) -> None:
    """A session is pinged once a heartbeat period however few sessions there are (with fewer
    than the period's ticks, each was pinged every few ticks, one alone every 0.1 s, and a pong
    later than that was taken for a timeout): a client 300 ms away stays connected."""
    async with running_server(postgres_server_url, heartbeat_seconds=2) as harness:
        ws = await open_raw(harness)
        await say_hello(ws)
        real = ws.protocol.send_frame
        loop = asyncio.get_running_loop()
        pongs = 0

        def late(frame: Frame) -> None:
            nonlocal pongs
            if frame.opcode is not Opcode.PONG:
                real(frame)
                return
            pongs += 1

            def send() -> None:
                real(frame)
                ws.send_data()

            loop.call_later(0.3, send)  # a 300 ms round trip

        ws.protocol.send_frame = late  # type: ignore[method-assign]
        closed = asyncio.ensure_future(until_closed(ws))
        await asyncio.wait([closed], timeout=5.0)
        assert not closed.done(), f"closed {closed.result()[1]}, {pongs} pings in"
        assert 1 <= pongs <= 4, pongs  # pinged, once every 2 s
        closed.cancel()
        await ws.close()
