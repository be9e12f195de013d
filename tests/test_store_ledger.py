"""The ledger against a real PostgreSQL: concurrency, idempotency, funds, and the database's own
guards (raw SQL that breaks an invariant is refused by the database, not by our Python)."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.tournament.config import load_config
from engine.tournament.simulation import run_tournament
from engine.tournament.transfers import (
    CASHIER,
    HOUSE,
    Reason,
    Transfer,
    net_by_account,
    player_account,
    pool_account,
)
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database
from server.store.errors import DuplicateKey, IdempotencyConflict, InsufficientFunds, UnknownAccount
from server.store.ledger import can_post, first_shortfall, post_in_transaction


@pytest.fixture
async def store(postgres_server_url: str) -> AsyncIterator[Store]:
    """A store on a database of its own, so whole-ledger checks see only this test's rows."""
    url = await create_database(postgres_server_url, "feltd_test_ledger")
    try:
        async with open_store(url, max_size=25) as opened:
            yield opened
    finally:
        await drop_database(postgres_server_url, url)


def deposit(player: str, cents: int, key: str | None = None) -> Transfer:
    return Transfer(
        CASHIER, player_account(player), cents, key or f"deposit:{player}:{uuid.uuid4().hex}", Reason.DEPOSIT
    )


def buy_in(tid: str, player: str, n: int, to_pool: int, fee: int) -> list[Transfer]:
    return [
        Transfer(
            player_account(player),
            pool_account(tid),
            to_pool,
            f"{tid}:{player}:buy-in:{n}:pool",
            Reason.BUY_IN,
        ),
        Transfer(player_account(player), HOUSE, fee, f"{tid}:{player}:buy-in:{n}:fee", Reason.FEE),
    ]


def generated_tournament(rng: random.Random, tid: str, players: int) -> list[list[Transfer]]:
    """A tournament's money as batches: deposits, buy-ins + fees, rebuys, an overlay from the house,
    and prizes that empty the pool; every amount an integer number of cents."""
    names = [f"{tid}-p{i}" for i in range(players)]
    batches: list[list[Transfer]] = [[deposit(p, 50_000, f"{tid}:deposit:{p}") for p in names]]
    pool = 0
    for p in names:
        batches.append(buy_in(tid, p, 1, 1_000, 90))
        pool += 1_000
    for p in rng.sample(names, players // 3):
        batches.append(
            [Transfer(player_account(p), pool_account(tid), 1_000, f"{tid}:{p}:rebuy:1:pool", Reason.REBUY)]
        )
        pool += 1_000
    guarantee = pool + 2_500
    batches.append([Transfer(HOUSE, pool_account(tid), guarantee - pool, f"{tid}:overlay", Reason.OVERLAY)])
    paid = names[: max(2, players // 5)]
    weights = [rng.randint(1, 10) for _ in paid]
    prizes = [guarantee * w // sum(weights) for w in weights]
    prizes[0] += guarantee - sum(prizes)
    batches.append(
        [
            Transfer(pool_account(tid), player_account(p), prize, f"{tid}:prize:{p}:{place}", Reason.PRIZE)
            for place, (p, prize) in enumerate(zip(paid, prizes, strict=True), start=1)
            if prize
        ]
    )
    return batches


async def test_reg_1_fifty_concurrent_buy_ins_exactly_ten_succeed(store: Store) -> None:
    """50 buy-in + fee batches race on one account that can afford exactly 10."""
    tid = f"race{uuid.uuid4().hex[:6]}"
    await store.ledger.post([deposit("racer", 10 * (1_000 + 90))])

    async def attempt(n: int) -> bool:
        try:
            await store.ledger.post(buy_in(tid, "racer", n, 1_000, 90))
        except InsufficientFunds:
            return False
        return True

    outcomes = await asyncio.gather(*(attempt(n) for n in range(50)))
    assert outcomes.count(True) == 10, f"expected 10 successes, got {outcomes.count(True)}"
    assert outcomes.count(False) == 40, f"expected 40 InsufficientFunds, got {outcomes.count(False)}"
    balances = await store.ledger.balances([player_account("racer"), pool_account(tid), HOUSE])
    assert balances == {player_account("racer"): 0, pool_account(tid): 10_000, HOUSE: 900}, balances
    report = await store.ledger.check()
    assert report.ok, report.problems


async def test_replaying_a_whole_tournament_twice_moves_money_once(store: Store) -> None:
    """Every transfer of a (generated) tournament posted twice leaves balances as after one pass."""
    rng = random.Random(5)
    batches = generated_tournament(rng, "replay", 30)
    for batch in batches:
        await store.ledger.post(batch)
    once = await store.ledger.balances()
    expected = net_by_account(t for batch in batches for t in batch)
    assert once == expected, f"balances after one pass: expected the transfers' net {expected}, got {once}"
    first_ids = {}
    for batch in batches:
        result = await store.ledger.post(batch)
        assert all(t.replayed for t in result.transactions), "a second pass moved money"
        first_ids.update({t.idempotency_key: t.transaction_id for t in result.transactions})
    # And once more in a single shuffled batch: still nothing moves.
    everything = [t for batch in batches for t in batch]
    rng.shuffle(everything)
    again = await store.ledger.post(everything)
    assert {t.idempotency_key: t.transaction_id for t in again.transactions} == first_ids
    assert await store.ledger.balances() == once, "replays changed a balance"
    report = await store.ledger.check()
    assert report.ok and report.transactions == len(everything), report


async def test_replaying_a_simulated_tournament_from_the_real_core_twice_moves_money_once(
    store: Store, repo_root: Path
) -> None:
    """The tournament core's own transfers (registration, rebuys, add-ons, prizes) from
    ``engine.tournament.simulation.run_tournament``, posted twice in different batchings."""
    result = run_tournament(load_config(repo_root / "examples" / "turbo-rebuy.toml"), 50, seed=7)
    transfers = list(result.transfers)
    reasons = {t.reason for t in transfers}
    assert {Reason.BUY_IN, Reason.FEE, Reason.REBUY, Reason.PRIZE} <= reasons, reasons
    for start in range(0, len(transfers), 10):
        await store.ledger.post(transfers[start : start + 10])
    once = await store.ledger.balances()
    expected = net_by_account(transfers)
    assert once == expected, "balances after one pass differ from the net of the core's transfers"
    assert once[pool_account(result.tournament_id)] == 0, "the pool is paid out in full"
    for start in range(0, len(transfers), 37):
        replay = await store.ledger.post(transfers[start : start + 37])
        assert not replay.posted, f"a replay moved money: {replay.posted[:3]}"
    assert await store.ledger.balances() == once
    report = await store.ledger.check()
    assert report.ok and report.transactions == len(transfers), report


async def test_partly_replayed_batch_posts_only_the_new_transfers(store: Store) -> None:
    first = [deposit("half", 500, "half:d1")]
    await store.ledger.post(first)
    result = await store.ledger.post([*first, deposit("half", 700, "half:d2")])
    assert [t.replayed for t in result.transactions] == [True, False], result
    assert await store.ledger.balance(player_account("half")) == 1_200


async def test_the_same_key_posted_concurrently_moves_money_once(store: Store) -> None:
    """Retries racing each other never pay twice, and a racer naming another movement under the
    same key is refused, even when the racers share no account (no lock orders them; only the
    key's uniqueness does)."""
    await store.ledger.post([deposit("twin", 100_000, "twin:fund"), deposit("other", 100_000, "other:fund")])
    for n in range(100):
        same = Transfer(player_account("twin"), pool_account("twins"), 10, f"twin:{n}", Reason.BUY_IN)
        other = Transfer(player_account("other"), pool_account("others"), 10, f"twin:{n}", Reason.BUY_IN)
        if n % 2:
            first, second = await asyncio.gather(store.ledger.post([same]), store.ledger.post([same]))
            ids = {first.transactions[0].transaction_id, second.transactions[0].transaction_id}
            flags = sorted([first.transactions[0].replayed, second.transactions[0].replayed])
            assert len(ids) == 1 and flags == [False, True], f"round {n}: expected one post and one replay"
            continue
        results = await asyncio.gather(
            store.ledger.post([same]), store.ledger.post([other]), return_exceptions=True
        )
        kinds = sorted(type(r).__name__ for r in results)
        assert kinds == ["IdempotencyConflict", "PostResult"], f"round {n}: expected one winner: {results}"
    balances = await store.ledger.balances([player_account("twin"), player_account("other")])
    assert sum(balances.values()) == 200_000 - 100 * 10, f"each key moves 10 cents once: {balances}"
    assert (await store.ledger.check()).ok


async def test_a_key_committed_while_a_racer_waits_on_it_is_compared_not_replayed(store: Store) -> None:
    """The racer passes the replay check before the key exists, waits on the key's unique index,
    and must still be refused once the holder commits a different movement under that key."""
    await store.ledger.post([deposit("holder", 1_000, "holder:fund"), deposit("racer", 1_000, "racer:fund")])
    held = Transfer(player_account("holder"), pool_account("held"), 10, "held:1", Reason.BUY_IN)
    racing = Transfer(player_account("racer"), pool_account("raced"), 10, "held:1", Reason.BUY_IN)
    async with store.pool.acquire() as conn:
        transaction = conn.transaction()
        await transaction.start()
        await post_in_transaction(conn, [held])
        race = asyncio.create_task(store.ledger.post([racing]))
        await asyncio.sleep(0.3)
        assert not race.done(), "the racer should be waiting on the uncommitted key"
        await transaction.commit()
    with pytest.raises(IdempotencyConflict, match="held:1"):
        await race
    assert await store.ledger.balances([player_account("holder"), player_account("racer")]) == {
        player_account("holder"): 990,
        player_account("racer"): 1_000,
    }


async def test_key_reused_for_another_movement_is_refused_and_nothing_posts(store: Store) -> None:
    await store.ledger.post([deposit("conflict", 500, "conflict:d1")])
    with pytest.raises(IdempotencyConflict, match="conflict:d1"):
        await store.ledger.post(
            [deposit("conflict", 1, "conflict:fresh"), deposit("conflict", 600, "conflict:d1")]
        )
    assert await store.ledger.balance(player_account("conflict")) == 500, "a refused batch moved money"


async def test_insufficient_funds_in_a_batch_has_no_partial_effect(store: Store) -> None:
    await store.ledger.post([deposit("short", 1_000)])
    batch = [
        Transfer(player_account("short"), pool_account("t"), 600, "short:1", Reason.BUY_IN),
        Transfer(player_account("short"), HOUSE, 600, "short:2", Reason.FEE),
    ]
    with pytest.raises(InsufficientFunds) as raised:
        await store.ledger.post(batch)
    got = (raised.value.account, raised.value.balance, raised.value.amount)
    assert got == (player_account("short"), 400, 600), got
    assert await store.ledger.balances([player_account("short"), pool_account("t")]) == {
        player_account("short"): 1_000,
        pool_account("t"): 0,
    }, "the first transfer of a refused batch posted"
    # The refused keys are free: a smaller retry with the same keys goes through.
    await store.ledger.post([batch[0]])


async def test_transfers_apply_in_order_within_a_batch(store: Store) -> None:
    """A pool can pay out what the same batch paid in, but not before it was paid in."""
    pay_in = Transfer(CASHIER, pool_account("order"), 100, "order:in", Reason.OVERLAY)
    pay_out = Transfer(pool_account("order"), player_account("o"), 100, "order:out", Reason.PRIZE)
    with pytest.raises(InsufficientFunds):
        await store.ledger.post([pay_out, pay_in])
    await store.ledger.post([pay_in, pay_out])
    assert await store.ledger.balance(player_account("o")) == 100


async def test_house_and_cashier_may_go_negative(store: Store) -> None:
    await store.ledger.post(
        [
            Transfer(HOUSE, pool_account("g"), 2_500, "g:overlay", Reason.OVERLAY),
            Transfer(CASHIER, player_account("g"), 10, "g:d", Reason.DEPOSIT),
        ]
    )
    assert await store.ledger.balances([HOUSE, CASHIER]) == {HOUSE: -2_500, CASHIER: -10}


def test_bad_batches_are_refused_before_the_database() -> None:
    twice = deposit("dup", 1, "same-key")
    assert not can_post([twice, twice])
    with pytest.raises(DuplicateKey):
        from server.store.ledger import verify_post

        verify_post([twice, twice])
    with pytest.raises(UnknownAccount, match="bank:1"):
        from server.store.ledger import verify_post

        verify_post([Transfer("bank:1", HOUSE, 1, "k", Reason.FEE)])
    assert first_shortfall([Transfer(player_account("x"), HOUSE, 5, "k", Reason.FEE)], {}) is not None
    assert not can_post([deposit("nul", 1, "key\x00")]), "PostgreSQL text cannot hold NUL"
    assert not can_post([deposit("\ud800", 1)]), "nor a lone surrogate"


async def _raw(store: Store, sql: str, *args: object) -> None:
    """As the database's owner: the server's own role may not write a ledger table at all."""
    conn = await asyncpg.connect(store.url)
    try:
        async with conn.transaction():
            await conn.execute(sql, *args)
    finally:
        await conn.close()


# An entry's running balance as the owner writing by hand would give it (the trigger checks it).
def _after(account: str, amount: int) -> str:
    return f"(SELECT coalesce(max(balance), 0) FROM accounts WHERE name = '{account}') + ({amount})"


async def test_database_refuses_a_transaction_that_does_not_sum_to_zero(store: Store) -> None:
    await store.ledger.post([deposit("raw", 1_000)])
    sql = """WITH t AS (INSERT INTO ledger_transactions (idempotency_key, reason)
                        VALUES ('raw:unbalanced', 'deposit') RETURNING id)
             INSERT INTO ledger_entries (transaction_id, account, amount, balance_after, hash)
             SELECT id, 'cashier', -100, {}, '\\x00'::bytea FROM t
             UNION ALL SELECT id, 'player:raw', 99, {}, '\\x00'::bytea FROM t""".format(
        _after("cashier", -100), _after("player:raw", 99)
    )
    with pytest.raises(asyncpg.exceptions.CheckViolationError, match="unbalanced"):
        await _raw(store, sql)
    # A lone transaction without entries is unbalanced too.
    with pytest.raises(asyncpg.exceptions.CheckViolationError, match="unbalanced"):
        await _raw(
            store, "INSERT INTO ledger_transactions (idempotency_key, reason) VALUES ('raw:empty', 'fee')"
        )
    # So is an extra entry slipped into an old, balanced transaction.
    with pytest.raises(asyncpg.exceptions.CheckViolationError, match="unbalanced"):
        await _raw(
            store,
            "INSERT INTO ledger_entries (transaction_id, account, amount, balance_after, hash) "
            f"VALUES (1, 'cashier', 5, {_after('cashier', 5)}, '\\x00'::bytea)",
        )
    assert (await store.ledger.check()).ok
    assert await store.ledger.balance(player_account("raw")) == 1_000


async def test_database_checks_the_zero_sum_after_every_insert_of_entries(store: Store) -> None:
    """Since migration 0006 a transaction's entries must sum to zero after each INSERT statement
    (plus the check at commit), so one entry per statement is refused even inside one database
    transaction that would balance by its end."""
    await store.ledger.post([deposit("late", 1_000, "late:d")])
    sql = """WITH t AS (INSERT INTO ledger_transactions (idempotency_key, reason)
                        VALUES ('late:split', 'deposit') RETURNING id)
             INSERT INTO ledger_entries (transaction_id, account, amount, balance_after, hash)
             SELECT id, 'cashier', -5, {}, '\\x00'::bytea FROM t""".format(_after("cashier", -5))
    with pytest.raises(asyncpg.exceptions.CheckViolationError, match="unbalanced: 1 entries summing to -5"):
        await _raw(
            store,
            sql + ";\n INSERT INTO ledger_entries (transaction_id, account, amount, balance_after, hash) "
            f"SELECT id, 'player:late', 5, {_after('player:late', 5)}, '\\x00'::bytea "
            "FROM ledger_transactions "
            "WHERE idempotency_key = 'late:split'",
        )
    assert await store.ledger.balance(player_account("late")) == 1_000
    assert (await store.ledger.check()).ok


async def test_database_refuses_an_account_name_that_does_not_match_its_kind(store: Store) -> None:
    refused = [("pool:x", "player"), ("player:", "player"), ("ticket:t1", "ticket"), ("bank", "house")]
    for name, kind in refused:
        with pytest.raises(asyncpg.exceptions.CheckViolationError, match="does not match its kind"):
            await _raw(store, "INSERT INTO accounts (name, kind) VALUES ($1, $2)", name, kind)
    await _raw(store, "INSERT INTO accounts (name, kind) VALUES ('ticket:t1:p1', 'ticket')")
    with pytest.raises(asyncpg.exceptions.CheckViolationError, match="does not match its kind"):
        await _raw(store, "UPDATE accounts SET kind = 'pool' WHERE name = 'ticket:t1:p1'")


async def test_database_refuses_a_negative_player_balance(store: Store) -> None:
    await store.ledger.post([deposit("neg", 100)])
    sql = """WITH t AS (INSERT INTO ledger_transactions (idempotency_key, reason)
                        VALUES ('raw:overdraw', 'buy-in') RETURNING id)
             INSERT INTO ledger_entries (transaction_id, account, amount, balance_after, hash)
             SELECT id, 'player:neg', -101, {}, '\\x00'::bytea FROM t
             UNION ALL SELECT id, 'pool:neg', 101, {}, '\\x00'::bytea FROM t""".format(
        _after("player:neg", -101), _after("pool:neg", 101)
    )
    await _raw(store, "INSERT INTO accounts (name, kind) VALUES ('pool:neg', 'pool')")
    with pytest.raises(asyncpg.exceptions.CheckViolationError, match="accounts_balance_not_negative"):
        await _raw(store, sql)
    assert await store.ledger.balance(player_account("neg")) == 100


async def test_database_keeps_balances_equal_to_entries_and_the_ledger_append_only(store: Store) -> None:
    await store.ledger.post([deposit("guard", 100)])
    refused = asyncpg.exceptions.IntegrityConstraintViolationError
    with pytest.raises(refused, match="only through ledger entries"):
        await _raw(store, "UPDATE accounts SET balance = balance + 1 WHERE name = 'player:guard'")
    with pytest.raises(asyncpg.exceptions.IntegrityConstraintViolationError, match="append-only"):
        await _raw(store, "UPDATE ledger_entries SET amount = amount + 1")
    with pytest.raises(asyncpg.exceptions.IntegrityConstraintViolationError, match="append-only"):
        await _raw(store, "DELETE FROM ledger_transactions")
    assert (await store.ledger.check()).ok


BATCHES = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "pool", HOUSE]),
            st.sampled_from(["a", "b", "pool", HOUSE]),
            st.integers(1, 400),
        ),
        min_size=1,
        max_size=4,
    ),
    min_size=1,
    max_size=8,
)


def test_random_batches_match_a_model_and_keep_the_ledger_sound(postgres_server_url: str) -> None:
    """Whatever batches arrive, each posts whole or not at all, and balances match a plain model."""
    loop = asyncio.new_event_loop()
    url = loop.run_until_complete(create_database(postgres_server_url, "feltd_test_ledger_h"))
    opened = open_store(url, max_size=2)
    store = loop.run_until_complete(opened.__aenter__())
    examples = iter(range(10**6))

    async def scenario(batches: list[list[tuple[str, str, int]]]) -> None:
        run = next(examples)

        def account(short: str) -> str:
            # Fresh accounts per example, so examples share the database but not balances.
            return {
                "a": player_account(f"{run}a"),
                "b": player_account(f"{run}b"),
                "pool": pool_account(f"{run}t"),
            }.get(short, short)

        model = {account(n): 0 for n in ("a", "b", "pool")}
        await store.ledger.post([deposit(f"{run}a", 500, f"h:{run}:seed")])
        model[account("a")] = 500
        house = await store.ledger.balance(HOUSE)
        model[HOUSE] = house
        for b, batch in enumerate(batches):
            transfers = [
                Transfer(account(s), account(t), amount, f"h:{run}:{b}:{i}", Reason.DEAL)
                for i, (s, t, amount) in enumerate(batch)
                if s != t
            ]
            if not transfers:
                continue
            expected_failure = first_shortfall(transfers, model)
            try:
                await store.ledger.post(transfers)
            except InsufficientFunds:
                assert expected_failure is not None, f"batch {b} refused, the model accepts it"
                continue
            assert expected_failure is None, f"batch {b} posted, the model refuses it"
            for name, delta in net_by_account(transfers).items():
                model[name] = model.get(name, 0) + delta
        got = await store.ledger.balances(model)
        assert got == model, f"expected {model}, got {got}"

    @settings(max_examples=40, deadline=None)
    @given(BATCHES)
    def check(batches: list[list[tuple[str, str, int]]]) -> None:
        loop.run_until_complete(scenario(batches))

    try:
        check()
        report = loop.run_until_complete(store.ledger.check())
        assert report.ok, report.problems
    finally:
        loop.run_until_complete(opened.__aexit__(None, None, None))
        loop.run_until_complete(drop_database(postgres_server_url, url))
        loop.close()


async def test_the_database_reason_type_is_the_engines_reason_enum(store: Store) -> None:
    rows = await store.pool.fetch("SELECT unnest(enum_range(NULL::ledger_reason))::text AS reason")
    assert [r["reason"] for r in rows] == [str(r) for r in Reason], "migrations and Reason disagree"


async def test_payments_from_counts_each_payment_of_one_reason_out_of_one_account(store: Store) -> None:
    """What the crash campaign's double-payment audit reads: prizes out of one pool, per winner."""
    await store.ledger.post([deposit("p1", 5_000), deposit("p2", 5_000)])
    pool = pool_account("paid")
    await store.ledger.post(
        [
            Transfer(player_account("p1"), pool, 3_000, "paid:buy-in:p1", Reason.BUY_IN),
            Transfer(player_account("p2"), pool, 3_000, "paid:buy-in:p2", Reason.BUY_IN),
            Transfer(pool, player_account("p1"), 1_000, "paid:prize:p1:1", Reason.PRIZE),
            Transfer(pool, player_account("p1"), 1_000, "paid:prize:p1:2", Reason.PRIZE),
            Transfer(pool, player_account("p2"), 2_000, "paid:prize:p2:1", Reason.PRIZE),
            Transfer(pool, player_account("p2"), 500, "paid:refund:p2", Reason.REFUND),
        ]
    )
    assert await store.ledger.payments_from(pool, Reason.PRIZE) == {
        player_account("p1"): 2,
        player_account("p2"): 1,
    }
    assert await store.ledger.payments_from(pool, Reason.REFUND) == {player_account("p2"): 1}
    assert await store.ledger.payments_from(pool_account("other"), Reason.PRIZE) == {}
