"""Tournament records: the status machine (in Python and in the database), registrations with
their money in one transaction, the waiting list in order (REG-2), entries, rebuys, results."""

from __future__ import annotations

import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from engine.tournament.config import ConfigError
from engine.tournament.transfers import CASHIER, HOUSE, Reason, Transfer, player_account, pool_account
from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database
from server.store.errors import InsufficientFunds, StatusTransitionError, TournamentError, TournamentExists
from server.store.tournaments import (
    TRANSITIONS,
    Entry,
    PaidWith,
    Rebuy,
    RebuyKind,
    RegistrationStatus,
    Result,
    TournamentStatus,
    can_transition,
    status_path,
    verify_transition,
)


@pytest.fixture(scope="module")
async def store(postgres_server_url: str) -> AsyncIterator[Store]:
    url = await create_database(postgres_server_url, "feltd_test_tournaments")
    try:
        async with open_store(url) as opened:
            yield opened
    finally:
        await drop_database(postgres_server_url, url)


async def create(store: Store, repo_root: Path, tid: str) -> None:
    text = (repo_root / "examples" / "freezeout-10min.toml").read_text()
    await store.tournaments.create(tid, f"Test {tid}", text, tomllib.loads(text))


async def test_an_operators_toml_is_validated_then_recorded_under_its_id(
    store: Store, repo_root: Path
) -> None:
    text = (repo_root / "examples" / "turbo-rebuy.toml").read_text()
    created = await store.tournaments.create_from_toml(text)
    assert (created.id, created.config_toml, created.config) == ("turbo-rebuy", text, tomllib.loads(text))
    with pytest.raises(ConfigError):
        await store.tournaments.create_from_toml(text.replace("starting_stack", "starting_stake"))


def buy_in(tid: str, player: str, n: int = 1) -> list[Transfer]:
    return [
        Transfer(
            player_account(player), pool_account(tid), 1_000, f"{tid}:{player}:entry:{n}:pool", Reason.BUY_IN
        ),
        Transfer(player_account(player), HOUSE, 100, f"{tid}:{player}:entry:{n}:fee", Reason.FEE),
    ]


async def fund(store: Store, player: str, cents: int) -> None:
    await store.ledger.post(
        [Transfer(CASHIER, player_account(player), cents, f"fund:{player}", Reason.DEPOSIT)]
    )


def test_status_machine_allows_exactly_the_documented_steps() -> None:
    allowed = {(a, b) for a, targets in TRANSITIONS.items() for b in targets}
    assert allowed == {
        (TournamentStatus.ANNOUNCED, TournamentStatus.REGISTERING),
        (TournamentStatus.REGISTERING, TournamentStatus.RUNNING),
        (TournamentStatus.RUNNING, TournamentStatus.FINISHED),
        (TournamentStatus.ANNOUNCED, TournamentStatus.CANCELLED),
        (TournamentStatus.REGISTERING, TournamentStatus.CANCELLED),
        (TournamentStatus.RUNNING, TournamentStatus.CANCELLED),
    }, allowed
    assert not can_transition(TournamentStatus.FINISHED, TournamentStatus.RUNNING)
    with pytest.raises(StatusTransitionError, match="cannot become running"):
        verify_transition(TournamentStatus.ANNOUNCED, TournamentStatus.RUNNING)


async def test_definition_is_kept_as_text_and_json_and_steps_are_recorded(
    store: Store, repo_root: Path
) -> None:
    await create(store, repo_root, "life")
    got = await store.tournaments.get("life")
    assert got.status is TournamentStatus.ANNOUNCED and got.config_toml.startswith(
        (repo_root / "examples" / "freezeout-10min.toml").read_text()[:20]
    ), got
    assert got.config == tomllib.loads(got.config_toml), "the JSON is the parsed TOML"
    with pytest.raises(TournamentExists):
        await create(store, repo_root, "life")
    for step in (TournamentStatus.REGISTERING, TournamentStatus.RUNNING, TournamentStatus.FINISHED):
        changed, _ = await store.tournaments.set_status("life", step)
        assert changed.to_status is step
    with pytest.raises(StatusTransitionError, match="finished cannot become cancelled"):
        await store.tournaments.set_status("life", TournamentStatus.CANCELLED)
    history = await store.tournaments.status_history("life")
    assert [to for _, to in history] == ["announced", "registering", "running", "finished"], history
    assert [t.id for t in await store.tournaments.all(TournamentStatus.FINISHED)] == ["life"]


async def test_database_refuses_a_status_jump_from_raw_sql(store: Store, repo_root: Path) -> None:
    await create(store, repo_root, "jump")
    async with store.pool.acquire() as conn:
        refused = asyncpg.exceptions.CheckViolationError
        with pytest.raises(refused, match="cannot go from announced to finished"):
            await conn.execute("UPDATE tournaments SET status = 'finished' WHERE id = 'jump'")
    assert (await store.tournaments.get("jump")).status is TournamentStatus.ANNOUNCED


async def test_reg_1_registration_and_its_buy_in_commit_together(store: Store, repo_root: Path) -> None:
    await create(store, repo_root, "reg1")
    with pytest.raises(StatusTransitionError, match="announced"):
        await store.tournaments.register("reg1", "ann", transfers=buy_in("reg1", "ann"))
    await store.tournaments.set_status("reg1", TournamentStatus.REGISTERING)
    await fund(store, "ann", 1_100)
    registration, posted = await store.tournaments.register("reg1", "ann", transfers=buy_in("reg1", "ann"))
    assert registration.status is RegistrationStatus.REGISTERED and len(posted.posted) == 2
    assert await store.ledger.balances([player_account("ann"), pool_account("reg1")]) == {
        player_account("ann"): 0,
        pool_account("reg1"): 1_000,
    }
    # Broke: the registration is not recorded either.
    with pytest.raises(InsufficientFunds):
        await store.tournaments.register("reg1", "bea", transfers=buy_in("reg1", "bea"))
    assert [r.player_id for r in await store.tournaments.registrations("reg1")] == ["ann"]
    with pytest.raises(TournamentError, match="already registered"):
        await store.tournaments.register("reg1", "ann")


async def test_reg_2_waiting_list_keeps_order_and_a_returning_player_goes_last(
    store: Store, repo_root: Path
) -> None:
    await create(store, repo_root, "reg2")
    await store.tournaments.set_status("reg2", TournamentStatus.REGISTERING)
    for player in ("w1", "w2", "w3"):
        await store.tournaments.register("reg2", player, status=RegistrationStatus.WAITING)
    await store.tournaments.set_registration_status("reg2", "w1", RegistrationStatus.UNREGISTERED)
    await store.tournaments.register(
        "reg2", "w1", status=RegistrationStatus.WAITING, paid_with=PaidWith.TICKET
    )
    await store.tournaments.set_registration_status("reg2", "w2", RegistrationStatus.REGISTERED)
    waiting = await store.tournaments.waiting_list("reg2")
    assert [r.player_id for r in waiting] == ["w3", "w1"], waiting
    assert waiting[1].paid_with is PaidWith.TICKET


async def test_entries_rebuys_and_results_are_recorded_with_their_money(
    store: Store, repo_root: Path
) -> None:
    await create(store, repo_root, "run")
    await store.tournaments.set_status("run", TournamentStatus.REGISTERING)
    await fund(store, "cy", 5_000)
    await store.tournaments.add_entry(Entry("run", "cy", 1, 10_000), buy_in("run", "cy"))
    rebuy = Transfer(player_account("cy"), pool_account("run"), 1_000, "run:cy:rebuy:1:pool", Reason.REBUY)
    await store.tournaments.add_rebuy(Rebuy("run", "cy", RebuyKind.REBUY, 1, 10_000), [rebuy])
    with pytest.raises(TournamentError, match="already recorded"):
        await store.tournaments.add_rebuy(Rebuy("run", "cy", RebuyKind.REBUY, 1, 10_000), [rebuy])
    prize = Transfer(pool_account("run"), player_account("cy"), 2_000, "run:prize:cy:1", Reason.PRIZE)
    await store.tournaments.record_results("run", [Result("cy", 1, 2_000)], [prize])
    assert await store.tournaments.results("run") == [Result("cy", 1, 2_000)]
    assert [e.entry_number for e in await store.tournaments.entries("run")] == [1]
    assert [r.kind for r in await store.tournaments.rebuys("run")] == [RebuyKind.REBUY]
    assert await store.ledger.balance(player_account("cy")) == 5_000 - 1_100 - 1_000 + 2_000
    assert await store.ledger.balance(pool_account("run")) == 0


def test_status_path_is_the_shortest_run_of_steps_the_machine_allows() -> None:
    """What a coordinator records to catch up after a status write that failed."""
    assert status_path(TournamentStatus.RUNNING, TournamentStatus.RUNNING) == []
    assert status_path(TournamentStatus.REGISTERING, TournamentStatus.FINISHED) == [
        TournamentStatus.RUNNING,
        TournamentStatus.FINISHED,
    ]
    assert status_path(TournamentStatus.ANNOUNCED, TournamentStatus.FINISHED) == [
        TournamentStatus.REGISTERING,
        TournamentStatus.RUNNING,
        TournamentStatus.FINISHED,
    ]
    assert status_path(TournamentStatus.ANNOUNCED, TournamentStatus.CANCELLED) == [TournamentStatus.CANCELLED]
    with pytest.raises(StatusTransitionError):
        status_path(TournamentStatus.FINISHED, TournamentStatus.RUNNING)
