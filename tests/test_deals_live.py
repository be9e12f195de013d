"""Final-table deals over the socket (DEAL-1..4): three players at a running server ask, see the
proposals' numbers, walk away once, then agree; the money moves through the ledger."""

from __future__ import annotations

import asyncio
import random
from typing import TypeVar

from server_harness import Player, running_server, tournament_toml, wait_until

from client.connection import Connection
from protocol import client_messages as cm
from protocol import operator_requests as op
from protocol import server_messages as sm
from protocol import table_events as te
from protocol import tournament_events as tev
from protocol.errors import ErrorCode
from protocol.kinds import ActionKind, DealMethod, DealPhase, HoldReason

_T = TypeVar("_T")

NAMES = ["ann", "bob", "cat"]
POOL = 3 * 1_000  # three buy-ins of 1000 cents
PRIZES = [1_500, 900, 600]  # the payout table below: 50 %, 30 %, 20 %
DEPOSIT = 100_000


def calling(legal: te.LegalView, rng: random.Random) -> tuple[ActionKind, int | None]:
    """Checks and calls only: nobody busts before the players have made their deal."""
    return ActionKind.CHECK_OR_CALL, None


def _talks(player: Player) -> list[tev.DealTalks]:
    return [
        m.event
        for m in player.received
        if isinstance(m, sm.TournamentEvent) and isinstance(m.event, tev.DealTalks)
    ]


def _events(player: Player, kind: type[_T], after: int = 0) -> list[_T]:
    found: list[_T] = []
    for message in player.received[after:]:
        body = getattr(message, "event", None)
        if isinstance(message, sm.TournamentEvent | sm.TableEvent) and isinstance(body, kind):
            found.append(body)
    return found


def _states(player: Player) -> list[sm.TournamentState]:
    return [m for m in player.received if isinstance(m, sm.TournamentState)]


async def test_final_table_deal_talks_abandon_then_agree(postgres_server_url: str) -> None:
    """All three ask: the clock stops (``negotiating``, no next level) and the table holds for
    the deal. A chip chop and an ICM proposal each show every player's chips and cents, which with
    what is kept to play for add up to the prizes left; a proposal keeping more than the rules
    allow is refused. One player walks away after two accepted: the clock runs and hands are dealt
    again. Asked again, an ICM deal accepted by all is paid through the ledger as proposed, ends
    the tournament, and the ledger checks out."""
    toml = tournament_toml(
        "deal",
        players=3,
        level_minutes=60,
        extra='[payouts]\nmode = "table"\ntable = [5000, 3000, 2000]\n\n'
        "[deals]\nmax_left_to_play_percent = 5\n",
    )
    async with running_server(postgres_server_url, speed=20.0) as harness:
        await harness.add_players(NAMES, cents=DEPOSIT)
        tournament_id = await harness.create(toml, starts_in=3600)
        players = {
            name: Player(harness.connection(name), tournament_id, policy=calling, seed=i)
            for i, name in enumerate(NAMES)
        }
        tasks = [asyncio.create_task(p.run(until=120)) for p in players.values()]
        director = harness.server.coordinators[tournament_id].director
        await wait_until(lambda: len(director.registration.registered) == 3, 30, "three registered")
        operator = await harness.store.players.add_operator("desk")
        desk = Connection(harness.url, token=operator.token)
        await desk.connect()
        await desk.send(op.OpTournamentStart(request_id="go", tournament_id=tournament_id))
        await wait_until(lambda: all(p.hands for p in players.values()), 30, "the first hand")
        for player in players.values():
            await player.connection.send(cm.TournamentSubscribe(tournament_id=tournament_id))
        ann = players["ann"]

        async def send(name: str, message: cm.ClientMessage) -> None:
            await players[name].connection.send(message)

        async def ask_all(round_: str) -> None:
            marks = {name: len(p.received) for name, p in players.items()}
            for name in NAMES:
                await send(name, op.DealAsk(tournament_id=tournament_id, request_id=f"ask-{round_}-{name}"))
            await wait_until(
                lambda: any(t.phase is DealPhase.NEGOTIATING for t in _talks(ann)[-1:]), 30, "negotiating"
            )
            # the clock stopped: every player's latest state has no next level
            await wait_until(
                lambda: all(_states(p) and _states(p)[-1].next_level_ms is None for p in players.values()),
                30,
                "the clock stopped",
            )
            # the table finishes its hand, then waits for the deal
            await wait_until(
                lambda: any(h.reason is HoldReason.DEAL for h in _events(ann, te.TableHeld, marks["ann"])),
                30,
                "the table held for the deal",
            )

        def latest(name: str) -> tev.DealTalks:
            return _talks(players[name])[-1]

        # one player's ask alone stops nothing
        await send("ann", op.DealAsk(tournament_id=tournament_id, request_id="ask-alone"))
        await wait_until(lambda: bool(_talks(ann)), 30, "deal_talks")
        assert latest("ann").phase is DealPhase.ASKING and latest("ann").asked == ["ann"]
        await ask_all("one")

        # a chip chop: everyone sees the numbers
        await send(
            "bob", op.DealPropose(tournament_id=tournament_id, request_id="chop", method=DealMethod.CHIP_CHOP)
        )
        await wait_until(lambda: all(latest(n).method is DealMethod.CHIP_CHOP for n in NAMES), 30, "the chop")
        chop = latest("cat")
        assert chop.remaining_cents == sum(PRIZES) == POOL
        assert sum(s.cents for s in chop.shares) + chop.left_to_play_cents == chop.remaining_cents
        assert {s.player for s in chop.shares} == set(NAMES) and chop.left_to_play_cents == 0
        assert sum(s.chips for s in chop.shares) == 3 * 1_500
        assert all(s.cents >= PRIZES[-1] for s in chop.shares)  # the smallest prize, then chips
        by_chips = sorted(chop.shares, key=lambda s: s.chips)
        assert [s.cents for s in by_chips] == sorted(s.cents for s in by_chips)

        # too much kept back: refused with the limit, the chop still on the table
        await send(
            "bob", op.DealPropose(tournament_id=tournament_id, request_id="greedy", left_to_play_cents=1_000)
        )
        await wait_until(lambda: any(e.request_id == "greedy" for e in players["bob"].errors), 30, "refusal")
        (refusal,) = [e for e in players["bob"].errors if e.request_id == "greedy"]
        assert refusal.code is not ErrorCode.INTERNAL and latest("bob").method is DealMethod.CHIP_CHOP

        # ICM with 5 % kept to play for replaces it and clears acceptances
        await send("ann", op.DealAccept(tournament_id=tournament_id, request_id="ok-chop"))
        await wait_until(lambda: latest("ann").accepted == ["ann"], 30, "ann accepted the chop")
        kept = POOL * 5 // 100
        await send(
            "cat", op.DealPropose(tournament_id=tournament_id, request_id="icm", left_to_play_cents=kept)
        )
        await wait_until(lambda: latest("ann").method is DealMethod.ICM, 30, "the ICM proposal")
        icm = latest("ann")
        assert icm.accepted == [] and icm.left_to_play_cents == kept
        assert sum(s.cents for s in icm.shares) + kept == icm.remaining_cents == POOL

        # two accept, the third walks away: play goes on
        await send("ann", op.DealAccept(tournament_id=tournament_id, request_id="ok-1"))
        await send("bob", op.DealAccept(tournament_id=tournament_id, request_id="ok-2"))
        await wait_until(lambda: latest("cat").accepted == ["ann", "bob"], 30, "two accepted")
        mark = len(ann.received)
        await send("cat", op.DealAbandon(tournament_id=tournament_id, request_id="no"))
        await wait_until(lambda: latest("ann").phase is DealPhase.ABANDONED, 30, "abandoned")
        await wait_until(lambda: bool(_events(ann, te.HandStarted, mark)), 30, "a hand after the talks")
        await wait_until(lambda: _states(ann)[-1].next_level_ms is not None, 30, "the clock running")
        assert await harness.store.ledger.balance("player:ann") == DEPOSIT - 1_100  # nothing paid

        # asked again: an ICM deal of everything, accepted by all, is paid as proposed
        await ask_all("two")
        await send("ann", op.DealPropose(tournament_id=tournament_id, request_id="final"))
        await wait_until(
            lambda: all(
                latest(n).method is DealMethod.ICM and latest(n).left_to_play_cents == 0 for n in NAMES
            ),
            30,
            "the final proposal",
        )
        proposal = {s.player: s.cents for s in latest("bob").shares}
        assert sum(proposal.values()) == POOL
        for name in NAMES:
            await send(name, op.DealAccept(tournament_id=tournament_id, request_id=f"yes-{name}"))
        await wait_until(lambda: all(p.ended is not None for p in players.values()), 30, "the end")
        (done,) = _events(ann, tev.DealDone)
        assert {s.player: s.cents for s in done.shares} == proposal and done.ends
        for name in NAMES:
            assert await harness.store.ledger.balance(f"player:{name}") == DEPOSIT - 1_100 + proposal[name]
        report = await harness.store.ledger.check()
        assert report.ok, report.problems
        # over: the operators' results and players are the deal's
        await desk.send(op.OpTournamentResults(request_id="res", tournament_id=tournament_id))
        results = await _answer(desk, "res")
        assert isinstance(results, sm.OpResults) and results.status.value == "finished", results
        assert sorted(p for r in results.results for p in r.players) == sorted(NAMES)
        assert {p: r.prize_cents for r in results.results for p in r.players} == proposal
        await desk.send(op.OpTournamentShow(request_id="show", tournament_id=tournament_id))
        shown = await _answer(desk, "show")
        assert isinstance(shown, sm.OpTournament) and shown.tournament.status.value == "finished", shown
        assert {p.player: p.prize_cents for p in shown.players} == proposal
        # and the database's results table, written with the finished status, says the same
        stored = await harness.store.tournaments.results(tournament_id)
        assert {r.player_id: r.prize for r in stored} == proposal
        assert {r.player_id: r.place for r in stored} == {
            p: r.place for r in results.results for p in r.players
        }
        for task in tasks:
            task.cancel()
        await desk.close()


async def _answer(connection: Connection, request_id: str) -> sm.ServerMessage:
    while True:
        message = await connection.recv(30)
        if getattr(message, "request_id", None) == request_id:
            return message


async def test_a_deal_that_keeps_money_back_plays_on_for_it(postgres_server_url: str) -> None:
    """An ICM deal keeping 5 % back (DEAL-4): the shares are paid at once, play goes on, and the
    winner of what is left gets the money kept back; everything paid adds up to the pool and the
    ledger checks out."""
    toml = tournament_toml(
        "keep",
        players=3,
        level_minutes=60,
        extra='[payouts]\nmode = "table"\ntable = [5000, 3000, 2000]\n',
    )
    after_deal = False

    def cautious_then_bold(legal: te.LegalView, rng: random.Random) -> tuple[ActionKind, int | None]:
        if after_deal and legal.max_raise_to is not None:
            return ActionKind.RAISE, legal.max_raise_to  # all in: the rest is over in a few hands
        return ActionKind.CHECK_OR_CALL, None

    async with running_server(postgres_server_url, speed=20.0) as harness:
        await harness.add_players(NAMES, cents=DEPOSIT)
        tournament_id = await harness.create(toml, starts_in=3600)
        players = {
            name: Player(harness.connection(name), tournament_id, policy=cautious_then_bold, seed=i)
            for i, name in enumerate(NAMES)
        }
        tasks = [asyncio.create_task(p.run(until=120)) for p in players.values()]
        director = harness.server.coordinators[tournament_id].director
        await wait_until(lambda: len(director.registration.registered) == 3, 30, "three registered")
        operator = await harness.store.players.add_operator("desk")
        desk = Connection(harness.url, token=operator.token)
        await desk.connect()
        await desk.send(op.OpTournamentStart(request_id="go", tournament_id=tournament_id))
        await wait_until(lambda: all(p.hands for p in players.values()), 30, "the first hand")
        ann = players["ann"]
        for name in NAMES:
            await players[name].connection.send(
                op.DealAsk(tournament_id=tournament_id, request_id=f"a-{name}")
            )
        await wait_until(
            lambda: any(h.reason is HoldReason.DEAL for h in _events(ann, te.TableHeld)),
            30,
            "held for the deal",
        )
        kept = POOL * 5 // 100
        await ann.connection.send(
            op.DealPropose(tournament_id=tournament_id, request_id="p", left_to_play_cents=kept)
        )
        await wait_until(
            lambda: bool(_talks(ann)) and _talks(ann)[-1].method is DealMethod.ICM, 30, "proposal"
        )
        proposal = {s.player: s.cents for s in _talks(ann)[-1].shares}
        assert sum(proposal.values()) + kept == POOL
        after_deal = True
        for name in NAMES:
            await players[name].connection.send(
                op.DealAccept(tournament_id=tournament_id, request_id=f"y-{name}")
            )
        await wait_until(lambda: bool(_events(ann, tev.DealDone)), 30, "the deal paid")
        (done,) = _events(ann, tev.DealDone)
        assert not done.ends and done.left_to_play_cents == kept
        await wait_until(lambda: all(p.ended is not None for p in players.values()), 60, "the end")
        ended = ann.ended
        assert ended is not None
        (winner,) = ended.results[0].players
        for name in NAMES:
            expected = DEPOSIT - 1_100 + proposal[name] + (kept if name == winner else 0)
            assert await harness.store.ledger.balance(f"player:{name}") == expected, name
        report = await harness.store.ledger.check()
        assert report.ok, report.problems
        # the end reached the players after the finished status and its results were written
        stored = {r.player_id: r for r in await harness.store.tournaments.results(tournament_id)}
        assert {name: r.prize for name, r in stored.items()} == {
            name: proposal[name] + (kept if name == winner else 0) for name in NAMES
        }
        assert stored[winner].place == 1
        for task in tasks:
            task.cancel()
        await desk.close()
