"""The ledger findings of issue 12, each a named test: all-or-nothing batches under a race, least
privilege for the server's role, tamper evidence that `feltd admin ledger check` reports, one
caller's bad transfer failing only that caller, and migrations that refuse a history they
cannot trust."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from engine.tournament.transfers import CASHIER, HOUSE, Reason, Transfer, player_account
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database
from server.store.errors import (
    IdempotencyConflict,
    InsufficientFunds,
    InvalidKey,
    InvalidTransfer,
    MigrationHistoryError,
    StoreException,
)
from server.store.ledger import check_on
from server.store.ledger_writer import LedgerWriter
from server.store.migrations import Migration, apply_migrations, load_migrations


@pytest.fixture
async def store(postgres_server_url: str) -> AsyncIterator[Store]:
    url = await create_database(postgres_server_url, "feltd_test_hardening")
    try:
        async with open_store(url, max_size=4) as opened:
            yield opened
    finally:
        await drop_database(postgres_server_url, url)


def deposit(player: str, cents: int, key: str | None = None) -> Transfer:
    return Transfer(
        CASHIER, player_account(player), cents, key or f"dep:{player}:{uuid.uuid4().hex}", Reason.DEPOSIT
    )


async def as_server_role(store: Store) -> asyncpg.Connection:
    """A connection logged in as the pool is: the server's restricted role."""
    assert store.role is not None
    return await asyncpg.connect(store.url, user=store.role.name, password=store.role.password)


async def test_a_batch_is_all_or_nothing_when_a_racing_post_takes_its_second_key(store: Store) -> None:
    await store.ledger.post([deposit("race-a", 1_000)])
    first = Transfer(player_account("race-a"), player_account("race-b"), 100, "race:1", Reason.DEPOSIT)
    second = Transfer(player_account("race-a"), player_account("race-b"), 50, "race:2", Reason.DEPOSIT)
    racer = await as_server_role(store)
    watcher = await as_server_role(store)
    try:
        # The racer posts another movement (other accounts, so no account lock is shared) under
        # the second key and holds its transaction open.
        held = racer.transaction()
        await held.start()
        await racer.fetch(
            "SELECT * FROM ledger_post($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])",
            ["race:2"],
            ["deposit"],
            [CASHIER],
            [player_account("race-c")],
            [7],
        )
        posting = asyncio.create_task(store.ledger.post([first, second]))
        # Wait until our post has passed its checks and waits on the racer's key.
        for _ in range(500):
            waiting = await watcher.fetchval(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND query LIKE '%ledger_post%'"
            )
            if waiting:
                break
            await asyncio.sleep(0.02)
        assert waiting, "our post never waited on the racer's key"
        await held.commit()
        with pytest.raises(IdempotencyConflict, match="race:2"):
            await posting
    finally:
        await racer.close()
        await watcher.close()
    # Nothing of the batch stayed: the first transfer was not committed either.
    assert await store.ledger.balances([player_account("race-a"), player_account("race-b")]) == {
        player_account("race-a"): 1_000,
        player_account("race-b"): 0,
    }
    keys = await store.pool.fetch(
        "SELECT idempotency_key FROM ledger_transactions WHERE idempotency_key LIKE 'race:%'"
    )
    assert [r["idempotency_key"] for r in keys] == ["race:2"]
    # The retry under the same keys is refused the same way; under a new second key it posts once.
    with pytest.raises(IdempotencyConflict):
        await store.ledger.post([first, second])
    await store.ledger.post([first, Transfer(second.source, second.target, 50, "race:2b", Reason.DEPOSIT)])
    assert await store.ledger.balance(player_account("race-b")) == 150
    assert (await store.ledger.check()).ok


@pytest.mark.parametrize("same", [True, False], ids=["same movement", "another movement"])
async def test_a_single_post_waiting_on_a_racing_key_is_answered_as_its_replay_or_conflict(
    store: Store, same: bool
) -> None:
    """A single transfer whose key a racing post commits while this one waits: the same movement
    is its replay at once, another one its conflict; either way nothing of it is posted."""
    await store.ledger.post([deposit("solo-a", 1_000)])
    mine = Transfer(player_account("solo-a"), player_account("solo-b"), 100, "solo:1", Reason.DEPOSIT)
    theirs = mine if same else Transfer(CASHIER, player_account("solo-c"), 7, "solo:1", Reason.DEPOSIT)
    racer = await as_server_role(store)
    watcher = await as_server_role(store)
    try:
        held = racer.transaction()
        await held.start()
        racing = await racer.fetch(
            "SELECT * FROM ledger_post($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])",
            [theirs.idempotency_key],
            [str(theirs.reason)],
            [theirs.source],
            [theirs.target],
            [theirs.amount],
        )
        # (The same movement shares the racer's account locks, another one only its key.)
        posting = asyncio.create_task(store.ledger.post([mine]))
        for _ in range(500):
            waiting = await watcher.fetchval(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND query LIKE '%ledger_post%'"
            )
            if waiting:
                break
            await asyncio.sleep(0.02)
        assert waiting, "our post never waited on the racer"
        await held.commit()
        if same:
            result = await posting
            assert [(t.transaction_id, t.replayed) for t in result.transactions] == [
                (racing[0]["out_id"], True)
            ]
        else:
            with pytest.raises(IdempotencyConflict, match="solo:1"):
                await posting
    finally:
        await racer.close()
        await watcher.close()
    assert await store.ledger.balance(player_account("solo-b")) == (100 if same else 0)
    assert (
        await store.pool.fetchval("SELECT count(*) FROM ledger_transactions WHERE idempotency_key = 'solo:1'")
        == 1
    )
    assert (await store.ledger.check()).ok


async def test_a_refused_first_post_leaves_an_empty_ledger_that_checks_out(store: Store) -> None:
    """`ledger check` takes transaction ids handed out on an empty ledger for a TRUNCATE: a post
    refused for want of funds must not draw one."""
    with pytest.raises(InsufficientFunds):
        await store.ledger.post([Transfer(player_account("broke"), HOUSE, 5, "broke:1", Reason.FEE)])
    assert (
        await store.pool.fetchval(
            "SELECT pg_sequence_last_value(pg_get_serial_sequence('ledger_transactions', 'id'))"
        )
        is None
    )
    assert (await store.ledger.check()).ok


ROLE_REFUSALS = {
    "insert an account with a balance": (
        "INSERT INTO accounts (name, kind, balance) VALUES ('player:mint', 'player', 1000000)"
    ),
    "insert entries into an existing transaction": (
        "INSERT INTO ledger_entries (transaction_id, account, amount, balance_after, hash) "
        "SELECT min(id), 'cashier', -5, 0, '\\x00'::bytea FROM ledger_transactions "
        "UNION ALL SELECT min(id), 'player:alice', 5, 0, '\\x00'::bytea FROM ledger_transactions"
    ),
    "update a balance": "UPDATE accounts SET balance = balance + 1 WHERE name = 'player:alice'",
    "truncate accounts": "TRUNCATE accounts CASCADE",
    "truncate ledger_transactions": "TRUNCATE ledger_transactions CASCADE",
    "truncate ledger_entries": "TRUNCATE ledger_entries",
    "create a function of one's own": (
        "CREATE FUNCTION mint() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN UPDATE accounts SET balance = balance + 1000; RETURN NULL; END $$"
    ),
    "create a trigger that updates a balance": (
        "CREATE TRIGGER mint AFTER INSERT ON ledger_entries "
        "FOR EACH STATEMENT EXECUTE FUNCTION ledger_apply_entries()"
    ),
    "disable the ledger's triggers": "ALTER TABLE ledger_entries DISABLE TRIGGER USER",
    "skip every trigger for the session": "SET session_replication_role = replica",
    "call a ledger function other than ledger_post": "SELECT ledger_link(NULL, 1, 'k', 'house', 1, 1)",
    "call ledger_post's replay lookup": (
        "SELECT * FROM ledger_replays(ARRAY['k'], ARRAY['deposit'], ARRAY['cashier'], ARRAY['house'], "
        "ARRAY[1::bigint])"
    ),
}


@pytest.mark.parametrize("what", sorted(ROLE_REFUSALS))
async def test_the_servers_role_is_refused(store: Store, what: str) -> None:
    await store.ledger.post([deposit("alice", 100)])
    conn = await as_server_role(store)
    try:
        with pytest.raises(asyncpg.exceptions.InsufficientPrivilegeError):
            await conn.execute(ROLE_REFUSALS[what])
        # Reading and posting through the function are what it may do.
        assert await conn.fetchval("SELECT balance FROM accounts WHERE name = 'player:alice'") == 100
    finally:
        await conn.close()
    assert await store.ledger.balance(player_account("alice")) == 100
    assert (await store.ledger.check()).ok


# Each tamper, as a superuser can do it (going around the triggers where they would refuse).
TAMPERS = {
    # A balanced pair slipped into an old transaction, with the running balances the trigger
    # expects: the triggers accept it, only the chain and the entry count give it away.
    "appended entries": """
        INSERT INTO ledger_entries (transaction_id, account, amount, balance_after, hash)
        SELECT t.id, 'player:alice', 500,
               (SELECT balance FROM accounts WHERE name = 'player:alice') + 500, '\\x01'::bytea
          FROM ledger_transactions AS t WHERE t.idempotency_key = 'seed:alice'
        UNION ALL
        SELECT t.id, 'house', -500, (SELECT balance FROM accounts WHERE name = 'house') - 500, '\\x02'::bytea
          FROM ledger_transactions AS t WHERE t.idempotency_key = 'seed:alice'""",
    "minted balance": """
        SET session_replication_role = replica;
        UPDATE accounts SET balance = balance + 1000000 WHERE name = 'player:alice'""",
    "truncated tables": "TRUNCATE ledger_entries, ledger_transactions, accounts",
    # Amounts, running balances and balances all edited consistently (sums still agree): only
    # the hash chain tells.
    "forged chain entry": """
        SET session_replication_role = replica;
        UPDATE ledger_entries SET amount = amount - 900, balance_after = balance_after - 900
         WHERE amount < 0
           AND transaction_id = (SELECT id FROM ledger_transactions WHERE idempotency_key = 'seed:mallory');
        UPDATE ledger_entries SET amount = amount + 900, balance_after = balance_after + 900
         WHERE amount > 0
           AND transaction_id = (SELECT id FROM ledger_transactions WHERE idempotency_key = 'seed:mallory');
        UPDATE accounts SET balance = balance - 900 WHERE name = 'cashier';
        UPDATE accounts SET balance = balance + 900 WHERE name = 'player:mallory'""",
}
VERDICTS = {
    "appended entries": "has 4 entries",
    "minted balance": "has balance",
    "truncated tables": "were emptied (TRUNCATE)",
    "forged chain entry": "does not recompute as the next link of its chain",
}


CHECK = [sys.executable, "-m", "server.cli.main", "admin", "ledger", "check"]


def admin_ledger_check(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli.main", "admin", "ledger", "check", "--database-url", url],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
async def test_a_tamper_is_refused_to_the_servers_role_and_detected_when_a_superuser_does_it(
    store: Store, tamper: str
) -> None:
    await store.ledger.post(
        [
            deposit("alice", 10_000, "seed:alice"),
            Transfer(player_account("alice"), HOUSE, 250, "seed:fee", Reason.FEE),
            deposit("mallory", 100, "seed:mallory"),
        ]
    )
    ok = admin_ledger_check(store.url)
    assert ok.returncode == 0, ok.stderr

    conn = await as_server_role(store)
    try:
        with pytest.raises(asyncpg.exceptions.InsufficientPrivilegeError):
            await conn.execute(TAMPERS[tamper])
    finally:
        await conn.close()
    assert admin_ledger_check(store.url).returncode == 0, "the refused tamper changed nothing"

    superuser = await asyncpg.connect(store.url)
    try:
        assert await superuser.fetchval("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        await superuser.execute(TAMPERS[tamper])
    finally:
        await superuser.close()
    verdict = admin_ledger_check(store.url)
    print(
        f"{tamper}: as {store.role.name if store.role else '?'} refused; "
        f"as superuser exit {verdict.returncode}:"
    )
    print(verdict.stderr.rstrip())
    assert verdict.returncode == 1, (verdict.stdout, verdict.stderr)
    assert VERDICTS[tamper] in verdict.stderr, verdict.stderr
    assert all(len(line) < 300 for line in verdict.stderr.splitlines()), "one line per reason"


async def test_one_callers_bad_transfer_fails_only_that_caller_in_a_writer_batch(store: Store) -> None:
    await store.ledger.post([Transfer(HOUSE, player_account("rich"), 2**62, "iso:rich", Reason.DEPOSIT)])
    writer = LedgerWriter(store.ledger, max_wait_s=0.05)
    good = [[deposit(f"iso{i}", 10 + i)] for i in range(6)]
    bad: dict[str, list[Transfer]] = {
        "amount over 2^63": [Transfer(CASHIER, player_account("big"), 2**63, "iso:big", Reason.DEPOSIT)],
        "key too long for the index": [deposit("long", 1, "k" * 3000)],
        "unknown reason": [Transfer(CASHIER, player_account("why"), 1, "iso:why", "jackpot")],  # type: ignore[arg-type]
        # Valid on its face; the database finds the balance would pass 64 bits.
        "balance past 64 bits": [Transfer(HOUSE, player_account("rich"), 2**62, "iso:rich2", Reason.DEPOSIT)],
    }
    batches = [*good[:3], *bad.values(), *good[3:]]
    results = await asyncio.gather(*(writer.post(b) for b in batches), return_exceptions=True)
    await writer.close()
    answers = dict(zip(["good0", "good1", "good2", *bad, "good3", "good4", "good5"], results, strict=True))
    for name, answer in answers.items():
        if name.startswith("good"):
            assert not isinstance(answer, BaseException), (name, answer)
        else:
            assert isinstance(answer, StoreException), (name, answer)
    assert isinstance(answers["amount over 2^63"], InvalidTransfer)
    assert isinstance(answers["key too long for the index"], InvalidKey)
    assert isinstance(answers["unknown reason"], InvalidTransfer)
    assert isinstance(answers["balance past 64 bits"], InvalidTransfer)
    assert writer.fallbacks >= 1, "the database's refusal came from a combined batch"
    balances = await store.ledger.balances([player_account(f"iso{i}") for i in range(6)])
    assert balances == {player_account(f"iso{i}"): 10 + i for i in range(6)}
    assert await store.ledger.balance(player_account("rich")) == 2**62
    assert (await store.ledger.check()).ok


async def test_migrations_refuse_an_edited_history(store: Store) -> None:
    shipped = load_migrations()
    edited = tuple(
        Migration(m.version, m.name, m.sql + "\n-- edited") if m.version == 3 else m for m in shipped
    )
    conn = await asyncpg.connect(store.url)
    try:
        with pytest.raises(MigrationHistoryError, match="0003_tournaments was edited after it was applied"):
            await apply_migrations(conn, edited)
        assert (await apply_migrations(conn, shipped)).applied == ()
    finally:
        await conn.close()


async def test_migrations_refuse_an_out_of_order_history(postgres_server_url: str) -> None:
    url = await create_database(postgres_server_url, "feltd_test_order")
    try:
        conn = await asyncpg.connect(url)
        try:
            one = Migration(1, "one", "CREATE TABLE one (n int)")
            two = Migration(2, "two", "CREATE TABLE two (n int)")
            three = Migration(3, "three", "CREATE TABLE three (n int)")
            assert (await apply_migrations(conn, (one, three))).applied == (1, 3)
            with pytest.raises(MigrationHistoryError, match="0002_two is older than the newest applied"):
                await apply_migrations(conn, (one, two, three))
            assert not await conn.fetchval("SELECT to_regclass('two') IS NOT NULL")
            with pytest.raises(MigrationHistoryError, match="no such file"):
                await apply_migrations(conn, (one, Migration(4, "four", "SELECT 1")))
        finally:
            await conn.close()
    finally:
        await drop_database(postgres_server_url, url)


async def test_migration_0011_chains_a_ledger_written_before_it(postgres_server_url: str) -> None:
    """A ledger posted by the old ledger_post gets running balances and links the check accepts,
    and posts after the upgrades (0011, then 0012's ledger_post at open) extend the chains."""
    url = await create_database(postgres_server_url, "feltd_test_upgrade")
    try:
        conn = await asyncpg.connect(url)
        try:
            shipped = load_migrations()
            await apply_migrations(conn, tuple(m for m in shipped if m.version <= 10))
            await conn.fetch(
                "SELECT * FROM ledger_post($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])",
                ["old:1", "old:2", "old:3"],
                ["deposit", "buy-in", "fee"],
                [CASHIER, player_account("old"), player_account("old")],
                [player_account("old"), "pool:t1", HOUSE],
                [1_000, 300, 30],
            )
            upgrade = tuple(m for m in shipped if m.version <= 11)  # later migrations are not this test's
            assert (await apply_migrations(conn, upgrade)).applied == (11,)
            report = await check_on(conn)
            assert report.ok and report.entries == 6, report
        finally:
            await conn.close()
        async with open_store(url) as opened:
            await opened.ledger.post([Transfer(player_account("old"), HOUSE, 70, "new:1", Reason.FEE)])
            assert await opened.ledger.balance(player_account("old")) == 600
            assert (await opened.ledger.check()).ok
    finally:
        await drop_database(postgres_server_url, url)


async def test_an_anchor_outside_the_database_shows_a_history_truncated_and_started_again(
    store: Store, tmp_path: Path
) -> None:
    """TRUNCATE ... RESTART IDENTITY leaves nothing inside the database to compare with; the seal
    `feltd admin ledger check --anchor` keeps in a file does."""
    await store.ledger.post([deposit("anchored", 500, "seed:anchored"), deposit("other", 200, "seed:other")])
    anchor = tmp_path / "ledger.anchor"

    def check() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*CHECK, "--anchor", str(anchor), "--database-url", store.url],
            cwd=Path(__file__).resolve().parent.parent,
            capture_output=True,
            text=True,
            timeout=120,
        )

    sealed = check()
    assert sealed.returncode == 0 and "2 transactions up to id 2 sealed" in sealed.stdout, sealed
    await store.ledger.post([deposit("anchored", 1, "later")])
    assert check().returncode == 0, "a ledger that grew extends its anchor"

    superuser = await asyncpg.connect(store.url)
    try:
        await superuser.execute("TRUNCATE ledger_entries, ledger_transactions, accounts RESTART IDENTITY")
    finally:
        await superuser.close()
    await store.ledger.post([deposit("anchored", 500, "seed:anchored"), deposit("mallory", 1_000_000)])
    assert admin_ledger_check(store.url).returncode == 0, "without the anchor nothing inside shows it"
    verdict = check()
    print(f"truncated, restarted and posted again: exit {verdict.returncode}: {verdict.stderr.strip()}")
    assert verdict.returncode == 1, verdict
    assert "the ledger does not extend its anchor" in verdict.stderr, verdict.stderr
