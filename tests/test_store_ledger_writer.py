"""The group-commit writer for money against a real PostgreSQL: many callers share one database
transaction, yet each gets exactly what ``Ledger.post`` would have given it."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from server.store.errors import DuplicateKey, IdempotencyConflict, InsufficientFunds, LedgerFailure
from server.store.ledger import Ledger, PostResult, first_shortfall
from server.store.ledger_writer import LedgerWriter


@pytest.fixture(scope="module")
async def store(postgres_server_url: str) -> AsyncIterator[Store]:
    """A store on a database of its own; tests use their own account names in it."""
    url = await create_database(postgres_server_url, "feltd_test_ledger_writer")
    try:
        async with open_store(url, max_size=6) as opened:
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


async def test_reg_1_fifty_concurrent_buy_ins_through_the_writer_exactly_ten_succeed(store: Store) -> None:
    """50 buy-in + fee batches from one account that can afford exactly 10, all through one writer:
    the combined batches are refused and split, and exactly 10 callers succeed."""
    tid = f"wrace{uuid.uuid4().hex[:6]}"
    racer = f"wracer{tid}"
    await store.ledger.post([deposit(racer, 10 * (1_000 + 90))])
    writer = LedgerWriter(store.ledger)

    async def attempt(n: int) -> bool:
        try:
            result = await writer.post(buy_in(tid, racer, n, 1_000, 90))
        except InsufficientFunds as refused:
            assert refused.account == player_account(racer), f"expected the racer, got {refused.account}"
            return False
        assert [t.replayed for t in result.transactions] == [False, False], result
        return True

    outcomes = await asyncio.gather(*(attempt(n) for n in range(50)))
    await writer.close()
    assert outcomes.count(True) == 10, f"expected 10 successes, got {outcomes.count(True)}"
    assert outcomes.count(False) == 40, f"expected 40 InsufficientFunds, got {outcomes.count(False)}"
    balances = await store.ledger.balances([player_account(racer), pool_account(tid)])
    assert balances == {player_account(racer): 0, pool_account(tid): 10_000}, balances
    assert writer.fallbacks >= 1, "the 50 arrive together, so some combined batch must have been refused"
    report = await store.ledger.check()
    assert report.ok, report.problems


async def test_many_callers_share_few_transactions_and_each_gets_its_own_result(store: Store) -> None:
    run = uuid.uuid4().hex[:6]
    writer = LedgerWriter(store.ledger)
    batches = [
        [deposit(f"w{run}-{i}", 100 + i, f"{run}:{i}:a"), deposit(f"w{run}-{i}", 1, f"{run}:{i}:b")]
        for i in range(200)
    ]
    results = await asyncio.gather(*(writer.post(batch) for batch in batches))
    await writer.close()
    for batch, result in zip(batches, results, strict=True):
        got = [t.idempotency_key for t in result.transactions]
        assert got == [t.idempotency_key for t in batch], f"expected the caller's keys in order, got {got}"
        assert not result.replayed
    assert writer.batches_written < 50, f"expected 200 callers in a few batches, got {writer.batches_written}"
    ids = [t.transaction_id for result in results for t in result.transactions]
    assert len(set(ids)) == 400, "every transfer is its own ledger transaction"
    balances = await store.ledger.balances([player_account(f"w{run}-{i}") for i in range(200)])
    expected = {player_account(f"w{run}-{i}"): 101 + i for i in range(200)}
    assert balances == expected, "each deposit posted once"


async def test_replays_through_the_writer_move_money_once(store: Store) -> None:
    """A generated tournament's money posted through the writer, then again (concurrently, in
    another batching): the second pass returns the first results and moves nothing."""
    rng = random.Random(11)
    tid = f"wrep{uuid.uuid4().hex[:6]}"
    names = [f"{tid}-p{i}" for i in range(30)]
    writer = LedgerWriter(store.ledger)
    deposits = [[deposit(p, 5_000, f"{tid}:deposit:{p}")] for p in names]
    buy_ins = [buy_in(tid, p, 1, 1_000, 90) for p in names]
    prizes = [
        [Transfer(pool_account(tid), player_account(p), 3_000, f"{tid}:prize:{p}", Reason.PRIZE)]
        for p in rng.sample(names, 10)
    ]
    first: dict[str, int] = {}
    for phase in (deposits, buy_ins, prizes):
        for result in await asyncio.gather(*(writer.post(batch) for batch in phase)):
            first.update({t.idempotency_key: t.transaction_id for t in result.transactions})
    everything = [t for phase in (deposits, buy_ins, prizes) for batch in phase for t in batch]
    once = await store.ledger.balances([*(player_account(p) for p in names), pool_account(tid)])
    expected = net_by_account(everything)
    assert once == {name: expected.get(name, 0) for name in once}, "balances after one pass"
    shuffled = everything[:]
    rng.shuffle(shuffled)
    again = await asyncio.gather(*(writer.post(shuffled[i : i + 7]) for i in range(0, len(shuffled), 7)))
    await writer.close()
    for result in again:
        assert all(t.replayed for t in result.transactions), "a replay through the writer moved money"
        assert all(first[t.idempotency_key] == t.transaction_id for t in result.transactions), (
            "a replay returns the first result"
        )
    assert await store.ledger.balances(list(once)) == once, "replays changed a balance"


async def test_the_same_key_from_two_callers_posts_once(store: Store) -> None:
    """Two callers with the same key never share a combined batch: the later sees the first as a
    replay (same movement) or a conflict (another movement), as with ``Ledger.post``."""
    run = uuid.uuid4().hex[:6]
    writer = LedgerWriter(store.ledger)
    same = deposit(f"twin{run}", 10, f"{run}:twin")
    other = Transfer(CASHIER, player_account(f"other{run}"), 10, f"{run}:twin", Reason.DEPOSIT)
    unrelated = deposit(f"third{run}", 5)
    first, second, third = await asyncio.gather(
        writer.post([same]), writer.post([same]), writer.post([unrelated])
    )
    assert sorted([first.transactions[0].replayed, second.transactions[0].replayed]) == [False, True]
    assert first.transactions[0].transaction_id == second.transactions[0].transaction_id
    assert not third.replayed
    with pytest.raises(IdempotencyConflict, match=f"{run}:twin"):
        await writer.post([other])
    await writer.close()
    assert await store.ledger.balances([player_account(f"twin{run}"), player_account(f"other{run}")]) == {
        player_account(f"twin{run}"): 10,
        player_account(f"other{run}"): 0,
    }


async def test_a_failing_caller_does_not_fail_the_others(store: Store) -> None:
    """One caller overdraws, one reuses a key for another movement; every other caller of the same
    combined batch still posts, once, and each failing caller gets its own typed error."""
    run = uuid.uuid4().hex[:6]
    await store.ledger.post(
        [deposit(f"ok{run}", 1_000, f"{run}:fund"), deposit(f"used{run}", 5, f"{run}:used")]
    )
    writer = LedgerWriter(store.ledger, max_wait_s=0.01)
    good = [
        [Transfer(player_account(f"ok{run}"), pool_account(run), 10, f"{run}:good:{i}", Reason.BUY_IN)]
        for i in range(20)
    ]
    short = [Transfer(player_account(f"poor{run}"), pool_account(run), 10, f"{run}:short", Reason.BUY_IN)]
    clash = [deposit(f"ok{run}", 99, f"{run}:used")]
    batches: list[list[Transfer]] = [*good[:7], short, *good[7:14], clash, *good[14:]]
    results = await asyncio.gather(*(writer.post(batch) for batch in batches), return_exceptions=True)
    await writer.close()
    kinds = [type(r).__name__ for r in results]
    expected = ["PostResult"] * 7 + ["InsufficientFunds"] + ["PostResult"] * 7 + ["IdempotencyConflict"]
    assert kinds == expected + ["PostResult"] * 6, f"expected {expected} then 6 results, got {kinds}"
    assert all(isinstance(r, PostResult) and not r.replayed for r in results if not isinstance(r, Exception))
    assert await store.ledger.balances([player_account(f"ok{run}"), pool_account(run)]) == {
        player_account(f"ok{run}"): 1_000 - 20 * 10,
        pool_account(run): 200,
    }, "each good transfer posted once"
    assert writer.fallbacks >= 1
    assert (await store.ledger.check()).ok


async def test_bad_input_is_refused_before_the_queue(store: Store) -> None:
    writer = LedgerWriter(store.ledger)
    twice = deposit("dup", 1, "writer:same-key")
    with pytest.raises(DuplicateKey):
        await writer.post([twice, twice])
    assert await writer.post([]) == PostResult(())
    assert writer.batches_written == 0


async def test_a_database_failure_reaches_every_caller(postgres_server_url: str) -> None:
    url = await create_database(postgres_server_url, "feltd_test_ledger_writer_down")
    try:
        async with open_store(url, max_size=2) as opened:
            pool = opened.pool
        # The pool is closed now: every caller of the combined batch hears about it, as the
        # store's typed error (whether it committed is unknown) with asyncpg's as its cause.
        writer = LedgerWriter(Ledger(pool))
        results = await asyncio.gather(
            *(writer.post([deposit(f"down{i}", 1)]) for i in range(5)), return_exceptions=True
        )
        assert all(isinstance(r, LedgerFailure) for r in results), results
        assert all(isinstance(r.__cause__, asyncpg.exceptions.InterfaceError) for r in results), results
    finally:
        await drop_database(postgres_server_url, url)


WRITER_ROUNDS = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "pool", HOUSE]),
            st.sampled_from(["a", "b", "pool", HOUSE]),
            st.integers(1, 400),
        ),
        min_size=1,
        max_size=3,
    ),
    min_size=1,
    max_size=12,
)


def test_concurrent_callers_get_what_posting_one_by_one_in_arrival_order_gives(
    postgres_server_url: str,
) -> None:
    """Random batches (some overdraw) handed to the writer at once: each caller's outcome, and the
    balances, are those of posting the batches one at a time in arrival order (a plain model)."""
    loop = asyncio.new_event_loop()
    url = loop.run_until_complete(create_database(postgres_server_url, "feltd_test_ledger_writer_h"))
    opened = open_store(url, max_size=3)
    store = loop.run_until_complete(opened.__aenter__())
    examples = iter(range(10**6))

    async def scenario(batches: list[list[tuple[str, str, int]]]) -> None:
        run = next(examples)

        def account(short: str) -> str:
            return {
                "a": player_account(f"{run}a"),
                "b": player_account(f"{run}b"),
                "pool": pool_account(f"{run}t"),
            }.get(short, short)

        await store.ledger.post([deposit(f"{run}a", 500, f"wh:{run}:seed")])
        model = {
            account("a"): 500,
            account("b"): 0,
            account("pool"): 0,
            HOUSE: await store.ledger.balance(HOUSE),
        }
        posts = [
            [
                Transfer(account(s), account(t), amount, f"wh:{run}:{b}:{i}", Reason.DEAL)
                for i, (s, t, amount) in enumerate(batch)
                if s != t
            ]
            for b, batch in enumerate(batches)
        ]
        posts = [p for p in posts if p]
        writer = LedgerWriter(store.ledger)
        outcomes = await asyncio.gather(*(writer.post(p) for p in posts), return_exceptions=True)
        await writer.close()
        for b, (transfers, outcome) in enumerate(zip(posts, outcomes, strict=True)):
            refusal = first_shortfall(transfers, model)
            if refusal is not None:
                assert isinstance(outcome, InsufficientFunds), f"batch {b}: model refuses it, got {outcome!r}"
                got_refusal = (outcome.account, outcome.idempotency_key)
                assert got_refusal == (refusal.account, refusal.idempotency_key), f"batch {b}: {got_refusal}"
                continue
            assert isinstance(outcome, PostResult), f"batch {b}: the model accepts it, got {outcome!r}"
            for name, delta in net_by_account(transfers).items():
                model[name] = model.get(name, 0) + delta
        got = await store.ledger.balances(model)
        assert got == model, f"expected {model}, got {got}"

    @settings(max_examples=60, deadline=None)
    @given(WRITER_ROUNDS)
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
