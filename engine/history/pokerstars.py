"""PokerStars tournament hand histories: the text that hand-tracking software imports.

``format_pokerstars`` renders a finished hand's setup and event log in the layout of a real
PokerStars tournament hand. Everything a hand does not know is an explicit parameter: the
tournament (``StarsTournament``: its number, its buy-in, the players' local time zone) and the
hand's place in it (``StarsHandContext``: the hand number, the table number, the level, when it
started, and who finished the tournament in it). The engine has no clock and reads no time-zone
database: US Eastern time is computed here from the US daylight-saving rules (``eastern_time``),
and the local zone is whatever ``tzinfo`` the caller passes.

The format rules, read from real PokerStars tournament files (2010-2020 files kept as test data
by public hand-history parsers) and from what third-party parsers (pokerdf, the ``poker``
package) depend on:

- Header: ``PokerStars Hand #N: Tournament #T, $1.84+$0.16 USD Hold'em No Limit - Level IV
  (30/60) - 2020/10/11 3:22:15 BRT [2020/10/11 2:22:15 ET]``. The buy-in is ``$buy-in+$fee
  CUR`` (``€``/``£`` for EUR/GBP), ``Freeroll``, or ``300+20`` in play money (chips, no
  currency). The hand and tournament numbers are numbers. The time is local first (hours not
  zero-padded, then the zone's abbreviation), then the same moment in US Eastern time in brackets.
  Fixed limit puts the small and big bet in the parentheses, the other limits the blinds.
- ``Table 'T 3' 9-max Seat #4 is the button``: the tournament number and the table number.
- Seat lines end with a space: ``Seat 1: name (1500 in chips) ``; then antes (``posts the ante
  10``), the small blind, the big blind (``posts big blind 20``, `` and is all-in`` when it is).
- ``*** HOLE CARDS ***`` then ``Dealt to name [Ah Kd]``: a player's own file holds only that
  player's line (``hero``); the operator's file (``hero=None``) holds every player's.
- Actions: ``folds `` and ``checks `` end with a space; ``calls 40``, ``bets 80``, ``raises 40 to
  60``, each with `` and is all-in`` when it is. A raise is written as the increment over the
  largest total anyone has put in this round (blind posts and calls included), then the total:
  after ``posts big blind 6 and is all-in`` and ``calls 20``, a raise to 1560 is ``raises 1540 to
  1560``; pokerdf rebuilds every total from the increments by that rule.
  ``Uncalled bet (80) returned to name`` when a betting round ends.
- Streets: ``*** FLOP *** [2s 6d 6h]``, ``*** TURN *** [2s 6d 6h] [Kd]``, ``*** RIVER *** [2s 6d 6h
  Kd] [3c]``; an all-in deals the rest of the board with no lines in between.
- A hand won without a showdown: ``name collected 150 from pot`` and ``name: doesn't show hand ``
  after the last action. At a showdown, under ``*** SHOW DOWN ***``, each hand is shown once:
  ``name: shows [Ad Tc] (a pair of Tens)`` or ``name: mucks hand ``. When the hands are face up
  (an all-in), the pots are paid from the last side pot to the main pot, and before each pot the
  hands eligible for it that are not shown yet are shown, in order from the button's left. One
  pot is ``pot``; with side pots, ``main pot`` and ``side pot`` when there is one, ``side pot-1``,
  ``side pot-2``... when there are several. A split pot is one ``collected`` line per winner.
- Hand descriptions: ``high card Ace``, ``a pair of Tens``, ``two pair, Tens and Threes``,
  ``three of a kind, Deuces``, ``a straight, Ten to Ace`` (the wheel: ``Ace to Five``), ``a
  flush, King high``, ``a full house, Kings full of Jacks``, ``four of a kind, Nines``, ``a
  straight flush, Nine to King``, ``a Royal Flush``.
- Before the summary, the players who finished the tournament in the hand, best place first:
  ``name finished the tournament in 3rd place``, ``... in 2nd place and received $14.37.``, and
  last the winner: ``name wins the tournament and receives $6.00 - congratulations!``.
- ``*** SUMMARY ***``, ``Total pot 26310 Main pot 4740. Side pot 21570. | Rake 0 `` (the pot line
  ends with a space), ``Board [..]``, then one line per seat with its position labels (heads-up
  the button is also the small blind: ``(button) (small blind)``) and what happened: ``folded
  before Flop (didn't bet)`` (not for the blinds, who bet by posting), ``folded on the Turn``,
  ``showed [..] and won (900) with two pair, Queens and Nines``, ``showed [..] and lost with ..``,
  ``mucked``, ``collected (40)``.
- A file is its hands, each followed by three blank lines (``join_hands``).

Choices where our hands and PokerStars differ: a dead button names the empty seat (as
PokerStars does); absent players (CLK-1) are marked ``is sitting out`` in the seat list; a timed
out action is written as the action alone (PokerStars adds a ``has timed out`` line, which the
``poker`` package cannot read); a killed hand (PEN-1) is ``name: hand is killed (penalty)`` and
folded in the summary; mucked hands are never revealed in the summary; a loser's description
never says ``- lower kicker``. A local zone whose abbreviation is not letters (``-03``) cannot be
read by pokerdf, so such a time is written in UTC instead.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from engine.betting import Game, HandSetup, Limit, Street
from engine.cards import Card, cards_str
from engine.evaluator import HandCategory, category, evaluate, evaluate_omaha, ranks_of_value
from engine.events import (
    ActionKind,
    ActionTaken,
    AntePosted,
    BlindKind,
    BlindPosted,
    CardsMucked,
    CardsShown,
    Event,
    HandKilled,
    HandsShown,
    HoleCardsDealt,
    PotAwarded,
    StreetDealt,
    UncalledBetReturned,
)

__all__ = [
    "BuyIn",
    "Finish",
    "StarsHandContext",
    "StarsTournament",
    "eastern_time",
    "format_pokerstars",
    "join_hands",
    "ordinal",
    "own_view",
    "roman",
    "stars_description",
]

# Each hand in a file is followed by three blank lines, as in PokerStars' own files.
HAND_SEPARATOR = "\n\n\n"

_GAME_NAMES = {
    (Game.HOLDEM, Limit.NO_LIMIT): "Hold'em No Limit",
    (Game.HOLDEM, Limit.POT_LIMIT): "Hold'em Pot Limit",
    (Game.HOLDEM, Limit.FIXED_LIMIT): "Hold'em Limit",
    (Game.OMAHA, Limit.NO_LIMIT): "Omaha No Limit",
    (Game.OMAHA, Limit.POT_LIMIT): "Omaha Pot Limit",
    (Game.OMAHA, Limit.FIXED_LIMIT): "Omaha Limit",
}
_CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}
_STREET_TITLES = {Street.FLOP: "FLOP", Street.TURN: "TURN", Street.RIVER: "RIVER"}
_FOLDED_WHERE = {
    Street.PREFLOP: "before Flop",
    Street.FLOP: "on the Flop",
    Street.TURN: "on the Turn",
    Street.RIVER: "on the River",
}
_ROMAN = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"))
_ROMAN_SMALL = ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))
# PokerStars' words for the ranks (0 = deuce .. 12 = ace, as engine.cards.RANKS): "Deuces".
_RANK_WORDS = (
    "Deuce",
    "Three",
    "Four",
    "Five",
    "Six",
    "Seven",
    "Eight",
    "Nine",
    "Ten",
    "Jack",
    "Queen",
    "King",
    "Ace",
)
_RANK_PLURALS = tuple("Sixes" if word == "Six" else word + "s" for word in _RANK_WORDS)
_ACE = 12
_WHEEL_TOP = 3  # engine.evaluator ranks the wheel's straight by its five
_ZONE_LABEL = re.compile(r"[A-Z]+")


def roman(number: int) -> str:
    """``number`` (>= 1) in Roman numerals, as PokerStars names levels."""
    if number < 1:
        raise ValueError(f"levels are numbered from 1, got {number}")
    out = []
    for value, symbol in _ROMAN + _ROMAN_SMALL:
        while number >= value:
            out.append(symbol)
            number -= value
    return "".join(out)


def ordinal(number: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``... as the finishing lines write places."""
    if number % 100 in (11, 12, 13):
        return f"{number}th"
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th') }"


# -- time --------------------------------------------------------------------------------------

_EST = dt.timedelta(hours=-5)
_EDT = dt.timedelta(hours=-4)


def _nth_sunday(year: int, month: int, n: int) -> int:
    """The day of the month of its ``n``-th Sunday (``n = -1``: the last one)."""
    if n > 0:
        first = dt.date(year, month, 1)
        return 1 + (6 - first.weekday()) % 7 + 7 * (n - 1)
    last = (dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)).day
    return last - (dt.date(year, month, last).weekday() + 1) % 7


def eastern_time(moment: dt.datetime) -> dt.datetime:
    """The wall-clock time in US Eastern time (what PokerStars prints as ``ET``) of an aware
    ``moment``, as a naive datetime.

    Daylight time starts at 2:00 local standard time and ends at 2:00 local daylight time: since
    2007 from the second Sunday of March to the first Sunday of November, from 1987 to 2006 from
    the first Sunday of April to the last Sunday of October (that rule is also used before 1987).
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"a hand's start time must carry a time zone, got {moment!r}")
    utc = moment.astimezone(dt.UTC).replace(tzinfo=None)
    year = utc.year
    if year >= 2007:
        start = dt.datetime(year, 3, _nth_sunday(year, 3, 2), 7)  # 2:00 EST is 7:00 UTC
        end = dt.datetime(year, 11, _nth_sunday(year, 11, 1), 6)  # 2:00 EDT is 6:00 UTC
    else:
        start = dt.datetime(year, 4, _nth_sunday(year, 4, 1), 7)
        end = dt.datetime(year, 10, _nth_sunday(year, 10, -1), 6)
    return utc + (_EDT if start <= utc < end else _EST)


def _clock(moment: dt.datetime) -> str:
    """PokerStars' stamp: the date zero-padded, the hour not."""
    date = f"{moment.year}/{moment.month:02d}/{moment.day:02d}"
    return f"{date} {moment.hour}:{moment.minute:02d}:{moment.second:02d}"


def _stamp(started_at: dt.datetime, local_zone: dt.tzinfo) -> str:
    eastern = eastern_time(started_at)
    local = started_at.astimezone(local_zone)
    label = local.tzname() or ""
    if not _ZONE_LABEL.fullmatch(label):
        local, label = started_at.astimezone(dt.UTC), "UTC"
    return f"{_clock(local)} {label} [{_clock(eastern)} ET]"


# -- the tournament ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BuyIn:
    """A tournament's price as the header writes it. ``amount`` and ``fee`` are cents in
    ``currency`` (``USD``, ``EUR``, ``GBP``), or play chips when ``currency`` is ``None`` (play
    money); a real-money tournament that costs nothing is a freeroll. Prizes are in the same unit."""

    amount: int = 0
    fee: int = 0
    currency: str | None = "USD"

    def __post_init__(self) -> None:
        if type(self.amount) is not int or type(self.fee) is not int or self.amount < 0 or self.fee < 0:
            raise ValueError(f"a buy-in and its fee are ints >= 0, got {self.amount!r} and {self.fee!r}")
        if self.currency is not None and self.currency not in _CURRENCY_SYMBOLS:
            raise ValueError(
                f"PokerStars files write {sorted(_CURRENCY_SYMBOLS)} or play money (None),"
                f" got {self.currency!r}"
            )

    @property
    def is_freeroll(self) -> bool:
        return self.currency is not None and self.amount == 0 and self.fee == 0

    def money(self, amount: int) -> str:
        """``amount`` as PokerStars writes money: ``$14.37``, or play chips as a plain number."""
        if self.currency is None:
            return str(amount)
        return f"{_CURRENCY_SYMBOLS[self.currency]}{amount // 100}.{amount % 100:02d}"

    def header(self) -> str:
        if self.is_freeroll:
            return "Freeroll"
        if self.currency is None:
            return f"{self.amount}+{self.fee}"
        return f"{self.money(self.amount)}+{self.money(self.fee)} {self.currency}"


@dataclass(frozen=True, slots=True)
class StarsTournament:
    """What every hand of a tournament shares in its header. ``local_zone`` is the time zone the
    player's client shows (UTC unless given); the Eastern time beside it is computed."""

    tournament_id: int
    buy_in: BuyIn = field(default_factory=BuyIn)
    local_zone: dt.tzinfo = dt.UTC

    def __post_init__(self) -> None:
        if type(self.tournament_id) is not int or self.tournament_id < 1:
            raise ValueError(f"a PokerStars tournament number is an int >= 1, got {self.tournament_id!r}")


@dataclass(frozen=True, slots=True)
class Finish:
    """A player who finished the tournament in this hand: their place and what they received
    (cents, or play chips; 0: nothing). Place 1 is the winner."""

    player: str
    place: int
    prize: int = 0

    def __post_init__(self) -> None:
        if type(self.place) is not int or self.place < 1 or type(self.prize) is not int or self.prize < 0:
            raise ValueError(
                f"a finish has a place >= 1 and a prize >= 0, got {self.place!r}, {self.prize!r}"
            )


@dataclass(frozen=True, slots=True)
class StarsHandContext:
    """The hand's place in the tournament. ``hand_number`` must be unique among the hands a
    tracker imports (trackers drop a hand number they have seen); ``level`` counts from 1;
    ``started_at`` is aware."""

    hand_number: int
    table_number: int
    level: int
    started_at: dt.datetime
    finishes: tuple[Finish, ...] = ()

    def __post_init__(self) -> None:
        for name in ("hand_number", "table_number", "level"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} is an int >= 1, got {value!r}")
        if self.started_at.tzinfo is None or self.started_at.utcoffset() is None:
            raise ValueError(f"started_at must carry a time zone, got {self.started_at!r}")


# -- descriptions ------------------------------------------------------------------------------


def stars_description(value: int) -> str:
    """A hand value (``engine.evaluator``) in PokerStars' words: ``a pair of Tens``, ``high card
    Ace``, ``a straight, Ten to Ace``, ``a flush, King high``, ``a Royal Flush``..."""
    kind = category(value)
    ranks = ranks_of_value(value)
    top = ranks[0]
    if kind in (HandCategory.STRAIGHT, HandCategory.STRAIGHT_FLUSH):
        if kind is HandCategory.STRAIGHT_FLUSH and top == _ACE:
            return "a Royal Flush"
        low = _ACE if top == _WHEEL_TOP else top - 4
        name = "a straight" if kind is HandCategory.STRAIGHT else "a straight flush"
        return f"{name}, {_RANK_WORDS[low]} to {_RANK_WORDS[top]}"
    if kind is HandCategory.FOUR_OF_A_KIND:
        return f"four of a kind, {_RANK_PLURALS[top]}"
    if kind is HandCategory.FULL_HOUSE:
        return f"a full house, {_RANK_PLURALS[top]} full of {_RANK_PLURALS[ranks[1]]}"
    if kind is HandCategory.FLUSH:
        return f"a flush, {_RANK_WORDS[top]} high"
    if kind is HandCategory.THREE_OF_A_KIND:
        return f"three of a kind, {_RANK_PLURALS[top]}"
    if kind is HandCategory.TWO_PAIR:
        return f"two pair, {_RANK_PLURALS[top]} and {_RANK_PLURALS[ranks[1]]}"
    if kind is HandCategory.PAIR:
        return f"a pair of {_RANK_PLURALS[top]}"
    return f"high card {_RANK_WORDS[top]}"


def _value(setup: HandSetup, hole: Sequence[Card], board: Sequence[Card]) -> int:
    if setup.game is Game.OMAHA:
        return evaluate_omaha(hole, board)
    return evaluate(tuple(hole) + tuple(board))


def _bracket(cards: Sequence[Card]) -> str:
    return f"[{cards_str(cards, ' ')}]"


# -- the hand ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _SeatStory:
    """What one seat did, for its summary line."""

    folded_on: Street | None = None
    voluntary: bool = False  # put chips in before the flop by choice (a call, bet or raise)
    shown: tuple[Card, ...] | None = None
    mucked: bool = False
    won: int = 0
    collected: bool = False  # named in a "collected" line (a lone big blind's walk collects 0)


def _pot_names(count: int) -> list[str]:
    if count == 1:
        return ["pot"]
    if count == 2:
        return ["main pot", "side pot"]
    return ["main pot"] + [f"side pot-{index}" for index in range(1, count)]


def format_pokerstars(
    setup: HandSetup,
    events: Sequence[Event],
    tournament: StarsTournament,
    context: StarsHandContext,
    *,
    hero: str | None = None,
) -> str:
    """The PokerStars text of a finished hand (see the module docstring), ending with a newline.

    ``hero``: the player whose own file this is (only their hole cards are written); ``None``
    writes every player's (the operator's record, from which ``own_view`` cuts each player's)."""
    names = {seat.seat: seat.player for seat in setup.seats}
    if hero is not None and hero not in names.values():
        raise ValueError(f"hero {hero!r} is not dealt into hand {setup.hand_id}")
    game = _GAME_NAMES[(setup.game, setup.limit)]
    if setup.limit is Limit.FIXED_LIMIT:
        stakes = f"{setup.big_blind}/{2 * setup.big_blind}"
    else:
        stakes = f"{setup.small_blind}/{setup.big_blind}"
    tid = tournament.tournament_id
    lines = [
        f"PokerStars Hand #{context.hand_number}: Tournament #{tid}, {tournament.buy_in.header()} {game}"
        f" - Level {roman(context.level)} ({stakes}) - {_stamp(context.started_at, tournament.local_zone)}",
        f"Table '{tid} {context.table_number}' {setup.table_size}-max Seat #{setup.button} is the button",
    ]
    for entry in setup.seats:
        away = "is sitting out" if entry.absent else ""
        lines.append(f"Seat {entry.seat}: {entry.player} ({entry.stack} in chips) {away}")

    stories = {seat.seat: _SeatStory() for seat in setup.seats}
    board: tuple[Card, ...] = ()
    hole: dict[int, tuple[Card, ...]] = {}
    blinds: list[BlindPosted] = []
    face_up: tuple[int, ...] = ()  # seats whose hands an all-in turned face up, in deal order
    showdown: list[int] = []  # the seats shown or mucked at a showdown without an all-in, in order
    pots: list[PotAwarded] = []
    level = 0  # the largest total anyone has put in this betting round
    in_hole_cards = False

    def hole_cards() -> None:
        nonlocal in_hole_cards
        if in_hole_cards:
            return
        in_hole_cards = True
        lines.append("*** HOLE CARDS ***")
        for seat, cards in hole.items():
            if hero is None or names[seat] == hero:
                lines.append(f"Dealt to {names[seat]} {_bracket(cards)}")

    for item in events:
        if isinstance(item, AntePosted):
            all_in = " and is all-in" if item.all_in else ""
            lines.append(f"{names[item.seat]}: posts the ante {item.amount}{all_in}")
        elif isinstance(item, BlindPosted):
            kind = "small blind" if item.blind is BlindKind.SMALL else "big blind"
            all_in = " and is all-in" if item.all_in else ""
            lines.append(f"{names[item.seat]}: posts {kind} {item.amount}{all_in}")
            blinds.append(item)
            level = max(level, item.amount)
        elif isinstance(item, HoleCardsDealt):
            hole[item.seat] = hole.get(item.seat, ()) + tuple(item.cards)
        elif isinstance(item, ActionTaken):
            hole_cards()
            lines.append(_action_line(names[item.seat], item, level))
            level = max(level, item.to_amount)
            if item.kind is ActionKind.FOLD:
                stories[item.seat].folded_on = item.street
            elif item.kind is not ActionKind.CHECK:
                stories[item.seat].voluntary = True
        elif isinstance(item, HandKilled):
            # PEN-1: announced like a dealer would; the killed cards are never shown
            hole_cards()
            lines.append(f"{names[item.seat]}: hand is killed ({item.reason})")
            stories[item.seat].folded_on = item.street
        elif isinstance(item, UncalledBetReturned):
            if hole:  # after the deal (an ante nobody could match is returned before the blinds)
                hole_cards()
            lines.append(f"Uncalled bet ({item.amount}) returned to {names[item.seat]}")
        elif isinstance(item, StreetDealt):
            hole_cards()
            level = 0
            before = item.board[: len(item.board) - len(item.cards)]
            dealt = f"{_bracket(before)} {_bracket(item.cards)}" if before else _bracket(item.cards)
            lines.append(f"*** {_STREET_TITLES[item.street]} *** {dealt}")
            board = item.board
        elif isinstance(item, HandsShown):
            face_up = tuple(shown.seat for shown in item.hands)
            for shown in item.hands:
                stories[shown.seat].shown = shown.cards
        elif isinstance(item, CardsShown):
            stories[item.seat].shown = item.cards
            showdown.append(item.seat)
        elif isinstance(item, CardsMucked):
            stories[item.seat].mucked = True
            showdown.append(item.seat)
        elif isinstance(item, PotAwarded):
            pots.append(item)
    hole_cards()

    described = {
        seat: stars_description(_value(setup, story.shown, board))
        for seat, story in stories.items()
        if story.shown is not None and len(board) == 5
    }
    pot_names = _pot_names(len(pots))

    def shows(seat: int) -> str:
        cards = stories[seat].shown
        if cards is None:
            return f"{names[seat]}: mucks hand "
        return f"{names[seat]}: shows {_bracket(cards)} ({described[seat]})"

    def collected(index: int) -> list[str]:
        pot = pots[index]
        out = []
        for seat, share in zip(pot.winners, pot.shares, strict=True):
            if share or len(pot.winners) == 1:
                out.append(f"{names[seat]} collected {share} from {pot_names[index]}")
                stories[seat].won += share
                stories[seat].collected = True
        return out

    if face_up or showdown:
        lines.append("*** SHOW DOWN ***")
        if face_up:
            shown_now: set[int] = set()
            for index in reversed(range(len(pots))):
                for seat in face_up:
                    if seat in pots[index].eligible and seat not in shown_now:
                        shown_now.add(seat)
                        lines.append(shows(seat))
                lines.extend(collected(index))
        else:
            lines.extend(shows(seat) for seat in showdown)
            for index in reversed(range(len(pots))):
                lines.extend(collected(index))
    else:
        for index in reversed(range(len(pots))):
            lines.extend(collected(index))
        for seat, story in stories.items():
            if story.collected:
                lines.append(f"{names[seat]}: doesn't show hand ")
    lines.extend(_finish_lines(context.finishes, tournament.buy_in))

    lines.append("*** SUMMARY ***")
    total = sum(pot.amount for pot in pots)
    if len(pots) > 1:
        parts = " ".join(
            f"{name[0].upper()}{name[1:]} {pot.amount}." for pot, name in zip(pots, pot_names, strict=True)
        )
        lines.append(f"Total pot {total} {parts} | Rake 0 ")
    else:
        lines.append(f"Total pot {total} | Rake 0 ")
    if board:
        lines.append(f"Board {_bracket(board)}")
    for entry in setup.seats:
        story = stories[entry.seat]
        lines.append(
            f"Seat {entry.seat}: {entry.player}{_position(setup, entry.seat)} "
            f"{_outcome(story, described.get(entry.seat), _posted_blind(blinds, entry.seat))}"
        )
    return "\n".join(lines) + "\n"


def _action_line(name: str, action: ActionTaken, level: int) -> str:
    all_in = " and is all-in" if action.all_in else ""
    kind = action.kind
    if kind is ActionKind.FOLD:
        return f"{name}: folds "
    if kind is ActionKind.CHECK:
        return f"{name}: checks "
    if kind is ActionKind.CALL:
        return f"{name}: calls {action.amount}{all_in}"
    if kind is ActionKind.BET:
        return f"{name}: bets {action.amount}{all_in}"
    return f"{name}: raises {action.to_amount - level} to {action.to_amount}{all_in}"


def _finish_lines(finishes: Iterable[Finish], buy_in: BuyIn) -> list[str]:
    lines = []
    winner = None
    for finish in sorted(finishes, key=lambda finish: finish.place):
        if finish.place == 1:
            winner = finish
            continue
        line = f"{finish.player} finished the tournament in {ordinal(finish.place)} place"
        if finish.prize:
            line += f" and received {buy_in.money(finish.prize)}."
        lines.append(line)
    if winner is not None:
        if winner.prize:
            prize = buy_in.money(winner.prize)
            lines.append(f"{winner.player} wins the tournament and receives {prize} - congratulations!")
        else:
            lines.append(f"{winner.player} wins the tournament - congratulations!")
    return lines


def _posted_blind(blinds: Sequence[BlindPosted], seat: int) -> bool:
    return any(blind.seat == seat for blind in blinds)


def _position(setup: HandSetup, seat: int) -> str:
    labels = []
    if seat == setup.button:
        labels.append(" (button)")
    if seat == setup.small_blind_seat:
        labels.append(" (small blind)")
    if seat == setup.big_blind_seat:
        labels.append(" (big blind)")
    return "".join(labels)


def _outcome(story: _SeatStory, description: str | None, posted_blind: bool) -> str:
    if story.folded_on is not None:
        where = _FOLDED_WHERE[story.folded_on]
        # a blind bet by posting; antes do not count (real files: only the blinds lack it)
        if story.folded_on is Street.PREFLOP and not posted_blind and not story.voluntary:
            return f"folded {where} (didn't bet)"
        return f"folded {where}"
    if story.shown is not None:
        with_ = f" with {description}" if description else ""
        if story.collected:
            return f"showed {_bracket(story.shown)} and won ({story.won}){with_}"
        return f"showed {_bracket(story.shown)} and lost{with_}"
    if story.collected:
        return f"collected ({story.won})"
    return "mucked"


# -- files -------------------------------------------------------------------------------------


def join_hands(texts: Iterable[str]) -> str:
    """Hands as one PokerStars file: each hand's text, then three blank lines."""
    return "".join(text.rstrip("\n") + "\n" + HAND_SEPARATOR for text in texts)


def own_view(text: str, player: str) -> str:
    """A player's own copy of an operator's text (``format_pokerstars`` with ``hero=None``): the
    same lines without the other players' ``Dealt to`` lines, which hold their hole cards. It
    equals rendering with ``hero=player`` (tests/test_pokerstars_format.py checks it)."""
    mine = f"Dealt to {player} ["
    return "".join(
        line
        for line in text.splitlines(keepends=True)
        if not line.startswith("Dealt to ") or line.startswith(mine)
    )
