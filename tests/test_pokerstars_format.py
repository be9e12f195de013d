"""PokerStars text (engine.history.pokerstars): the layout of real PokerStars tournament files, line
by line, for the cases third-party parsers read wrong before (issue 10, item 1). The parsers
themselves read a corpus of tournament hands in tests/test_pokerstars_parsers.py."""

from __future__ import annotations

import datetime as dt
import random
import re
from zoneinfo import ZoneInfo

import pytest

from engine.betting import AnteKind, Game, HandSetup, Limit, SeatSetup
from engine.cards import card_str, parse_cards
from engine.evaluator import evaluate
from engine.events import PotAwarded
from engine.hand import Hand, deck_for
from engine.history.pokerstars import (
    BuyIn,
    Finish,
    StarsHandContext,
    StarsTournament,
    eastern_time,
    format_pokerstars,
    join_hands,
    ordinal,
    own_view,
    roman,
    stars_description,
)
from engine.random_play import play_random_hand

NOON_UTC = dt.datetime(2026, 12, 1, 12, 0, 0, tzinfo=dt.UTC)


def _setup(
    seats: list[tuple[int, str, int]], button: int, small: int | None, big: int, **kw: object
) -> HandSetup:
    return HandSetup(
        hand_id="h",
        table_size=kw.pop("table_size", 6),  # type: ignore[arg-type]
        seats=tuple(SeatSetup(seat, name, stack) for seat, name, stack in seats),
        button=button,
        small_blind_seat=small,
        big_blind_seat=big,
        small_blind=kw.pop("small_blind", 10),  # type: ignore[arg-type]
        big_blind=kw.pop("big_blind", 20),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def _diff(lines: list[str], expected: list[str]) -> str:
    return "PokerStars text differs:\n" + "\n".join(
        f"{'  ' if got == want else '!!'} got {got!r} want {want!r}"
        for got, want in zip(lines, expected, strict=False)
    )


def _render(setup: HandSetup, hand: Hand, hero: str | None = None, **context: object) -> list[str]:
    tournament = StarsTournament(7, BuyIn(1000, 100, "USD"))
    ctx = StarsHandContext(
        context.pop("hand_number", 42),  # type: ignore[arg-type]
        1,
        context.pop("level", 1),  # type: ignore[arg-type]
        NOON_UTC,
        context.pop("finishes", ()),  # type: ignore[arg-type]
    )
    return format_pokerstars(setup, hand.events, tournament, ctx, hero=hero).splitlines()


def test_pokerstars_text_of_a_known_hand_line_by_line() -> None:
    setup = _setup([(1, "alice", 1000), (4, "bob", 500), (6, "carol", 1500)], button=1, small=4, big=6)
    hole = {4: parse_cards("AsKd"), 6: parse_cards("7c7d"), 1: parse_cards("QhJh")}
    hand = Hand(setup, deck=deck_for(setup, hole, parse_cards("AhKh2c9s3d")), salt=b"\0" * 16)
    hand.fold()  # alice, on the button, acts first three-handed
    hand.bet_or_raise_to(60)  # bob
    hand.check_or_call()  # carol
    hand.bet_or_raise_to(100)  # bob bets the flop
    hand.check_or_call()
    hand.check_or_call()  # turn: bob checks
    hand.check_or_call()  # carol checks
    hand.bet_or_raise_to(200)  # river: bob bets
    hand.check_or_call()  # carol calls and cannot win: she mucks
    tournament = StarsTournament(7, BuyIn(1000, 100, "USD"), ZoneInfo("Europe/Paris"))
    context = StarsHandContext(42, 1, 2, NOON_UTC)
    lines = format_pokerstars(setup, hand.events, tournament, context, hero="bob").splitlines()
    expected = [
        "PokerStars Hand #42: Tournament #7, $10.00+$1.00 USD Hold'em No Limit - Level II (10/20)"
        " - 2026/12/01 13:00:00 CET [2026/12/01 7:00:00 ET]",
        "Table '7 1' 6-max Seat #1 is the button",
        "Seat 1: alice (1000 in chips) ",
        "Seat 4: bob (500 in chips) ",
        "Seat 6: carol (1500 in chips) ",
        "bob: posts small blind 10",
        "carol: posts big blind 20",
        "*** HOLE CARDS ***",
        "Dealt to bob [As Kd]",
        "alice: folds ",
        "bob: raises 40 to 60",
        "carol: calls 40",
        "*** FLOP *** [Ah Kh 2c]",
        "bob: bets 100",
        "carol: calls 100",
        "*** TURN *** [Ah Kh 2c] [9s]",
        "bob: checks ",
        "carol: checks ",
        "*** RIVER *** [Ah Kh 2c 9s] [3d]",
        "bob: bets 200",
        "carol: calls 200",
        "*** SHOW DOWN ***",
        "bob: shows [As Kd] (two pair, Aces and Kings)",
        "carol: mucks hand ",
        "bob collected 720 from pot",
        "*** SUMMARY ***",
        "Total pot 720 | Rake 0 ",
        "Board [Ah Kh 2c 9s 3d]",
        "Seat 1: alice (button) folded before Flop (didn't bet)",
        "Seat 4: bob (small blind) showed [As Kd] and won (720) with two pair, Aces and Kings",
        "Seat 6: carol (big blind) mucked",
    ]
    assert lines == expected, _diff(lines, expected)
    operator = format_pokerstars(setup, hand.events, tournament, context).splitlines()
    assert [line for line in operator if line.startswith("Dealt to")] == [
        "Dealt to bob [As Kd]",
        "Dealt to carol [7c 7d]",
        "Dealt to alice [Qh Jh]",
    ], "the operator's record holds every player's hole cards, in deal order"


def test_pokerstars_raise_after_a_short_all_in_big_blind_counts_from_the_call() -> None:
    # BET-2: the others call the full big blind; a raise is written over the largest total put in
    setup = _setup([(1, "ann", 2000), (2, "ben", 2000), (3, "cat", 6)], button=1, small=2, big=3)
    hand = Hand(setup, rng=random.Random(1))
    hand.check_or_call()  # ann
    hand.bet_or_raise_to(1560)  # ben
    hand.fold()  # ann
    lines = _render(setup, hand)
    assert "cat: posts big blind 6 and is all-in" in lines, lines
    assert "ann: calls 20" in lines, lines
    assert "ben: raises 1540 to 1560" in lines, lines
    assert "Seat 1: ann (button) folded before Flop" in lines, "a caller who folds did bet"
    # with nobody calling first, the largest total put in is the small blind's 10
    hand = Hand(setup, rng=random.Random(1))
    hand.bet_or_raise_to(1560)  # ann
    assert "ann: raises 1550 to 1560" in _render(setup, hand)


def test_pokerstars_heads_up_button_is_the_small_blind_and_a_folded_blind_did_bet() -> None:
    setup = _setup([(3, "ida", 700), (8, "jo", 45)], button=8, small=8, big=3, table_size=9)
    hand = Hand(setup, rng=random.Random(2))
    hand.bet_or_raise_to(45)  # jo, the button, acts first heads-up
    hand.fold()  # ida
    lines = _render(setup, hand)
    expected_tail = [
        "jo: posts small blind 10",
        "ida: posts big blind 20",
        "*** HOLE CARDS ***",
        f"Dealt to ida [{' '.join(_cards(hand, 3))}]",
        f"Dealt to jo [{' '.join(_cards(hand, 8))}]",
        "jo: raises 25 to 45 and is all-in",
        "ida: folds ",
        "Uncalled bet (25) returned to jo",
        "jo collected 40 from pot",
        "jo: doesn't show hand ",
        "*** SUMMARY ***",
        "Total pot 40 | Rake 0 ",
        "Seat 3: ida (big blind) folded before Flop",
        "Seat 8: jo (button) (small blind) collected (40)",
    ]
    assert lines[4:] == expected_tail, _diff(lines[4:], expected_tail)


def _cards(hand: Hand, seat: int) -> list[str]:
    return [card_str(card) for card in hand.hole_cards(seat)]


def test_pokerstars_side_pots_are_paid_highest_first_each_hand_shown_once_under_show_down() -> None:
    setup = _setup(
        [(1, "a", 50), (2, "b", 100), (3, "c", 200), (4, "d", 400)],
        button=4, small=1, big=2, small_blind=5, big_blind=10,
    )  # fmt: skip
    hole = {1: parse_cards("AhAd"), 2: parse_cards("KhKd"), 3: parse_cards("QhQd"), 4: parse_cards("JhJd")}
    hand = Hand(setup, deck=deck_for(setup, hole, parse_cards("2c3d7h8s9c")), salt=b"\0" * 16)
    hand.bet_or_raise_to(200)  # c all-in
    hand.check_or_call()  # d
    hand.check_or_call()  # a all-in for less
    hand.check_or_call()  # b all-in for less
    lines = _render(setup, hand)
    start = lines.index("*** SHOW DOWN ***")
    expected = [
        "*** SHOW DOWN ***",
        "c: shows [Qh Qd] (a pair of Queens)",
        "d: shows [Jh Jd] (a pair of Jacks)",
        "c collected 200 from side pot-2",
        "b: shows [Kh Kd] (a pair of Kings)",
        "b collected 150 from side pot-1",
        "a: shows [Ah Ad] (a pair of Aces)",
        "a collected 200 from main pot",
        "*** SUMMARY ***",
        "Total pot 550 Main pot 200. Side pot-1 150. Side pot-2 200. | Rake 0 ",
        "Board [2c 3d 7h 8s 9c]",
        "Seat 1: a (small blind) showed [Ah Ad] and won (200) with a pair of Aces",
        "Seat 2: b (big blind) showed [Kh Kd] and won (150) with a pair of Kings",
        "Seat 3: c showed [Qh Qd] and won (200) with a pair of Queens",
        "Seat 4: d (button) showed [Jh Jd] and lost with a pair of Jacks",
    ]
    assert lines[start:] == expected, _diff(lines[start:], expected)
    assert sum(1 for line in lines if ": shows [" in line) == 4, "each hand is shown once"
    assert lines.index("*** RIVER *** [2c 3d 7h 8s] [9c]") == start - 1, (
        "no line between the runout and showdown"
    )


def test_pokerstars_one_side_pot_is_called_side_pot_without_a_number() -> None:
    setup = _setup([(1, "a", 500), (2, "b", 500), (3, "c", 100)], button=3, small=1, big=2)
    hole = {1: parse_cards("AhAd"), 2: parse_cards("KhKd"), 3: parse_cards("QhQd")}
    hand = Hand(setup, deck=deck_for(setup, hole, parse_cards("2c3d7h8s9c")), salt=b"\0" * 16)
    hand.bet_or_raise_to(100)  # c all-in
    hand.bet_or_raise_to(300)  # a
    hand.check_or_call()  # b
    while not hand.is_over:
        hand.check_or_call()
    lines = _render(setup, hand)
    assert "a collected 400 from side pot" in lines and "a collected 300 from main pot" in lines, lines
    assert "Total pot 700 Main pot 300. Side pot 400. | Rake 0 " in lines, lines
    assert lines.index("a collected 400 from side pot") < lines.index("c: shows [Qh Qd] (a pair of Queens)")


@pytest.mark.parametrize(
    ("cards", "words"),
    [
        ("AsKd9c7h3d", "high card Ace"),
        ("TsTd9c7h3d", "a pair of Tens"),
        ("TsTd3c3h9d", "two pair, Tens and Threes"),
        ("2s2d2cAhKd", "three of a kind, Deuces"),
        ("TsJdQcKhAd", "a straight, Ten to Ace"),
        ("As2d3c4h5d", "a straight, Ace to Five"),
        ("Ks9s7s4s2s", "a flush, King high"),
        ("KsKdKcJhJd", "a full house, Kings full of Jacks"),
        ("6s6d6c6hJd", "four of a kind, Sixes"),
        ("9hThJhQhKh", "a straight flush, Nine to King"),
        ("Ac2c3c4c5c", "a straight flush, Ace to Five"),
        ("TdJdQdKdAd", "a Royal Flush"),
    ],
)
def test_pokerstars_hand_descriptions_in_pokerstars_words(cards: str, words: str) -> None:
    assert stars_description(evaluate(parse_cards(cards))) == words


def test_pokerstars_finishing_lines_best_place_first_and_the_winner_last() -> None:
    setup = _setup([(1, "ann", 100), (2, "ben", 100)], button=1, small=1, big=2)
    hand = Hand(setup, rng=random.Random(5))
    play_random_hand(hand, random.Random(5))
    finishes = (Finish("ann", 1, 600), Finish("zed", 3), Finish("ben", 2, 1437))
    lines = _render(setup, hand, finishes=finishes)
    summary = lines.index("*** SUMMARY ***")
    assert lines[summary - 3 : summary] == [
        "ben finished the tournament in 2nd place and received $14.37.",
        "zed finished the tournament in 3rd place",
        "ann wins the tournament and receives $6.00 - congratulations!",
    ], lines
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st", "111th", "112th",
    ]  # fmt: skip
    assert [roman(n) for n in (1, 4, 9, 14, 40)] == ["I", "IV", "IX", "XIV", "XL"]


@pytest.mark.parametrize(
    ("buy_in", "written", "prize"),
    [
        (BuyIn(184, 16, "USD"), "$1.84+$0.16 USD", "$14.37"),
        (BuyIn(500, 50, "GBP"), "£5.00+£0.50 GBP", "£14.37"),
        (BuyIn(1555, 95, "EUR"), "€15.55+€0.95 EUR", "€14.37"),
        (BuyIn(0, 0, "USD"), "Freeroll", "$14.37"),
        (BuyIn(300, 20, None), "300+20", "1437"),
    ],
)
def test_pokerstars_header_buy_in_and_prizes(buy_in: BuyIn, written: str, prize: str) -> None:
    setup = _setup([(1, "ann", 100), (2, "ben", 100)], button=1, small=1, big=2)
    hand = Hand(setup, rng=random.Random(5))
    play_random_hand(hand, random.Random(5))
    context = StarsHandContext(9, 3, 14, NOON_UTC, (Finish("ben", 2, 1437),))
    text = format_pokerstars(setup, hand.events, StarsTournament(3026510091, buy_in), context)
    first = text.splitlines()[0]
    assert first.startswith(
        f"PokerStars Hand #9: Tournament #3026510091, {written} Hold'em No Limit - Level XIV"
    ), first
    assert f"ben finished the tournament in 2nd place and received {prize}." in text, text
    assert "\nTable '3026510091 3' 6-max Seat #1 is the button\n" in text, text


def test_pokerstars_time_is_local_then_eastern_hours_unpadded() -> None:
    setup = _setup([(1, "ann", 100), (2, "ben", 100)], button=1, small=1, big=2)
    hand = Hand(setup, rng=random.Random(5))
    play_random_hand(hand, random.Random(5))
    moment = dt.datetime(2020, 10, 11, 6, 22, 21, tzinfo=dt.UTC)

    def header(zone: dt.tzinfo) -> str:
        context = StarsHandContext(1, 1, 1, moment)
        return format_pokerstars(setup, hand.events, StarsTournament(1, BuyIn(), zone), context).splitlines()[
            0
        ]

    assert header(dt.UTC).endswith(" - 2020/10/11 6:22:21 UTC [2020/10/11 2:22:21 ET]")
    assert header(ZoneInfo("Europe/Paris")).endswith(" - 2020/10/11 8:22:21 CEST [2020/10/11 2:22:21 ET]")
    # an abbreviation that is not letters ("-03") cannot be read by trackers: UTC instead
    assert header(ZoneInfo("America/Sao_Paulo")).endswith(" - 2020/10/11 6:22:21 UTC [2020/10/11 2:22:21 ET]")


def test_pokerstars_eastern_time_agrees_with_the_time_zone_database() -> None:
    new_york = ZoneInfo("America/New_York")
    rng = random.Random(10)
    moments = [dt.datetime(1988, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=rng.randrange(50 * 365 * 86400))]
    for _ in range(3000):
        moments.append(
            dt.datetime(1988, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=rng.randrange(50 * 365 * 86400))
        )
    for year in (1995, 2006, 2007, 2020, 2030):  # around each switch, to the second
        for switch in new_york_switches(year):
            moments.extend(switch + dt.timedelta(seconds=delta) for delta in (-1, 0, 1))
    wrong = [m for m in moments if eastern_time(m) != m.astimezone(new_york).replace(tzinfo=None)]
    assert not wrong, f"{len(wrong)} of {len(moments)} moments differ, e.g. {wrong[:3]}"
    with pytest.raises(ValueError, match="time zone"):
        eastern_time(dt.datetime(2020, 1, 1))


def new_york_switches(year: int) -> list[dt.datetime]:
    """The UTC moments New York's offset changes in ``year``, found by scanning hours."""
    zone = ZoneInfo("America/New_York")
    start = dt.datetime(year, 1, 1, tzinfo=dt.UTC)
    found = []
    for hour in range(366 * 24):
        a, b = start + dt.timedelta(hours=hour), start + dt.timedelta(hours=hour + 1)
        if a.astimezone(zone).utcoffset() != b.astimezone(zone).utcoffset():
            found.append(b)
    return found


def test_pokerstars_files_follow_each_hand_with_three_blank_lines() -> None:
    assert join_hands(["A\nB\n", "C\n"]) == "A\nB\n\n\n\nC\n\n\n\n"
    assert join_hands([]) == ""


def test_pokerstars_own_view_equals_rendering_for_that_player() -> None:
    rng = random.Random(11)
    for number in range(40):
        seats = [(seat, f"p{seat}", rng.randint(1, 3000)) for seat in sorted(rng.sample(range(1, 10), 5))]
        button = seats[number % 5][0]
        order = [s for s, _, _ in seats]
        after = order[order.index(button) + 1 :] + order[: order.index(button) + 1]
        setup = _setup(seats, button=button, small=after[0], big=after[1], table_size=9)
        hand = Hand(setup, rng=rng)
        play_random_hand(hand, rng)
        tournament, context = StarsTournament(5), StarsHandContext(number + 1, 1, 1, NOON_UTC)
        operator = format_pokerstars(setup, hand.events, tournament, context)
        for _, name, _ in seats:
            mine = format_pokerstars(setup, hand.events, tournament, context, hero=name)
            assert own_view(operator, name) == mine
            assert sum(line.startswith("Dealt to ") for line in mine.splitlines()) == 1


COLLECTED = re.compile(r"^\S+ collected (\d+) from (?:pot|main pot|side pot(?:-\d+)?)$")


FOUR = [(1, "a", 800), (3, "b", 120), (5, "c", 1000), (7, "d", 60)]
POSITION_CASES = {
    "dead_button": _setup(FOUR, button=2, small=3, big=5, table_size=9),
    "dead_small_blind": _setup(FOUR, button=1, small=None, big=3, table_size=9),
    "each_ante_short_stacks": _setup(
        [(1, "a", 3), (2, "b", 500), (4, "c", 12), (9, "d", 900)],
        button=9, small=1, big=2, ante=5, ante_kind=AnteKind.EACH, table_size=9,
    ),
    "big_blind_ante_short_big_blind": _setup(
        [(1, "a", 600), (2, "b", 400), (4, "c", 25)],
        button=1, small=2, big=4, ante=20, ante_kind=AnteKind.BIG_BLIND,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(POSITION_CASES))
def test_pokerstars_text_is_complete_for_every_position_case(name: str) -> None:
    setup = POSITION_CASES[name]
    for seed in range(10):
        rng = random.Random(seed)
        hand = Hand(setup, rng=rng)
        play_random_hand(hand, rng)
        lines = _render(setup, hand)
        assert lines[1].endswith(f"Seat #{setup.button} is the button"), lines[1]
        summary = lines.index("*** SUMMARY ***")
        seat_lines = [line for line in lines[summary:] if line.startswith("Seat ")]
        assert len(seat_lines) == len(setup.seats), "one summary line per seat expected:\n" + "\n".join(lines)
        total = sum(event.amount for event in hand.events if isinstance(event, PotAwarded))
        assert lines[summary + 1].startswith(f"Total pot {total} "), f"expected pot {total}:\n" + "\n".join(
            lines
        )
        collected = sum(int(match[1]) for line in lines if (match := COLLECTED.match(line)))
        assert collected == total, f"collected {collected} of a {total} pot:\n" + "\n".join(lines)


def test_pokerstars_refuses_what_it_cannot_write() -> None:
    with pytest.raises(ValueError, match="JPY"):
        BuyIn(100, 10, "JPY")
    with pytest.raises(ValueError, match="ints >= 0"):
        BuyIn(-1, 0)
    with pytest.raises(ValueError, match="tournament number"):
        StarsTournament(0)
    with pytest.raises(ValueError, match="place"):
        Finish("ann", 0)
    with pytest.raises(ValueError, match="time zone"):
        StarsHandContext(1, 1, 1, dt.datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="hand_number"):
        StarsHandContext(0, 1, 1, NOON_UTC)
    setup = _setup([(1, "ann", 100), (2, "ben", 100)], button=1, small=1, big=2)
    hand = Hand(setup, rng=random.Random(5))
    play_random_hand(hand, random.Random(5))
    with pytest.raises(ValueError, match="not dealt into"):
        format_pokerstars(
            setup, hand.events, StarsTournament(1), StarsHandContext(1, 1, 1, NOON_UTC), hero="zed"
        )


def test_pokerstars_omaha_pot_limit_hands_render_with_four_hole_cards() -> None:
    setup = _setup(
        [(1, "a", 500), (2, "b", 70), (3, "c", 900), (6, "d", 300)],
        button=6, small=1, big=2, limit=Limit.POT_LIMIT, game=Game.OMAHA,
    )  # fmt: skip
    showdowns = 0
    for seed in range(20):
        rng = random.Random(seed)
        hand = Hand(setup, rng=rng)
        play_random_hand(hand, rng)
        lines = _render(setup, hand, hero="c")
        assert "Omaha Pot Limit - Level I (10/20)" in lines[0], lines[0]
        assert re.fullmatch(
            r"Dealt to c \[(\S\S ){3}\S\S\]", next(x for x in lines if x.startswith("Dealt"))
        ), lines
        shows = [line for line in lines if ": shows [" in line]
        showdowns += bool(shows)
        assert all(re.search(r"\[(\S\S ){3}\S\S\] \((a|high|two|three|four)", line) for line in shows), shows
    assert showdowns > 0
