"""A whole tournament played over real WebSockets against the real server and PostgreSQL."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

from pokerkit import HandHistory
from server_harness import Player, running_server, steady, tournament_toml

from engine.betting import Street
from engine.events import ActionKind, ActionTaken, BlindKind, BlindPosted
from engine.history.phh import loads_phh
from engine.history.replay import replay
from engine.tournament import inputs
from engine.tournament.config import parse_config
from engine.tournament.director import (
    BubbleBurst,
    Command,
    DealHand,
    Director,
    HandForHandEnded,
    HandForHandStarted,
    PlayerEliminated,
)
from engine.tournament.transfers import Reason
from protocol import server_messages as sm


def _short_big_blind_with_a_call(text: str) -> bool:
    """A hand whose big blind posted less than a full blind while someone then called, or folded,
    before the flop: our rules have the others face the full blind (BET-2), which PHH cannot say to
    pokerkit (engine/history/phh.py); to pokerkit a small blind who posted more than the short big
    blind faces nothing, and its fold is "no reason to fold"."""
    ours = replay(loads_phh(text))
    assert ours.setup is not None
    blinds = {event.blind: event.amount for event in ours.events if isinstance(event, BlindPosted)}
    short = BlindKind.BIG in blinds and max(blinds.values()) < ours.setup.big_blind
    return short and any(
        isinstance(event, ActionTaken)
        and event.street is Street.PREFLOP
        and (event.amount or event.kind is ActionKind.FOLD)
        for event in ours.events
    )


def _short_all_in_then_a_raise(text: str) -> bool:
    """A hand where an all-in raised by less than a full raise and someone raised after it on the
    same street: whether that reopens the betting is where our BET-2 (TDA 43: the short all-ins
    add up, only a player facing a full raise since they acted may raise) and pokerkit differ, and
    pokerkit then cannot replay the file ("Unable to repair the hand history") or ends elsewhere
    (tests/test_hand_differential.py checks that the difference is exactly this case)."""
    ours = replay(loads_phh(text))
    assert ours.setup is not None
    street: Street | None = None
    level = full = 0
    short = False
    for event in ours.events:
        if not isinstance(event, ActionTaken) or event.kind not in (ActionKind.BET, ActionKind.RAISE):
            continue
        if event.street is not street:
            street, level, full, short = event.street, 0, ours.setup.big_blind, False
            if street is Street.PREFLOP:
                level = ours.setup.big_blind
        if short:
            return True
        increase = event.to_amount - level
        if event.all_in and increase < full:
            short = True
        else:
            full = max(full, increase)
        level = max(level, event.to_amount)
    return False


def _hand_for_hand_kept(commands: list[Command]) -> bool:
    """HFH-1 on a director's commands: every hand dealt while hand-for-hand is in force is dealt
    synchronized (and none otherwise), and the bubble bursts in sync exactly when the hand that
    burst it was a synchronized one. True when it burst in sync; False when the hand that burst it
    was under way before hand-for-hand started (HFH-1 lets such a hand finish on its own)."""
    in_force = False
    synchronized: dict[int, bool] = {}
    last_bust_table: int | None = None
    burst: bool | None = None
    for command in commands:
        if isinstance(command, HandForHandStarted):
            in_force = True
        elif isinstance(command, HandForHandEnded):
            in_force = False
        elif isinstance(command, DealHand):
            assert command.synchronized is in_force, command
            synchronized[command.table_id] = command.synchronized
        elif isinstance(command, PlayerEliminated):
            last_bust_table = command.table_id
        elif isinstance(command, BubbleBurst):
            assert last_bust_table is not None and burst is None
            assert command.in_sync is synchronized[last_bust_table], (command, last_bust_table)
            burst = command.in_sync
    assert burst is not None, "the bubble burst"
    return burst


async def test_an_18_player_tournament_over_websockets_from_registration_to_the_last_payout(
    postgres_server_url: str, repo_root: Path
) -> None:
    """Acceptance 1 of the game server: 18 players on 2 tables (16 on MessagePack, 2 on JSON) at
    20 times real speed; then the ledger check passes, every stored hand replays in pokerkit to
    its stacks, and the finish order and prizes are what the pure director gives for the same
    inputs and seed."""
    async with running_server(postgres_server_url, speed=20.0, seed=11) as harness:
        names = [f"p{number:02d}" for number in range(1, 19)]
        await harness.add_players(names)
        # half the field paid: the bubble comes with two tables left, played hand for hand from 8
        # players before it (HFH-1's bubble_margin), i.e. from the first elimination. A smaller
        # margin lets one hand jump past it: these players call all-ins often, and once, on a
        # loaded machine, a hand took 14 players to 8 before hand-for-hand was due at 13
        toml = tournament_toml(
            "sock18", players=18, extra="[payouts]\npercent_paid = 50\n\n[hand_for_hand]\nbubble_margin = 8"
        )
        tournament_id = await harness.create(toml, starts_in=60)
        players = [
            Player(harness.connection(name, json=index in (3, 11)), tournament_id, steady, seed=index)
            for index, name in enumerate(names)
        ]
        await asyncio.wait_for(asyncio.gather(*(player.run() for player in players)), 600)
        assert all(player.ended is not None for player in players), "every player saw the end"
        coordinator = harness.server.coordinators[tournament_id]
        director = coordinator.director
        assert director.standings is not None and director.standings.complete
        places = Counter(
            p for f in director.standings.finishes for p in range(f.place, f.place + f.shared_places)
        )
        assert sorted(places) == list(range(1, 19)), places
        ended = players[0].ended
        assert ended is not None and ended.results[0].place == 1
        # every registration answered, every action accepted
        for player in players:
            # an action that crossed a timeout, a move or a bust on the wire is refused, harmlessly
            late = ("not_your_turn", "not_seated", "stale_hand")
            assert not [e for e in player.errors if e.code.value not in late], player.errors
            assert any(isinstance(m, sm.TableSnapshot) for m in player.received), "each got a table"
        # HFH-1, visibly: announced, tables held for the others, the bubble burst in a round
        seen = [m.event for m in players[0].received if isinstance(m, sm.TournamentEvent)]
        kinds = [type(event).__name__ for event in seen]
        assert "HandForHandStarted" in kinds and "BubbleBurst" in kinds, kinds
        held = [
            m.event.reason.value
            for player in players
            for m in player.received
            if isinstance(m, sm.TableEvent) and type(m.event).__name__ == "TableHeld"
        ]
        assert "hand_for_hand" in held, held
        hands = await harness.store.histories.by_tournament(tournament_id)
        assert len(hands) == director.hands_dealt and len(hands) > 10, (len(hands), director.hands_dealt)
        database_url = harness.database_url
        # the money: the ledger check of the real command, on the server's database
        check = subprocess.run(
            [
                sys.executable,
                "-m",
                "server.cli.main",
                "admin",
                "ledger",
                "check",
                "--database-url",
                database_url,
            ],
            cwd=repo_root,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert check.returncode == 0, check.stdout + check.stderr
        assert "ok" in check.stdout, check.stdout
        # every hand history: our replay and pokerkit end on its stacks
        documented = 0
        for record in hands:
            phh = loads_phh(record.phh)
            assert phh.finishing_stacks is not None
            assert replay(phh).agrees, record.hand_id
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    states = list(HandHistory.loads(record.phh))
                pokerkit = f"ends on {tuple(states[-1].stacks)}"
                agrees = tuple(states[-1].stacks) == phh.finishing_stacks
            # "Unable to repair the hand history", or (a warning made an error) "There is no
            # reason for this player to fold"
            except (ValueError, UserWarning) as error:
                pokerkit, agrees = f"refuses it: {error}", False
            if not agrees:
                assert _short_big_blind_with_a_call(record.phh) or _short_all_in_then_a_raise(record.phh), (
                    f"{record.hand_id}: pokerkit {pokerkit}, the file {phh.finishing_stacks}\n{record.phh}"
                )
                documented += 1
        print(f"\n{len(hands)} hands stored; pokerkit agrees on {len(hands) - documented}, "
              f"{documented} BET-2 cases (short big blind called, raise over a short all-in)")  # fmt: skip
        # the same inputs on a pure director: the same tournament
        journal = coordinator.journal
        assert journal is not None
        pure = Director(
            parse_config(toml),
            start_at=director.start_at,
            rng=random.Random(11),
            start_wall_seconds=int(director.start_at),
            first_table_id=coordinator.number * 1_000_000 + 1,
        )
        posted = []
        commands: list[Command] = []
        for value in journal:
            for command in inputs.apply(pure, value):
                posted.extend(getattr(command, "transfers", ()))
                commands.append(command)
        assert pure.standings is not None
        assert pure.standings.finishes == director.standings.finishes, "the same finish order"
        assert pure.bubble_burst_in_sync == director.bubble_burst_in_sync
        assert _hand_for_hand_kept(commands) is director.bubble_burst_in_sync
        prizes = sorted((t.target, t.amount) for t in posted if t.reason is Reason.PRIZE)
        ledger = await harness.store.ledger.balances()
        assert prizes, "prizes were paid"
        for target, amount in prizes:
            assert ledger[target] >= amount, (target, amount)
        assert sum(a for _, a in prizes) == director.prize_pool == 18 * 1000
