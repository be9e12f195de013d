"""CRASH-1 and CANCEL-1 after a restart, with the real store: the server stops (the journal is all
it keeps: hands under way are not in it either way) and a new server on the same database takes
the tournaments up again. scripts/crash_campaign.py does the same with SIGKILL (its test is
tests/test_crash_campaign.py)."""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib.util
import random
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType

import asyncpg
import msgspec
from server_harness import Player, Policy, lively, steady, tournament_toml, wait_until

from client.connection import Connection
from engine.tournament import director as d
from engine.tournament import inputs
from engine.tournament.config import parse_config
from engine.tournament.transfers import CASHIER, Reason, Transfer, player_account, pool_account
from protocol import client_messages as cm
from protocol.codec import MSGPACK_SUBPROTOCOL
from server.app import FeltServer
from server.clock import ScaledClock
from server.recovery import load_director
from server.store.connection import Store, open_store
from server.store.databases import create_database, database_name, drop_database
from server.store.journal import JournalEntry, StoredSnapshot
from server.store.tournaments import TournamentStatus

SPEED = 20.0


@asynccontextmanager
async def _database(postgres_server_url: str) -> AsyncIterator[Store]:
    url = await create_database(postgres_server_url, f"feltd_test_crash_{uuid.uuid4().hex[:8]}")
    try:
        async with open_store(url, max_size=8) as store:
            yield store
    finally:
        await drop_database(postgres_server_url, url)


@asynccontextmanager
async def _server(store: Store, anchor: float, **options: object) -> AsyncIterator[FeltServer]:
    server = FeltServer(
        store,
        clock=ScaledClock(SPEED, anchor=anchor),
        poll_seconds=3600,
        hand_gap=1.0,
        **options,  # type: ignore[arg-type]
    )
    await server.start("127.0.0.1", 0)
    try:
        yield server
    finally:
        await server.stop()


def _campaign() -> ModuleType:
    """scripts/crash_campaign.py, whose database checks the campaign runs after every kill."""
    path = Path(__file__).resolve().parent.parent / "scripts" / "crash_campaign.py"
    spec = importlib.util.spec_from_file_location("crash_campaign", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["crash_campaign"] = module
    spec.loader.exec_module(module)
    return module


async def _registering(
    store: Store, anchor: float, tournament_id: str, players: list[str]
) -> tuple[float, int, dict[str, tuple[Transfer, ...]]]:
    """A tournament registering (it starts in an hour), and the server stopped: its clock's time,
    the journal's last entry and each player's registration transfers (the keys it would take)."""
    async with _server(store, anchor) as server:
        start = dt.datetime.fromtimestamp(server.clock.now() + 3600, dt.UTC)
        await store.tournaments.create_from_toml(tournament_toml(tournament_id, players=9), starts_at=start)
        await server.load()
        coordinator = server.coordinators[tournament_id]
        now = server.clock.now()
        transfers = {p: tuple(coordinator.director.preview_register(p, now, 100_000)) for p in players}
        return now, coordinator.seq, transfers


def _player(server: FeltServer, token: str, tournament_id: str, seed: int, policy: Policy = steady) -> Player:
    connection = Connection(server.url, token=token, subprotocol=MSGPACK_SUBPROTOCOL)
    return Player(connection, tournament_id, policy, seed)


async def _players(store: Store, names: list[str]) -> dict[str, str]:
    tokens = {}
    for name in names:
        tokens[name] = (await store.players.add(name, player_id=name)).token
        await store.ledger.post(
            [Transfer(CASHIER, player_account(name), 100_000, f"deposit:{name}", Reason.DEPOSIT)]
        )
    return tokens


async def test_crash_1_restart_resumes_the_tournament_from_its_journal(postgres_server_url: str) -> None:
    """Stopped mid-tournament, a new server rebuilds the director from the journal (the same
    standings, chips and seats), deals the hands under way again, and the players, reconnecting,
    play it to its end."""
    async with _database(postgres_server_url) as store:
        names = [f"r{n}" for n in range(6)]
        tokens = await _players(store, names)
        anchor = time.time()
        async with _server(store, anchor) as first:
            start = dt.datetime.fromtimestamp(first.clock.now() + 3 * SPEED, dt.UTC)
            await store.tournaments.create_from_toml(tournament_toml("resume", players=6), starts_at=start)
            await first.load()
            players = [_player(first, tokens[name], "resume", seed) for seed, name in enumerate(names)]
            playing = [asyncio.create_task(p.run(until=60)) for p in players]
            director = first.coordinators["resume"].director
            await wait_until(lambda: director.hands_dealt >= 4, 60, "four hands")
            before = first.coordinators["resume"].seq
        for task in playing:
            task.cancel()
        await asyncio.gather(*playing, return_exceptions=True)
        restored = await load_director(store.journal, "resume")
        assert restored is not None and restored.seq == before
        assert restored.director.chips_in_play() == restored.director.chips_issued == 6 * 1500
        async with _server(store, anchor) as second:
            coordinator = second.coordinators["resume"]
            assert coordinator.resumed_from is not None
            again = coordinator.director
            assert again.status.value == "running"
            # all-in often: the rest of the tournament takes seconds
            players = [
                _player(second, tokens[name], "resume", seed, lively) for seed, name in enumerate(names)
            ]
            # players who busted before the stop see no end: wait for the director's
            playing = [asyncio.create_task(p.run(register=False, until=120)) for p in players]
            await wait_until(lambda: again.status.value == "finished", 120, "the end")
            for task in playing:
                task.cancel()
            await asyncio.gather(*playing, return_exceptions=True)
            assert again.status.value == "finished"
            assert again.standings is not None and again.standings.complete
        assert (await store.ledger.check()).ok
        assert (await store.ledger.balances([pool_account("resume")]))[pool_account("resume")] == 0
        assert (await store.tournaments.get("resume")).status is TournamentStatus.FINISHED
        # the places and prizes are in the results table, written with the status: every player
        # once, at the place the standings give (players out in one hand may share one), and the
        # prizes are what the ledger paid out of the pool
        results = await store.tournaments.results("resume")
        assert sorted(r.player_id for r in results) == sorted(names)
        places = {player: finish.place for finish in again.standings.finishes for player in finish.players}
        assert {r.player_id: r.place for r in results} == places
        assert min(places.values()) == 1 and max(places.values()) <= 6
        paid = again.prizes_paid
        assert {r.player_id: r.prize for r in results if r.prize} == paid
        assert sum(paid.values()) == 6 * 1_000


async def test_crash_1_a_tournament_down_past_the_resume_limit_is_settled_by_cancel_1(
    postgres_server_url: str,
) -> None:
    """A restart that finds the tournament last alive longer ago than the limit settles it by
    CANCEL-1 through the ledger: every cent of the pool goes back to players. It stopped a few
    clock minutes after its start, so everything is rolled back: each player gets the buy-in and
    fee back exactly (the hour it was down is not play: counted, it would have been a payout by
    chip count)."""
    async with _database(postgres_server_url) as store:
        names = [f"c{n}" for n in range(4)]
        tokens = await _players(store, names)
        anchor = time.time()
        async with _server(store, anchor) as first:
            start = dt.datetime.fromtimestamp(first.clock.now() + 3 * SPEED, dt.UTC)
            await store.tournaments.create_from_toml(tournament_toml("late", players=4), starts_at=start)
            await first.load()
            players = [_player(first, tokens[name], "late", seed) for seed, name in enumerate(names)]
            playing = [asyncio.create_task(p.run(until=60)) for p in players]
            director = first.coordinators["late"].director
            await wait_until(lambda: director.hands_dealt >= 2, 60, "two hands")
        for task in playing:
            task.cancel()
        await asyncio.gather(*playing, return_exceptions=True)
        # the second server's clock reads an hour later: past the 20-minute limit
        later = anchor - 3600 / (SPEED - 1)
        async with _server(store, later) as second:
            coordinator = second.coordinators.get("late")
            assert coordinator is None or coordinator.director.status.value == "cancelled"
        assert (await store.tournaments.get("late")).status is TournamentStatus.CANCELLED
        balances = await store.ledger.balances()
        assert balances[pool_account("late")] == 0
        assert sum(balances[player_account(n)] for n in names) + balances["house"] == 4 * 100_000
        assert [balances[player_account(n)] for n in names] == [100_000] * 4, balances
        assert balances["house"] == 0
        assert (await store.ledger.check()).ok


async def test_crash_1_a_purchase_whose_money_moved_but_was_never_recorded_is_refunded(
    postgres_server_url: str,
) -> None:
    """The journal notes a purchase's intent before its money moves; a crash between the money
    and the registration leaves the intent alone in the journal, and the restart gives the money
    back (and a purchase whose money never moved costs nothing)."""
    async with _database(postgres_server_url) as store:
        tokens = await _players(store, ["buyer", "other"])
        anchor = time.time()
        now, seq, previews = await _registering(store, anchor, "cut", ["buyer", "other"])
        moved, unmoved = previews["buyer"], previews["other"]
        # what a crash leaves: two intents written, one purchase's money posted, neither recorded
        for offset, (player, transfers) in enumerate((("buyer", moved), ("other", unmoved)), start=1):
            intent = inputs.Intent(now=now, player=player, purchase="register", transfers=tuple(transfers))
            await store.journal.append([JournalEntry("cut", seq + offset, now, inputs.encode(intent))])
        await store.ledger.post(moved)
        assert (await store.ledger.balance(player_account("buyer"))) == 100_000 - 1_100
        # the crash campaign checks here, while the server is down: the buyer's money is in the
        # pool for no entry, in flight until the restart gives it back; not a lost buy-in
        campaign = _campaign()
        toml = tournament_toml("cut", players=9)
        down = campaign.Findings()
        verdict = await campaign.check(store, "cut", toml, down, final=False)
        assert (down.cents_lost, down.problems) == (0, []), verdict
        assert "1 buy-in(s) in flight" in verdict
        never_given_back = campaign.Findings()
        await campaign.check(store, "cut", toml, never_given_back, final=True)
        assert any("never given back" in problem for problem in never_given_back.problems)
        async with _server(store, anchor) as second:
            director = second.coordinators["cut"].director
            assert not director.registration.is_registered("buyer")
            balances = await store.ledger.balances()
            assert balances[player_account("buyer")] == 100_000
            assert balances[player_account("other")] == 100_000
            assert balances[pool_account("cut")] == 0 and balances.get("house", 0) == 0
            # registering again pays again, under new keys: the refunded ones are spent
            buyer = _player(second, tokens["buyer"], "cut", 1)
            await buyer.connection.connect()
            await buyer.connection.send(cm.Register(tournament_id="cut", request_id="again"))
            await wait_until(lambda: director.registration.is_registered("buyer"), 20, "the new registration")
            await buyer.connection.close()
            given_back = campaign.Findings()
            verdict = await campaign.check(store, "cut", toml, given_back, final=False)
            assert (given_back.cents_lost, given_back.problems) == (0, []), verdict
            assert "in flight" not in verdict
        balances = await store.ledger.balances()
        assert balances[player_account("buyer")] == 100_000 - 1_100
        assert balances[pool_account("cut")] == 1_000 and balances["house"] == 100
        assert (await store.ledger.check()).ok


async def test_crash_1_a_cut_short_purchase_whose_money_never_moved_spends_its_keys(
    postgres_server_url: str,
) -> None:
    """A kill between the intent and the post, and the player's money spent meanwhile: the
    restart's post is refused, nothing is given back, and the intent is closed with its keys
    spent. The player's next registration (new keys) survives the next restart, and an
    unregistration after it is refunded once, never twice (a restart used to find the intent
    still open and refund the seat the same keys had paid for)."""
    async with _database(postgres_server_url) as store:
        tokens = await _players(store, ["poor", "other"])
        anchor = time.time()
        now, seq, previews = await _registering(store, anchor, "spent", ["poor"])
        intent = inputs.Intent(now=now, player="poor", purchase="register", transfers=previews["poor"])
        await store.journal.append([JournalEntry("spent", seq + 1, now, inputs.encode(intent))])
        withdrawal = Transfer(player_account("poor"), CASHIER, 99_500, "poor:withdrawal", Reason.WITHDRAWAL)
        await store.ledger.post([withdrawal])
        async with _server(store, anchor) as second:
            director = second.coordinators["spent"].director
            assert (await store.ledger.balance(player_account("poor"))) == 500  # nothing moved
            deposit = Transfer(CASHIER, player_account("poor"), 10_000, "poor:again", Reason.DEPOSIT)
            await store.ledger.post([deposit])
            for name in ("poor", "other"):
                player = _player(second, tokens[name], "spent", 1)
                await player.connection.connect()
                await player.connection.send(cm.Register(tournament_id="spent", request_id="r"))
                await wait_until(lambda n=name: director.registration.is_registered(n), 20, "registered")
                await player.connection.close()
        async with _server(store, anchor) as third:
            director = third.coordinators["spent"].director
            assert director.registration.is_registered("poor")
            assert (await store.ledger.balance(player_account("poor"))) == 10_500 - 1_100
            poor = _player(third, tokens["poor"], "spent", 2)
            await poor.connection.connect()
            await poor.connection.send(cm.Unregister(tournament_id="spent", request_id="u"))
            await wait_until(lambda: not director.registration.is_registered("poor"), 20, "unregistered")
            await poor.connection.close()
        async with _server(store, anchor):
            balances = await store.ledger.balances()
        assert balances[player_account("poor")] == 10_500
        assert balances[player_account("other")] == 100_000 - 1_100
        assert balances[pool_account("spent")] == 1_000 and balances["house"] == 100
        assert (await store.ledger.check()).ok


async def test_crash_1_a_registration_refused_for_funds_leaves_no_intent_to_refund_later(
    postgres_server_url: str,
) -> None:
    """One entry's money and two tournaments: the second registration is refused (the post finds
    the money gone). The player deposits and registers there again; a restart then refunds
    nothing: both seats stay paid for."""
    async with _database(postgres_server_url) as store:
        tokens = await _players(store, ["lean"])
        withdrawal = Transfer(player_account("lean"), CASHIER, 100_000 - 1_100, "lean:out", Reason.WITHDRAWAL)
        await store.ledger.post([withdrawal])
        anchor = time.time()
        async with _server(store, anchor) as first:
            start = dt.datetime.fromtimestamp(first.clock.now() + 3600, dt.UTC)
            for tournament_id in ("ta", "tb"):
                await store.tournaments.create_from_toml(
                    tournament_toml(tournament_id, players=9), starts_at=start
                )
            await first.load()
            a, b = first.coordinators["ta"].director, first.coordinators["tb"].director
            connection = Connection(first.url, token=tokens["lean"], subprotocol=MSGPACK_SUBPROTOCOL)
            await connection.connect()
            await connection.send(cm.Register(tournament_id="ta", request_id="a1"))
            await connection.send(cm.Register(tournament_id="tb", request_id="b1"))
            answered: set[str] = set()
            while answered != {"a1", "b1"}:
                request_id = getattr(await asyncio.wait_for(connection.recv(), 20), "request_id", None)
                answered |= {request_id} & {"a1", "b1"}
            assert a.registration.is_registered("lean") != b.registration.is_registered("lean")
            refused = "tb" if a.registration.is_registered("lean") else "ta"
            deposit = Transfer(CASHIER, player_account("lean"), 1_100, "lean:in", Reason.DEPOSIT)
            await store.ledger.post([deposit])
            await connection.send(cm.Register(tournament_id=refused, request_id="again"))
            await wait_until(
                lambda: a.registration.is_registered("lean") and b.registration.is_registered("lean"),
                20,
                "the second seat",
            )
            await connection.close()
        async with _server(store, anchor) as second:
            for tournament_id in ("ta", "tb"):
                assert second.coordinators[tournament_id].director.registration.is_registered("lean")
            balances = await store.ledger.balances()
        assert balances[player_account("lean")] == 0
        assert balances[pool_account("ta")] == balances[pool_account("tb")] == 1_000
        assert (await store.ledger.check()).ok


async def test_crash_1_an_open_intent_whose_keys_a_recorded_purchase_used_is_not_refunded(
    postgres_server_url: str,
) -> None:
    """A journal written before refused posts closed their intents: an intent left open, then
    the same player's registration under the same keys. The restart gives nothing back: the
    money is the seat's."""
    async with _database(postgres_server_url) as store:
        await _players(store, ["kept"])
        anchor = time.time()
        now, seq, previews = await _registering(store, anchor, "kept", ["kept"])
        transfers = previews["kept"]
        stale = inputs.Intent(now=now, player="kept", purchase="register", transfers=transfers)
        register = inputs.Register(now=now, player="kept", balance=100_000)
        await store.journal.append(
            [
                JournalEntry("kept", seq + 1, now, inputs.encode(stale)),
                JournalEntry("kept", seq + 2, now, inputs.encode(stale)),
                JournalEntry("kept", seq + 3, now, inputs.encode(register)),
            ]
        )
        await store.ledger.post(list(transfers))
        async with _server(store, anchor) as second:
            assert second.coordinators["kept"].director.registration.is_registered("kept")
            balances = await store.ledger.balances()
        assert balances[player_account("kept")] == 100_000 - 1_100
        assert balances[pool_account("kept")] == 1_000 and balances["house"] == 100
        assert (await store.ledger.check()).ok


async def test_a_status_write_that_fails_is_retried_and_the_tournament_ends_recorded(
    postgres_server_url: str,
) -> None:
    """The tournament's row is locked by another session when it starts (its RUNNING write fails
    with a lock timeout): the coordinator retries instead of dying, the tournament plays to its
    end, and the database says finished, with its results."""
    url = await create_database(postgres_server_url, f"feltd_test_status_{uuid.uuid4().hex[:8]}")
    try:
        locker = await asyncpg.connect(url)
        try:
            await locker.execute(f"ALTER DATABASE \"{database_name(url)}\" SET lock_timeout = '300ms'")
            async with open_store(url, max_size=8) as store:
                names = ["s1", "s2"]
                tokens = await _players(store, names)
                async with _server(store, time.time()) as server:
                    start = dt.datetime.fromtimestamp(server.clock.now() + 2 * SPEED, dt.UTC)
                    await store.tournaments.create_from_toml(
                        tournament_toml("st", players=2), starts_at=start
                    )
                    await server.load()
                    director = server.coordinators["st"].director
                    players = [_player(server, tokens[n], "st", seed, lively) for seed, n in enumerate(names)]
                    held = locker.transaction()
                    await held.start()
                    await locker.execute("SELECT 1 FROM tournaments WHERE id = 'st' FOR UPDATE")
                    playing = [asyncio.create_task(p.run(until=120)) for p in players]
                    await wait_until(lambda: director.status.value == "running", 60, "the start")
                    await asyncio.sleep(1.0)  # a few refused writes
                    await held.rollback()
                    await wait_until(lambda: director.status.value == "finished", 120, "the end")
                    await wait_until(
                        lambda: server.coordinators["st"].finished.is_set(), 20, "the coordinator done"
                    )
                    for task in playing:
                        task.cancel()
                    await asyncio.gather(*playing, return_exceptions=True)
                assert (await store.tournaments.get("st")).status is TournamentStatus.FINISHED
                results = await store.tournaments.results("st")
                assert sorted((r.place, r.player_id) for r in results)[0][0] == 1 and len(results) == 2
        finally:
            await locker.close()
    finally:
        await drop_database(postgres_server_url, url)


async def test_crash_1_a_damaged_newest_snapshot_falls_back_to_the_one_before(
    postgres_server_url: str,
) -> None:
    """The newest director snapshot cannot be read: the one before it and every input after it
    give the same director."""
    async with _database(postgres_server_url) as store:
        names = [f"d{n}" for n in range(6)]
        tokens = await _players(store, names)
        anchor = time.time()
        async with _server(store, anchor) as server:
            start = dt.datetime.fromtimestamp(server.clock.now() + 2 * SPEED, dt.UTC)
            await store.tournaments.create_from_toml(tournament_toml("dmg", players=6), starts_at=start)
            await server.load()
            coordinator = server.coordinators["dmg"]
            players = [_player(server, tokens[name], "dmg", seed) for seed, name in enumerate(names)]
            playing = [asyncio.create_task(p.run(until=60)) for p in players]
            await wait_until(lambda: coordinator.director.hands_dealt >= 3, 60, "three hands")
            coordinator.save_snapshot()  # a second snapshot, newer than snapshot 0
            await wait_until(lambda: not coordinator.tasks, 10, "the snapshot saved")
            await wait_until(lambda: coordinator.director.hands_dealt >= 5, 60, "five hands")
            for task in playing:
                task.cancel()
            await asyncio.gather(*playing, return_exceptions=True)
        intact = await load_director(store.journal, "dmg")
        assert intact is not None and intact.base_seq > 0
        async with store.pool.acquire() as conn:
            await conn.execute(
                "UPDATE director_snapshots SET data = '\\x00ff'::bytea "
                "WHERE tournament_id = 'dmg' AND seq = $1",
                intact.base_seq,
            )
        fallback = await load_director(store.journal, "dmg")
        assert fallback is not None and fallback.base_seq < intact.base_seq and fallback.seq == intact.seq
        assert fallback.director.snapshot() == intact.director.snapshot()


async def test_crash_1_a_journal_that_ends_at_a_snapshot_taken_mid_hand_deals_that_hand_again(
    postgres_server_url: str,
) -> None:
    """A worker killed just after saving a snapshot: no input after it. The hands under way in it
    are dealt again on resume, as with inputs after the snapshot (they were once left as dealt,
    and the tables waited for ever)."""
    async with _database(postgres_server_url) as store:
        toml = tournament_toml("atsnap", players=12, table_size=6)
        await store.tournaments.create_from_toml(toml, starts_at=dt.datetime.now(dt.UTC))
        director = d.Director(parse_config(toml), start_at=0, rng=random.Random(5))
        for number in range(12):
            director.register(f"s{number:02d}", 0, 5000)
        dealt = {c.table_id for c in director.start(0) if isinstance(c, d.DealHand)}
        assert len(dealt) == 2
        data = msgspec.msgpack.encode(director.snapshot())
        await store.journal.save_snapshot(StoredSnapshot("atsnap", 0, d.DIRECTOR_SNAPSHOT_VERSION, data))
        restored = await load_director(store.journal, "atsnap")
        assert restored is not None and restored.replayed == []
        again = restored.director.recover(restored.director.now, down_since=restored.last_at)
        assert {c.table_id for c in again if isinstance(c, d.DealHand)} == dealt
