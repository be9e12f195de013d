"""Hand histories in PHH, the open Poker Hand History format (TOML) that pokerkit reads.

Export renders a finished hand's setup and event log; import reads ``.phh`` (one hand) and
``.phhs`` (several hands as ``[1]``, ``[2]``... tables) into ``PhhHand`` values that
``engine.history.replay`` plays through our engine.

How our hands map onto the format (the PHH spec, "Position" and "Required Fields"):

- Players are listed in dealing order: the first dealt-in seat clockwise after the button first,
  the button last. With a dead button the last player is the one before the empty button seat;
  the button seat is then written as the user-defined field ``_button`` (user fields start with
  ``_``, which pokerkit keeps without a warning).
- ``blinds_or_straddles`` and ``antes`` give each player's forced bet in that order. A dead small
  blind is a 0: when the small-blind position is an empty seat the big blind is the first player
  (``[10, 0, 0]``), when it is a player who does not post, that player's entry is 0 (``[0, 10, 0]``).
  Heads-up the spec reverses both arrays (p1 is the big blind, p2 the button): ``[5, 10]`` means
  p2 posts 5 and p1 posts 10.
- Antes are what each player actually posted (a short stack's ante is its whole stack, and a
  short big blind pays the blind before the big-blind ante, LVL-1), so pokerkit, which takes antes
  before blinds, posts the same live and dead money. The big-blind ante is the big blind's entry.
- Variants: ``NT`` no-limit hold'em, ``FT`` fixed-limit hold'em (``small_bet`` = big blind,
  ``big_bet`` = twice it), ``PO`` pot-limit Omaha. The spec has no pot-limit hold'em code; we
  write ``NT`` with ``_limit = "pl"``: every pot-limit action is a legal no-limit action with the
  same minimum raise, so pokerkit replays it to the same stacks, and our import restores the
  pot limit from ``_limit``. Other combinations (no-limit or fixed-limit Omaha) have no code and
  are refused.
- Actions: ``d dh pN AsKd`` (each player's cards at once, p1 first), ``pN f``, ``pN cc``,
  ``pN cbr 300`` (raise *to*), ``d db AhKh2c``, ``pN sm AsKd`` (shown), ``pN sm`` (mucked). A
  timed-out action carries the commentary ``# timeout``. When an all-in ends the betting, the
  hands are shown before the remaining board cards, which is where pokerkit expects them.

Import reads what pokerkit reads. Amounts may be decimal (cash games in dollars and cents, a
split pot written in halves): they are read exactly (TOML floats as ``Decimal``, never ``float``)
and scaled to whole units, ``PhhHand.scale`` being 10 to the most decimal places any amount of the
hand uses (``200.30`` and ``cbr 3.5`` give scale 100, and 20030 and 350 units); more than
``MAX_DECIMAL_PLACES`` is refused, never rounded. A starting stack written ``inf`` (pokerkit's
unlimited stack: a history that does not know it) is ``None``. How the replay reads the rest
(heads-up antes, missing actions, a fold where a check was possible) is in engine.history.replay.

Where pokerkit, reading our files, ends on other stacks than ``finishing_stacks`` (by rule, not by
a fault of the file): a short big blind followed by a call before the flop (we have the others
call the full big blind, BET-2 in engine.hand; PHH's ``cc`` makes pokerkit call what was posted,
and no PHH field says otherwise). Our own replay (``engine.history.replay``) agrees with every file
we write.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from pathlib import Path
from typing import Any

from engine.betting import AnteKind, Game, HandSetup, Limit
from engine.cards import Card, cards_str, parse_cards
from engine.events import (
    ActionKind,
    ActionTaken,
    AntePosted,
    CardsMucked,
    CardsShown,
    Event,
    HandEnded,
    HandsShown,
    HoleCardsDealt,
    StreetDealt,
)

__all__ = [
    "PhhAction",
    "PhhActionKind",
    "PhhError",
    "PhhHand",
    "PhhUnsupportedError",
    "dumps_phh",
    "dumps_phhs",
    "export_phh",
    "format_amount",
    "load_path",
    "loads_phh",
    "loads_phhs",
    "parse_action",
    "phh_player_order",
]


class PhhError(ValueError):
    """A PHH text that is not a valid hand history; the message names the source and the field."""


class PhhUnsupportedError(PhhError):
    """A valid hand history that our engine cannot represent (variant, straddles, unknown cards)."""


class PhhActionKind(StrEnum):
    DEAL_HOLE = "dh"
    DEAL_BOARD = "db"
    FOLD = "f"
    CHECK_CALL = "cc"
    BET_RAISE = "cbr"
    SHOW_MUCK = "sm"


@dataclass(frozen=True, slots=True)
class PhhAction:
    """One parsed action. ``player`` is the 1-based PHH index (``None`` for the dealer); for a deal
    ``player`` is the receiving player (hole cards) or ``None`` (board)."""

    text: str
    kind: PhhActionKind
    player: int | None = None
    cards: tuple[Card, ...] | None = None  # None: cards not given (a muck) or unknown
    amount: int | None = None
    commentary: str | None = None


@dataclass(frozen=True, slots=True)
class PhhHand:
    """One hand history, fields named as in the PHH spec. Arrays follow the PHH player order.

    Every amount (antes, blinds, stacks, bet sizes, and the ``cbr`` amounts of ``actions`` once
    parsed with ``parse_action(text, scale)``) is a whole number of units of ``1 / scale`` of
    the file's own unit: a cash game written in dollars and cents has ``scale == 100``. A starting
    stack is ``None`` where the file writes ``inf`` (pokerkit's unlimited stack: the history does
    not know it)."""

    variant: str
    antes: tuple[int, ...]
    blinds_or_straddles: tuple[int, ...]
    starting_stacks: tuple[int | None, ...]
    actions: tuple[str, ...]
    min_bet: int | None = None
    small_bet: int | None = None
    big_bet: int | None = None
    finishing_stacks: tuple[int, ...] | None = None
    ante_trimming_status: bool | None = None
    players: tuple[str, ...] | None = None
    seats: tuple[int, ...] | None = None
    seat_count: int | None = None
    hand: str | int | None = None
    table: str | int | None = None
    level: int | None = None
    event: str | None = None
    time: dt.time | None = None
    day: int | None = None
    month: int | None = None
    year: int | None = None
    time_zone: str | None = None
    user_fields: Mapping[str, Any] = field(default_factory=dict)  # the ``_name`` fields
    scale: int = 1  # amounts are in units of 1/scale of the file's (a power of ten)
    source: str = "<string>"  # where it was read from, for error messages

    @property
    def player_count(self) -> int:
        return len(self.starting_stacks)

    def label(self) -> str:
        """A short name for messages: the source and the hand number when there is one."""
        return self.source if self.hand is None else f"{self.source} (hand {self.hand})"


def format_amount(units: int | None, scale: int = 1) -> str:
    """``units`` written in the file's own unit, exactly: ``format_amount(20030, 100) == "200.30"``;
    ``None`` (an unknown stack) is ``inf``, as PHH writes it."""
    if units is None:
        return "inf"
    if scale == 1:
        return str(units)
    places = len(str(scale)) - 1  # scale is a power of ten
    return f"{Decimal(units).scaleb(-places):f}"


# -- export ------------------------------------------------------------------------------------


def phh_player_order(setup: HandSetup) -> tuple[int, ...]:
    """The dealt-in seats in PHH order: first seat clockwise after the button first, button last."""
    seats = sorted(seat.seat for seat in setup.seats)
    after = [seat for seat in seats if seat > setup.button]
    return tuple(after + [seat for seat in seats if seat <= setup.button])


def _variant(setup: HandSetup) -> tuple[str, dict[str, Any]]:
    if setup.game is Game.HOLDEM and setup.limit is Limit.NO_LIMIT:
        return "NT", {"min_bet": setup.big_blind}
    if setup.game is Game.HOLDEM and setup.limit is Limit.POT_LIMIT:
        return "NT", {"min_bet": setup.big_blind, "_limit": "pl"}
    if setup.game is Game.HOLDEM and setup.limit is Limit.FIXED_LIMIT:
        return "FT", {"small_bet": setup.big_blind, "big_bet": 2 * setup.big_blind}
    if setup.game is Game.OMAHA and setup.limit is Limit.POT_LIMIT:
        return "PO", {"min_bet": setup.big_blind}
    raise PhhUnsupportedError(f"PHH has no variant code for {setup.limit.name} {setup.game.value}")


def _heads_up_reversed(values: list[int]) -> list[int]:
    # the spec assigns forced bets in reverse heads-up (p1 is the big blind)
    return values[::-1] if len(values) == 2 else values


def export_phh(
    setup: HandSetup,
    events: Sequence[Event],
    *,
    table: str | int | None = None,
    level: int | None = None,
    event: str | None = None,
    started_at: dt.datetime | None = None,
    time_zone: str | None = None,
) -> PhhHand:
    """The PHH record of a finished hand, from its setup and its complete event log.

    ``started_at`` (passed in: the engine has no clock) fills ``time``, ``day``, ``month`` and
    ``year``. Raises ``PhhUnsupportedError`` for a game PHH cannot name and ``PhhError`` if the
    log has no ``HandEnded``.
    """
    variant, bet_fields = _variant(setup)
    order = phh_player_order(setup)
    index_of = {seat: index + 1 for index, seat in enumerate(order)}
    by_seat = {seat.seat: seat for seat in setup.seats}

    blinds = [0] * len(order)
    if setup.small_blind_seat is not None:
        blinds[index_of[setup.small_blind_seat] - 1] = setup.small_blind
    blinds[index_of[setup.big_blind_seat] - 1] = setup.big_blind
    antes = [0] * len(order)

    actions: list[str] = []
    shows_at = 0  # where an all-in showdown goes: after the last betting action
    hole: dict[int, tuple[Card, ...]] = {}
    hole_written = False
    finishing: dict[int, int] | None = None
    for item in events:
        if isinstance(item, AntePosted):
            antes[index_of[item.seat] - 1] += item.amount
        elif isinstance(item, HoleCardsDealt):
            hole[item.seat] = hole.get(item.seat, ()) + tuple(item.cards)
        elif isinstance(item, ActionTaken):
            if not hole_written:
                actions.extend(_hole_lines(order, hole))
                hole_written = True
            actions.append(_action_line(index_of[item.seat], item))
            shows_at = len(actions)
        elif isinstance(item, StreetDealt):
            if not hole_written:
                actions.extend(_hole_lines(order, hole))
                hole_written = True
                shows_at = len(actions)
            actions.append(f"d db {cards_str(item.cards)}")
        elif isinstance(item, HandsShown):
            if not hole_written:
                actions.extend(_hole_lines(order, hole))
                hole_written = True
                shows_at = len(actions)
            lines = [f"p{index_of[shown.seat]} sm {cards_str(shown.cards)}" for shown in item.hands]
            actions[shows_at:shows_at] = lines
            shows_at += len(lines)
        elif isinstance(item, CardsShown):
            actions.append(f"p{index_of[item.seat]} sm {cards_str(item.cards)}")
        elif isinstance(item, CardsMucked):
            actions.append(f"p{index_of[item.seat]} sm")
        elif isinstance(item, HandEnded):
            finishing = item.stacks()
    if not hole_written:
        actions.extend(_hole_lines(order, hole))
    if finishing is None:
        raise PhhError(f"hand {setup.hand_id}: the event log has no HandEnded; export a finished hand")

    user_fields: dict[str, Any] = {key: value for key, value in bet_fields.items() if key.startswith("_")}
    # Our per-player antes form side pots like any contribution (engine.hand); pokerkit does the
    # same only with ante trimming on. A big-blind ante is dead money in the main pot: off.
    if setup.button not in by_seat:
        user_fields["_button"] = setup.button
    return PhhHand(
        variant=variant,
        antes=tuple(_heads_up_reversed(antes)),
        blinds_or_straddles=tuple(_heads_up_reversed(blinds)),
        starting_stacks=tuple(by_seat[seat].stack for seat in order),
        actions=tuple(actions),
        min_bet=bet_fields.get("min_bet"),
        small_bet=bet_fields.get("small_bet"),
        big_bet=bet_fields.get("big_bet"),
        finishing_stacks=tuple(finishing[seat] for seat in order),
        ante_trimming_status=True if setup.ante_kind is AnteKind.EACH else None,
        players=tuple(by_seat[seat].player for seat in order),
        seats=order,
        seat_count=setup.table_size,
        hand=setup.hand_id,
        table=table,
        level=level,
        event=event,
        time=None if started_at is None else started_at.time().replace(microsecond=0, tzinfo=None),
        day=None if started_at is None else started_at.day,
        month=None if started_at is None else started_at.month,
        year=None if started_at is None else started_at.year,
        time_zone=time_zone,
        user_fields=user_fields,
    )


def _hole_lines(order: Sequence[int], hole: Mapping[int, tuple[Card, ...]]) -> list[str]:
    return [f"d dh p{index + 1} {cards_str(hole[seat])}" for index, seat in enumerate(order) if seat in hole]


def _action_line(player: int, action: ActionTaken) -> str:
    if action.kind is ActionKind.FOLD:
        line = f"p{player} f"
    elif action.kind in (ActionKind.CHECK, ActionKind.CALL):
        line = f"p{player} cc"
    else:
        line = f"p{player} cbr {action.to_amount}"
    return line + " # timeout" if action.timed_out else line


_FIELD_ORDER = (
    "variant",
    "antes",
    "blinds_or_straddles",
    "min_bet",
    "small_bet",
    "big_bet",
    "starting_stacks",
    "actions",
    "finishing_stacks",
    "ante_trimming_status",
    "players",
    "seats",
    "seat_count",
    "hand",
    "table",
    "level",
    "event",
    "time",
    "day",
    "month",
    "year",
    "time_zone",
)


# TOML's basic-string escapes: the quote, the backslash, and every control character
_TOML_ESCAPES = {code: f"\\u{code:04x}" for code in (*range(0x20), 0x7F)} | {
    ord('"'): '\\"',
    ord("\\"): "\\\\",
    ord("\n"): "\\n",
    ord("\t"): "\\t",
}


def _toml_string(text: str) -> str:
    return f'"{text.translate(_TOML_ESCAPES)}"'


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, Decimal) and value.is_finite():
        return f"{value:f}" if "." in f"{value:f}" else f"{value:f}.0"
    if isinstance(value, dt.time):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise PhhError(f"cannot write {value!r} ({type(value).__name__}) as a PHH value")


def dumps_phh(hand: PhhHand) -> str:
    """The TOML text of one hand (a ``.phh`` file)."""
    lines = []
    for name in _FIELD_ORDER:
        value = getattr(hand, name)
        if value is None:
            continue
        if name in _AMOUNT_ARRAYS:
            lines.append(f"{name} = [{', '.join(format_amount(item, hand.scale) for item in value)}]")
        elif name in _AMOUNT_VALUES:
            lines.append(f"{name} = {format_amount(value, hand.scale)}")
        elif name == "actions":
            lines.append("actions = [")
            lines.extend(f"  {_toml_string(action)}," for action in value)
            lines.append("]")
        else:
            lines.append(f"{name} = {_toml_value(value)}")
    for name, value in hand.user_fields.items():
        lines.append(f"{name} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def dumps_phhs(hands: Sequence[PhhHand]) -> str:
    """Several hands as one ``.phhs`` text: tables ``[1]``, ``[2]``..."""
    return "\n".join(f"[{number}]\n{dumps_phh(hand)}" for number, hand in enumerate(hands, start=1))


# -- import ------------------------------------------------------------------------------------


def parse_action(text: str, scale: int = 1) -> PhhAction:
    """Parse one PHH action string (commentary after ``#`` is kept apart). A bet amount is read
    exactly and multiplied by ``scale`` (the hand's ``PhhHand.scale``); it must then be a whole
    number of units. Raises ``PhhError``."""
    body, _, commentary = text.partition("#")
    words = body.split()
    note = commentary.strip() or None
    match words:
        case ["d", "dh", player, cards]:
            return PhhAction(
                text, PhhActionKind.DEAL_HOLE, _player(player, text), _cards(cards, text), None, note
            )
        case ["d", "db", cards]:
            return PhhAction(text, PhhActionKind.DEAL_BOARD, None, _cards(cards, text), None, note)
        case [player, "f"]:
            return PhhAction(text, PhhActionKind.FOLD, _player(player, text), commentary=note)
        case [player, "cc"]:
            return PhhAction(text, PhhActionKind.CHECK_CALL, _player(player, text), commentary=note)
        case [player, "cbr", amount]:
            return PhhAction(
                text,
                PhhActionKind.BET_RAISE,
                _player(player, text),
                amount=_action_amount(amount, text, scale),
                commentary=note,
            )
        case [player, "sm"] | [player, "sm", "-"]:
            return PhhAction(text, PhhActionKind.SHOW_MUCK, _player(player, text), commentary=note)
        case [player, "sm", cards]:
            return PhhAction(
                text, PhhActionKind.SHOW_MUCK, _player(player, text), _cards(cards, text), None, note
            )
    raise PhhError(f"unknown or unsupported PHH action {text!r}")


def _player(word: str, text: str) -> int:
    if len(word) < 2 or word[0] != "p" or not word[1:].isdigit() or int(word[1:]) < 1:
        raise PhhError(f"expected a player such as 'p1' in {text!r}, got {word!r}")
    return int(word[1:])


def _cards(word: str, text: str) -> tuple[Card, ...] | None:
    if "?" in word:
        return None  # unknown cards: importable, not replayable
    try:
        return tuple(parse_cards(word))
    except ValueError as exc:
        raise PhhError(f"bad cards in {text!r}: {exc}") from exc


def _decimal_word(word: str, text: str) -> Decimal:
    try:
        value = Decimal(word.replace(",", ""))  # pokerkit reads "1,000" as 1000 too
    except InvalidOperation:
        raise PhhError(f"expected a chip amount in {text!r}, got {word!r}") from None
    if not value.is_finite():
        raise PhhError(f"expected a finite chip amount in {text!r}, got {word!r}")
    return value


def _action_amount(word: str, text: str, scale: int) -> int:
    value = _decimal_word(word, text) * scale
    if value != value.to_integral_value():
        raise PhhError(
            f"the amount {word} in {text!r} is finer than the hand's unit 1/{scale}: amounts are"
            f" whole numbers of units (at most {MAX_DECIMAL_PLACES} decimal places)"
        )
    if value <= 0:
        raise PhhError(f"a bet amount must be positive in {text!r}")
    return int(value)


# Decimal amounts (cash games in dollars and cents, pots split into halves) are read exactly and
# scaled to whole units: scale = 10 ** places, places the most any amount of the hand uses. More
# places than this is refused rather than rounded (no float and no rounding reaches a stack).
MAX_DECIMAL_PLACES = 4

_AMOUNT_ARRAYS = ("antes", "blinds_or_straddles", "starting_stacks", "finishing_stacks")
_AMOUNT_VALUES = ("min_bet", "small_bet", "big_bet")


def _amount(value: object, where: str, *, unknown_allowed: bool = False) -> Decimal | None:
    """One amount of the file, exactly (``None``: an unknown stack written ``inf``)."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise PhhError(f"{where} must be a chip amount, got {value!r}")
    if isinstance(value, int):
        return Decimal(value)
    if value.is_nan():
        raise PhhError(f"{where} must be a chip amount, got {value}")
    if value.is_infinite():
        if unknown_allowed and value > 0:
            return None  # pokerkit's unlimited stack: a history that does not know it
        raise PhhError(f"{where} must be a finite chip amount, got {value}")
    return value


def _places(value: Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent
    assert isinstance(exponent, int)  # finite
    return max(0, -exponent)


def _scaled(value: Decimal, scale: int, where: str) -> int:
    units = value * scale
    assert units == units.to_integral_value(), where  # the scale was chosen to make it whole
    return int(units)


@dataclass(frozen=True, slots=True)
class _Amounts:
    """A hand's amount fields read exactly, and the scale that makes every amount whole."""

    arrays: dict[str, tuple[Decimal | None, ...] | None]
    values: dict[str, Decimal | None]
    scale: int


def _read_amounts(raw: Mapping[str, Any], source: str) -> _Amounts:
    arrays: dict[str, tuple[Decimal | None, ...] | None] = {}
    for name in _AMOUNT_ARRAYS:
        value = raw.get(name)
        if value is None:
            if name in ("antes", "starting_stacks"):
                raise PhhError(f"{source}: required field {name!r} is missing")
            arrays[name] = None
            continue
        if not isinstance(value, list):
            raise PhhError(f"{source}: {name} must be an array, got {value!r}")
        unknown_allowed = name == "starting_stacks"
        arrays[name] = tuple(
            _amount(item, f"{source}: {name}[{index}]", unknown_allowed=unknown_allowed)
            for index, item in enumerate(value)
        )
    values = {
        name: None if raw.get(name) is None else _amount(raw[name], f"{source}: {name}")
        for name in _AMOUNT_VALUES
    }
    found: list[tuple[Decimal, str]] = []
    for name, array in arrays.items():
        found.extend((item, f"{name}[{index}]") for index, item in enumerate(array or ()) if item is not None)
    found.extend((value, name) for name, value in values.items() if value is not None)
    actions = raw.get("actions")
    for text in actions if isinstance(actions, list) else ():
        words = str(text).partition("#")[0].split()
        if len(words) == 3 and words[1] == "cbr":
            found.append((_decimal_word(words[2], str(text)), repr(text)))
    places = 0
    for value, where in found:
        if _places(value) > MAX_DECIMAL_PLACES:
            raise PhhError(
                f"{source}: the amount {value} in {where} has more than {MAX_DECIMAL_PLACES} decimal"
                " places; amounts must be whole multiples of a unit no finer than"
                f" {Decimal(1).scaleb(-MAX_DECIMAL_PLACES)}"
            )
        places = max(places, _places(value))
    return _Amounts(arrays, values, 10**places)


def _units_array(amounts: _Amounts, name: str) -> tuple[int, ...] | None:
    array = amounts.arrays[name]
    if array is None:
        return None
    units = []
    for item in array:
        assert item is not None, name  # only starting_stacks may be unknown (_read_amounts)
        units.append(_scaled(item, amounts.scale, name))
    return tuple(units)


def _int_value(raw: Mapping[str, Any], name: str, source: str) -> int | None:
    value = raw.get(name)
    if value is None:
        return None
    if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        value = int(value)
    if type(value) is not int:
        raise PhhError(f"{source}: {name} must be an integer, got {value!r}")
    return value


def _from_table(raw: Mapping[str, Any], source: str) -> PhhHand:
    variant = raw.get("variant")
    if not isinstance(variant, str):
        raise PhhError(f"{source}: required field 'variant' is missing or not a string")
    amounts = _read_amounts(raw, source)
    scale = amounts.scale
    antes = _units_array(amounts, "antes")
    blinds = _units_array(amounts, "blinds_or_straddles") or ()
    finishing = _units_array(amounts, "finishing_stacks")
    raw_stacks = amounts.arrays["starting_stacks"]
    assert antes is not None and raw_stacks is not None
    stacks = tuple(None if item is None else _scaled(item, scale, "starting_stacks") for item in raw_stacks)
    actions = raw.get("actions")
    if not isinstance(actions, list) or not all(isinstance(action, str) for action in actions):
        raise PhhError(f"{source}: 'actions' must be an array of strings")
    count = len(stacks)
    for name, values in (("antes", antes), ("blinds_or_straddles", blinds)):
        if values and len(values) != count:
            raise PhhError(f"{source}: {name} has {len(values)} entries for {count} players")
    if finishing is not None and len(finishing) != count:
        raise PhhError(f"{source}: finishing_stacks has {len(finishing)} entries for {count} players")
    players = raw.get("players")
    if players is not None and (not isinstance(players, list) or len(players) != count):
        raise PhhError(f"{source}: players must be an array of {count} names")
    seats = raw.get("seats")
    if seats is not None:
        if not isinstance(seats, list) or any(type(seat) is not int for seat in seats):
            raise PhhError(f"{source}: seats must be an array of seat numbers, got {seats!r}")
        if len(seats) != count:
            raise PhhError(f"{source}: seats has {len(seats)} entries for {count} players")
    time = raw.get("time")
    hand_name = raw.get("hand")
    table_name = raw.get("table")
    return PhhHand(
        variant=variant,
        antes=antes,
        blinds_or_straddles=blinds,
        starting_stacks=stacks,
        actions=tuple(actions),
        min_bet=_units_value(amounts, "min_bet"),
        small_bet=_units_value(amounts, "small_bet"),
        big_bet=_units_value(amounts, "big_bet"),
        finishing_stacks=finishing,
        ante_trimming_status=raw.get("ante_trimming_status")
        if isinstance(raw.get("ante_trimming_status"), bool)
        else None,
        players=None if players is None else tuple(str(player) for player in players),
        seats=None if seats is None else tuple(seats),
        seat_count=_int_value(raw, "seat_count", source),
        hand=hand_name if isinstance(hand_name, str | int) else None,
        table=table_name if isinstance(table_name, str | int) else None,
        level=_int_value(raw, "level", source),
        event=raw.get("event") if isinstance(raw.get("event"), str) else None,
        time=time if isinstance(time, dt.time) else None,
        day=_int_value(raw, "day", source),
        month=_int_value(raw, "month", source),
        year=_int_value(raw, "year", source),
        time_zone=raw.get("time_zone") if isinstance(raw.get("time_zone"), str) else None,
        user_fields={key: value for key, value in raw.items() if key.startswith("_")},
        scale=scale,
        source=source,
    )


def _units_value(amounts: _Amounts, name: str) -> int | None:
    value = amounts.values[name]
    return None if value is None else _scaled(value, amounts.scale, name)


def _toml(text: str, source: str) -> dict[str, Any]:
    try:
        # Decimal, not float: "200.30" must become exactly 20030 cents (see MAX_DECIMAL_PLACES)
        return tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as exc:
        raise PhhError(f"{source}: not valid TOML: {exc}") from exc


def loads_phh(text: str, source: str = "<string>") -> PhhHand:
    """One hand from the text of a ``.phh`` file."""
    return _from_table(_toml(text, source), source)


def loads_phhs(text: str, source: str = "<string>") -> list[PhhHand]:
    """Every hand of a ``.phhs`` text, in file order (its ``[1]``, ``[2]``... tables)."""
    raw = _toml(text, source)
    hands = []
    for key, value in raw.items():
        if not isinstance(value, dict):
            raise PhhError(f"{source}: a .phhs file holds only hand tables, found {key!r} = {value!r}")
        hands.append(_from_table(value, f"{source}[{key}]"))
    return hands


def load_path(path: Path) -> list[PhhHand]:
    """The hands in a ``.phh`` or ``.phhs`` file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".phhs":
        return loads_phhs(text, str(path))
    return [loads_phh(text, str(path))]
