"""``hand_list`` and ``hand_history`` over real sockets: a player gets the stored hands they were
dealt in, as they saw them (their own hole cards, others' only where shown at the showdown), and
nothing of the others; an observer gets nothing; an operator gets every card."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time

from server_harness import Harness, Player, running_server, tournament_toml

from client.connection import Connection
from engine.cards import cards_str
from engine.history.phh import PhhActionKind, loads_phh, parse_action
from protocol import client_messages as cm
from protocol import operator_requests as op
from protocol import server_messages as sm
from protocol import table_events as te
from protocol.errors import ErrorCode
from protocol.kinds import ActionKind
from server.store.histories import HandRecord

NAMES = ["ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy"]


def calls(legal: te.LegalView, rng: random.Random) -> tuple[ActionKind, int | None]:
    """ann checks and calls to the end: her hands reach showdowns."""
    return ActionKind.CHECK_OR_CALL, None


def limps(legal: te.LegalView, rng: random.Random) -> tuple[ActionKind, int | None]:
    """The others never bet: nobody busts, some fold (their cards stay hidden), the rest show
    down with ann."""
    if legal.can_fold and rng.random() < 0.3:
        return ActionKind.FOLD, None
    return ActionKind.CHECK_OR_CALL, None


def _dealt(hand: HandRecord) -> dict[str, str]:
    """Each player's hole cards in the stored (operator's) record."""
    parsed = loads_phh(hand.phh)
    names = parsed.players or ()
    cards = {}
    for action in map(parse_action, parsed.actions):
        if action.kind is PhhActionKind.DEAL_HOLE and action.player is not None and action.cards:
            cards[names[action.player - 1]] = cards_str(action.cards)
    return cards


def _shown(hand: HandRecord) -> set[str]:
    parsed = loads_phh(hand.phh)
    names = parsed.players or ()
    return {
        names[a.player - 1]
        for a in map(parse_action, parsed.actions)
        if a.kind is PhhActionKind.SHOW_MUCK and a.player is not None and a.cards is not None
    }


async def _ask(
    connection: Connection, request: cm.HandList | cm.HandHistory | op.OpTournamentPause
) -> sm.ServerMessage:
    await connection.send(request)
    deadline = time.monotonic() + 30
    while True:
        message = await connection.recv(deadline - time.monotonic())
        if isinstance(message, sm.HandHistories | sm.HandRecord | sm.Error | sm.Ack) and (
            message.request_id == request.request_id
        ):
            return message


async def _until_no_new_hands(harness: Harness, tournament_id: str) -> None:
    """Waits until the paused tournament's tables have finished the hands they were playing."""
    counts = [-2, -1]
    deadline = time.monotonic() + 60
    while counts[-1] != counts[-2]:
        assert time.monotonic() < deadline, "the paused tournament kept dealing"
        await asyncio.sleep(0.5)
        counts.append(len(await harness.store.histories.by_tournament(tournament_id)))


async def _hands_to_ask_about(
    harness: Harness, tournament_id: str
) -> tuple[HandRecord, HandRecord, HandRecord]:
    """A hand ann played where someone else's cards stayed hidden, one where someone else showed,
    and one ann was not dealt in; waits until the tournament has played them."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        hands = await harness.store.histories.by_tournament(tournament_id)
        ann = [h for h in hands if "ann" in _dealt(h)]
        hidden = [h for h in ann if set(_dealt(h)) - _shown(h) - {"ann"}]
        shown = [h for h in ann if _shown(h) - {"ann"}]
        other = [h for h in hands if "ann" not in _dealt(h)]
        if hidden and shown and other:
            # the newest of each: the lists asked for next hold the newest hands only
            return hidden[-1], shown[-1], other[-1]
        await asyncio.sleep(0.5)
    found = (len(hands), len(ann), len(hidden), len(shown), len(other))
    raise AssertionError(f"the tournament played no such hands (hands, ann's, hidden, shown, other): {found}")


async def test_hand_history_privacy_player_observer_operator(postgres_server_url: str) -> None:
    async with running_server(postgres_server_url, speed=40.0) as harness:
        await harness.add_players(NAMES)
        operator = await harness.store.players.add_operator("boss")
        tournament_id = await harness.create(
            tournament_toml("hh", players=len(NAMES), table_size=3, level_minutes=5), starts_in=60
        )
        players = [
            Player(harness.connection(n), tournament_id, limps, seed=i) for i, n in enumerate(NAMES[1:])
        ]
        runs = asyncio.ensure_future(asyncio.gather(*(p.run() for p in players)))
        ann_player = Player(harness.connection("ann"), tournament_id, calls)
        ann_runs = asyncio.ensure_future(ann_player.run())
        ann = harness.connection("ann", json=True)
        observer = harness.connection(None)
        boss = Connection(harness.url, token=operator.token)
        try:
            await boss.connect()
            await _hands_to_ask_about(harness, tournament_id)
            # the operator pauses, so the lists below (the newest hands) stop moving
            paused = await _ask(boss, op.OpTournamentPause(request_id="pause", tournament_id=tournament_id))
            assert isinstance(paused, sm.Ack), paused
            await _until_no_new_hands(harness, tournament_id)
            hidden, shown, other = await _hands_to_ask_about(harness, tournament_id)
            ann_runs.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ann_runs
            await ann_player.connection.close()
            await ann.connect()
            await observer.connect()

            # the list: ann's own hands only, newest first
            listed = await _ask(ann, cm.HandList(request_id="l1", tournament_id=tournament_id, limit=100))
            assert isinstance(listed, sm.HandHistories), listed
            ids = [h.hand_id for h in listed.hands]
            assert hidden.hand_id in ids and shown.hand_id in ids and other.hand_id not in ids
            assert all("ann" in h.players for h in listed.hands)
            finished = [h.finished_at_ms for h in listed.hands]
            assert finished == sorted(finished, reverse=True)

            # a hand with a folded (or mucked) opponent: own cards there, theirs not
            record = await _ask(ann, cm.HandHistory(request_id="h1", hand_id=hidden.hand_id))
            assert isinstance(record, sm.HandRecord), record
            cards = _dealt(hidden)
            concealed = set(cards) - _shown(hidden) - {"ann"}
            text = " ".join(record.actions)
            assert cards["ann"] in text
            assert all(cards[name] not in text for name in concealed), (cards, record.actions)
            assert f"d dh p{record.players.index(next(iter(concealed))) + 1} ????" in record.actions
            assert record.players == list(loads_phh(hidden.phh).players or ())
            assert len(record.starting_stacks) == len(record.players) == len(record.seats)

            # a hand with a showdown: the shown cards are there
            record = await _ask(ann, cm.HandHistory(request_id="h2", hand_id=shown.hand_id))
            assert isinstance(record, sm.HandRecord), record
            text = " ".join(record.actions)
            assert all(_dealt(shown)[name] in text for name in _shown(shown))

            # a hand ann was not dealt in, and a made-up id: the same answer, no data
            for request_id, hand_id in (("h3", other.hand_id), ("h4", "no-such-hand")):
                refused = await _ask(ann, cm.HandHistory(request_id=request_id, hand_id=hand_id))
                assert isinstance(refused, sm.Error) and refused.code is ErrorCode.NOT_FOUND, refused
                assert not refused.fatal

            # an observer: nothing
            for request in (
                cm.HandHistory(request_id="o1", hand_id=hidden.hand_id),
                cm.HandList(request_id="o2", tournament_id=tournament_id),
            ):
                refused = await _ask(observer, request)
                assert isinstance(refused, sm.Error) and refused.code is ErrorCode.FORBIDDEN, refused

            # an operator: any hand, every card
            record = await _ask(boss, cm.HandHistory(request_id="b1", hand_id=hidden.hand_id))
            assert isinstance(record, sm.HandRecord), record
            assert "????" not in " ".join(record.actions)
            assert all(dealt in " ".join(record.actions) for dealt in _dealt(hidden).values())
            record = await _ask(boss, cm.HandHistory(request_id="b4", hand_id=other.hand_id))
            assert isinstance(record, sm.HandRecord) and "ann" not in record.players, record
            listed = await _ask(boss, cm.HandList(request_id="b2", tournament_id=tournament_id, limit=100))
            assert isinstance(listed, sm.HandHistories) and other.hand_id in [h.hand_id for h in listed.hands]
            refused = await _ask(boss, cm.HandList(request_id="b3"))
            assert isinstance(refused, sm.Error) and refused.code is ErrorCode.INVALID_FIELD, refused
        finally:
            runs.cancel()
            with contextlib.suppress(asyncio.CancelledError, AssertionError):
                await runs
            for connection in (ann, observer, boss):
                with contextlib.suppress(Exception):
                    await connection.close()
