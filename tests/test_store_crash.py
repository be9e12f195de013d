"""Crash safety (DESIGN invariant 5, CRASH-1): a process posting money and snapshots is SIGKILLed
mid-stream; after a restart every acknowledged transfer and snapshot is there, nothing is
half-applied, and the latest state loads."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from engine.tournament.transfers import player_account
from server.store.connection import open_store
from server.store.databases import create_database, drop_database

# The child: 4 concurrent writers, each posting a buy-in + fee batch and then a snapshot batch of
# its tables, printing what the database acknowledged (the commit returned) as soon as it did.
CHILD = r"""
import asyncio, sys
from datetime import UTC, datetime
from engine.tournament.transfers import CASHIER, HOUSE, Reason, Transfer, player_account, pool_account
from server.store.connection import open_store
from server.store.snapshots import SeatSnapshot, TableSnapshot

async def writer(store, w):
    n = 0
    while True:
        n += 1
        player = player_account(f"w{w}")
        keys = (f"crash:{w}:{n}:pool", f"crash:{w}:{n}:fee")
        await store.ledger.post([Transfer(player, pool_account("crash"), 100, keys[0], Reason.BUY_IN),
                                 Transfer(player, HOUSE, 10, keys[1], Reason.FEE)])
        print("ack", *keys, flush=True)
        snaps = [TableSnapshot("crash", w * 1000 + t, n, 1 + n // 50, n % 9 + 1,
                               tuple(SeatSnapshot(s, f"w{w}t{t}s{s}", 1_000 + n * s, 2)
                                     for s in range(1, 10)),
                               datetime.now(UTC)) for t in range(25)]
        saved = await store.snapshots.save(snaps)
        print("snap", saved.batch_id, w, n, flush=True)

async def main(url):
    async with open_store(url, max_size=6) as store:
        await store.ledger.post([Transfer(CASHIER, player_account(f"w{w}"), 10**9, f"crash:fund:{w}",
                                          Reason.DEPOSIT) for w in range(4)])
        print("ready", flush=True)
        await asyncio.gather(*(writer(store, w) for w in range(4)))

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture
async def crash_db(postgres_server_url: str) -> AsyncIterator[str]:
    url = await create_database(postgres_server_url, "feltd_test_crash")
    try:
        yield url
    finally:
        await drop_database(postgres_server_url, url)


def run_and_kill(url: str, repo_root: Path, acks_before_kill: int) -> list[str]:
    """Start the child, SIGKILL it once it has acknowledged enough, return every line it printed."""
    env = {**os.environ, "PYTHONPATH": str(repo_root)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, url],
        cwd=repo_root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            lines.append(line.strip())
            if sum(1 for x in lines if x.startswith("ack")) >= acks_before_kill:
                child.send_signal(signal.SIGKILL)
                break
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGKILL)
        rest, err = child.communicate(timeout=30)
    lines.extend(x.strip() for x in rest.splitlines() if x.strip())
    assert child.returncode == -signal.SIGKILL, (
        f"the child should die of SIGKILL, got {child.returncode}: {err}"
    )
    return lines


async def test_crash_1_sigkill_mid_stream_loses_nothing_acknowledged(crash_db: str, repo_root: Path) -> None:
    lines = await asyncio.to_thread(run_and_kill, crash_db, repo_root, 150)
    acked = [key for line in lines if line.startswith("ack") for key in line.split()[1:]]
    snaps = [tuple(int(x) for x in line.split()[1:]) for line in lines if line.startswith("snap")]
    assert len(acked) >= 300, f"expected 150 acknowledged batches before the kill, got {len(acked) // 2}"

    async with open_store(crash_db) as store:
        async with store.pool.acquire() as conn:
            found = {
                row["idempotency_key"]
                for row in await conn.fetch(
                    "SELECT idempotency_key FROM ledger_transactions WHERE idempotency_key = ANY($1::text[])",
                    acked,
                )
            }
            shapes = await conn.fetch(
                """SELECT t.idempotency_key, count(e.id) AS n, sum(e.amount) AS total
                     FROM ledger_transactions t LEFT JOIN ledger_entries e ON e.transaction_id = t.id
                    GROUP BY t.idempotency_key"""
            )
        missing = set(acked) - found
        assert not missing, f"acknowledged transfers lost in the crash: {sorted(missing)[:5]}"
        broken = [
            (r["idempotency_key"], r["n"], r["total"]) for r in shapes if r["n"] != 2 or r["total"] != 0
        ]
        assert not broken, f"half-applied transactions (key, entries, sum): {broken[:5]}"
        report = await store.ledger.check()
        assert report.ok, report.problems
        # Batch atomicity: buy-in and fee of one batch are both there or both missing.
        keys = {r["idempotency_key"] for r in shapes}
        halves = [k for k in keys if k.endswith(":pool") and k[: -len("pool")] + "fee" not in keys]
        assert not halves, f"batches with the buy-in but not the fee: {halves[:5]}"
        balances = await store.ledger.balances([player_account(f"w{w}") for w in range(4)])
        for w in range(4):
            batches = sum(1 for k in keys if k.startswith(f"crash:{w}:") and k.endswith(":fee"))
            spent = 10**9 - balances[player_account(f"w{w}")]
            assert spent == 110 * batches, f"writer {w}: expected {110 * batches} spent, got {spent}"

        state = await store.snapshots.load_latest_state("crash")
        assert state is not None, "no snapshot survived"
        assert len(state.tables) == 100, f"expected 100 tables in the latest state, got {len(state.tables)}"
        hands = {table.table_id: table.hand_number for table in state.tables}
        for _batch, w, n in snaps:
            for t in range(25):
                latest = hands[w * 1000 + t]
                assert latest >= n, f"table {w}-{t}: hand {n} was acknowledged, latest loaded is {latest}"
