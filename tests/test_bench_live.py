"""`feltd bench live` at a tiny size: real server processes (feltd on a scratch PostgreSQL
database, and the bare relay), load generators in their own processes over loopback WebSockets.
Only that the figures come out is checked, never how fast: the machine's speed varies."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import bench_databases

from server.bench_live.lag import LagProbe
from server.store.databases import database_name


def test_bench_live_prints_every_figure_for_feltd_and_the_relay(
    postgres_server_url: str, tmp_path: Path
) -> None:
    rows_file = tmp_path / "rows.json"
    databases_before = bench_databases(postgres_server_url)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.cli.main",
            "bench",
            "live",
            "--players",
            "18",
            "--warmup",
            "1",
            "--seconds",
            "3",
            "--step-warmup",
            "0",
            "--step-seconds",
            "1",
            "--lost-after",
            "1",
            # short think times, which the bots must follow: 2 tables at the default 1-3 s
            # would make about 1 action/s
            "--think-min",
            "0.05",
            "--think-max",
            "0.1",
            "--database-url",
            postgres_server_url,
            "--json",
            str(rows_file),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "RLIMIT_NOFILE" in out, out
    assert "lean load generator" in out, out
    assert "| players | server | p50 ms | p99 ms | max ms | actions/s | errors |" in out, out
    assert "generator loop lag p99" in out, out
    assert "| 18 | feltd |" in out and "| 18 | relay |" in out, out
    assert "saturation at 18 players, feltd:" in out and "ratio feltd/relay" in out, out
    rows = {row["server"]: row for row in json.loads(rows_file.read_text())}
    assert set(rows) == {"feltd", "relay"}
    for server, row in rows.items():
        assert row["connected"] == 18 and row["seated"] == 18, (server, row)
        for figure in (
            "p50_ms",
            "p99_ms",
            "max_ms",
            "server_cpu_pct",
            "server_rss_mib",
            "kib_per_connection",
            "generator_lag_p99_ms",
            "generator_lag_max_ms",
        ):
            assert isinstance(row[figure], float) and not math.isnan(row[figure]), (server, figure, row)
        # the bots played: their acts came back as the table's broadcasts
        assert row["actions_per_s"] > 0, (server, row)
        assert row["saturation_actions_per_s"] is not None, (server, row)
    assert rows["relay"]["actions_per_s"] > 4, rows["relay"]
    # feltd's tables pause between hands: the bench counts the actions per hand (action_taken
    # over hand_started copies) and prints the rate that pause bounds; the relay deals no hands
    assert "actions per hand (bound by the pause between hands: 2 tables x" in out, out
    assert "its tables' bound from the pause between hands:" in out, out
    assert rows["feltd"]["pause_bound_actions_per_s"] > 0, rows["feltd"]
    assert math.isnan(rows["relay"]["pause_bound_actions_per_s"]), rows["relay"]
    # the scratch databases are dropped and nothing is left in the working folder
    assert bench_databases(postgres_server_url) <= databases_before
    assert list(tmp_path.iterdir()) == [rows_file]


async def test_the_lean_client_speaks_rfc_6455_with_a_websockets_server() -> None:
    """Frames of every length encoding (7-bit, 16-bit, 64-bit), pings answered, the close."""
    from websockets.asyncio.server import ServerConnection, serve

    from server.bench_live import lean_ws

    pinged: list[float] = []

    async def echo(websocket: ServerConnection) -> None:
        async for frame in websocket:
            if frame == b"ping me":
                pinged.append(await (await websocket.ping(b"nonce")))
            await websocket.send(frame)
        # the client's close reaches the server as a normal close

    received: list[bytes] = []
    closed: list[str] = []
    got = asyncio.Event()

    def on_message(payload: bytes) -> None:
        received.append(payload)
        got.set()

    async with serve(echo, "127.0.0.1", 0, subprotocols=["feltd.msgpack.v1"]) as server:  # type: ignore[list-item]
        port = next(iter(server.sockets)).getsockname()[1]
        client = await lean_ws.connect("127.0.0.1", port, "feltd.msgpack.v1", on_message, closed.append)
        for payload in (b"", b"x" * 125, b"y" * 126, b"z" * 65535, bytes(range(256)) * 300, b"ping me"):
            got.clear()
            client.send(payload)
            await asyncio.wait_for(got.wait(), 10)
            assert received[-1] == payload, len(payload)
        assert len(pinged) == 1  # the server's ping was answered by a pong
        client.close()
    assert closed == ["closed by the client"]
    with pytest.raises(lean_ws.HandshakeError):
        async with serve(echo, "127.0.0.1", 0, subprotocols=["feltd.json.v1"]) as other:  # type: ignore[list-item]
            port = next(iter(other.sockets)).getsockname()[1]
            await lean_ws.connect("127.0.0.1", port, "feltd.msgpack.v1", on_message, closed.append)


async def test_the_lag_probe_sees_a_stall_of_the_loop_and_only_in_its_window() -> None:
    probe = LagProbe(interval=0.005)
    await asyncio.sleep(0.05)
    before = time.monotonic()
    time.sleep(0.1)  # the loop is stopped: the next tick comes at least this late
    await asyncio.sleep(0.05)
    after = time.monotonic()
    probe.stop()
    stalled = probe.window(before, after)
    assert max(stalled) >= 0.09, stalled
    assert all(late < 0.09 for late in probe.window(0.0, before)), probe.window(0.0, before)


def test_the_template_is_named_by_the_url_path_even_with_a_socket_directory_in_the_query() -> None:
    """Without a database URL the bench runs on the embedded PostgreSQL, whose URL names its socket
    directory in the query: taking the text after the last slash copied the players' template
    from a database called "pg" (after the socket directory's last part), and every feltd round failed."""
    embedded = "postgresql://postgres@/feltd_benchlive_0a1b?host=/tmp/feltd-data/pg"
    assert database_name(embedded) == "feltd_benchlive_0a1b"
    assert database_name("postgresql://postgres@127.0.0.1:5432/feltd_x") == "feltd_x"
