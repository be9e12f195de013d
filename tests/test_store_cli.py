"""`feltd admin player` and `feltd admin ledger check`, run as the operator runs them: a
subprocess with ``--database-url``, against a database a whole simulated tournament went through."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from engine.tournament.config import load_config
from engine.tournament.simulation import run_tournament
from server.store.connection import open_store
from server.store.databases import create_database, drop_database


@pytest.fixture
async def cli_db(postgres_server_url: str) -> AsyncIterator[str]:
    url = await create_database(postgres_server_url, "feltd_test_cli")
    try:
        yield url
    finally:
        await drop_database(postgres_server_url, url)


def feltd(repo_root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli.main", *args],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_admin_player_add_prints_the_token_once_and_show_reads_the_balance(
    cli_db: str, repo_root: Path
) -> None:
    added = feltd(repo_root, "admin", "player", "add", "alice", "--deposit", "2500", "--database-url", cli_db)
    assert added.returncode == 0, f"expected exit 0, got {added.returncode}: {added.stderr}"
    token = next(line.split(": ", 1)[1] for line in added.stdout.splitlines() if line.startswith("token: "))
    assert "deposit: 2500 cents" in added.stdout, added.stdout

    shown = feltd(repo_root, "admin", "player", "show", "alice", "--database-url", cli_db)
    assert shown.returncode == 0, shown.stderr
    fields = dict(line.split(": ", 1) for line in shown.stdout.splitlines())
    assert fields["name"] == "alice" and fields["balance"] == "2500", fields
    assert token not in shown.stdout, "the token must never be shown again"

    async with open_store(cli_db) as store:
        player = await store.players.authenticate(token)
        assert player is not None and player.name == "alice", player
        stored = await store.pool.fetchval("SELECT token_hash FROM players WHERE name = 'alice'")
        assert token.encode() not in bytes(stored), "the token is stored only hashed"

    for attempt in range(2):  # a retried deposit with the same key moves the money once
        deposited = feltd(
            repo_root,
            "admin",
            "player",
            "deposit",
            "alice",
            "500",
            "--key",
            "desk:1",
            "--database-url",
            cli_db,
        )
        assert deposited.returncode == 0, deposited.stderr
        assert ("replayed" in deposited.stdout) == (attempt == 1), deposited.stdout
    shown = feltd(repo_root, "admin", "player", "show", "alice", "--database-url", cli_db)
    assert "balance: 3000" in shown.stdout, shown.stdout

    again = feltd(repo_root, "admin", "player", "add", "alice", "--database-url", cli_db)
    assert again.returncode == 1 and "exists" in again.stderr, (again.returncode, again.stderr)
    missing = feltd(repo_root, "admin", "player", "show", "nobody", "--database-url", cli_db)
    assert missing.returncode == 1 and "no player is named 'nobody'" in missing.stderr, missing.stderr


async def test_admin_ledger_check_passes_after_a_tournament_and_fails_after_corruption(
    cli_db: str, repo_root: Path
) -> None:
    result = run_tournament(load_config(repo_root / "examples" / "turbo-rebuy.toml"), 40, seed=11)
    transfers = list(result.transfers)
    async with open_store(cli_db) as store:
        for start in range(0, len(transfers), 25):
            await store.ledger.post(transfers[start : start + 25])

    ok = feltd(repo_root, "admin", "ledger", "check", "--database-url", cli_db)
    assert ok.returncode == 0, f"expected a sound ledger, got exit {ok.returncode}: {ok.stderr}"
    assert f"ledger ok: {len(transfers)} transactions" in ok.stdout, ok.stdout

    # Corrupt one entry by hand, going around the triggers as only a superuser can.
    conn = await asyncpg.connect(cli_db, timeout=30)
    try:
        await conn.execute("SET session_replication_role = replica")
        entry = await conn.fetchrow(
            "UPDATE ledger_entries SET amount = amount + 7 WHERE id = (SELECT min(id) FROM ledger_entries) "
            "RETURNING transaction_id, account"
        )
    finally:
        await conn.close()
    assert entry is not None
    broken = feltd(repo_root, "admin", "ledger", "check", "--database-url", cli_db)
    assert broken.returncode == 1, f"expected exit 1 for a corrupt ledger, got {broken.returncode}"
    assert f"transaction {entry['transaction_id']} " in broken.stderr, broken.stderr
    assert f"account {entry['account']} has balance" in broken.stderr, broken.stderr


async def test_admin_ledger_check_fails_on_a_balance_edited_by_hand(cli_db: str, repo_root: Path) -> None:
    added = feltd(repo_root, "admin", "player", "add", "bob", "--deposit", "100", "--database-url", cli_db)
    assert added.returncode == 0, added.stderr
    conn = await asyncpg.connect(cli_db, timeout=30)
    try:
        await conn.execute("SET session_replication_role = replica")
        await conn.execute("UPDATE accounts SET balance = 1000000 WHERE name LIKE 'player:%'")
    finally:
        await conn.close()
    broken = feltd(repo_root, "admin", "ledger", "check", "--database-url", cli_db)
    assert broken.returncode == 1, broken.stdout
    assert "has balance 1000000, but its entries sum to 100" in broken.stderr, broken.stderr
    assert "all balances sum to" in broken.stderr, broken.stderr


def test_without_a_database_url_the_embedded_server_keeps_data_across_restarts(repo_root: Path) -> None:
    """No DATABASE_URL: each command starts the embedded PostgreSQL in --data-dir, stops it on exit,
    and the next command finds what the last one wrote."""
    data_dir = Path(tempfile.mkdtemp(prefix="feltd-embedded-"))
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    try:

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            command = [sys.executable, "-m", "server.cli.main", *args, "--data-dir", str(data_dir)]
            return subprocess.run(
                command, cwd=repo_root, env=env, capture_output=True, text=True, timeout=180
            )

        added = run("admin", "player", "add", "emma", "--deposit", "42")
        assert added.returncode == 0, f"expected exit 0, got {added.returncode}: {added.stderr}"
        assert not (data_dir / "pg" / "postmaster.pid").exists(), "the embedded server must stop on exit"
        shown = run("admin", "player", "show", "emma")
        assert shown.returncode == 0 and "balance: 42" in shown.stdout, (shown.stdout, shown.stderr)
        checked = run("admin", "ledger", "check")
        assert checked.returncode == 0 and "ledger ok: 1 transactions" in checked.stdout, checked.stdout
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
