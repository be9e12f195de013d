"""PokerStars-style hand history text: the format hand-tracking software imports.

A rendering of a finished hand's setup and event log, in the layout of a PokerStars tournament
hand: the header line, the table line, the seats, the posts, ``*** HOLE CARDS ***``, the actions,
one section per street, ``*** SHOW DOWN ***``, and ``*** SUMMARY ***`` with the pots, the board and
a line per seat. The hand's start time is a parameter (the engine has no clock).

Choices where our hands and PokerStars differ: the tournament and hand numbers are our ids as
given; a dead button names the empty seat (as PokerStars does); ``Dealt to`` is written for
``hero`` only when one is given, else for every player (an operator's full history); absent
players are marked ``is sitting out`` in the seat list, as PokerStars does.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.betting import Game, HandSetup, Limit, Street
from engine.cards import Card, cards_str
from engine.evaluator import describe, evaluate, evaluate_omaha
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

__all__ = ["format_pokerstars", "roman"]

_GAME_NAMES = {
    (Game.HOLDEM, Limit.NO_LIMIT): "Hold'em No Limit",
    (Game.HOLDEM, Limit.POT_LIMIT): "Hold'em Pot Limit",
    (Game.HOLDEM, Limit.FIXED_LIMIT): "Hold'em Limit",
    (Game.OMAHA, Limit.NO_LIMIT): "Omaha No Limit",
    (Game.OMAHA, Limit.POT_LIMIT): "Omaha Pot Limit",
    (Game.OMAHA, Limit.FIXED_LIMIT): "Omaha Limit",
}
_STREET_TITLES = {Street.FLOP: "FLOP", Street.TURN: "TURN", Street.RIVER: "RIVER"}
_STREET_WORDS = {Street.PREFLOP: "before Flop", Street.FLOP: "on the Flop", Street.TURN: "on the Turn"}
_ROMAN = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"))
_ROMAN_SMALL = ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))


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


@dataclass(slots=True)
class _SeatStory:
    """What one seat did, for its summary line."""

    folded_on: Street | None = None
    voluntary: bool = False  # put chips in by choice (a call, bet or raise)
    shown: tuple[Card, ...] | None = None
    description: str | None = None
    mucked: bool = False
    won: int = 0
    pots_won: list[str] = field(default_factory=list)


def _bracket(cards: Sequence[Card]) -> str:
    return f"[{cards_str(cards, ' ')}]"


def _value(setup: HandSetup, hole: Sequence[Card], board: Sequence[Card]) -> int:
    if setup.game is Game.OMAHA:
        return evaluate_omaha(hole, board)
    return evaluate(tuple(hole) + tuple(board))


def format_pokerstars(
    setup: HandSetup,
    events: Sequence[Event],
    started_at: dt.datetime,
    *,
    tournament_id: str = "1",
    table_name: str | None = None,
    level: int = 1,
    hero: str | None = None,
    time_zone: str = "ET",
) -> str:
    """The PokerStars-style text of a finished hand (see the module docstring)."""
    names = {seat.seat: seat.player for seat in setup.seats}
    game = _GAME_NAMES[(setup.game, setup.limit)]
    stamp = started_at.strftime("%Y/%m/%d %H:%M:%S")
    lines = [
        f"PokerStars Hand #{setup.hand_id}: Tournament #{tournament_id}, {game} - "
        f"Level {roman(level)} ({setup.small_blind}/{setup.big_blind}) - {stamp} {time_zone}",
        f"Table '{table_name or f'{tournament_id} 1'}' {setup.table_size}-max"
        f" Seat #{setup.button} is the button",
    ]
    for entry in setup.seats:
        away = " is sitting out" if entry.absent else ""
        lines.append(f"Seat {entry.seat}: {entry.player} ({entry.stack} in chips){away}")

    stories = {seat.seat: _SeatStory() for seat in setup.seats}
    street = Street.PREFLOP
    high_bet = 0
    board: tuple[Card, ...] = ()
    hole: dict[int, tuple[Card, ...]] = {}
    pots: list[PotAwarded] = []
    showdown_written = False
    hole_header_written = False

    def hole_header() -> None:
        nonlocal hole_header_written
        if hole_header_written:
            return
        hole_header_written = True
        lines.append("*** HOLE CARDS ***")
        for dealt in sorted(hole):
            if hero is None or names[dealt] == hero:
                lines.append(f"Dealt to {names[dealt]} {_bracket(hole[dealt])}")

    def showdown_header() -> None:
        nonlocal showdown_written
        if not showdown_written:
            showdown_written = True
            lines.append("*** SHOW DOWN ***")

    for item in events:
        if isinstance(item, AntePosted):
            all_in = " and is all-in" if item.all_in else ""
            lines.append(f"{names[item.seat]}: posts the ante {item.amount}{all_in}")
        elif isinstance(item, BlindPosted):
            kind = "small blind" if item.blind is BlindKind.SMALL else "big blind"
            all_in = " and is all-in" if item.all_in else ""
            lines.append(f"{names[item.seat]}: posts {kind} {item.amount}{all_in}")
            high_bet = max(high_bet, item.amount)
        elif isinstance(item, HoleCardsDealt):
            hole[item.seat] = hole.get(item.seat, ()) + tuple(item.cards)
        elif isinstance(item, ActionTaken):
            hole_header()
            name = names[item.seat]
            all_in = " and is all-in" if item.all_in else ""
            if item.kind is ActionKind.FOLD:
                lines.append(f"{name}: folds")
                stories[item.seat].folded_on = item.street
            elif item.kind is ActionKind.CHECK:
                lines.append(f"{name}: checks")
            elif item.kind is ActionKind.CALL:
                lines.append(f"{name}: calls {item.amount}{all_in}")
                stories[item.seat].voluntary = True
            elif item.kind is ActionKind.BET:
                lines.append(f"{name}: bets {item.amount}{all_in}")
                stories[item.seat].voluntary = True
                high_bet = item.to_amount
            else:
                lines.append(f"{name}: raises {item.to_amount - high_bet} to {item.to_amount}{all_in}")
                stories[item.seat].voluntary = True
                high_bet = item.to_amount
        elif isinstance(item, HandKilled):
            # PEN-1: announced like a dealer would; the killed cards are never shown
            hole_header()
            lines.append(f"{names[item.seat]}: hand is killed ({item.reason})")
            stories[item.seat].folded_on = item.street
        elif isinstance(item, UncalledBetReturned):
            lines.append(f"Uncalled bet ({item.amount}) returned to {names[item.seat]}")
        elif isinstance(item, StreetDealt):
            hole_header()
            street = item.street
            high_bet = 0
            before = item.board[: len(item.board) - len(item.cards)]
            if before:
                lines.append(f"*** {_STREET_TITLES[street]} *** {_bracket(before)} {_bracket(item.cards)}")
            else:
                lines.append(f"*** {_STREET_TITLES[street]} *** {_bracket(item.cards)}")
            board = item.board
        elif isinstance(item, HandsShown):
            hole_header()
            for shown in item.hands:
                lines.append(f"{names[shown.seat]}: shows {_bracket(shown.cards)}")
                stories[shown.seat].shown = shown.cards
        elif isinstance(item, CardsShown):
            showdown_header()
            lines.append(f"{names[item.seat]}: shows {_bracket(item.cards)} ({item.description})")
            stories[item.seat].shown = item.cards
            stories[item.seat].description = item.description
        elif isinstance(item, CardsMucked):
            showdown_header()
            lines.append(f"{names[item.seat]}: mucks hand")
            stories[item.seat].mucked = True
        elif isinstance(item, PotAwarded):
            pots.append(item)
    hole_header()

    # hands tabled by an all-in are described once the board is complete
    if any(story.shown is not None and story.description is None for story in stories.values()):
        showdown_header()
        for seat, story in stories.items():
            if story.shown is not None and story.description is None and len(board) == 5:
                story.description = describe(_value(setup, story.shown, board))
                lines.append(f"{names[seat]}: shows {_bracket(story.shown)} ({story.description})")

    pot_names = _pot_names(len(pots))
    for pot, pot_name in zip(pots, pot_names, strict=True):
        for seat, share in zip(pot.winners, pot.shares, strict=True):
            if share:
                lines.append(f"{names[seat]} collected {share} from {pot_name}")
                stories[seat].won += share
    contested = any(story.shown is not None for story in stories.values())
    if not contested:
        for seat, story in stories.items():
            if story.won:
                lines.append(f"{names[seat]}: doesn't show hand")

    lines.append("*** SUMMARY ***")
    total = sum(pot.amount for pot in pots)
    if len(pots) > 1:
        parts = [f"Main pot {pots[0].amount}."]
        parts += [f"Side pot-{index} {pot.amount}." for index, pot in enumerate(pots[1:], start=1)]
        lines.append(f"Total pot {total} {' '.join(parts)} | Rake 0")
    else:
        lines.append(f"Total pot {total} | Rake 0")
    if board:
        lines.append(f"Board {_bracket(board)}")
    for entry in setup.seats:
        position = _position(setup, entry.seat)
        lines.append(f"Seat {entry.seat}: {entry.player}{position} {_outcome(stories[entry.seat])}")
    return "\n".join(lines) + "\n"


def _pot_names(count: int) -> list[str]:
    if count <= 1:
        return ["pot"] * count
    return ["main pot"] + [f"side pot-{index}" for index in range(1, count)]


def _position(setup: HandSetup, seat: int) -> str:
    labels = []
    if seat == setup.button:
        labels.append("button")
    if seat == setup.small_blind_seat and seat != setup.button:
        labels.append("small blind")
    if seat == setup.big_blind_seat:
        labels.append("big blind")
    if not labels:
        return ""
    return " " + " ".join(f"({label})" for label in labels)


def _outcome(story: _SeatStory) -> str:
    if story.folded_on is not None:
        where = _STREET_WORDS.get(story.folded_on, "on the River")
        if story.folded_on is Street.PREFLOP and not story.voluntary:
            return f"folded {where} (didn't bet)"
        return f"folded {where}"
    if story.shown is not None:
        described = f" with {story.description}" if story.description else ""
        if story.won:
            return f"showed {_bracket(story.shown)} and won ({story.won}){described}"
        return f"showed {_bracket(story.shown)} and lost{described}"
    if story.mucked:
        return "mucked"
    if story.won:
        return f"collected ({story.won})"
    return "didn't show"
