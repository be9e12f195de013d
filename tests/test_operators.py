"""Operators against a running server: the role (a player's token can do none of it), every
command through `feltd admin tournament --url` and the event stream it feeds, and pause, resume
and cancel on a live bot tournament with the ledger checked after."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from processes import feltd_command
from server_harness import Player, running_server, tournament_toml, wait_until
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from client.connection import Connection
from engine.tournament import director as d
from protocol import client_messages as cm
from protocol import operator_requests as op
from protocol import server_messages as sm
from protocol import table_events as te
from protocol import tournament_events as tev
from protocol.codec import MSGPACK_SUBPROTOCOL
from protocol.errors import ErrorCode
from protocol.kinds import ActionKind, GoodbyeReason, HoldReason, OperatorEventKind, Role, SeatChange

_T = TypeVar("_T")


async def feltd(*args: str) -> tuple[int, str, str]:
    """Run `feltd` without blocking the loop the server runs on: (status, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if k not in ("FELTD_TOKEN", "FELTD_TRACEBACK")}
    process = await asyncio.create_subprocess_exec(
        *feltd_command(), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def ok(*args: str) -> str:
    status, out, err = await feltd(*args)
    assert status == 0 and "Traceback" not in err, f"feltd {' '.join(args)}: {status} {err}"
    return out


async def refused(status: int, *args: str) -> str:
    """The command fails with ``status`` and exactly one line on stderr, no traceback."""
    code, _, err = await feltd(*args)
    assert "Traceback" not in err, err
    assert code == status and len(err.splitlines()) == 1, (code, err)
    return err


def every_request(tournament_id: str, player: str, toml: str) -> list[op.OperatorRequest]:
    """One of each operator request, each valid but for who sends it."""
    return [
        op.OpTournamentCreate(request_id="r-create", toml=toml.replace('"gated"', '"hacked"')),
        op.OpTournamentEdit(
            request_id="r-edit", tournament_id=tournament_id, start_ms=int(time.time() * 1000) + 9_999_000
        ),
        op.OpTournamentDelete(request_id="r-delete", tournament_id=tournament_id),
        op.OpTournamentList(request_id="r-list"),
        op.OpTournamentShow(request_id="r-show", tournament_id=tournament_id),
        op.OpTournamentStart(request_id="r-start", tournament_id=tournament_id),
        op.OpTournamentPause(request_id="r-pause", tournament_id=tournament_id),
        op.OpTournamentResume(request_id="r-resume", tournament_id=tournament_id),
        op.OpTournamentCancel(request_id="r-cancel", tournament_id=tournament_id),
        op.OpTournamentResults(request_id="r-results", tournament_id=tournament_id),
        op.OpPlayerRegister(request_id="r-register", tournament_id=tournament_id, player=player),
        op.OpPlayerUnregister(request_id="r-unregister", tournament_id=tournament_id, player=player),
        op.OpRemoveNoShows(request_id="r-no-shows", tournament_id=tournament_id),
        op.OpPenalize(request_id="r-penalize", tournament_id=tournament_id, player=player, hands=2),
        op.OpDisqualify(request_id="r-disqualify", tournament_id=tournament_id, player=player),
        op.OpSitOut(request_id="r-sit-out", tournament_id=tournament_id, player=player),
        op.OpMessage(request_id="r-message", tournament_id=tournament_id, text="free chips for all"),
        op.OpSubscribe(request_id="r-subscribe"),
        op.OpUnsubscribe(request_id="r-unsubscribe"),
    ]


async def test_admin_tournament_mistakes_are_one_line_before_anything_is_sent() -> None:
    """Without a server to reach, or with input that can never work: one line, a non-zero status."""
    nowhere = ["--url", "ws://127.0.0.1:1", "--token", "t"]

    async def hang_up(connection: ServerConnection) -> None:
        await connection.close()

    async def babble(connection: ServerConnection) -> None:
        await connection.recv()
        await connection.send('{"type": "no_such_message"}')
        await connection.wait_closed()

    # two peers that are not feltd servers
    protocols = [Subprotocol(MSGPACK_SUBPROTOCOL)]
    async with (
        serve(hang_up, "127.0.0.1", 0, subprotocols=protocols) as rude,
        serve(babble, "127.0.0.1", 0, subprotocols=protocols) as odd,
    ):
        peers = [f"ws://127.0.0.1:{next(iter(p.sockets)).getsockname()[1]}" for p in (rude, odd)]
        errors = await asyncio.gather(  # each its own process: at once
            refused(2, "admin", "tournament", "pause", "x", "--url", "http://127.0.0.1:1", "--token", "t"),
            refused(2, "admin", "tournament", "list", "--url", "ws://127.0.0.1:1"),
            refused(1, "admin", "tournament", "list", *nowhere),
            refused(2, "admin", "tournament", "create", "no-such.toml", *nowhere),
            refused(2, "admin", "tournament", "penalize", "x", "ann", "0", *nowhere),
            refused(
                2, "admin", "tournament", "message", "x", "hi", "--table", "1", "--player", "p", *nowhere
            ),
            refused(2, "admin", "tournament", "results", "x"),
            refused(1, "admin", "tournament", "list", "--url", peers[0], "--token", "t"),
            refused(1, "admin", "tournament", "list", "--url", peers[1], "--token", "t"),
        )
    assert "not a WebSocket address" in errors[0] and "token" in errors[1], errors
    assert "cannot connect" in errors[2] and "no-such.toml" in errors[3] and "--url" in errors[6], errors
    assert "protocol" in errors[8], errors


async def test_a_player_or_observer_can_do_no_operator_request(postgres_server_url: str) -> None:
    """Each op_ request from a player's connection, then from an observer's, gets ``forbidden``
    naming it; the schedule, the registrations and the money are as before, and the refused
    ``op_subscribe`` streams nothing. The operator's own token does the same requests."""
    async with running_server(postgres_server_url, speed=1.0) as harness:
        await harness.add_players(["ann", "bob"], cents=50_000)
        toml = tournament_toml("gated", players=9)
        tournament_id = await harness.create(toml, starts_in=3600)
        operator = await harness.store.players.add_operator("boss")
        ann = harness.connection("ann")
        await ann.connect()
        await ann.send(cm.Register(tournament_id=tournament_id, request_id="ann-in"))
        await _reply(ann, "ann-in", sm.Ack)
        before = await harness.store.tournaments.all()

        requests = every_request(tournament_id, "ann", toml)
        assert {type(r) for r in requests} == set(op.OperatorRequest.__args__)
        await ann.close()
        for who, role in (("ann", Role.PLAYER), (None, Role.OBSERVER)):
            # fresh connections: ten refusals in a minute close one (the hostile-client limit)
            for first in range(0, len(requests), 9):
                connection = harness.connection(who)
                assert (await connection.connect()).role is role
                for request in requests[first : first + 9]:
                    await connection.send(request)
                    error = await _reply(connection, str(request.request_id), sm.Error)
                    assert error.code is ErrorCode.FORBIDDEN and not error.fatal, error
                await connection.close()

        after = await harness.store.tournaments.all()
        assert [(r.id, r.status, r.starts_at, r.config_toml) for r in after] == [
            (r.id, r.status, r.starts_at, r.config_toml) for r in before
        ]
        coordinator = harness.server.coordinators[tournament_id]
        assert coordinator.director.registration.registered == ["ann"]
        assert coordinator.director.status is d.Status.REGISTERING
        assert await harness.store.ledger.balance("player:ann") == 50_000 - 1_100
        assert await harness.store.ledger.balance("player:bob") == 50_000

        # the operator may: registering bob is streamed to the operator, never to ann
        ann = harness.connection("ann")
        await ann.connect()
        await ann.send(op.OpSubscribe(request_id="sneak"))
        await _reply(ann, "sneak", sm.Error)
        boss = Stream(Connection(harness.url, token=operator.token))
        await boss.start()
        await boss.connection.send(op.OpSubscribe(request_id="sub"))
        await wait_until(lambda: bool(boss.of(sm.Ack)), 20, "op_subscribe's ack")
        await boss.connection.send(
            op.OpPlayerRegister(request_id="reg-bob", tournament_id=tournament_id, player="bob")
        )
        await wait_until(lambda: len(boss.of(sm.Ack)) == 2, 20, "the registration's ack")
        await wait_until(lambda: bool(boss.of(sm.OpEvent)), 20, "op events")
        kinds = [(e.kind, e.player) for e in boss.of(sm.OpEvent)]
        assert (OperatorEventKind.REGISTERED, "bob") in kinds, kinds
        for message in await _drain(ann):
            assert not isinstance(message, sm.OpEvent), message
        # op_unsubscribe: the next command is answered but streams nothing
        await boss.connection.send(op.OpUnsubscribe(request_id="unsub"))
        await wait_until(lambda: len(boss.of(sm.Ack)) == 3, 20, "op_unsubscribe's ack")
        streamed = len(boss.of(sm.OpEvent))
        await boss.connection.send(
            op.OpPlayerUnregister(request_id="unreg-bob", tournament_id=tournament_id, player="bob")
        )
        await wait_until(lambda: len(boss.of(sm.Ack)) == 4, 20, "the unregistration's ack")
        await asyncio.sleep(0.3)  # an event would follow at once; none may come
        assert len(boss.of(sm.OpEvent)) == streamed, boss.of(sm.OpEvent)[streamed:]
        assert await harness.store.ledger.balance("player:bob") == 50_000
        await ann.close()
        await boss.close()


async def _reply(connection: Connection, request_id: str, kind: type[_T]) -> _T:
    """The reply naming ``request_id``, which must be a ``kind``."""
    message = await _next(connection, lambda m: getattr(m, "request_id", None) == request_id)
    assert isinstance(message, kind), message
    return message


async def _next(
    connection: Connection, wanted: Callable[[sm.ServerMessage], bool], timeout: float = 20
) -> sm.ServerMessage:
    deadline = time.monotonic() + timeout
    while True:
        message = await connection.recv(max(0.01, deadline - time.monotonic()))
        if wanted(message):
            return message


async def _drain(connection: Connection, quiet: float = 0.3) -> list[sm.ServerMessage]:
    got: list[sm.ServerMessage] = []
    while True:
        try:
            got.append(await connection.recv(quiet))
        except TimeoutError:
            return got


def calling(legal: te.LegalView, rng: random.Random) -> tuple[ActionKind, int | None]:
    """Checks and calls only: a tournament of these goes on for as long as a test needs."""
    return ActionKind.CHECK_OR_CALL, None


class Stream:
    """Everything one connection receives, read in the background."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.received: list[sm.ServerMessage] = []
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.connection.connect()

        async def read() -> None:
            with contextlib.suppress(ConnectionClosed):
                while True:
                    self.received.append(await self.connection.recv())

        self.task = asyncio.create_task(read())

    def of(self, kind: type[_T]) -> list[_T]:
        return [m for m in self.received if isinstance(m, kind)]

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
        await self.connection.close()


async def test_every_operator_command_through_feltd_admin_tournament(
    postgres_server_url: str, tmp_path: Path
) -> None:
    """`feltd admin operator add` makes the token; `feltd admin tournament ... --url` creates,
    lists, shows, edits, deletes, registers, unregisters, removes no-shows, starts, messages,
    penalizes, sits out, disqualifies, pauses, resumes, reports results and cancels on a running
    server; each shows in the server's state, in the players' messages and in the operators'
    event stream. Mistakes are one line on stderr and a non-zero status."""
    async with running_server(postgres_server_url, speed=5.0) as harness:
        db = ["--database-url", harness.database_url]
        out = await ok("admin", "operator", "add", "boss", *db)
        token = next(line.split()[1] for line in out.splitlines() if line.startswith("token:"))
        await harness.add_players(["ann", "bob", "carl", "dan", "eve"], cents=50_000)
        url = ["--url", harness.url, "--token", token]

        def admin(*args: str) -> list[str]:
            return ["admin", "tournament", *args, *url]

        # the role and the mistakes (at once: each is its own process)
        errors = await asyncio.gather(
            refused(1, "admin", "tournament", "list", "--url", harness.url, "--token", harness.tokens["ann"]),
            refused(1, "admin", "tournament", "list", "--url", harness.url, "--token", "nope"),
            refused(2, "admin", "tournament", "pause", "x", *db),  # no --url: needs a server
            refused(1, *admin("pause", "no-such-tournament")),
            refused(1, "admin", "operator", "add", "boss", *db),  # the name is taken
        )
        assert "not an operator" in errors[0] and "refused the login" in errors[1], errors
        assert "no-such-tournament" in errors[3] and "exists" in errors[4], errors

        watcher = Stream(Connection(harness.url, token=token))
        await watcher.start()
        await watcher.connection.send(op.OpSubscribe(request_id="watch"))
        await wait_until(lambda: bool(watcher.of(sm.Ack)), 20, "op_subscribe's ack")

        file = tmp_path / "t.toml"
        file.write_text(tournament_toml("cli", players=9, level_minutes=120))
        bad = tmp_path / "bad.toml"
        bad.write_text(
            tournament_toml("cli", players=9).replace("starting_stack = 1500", "starting_stack = -1")
        )
        gone = tmp_path / "gone.toml"
        gone.write_text(tournament_toml("gone", players=9))
        empty = tmp_path / "empty.toml"
        empty.write_text(tournament_toml("empty", players=9))
        stored = tmp_path / "stored.toml"
        stored.write_text(tournament_toml("stored", players=9))
        # commands that do not depend on each other run at once, each its own process
        created = await asyncio.gather(
            ok(*admin("create", str(file), "--start", "+1h")),
            refused(2, *admin("create", str(bad))),
            ok(*admin("create", str(gone))),
            ok(*admin("create", str(empty), "--start", "now")),  # nobody came: cancelled at once
            # without --url: the database itself, which the running server then reads
            ok("admin", "tournament", "create", str(stored), "--start", "+2h", *db),
        )
        assert "'cli'" in created[0] and "registering" in created[0], created
        assert "starting_stack" in created[1] and "'stored'" in created[4], created
        later = dt.datetime.fromtimestamp(harness.server.clock.now() + 7200, dt.UTC).replace(microsecond=0)
        taken, early, _, edited = await asyncio.gather(
            refused(1, *admin("create", str(file))),  # the id is taken
            refused(1, *admin("pause", "cli")),  # not started
            ok(*admin("delete", "gone")),
            ok(*admin("edit", "cli", "--start", later.isoformat())),  # a new start
        )
        assert "exists" in taken and "(not_available)" in early, (taken, early)
        assert f"starts at {later.isoformat()}" in edited, edited
        assert (await harness.store.tournaments.get("cli")).starts_at == later
        assert harness.server.coordinators["cli"].director.registration.start_at == later.timestamp()
        for _ in range(1000):
            if (await harness.store.tournaments.get("empty")).status.value == "cancelled":
                break
            await asyncio.sleep(0.02)
        await harness.server.load()  # as its poll would: the tournament made without --url
        file.write_text(file.read_text().replace('name = "Test cli"', 'name = "Renamed"'))
        online, offline, shown, edited = await asyncio.gather(
            ok(*admin("list")),
            ok("admin", "tournament", "list", *db),
            ok(*admin("show", "stored")),
            ok(*admin("edit", "cli", "--file", str(file))),  # a new definition: nobody entered yet
        )
        assert "tournament 'stored'" in shown and "(Renamed)" in edited, (shown, edited)
        listing = {line.split()[0]: line.split()[1] for line in online.splitlines()[1:]}
        assert listing.pop("stored") in ("announced", "registering"), listing
        assert listing == {"cli": "registering", "gone": "cancelled", "empty": "cancelled"}, listing
        rows = {line.split()[0]: line.split()[1] for line in offline.splitlines() if len(line.split()) > 3}
        assert rows["stored"] in ("announced", "registering") and rows["gone"] == "cancelled", rows
        assert "gone" not in harness.server.coordinators

        # players: two register themselves and play; the operator registers three
        players = {
            name: Player(harness.connection(name), "cli", policy=calling, seed=i)
            for i, name in enumerate(["ann", "dan", "eve"])
        }
        tasks = [asyncio.create_task(p.run(until=300)) for p in players.values()]
        await wait_until(lambda: all(p.received for p in players.values()), 20, "players connected")
        await wait_until(
            lambda: len(harness.server.coordinators["cli"].director.registration.registered) == 3,
            20,
            "3 registered",
        )
        bob = harness.connection("bob")  # bob comes by: not a no-show
        await bob.connect()
        await asyncio.gather(ok(*admin("register", "cli", "bob")), ok(*admin("register", "cli", "carl")))
        assert await harness.store.ledger.balance("player:bob") == 50_000 - 1_100
        await asyncio.gather(ok(*admin("unregister", "cli", "bob")), ok(*admin("remove-no-shows", "cli")))
        assert await harness.store.ledger.balance("player:bob") == 50_000
        await bob.close()
        registered = set(harness.server.coordinators["cli"].director.registration.registered)
        assert registered == {"ann", "dan", "eve"}, registered  # carl never connected: refunded
        assert await harness.store.ledger.balance("player:carl") == 50_000
        late = await asyncio.gather(
            refused(1, *admin("unregister", "cli", "bob")),  # not registered any more
            refused(1, *admin("edit", "cli", "--file", str(file))),  # their money is in
            refused(1, *admin("delete", "cli")),
        )
        assert "has entrants" in late[1] and "has entrants" in late[2], late

        await ok(*admin("start", "cli"))
        director = harness.server.coordinators["cli"].director
        await wait_until(
            lambda: director.status is d.Status.RUNNING and all(p.hands for p in players.values()), 20, "play"
        )
        (table_id,) = {next(iter(p.hands)) for p in players.values()}

        await asyncio.gather(  # independent commands: at once
            ok(*admin("message", "cli", "welcome all")),
            ok(*admin("message", "cli", "your table", "--table", str(table_id))),
            ok(*admin("message", "cli", "just you", "--player", "ann")),
            ok(*admin("penalize", "cli", "dan", "2")),
            ok(*admin("sit-out", "cli", "eve")),
        )
        await wait_until(lambda: len(_notices(players["ann"])) == 3, 20, "ann's notices")
        await wait_until(lambda: len(_notices(players["dan"])) == 2, 20, "dan's notices")
        assert sorted(_notices(players["dan"])) == ["welcome all", "your table"]
        assert sorted(_notices(players["ann"])) == ["just you", "welcome all", "your table"]
        await wait_until(lambda: _seat_events(players["ann"], te.HandKilled) != [], 30, "dan's hand killed")
        await wait_until(lambda: SeatChange.AWAY in _changes(players["ann"]), 30, "eve away")
        await ok(*admin("sit-out", "cli", "eve", "--back"))
        await wait_until(lambda: SeatChange.BACK in _changes(players["ann"]), 30, "eve back")
        await ok(*admin("disqualify", "cli", "eve"))
        await wait_until(lambda: SeatChange.DISQUALIFIED in _changes(players["ann"]), 30, "eve out")

        await ok(*admin("pause", "cli"))
        await wait_until(lambda: director.paused, 20, "paused")
        shown, again, results = await asyncio.gather(
            ok(*admin("show", "cli")), refused(1, *admin("pause", "cli")), ok(*admin("results", "cli"))
        )
        assert "clock paused" in shown and "eve" in shown, shown
        assert "(not_available)" in again  # already paused
        assert "eve" in results and "status running" in results, results
        await ok(*admin("resume", "cli"))
        assert not director.paused
        await ok(*admin("cancel", "cli"))
        assert director.status is d.Status.CANCELLED

        await wait_until(
            lambda: all(_cancelled(p) for p in players.values() if p is not players["eve"]), 20, "told"
        )
        for task in tasks:
            task.cancel()
        commands = [e.command for e in watcher.of(sm.OpEvent) if e.kind is OperatorEventKind.COMMAND]
        assert all(
            e.operator == "boss" for e in watcher.of(sm.OpEvent) if e.kind is OperatorEventKind.COMMAND
        )
        for wire in (
            "op_tournament_create",
            "op_tournament_delete",
            "op_tournament_edit",
            "op_player_register",
            "op_player_unregister",
            "op_remove_no_shows",
            "op_tournament_start",
            "op_message",
            "op_penalize",
            "op_sit_out",
            "op_disqualify",
            "op_tournament_pause",
            "op_tournament_resume",
            "op_tournament_cancel",
        ):
            assert wire in commands, (wire, commands)
        kinds = {(e.kind, e.player) for e in watcher.of(sm.OpEvent)}
        assert (OperatorEventKind.UNREGISTERED, "carl") in kinds
        assert (OperatorEventKind.ELIMINATED, "eve") in kinds
        assert any(k is OperatorEventKind.ERROR or k is OperatorEventKind.STATUS for k, _ in kinds)
        await watcher.close()
        await ok("admin", "ledger", "check", *db)


def _notices(player: Player) -> list[str]:
    return [m.text for m in player.received if isinstance(m, sm.Notice)]


def _seat_events(player: Player, kind: type[_T]) -> list[_T]:
    return [m.event for m in player.received if isinstance(m, sm.TableEvent) and isinstance(m.event, kind)]


def _changes(player: Player) -> list[SeatChange]:
    return [e.change for e in _seat_events(player, te.SeatChanged)]


def _cancelled(player: Player) -> bool:
    return any(
        isinstance(m, sm.TournamentEvent) and isinstance(m.event, tev.Cancelled) for m in player.received
    )


async def test_pause_resume_and_cancel_a_live_bot_tournament(postgres_server_url: str) -> None:
    """Twelve bots at two tables. Pause: each table finishes the hand it plays, says it is held
    (``paused``) and deals nothing more; the level clock stops. Resume: every table deals again
    and the level ends later by the time stood still. Cancel (CANCEL-1, early: a rollback): every
    player is told and refunded buy-in and fee through the ledger, which checks out after."""
    names = [f"b{i:02}" for i in range(12)]
    async with running_server(postgres_server_url, speed=20.0) as harness:
        await harness.add_players(names, cents=100_000)
        tournament_id = await harness.create(
            tournament_toml("live", players=12, table_size=6, level_minutes=60), starts_in=3600
        )
        operator = await harness.store.players.add_operator("desk")
        desk = Stream(Connection(harness.url, token=operator.token))
        await desk.start()
        await desk.connection.send(op.OpSubscribe(request_id="sub", tournament_id=tournament_id))
        await desk.connection.send(cm.TournamentSubscribe(tournament_id=tournament_id, request_id="follow"))
        bots = [
            Player(harness.connection(n), tournament_id, policy=calling, seed=i) for i, n in enumerate(names)
        ]
        tasks = [asyncio.create_task(b.run(until=120)) for b in bots]
        director = harness.server.coordinators[tournament_id].director
        await wait_until(lambda: len(director.registration.registered) == 12, 30, "12 registered")

        async def command(request: op.OperatorRequest) -> None:
            acks = len(desk.of(sm.Ack))
            await desk.connection.send(request)
            await wait_until(
                lambda: (
                    len(desk.of(sm.Ack)) > acks
                    or any(e.request_id == request.request_id for e in desk.of(sm.Error))
                ),
                30,
                f"{request.request_id}'s answer",
            )
            assert not [e for e in desk.of(sm.Error) if e.request_id == request.request_id]

        await command(op.OpTournamentStart(request_id="start", tournament_id=tournament_id))
        await wait_until(lambda: len({t for b in bots for t in b.hands}) == 2, 30, "two tables")
        table_ids = sorted({t for b in bots for t in b.hands})
        for table_id in table_ids:  # the operator watches every table
            await desk.connection.send(cm.TableJoin(table_id=table_id))
        await wait_until(lambda: all(_max_hand(bots, t) >= 2 for t in table_ids), 60, "two hands everywhere")
        level_end = _state(desk).next_level_ms
        assert level_end is not None

        # marked before the command: its tables may say they are held before its ack comes
        mark = len(desk.received)
        await command(op.OpTournamentPause(request_id="pause", tournament_id=tournament_id))
        await wait_until(
            lambda: all(_held_after(desk, t, mark) is not None for t in table_ids), 60, "every table held"
        )
        assert director.paused and _state(desk).paused and _state(desk).next_level_ms is None
        await asyncio.sleep(1.0)  # twenty clock seconds: many a hand gap, and no hand is dealt
        for table_id in table_ids:
            held = _held_after(desk, table_id, mark)
            assert held is not None
            after = [m for m in desk.received[held:] if _is(m, te.HandStarted, table_id)]
            assert after == [], f"table {table_id} dealt while paused"

        mark = len(desk.received)
        await command(op.OpTournamentResume(request_id="resume", tournament_id=tournament_id))
        await wait_until(
            lambda: all(any(_is(m, te.HandStarted, t) for m in desk.received[mark:]) for t in table_ids),
            60,
            "every table dealing again",
        )
        resumed_end = _state(desk).next_level_ms
        assert not _state(desk).paused and resumed_end is not None and resumed_end > level_end

        await command(op.OpTournamentCancel(request_id="cancel", tournament_id=tournament_id))
        await wait_until(lambda: all(_cancelled(b) for b in bots), 30, "every player told")
        for bot in bots:
            (kind,) = [
                m.event.kind
                for m in bot.received
                if isinstance(m, sm.TournamentEvent) and isinstance(m.event, tev.Cancelled)
            ]
            assert kind.value == "rollback"
        await wait_until(lambda: all(_last_balance(b) == 100_000 for b in bots), 30, "players' balances")
        await wait_until(lambda: all(_notices(b) for b in bots), 30, "what each got")
        for bot in bots:
            assert _notices(bot) == ["live was cancelled and settled (rollback): 1100 cents to you"]
        for name in names:
            assert await harness.store.ledger.balance(f"player:{name}") == 100_000
        paid: dict[str | None, int] = {}
        for event in desk.of(sm.OpEvent):
            if event.kind is OperatorEventKind.PAID:  # the buy-in and the fee, each its own transfer
                paid[event.player] = paid.get(event.player, 0) + (event.cents or 0)
        assert paid == {name: 1_100 for name in names}, paid
        for task in tasks:
            task.cancel()
        await desk.close()
        await ok("admin", "ledger", "check", "--database-url", harness.database_url)


def _is(message: sm.ServerMessage, kind: type, table_id: int | None = None) -> bool:
    return (
        isinstance(message, sm.TableEvent)
        and isinstance(message.event, kind)
        and table_id in (None, message.table_id)
    )


def _max_hand(players: list[Player], table_id: int) -> int:
    return max((p.hands.get(table_id, 0) for p in players), default=0)


def _held_after(stream: Stream, table_id: int, mark: int) -> int | None:
    """Where, after ``mark``, the table said it is held for the pause."""
    for index in range(mark, len(stream.received)):
        message = stream.received[index]
        if _is(message, te.TableHeld, table_id):
            assert isinstance(message, sm.TableEvent) and isinstance(message.event, te.TableHeld)
            if message.event.reason is HoldReason.PAUSED:
                return index
    return None


def _state(stream: Stream) -> sm.TournamentState:
    return stream.of(sm.TournamentState)[-1]


def _last_balance(player: Player) -> int | None:
    balances = [m.cents for m in player.received if isinstance(m, sm.Balance)]
    return balances[-1] if balances else None


async def test_cancel_after_half_an_hour_pays_the_prize_pool_out(postgres_server_url: str) -> None:
    """A freezeout cancelled more than 30 minutes after its start (CANCEL-1): the prize pool is
    paid out to the players still in, with their fee back; the eliminated get nothing more.
    Every player still in is told (``cancelled``, ``prize_pool``) and their balance is the
    ledger's; the ledger checks out."""
    names = [f"c{i}" for i in range(6)]
    async with running_server(postgres_server_url, speed=400.0) as harness:
        await harness.add_players(names, cents=100_000)
        tournament_id = await harness.create(
            tournament_toml("late", players=6, level_minutes=120), starts_in=36_000
        )
        operator = await harness.store.players.add_operator("desk")
        desk = Stream(Connection(harness.url, token=operator.token))
        await desk.start()
        bots = [
            Player(harness.connection(n), tournament_id, policy=calling, seed=i) for i, n in enumerate(names)
        ]
        tasks = [asyncio.create_task(b.run(until=120)) for b in bots]
        director = harness.server.coordinators[tournament_id].director
        await wait_until(lambda: len(director.registration.registered) == 6, 30, "6 registered")
        await desk.connection.send(op.OpTournamentStart(request_id="start", tournament_id=tournament_id))
        await wait_until(lambda: director.status is d.Status.RUNNING, 30, "the start")
        started = harness.server.clock.now()
        await wait_until(lambda: harness.server.clock.now() > started + 31 * 60, 60, "half an hour of play")
        assert director.hands_dealt > 0
        await desk.connection.send(op.OpTournamentCancel(request_id="cancel", tournament_id=tournament_id))
        await wait_until(lambda: bool(desk.of(sm.Ack)), 30, "the cancel's ack")
        left = {s.player for t in director.tables.values() for s in t.players}  # seated at the end
        assert left
        told = [b for b in bots if b.connection.player in left]
        await wait_until(lambda: all(_cancelled(b) for b in told), 30, "the players left told")
        for bot in told:
            (kind,) = [
                m.event.kind
                for m in bot.received
                if isinstance(m, sm.TournamentEvent) and isinstance(m.event, tev.Cancelled)
            ]
            assert kind.value == "prize_pool"
        got = {n: await harness.store.ledger.balance(f"player:{n}") - (100_000 - 1_100) for n in names}
        assert sum(got.values()) == 6 * 1_000 + 100 * len(left), got  # the pool, and the fees of those in
        assert all(got[n] == 0 for n in names if n not in left), got
        assert all(got[n] > 100 for n in left), got
        await wait_until(lambda: all(_notices(b) for b in told), 30, "what each got")
        for bot in told:
            (notice,) = _notices(bot)
            assert notice.endswith(f": {got[str(bot.connection.player)]} cents to you"), notice
        await wait_until(
            lambda: all(_last_balance(b) == 100_000 - 1_100 + got[str(b.connection.player)] for b in told),
            30,
            "balances told",
        )
        for task in tasks:
            task.cancel()
        await desk.close()
        await ok("admin", "ledger", "check", "--database-url", harness.database_url)


async def test_a_command_sent_again_is_done_once_and_readings_are_fresh(postgres_server_url: str) -> None:
    """The same ``request_id`` again: a create, a registration, a delete get their first answer
    and happen once; a show is answered with the tournament as it is now."""
    async with running_server(postgres_server_url, speed=1.0) as harness:
        await harness.add_players(["ann"], cents=50_000)
        operator = await harness.store.players.add_operator("desk")
        desk = Stream(Connection(harness.url, token=operator.token))
        await desk.start()

        async def twice(request: op.OperatorRequest) -> list[sm.ServerMessage]:
            request_id = str(request.request_id)
            for _ in range(2):
                await desk.connection.send(request)
            await wait_until(lambda: len(_answers(desk, request_id)) == 2, 30, request_id)
            return _answers(desk, request_id)

        toml = tournament_toml("again", players=9)
        created = await twice(op.OpTournamentCreate(request_id="c", toml=toml))
        assert [type(m) for m in created] == [sm.OpTournament, sm.OpTournament], created
        assert [r.id for r in await harness.store.tournaments.all()] == ["again"]
        registered = await twice(op.OpPlayerRegister(request_id="r", tournament_id="again", player="ann"))
        assert [type(m) for m in registered] == [sm.Ack, sm.Ack], registered
        assert await harness.store.ledger.balance("player:ann") == 50_000 - 1_100  # paid once
        await desk.connection.send(op.OpTournamentShow(request_id="s", tournament_id="again"))
        await desk.connection.send(op.OpPlayerUnregister(request_id="u", tournament_id="again", player="ann"))
        await desk.connection.send(op.OpTournamentShow(request_id="s", tournament_id="again"))
        await wait_until(lambda: len(_answers(desk, "s")) == 2, 30, "two shows")
        entrants = [m.tournament.entrants for m in _answers(desk, "s") if isinstance(m, sm.OpTournament)]
        assert entrants == [1, 0], entrants
        deleted = await twice(op.OpTournamentDelete(request_id="d", tournament_id="again"))
        assert [type(m) for m in deleted] == [sm.Ack, sm.Ack], deleted
        await desk.close()


def _answers(stream: Stream, request_id: str) -> list[sm.ServerMessage]:
    return [m for m in stream.received if getattr(m, "request_id", None) == request_id]


async def test_a_player_cannot_answer_for_an_operator(postgres_server_url: str) -> None:
    """A player whose id spells an operator's key (``operator:desk``) sends a request under the id
    the operator uses next: the operator's command is still carried out, not answered with the
    player's old reply."""
    async with running_server(postgres_server_url, speed=1.0) as harness:
        await harness.add_players(["operator:desk", "bob"], cents=50_000)
        tournament_id = await harness.create(tournament_toml("mixed", players=9), starts_in=3600)
        operator = await harness.store.players.add_operator("desk")
        mimic = harness.connection("operator:desk")
        await mimic.connect()
        await mimic.send(cm.Register(tournament_id=tournament_id, request_id="op-1"))
        await _reply(mimic, "op-1", sm.Ack)
        desk = Connection(harness.url, token=operator.token)
        await desk.connect()
        await desk.send(op.OpPlayerRegister(request_id="op-1", tournament_id=tournament_id, player="bob"))
        await _reply(desk, "op-1", sm.Ack)
        registered = harness.server.coordinators[tournament_id].director.registration.registered
        assert sorted(registered) == ["bob", "operator:desk"], registered
        await mimic.close()
        await desk.close()


async def test_a_removed_operator_logs_in_no_more(postgres_server_url: str) -> None:
    """`feltd admin operator list` shows the accounts (never a token); `remove` revokes one: its
    token is refused at the next login, a connection it already opened is told goodbye and
    closed within seconds (with its event stream), and removing it again is one line and exit 1."""
    async with running_server(postgres_server_url) as harness:
        db = ["--database-url", harness.database_url]
        out = await ok("admin", "operator", "add", "temp", *db)
        token = next(line.split()[1] for line in out.splitlines() if line.startswith("token:"))
        listing = await ok("admin", "operator", "list", *db)
        assert "temp" in [line.split("\t")[0] for line in listing.splitlines()]
        assert token not in listing
        assert await ok("admin", "tournament", "list", "--url", harness.url, "--token", token) is not None
        open_before = Stream(Connection(harness.url, token=token))
        await open_before.start()
        await open_before.connection.send(op.OpSubscribe(request_id="watch"))
        await wait_until(lambda: bool(open_before.of(sm.Ack)), 20, "op_subscribe's ack")
        removed = await ok("admin", "operator", "remove", "temp", *db)
        assert "removed" in removed
        assert "temp" not in [
            line.split("\t")[0] for line in (await ok("admin", "operator", "list", *db)).splitlines()
        ]
        error = await refused(1, "admin", "tournament", "list", "--url", harness.url, "--token", token)
        assert "refused the login" in error, error
        again = await refused(1, "admin", "operator", "remove", "temp", *db)
        assert "no operator is named 'temp'" in again, again
        await wait_until(lambda: bool(open_before.of(sm.Goodbye)), 20, "the removed operator's goodbye")
        (goodbye,) = open_before.of(sm.Goodbye)
        assert goodbye.reason is GoodbyeReason.KICKED and "removed" in goodbye.message
        assert open_before.task is not None
        await asyncio.wait_for(open_before.task, 10)  # the server closed it
        await open_before.close()
