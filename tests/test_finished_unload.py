"""A finished tournament's coordinator is unloaded ``keep_finished_seconds`` after its end: a
server running tournament after tournament does not hold every director it ever ran. What
operators ask about it afterwards (list, show, results) is answered from the database, the same
as before."""

from __future__ import annotations

import asyncio
import contextlib
import random

from server_harness import Player, running_server, tournament_toml, wait_until
from websockets.exceptions import ConnectionClosed

from client.connection import Connection
from protocol import operator_requests as op
from protocol import server_messages as sm
from protocol import table_events as te
from protocol.kinds import ActionKind


def _shove(legal: te.LegalView, rng: random.Random) -> tuple[ActionKind, int | None]:
    """All in now and then, else call: six of these finish a tournament in a few hands."""
    if legal.max_raise_to is not None and rng.random() < 0.2:
        return ActionKind.RAISE, legal.max_raise_to
    return ActionKind.CHECK_OR_CALL, None


async def _ask(desk: Connection, request: op.OperatorRequest) -> sm.ServerMessage:
    await desk.send(request)
    while True:
        answer = await desk.recv(30.0)
        if getattr(answer, "request_id", None) == request.request_id:
            return answer


async def test_a_finished_tournament_is_unloaded_and_still_answered_from_the_database(
    postgres_server_url: str,
) -> None:
    names = [f"u{i}" for i in range(6)]
    async with running_server(postgres_server_url, speed=50.0, poll_seconds=0.2) as harness:
        server = harness.server
        server.keep_finished_seconds = 3600  # kept while the answers of the loaded one are read
        await harness.add_players(names)
        tournament_id = await harness.create(tournament_toml("once", players=6), starts_in=30)
        bots = [
            Player(harness.connection(name), tournament_id, policy=_shove, seed=index)
            for index, name in enumerate(names)
        ]
        tasks = [asyncio.create_task(b.run(until=120)) for b in bots]
        coordinator = server.coordinators[tournament_id]
        await asyncio.wait_for(coordinator.finished.wait(), 120)
        assert coordinator.director.status.value == "finished"
        assert server.metrics.tournaments == 1

        operator = await harness.store.players.add_operator("desk")
        desk = Connection(harness.url, token=operator.token)
        await desk.connect()
        asked = [
            op.OpTournamentList(request_id="list"),
            op.OpTournamentShow(request_id="show", tournament_id=tournament_id),
            op.OpTournamentResults(request_id="results", tournament_id=tournament_id),
        ]
        loaded = [await _ask(desk, request) for request in asked]
        assert isinstance(loaded[2], sm.OpResults), loaded[2]
        assert sorted(p for place in loaded[2].results for p in place.players) == names, loaded[2]

        server.keep_finished_seconds = 0.5
        await wait_until(lambda: tournament_id not in server.coordinators, 30, "the coordinator unloaded")
        assert tournament_id not in server.tasks
        assert server.metrics.tournaments == 0
        unloaded = [await _ask(desk, request) for request in asked]
        for before, after in zip(loaded, unloaded, strict=True):
            assert after == before, f"{before}\n{after}"

        # the poller goes on taking new tournaments up, and does not take the finished one again
        later = await harness.create(tournament_toml("next", players=6), starts_in=3600)
        assert sorted(server.coordinators) == [later]
        await asyncio.sleep(1.0)  # five polls
        assert sorted(server.coordinators) == [later]
        for task in tasks:
            task.cancel()
        for bot in bots:
            with contextlib.suppress(ConnectionClosed):
                await bot.connection.close()
        await desk.close()
