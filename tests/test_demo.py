"""`feltd demo`, the README's main job: the real server, bots over real WebSockets, a whole
tournament, its money through the ledger."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator

import pytest

from server.store.connection import open_store
from server.store.databases import create_database, drop_database
from server.store.tournaments import TournamentStatus


@pytest.fixture
async def demo_database(postgres_server_url: str) -> AsyncIterator[str]:
    url = await create_database(postgres_server_url, "feltd_test_demo")
    try:
        yield url
    finally:
        await drop_database(postgres_server_url, url)


async def test_demo_plays_a_whole_tournament_over_websockets_and_the_ledger_balances(
    demo_database: str,
) -> None:
    """A small demo at high speed: the server on a loopback port, 20 bots of the three kinds over
    WebSockets (`feltd bots` in a child process), the tournament played to its end; the output
    names the URL, shows progress, the final standings and payouts, the bots' latency report,
    the ledger check and where the hand histories are."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.cli.main",
            "demo",
            "--players",
            "20",
            "--speed",
            "200",
            "--progress-every",
            "1",
            "--database-url",
            demo_database,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = result.stdout
    assert result.returncode == 0, f"demo failed:\n{out}\n{result.stderr}"
    assert "server: ws://127.0.0.1:" in out, out
    watch = next(
        line for line in out.splitlines() if line.startswith("watch in a browser: open http://127.0.0.1:")
    )
    token = watch.split("paste the operator token ", 1)[1].split()[0]
    assert "started: 20 players at 3 tables" in out, out
    assert "players left" in out and "chip leader" in out, out
    assert "tournament demo-1: finished in" in out, out
    assert "final standings:" in out and "     1  demo-1-" in out, out
    assert "payouts: prize pool 200.00, 200.00 paid to" in out, out
    bots = next(line for line in out.splitlines() if line.startswith("bots: ") and "actions" in line)
    assert "p99" in bots and "errors none" in bots, bots
    assert "ledger check: ok" in out and "pool of demo-1 now 0.00" in out, out
    assert "feltd history export --format pokerstars --tournament demo-1 --database-url" in out, out
    async with open_store(demo_database) as store:
        record = await store.tournaments.get("demo-1")
        hands = await store.histories.by_tournament("demo-1")
        operator = await store.players.authenticate_operator(token)
    # the demo's own operator connection logged in with the printed token; the demo over, the
    # token is revoked: a kept database holds no live operator token from a demo
    assert operator is None, f"the printed token outlives the demo: {watch}"
    assert record.status is TournamentStatus.FINISHED
    assert f"{len(hands):,} hands stored" in out and len(hands) > 10
