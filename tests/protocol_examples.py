"""One example of every protocol message and event, shared by tests/test_protocol.py (round trips,
fuzzing from valid frames) and the check that docs/protocol.md shows every one of them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from protocol import client_messages as c
from protocol import kinds
from protocol import operator_requests as o
from protocol import server_messages as s
from protocol import table_events as t
from protocol import tournament_events as e
from protocol.errors import ErrorCode
from protocol.structs import Message

COMMITMENT = "acdbaf7998d851128532b39d7198e47eb9552124cf0d7229de74fbc024c87729"
SALT = "878d972f9a451da1305317feed6740b9"
# A real hand's deck (engine.hand.Hand with random.Random(1)): COMMITMENT is its commitment under SALT.
_DECK_TEXT = (
    "Ad4dJd7h2hJh6s4sTs3d9dAsQs5s7sKhKs7dQcJs5cAhTc7c8d8hTh4hTd2s6h5h6dKc2c8sQh2dKd3h5d8cQd9h9c9s3s6c3cAcJc4c"
)
DECK = [_DECK_TEXT[i : i + 2] for i in range(0, len(_DECK_TEXT), 2)]
NOW = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"

CLIENT: list[Message] = [
    c.Hello(protocol=1, token="q3Xb0V2m8Yk1sJd4TfA9hLw7ZeR5uNc6PoG0iKyBtMx", client="example-client/1.0"),
    c.Hello(protocol=1, token=None, client="", resume=[c.Resume(table_id=12, last_seq=4810)]),
    c.Ping(nonce=42),
    c.LobbySubscribe(request_id="r1"),
    c.LobbyUnsubscribe(),
    c.TournamentSubscribe(tournament_id="sunday-major", request_id="r2"),
    c.TournamentUnsubscribe(tournament_id="sunday-major"),
    c.Register(tournament_id="sunday-major", request_id="reg-7f3a"),
    c.Unregister(tournament_id="sunday-major", request_id="unreg-0b21"),
    c.Rebuy(tournament_id="turbo-rebuy", request_id="rebuy-1"),
    c.DeclineRebuy(tournament_id="turbo-rebuy", request_id="no-rebuy-1"),
    c.AddOn(tournament_id="turbo-rebuy", request_id="addon-1"),
    c.TableJoin(table_id=12),
    c.TableJoin(table_id=12, last_seq=4810, request_id="j1"),
    c.TableLeave(table_id=12),
    c.Act(table_id=12, hand_number=57, action_id="a-57-1", action=kinds.ActionKind.CALL),
    c.Act(table_id=12, hand_number=57, action_id="a-57-2", action=kinds.ActionKind.RAISE, amount=600),
    c.TimeBank(table_id=12, hand_number=57, request_id="tb-1"),
    c.SitOut(tournament_id="sunday-major"),
    c.SitIn(tournament_id="sunday-major", request_id="back-1"),
    c.Chat(table_id=12, text="nice hand"),
    c.HandList(request_id="hl-1", tournament_id="sunday-major", limit=20),
    c.HandHistory(request_id="hh-1", hand_id="sunday-major-12-57"),
    o.DealAsk(tournament_id="sunday-major", request_id="deal-1"),
    o.DealPropose(
        tournament_id="sunday-major",
        request_id="deal-2",
        method=kinds.DealMethod.ICM,
        left_to_play_cents=200_000,
    ),
    o.DealAccept(tournament_id="sunday-major", request_id="deal-3"),
    o.DealAbandon(tournament_id="sunday-major", request_id="deal-4"),
]

OPERATOR: list[Message] = [
    o.OpTournamentCreate(
        request_id="op-1", toml='id = "friday-turbo"\nname = "Friday Turbo"\n...', start_ms=NOW
    ),
    o.OpTournamentEdit(request_id="op-2", tournament_id="friday-turbo", start_ms=NOW + 3_600_000),
    o.OpTournamentDelete(request_id="op-3", tournament_id="friday-turbo"),
    o.OpTournamentList(request_id="op-4"),
    o.OpTournamentShow(request_id="op-5", tournament_id="sunday-major"),
    o.OpTournamentStart(request_id="op-6", tournament_id="sunday-major"),
    o.OpTournamentPause(request_id="op-7", tournament_id="sunday-major"),
    o.OpTournamentResume(request_id="op-8", tournament_id="sunday-major"),
    o.OpTournamentCancel(request_id="op-9", tournament_id="sunday-major", in_money=kinds.InMoneyMethod.ICM),
    o.OpTournamentResults(request_id="op-10", tournament_id="sunday-major"),
    o.OpPlayerRegister(request_id="op-11", tournament_id="sunday-major", player="alice"),
    o.OpPlayerUnregister(request_id="op-12", tournament_id="sunday-major", player="alice"),
    o.OpRemoveNoShows(request_id="op-13", tournament_id="sunday-major"),
    o.OpPenalize(request_id="op-14", tournament_id="sunday-major", player="bob", hands=3),
    o.OpDisqualify(request_id="op-15", tournament_id="sunday-major", player="bob"),
    o.OpSitOut(request_id="op-16", tournament_id="sunday-major", player="carol", away=True),
    o.OpMessage(request_id="op-17", tournament_id="sunday-major", text="Break in 5 minutes", table_id=12),
    o.OpSubscribe(request_id="op-18", tournament_id="sunday-major"),
    o.OpUnsubscribe(request_id="op-19"),
]
CLIENT += OPERATOR

LEGAL = t.LegalView(can_fold=True, can_check=False, call_amount=200, min_raise_to=400, max_raise_to=2950)

TABLE_EVENTS: list[t.TableEventBody] = [
    t.HandStarted(
        hand_number=57,
        button=3,
        small_blind_seat=5,
        big_blind_seat=7,
        small_blind=100,
        big_blind=200,
        ante=25,
        ante_kind=kinds.AnteKind.EACH,
        limit=kinds.Limit.NO_LIMIT,
        game=kinds.Game.HOLDEM,
        seats=[
            t.SeatStart(seat=3, player="alice", stack=3150, away=False),
            t.SeatStart(seat=5, player="bob", stack=1800, away=False),
            t.SeatStart(seat=7, player="carol", stack=4400, away=True),
        ],
        commitment=COMMITMENT,
    ),
    t.AntePosted(seat=3, amount=25, stack=3125, all_in=False),
    t.BlindPosted(seat=5, blind=kinds.BlindKind.SMALL, amount=100, stack=1675, all_in=False),
    t.HoleCards(seat=3, cards=["As", "Kd"]),
    t.HoleCards(seat=5, cards=None),
    t.Turn(seat=3, deadline_ms=NOW + 15_000, time_banks=2, legal=LEGAL),
    t.Turn(seat=5, deadline_ms=NOW + 15_000, time_banks=2, legal=None),
    t.TimeBankUsed(seat=3, deadline_ms=NOW + 30_000, time_banks=1),
    t.ActionTaken(
        seat=3,
        street=kinds.Street.PREFLOP,
        action=kinds.ActionKind.RAISE,
        amount=600,
        bet=600,
        stack=2525,
        all_in=False,
        timed_out=False,
    ),
    t.StreetDealt(street=kinds.Street.FLOP, cards=["Td", "7c", "2h"], board=["Td", "7c", "2h"], pot=1575),
    t.UncalledReturned(seat=3, amount=800, stack=3325),
    t.HandsShown(hands=[t.ShownCards(seat=3, cards=["As", "Kd"]), t.ShownCards(seat=5, cards=["9h", "9c"])]),
    t.CardsShown(seat=5, cards=["9h", "9c"], description="Three of a Kind, Nines"),
    t.CardsMucked(seat=3),
    t.HandKilled(seat=7, reason=kinds.KillReason.PENALTY),
    t.PotAwarded(pot_index=0, amount=3675, winners=[5], shares=[3675], description="Three of a Kind, Nines"),
    t.HandEnded(
        stacks=[
            t.SeatStack(seat=3, stack=1475),
            t.SeatStack(seat=5, stack=5475),
            t.SeatStack(seat=7, stack=2400),
        ]
    ),
    t.DeckRevealed(
        deck=DECK,
        salt=SALT,
        commitment=COMMITMENT,
    ),
    t.SeatChanged(seat=8, change=kinds.SeatChange.MOVED_IN, player="dave", stack=2750, away=False),
    t.SeatChanged(seat=5, change=kinds.SeatChange.ELIMINATED, player=None, stack=0, away=False),
    t.TableHeld(reason=kinds.HoldReason.BREAK, until_ms=NOW + 300_000),
    t.TableClosed(),
]

TOURNAMENT_EVENTS: list[e.TournamentEventBody] = [
    e.TournamentStarted(players=1200, tables=134),
    e.RegistrationClosed(reason=kinds.CloseReason.TIME),
    e.LevelStarted(
        level=4, small_blind=100, big_blind=200, ante=25, ante_kind=kinds.AnteKind.EACH, ends_ms=NOW
    ),
    e.BreakStarted(kind=kinds.BreakKind.SCHEDULED, until_ms=NOW + 300_000),
    e.BreakEnded(),
    e.AddOnsOffered(until_ms=NOW + 180_000),
    e.RebuyOffered(until_ms=NOW + 20_000),
    e.HandForHandStarted(players_left=182, places_paid=180),
    e.HandForHandEnded(hands=3),
    e.BubbleBurst(in_sync=True),
    e.FinalTable(table_id=12),
    e.Eliminated(player="bob", place=9, shared_places=1, prize_cents=48_000),
    e.Paused(),
    e.Resumed(),
    e.TournamentEnded(
        results=[
            e.PlaceResult(place=1, players=["alice"], prize_cents=2_500_000),
            e.PlaceResult(place=2, players=["carol"], prize_cents=1_500_000),
        ]
    ),
    e.Cancelled(kind=kinds.SettlementKind.ROLLBACK),
    e.DealTalks(
        phase=kinds.DealPhase.NEGOTIATING,
        players=["alice", "carol"],
        asked=["alice", "carol"],
        accepted=["alice"],
        method=kinds.DealMethod.ICM,
        shares=[
            e.DealShare(player="alice", chips=7_500_000, cents=2_150_000),
            e.DealShare(player="carol", chips=4_500_000, cents=1_650_000),
        ],
        left_to_play_cents=200_000,
        remaining_cents=4_000_000,
    ),
    e.DealDone(
        shares=[
            e.DealShare(player="alice", chips=0, cents=2_150_000),
            e.DealShare(player="carol", chips=0, cents=1_650_000),
        ],
        left_to_play_cents=200_000,
        ends=False,
    ),
]

SUMMARY = s.TournamentSummary(
    tournament_id="sunday-major",
    name="Sunday Major $100",
    status=kinds.TournamentStatus.REGISTERING,
    game=kinds.Game.HOLDEM,
    limit=kinds.Limit.NO_LIMIT,
    buy_in_cents=10_000,
    fee_cents=900,
    starting_stack=10_000,
    entrants=1187,
    players_left=1187,
    max_players=10_000,
    prize_pool_cents=11_870_000,
    guarantee_cents=10_000_000,
    start_ms=NOW,
    late_registration_until_ms=None,
    rebuys=False,
    add_on=False,
)

SERVER: list[Message] = [
    s.Welcome(
        protocol=1,
        session_id="s-8d2f61",
        player="alice",
        role=kinds.Role.PLAYER,
        server_time_ms=NOW,
        heartbeat_seconds=20,
    ),
    s.Pong(nonce=42, server_time_ms=NOW),
    s.Error(
        code=ErrorCode.ILLEGAL_ACTION,
        message="a raise is to at least 400, got 300",
        request_id="a-57-2",
        fatal=False,
    ),
    s.Ack(request_id="reg-7f3a"),
    s.Goodbye(reason=kinds.GoodbyeReason.TAKEN_OVER, message="you logged in on another connection"),
    s.Lobby(tournaments=[SUMMARY]),
    s.LobbyUpdate(tournament=SUMMARY),
    s.LobbyRemoved(tournament_id="friday-turbo"),
    s.Balance(cents=125_350),
    s.Registration(tournament_id="sunday-major", status=kinds.RegistrationStatus.WAITING, waiting_position=3),
    s.Seated(tournament_id="sunday-major", table_id=12, seat=3, reason=kinds.SeatReason.BALANCE),
    s.Unseated(tournament_id="sunday-major", table_id=12, reason=kinds.UnseatReason.ELIMINATED),
    s.TableSnapshot(
        table_id=12,
        seq=4811,
        tournament_id="sunday-major",
        table_size=9,
        status=kinds.TableStatus.PLAYING,
        hold_reason=None,
        hold_until_ms=None,
        level=4,
        small_blind=100,
        big_blind=200,
        ante=25,
        ante_kind=kinds.AnteKind.EACH,
        limit=kinds.Limit.NO_LIMIT,
        game=kinds.Game.HOLDEM,
        hand_number=57,
        button=3,
        seats=[
            t.SeatView(
                seat=3,
                player="alice",
                stack=3125,
                bet=0,
                in_hand=True,
                all_in=False,
                away=False,
                cards=["As", "Kd"],
                time_banks=2,
            ),
            t.SeatView(
                seat=5,
                player="bob",
                stack=1675,
                bet=100,
                in_hand=True,
                all_in=False,
                away=False,
                cards=None,
                time_banks=2,
            ),
            t.SeatView(
                seat=7,
                player="carol",
                stack=4175,
                bet=200,
                in_hand=True,
                all_in=False,
                away=True,
                cards=None,
                time_banks=0,
            ),
        ],
        pots=[75],
        board=[],
        street=kinds.Street.PREFLOP,
        to_act=3,
        deadline_ms=NOW + 15_000,
        legal=LEGAL,
        commitment=COMMITMENT,
    ),
    *(s.TableEvent(table_id=12, seq=4812 + index, event=event) for index, event in enumerate(TABLE_EVENTS)),
    s.ChatLine(table_id=12, player="bob", text="nice hand", at_ms=NOW),
    s.TournamentState(
        tournament_id="sunday-major",
        status=kinds.TournamentStatus.RUNNING,
        paused=False,
        level=4,
        small_blind=100,
        big_blind=200,
        ante=25,
        ante_kind=kinds.AnteKind.EACH,
        next_level_ms=NOW + 600_000,
        next_break_ms=NOW + 1_500_000,
        break_until_ms=None,
        players_left=950,
        entrants=1200,
        average_stack=12_631,
        prize_pool_cents=12_000_000,
        payouts_cents=[2_500_000, 1_500_000, 1_000_000],
        payouts_final=True,
        hand_for_hand=False,
    ),
    *(s.TournamentEvent(tournament_id="sunday-major", event=event) for event in TOURNAMENT_EVENTS),
    s.Notice(tournament_id="sunday-major", table_id=12, text="Break in 5 minutes", at_ms=NOW),
    s.HandHistories(
        request_id="hl-1",
        hands=[
            s.HandSummary(
                hand_id="sunday-major-12-57",
                tournament_id="sunday-major",
                table_id=12,
                hand_number=57,
                finished_at_ms=NOW,
                players=["alice", "bob", "carol"],
            )
        ],
    ),
    s.HandRecord(
        request_id="hh-1",
        hand_id="sunday-major-12-57",
        tournament_id="sunday-major",
        table_id=12,
        hand_number=57,
        finished_at_ms=NOW,
        variant="NT",
        seat_count=9,
        players=["alice", "bob", "carol"],
        seats=[4, 7, 2],
        starting_stacks=[9800, 15000, 12000],
        finishing_stacks=[9700, 15800, 11300],
        antes=[0, 0, 0],
        blinds_or_straddles=[100, 200, 0],
        actions=[
            "d dh p1 ????",
            "d dh p2 AsKd",
            "d dh p3 ????",
            "p3 cbr 500",
            "p1 f",
            "p2 cc",
            "d db Ah7c2d",
            "p2 cc",
            "p3 cc",
            "d db 9s",
            "p2 cc",
            "p3 cc",
            "d db Tc",
            "p2 cc",
            "p3 cc",
            "p2 sm AsKd",
            "p3 sm QhQs",
        ],
    ),
    s.OpTournaments(request_id="op-4", tournaments=[SUMMARY]),
    s.OpTournament(
        request_id="op-5",
        tournament=SUMMARY,
        state=None,
        toml='id = "sunday-major"\nname = "Sunday Major $100"\n...',
        players=[
            s.OpPlayer(
                player="alice",
                status=kinds.RegistrationStatus.PLAYING,
                table_id=12,
                seat=3,
                chips=31_500,
                away=False,
                place=None,
                prize_cents=None,
            ),
            s.OpPlayer(
                player="bob",
                status=kinds.RegistrationStatus.ELIMINATED,
                table_id=None,
                seat=None,
                chips=None,
                away=False,
                place=950,
                prize_cents=0,
            ),
        ],
    ),
    s.OpResults(
        request_id="op-10",
        tournament_id="sunday-major",
        status=kinds.TournamentStatus.FINISHED,
        prize_pool_cents=12_000_000,
        results=[e.PlaceResult(place=1, players=["alice"], prize_cents=2_500_000)],
    ),
    s.OpEvent(
        tournament_id="sunday-major",
        kind=kinds.OperatorEventKind.PAID,
        at_ms=NOW,
        text="bob was paid 48000 cents (prize)",
        player="bob",
        cents=48_000,
        reason="prize",
    ),
    s.OpEvent(
        tournament_id="sunday-major",
        kind=kinds.OperatorEventKind.COMMAND,
        at_ms=NOW,
        text="paused the tournament",
        operator="floor-1",
        command="op_tournament_pause",
    ),
]


def doc_frames() -> list[str]:
    """Every frame docs/protocol.md shows: a ```json block holds one frame, or one frame a line."""
    frames: list[str] = []
    for block in re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S):
        try:
            json.loads(block)
        except json.JSONDecodeError:
            frames.extend(line for line in block.splitlines() if line.strip())
        else:
            frames.append(block)
    return frames
