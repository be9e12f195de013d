"""A tournament's whole configuration, typed, validated and loaded from TOML.

Every knob the rule book (docs/rules.md) turns into a setting lives here, with the rule book's
default. Money is in integer cents (``buy_in = 1000`` is 10.00), chips are integers; a float
anywhere money or chips are expected is a configuration error, not something rounded silently.

Invariants (checked by ``parse_config`` and by the constructors' callers through
``validate_config``):

- at least one level; every level has ``0 < small_blind < big_blind``, a positive length, and an
  ante that agrees with its ``ante_kind``; big blinds never decrease from one level to the next;
- ``2 <= min_players <= max_players``, ``2 <= table_size <= 10``;
- an explicit payout table is in basis points, each place > 0, non-increasing, summing to 10 000;
- every mode-dependent field is present when its mode needs it (``fixed_order`` for a fixed
  break order, ``players_left`` for a players-left hand-for-hand trigger).

A ``ConfigError`` names the field the way it is written in the file, e.g.
``levels[3].big_blind: must be > small_blind (got 20 <= 40)``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from engine.betting import MAX_TABLE_SIZE, MIN_TABLE_SIZE, AnteKind, Limit
from engine.table import ButtonRule, FirstButton, JoinRule


class ConfigError(ValueError):
    """A configuration value is missing, of the wrong type or out of range; the message names it."""


class BreakMode(StrEnum):
    HOURLY = "hourly"  # every hour at :at_minute for `minutes`, synchronized across tables (S)
    EVERY = "every"  # after every `every_minutes` of play
    NONE = "none"


class PayoutMode(StrEnum):
    GENERATED = "generated"  # payouts.generate_structure: ~percent_paid of entries, power curve
    TABLE = "table"  # an explicit table of basis points per place


class MovedPlayerSeat(StrEnum):
    SAME_POSITION = "same_position"  # as nearly as possible the same position to the blinds (S)
    WORST_POSITION = "worst_position"  # worst position, never the small blind (TDA R11A)


class BreakOrder(StrEnum):
    LAST_ELIMINATION = "last_elimination"  # the table where a player was eliminated last (P§12)
    RANDOM = "random"  # (S)
    FIXED = "fixed"  # an operator-set order of table numbers (A)


class HandForHandTrigger(StrEnum):
    BUBBLE = "bubble"  # when the next elimination is the money bubble
    NEVER = "never"
    PLAYERS_LEFT = "players_left"  # when `players_left` players remain


@dataclass(frozen=True, slots=True)
class Level:
    """One blind level: blinds and ante in chips, length in minutes of play."""

    small_blind: int
    big_blind: int
    minutes: int
    ante: int = 0
    ante_kind: AnteKind = AnteKind.NONE


@dataclass(frozen=True, slots=True)
class Breaks:
    mode: BreakMode = BreakMode.HOURLY
    at_minute: int = 55
    minutes: int = 5
    every_minutes: int = 60
    addon_break_minutes: int = 3


@dataclass(frozen=True, slots=True)
class Rebuys:
    """Rebuys during the first ``period_minutes``. ``cost`` goes to the pool; ``fee`` to the house.

    ``fee=None``: no fee when the tournament has one; otherwise the 4 % commission rule (REG-1),
    taken out of ``cost``.
    ``stack_threshold=None`` means the starting stack: rebuy only at or under it.
    ``max_per_player=None`` means unlimited.
    """

    period_minutes: int
    cost: int
    chips: int
    max_per_player: int | None = None
    stack_threshold: int | None = None
    fee: int | None = None


@dataclass(frozen=True, slots=True)
class AddOn:
    """An add-on, bought at the end of the rebuy period (at the add-on break)."""

    cost: int
    chips: int
    max_per_player: int = 1
    fee: int | None = None


@dataclass(frozen=True, slots=True)
class ReEntry:
    """A new entry after elimination, during the first ``period_minutes``.

    ``cost=None`` means the same price as the first entry (buy-in + fee).
    """

    max_per_player: int
    period_minutes: int
    cost: int | None = None


MAX_PERCENT_PAID = 50  # see _validate_payouts


@dataclass(frozen=True, slots=True)
class Payouts:
    mode: PayoutMode = PayoutMode.GENERATED
    percent_paid: int = 15
    table: tuple[int, ...] = ()  # basis points per place, first place first; sums to 10 000


@dataclass(frozen=True, slots=True)
class Balancing:
    threshold: int = 2
    moved_player_seat: MovedPlayerSeat = MovedPlayerSeat.SAME_POSITION
    break_order: BreakOrder = BreakOrder.LAST_ELIMINATION
    fixed_order: tuple[int, ...] = ()
    redraw_at_tables: tuple[int, ...] = (1,)


@dataclass(frozen=True, slots=True)
class HandForHand:
    trigger: HandForHandTrigger = HandForHandTrigger.BUBBLE
    players_left: int | None = None
    bubble_ties_share: bool = False
    deduction_minutes: int | None = None  # None: 1 min when levels < 20 min, else 2 (HFH-1)
    # bubble trigger: start this many players before the bubble (None: one per table in play)
    bubble_margin: int | None = None


@dataclass(frozen=True, slots=True)
class Deals:
    allowed: bool = True
    max_left_to_play_percent: int = 5


@dataclass(frozen=True, slots=True)
class Clock:
    shot_clock_seconds: int | None = None  # None: 15 s when levels <= 15 min, else 30 (CLK-3)
    banks_at_start: int = 2
    banks_per_break: int = 1
    banks_at_bubble: int = 2
    away_hands_limit: int = 250


@dataclass(frozen=True, slots=True)
class Satellite:
    """A satellite awards ``seats`` tickets to tournament ``target``, each worth ``seat_value`` cents."""

    seats: int
    target: str
    seat_value: int


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """Everything that makes one tournament what it is. Money in cents, chips in chips."""

    id: str
    name: str
    levels: tuple[Level, ...]
    buy_in: int
    starting_stack: int
    game: str = "holdem"
    limit: Limit = Limit.NO_LIMIT
    table_size: int = 9
    breaks: Breaks = field(default_factory=Breaks)
    fee: int | None = None  # None: the house takes 9 % of the buy-in instead (REG-1)
    guarantee: int = 0
    min_players: int = 2
    max_players: int = 1000
    waiting_list: int = 10
    unregister_cutoff_minutes: int = 0
    late_registration_minutes: int = 0
    extended_registration: bool = False
    late_entry_position: JoinRule = JoinRule.ANY
    rebuys: Rebuys | None = None
    add_on: AddOn | None = None
    re_entry: ReEntry | None = None
    payouts: Payouts = field(default_factory=Payouts)
    button_rule: ButtonRule = ButtonRule.DEAD
    first_button: FirstButton = FirstButton.DRAW
    balancing: Balancing = field(default_factory=Balancing)
    hand_for_hand: HandForHand = field(default_factory=HandForHand)
    deals: Deals = field(default_factory=Deals)
    clock: Clock = field(default_factory=Clock)
    satellite: Satellite | None = None
    sit_and_go: bool = False

    @property
    def regular_level_minutes(self) -> int:
        """The length the level-dependent defaults look at: the first level's."""
        return self.levels[0].minutes

    @property
    def shot_clock(self) -> int:
        """Seconds per decision (CLK-3): the setting, or 15 s for levels of 15 min or less, else 30 s."""
        if self.clock.shot_clock_seconds is not None:
            return self.clock.shot_clock_seconds
        return 15 if self.regular_level_minutes <= 15 else 30

    @property
    def hand_for_hand_deduction(self) -> int:
        """Minutes the level clock loses per hand-for-hand hand (HFH-1)."""
        if self.hand_for_hand.deduction_minutes is not None:
            return self.hand_for_hand.deduction_minutes
        return 1 if self.regular_level_minutes < 20 else 2

    @property
    def is_freezeout(self) -> bool:
        """No way to buy more chips or a new entry (CANCEL-1 treats freezeouts specially)."""
        return self.rebuys is None and self.add_on is None and self.re_entry is None

    @property
    def rebuy_threshold(self) -> int:
        """A rebuy is allowed at or under this many chips."""
        if self.rebuys is None or self.rebuys.stack_threshold is None:
            return self.starting_stack
        return self.rebuys.stack_threshold


# --- validation -------------------------------------------------------------------------------


def validate_config(config: TournamentConfig) -> TournamentConfig:
    """Check every cross-field invariant of the module docstring; return ``config`` or raise.

    ``parse_config`` calls it; code that builds a config by hand (tests, simulations) may too.
    """
    _check(bool(config.id), "id", "must not be empty")
    _check(bool(config.name), "name", "must not be empty")
    _check(bool(config.game), "game", "must not be empty")
    _check(
        MIN_TABLE_SIZE <= config.table_size <= MAX_TABLE_SIZE,
        "table_size",
        f"must be {MIN_TABLE_SIZE}..{MAX_TABLE_SIZE} (got {config.table_size})",
    )
    _check(config.starting_stack > 0, "starting_stack", f"must be > 0 (got {config.starting_stack})")
    _check(config.buy_in >= 0, "buy_in", f"must be >= 0 cents (got {config.buy_in})")
    if config.fee is not None:
        _check(config.fee >= 0, "fee", f"must be >= 0 cents (got {config.fee})")
    _check(config.guarantee >= 0, "guarantee", f"must be >= 0 cents (got {config.guarantee})")
    _check(config.min_players >= 2, "min_players", f"must be >= 2 (got {config.min_players})")
    _check(
        config.max_players >= config.min_players,
        "max_players",
        f"must be >= min_players (got {config.max_players} < {config.min_players})",
    )
    _check(config.waiting_list >= 0, "waiting_list", f"must be >= 0 (got {config.waiting_list})")
    _check(
        config.unregister_cutoff_minutes >= 0,
        "unregister_cutoff_minutes",
        f"must be >= 0 (got {config.unregister_cutoff_minutes})",
    )
    _check(
        config.late_registration_minutes >= 0,
        "late_registration_minutes",
        f"must be >= 0 (got {config.late_registration_minutes})",
    )
    _validate_levels(config.levels)
    _validate_breaks(config.breaks)
    _validate_purchases(config)
    _validate_payouts(config.payouts)
    _validate_balancing(config.balancing)
    _validate_hand_for_hand(config.hand_for_hand)
    d = config.deals
    _check(
        0 <= d.max_left_to_play_percent <= 100,
        "deals.max_left_to_play_percent",
        f"must be 0..100 (got {d.max_left_to_play_percent})",
    )
    _validate_clock(config.clock)
    if config.satellite is not None:
        s = config.satellite
        _check(s.seats >= 1, "satellite.seats", f"must be >= 1 (got {s.seats})")
        _check(bool(s.target), "satellite.target", "must name the target tournament")
        _check(s.seat_value > 0, "satellite.seat_value", f"must be > 0 cents (got {s.seat_value})")
        _check(
            s.seats < config.max_players,
            "satellite.seats",
            f"must be < max_players (got {s.seats} >= {config.max_players})",
        )
    return config


def _check(ok: bool, path: str, message: str) -> None:
    if not ok:
        raise ConfigError(f"{path}: {message}")


def _validate_levels(levels: tuple[Level, ...]) -> None:
    _check(len(levels) > 0, "levels", "must hold at least one level")
    previous_big_blind = 0
    for i, level in enumerate(levels):
        p = f"levels[{i}]"
        _check(level.small_blind > 0, f"{p}.small_blind", f"must be > 0 (got {level.small_blind})")
        _check(
            level.big_blind > level.small_blind,
            f"{p}.big_blind",
            f"must be > small_blind (got {level.big_blind} <= {level.small_blind})",
        )
        _check(level.minutes > 0, f"{p}.minutes", f"must be > 0 (got {level.minutes})")
        _check(level.ante >= 0, f"{p}.ante", f"must be >= 0 (got {level.ante})")
        if level.ante_kind is AnteKind.NONE:
            _check(level.ante == 0, f"{p}.ante", f"must be 0 when ante_kind is 'none' (got {level.ante})")
        else:
            _check(level.ante > 0, f"{p}.ante", f"must be > 0 when ante_kind is '{level.ante_kind}'")
        _check(
            level.big_blind >= previous_big_blind,
            f"{p}.big_blind",
            f"must not decrease from the previous level (got {level.big_blind} < {previous_big_blind})",
        )
        previous_big_blind = level.big_blind


def _validate_breaks(b: Breaks) -> None:
    _check(0 <= b.at_minute <= 59, "breaks.at_minute", f"must be 0..59 (got {b.at_minute})")
    _check(b.minutes >= 0, "breaks.minutes", f"must be >= 0 (got {b.minutes})")
    if b.mode is BreakMode.HOURLY:
        _check(
            b.at_minute + b.minutes <= 60,
            "breaks.minutes",
            f"an hourly break must end by the hour (got :{b.at_minute} + {b.minutes})",
        )
    _check(b.every_minutes > 0, "breaks.every_minutes", f"must be > 0 (got {b.every_minutes})")
    _check(
        b.addon_break_minutes >= 0,
        "breaks.addon_break_minutes",
        f"must be >= 0 (got {b.addon_break_minutes})",
    )


def _validate_purchases(config: TournamentConfig) -> None:
    r = config.rebuys
    if r is not None:
        _check(r.period_minutes > 0, "rebuys.period_minutes", f"must be > 0 (got {r.period_minutes})")
        _check(r.cost > 0, "rebuys.cost", f"must be > 0 cents (got {r.cost})")
        _check(r.chips > 0, "rebuys.chips", f"must be > 0 (got {r.chips})")
        if r.max_per_player is not None:
            _check(r.max_per_player >= 1, "rebuys.max_per_player", f"must be >= 1 (got {r.max_per_player})")
        if r.stack_threshold is not None:
            _check(
                r.stack_threshold >= 0, "rebuys.stack_threshold", f"must be >= 0 (got {r.stack_threshold})"
            )
        if r.fee is not None:
            _check(r.fee >= 0, "rebuys.fee", f"must be >= 0 cents (got {r.fee})")
    a = config.add_on
    if a is not None:
        _check(a.cost > 0, "add_on.cost", f"must be > 0 cents (got {a.cost})")
        _check(a.chips > 0, "add_on.chips", f"must be > 0 (got {a.chips})")
        _check(a.max_per_player >= 1, "add_on.max_per_player", f"must be >= 1 (got {a.max_per_player})")
        if a.fee is not None:
            _check(a.fee >= 0, "add_on.fee", f"must be >= 0 cents (got {a.fee})")
    e = config.re_entry
    if e is not None:
        _check(e.max_per_player >= 1, "re_entry.max_per_player", f"must be >= 1 (got {e.max_per_player})")
        _check(e.period_minutes > 0, "re_entry.period_minutes", f"must be > 0 (got {e.period_minutes})")
        if e.cost is not None:
            _check(e.cost > 0, "re_entry.cost", f"must be > 0 cents (got {e.cost})")


def _validate_payouts(p: Payouts) -> None:
    # Sites pay 10-20 % of the field. Past half the field the curve's minimum cash (1.2 x the
    # buy-in) flattens it, and from about 84 % every place gets the same prize, which END-1 reads
    # as a tournament over before its first hand; 50 % is the sane ceiling.
    _check(
        1 <= p.percent_paid <= MAX_PERCENT_PAID,
        "payouts.percent_paid",
        f"must be 1..{MAX_PERCENT_PAID} (got {p.percent_paid})",
    )
    if p.mode is PayoutMode.TABLE:
        _check(len(p.table) > 0, "payouts.table", "must list at least one place when mode is 'table'")
    for i, bp in enumerate(p.table):
        _check(bp > 0, f"payouts.table[{i}]", f"must be > 0 basis points (got {bp})")
        if i > 0:
            _check(
                bp <= p.table[i - 1],
                f"payouts.table[{i}]",
                f"must not exceed the place above (got {bp} > {p.table[i - 1]})",
            )
    if p.table:
        total = sum(p.table)
        _check(total == 10_000, "payouts.table", f"must sum to 10000 basis points (got {total})")


def _validate_balancing(b: Balancing) -> None:
    _check(b.threshold >= 2, "balancing.threshold", f"must be >= 2 (got {b.threshold})")
    if b.break_order is BreakOrder.FIXED:
        _check(
            len(b.fixed_order) > 0, "balancing.fixed_order", "must list tables when break_order is 'fixed'"
        )
    _check(
        len(set(b.fixed_order)) == len(b.fixed_order),
        "balancing.fixed_order",
        f"must not repeat a table (got {list(b.fixed_order)})",
    )
    for i, n in enumerate(b.redraw_at_tables):
        _check(n >= 1, f"balancing.redraw_at_tables[{i}]", f"must be >= 1 (got {n})")


def _validate_hand_for_hand(h: HandForHand) -> None:
    if h.trigger is HandForHandTrigger.PLAYERS_LEFT:
        _check(
            h.players_left is not None and h.players_left >= 2,
            "hand_for_hand.players_left",
            f"must be >= 2 when trigger is 'players_left' (got {h.players_left})",
        )
    if h.deduction_minutes is not None:
        _check(
            h.deduction_minutes >= 0,
            "hand_for_hand.deduction_minutes",
            f"must be >= 0 (got {h.deduction_minutes})",
        )
    if h.bubble_margin is not None:
        _check(h.bubble_margin >= 0, "hand_for_hand.bubble_margin", f"must be >= 0 (got {h.bubble_margin})")


def _validate_clock(c: Clock) -> None:
    if c.shot_clock_seconds is not None:
        _check(
            c.shot_clock_seconds > 0, "clock.shot_clock_seconds", f"must be > 0 (got {c.shot_clock_seconds})"
        )
    for name in ("banks_at_start", "banks_per_break", "banks_at_bubble", "away_hands_limit"):
        value = getattr(c, name)
        _check(value >= 0, f"clock.{name}", f"must be >= 0 (got {value})")


# --- TOML reading -----------------------------------------------------------------------------

E = TypeVar("E", bound=StrEnum)


class _Section:
    """A TOML table being read: typed getters that name the field, and a check for unknown keys."""

    def __init__(self, data: Mapping[str, Any], path: str) -> None:
        self._data = data
        self._path = path
        self._read: set[str] = set()

    def _name(self, key: str) -> str:
        return f"{self._path}.{key}" if self._path else key

    def has(self, key: str) -> bool:
        return key in self._data

    def _get(self, key: str) -> Any:
        self._read.add(key)
        return self._data[key]

    def integer(self, key: str, default: int | None = None) -> int:
        if key not in self._data:
            if default is None:
                raise ConfigError(f"{self._name(key)}: is required")
            return default
        value = self._get(key)
        if type(value) is not int:
            raise ConfigError(f"{self._name(key)}: must be an integer (got {value!r})")
        return value

    def optional_integer(self, key: str) -> int | None:
        return self.integer(key) if key in self._data else None

    def string(self, key: str, default: str | None = None) -> str:
        if key not in self._data:
            if default is None:
                raise ConfigError(f"{self._name(key)}: is required")
            return default
        value = self._get(key)
        if not isinstance(value, str):
            raise ConfigError(f"{self._name(key)}: must be a string (got {value!r})")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        if key not in self._data:
            return default
        value = self._get(key)
        if not isinstance(value, bool):
            raise ConfigError(f"{self._name(key)}: must be true or false (got {value!r})")
        return value

    def choice(self, key: str, enum: type[E], default: E) -> E:
        if key not in self._data:
            return default
        value = self._get(key)
        try:
            return enum(value)
        except ValueError:
            allowed = ", ".join(repr(member.value) for member in enum)
            raise ConfigError(f"{self._name(key)}: must be one of {allowed} (got {value!r})") from None

    def integers(self, key: str, default: tuple[int, ...]) -> tuple[int, ...]:
        if key not in self._data:
            return default
        value = self._get(key)
        if not isinstance(value, list) or any(type(v) is not int for v in value):
            raise ConfigError(f"{self._name(key)}: must be a list of integers (got {value!r})")
        return tuple(value)

    def section(self, key: str) -> _Section | None:
        if key not in self._data:
            return None
        value = self._get(key)
        if not isinstance(value, dict):
            raise ConfigError(f"{self._name(key)}: must be a table (got {value!r})")
        return _Section(value, self._name(key))

    def sections(self, key: str) -> list[_Section]:
        if key not in self._data:
            raise ConfigError(f"{self._name(key)}: is required")
        value = self._get(key)
        if not isinstance(value, list) or any(not isinstance(v, dict) for v in value):
            raise ConfigError(f"{self._name(key)}: must be an array of tables ([[{key}]])")
        return [_Section(v, f"{self._name(key)}[{i}]") for i, v in enumerate(value)]

    def done(self) -> None:
        """Reject keys nobody read: a typo in a setting must not silently become the default."""
        unknown = sorted(set(self._data) - self._read)
        if unknown:
            raise ConfigError(f"{self._name(unknown[0])}: unknown setting")


S = TypeVar("S")


def _optional(parent: _Section, key: str, read: Callable[[_Section], S]) -> S | None:
    section = parent.section(key)
    if section is None:
        return None
    value = read(section)
    section.done()
    return value


def _read_level(s: _Section) -> Level:
    level = Level(
        small_blind=s.integer("small_blind"),
        big_blind=s.integer("big_blind"),
        minutes=s.integer("minutes"),
        ante=s.integer("ante", 0),
        ante_kind=s.choice("ante_kind", AnteKind, AnteKind.NONE),
    )
    s.done()
    return level


def _read_breaks(s: _Section) -> Breaks:
    d = Breaks()
    return Breaks(
        mode=s.choice("mode", BreakMode, d.mode),
        at_minute=s.integer("at_minute", d.at_minute),
        minutes=s.integer("minutes", d.minutes),
        every_minutes=s.integer("every_minutes", d.every_minutes),
        addon_break_minutes=s.integer("addon_break_minutes", d.addon_break_minutes),
    )


def _read_rebuys(s: _Section) -> Rebuys:
    return Rebuys(
        period_minutes=s.integer("period_minutes"),
        cost=s.integer("cost"),
        chips=s.integer("chips"),
        max_per_player=s.optional_integer("max_per_player"),
        stack_threshold=s.optional_integer("stack_threshold"),
        fee=s.optional_integer("fee"),
    )


def _read_add_on(s: _Section) -> AddOn:
    return AddOn(
        cost=s.integer("cost"),
        chips=s.integer("chips"),
        max_per_player=s.integer("max_per_player", 1),
        fee=s.optional_integer("fee"),
    )


def _read_re_entry(s: _Section) -> ReEntry:
    return ReEntry(
        max_per_player=s.integer("max_per_player"),
        period_minutes=s.integer("period_minutes"),
        cost=s.optional_integer("cost"),
    )


def _read_payouts(s: _Section) -> Payouts:
    d = Payouts()
    return Payouts(
        mode=s.choice("mode", PayoutMode, d.mode),
        percent_paid=s.integer("percent_paid", d.percent_paid),
        table=s.integers("table", d.table),
    )


def _read_balancing(s: _Section) -> Balancing:
    d = Balancing()
    return Balancing(
        threshold=s.integer("threshold", d.threshold),
        moved_player_seat=s.choice("moved_player_seat", MovedPlayerSeat, d.moved_player_seat),
        break_order=s.choice("break_order", BreakOrder, d.break_order),
        fixed_order=s.integers("fixed_order", d.fixed_order),
        redraw_at_tables=s.integers("redraw_at_tables", d.redraw_at_tables),
    )


def _read_hand_for_hand(s: _Section) -> HandForHand:
    d = HandForHand()
    return HandForHand(
        trigger=s.choice("trigger", HandForHandTrigger, d.trigger),
        players_left=s.optional_integer("players_left"),
        bubble_ties_share=s.boolean("bubble_ties_share", d.bubble_ties_share),
        deduction_minutes=s.optional_integer("deduction_minutes"),
        bubble_margin=s.optional_integer("bubble_margin"),
    )


def _read_deals(s: _Section) -> Deals:
    d = Deals()
    return Deals(
        allowed=s.boolean("allowed", d.allowed),
        max_left_to_play_percent=s.integer("max_left_to_play_percent", d.max_left_to_play_percent),
    )


def _read_clock(s: _Section) -> Clock:
    d = Clock()
    return Clock(
        shot_clock_seconds=s.optional_integer("shot_clock_seconds"),
        banks_at_start=s.integer("banks_at_start", d.banks_at_start),
        banks_per_break=s.integer("banks_per_break", d.banks_per_break),
        banks_at_bubble=s.integer("banks_at_bubble", d.banks_at_bubble),
        away_hands_limit=s.integer("away_hands_limit", d.away_hands_limit),
    )


def _read_satellite(s: _Section) -> Satellite:
    return Satellite(seats=s.integer("seats"), target=s.string("target"), seat_value=s.integer("seat_value"))


def parse_config(text: str) -> TournamentConfig:
    """Parse and validate a tournament's TOML text; raise ``ConfigError`` naming the bad field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"<toml>: not valid TOML ({error})") from None
    root = _Section(data, "")
    d = TournamentConfig(id="-", name="-", levels=(), buy_in=0, starting_stack=1)
    config = TournamentConfig(
        id=root.string("id"),
        name=root.string("name"),
        game=root.string("game", d.game),
        limit=root.choice("limit", Limit, d.limit),
        table_size=root.integer("table_size", d.table_size),
        starting_stack=root.integer("starting_stack"),
        levels=tuple(_read_level(s) for s in root.sections("levels")),
        breaks=_optional(root, "breaks", _read_breaks) or d.breaks,
        buy_in=root.integer("buy_in"),
        fee=root.optional_integer("fee"),
        guarantee=root.integer("guarantee", d.guarantee),
        min_players=root.integer("min_players", d.min_players),
        max_players=root.integer("max_players", d.max_players),
        waiting_list=root.integer("waiting_list", d.waiting_list),
        unregister_cutoff_minutes=root.integer("unregister_cutoff_minutes", d.unregister_cutoff_minutes),
        late_registration_minutes=root.integer("late_registration_minutes", d.late_registration_minutes),
        extended_registration=root.boolean("extended_registration", d.extended_registration),
        late_entry_position=root.choice("late_entry_position", JoinRule, d.late_entry_position),
        rebuys=_optional(root, "rebuys", _read_rebuys),
        add_on=_optional(root, "add_on", _read_add_on),
        re_entry=_optional(root, "re_entry", _read_re_entry),
        payouts=_optional(root, "payouts", _read_payouts) or d.payouts,
        button_rule=root.choice("button_rule", ButtonRule, d.button_rule),
        first_button=root.choice("first_button", FirstButton, d.first_button),
        balancing=_optional(root, "balancing", _read_balancing) or d.balancing,
        hand_for_hand=_optional(root, "hand_for_hand", _read_hand_for_hand) or d.hand_for_hand,
        deals=_optional(root, "deals", _read_deals) or d.deals,
        clock=_optional(root, "clock", _read_clock) or d.clock,
        satellite=_optional(root, "satellite", _read_satellite),
        sit_and_go=root.boolean("sit_and_go", d.sit_and_go),
    )
    root.done()
    return validate_config(config)


def load_config(path: str | Path) -> TournamentConfig:
    """Read, parse and validate a tournament TOML file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"<file>: cannot read {path} ({error.strerror})") from None
    return parse_config(text)
