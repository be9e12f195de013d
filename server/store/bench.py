"""The store benchmark behind `feltd bench store`: ledger transactions/s and snapshot rows/s.

It writes into a temporary database made on the configured server (dropped at the end) unless
told to write in place, so a benchmark never leaves rows in a real ledger.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections.abc import Awaitable, Sequence
from datetime import UTC, datetime
from urllib.parse import urlsplit

import asyncpg

from engine.tournament.transfers import (
    CASHIER,
    HOUSE,
    Reason,
    Transfer,
    player_account,
    pool_account,
)
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database
from server.store.embedded import database_url_from_env
from server.store.ledger import post_on
from server.store.ledger_writer import LedgerWriter
from server.store.snapshots import SeatSnapshot, SnapshotWriter, TableSnapshot, save_on


async def run_store_bench(args: argparse.Namespace) -> int:
    """Print the figures; return the exit code."""
    url = args.database_url or database_url_from_env()
    if args.in_place:
        async with open_store(url, args.data_dir, max_size=args.connections + 1) as store:
            await _bench(store, args)
        return 0
    if url is None:
        # The embedded server: open it once to learn its URL, and make the scratch database there.
        async with open_store(None, args.data_dir, migrate=False, restricted=False) as embedded:
            return await _bench_in_scratch(embedded.url, args)
    return await _bench_in_scratch(url, args)


async def _bench_in_scratch(server_url: str, args: argparse.Namespace) -> int:
    scratch = await create_database(server_url, "feltd_bench")
    try:
        async with open_store(scratch, max_size=args.connections + 1) as store:
            name = urlsplit(scratch).path.lstrip("/")
            print(f"feltd bench store: scratch database {name} on the configured server")
            await _bench(store, args)
    finally:
        await drop_database(server_url, scratch)
    return 0


async def _ratio(store: Store, args: argparse.Namespace) -> None:
    """Single posts (``Ledger.post``, one ``ledger_post`` call each) against the plain way to
    write a double entry with asyncpg (read and lock the source's balance, refuse an overdraft,
    insert the transaction and its two entries, move both balances), from the same number of
    tasks on pools of the same size. ``--ratio-plain unchecked`` leaves out the balance read (four
    statements, no overdraft refused); ``--ratio-plain-no-reset`` releases the plain pool's
    connections without asyncpg's reset query, as feltd's pool does.
    Rounds alternate which goes first; the median of the per-round ratios is printed."""
    import statistics

    run = uuid.uuid4().hex[:8]
    tasks = args.ratio_tasks
    per_task = max(1, args.transfers // tasks)
    owners = [f"r{run}-{i}" for i in range(2 * tasks)]
    await store.ledger.post(
        [
            Transfer(CASHIER, player_account(p), 10**12, f"bench:{run}:fund:{p}", Reason.DEPOSIT)
            for p in owners
        ]
    )
    checking = args.ratio_plain == "checking"

    async def keep_session(conn: asyncpg.Connection) -> None:
        pass

    plain = await asyncpg.create_pool(
        store.url,
        min_size=1,
        max_size=args.connections + 1,
        reset=keep_session if args.ratio_plain_no_reset else None,
    )
    assert plain is not None
    try:
        async with plain.acquire() as conn:
            await conn.execute(
                """CREATE TABLE bench_plain_accounts (name text PRIMARY KEY, balance bigint NOT NULL);
                   CREATE TABLE bench_plain_tx (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                                                key text NOT NULL UNIQUE, reason text NOT NULL);
                   CREATE TABLE bench_plain_entries (
                       id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                       tx bigint NOT NULL REFERENCES bench_plain_tx (id),
                       account text NOT NULL REFERENCES bench_plain_accounts (name),
                       amount bigint NOT NULL)"""
            )
            await conn.executemany(
                "INSERT INTO bench_plain_accounts VALUES ($1, $2)",
                [(player_account(p), 10**12) for p in owners],
            )

        async def ours(task: int, tag: str) -> None:
            a, b = player_account(owners[2 * task]), player_account(owners[2 * task + 1])
            for i in range(per_task):
                source, target = (a, b) if i % 2 == 0 else (b, a)
                await store.ledger.post(
                    [Transfer(source, target, 100, f"bench:{run}:{tag}:{task}:{i}", Reason.DEPOSIT)]
                )

        async def theirs(task: int, tag: str) -> None:
            a, b = player_account(owners[2 * task]), player_account(owners[2 * task + 1])
            for i in range(per_task):
                source, target = (a, b) if i % 2 == 0 else (b, a)
                async with plain.acquire() as conn, conn.transaction():
                    if checking:
                        # The least a ledger must do besides writing: refuse an overdraft.
                        balance = await conn.fetchval(
                            "SELECT balance FROM bench_plain_accounts WHERE name = $1 FOR UPDATE", source
                        )
                        if balance < 100:
                            raise AssertionError(f"{source} cannot pay 100 cents")
                    tx = await conn.fetchval(
                        "INSERT INTO bench_plain_tx (key, reason) VALUES ($1, 'deposit') RETURNING id",
                        f"{tag}:{task}:{i}",
                    )
                    await conn.execute(
                        "INSERT INTO bench_plain_entries (tx, account, amount) "
                        "VALUES ($1, $2, -$4::bigint), ($1, $3, $4::bigint)",
                        tx,
                        source,
                        target,
                        100,
                    )
                    await conn.execute(
                        "UPDATE bench_plain_accounts SET balance = balance "
                        "+ CASE WHEN name = $1 THEN -$3::bigint ELSE $3::bigint END WHERE name IN ($1, $2)",
                        source,
                        target,
                        100,
                    )

        ratios: list[float] = []
        total = per_task * tasks
        for round_ in range(args.ratio_rounds):
            rates: dict[str, float] = {}
            order = ("ours", "plain") if round_ % 2 == 0 else ("plain", "ours")
            for which in order:
                work = ours if which == "ours" else theirs
                elapsed = await _timed(asyncio.gather(*(work(t, f"{which}{round_}") for t in range(tasks))))
                rates[which] = total / elapsed
            ratios.append(rates["ours"] / rates["plain"])
            print(
                f"round {round_ + 1}: single post {rates['ours']:,.0f}/s, plain asyncpg transaction "
                f"{rates['plain']:,.0f}/s, ratio {ratios[-1]:.2f} ({order[0]} first)",
                flush=True,
            )
        print(
            f"single post / plain asyncpg transaction ({args.ratio_plain}"
            f"{', no reset' if args.ratio_plain_no_reset else ''}), {tasks} tasks, "
            f"{args.connections + 1} connections each, "
            f"{total} transfers per side per round: median ratio {statistics.median(ratios):.2f} "
            f"over {len(ratios)} rounds (min {min(ratios):.2f}, max {max(ratios):.2f})"
        )
        report = await store.ledger.check()
        print(f"ledger check after the benchmark: {'ok' if report.ok else 'BROKEN'}")
    finally:
        await plain.close()


async def _server_latency(store: Store) -> None:
    """Print what bounds everything below: a round trip, and a durable commit (a WAL flush).
    As the owner: the pool's role may create no table."""
    conn = await asyncpg.connect(store.url, timeout=30)
    try:
        started = time.perf_counter()
        for _ in range(200):
            await conn.fetchval("SELECT 1")
        round_trip = (time.perf_counter() - started) / 200
        # A real (logged) table: each autocommit INSERT waits for its WAL flush, as a post does.
        await conn.execute("CREATE TABLE IF NOT EXISTS bench_commit_probe (n int)")
        started = time.perf_counter()
        for n in range(100):
            await conn.execute("INSERT INTO bench_commit_probe VALUES ($1)", n)
        commit = (time.perf_counter() - started) / 100
        await conn.execute("DROP TABLE bench_commit_probe")
        synchronous = await conn.fetchval("SHOW synchronous_commit")
    finally:
        await conn.close()
    print(
        f"server: round trip {1000 * round_trip:.3f} ms, durable commit {1000 * commit:.3f} ms "
        f"(synchronous_commit={synchronous}); one connection posting one transfer at a time is "
        "bounded by the commit, a rush on one account by the commit too (its lock is held until then); "
        "callers sharing the LedgerWriter share one commit per batch"
    )


async def _bench(store: Store, args: argparse.Namespace) -> None:
    if args.ratio_rounds:
        await _ratio(store, args)
        return
    await _server_latency(store)
    run = uuid.uuid4().hex[:8]
    n = args.transfers
    connections = args.connections
    # Fund every player once, in one batch, so the measured transfers never run dry.
    players = [f"b{run}-{i}" for i in range(4 + 2 * connections)]  # 4 for the one-connection runs
    await store.ledger.post(
        [
            Transfer(CASHIER, player_account(p), 10**12, f"bench:{run}:fund:{p}", Reason.DEPOSIT)
            for p in players
        ]
    )

    def pair_transfers(tag: str, a: str, b: str, count: int) -> list[Transfer]:
        # Back and forth between two players: no shared hot account with any other worker.
        return [
            Transfer(
                player_account(a if i % 2 == 0 else b),
                player_account(b if i % 2 == 0 else a),
                100,
                f"bench:{run}:{tag}:{i}",
                Reason.DEPOSIT,
            )
            for i in range(count)
        ]

    async def post_each(transfers: Sequence[Transfer], size: int) -> None:
        async with store.pool.acquire(timeout=30) as conn:
            for start in range(0, len(transfers), size):
                await post_on(conn, transfers[start : start + size])

    single = pair_transfers("single", players[0], players[1], n)
    elapsed = await _timed(post_each(single, 1))
    _line(
        "ledger, 1 connection, 1 transfer per post", n / elapsed, "transactions/s", f"{n} in {elapsed:.2f} s"
    )

    batched = pair_transfers("batched", players[2], players[3], n)
    elapsed = await _timed(post_each(batched, args.batch))
    _line(
        f"ledger, 1 connection, {args.batch} transfers per post",
        n / elapsed,
        "transactions/s",
        f"{n} in {elapsed:.2f} s",
    )

    per_worker = max(1, n // connections)
    work = [
        pair_transfers(f"conc{w}", players[4 + 2 * w], players[5 + 2 * w], per_worker)
        for w in range(connections)
    ]
    elapsed = await _timed(asyncio.gather(*(post_each(w, 1) for w in work)))
    total = per_worker * connections
    _line(
        f"ledger, {connections} connections, 1 transfer per post",
        total / elapsed,
        "transactions/s",
        f"{total} in {elapsed:.2f} s",
    )

    work = [
        pair_transfers(f"concb{w}", players[4 + 2 * w], players[5 + 2 * w], per_worker)
        for w in range(connections)
    ]
    elapsed = await _timed(asyncio.gather(*(post_each(w, 10) for w in work)))
    _line(
        f"ledger, {connections} connections, 10 transfers per post",
        total / elapsed,
        "transactions/s",
        f"{total} in {elapsed:.2f} s",
    )

    # Registration rush: every post is a buy-in + fee into one pool and the house, the two hot
    # accounts every registration of a tournament locks.
    tid = f"bench{run}"
    rush = [
        [
            Transfer(
                player_account(p), pool_account(tid), 1000, f"bench:{run}:rush:{p}:{i}:buy-in", Reason.BUY_IN
            ),
            Transfer(player_account(p), HOUSE, 100, f"bench:{run}:rush:{p}:{i}:fee", Reason.FEE),
        ]
        for i in range(max(1, per_worker // 2))
        for p in players[:connections]
    ]
    chunks = [rush[w::connections] for w in range(connections)]

    async def post_batches(batches: Sequence[Sequence[Transfer]]) -> None:
        async with store.pool.acquire(timeout=30) as conn:
            for batch in batches:
                await post_on(conn, batch)

    elapsed = await _timed(asyncio.gather(*(post_batches(c) for c in chunks)))
    total = 2 * len(rush)
    _line(
        f"ledger, {connections} connections, buy-in+fee into one pool",
        total / elapsed,
        "transactions/s",
        f"{len(rush)} registrations in {elapsed:.2f} s",
    )

    # The coordinators' and table actors' way: many callers at once, each awaiting its own post,
    # through the group-commit writer (one database transaction for whatever arrives together).
    callers = max(1, args.writer_callers)
    per_caller = max(1, n // callers)
    owners = [f"w{run}-{i}" for i in range(2 * callers)]
    await store.ledger.post(
        [
            Transfer(CASHIER, player_account(p), 10**12, f"bench:{run}:fund:{p}", Reason.DEPOSIT)
            for p in owners
        ]
    )
    ledger_writer = LedgerWriter(store.ledger)

    async def caller(batches: Sequence[Sequence[Transfer]]) -> None:
        for batch in batches:
            await ledger_writer.post(batch)

    singles = [
        [[t] for t in pair_transfers(f"writer{c}", owners[2 * c], owners[2 * c + 1], per_caller)]
        for c in range(callers)
    ]
    elapsed = await _timed(asyncio.gather(*(caller(w) for w in singles)))
    total = per_caller * callers
    _line(
        f"ledger, {callers} callers, 1 transfer each, via LedgerWriter",
        total / elapsed,
        "transactions/s",
        f"{total} in {elapsed:.2f} s, {ledger_writer.batches_written} database transactions",
    )

    writes_before = ledger_writer.batches_written
    rushes = [
        [
            [
                Transfer(
                    player_account(p),
                    pool_account(tid),
                    1000,
                    f"bench:{run}:wrush:{p}:{i}:buy-in",
                    Reason.BUY_IN,
                ),
                Transfer(player_account(p), HOUSE, 100, f"bench:{run}:wrush:{p}:{i}:fee", Reason.FEE),
            ]
            for i in range(max(1, per_caller // 2))
        ]
        for p in owners[:callers]
    ]
    elapsed = await _timed(asyncio.gather(*(caller(w) for w in rushes)))
    registrations = sum(len(w) for w in rushes)
    _line(
        f"ledger, {callers} callers, buy-in+fee into one pool, via LedgerWriter",
        2 * registrations / elapsed,
        "transactions/s",
        f"{registrations} registrations in {elapsed:.2f} s, "
        f"{ledger_writer.batches_written - writes_before} database transactions",
    )
    await ledger_writer.close()

    report = await store.ledger.check()
    print(
        f"ledger check after the benchmark: {'ok' if report.ok else 'BROKEN'} "
        f"({report.transactions} transactions)"
    )

    tables = args.tables
    now = datetime.now(UTC)
    batches = [
        [
            TableSnapshot(
                tid,
                t,
                hand,
                1 + hand // 10,
                1 + hand % args.seats,
                tuple(
                    SeatSnapshot(s, f"p{t}-{s}", 10_000 + 7 * hand + s, 2) for s in range(1, args.seats + 1)
                ),
                now,
            )
            for t in range(tables)
        ]
        for hand in range(args.rounds)
    ]

    async def save_all() -> None:
        async with store.pool.acquire(timeout=30) as conn:
            for batch in batches:
                await save_on(conn, batch)

    elapsed = await _timed(save_all())
    rows = tables * args.rounds
    _line(
        f"snapshots, 1 connection, {tables} tables per batch",
        rows / elapsed,
        "snapshot rows/s",
        f"{rows * args.seats / elapsed:,.0f} seats/s; {args.rounds} batches in {elapsed:.2f} s, "
        f"{1000 * elapsed / args.rounds:.1f} ms per batch",
    )
    # The table actors' way: each of ``tables`` actors saves its own snapshot at its hand boundary
    # and waits for it; the writer groups whatever arrives together.
    writer = SnapshotWriter(store.snapshots)

    async def actor(t: int) -> None:
        for hand in range(args.rounds, 2 * args.rounds):
            await writer.save(TableSnapshot(tid, t, hand, 1, 1, batches[0][t].seats, now))

    elapsed = await _timed(asyncio.gather(*(actor(t) for t in range(tables))))
    _line(
        f"snapshots, {tables} table actors via SnapshotWriter",
        rows / elapsed,
        "snapshot rows/s",
        f"{writer.batches_written} batches for {rows} saves in {elapsed:.2f} s",
    )
    started = time.perf_counter()
    state = await store.snapshots.load_latest_state(tid)
    elapsed = time.perf_counter() - started
    assert state is not None
    print(
        f"load_latest_state: {len(state.tables)} tables, {len(state.players)} players "
        f"in {1000 * elapsed:.1f} ms (over {2 * rows} snapshot rows)"
    )


async def _timed(work: Awaitable[object]) -> float:
    started = time.perf_counter()
    await work
    return time.perf_counter() - started


def _line(label: str, rate: float, unit: str, detail: str) -> None:
    print(f"{label + ':':<66}{rate:>10,.0f} {unit} ({detail})")
