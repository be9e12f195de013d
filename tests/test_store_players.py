"""Players and operators: unique names, tokens shown once and kept only as their SHA-256."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator

import pytest

from server.store.connection import Store, open_store
from server.store.databases import create_database, drop_database
from server.store.errors import PlayerError, PlayerExists, UnknownPlayer


@pytest.fixture(scope="module")
async def store(postgres_server_url: str) -> AsyncIterator[Store]:
    url = await create_database(postgres_server_url, "feltd_test_players")
    try:
        async with open_store(url) as opened:
            yield opened
    finally:
        await drop_database(postgres_server_url, url)


async def test_a_token_logs_its_player_in_and_only_its_hash_is_kept(store: Store) -> None:
    created = await store.players.add("nina")
    assert created.player.account == f"player:{created.player.id}"
    assert await store.players.authenticate(created.token) == created.player
    assert await store.players.authenticate(created.token + "x") is None, "a wrong token logs nobody in"
    stored = await store.pool.fetchval("SELECT token_hash FROM players WHERE id = $1", created.player.id)
    assert bytes(stored) == hashlib.sha256(created.token.encode()).digest()
    assert await store.players.get("nina") == await store.players.get_by_id(created.player.id)


async def test_names_and_ids_are_unique_and_checked(store: Store) -> None:
    bot = await store.players.add("bot-1", player_id="bot1")
    assert bot.player.id == "bot1"
    with pytest.raises(PlayerExists):
        await store.players.add("bot-1")
    with pytest.raises(PlayerExists):
        await store.players.add("bot-2", player_id="bot1")
    for bad in ("", " padded", "x" * 65, "tab\there"):
        with pytest.raises(PlayerError):
            await store.players.add(bad)
    with pytest.raises(UnknownPlayer, match="no player is named 'ghost'"):
        await store.players.get("ghost")


async def test_operators_have_their_own_tokens(store: Store) -> None:
    operator = await store.players.add_operator("director")
    assert await store.players.authenticate_operator(operator.token) == operator.operator
    assert await store.players.authenticate(operator.token) is None, "an operator token is not a player's"
