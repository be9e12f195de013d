"""Acceptance (issue 10, item 1): third-party PokerStars parsers read our tournament hands right.

A corpus of tournaments is played on the pure engine (``Table`` + ``Hand`` + ``random_play``):
no-limit, pot-limit and fixed-limit hold'em, per-player antes and big-blind antes, 2- to 9-handed
tables down to heads-up, every bust ranked with its place and prize. Every player's own file of
every tournament (``own_view`` of the operator's text, joined as a file) is read by

- pokerdf (``apply_regex``, what its ``convert`` runs over a file, and its star schema's fact
  table, which rebuilds every action's total from the written increments), and
- the ``poker`` package's ``PokerStarsHandHistory`` (hand by hand, as its API takes them; it
  parses the flop's actions itself and leaves the other streets as lines, which its own street
  parser ``_Street`` reads here),

and what they read is compared with the hand's own events: players, seats, stacks, antes,
blinds, each action with its amount (and its total, rebuilt by pokerdf), all-ins, the board,
the pots, what each player collected and got back, the cards shown, the results, the finishing
places and prizes, and the header (ids, stakes, level, buy-in, time). The figures are printed
(``pytest -s``).
"""

from __future__ import annotations

import datetime as dt
import random
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import pytest
from poker.card import Card as PokerCard
from poker.hand import Combo
from poker.room.pokerstars import PokerStarsHandHistory, _Street
from pokerdf.core.read_and_convert import apply_regex
from pokerdf.modeling.star_schema import build_fact_player_action, load_converted_data

from engine.betting import AnteKind, HandSetup, Limit, Street
from engine.cards import card_str, parse_cards
from engine.evaluator import evaluate
from engine.events import (
    ActionKind,
    ActionTaken,
    AntePosted,
    BlindKind,
    BlindPosted,
    CardsMucked,
    CardsShown,
    Event,
    HandsShown,
    HoleCardsDealt,
    PotAwarded,
    StreetDealt,
    UncalledBetReturned,
)
from engine.hand import Hand
from engine.history.pokerstars import (
    BuyIn,
    Finish,
    StarsHandContext,
    StarsTournament,
    eastern_time,
    format_pokerstars,
    join_hands,
    own_view,
    roman,
    stars_description,
)
from engine.random_play import play_random_hand
from engine.table import FirstButton, Table, TableSettings

CET = dt.timezone(dt.timedelta(hours=1))  # pokerdf's fixed CET
STREET_STAGES = {Street.PREFLOP: "Preflop", Street.FLOP: "Flop", Street.TURN: "Turn", Street.RIVER: "River"}
VERBS = {
    ActionKind.FOLD: "folds",
    ActionKind.CHECK: "checks",
    ActionKind.CALL: "calls",
    ActionKind.BET: "bets",
    ActionKind.RAISE: "raises",
}


@dataclass(frozen=True, slots=True)
class Spec:
    """One tournament of the corpus."""

    seed: int
    tournament_id: int
    limit: Limit
    ante_kind: AnteKind
    buy_in: BuyIn
    size: int
    players: int
    prizes: dict[int, int]
    zone: dt.tzinfo
    start: dt.datetime
    stack: int = 1000


@dataclass(slots=True)
class Played:
    setup: HandSetup
    events: list[Event]
    tournament: StarsTournament
    context: StarsHandContext
    text: str = ""  # the operator's record


@dataclass(slots=True)
class Truth:
    """What a hand's events say, in the terms the parsers read."""

    antes: dict[str, int] = field(default_factory=dict)
    blinds: dict[str, int] = field(default_factory=dict)
    actions: dict[Street, list[tuple[str, str, int | None, int, bool]]] = field(default_factory=dict)
    board: tuple[str, ...] = ()
    pots: tuple[int, ...] = ()
    won: Counter[str] = field(default_factory=Counter)
    collectors: set[str] = field(default_factory=set)  # named in a "collected" line
    returned: Counter[str] = field(default_factory=Counter)
    shown: dict[str, tuple[str, ...]] = field(default_factory=dict)
    folded: set[str] = field(default_factory=set)
    mucked: set[str] = field(default_factory=set)
    showdown: bool = False


SPECS = (
    Spec(1, 3026510091, Limit.NO_LIMIT, AnteKind.EACH, BuyIn(1000, 100, "USD"), 9, 9,
         {1: 5000, 2: 3000, 3: 1900},
         ZoneInfo("Europe/Paris"), dt.datetime(2020, 3, 8, 6, 0, tzinfo=dt.UTC)),
    Spec(2, 2869198721, Limit.POT_LIMIT, AnteKind.BIG_BLIND, BuyIn(0, 0, "USD"), 6, 6, {1: 150, 2: 75},
         dt.UTC, dt.datetime(2020, 11, 1, 9, 0, tzinfo=dt.UTC)),
    Spec(3, 382394766, Limit.FIXED_LIMIT, AnteKind.BIG_BLIND, BuyIn(300, 20, None), 9, 8, {1: 4500, 2: 1500},
         ZoneInfo("America/Sao_Paulo"), dt.datetime(2011, 4, 5, 2, 0, tzinfo=dt.UTC)),
    Spec(4, 257640000, Limit.NO_LIMIT, AnteKind.NONE, BuyIn(2000, 100, "EUR"), 2, 2, {1: 4000},
         ZoneInfo("Europe/Berlin"), dt.datetime(2010, 3, 20, 18, 0, tzinfo=dt.UTC), stack=1500),
    Spec(5, 797469411, Limit.NO_LIMIT, AnteKind.NONE, BuyIn(500, 50, "GBP"), 6, 5, {1: 1650, 2: 1100},
         ZoneInfo("Europe/London"), dt.datetime(2013, 10, 4, 17, 0, tzinfo=dt.UTC)),
    Spec(6, 2288022169, Limit.FIXED_LIMIT, AnteKind.EACH, BuyIn(184, 16, "USD"), 6, 6, {1: 600, 2: 300},
         ZoneInfo("America/New_York"), dt.datetime(2018, 4, 24, 21, 0, tzinfo=dt.UTC)),
    Spec(7, 99999, Limit.POT_LIMIT, AnteKind.EACH, BuyIn(89, 11, "USD"), 9, 7, {1: 500, 2: 200},
         ZoneInfo("Asia/Tokyo"), dt.datetime(2025, 5, 16, 12, 0, tzinfo=dt.UTC)),
)  # fmt: skip
# Seeds beyond SPECS, replaying them with other seeds, until the corpus has this many hands.
MIN_HANDS = 240


def _levels(level: int, ante_kind: AnteKind) -> tuple[int, int, int, AnteKind]:
    """(small blind, big blind, ante, ante kind) of a level: fast, so tournaments end."""
    big = 20 * level + (10 * level * level if level > 3 else 0)
    ante = (
        0 if level < 2 or ante_kind is AnteKind.NONE else (big // 10 if ante_kind is AnteKind.EACH else big)
    )
    return big // 2, big, ante, ante_kind if ante else AnteKind.NONE


def play_tournament(spec: Spec, seed: int) -> list[Played]:
    """One table from ``spec.players`` players to one winner; each bust ranked (ELIM-1: the larger
    starting stack finishes higher) and paid ``spec.prizes``."""
    rng = random.Random(seed)
    table = Table(TableSettings(size=spec.size, first_button=FirstButton.DRAW, limit=spec.limit), table_id=1)
    for index, seat in enumerate(sorted(rng.sample(range(1, spec.size + 1), spec.players)), start=1):
        table.seat_player(seat, f"t{spec.seed}p{index}", spec.stack)
    table.draw_button(rng)
    tournament = StarsTournament(spec.tournament_id, spec.buy_in, spec.zone)
    played = []
    number = 0
    while len(table.players) > 1:
        number += 1
        level = (number - 1) // 5 + 1
        setup = table.start_hand(f"{spec.tournament_id}-{seed}-{number}", *_levels(level, spec.ante_kind))
        hand = Hand(setup, rng=rng)
        play_random_hand(hand, rng)
        left = len(table.players)
        starting = {entry.seat: entry.stack for entry in setup.seats}
        busted = sorted(
            table.finish_hand(hand.finishing_stacks()).busted, key=lambda b: (-starting[b.seat], b.seat)
        )
        finishes = [Finish(b.player, left - i, spec.prizes.get(left - i, 0)) for i, b in enumerate(busted)]
        if len(table.players) == 1:
            finishes.append(Finish(table.players[0].player, 1, spec.prizes.get(1, 0)))
        context = StarsHandContext(
            seed * 100_000 + number,
            1 + seed % 50,
            level,
            spec.start + dt.timedelta(seconds=37 * number + seed),
            tuple(finishes),
        )
        entry = Played(setup, hand.events, tournament, context)
        entry.text = format_pokerstars(setup, hand.events, tournament, context)
        played.append(entry)
    return played


def corpus() -> list[tuple[Spec, list[Played]]]:
    out = []
    total = 0
    round_no = 0
    while total < MIN_HANDS:
        for spec in SPECS:
            hands = play_tournament(spec, spec.seed + 1000 * round_no)
            out.append((spec, hands))
            total += len(hands)
        round_no += 1
    return out


def truth_of(played: Played) -> Truth:
    setup = played.setup
    names = {seat.seat: seat.player for seat in setup.seats}
    truth = Truth(actions={street: [] for street in STREET_STAGES})
    pots = []
    for event in played.events:
        if isinstance(event, AntePosted):
            truth.antes[names[event.seat]] = event.amount
        elif isinstance(event, BlindPosted):
            truth.blinds[names[event.seat]] = event.amount
        elif isinstance(event, ActionTaken):
            amount = None if event.kind in (ActionKind.FOLD, ActionKind.CHECK) else event.amount
            truth.actions[event.street].append(
                (names[event.seat], VERBS[event.kind], amount, event.to_amount, event.all_in)
            )
            if event.kind is ActionKind.FOLD:
                truth.folded.add(names[event.seat])
        elif isinstance(event, StreetDealt):
            truth.board = tuple(card_str(card) for card in event.board)
        elif isinstance(event, UncalledBetReturned):
            truth.returned[names[event.seat]] += event.amount
        elif isinstance(event, HandsShown):
            truth.showdown = True
            for shown in event.hands:
                truth.shown[names[shown.seat]] = tuple(card_str(card) for card in shown.cards)
        elif isinstance(event, CardsShown):
            truth.showdown = True
            truth.shown[names[event.seat]] = tuple(card_str(card) for card in event.cards)
        elif isinstance(event, CardsMucked):
            truth.showdown = True
            truth.mucked.add(names[event.seat])
        elif isinstance(event, PotAwarded):
            pots.append(event.amount)
            for seat, share in zip(event.winners, event.shares, strict=True):
                truth.won[names[seat]] += share
                if share or len(event.winners) == 1:
                    truth.collectors.add(names[seat])
    truth.pots = tuple(pots)
    return truth


def player_files(hands: list[Played]) -> Iterator[tuple[str, list[Played], str]]:
    """Each player's own file of a tournament: the hands they were dealt into, their view."""
    players = sorted({entry.player for played in hands for entry in played.setup.seats})
    for player in players:
        mine = [played for played in hands if any(entry.player == player for entry in played.setup.seats)]
        yield player, mine, join_hands(own_view(played.text, player) for played in mine)


@pytest.fixture(scope="module")
def tournaments() -> list[tuple[Spec, list[Played]]]:
    return corpus()


def test_acceptance_1_the_corpus_covers_what_issue_10_asks(
    tournaments: list[tuple[Spec, list[Played]]],
) -> None:
    hands = [played for _, played in tournaments for played in played]
    limits = Counter(played.setup.limit for played in hands)
    antes = Counter(played.setup.ante_kind for played in hands)
    side_pots = sum(sum(isinstance(e, PotAwarded) for e in played.events) > 1 for played in hands)
    several_side_pots = sum(sum(isinstance(e, PotAwarded) for e in played.events) > 2 for played in hands)
    heads_up = sum(len(played.setup.seats) == 2 for played in hands)
    busts = sum(len(played.context.finishes) for played in hands)
    short_big_blind = sum(
        any(isinstance(e, BlindPosted) and e.blind is BlindKind.BIG and e.all_in for e in played.events)
        for played in hands
    )
    showdowns = sum(any(isinstance(e, CardsShown | HandsShown) for e in played.events) for played in hands)
    print(
        f"\ncorpus: {len(hands)} hands in {len(tournaments)} tournaments; limits {dict(limits)}; antes"
        f" {dict(antes)}; {side_pots} with side pots ({several_side_pots} with several); {heads_up}"
        f" heads-up; {showdowns} showdowns; {busts} finishes; {short_big_blind} big blinds all-in"
    )
    assert len(hands) >= 200, len(hands)
    assert set(limits) == {Limit.NO_LIMIT, Limit.POT_LIMIT, Limit.FIXED_LIMIT}, limits
    assert set(antes) == {AnteKind.NONE, AnteKind.EACH, AnteKind.BIG_BLIND}, antes
    assert side_pots >= 10 and several_side_pots >= 1 and heads_up >= 20 and short_big_blind >= 1
    assert busts == sum(spec.players for spec, _ in tournaments), "every player finishes once"


def test_acceptance_1_pokerdf_reads_every_hand_as_the_events_say(
    tournaments: list[tuple[Spec, list[Played]]], tmp_path: Path
) -> None:
    rows = fields = files = 0
    hands_read: set[tuple[int, int]] = set()
    for spec, hands in tournaments:
        for player, mine, text in player_files(hands):
            frame = apply_regex(text)
            files += 1
            by_hand = {int(hand_id): group for hand_id, group in frame.groupby("HandID")}
            assert sorted(by_hand) == sorted(p.context.hand_number for p in mine), f"{player}: hands missing"
            # its modeling step reads what its convert step wrote: a parquet file per tournament file
            folder = tmp_path / f"file{files}"
            folder.mkdir()
            frame.to_parquet(folder / "hands.parquet", index=False)
            facts = build_fact_player_action(load_converted_data(str(folder)))
            for played in mine:
                group = by_hand[played.context.hand_number]
                hands_read.add((spec.tournament_id, played.context.hand_number))
                checked = _check_pokerdf_hand(spec, played, player, group, facts)
                fields += checked
                rows += len(group)
    hands = sum(len(h) for _, h in tournaments)
    print(
        f"\npokerdf: {len(hands_read)} of {hands} hands read in {files} player files, {rows} player rows,"
        f" {fields} fields equal; action totals rebuilt by its model checked in all but"
        f" {len(DEAD_BUTTON_HANDS)} dead-button hands"
    )
    assert len(hands_read) == hands


def _check_pokerdf_hand(
    spec: Spec, played: Played, owner: str, group: pd.DataFrame, facts: pd.DataFrame
) -> int:
    setup, context, truth = played.setup, played.context, truth_of(played)
    where = f"hand {context.hand_number} ({owner}'s file)"
    checked = 0

    def equal(got: Any, want: Any, what: str) -> None:
        nonlocal checked
        assert got == want, f"{where}: {what}: pokerdf read {got!r}, the events say {want!r}\n{played.text}"
        checked += 1

    first = group.iloc[0]
    big_or_bet = (
        (setup.big_blind, 2 * setup.big_blind)
        if setup.limit is Limit.FIXED_LIMIT
        else (setup.small_blind, setup.big_blind)
    )
    equal(first["TournID"], str(spec.tournament_id), "tournament id")
    equal(first["TableID"], str(context.table_number), "table")
    equal(first["TableSize"], setup.table_size, "table size")
    equal(first["Level"], roman(context.level), "level")
    equal(tuple(first["Blinds"]), tuple(float(x) for x in big_or_bet), "stakes")
    equal(first["BuyIn"], spec.buy_in.header().split(" ")[0], "buy-in")
    equal(first["Owner"], owner, "owner")
    equal(tuple(first["OwnersHand"]), _hole(played, owner), "owner's cards")
    utc = context.started_at.astimezone(dt.UTC)
    equal(first["HandStartTimeCET"].to_pydatetime(), utc.astimezone(CET).replace(tzinfo=None), "time (CET)")
    equal(first["Playing"], len(setup.seats), "players")
    equal(tuple(first["BoardRiver"] or first["BoardTurn"] or first["BoardFlop"]), truth.board, "board")
    equal(first["TotalPotLog"], float(sum(truth.pots)), "total pot")
    equal(tuple(first["PotBreakdown"]), tuple(float(p) for p in truth.pots), "pots")
    equal(first["Rake"], 0.0, "rake")
    finishes = {finish.player: finish for finish in context.finishes}
    equal(sorted(group["Player"]), sorted(entry.player for entry in setup.seats), "player names")
    for _, row in group.iterrows():
        name = row["Player"]
        entry = next(e for e in setup.seats if e.player == name)
        equal(row["Seat"], entry.seat, f"{name}'s seat")
        equal(row["Stack"], float(entry.stack), f"{name}'s stack")
        equal(_none(row["PostedAnte"]), truth.antes.get(name), f"{name}'s ante")
        equal(_none(row["PostedBlind"]), truth.blinds.get(name), f"{name}'s blind")
        for street, stage in STREET_STAGES.items():
            mine = [
                (verb, "" if amount is None else str(_written(verb, amount, to, truth, street, index)))
                for index, (who, verb, amount, to, _) in enumerate(truth.actions[street])
                if who == name
            ]
            equal(
                [tuple(pair) for pair in row[f"{stage}Action"] if pair != ("", "")],
                mine,
                f"{name}'s {stage} actions",
            )
            all_in = any(who == name and flag for who, _, _, _, flag in truth.actions[street])
            equal(bool(row[f"{stage}AllIn"]), all_in, f"{name}'s {stage} all-in")
        # pokerdf reads an all-in post (ante or blind) as AnteAllIn, in hands with antes
        posted_all_in = any(
            isinstance(e, AntePosted | BlindPosted) and e.all_in and names_of(setup)[e.seat] == name
            for e in played.events
        )
        equal(bool(row["AnteAllIn"]), posted_all_in and bool(truth.antes), f"{name}'s all-in post")
        positions = (
            (setup.button, "button"),
            (setup.small_blind_seat, "small blind"),
            (setup.big_blind_seat, "big blind"),
        )
        labels = [label for seat, label in positions if seat == entry.seat]
        equal(row["Position"], labels[0] if labels else None, f"{name}'s position")
        won = truth.won.get(name, 0)
        equal(_none(row["Balance"]), won if name in truth.collectors else None, f"{name}'s winnings")
        equal(_none(row["UncalledReturned"]), truth.returned.get(name) or None, f"{name}'s returned bets")
        if name in truth.shown:
            equal(tuple(row["RevealedCards"]), truth.shown[name], f"{name}'s shown cards")
            value = evaluate(tuple(_parse(truth.shown[name])) + tuple(_parse(truth.board)))
            equal(row["CardCombination"], stars_description(value), f"{name}'s hand")
        else:
            equal(tuple(row["RevealedCards"]), (None, None), f"{name} shows nothing")
        result = (
            "folded" if name in truth.folded
            else "mucked at showdown" if name in truth.mucked
            else ("won at showdown" if won else "lost at showdown") if truth.showdown
            else "won without showdown"
        )  # fmt: skip
        equal(row["Result"], result, f"{name}'s result")
        finish = finishes.get(name)
        equal(row["FinalRank"], finish.place if finish else -1, f"{name}'s place")
        prize = finish.prize if finish and finish.prize else None
        equal(_none(row["Prize"]), None if prize is None else _prize(spec.buy_in, prize), f"{name}'s prize")
    # the totals pokerdf rebuilds from the written increments, action by action, in the order its
    # model puts them (it reconstructs the order from each player's actions and the positions)
    rows = facts[(facts["HandID"] == context.hand_number) & (facts["ActionIndex"] > 0)].sort_values(
        "ActionOrder"
    )
    got = [(str(r["Round"]), r["Player"], r["Action"], float(r["TotalValue"])) for _, r in rows.iterrows()]
    want = [
        (street.value, who, verb, float(to + (truth.antes.get(who, 0) if street is Street.PREFLOP else 0)))
        for street, acts in truth.actions.items()
        for who, verb, _, to, _ in acts
    ]
    if setup.button in setup.seat_numbers():
        equal(got, want, "each action's total, rebuilt by pokerdf")
    else:
        # A dead button (an empty seat) labels no seat "(button)", and pokerdf's model finds the
        # order of the actions from that label: it orders such a hand from another seat.
        DEAD_BUTTON_HANDS.add(context.hand_number)
    return checked


def test_acceptance_1_the_poker_package_reads_every_hand_as_the_events_say(
    tournaments: list[tuple[Spec, list[Played]]],
) -> None:
    parsed = fields = 0
    hands_read: set[int] = set()
    for spec, hands in tournaments:
        if spec.buy_in.currency not in (None, "USD"):
            continue  # its header pattern knows "$" only: "€20.00+€1.00 EUR" is not read (see below)
        for player, mine, text in player_files(hands):
            pieces = [piece for piece in text.split("\n\n\n\n") if piece.strip()]
            assert len(pieces) == len(mine), f"{player}: {len(pieces)} hands in the file, {len(mine)} played"
            for played, piece in zip(mine, pieces, strict=True):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    history = PokerStarsHandHistory(piece)
                    history.parse()
                fields += _check_poker_hand(spec, played, player, history)
                parsed += 1
                hands_read.add(played.context.hand_number)
    hands = sum(len(h) for spec, h in tournaments if spec.buy_in.currency in (None, "USD"))
    print(f"\npoker: {len(hands_read)} of {hands} hands read ({parsed} player copies), {fields} fields equal")
    assert len(hands_read) == hands and hands >= 200


def test_the_poker_package_reads_no_euro_or_pound_buy_in_which_pokerstars_writes() -> None:
    # Why the test above leaves out the EUR and GBP tournaments (pokerdf reads them): the package's
    # header pattern has "$" only, and real PokerStars files write "€15.55+€0.95 EUR".
    spec = next(spec for spec in SPECS if spec.buy_in.currency == "EUR")
    played = play_tournament(spec, spec.seed)[0]
    assert "€20.00+€1.00 EUR Hold'em No Limit" in played.text.splitlines()[0]
    with pytest.raises(ValueError, match="not a valid Game"):
        PokerStarsHandHistory(own_view(played.text, played.setup.seats[0].player)).parse()


def _check_poker_hand(spec: Spec, played: Played, owner: str, history: Any) -> int:
    setup, context, truth = played.setup, played.context, truth_of(played)
    where = f"hand {context.hand_number} ({owner}'s copy)"
    checked = 0

    def equal(got: Any, want: Any, what: str) -> None:
        nonlocal checked
        assert got == want, f"{where}: {what}: poker read {got!r}, the events say {want!r}\n{played.text}"
        checked += 1

    stakes = (
        (setup.big_blind, 2 * setup.big_blind)
        if setup.limit is Limit.FIXED_LIMIT
        else (setup.small_blind, setup.big_blind)
    )
    equal(history.ident, str(context.hand_number), "hand number")
    equal(history.tournament_ident, str(spec.tournament_id), "tournament")
    equal(history.tournament_level, roman(context.level), "level")
    equal((history.sb, history.bb), tuple(Decimal(x) for x in stakes), "stakes")
    equal(
        str(history.limit),
        {Limit.NO_LIMIT: "NL", Limit.POT_LIMIT: "PL", Limit.FIXED_LIMIT: "FL"}[setup.limit],
        "limit",
    )
    equal(str(history.game), "Hold'em", "game")
    if spec.buy_in.currency is None:
        equal(
            (history.buyin, history.rake, history.currency),
            (Decimal(spec.buy_in.amount), Decimal(spec.buy_in.fee), None),
            "play money",
        )
    else:
        equal((history.buyin * 100, history.rake * 100), (spec.buy_in.amount, spec.buy_in.fee), "buy-in")
        equal(str(history.currency), spec.buy_in.currency, "currency")
    equal(history.date, context.started_at.astimezone(dt.UTC), "time")
    equal(history.table_name, f"{spec.tournament_id} {context.table_number}", "table")
    equal(history.max_players, setup.table_size, "table size")
    seated = [(p.seat, p.name, p.stack) for p in history.players if not p.name.startswith("Empty Seat")]
    equal(seated, [(e.seat, e.player, e.stack) for e in setup.seats], "seats, names and stacks")
    equal(history.button.seat, setup.button, "button")
    equal(history.hero.name, owner, "hero")
    equal(history.hero.combo, Combo("".join(_hole(played, owner))), "hero's cards")
    equal(history.total_pot, sum(truth.pots), "total pot")
    equal(tuple(history.board or ()), tuple(PokerCard(card) for card in truth.board), "board")
    equal(history.show_down, truth.showdown, "showdown")
    winners = {w.split(" (")[0] for w in history.winners}  # it keeps the seat's labels: "ann (button)"
    expected = set(truth.collectors)
    if not truth.board:
        # It reads the summary's seat lines from the line after "Board [..]"; without a board (a
        # hand over before the flop, as in PokerStars' own files) it skips the first seat's line.
        expected.discard(setup.seats[0].player)
    equal(winners, expected, "winners")
    streets = {
        Street.PREFLOP: history.preflop_actions,
        Street.FLOP: history.flop.actions if history.flop else None,
        Street.TURN: history.turn_actions,
        Street.RIVER: history.river_actions,
    }
    for street, lines in streets.items():
        if lines and isinstance(lines[0], str):
            lines = _Street(["[2c 3c 4c]", *lines]).actions  # the package's own parser of a street's lines
        got = [
            (a.name, str(a.action), a.amount)
            for a in lines or ()
            if str(a.action) not in ("win", "return", "don't show")
        ]
        want = [
            (
                who,
                VERBS_POKER[verb],
                None if amount is None else Decimal(_written(verb, amount, to, truth, street, index)),
            )
            for index, (who, verb, amount, to, _) in enumerate(truth.actions[street])
        ]
        equal(got, want, f"{street} actions")
        won = [(a.name, a.amount) for a in lines or () if str(a.action) == "win"]
        back = [(a.name, a.amount) for a in lines or () if str(a.action) == "return"]
        if not truth.showdown and won:
            equal(won, [(n, Decimal(truth.won[n])) for n in sorted(truth.collectors)], f"{street}: collected")
        equal(
            sorted(back),
            sorted((n, Decimal(r)) for n, r in _returned_on(played, street).items()),
            f"{street}: returned",
        )
    return checked


DEAD_BUTTON_HANDS: set[int] = set()  # hands whose action totals pokerdf's model cannot rebuild
VERBS_POKER = {"folds": "fold", "checks": "check", "calls": "call", "bets": "bet", "raises": "raise"}


def _returned_on(played: Played, street: Street) -> Counter[str]:
    names = names_of(played.setup)
    current = Street.PREFLOP
    out: Counter[str] = Counter()
    for event in played.events:
        if isinstance(event, StreetDealt | ActionTaken):
            current = event.street
        elif isinstance(event, UncalledBetReturned) and current is street:
            out[names[event.seat]] += event.amount
    return out


def _written(verb: str, amount: int, to: int, truth: Truth, street: Street, index: int) -> int:
    """The amount a line writes: what a call or bet puts in; for a raise, the increment over the
    largest total anyone has put in this round before it (pokerdf's and PokerStars' arithmetic)."""
    if verb != "raises":
        return amount
    level = max(truth.blinds.values(), default=0) if street is Street.PREFLOP else 0
    for _, _, _, before, _ in truth.actions[street][:index]:
        level = max(level, before)
    return to - level


def names_of(setup: HandSetup) -> dict[int, str]:
    return {entry.seat: entry.player for entry in setup.seats}


def _hole(played: Played, player: str) -> tuple[str, ...]:
    seat = next(entry.seat for entry in played.setup.seats if entry.player == player)
    cards = next(e.cards for e in played.events if isinstance(e, HoleCardsDealt) and e.seat == seat)
    return tuple(card_str(card) for card in cards)


def _none(value: Any) -> Any:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _prize(buy_in: BuyIn, prize: int) -> int | float:
    return prize if buy_in.currency is None else _none(prize / 100)


def _parse(cards: tuple[str, ...]) -> list[int]:
    return list(parse_cards("".join(cards)))


def test_pokerstars_header_time_in_brackets_is_the_eastern_time_of_the_start(
    tournaments: list[tuple[Spec, list[Played]]],
) -> None:
    for _, hands in tournaments:
        for played in hands:
            stamp = played.text.splitlines()[0].rsplit("[", 1)[1].rstrip("]")
            parsed = dt.datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S ET")
            assert parsed == eastern_time(played.context.started_at), played.text.splitlines()[0]
