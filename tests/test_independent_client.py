"""Acceptance 5 of the game server: clients written from docs/protocol.md alone play.

The setup (a server on a fresh database, players with money, a 6-max tournament) uses the
project's test harness; the client, tests/independent_client.py, imports nothing of feltd, and
what it saw is checked against what the document promises.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from independent_client import JSON, MSGPACK, IndependentPlayer, Message, Wire
from server_harness import running_server, tournament_toml

DEPOSIT = 100_000
PRICE = 1000 + 100  # tournament_toml's buy-in and fee
STACK = 1500


def _public(message: Message) -> Message:
    """A table event as every follower gets it: no hole cards, no `legal` (section 8)."""
    event = dict(message["event"])
    if event["type"] == "hole_cards":
        event["cards"] = None
    if event["type"] == "turn":
        event["legal"] = None
    return {**message, "event": event}


def test_the_independent_client_imports_nothing_of_feltd() -> None:
    source = Path(__file__).with_name("independent_client.py").read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    ours = {"engine", "protocol", "server", "client", "server_harness", "conftest"}
    assert not imported & ours, f"the independent client imports {sorted(imported & ours)}"
    assert {"websockets", "msgpack", "json"} <= imported, imported


async def test_refusals_before_and_after_welcome_as_the_document_says(postgres_server_url: str) -> None:
    """Sections 3, 4 and 16: before `welcome` a refused frame is fatal (an `error` with `fatal`,
    a `goodbye` `fatal_error`, close code 1008); after it the same mistake is answered and the
    connection carries on."""
    async with running_server(postgres_server_url) as harness:
        await harness.add_players(["early"])
        wire = Wire(harness.url, MSGPACK)
        await wire.open()
        await wire.send({"type": "hello", "protocol": 1, "token": harness.tokens["early"], "colour": "red"})
        received, code = await wire.until_closed(5)
        assert [m["type"] for m in received] == ["error", "goodbye"], received
        assert (received[0]["code"], received[0]["fatal"]) == ("invalid_field", True), received
        assert received[1]["reason"] == "fatal_error" and code == 1008, (received, code)

        wire = Wire(harness.url, MSGPACK)
        await wire.open()
        await wire.send({"type": "hello", "protocol": 1, "token": harness.tokens["early"]})
        assert (await wire.recv(5))["type"] == "welcome"
        await wire.send_raw('{"type": "ping", "nonce": 1}')  # a text frame on feltd.msgpack.v1
        await wire.send({"type": "ping", "nonce": 2})
        answers = [await wire.recv(5) for _ in range(3)]  # balance, the error, the pong
        refused = [m for m in answers if m["type"] == "error"]
        assert [(m["code"], m["fatal"]) for m in refused] == [("wrong_frame_kind", False)], answers
        assert {"type": "pong", "nonce": 2} in [{k: m.get(k) for k in ("type", "nonce")} for m in answers]
        await wire.close()


async def _play(
    postgres_server_url: str,
    names: list[str],
    *,
    json: set[int],
    reconnect: dict[int, int],
    sit_out: dict[int, int],
) -> list[IndependentPlayer]:
    """The setup (the harness: a server, players with money, a 6-max tournament for ``names``),
    then one independent client per player, ``json`` ones on feltd.json.v1, ``reconnect`` ones
    dropping their connection once after that many hands, ``sit_out`` ones sitting out once
    after that many hands; all play to the end."""
    async with running_server(postgres_server_url, speed=20.0, seed=5) as harness:
        await harness.add_players(names, cents=DEPOSIT)
        toml = tournament_toml("indep", players=len(names), table_size=6, level_minutes=2)
        tournament_id = await harness.create(toml, starts_in=40)
        players = [
            IndependentPlayer(
                harness.url,
                harness.tokens[name],
                name,
                tournament_id,
                subprotocol=JSON if index in json else MSGPACK,
                seed=index,
                reconnect_after_hands=reconnect.get(index),
                sit_out_after_hands=sit_out.get(index),
            )
            for index, name in enumerate(names)
        ]
        await asyncio.wait_for(asyncio.gather(*(player.play(timeout=300) for player in players)), 320)
    return players


def _check_player(player: IndependentPlayer) -> None:
    """What one client saw, against what docs/protocol.md promises."""
    who = player.name
    assert player.broken == [], player.broken
    assert player.goodbye is None, player.goodbye
    # logged in, read the lobby, registered
    assert player.welcome is not None
    welcome = player.welcome
    assert (welcome["role"], welcome["player"], welcome["protocol"]) == ("player", who, 1), welcome
    entry = player.lobby_entry
    assert entry is not None
    assert (entry["status"], entry["buy_in_cents"], entry["fee_cents"], entry["starting_stack"]) == (
        "registering",
        1000,
        100,
        STACK,
    ), entry
    assert player.balances[:2] == [DEPOSIT, DEPOSIT - PRICE], (who, player.balances)
    assert player.registrations[:2] == ["registered", "playing"], (who, player.registrations)
    assert player.registrations[-1] == "eliminated", (who, player.registrations)
    # its seat and its table
    assert player.seats and player.seats[0]["reason"] == "start", (who, player.seats)
    first = player.snapshots[0]
    assert first["table_id"] == player.seats[0]["table_id"] and first["table_size"] == 6, first
    # between hands, the stakes of the level (tournament_toml's first: 10/20) and 2 time banks each
    assert (first["level"], first["small_blind"], first["big_blind"]) == (1, 10, 20), first
    assert {seat["time_banks"] for seat in first["seats"]} == {2}, first["seats"]
    mine = [seat for seat in first["seats"] if seat["player"] == who]
    assert [seat["seat"] for seat in mine] == [player.seats[0]["seat"]], (who, first["seats"])
    assert player.unseated is not None and player.unseated["reason"] in ("eliminated", "tournament_ended")
    # hands: its own two cards in every hand it was dealt into
    assert player.hands_played() >= 1, who
    assert set(player.hole_cards) == set(player.hands_dealt_in), who
    # every act acknowledged once (twice when resent), applied once, as sent
    assert player.sent, f"{who} never had a decision"
    for action_id, sent in player.sent.items():
        if action_id in player.unanswered_at_drop:
            # sent just before the connection dropped: its ack was lost, its action_taken is
            # among the events (counted below)
            assert sent.answers in ([], ["ack"]), (who, action_id, sent)
        elif action_id not in player.resent:
            assert sent.answers == ["ack"], (who, action_id, sent)
        elif sent.hand_over_before_answer:
            # the first copy ended the hand: the second names a hand no longer played
            assert sent.answers in (["ack", "ack"], ["ack", "stale_hand"]), (who, action_id, sent)
        else:
            assert sent.answers == ["ack", "ack"], (who, action_id, sent)
    stale = [e for e in player.errors if e["code"] == "stale_hand" and e["request_id"] in player.resent]
    assert [e for e in player.errors if e not in stale] == [], (who, player.errors)
    assert len(player.my_actions) == len(player.sent), (who, len(player.my_actions), len(player.sent))
    for taken, sent in zip(player.my_actions, player.sent.values(), strict=True):
        if sent.action in ("bet", "raise"):
            assert taken["action"] in ("bet", "raise") and taken["bet"] == sent.amount, (taken, sent)
        else:
            assert taken["action"] == sent.action, (taken, sent)
    # its stack moved
    assert len(set(player.stacks_after_hands) | {STACK}) > 1, (who, player.stacks_after_hands)


def _check_together(players: list[IndependentPlayer]) -> dict[str, int]:
    """Everyone saw the same results and their own place; every follower of a table got the
    same event under each seq, hole cards and `legal` aside. Returns the places."""
    results = players[0].ended
    assert results is not None, "the tournament ended"
    assert all(player.ended == results for player in players)
    places = {name: result["place"] for result in results["results"] for name in result["players"]}
    prizes = {name: result["prize_cents"] for result in results["results"] for name in result["players"]}
    assert sorted(places) == sorted(player.name for player in players), places
    for player in players:
        if player.eliminated is not None:
            assert player.eliminated["place"] == places[player.name], (player.name, player.eliminated)
        assert player.balances[-1] == DEPOSIT - PRICE + prizes[player.name], (player.name, player.balances)
        assert player.finished is not None and player.finished["status"] == "finished"
    assert sum(prizes.values()) == len(players) * 1000
    seen: dict[tuple[int, int], Message] = {}
    for player in players:
        for message in player.events:
            key = (message["table_id"], message["seq"])
            public = _public(message)
            assert seen.setdefault(key, public) == public, (key, seen[key], public)
    print()
    for player in players:
        print(
            f"{player.name} ({player.subprotocol[6:]}): place {places[player.name]}, "
            f"{player.hands_played()} hands, {len(player.sent)} actions ({len(player.resent)} resent), "
            f"{len(player.events)} events, {len(player.snapshots)} snapshots, "
            f"seats {[(s['table_id'] % 1000, s['seat'], s['reason']) for s in player.seats]}"
        )
    return places


async def test_six_independent_clients_play_a_6_max_tournament_to_the_end(postgres_server_url: str) -> None:
    """Six clients written from the document (five on MessagePack, one on JSON) log in, read
    the lobby, register and play a 6-max tournament to its end at 20 times real speed; one sits
    out for a while: it is acted for at once, with no `legal` to answer, until it sits in."""
    players = await _play(
        postgres_server_url, [f"ind{n}" for n in range(1, 7)], json={2}, reconnect={}, sit_out={3: 2}
    )
    for player in players:
        _check_player(player)
    _check_together(players)
    sitter = players[3]
    if sitter.sit_requests:  # (unless it was out within two hands)
        assert sitter.away_changes[0] == "away", sitter.away_changes
        assert all(turn["legal"] is None for turn in sitter.away_turns), sitter.away_turns
        assert all(request in sitter.acks for request in sitter.sit_requests), sitter.sit_requests
        if len(sitter.sit_requests) == 2:  # acted for, then back (not when it busted while away)
            assert sitter.away_changes[:2] == ["away", "back"], sitter.away_changes
            assert sitter.timed_out >= 1 and sitter.away_turns, "acted for while away"


async def test_twelve_independent_clients_on_two_tables_are_moved_reconnect_and_finish(
    postgres_server_url: str,
) -> None:
    """Twelve clients on two 6-max tables: players are moved as the tables balance and break,
    three clients each drop their connection once in the middle of a hand and resume at the last
    seq they saw (no gap, no action lost or doubled), and all play on to the end."""
    names = [f"two{n:02d}" for n in range(1, 13)]
    players = await _play(postgres_server_url, names, json={4}, reconnect={1: 1, 7: 2, 10: 3}, sit_out={})
    for player in players:
        _check_player(player)
    _check_together(players)
    resumed = [player for player in players if player.resumed_from]
    assert resumed, "a client reconnected"
    for player in resumed:
        assert len(player.resumed_from) == 1, player.resumed_from
        reasons = [seated["reason"] for seated in player.seats]
        assert reasons.count("reconnect") == 1, (player.name, player.seats)
    moves = {seated["reason"] for player in players for seated in player.seats}
    assert moves & {"balance", "table_broken", "redraw"}, f"no player was moved: {moves}"
