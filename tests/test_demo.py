"""`feltd demo`, the README's main job: a bot tournament whose money goes through the real ledger."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator

import pytest

from server.store.databases import create_database, drop_database


@pytest.fixture
async def demo_database(postgres_server_url: str) -> AsyncIterator[str]:
    url = await create_database(postgres_server_url, "feltd_test_demo")
    try:
        yield url
    finally:
        await drop_database(postgres_server_url, url)


def _demo(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "server.cli.main",
            "demo",
            "--players",
            "40",
            "--seed",
            "3",
            "--database-url",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


async def test_demo_pays_the_pool_out_and_a_second_run_moves_no_money(demo_database: str) -> None:
    first = _demo(demo_database)
    assert first.returncode == 0, f"demo failed:\n{first.stdout}\n{first.stderr}"
    assert "ledger check: ok" in first.stdout, first.stdout
    assert "pool balance now 0.00" in first.stdout, first.stdout
    posted = next(line for line in first.stdout.splitlines() if line.startswith("ledger:"))
    assert posted.startswith("ledger: ") and " 0 replayed" in posted, posted

    again = _demo(demo_database)
    assert again.returncode == 0, f"second demo failed:\n{again.stdout}\n{again.stderr}"
    replay = next(line for line in again.stdout.splitlines() if line.startswith("ledger:"))
    assert replay.startswith("ledger: 0 transfers posted"), f"a replay moved money: {replay}"
