"""Scratch (review12): the live path: a buy-in refused for want of funds after its Intent was
written (the balance spent by another tournament meanwhile) leaves the intent open; the same
player's next registration reuses its keys; a restart refunds a registered player."""

from __future__ import annotations

import datetime as dt
import time

from server_harness import tournament_toml, wait_until
from test_crash_recovery import _database, _player, _server

from engine.tournament import inputs
from engine.tournament.transfers import CASHIER, Reason, Transfer, player_account
from protocol import client_messages as cm


async def test_race(postgres_server_url: str) -> None:
    async with _database(postgres_server_url) as store:
        token = (await store.players.add("poor", player_id="poor")).token
        await store.ledger.post([Transfer(CASHIER, player_account("poor"), 1_100, "d1", Reason.DEPOSIT)])
        anchor = time.time()
        async with _server(store, anchor) as s:
            start = dt.datetime.fromtimestamp(s.clock.now() + 3600, dt.UTC)
            for t in ("a", "b"):
                await store.tournaments.create_from_toml(tournament_toml(t, players=9), starts_at=start)
            await s.load()
            p = _player(s, token, "a", 1)
            await p.connection.connect()
            await p.connection.send(cm.Register(tournament_id="a", request_id="ra"))
            await p.connection.send(cm.Register(tournament_id="b", request_id="rb"))
            da, db = s.coordinators["a"].director, s.coordinators["b"].director
            await wait_until(
                lambda: da.registration.is_registered("poor") or db.registration.is_registered("poor"),
                20,
                "one",
            )
            import asyncio

            await asyncio.sleep(1)
            loser = "b" if da.registration.is_registered("poor") else "a"
            for t in ("a", "b"):
                print(
                    t,
                    [
                        inputs.decode(x).__class__.__name__
                        for _, _, x in await store.journal.entries_after(t, -1)
                    ],
                )
            await store.ledger.post([Transfer(CASHIER, player_account("poor"), 1_100, "d2", Reason.DEPOSIT)])
            await p.connection.send(cm.Register(tournament_id=loser, request_id="again"))
            dl = s.coordinators[loser].director
            await wait_until(lambda: dl.registration.is_registered("poor"), 20, "again")
            await p.connection.close()
            print("before restart:", await store.ledger.balances())
        async with _server(store, anchor) as s2:
            print(
                "after restart:",
                await store.ledger.balances(),
                {t: c.director.registration.is_registered("poor") for t, c in s2.coordinators.items()},
            )
