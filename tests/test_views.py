"""server.views decides privacy once: over many random hands, for every audience, no hole card of
another seat reaches a mapped event or a snapshot before that seat shows it, observers see none
before a showdown, no card that was not yet dealt ever leaves (the deck and salt only once the
hand is over), a player sees their own cards, and the legal actions reach the seat to act only.

The frames are decoded with the ``msgpack`` package, not with our codec, so what is checked is
what a client would read."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgpack
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_examples import doc_frames

from engine.actions import Action, BetOrRaiseTo, Call, Check, Fold
from engine.betting import AnteKind, Game, HandSetup, Limit, SeatSetup
from engine.cards import card_str
from engine.events import DeckSealed, HandEvent
from engine.hand import Hand
from engine.random_play import play_choice
from engine.table import FirstButton, SeatedPlayer, Table, TableSettings
from engine.tournament.director import HoldReason
from protocol import kinds
from protocol import table_events as wire
from protocol.codec import JSON, MSGPACK
from protocol.server_messages import TableEvent
from server import views
from server.views import Audience, HandViews, TableState, Views

_CARD = re.compile(r"^[2-9TJQKA][cdhs]$")


@dataclass
class Deal:
    """One random hand's parameters."""

    seed: int
    players: int
    limit: Limit = Limit.NO_LIMIT
    ante_kind: AnteKind = AnteKind.NONE
    game: Game = Game.HOLDEM
    penalized: int = 0  # how many seats serve a penalty (killed at the deal)
    absent: int = 0  # how many seats are away


def _table(deal: Deal, rng: random.Random) -> Table:
    table = Table(
        TableSettings(size=9, first_button=FirstButton.SEAT_ONE, limit=deal.limit, game=deal.game), 7
    )
    seats = sorted(rng.sample(range(1, 10), deal.players))
    for index, seat in enumerate(seats):
        # short stacks now and then, so that all-ins, side pots and face-up run-outs happen
        stack = rng.choice([rng.randint(1, 60), rng.randint(100, 3_000)])
        table.seat_player(seat, f"p{seat}", stack, absent=index < deal.absent)
    for seat in seats[deal.absent : deal.absent + deal.penalized]:
        table.penalize(seat, 1)
    table.set_first_button(rng.choice(seats))
    return table


def _hand(deal: Deal) -> tuple[Table, Hand]:
    rng = random.Random(deal.seed)
    table = _table(deal, rng)
    ante = 0 if deal.ante_kind is AnteKind.NONE else 5
    setup = table.start_hand(f"h{deal.seed}", 10, 20, ante, deal.ante_kind)
    return table, Hand(setup, rng=random.Random(deal.seed + 1))


def _audiences(hand: Hand) -> list[Audience]:
    return [
        *(Audience.seat(seat) for seat in hand.setup.seat_numbers()),
        Audience.players,
        Audience.rail,
        Audience.operators,
    ]


def _strings(value: Any) -> Iterator[str]:
    """Every string in a decoded frame, keys and values, at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _decoded(message: Any) -> Any:
    """What a client reads: our msgpack frame decoded by the msgpack package."""
    return msgpack.unpackb(MSGPACK.encode(message), raw=False)


@dataclass
class Watch:
    """What one audience has been allowed to see so far, and what it received."""

    audience: Audience
    allowed: set[str] = field(default_factory=set)
    frames: list[dict[str, Any]] = field(default_factory=list)
    snapshots: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Played:
    hand: Hand
    table: Table
    watches: list[Watch]
    engine_events: list[HandEvent]


def _play(deal: Deal, *, snapshots: bool = True) -> Played:
    """Play ``deal`` at random; after each action map the new events for every audience and take
    a snapshot for each, checking as it goes that no card outside what the audience may see
    appears (``allowed`` grows with its own cards, the board and cards shown)."""
    table, hand = _hand(deal)
    rng = random.Random(deal.seed + 2)
    feed = HandViews(hand_number=deal.seed + 1)
    watches = [Watch(audience) for audience in _audiences(hand)]
    holes = {seat: {card_str(card) for card in hand.hole_cards(seat)} for seat in hand.setup.seat_numbers()}
    position = 0
    seq = 0
    engine_events: list[HandEvent] = []
    while True:
        batch, position = hand.events_since(position)
        engine_events.extend(batch)
        for event in batch:
            mapped = feed.views(event)
            if mapped is None:
                assert type(event) is DeckSealed, f"only DeckSealed has no wire form, not {event!r}"
                continue
            seq += 1
            for watch in watches:
                body = mapped.for_audience(watch.audience)
                frame = _decoded(TableEvent(table_id=7, seq=seq, event=body))
                inner = frame["event"]
                kind = inner["type"]
                if kind == "hole_cards" and inner["cards"] is not None:
                    watch.allowed |= set(inner["cards"])
                elif kind == "street":
                    watch.allowed |= set(inner["board"])
                elif kind == "cards_shown":
                    watch.allowed |= set(inner["cards"])
                elif kind == "hands_shown":
                    for shown in inner["hands"]:
                        watch.allowed |= set(shown["cards"])
                elif kind == "deck_revealed":
                    assert hand.is_over, "the deck is revealed only once the hand is over"
                    watch.allowed |= set(inner["deck"])
                leaked = {s for s in _strings(frame) if _CARD.match(s)} - watch.allowed
                assert not leaked, f"{watch.audience} received {kind} with cards it may not see: {leaked}"
                if kind == "hole_cards" and inner["cards"] is not None:
                    assert watch.audience.sees_cards_of(inner["seat"]), f"{watch.audience} got {inner}"
                    assert set(inner["cards"]) == holes[inner["seat"]]
                watch.frames.append(frame)
        assert feed.stacks == hand.stacks, "the views' stacks follow the hand's"
        if snapshots:
            state = TableState(
                table_id=7,
                tournament_id="t1",
                seq=seq,
                level=1,
                small_blind=10,
                big_blind=20,
                hand_number=deal.seed + 1,
                deadline_ms=1_700_000_000_000 if hand.actor is not None else None,
                time_banks={seat: 2 for seat in hand.setup.seat_numbers()},
            )
            for watch in watches:
                shot = views.snapshot(watch.audience, state, table=table, hand=hand)
                frame = _decoded(shot)
                leaked = {s for s in _strings(frame) if _CARD.match(s)} - watch.allowed
                assert not leaked, f"{watch.audience}'s snapshot shows cards it may not see: {leaked}"
                watch.snapshots.append(frame)
        if hand.is_over:
            break
        play_choice(hand, hand.legal_actions(), rng)
    return Played(hand, table, watches, engine_events)


DEALS = [
    Deal(seed, players, limit, ante, game, penalized, absent)
    for seed, (players, limit, ante, game, penalized, absent) in enumerate(
        [
            (2, Limit.NO_LIMIT, AnteKind.NONE, Game.HOLDEM, 0, 0),
            (3, Limit.NO_LIMIT, AnteKind.EACH, Game.HOLDEM, 0, 1),
            (6, Limit.POT_LIMIT, AnteKind.BIG_BLIND, Game.OMAHA, 0, 0),
            (9, Limit.NO_LIMIT, AnteKind.BIG_BLIND, Game.HOLDEM, 1, 2),
            (9, Limit.FIXED_LIMIT, AnteKind.EACH, Game.HOLDEM, 2, 0),
            (5, Limit.NO_LIMIT, AnteKind.NONE, Game.OMAHA, 1, 0),
        ]
        * 40
    )
]


@pytest.mark.parametrize("deal", DEALS, ids=lambda deal: f"seed{deal.seed}-{deal.players}p")
def test_views_no_audience_sees_a_card_it_may_not_before_it_is_shown(deal: Deal) -> None:
    played = _play(deal)
    by_viewer = {watch.audience: watch for watch in played.watches}
    # the rail and the other players see the very same frames
    assert by_viewer[Audience.players].frames == by_viewer[Audience.rail].frames
    assert by_viewer[Audience.players].snapshots == by_viewer[Audience.rail].snapshots
    # everyone gets one event per seq, the same seqs
    seqs = {tuple(frame["seq"] for frame in watch.frames) for watch in played.watches}
    assert len(seqs) == 1, "every audience gets an event for every seq"
    (numbers,) = seqs
    assert list(numbers) == list(range(1, len(numbers) + 1))


@pytest.mark.parametrize("deal", DEALS[:12], ids=lambda deal: f"seed{deal.seed}-{deal.players}p")
def test_views_a_player_sees_their_own_cards_and_observers_none_before_the_showdown(deal: Deal) -> None:
    played = _play(deal)
    hand = played.hand
    for watch in played.watches:
        dealt = [frame["event"] for frame in watch.frames if frame["event"]["type"] == "hole_cards"]
        assert [event["seat"] for event in dealt] == list(_deal_order(hand)), "one hole_cards per seat"
        for event in dealt:
            own = watch.audience.sees_cards_of(event["seat"])
            expected = [card_str(card) for card in hand.hole_cards(event["seat"])] if own else None
            assert event["cards"] == expected, f"{watch.audience}: hole_cards {event}"
        first = watch.snapshots[0]
        for seat_view in first["seats"]:
            if watch.audience.sees_cards_of(seat_view["seat"]):
                assert seat_view["cards"] == [card_str(card) for card in hand.hole_cards(seat_view["seat"])]
            else:
                assert seat_view["cards"] is None, f"{watch.audience} sees seat {seat_view['seat']}'s cards"


def _deal_order(hand: Hand) -> tuple[int, ...]:
    seats = hand.setup.seat_numbers()
    button = hand.setup.button
    return tuple(seat for seat in seats if seat > button) + tuple(seat for seat in seats if seat <= button)


@pytest.mark.parametrize("deal", DEALS[:24], ids=lambda deal: f"seed{deal.seed}-{deal.players}p")
def test_views_deck_and_salt_reach_everyone_only_after_the_hand(deal: Deal) -> None:
    played = _play(deal, snapshots=False)
    hand = played.hand
    salt = hand.salt.hex()
    for watch in played.watches:
        kinds_seen = [frame["event"]["type"] for frame in watch.frames]
        assert kinds_seen[-2:] == ["deck_revealed", "hand_ended"], f"{watch.audience}: {kinds_seen[-3:]}"
        for frame in watch.frames[:-2]:
            assert salt not in set(_strings(frame)), f"{watch.audience} got the salt early: {frame}"
        revealed = watch.frames[-2]["event"]
        assert revealed["deck"] == [card_str(card) for card in hand.deck]
        assert revealed["salt"] == salt and revealed["commitment"] == hand.commitment


@pytest.mark.parametrize("deal", DEALS[:30], ids=lambda deal: f"seed{deal.seed}-{deal.players}p")
def test_views_snapshot_chips_add_up_and_legal_goes_to_the_seat_to_act_only(deal: Deal) -> None:
    table, hand = _hand(deal)
    rng = random.Random(deal.seed)
    total = sum(entry.stack for entry in hand.setup.seats)
    while not hand.is_over:
        state = TableState(table_id=7, tournament_id="t1", seq=3, level=2, small_blind=10, big_blind=20)
        legal = hand.turn()
        assert legal is not None
        for audience in _audiences(hand):
            shot = views.snapshot(audience, state, table=table, hand=hand)
            chips = sum(seat.stack + seat.bet for seat in shot.seats) + sum(shot.pots)
            assert chips == total, f"snapshot chips {chips} != {total}: {shot}"
            assert shot.to_act == legal.seat and shot.status is kinds.TableStatus.PLAYING
            if audience == Audience.seat(legal.seat):
                assert shot.legal == views.legal_view(legal)
            else:
                assert shot.legal is None, f"{audience} must not get the legal actions of seat {legal.seat}"
        play_choice(hand, legal, rng)
    over = views.snapshot(Audience.rail, TableState(7, "t1", 9, 1, 10, 20), table=table, hand=hand)
    assert over.status is kinds.TableStatus.IDLE and over.pots == [] and over.to_act is None
    assert sum(seat.stack for seat in over.seats) == total


def test_views_turn_gives_legal_to_that_seat_only_and_encodes_once_per_copy() -> None:
    _, hand = _hand(Deal(5, 4))
    legal = hand.turn()
    assert legal is not None
    turn = views.turn(legal, deadline_ms=1_700_000_015_000, time_banks=2)
    own = turn.for_audience(Audience.seat(legal.seat))
    assert isinstance(own, wire.Turn) and own.legal == views.legal_view(legal)
    for audience in (Audience.players, Audience.rail, Audience.operators, Audience.seat(legal.seat % 9 + 1)):
        other = turn.for_audience(audience)
        assert isinstance(other, wire.Turn) and other.legal is None, f"{audience} got legal"
    encoded: list[object] = []

    def encode(body: wire.TableEventBody) -> bytes:
        encoded.append(body)
        return MSGPACK.encode(TableEvent(table_id=1, seq=4, event=body))

    frames = turn.map(encode)
    assert len(encoded) == 2, "one encoding for the public copy, one for the seat's"
    assert frames.for_audience(Audience.rail) is frames.for_audience(Audience.operators)
    assert msgpack.unpackb(frames.for_audience(Audience.seat(legal.seat)))["event"]["legal"] is not None


def test_views_public_events_are_one_shared_copy() -> None:
    _, hand = _hand(Deal(11, 3))
    feed = HandViews(1)
    shared = private = 0
    for event in hand.events:
        mapped = feed.views(event)
        if mapped is None:
            continue
        if mapped.shared:
            shared += 1
            assert len({id(mapped.map(JSON.encode).for_audience(a)) for a in _audiences(hand)}) == 1
        else:
            private += 1
            assert isinstance(mapped.public, wire.HoleCards) and mapped.public.cards is None
    assert private == 3 and shared > 0


def test_views_between_hands_snapshot_from_the_table() -> None:
    table, hand = _hand(Deal(3, 4, absent=1))
    while not hand.is_over:
        play_choice(hand, hand.legal_actions(), random.Random(1))
    table.finish_hand(hand.finishing_stacks())
    state = TableState(
        table_id=7,
        tournament_id="t1",
        seq=40,
        level=3,
        small_blind=25,
        big_blind=50,
        ante=5,
        ante_kind=AnteKind.EACH,
        time_banks={seat.seat: 3 for seat in table.players},
        hold_reason=HoldReason.HAND_FOR_HAND,
        hold_until_ms=None,
    )
    shot = views.snapshot(Audience.seat(table.players[0].seat), state, table=table)
    assert shot.status is kinds.TableStatus.HELD and shot.hold_reason is kinds.HoldReason.HAND_FOR_HAND
    assert (shot.small_blind, shot.big_blind, shot.ante, shot.ante_kind) == (25, 50, 5, kinds.AnteKind.EACH)
    assert [seat.stack for seat in shot.seats] == [seated.stack for seated in table.players]
    assert all(seat.cards is None and not seat.in_hand and seat.time_banks == 3 for seat in shot.seats)
    assert shot.button == hand.setup.button and shot.hand_number is None and shot.board == []
    assert JSON.decode_server(JSON.encode(shot)) == shot
    with pytest.raises(ValueError, match="needs the table, the hand"):
        views.snapshot(Audience.rail, state)


def test_views_stacks_in_events_follow_every_chip_to_the_end() -> None:
    """The ``stack`` each event reports, plus the pots each seat won, is the stack the hand ends
    with; the ``pot`` the views keep is empty once every pot is paid."""
    for seed in range(60):
        _, hand = _hand(Deal(seed, 2 + seed % 8, ante_kind=AnteKind.EACH))
        while not hand.is_over:
            play_choice(hand, hand.legal_actions(), random.Random(seed))
        feed = HandViews(seed + 1)
        reported: dict[int, int] = {}
        won: dict[int, int] = {}
        for event in hand.events:
            mapped = feed.views(event)
            body = None if mapped is None else mapped.public
            if isinstance(body, wire.HandStarted):
                reported = {entry.seat: entry.stack for entry in body.seats}
            elif isinstance(
                body, wire.AntePosted | wire.BlindPosted | wire.ActionTaken | wire.UncalledReturned
            ):
                reported[body.seat] = body.stack
            elif isinstance(body, wire.PotAwarded):
                for seat, share in zip(body.winners, body.shares, strict=True):
                    won[seat] = won.get(seat, 0) + share
            elif isinstance(body, wire.HandEnded):
                assert feed.pot == 0, "every chip in the middle was awarded before the hand ended"
                ended = {entry.seat: entry.stack for entry in body.stacks}
        final = {seat: stack + won.get(seat, 0) for seat, stack in reported.items()}
        assert final == ended == hand.finishing_stacks(), f"seed {seed}: {final} != {ended}"


def test_views_seat_changes_and_holds_use_the_protocol_words() -> None:
    seated = SeatedPlayer(4, "p4", 1_500, absent=True)
    joined = views.seat_changed(4, kinds.SeatChange.JOINED, seated).public
    assert joined == wire.SeatChanged(
        seat=4, change=kinds.SeatChange.JOINED, player="p4", stack=1_500, away=True
    )
    empty = views.seat_changed(4, kinds.SeatChange.MOVED_OUT, None).public
    assert isinstance(empty, wire.SeatChanged) and empty.player is None and empty.stack == 0
    for reason in HoldReason:
        held = views.table_held(reason, 5).public
        assert isinstance(held, wire.TableHeld) and "-" not in held.reason.value
        assert views.hold_reason(reason).value == reason.value.replace("-", "_")
    with pytest.raises(TypeError, match="not a hand event"):
        HandViews(1).views(object())  # type: ignore[arg-type]
    assert repr(Views(wire.TableClosed())) == "Views(TableClosed())"


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 9),
    limit=st.sampled_from(list(Limit)),
    ante_kind=st.sampled_from(list(AnteKind)),
    game=st.sampled_from(list(Game)),
    penalized=st.integers(0, 2),
    absent=st.integers(0, 2),
)
def test_views_property_no_hidden_card_leaks_on_any_random_hand(
    seed: int, players: int, limit: Limit, ante_kind: AnteKind, game: Game, penalized: int, absent: int
) -> None:
    penalized = min(penalized, players - 1)
    absent = min(absent, players - penalized)
    played = _play(Deal(seed, players, limit, ante_kind, game, penalized, absent))
    observers = [
        watch
        for watch in played.watches
        if watch.audience.viewer in (views.Viewer.PLAYERS, views.Viewer.RAIL)
    ]
    for watch in observers:
        for frame in watch.frames:
            event = frame["event"]
            if event["type"] == "hole_cards":
                assert event["cards"] is None, f"an observer got hole cards: {event}"


def test_views_the_docs_hand_is_what_seat_3_receives() -> None:
    """docs/protocol.md section 9 shows a real hand as alice (seat 3) receives it: every table
    event it shows (``turn`` events, which the table actor adds, aside) is what the engine and
    the views send for that hand, in that order, with seqs that only go up."""
    setup = HandSetup(
        "h57",
        9,
        (SeatSetup(3, "alice", 3150), SeatSetup(5, "bob", 1800), SeatSetup(7, "carol", 4400)),
        button=3,
        small_blind_seat=5,
        big_blind_seat=7,
        small_blind=100,
        big_blind=200,
        ante=25,
        ante_kind=AnteKind.EACH,
    )
    hand = Hand(setup, rng=random.Random(1))
    first = hand.turn()
    script: list[tuple[int, Action]] = [
        (3, BetOrRaiseTo(600)),
        (5, Call()),
        (7, Fold()),
        (5, Check()),
        (3, BetOrRaiseTo(800)),
    ]
    script += [(5, Call()), (5, Check()), (3, Check()), (5, Check()), (3, Check())]
    for seat, action in script:
        hand.act(action, seat=seat)
    feed = HandViews(57)
    mapped = [copies for copies in map(feed.views, hand.events) if copies is not None]
    expected = [json.loads(JSON.encode(copies.for_audience(Audience.seat(3)))) for copies in mapped]
    shown = [json.loads(frame) for frame in doc_frames() if '"table_id": 12, "seq": 48' in frame]
    hand_frames = [frame for frame in shown if frame["type"] == "table_event"]
    end = next(i for i, frame in enumerate(hand_frames) if frame["event"]["type"] == "hand_ended")
    start = max(i for i, frame in enumerate(hand_frames[:end]) if frame["event"]["type"] == "hand_started")
    walk = hand_frames[start : end + 1]
    seqs = [frame["seq"] for frame in walk]
    assert seqs == sorted(set(seqs)), f"the doc's seqs go up: {seqs}"
    events = iter(expected)
    for frame in walk:
        event = frame["event"]
        if event["type"] == "turn":
            continue
        assert event in events, f"the doc shows {event}, which the hand does not send there"
    turns = [frame["event"] for frame in walk if frame["event"]["type"] == "turn"]
    assert first is not None and turns[0]["legal"] == msgspec.to_builtins(views.legal_view(first))
