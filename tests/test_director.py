"""The tournament director alone: scripted inputs and the commands they give; saved state."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.betting import AnteKind, HandSetup
from engine.table import FirstButton
from engine.tournament import inputs
from engine.tournament.balancing import TableIndex
from engine.tournament.config import BreakMode, Breaks, Level, Payouts, TournamentConfig, load_config
from engine.tournament.director import (
    BreakEnded,
    BreakStarted,
    BubbleBurst,
    Command,
    DealHand,
    Director,
    DirectorSnapshot,
    FinalTable,
    HandForHandEnded,
    HandForHandStarted,
    HoldReason,
    LevelStarted,
    NoHandAtTable,
    PlayerEliminated,
    PlayerMoved,
    PlayerRegistered,
    PostTransfers,
    Status,
    TableClosed,
    TableHeld,
    TableOpened,
    TournamentEnded,
    TournamentStarted,
    UnknownTable,
    WrongStatus,
)
from engine.tournament.simulation import Simulation, SimulationSnapshot, default_config
from engine.tournament.transfers import Reason

LEVELS = (
    Level(10, 20, 10),
    Level(20, 40, 10),
    Level(50, 100, 10, 100, AnteKind.BIG_BLIND),
)


def config(players: int, **changes: object) -> TournamentConfig:
    base = TournamentConfig(
        id="scripted",
        name="Scripted",
        levels=LEVELS,
        buy_in=1000,
        fee=100,
        starting_stack=1000,
        max_players=players,
        first_button=FirstButton.SEAT_ONE,
        breaks=Breaks(mode=BreakMode.EVERY, every_minutes=20, minutes=5),
        payouts=Payouts(percent_paid=20),
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def of(kind: type, commands: list[Command]) -> list:  # type: ignore[type-arg]
    return [command for command in commands if isinstance(command, kind)]


def deals(commands: list[Command]) -> dict[int, DealHand]:
    return {deal.table_id: deal for deal in of(DealHand, commands)}


def finish(deal: DealHand, busted: tuple[int, ...] = ()) -> dict[int, int]:
    """The dealt hand's end: the ``busted`` seats lose everything to the first other seat."""
    setup: HandSetup = deal.setup
    stacks = {seat.seat: seat.stack for seat in setup.seats}
    winner = next(seat for seat in stacks if seat not in busted)
    for seat in busted:
        stacks[winner] += stacks[seat]
        stacks[seat] = 0
    return stacks


def started(players: int, **changes: object) -> tuple[Director, list[Command]]:
    director = Director(config(players, **changes), start_at=0, rng=random.Random(4))
    for number in range(players):
        director.register(f"p{number:02d}", 0, 5000)
    return director, director.start(0)


def test_director_registers_starts_and_deals_scripted() -> None:
    director = Director(config(18), start_at=100, rng=random.Random(4))
    commands = director.register("p00", 10, 5000)
    assert of(PlayerRegistered, commands) == [PlayerRegistered("p00", False, None)]
    (post,) = of(PostTransfers, commands)
    assert [(t.reason, t.amount) for t in post.transfers] == [(Reason.BUY_IN, 1000), (Reason.FEE, 100)]
    for number in range(1, 18):
        director.register(f"p{number:02d}", 10, 5000)
    waiting = director.register("w1", 11, 5000)  # REG-2: a full field puts the next on the list
    assert of(PlayerRegistered, waiting) == [PlayerRegistered("w1", False, 1)]
    assert director.next_wakeup() == 100, "the director wakes at the scheduled start"
    assert director.tick(99) == [], "nothing happens before the start"
    commands = director.tick(100)
    refund = [t for c in of(PostTransfers, commands) for t in c.transfers if t.reason is Reason.REFUND]
    assert sorted(t.amount for t in refund) == [100, 1000], "REG-2: still waiting at the start: refunded"
    assert len(of(TableOpened, commands)) == 2 and of(TournamentStarted, commands) == [
        TournamentStarted(18, 2)
    ]
    assert of(LevelStarted, commands)[0] == LevelStarted(1, LEVELS[0])
    dealt = deals(commands)
    assert sorted(dealt) == [1, 2], "both tables deal at once"
    for deal in dealt.values():
        assert (deal.setup.small_blind, deal.setup.big_blind, deal.level) == (10, 20, 1)
        assert deal.setup.button == 1, "FirstButton.SEAT_ONE"
        assert dict(deal.time_banks) == {seat.seat: 2 for seat in deal.setup.seats}, "CLK-3: two banks"
    assert director.hands_dealt == 2
    with pytest.raises(WrongStatus):
        director.start(101)


def test_director_busts_rank_plan_and_deal_again() -> None:
    director, commands = started(18)
    dealt = deals(commands)
    first, second = dealt[1], dealt[2]
    # table 1 busts two players in one hand: ELIM-2 by their starting stacks (all equal: a tie)
    out = director.hand_ended(1, finish(first, busted=(4, 5)), 30)
    eliminated = of(PlayerEliminated, out)
    assert [(e.place, e.shared_places) for e in eliminated] == [(17, 2), (17, 2)]
    # 7 against 9: BAL-1 waits for table 2's hand; table 1 is held for a mover meanwhile
    assert of(PlayerMoved, out) == [] and deals(out) == {}
    assert of(TableHeld, out) == [TableHeld(1, HoldReason.BALANCING)]
    out = director.hand_ended(2, finish(second), 40)
    (moved,) = of(PlayerMoved, out)
    assert (moved.move.from_table, moved.move.to_table) == (2, 1), moved
    # MOVE-1: the player due the big blind next at table 2 moves
    assert sorted(deals(out)) == [1, 2], "both tables deal again once balanced"
    director.check_chips()
    director.check_seats()
    with pytest.raises(UnknownTable):
        director.hand_ended(3, {}, 41)
    before = director.snapshot()
    with pytest.raises(NoHandAtTable):  # conserves nothing: refused, and nothing changed
        director.hand_ended(1, {seat: 1 for seat in deals(out)[1].setup.seat_numbers()}, 41)
    assert director.snapshot() == before


def test_director_holds_tables_for_a_break_and_deals_after_it() -> None:
    director, commands = started(9)
    (deal,) = deals(commands).values()
    assert director.next_wakeup() == 10 * 60, "level 2 starts after 10 minutes"
    assert of(LevelStarted, director.tick(10 * 60)) == [LevelStarted(2, LEVELS[1])]
    assert director.next_wakeup() == 20 * 60, "the first break starts after 20 minutes of play"
    out = director.tick(20 * 60)
    assert of(BreakStarted, out) and deals(out) == {}
    out = director.hand_ended(1, finish(deal), 20 * 60 + 10)
    assert of(TableHeld, out) == [TableHeld(1, HoldReason.BREAK, 25 * 60)], (
        "BRK-T1: the hand ends, then it waits"
    )
    assert director.next_wakeup() == 25 * 60
    out = director.tick(25 * 60)
    assert of(BreakEnded, out) and sorted(deals(out)) == [1]
    assert director.time_banks("p00") == 3, "CLK-3: a bank more at every scheduled break"


def test_director_hand_for_hand_to_the_bubble_and_the_end() -> None:
    """30 players at 6-max, six paid: hand-for-hand from one player per table before the bubble
    (two tables: 8 players); busts during a round are one batch; then the final table and the end."""
    director, commands = started(30, table_size=6, breaks=Breaks(mode=BreakMode.NONE))
    dealt = deals(commands)
    assert director.structure().places_paid == 6
    now = 10
    seen: list[Command] = []
    busted_at: dict[str, int] = {}
    while director.status is Status.RUNNING:
        assert dealt, "a running tournament always has a hand under way"
        table_id = min(dealt)
        deal = dealt.pop(table_id)
        seats = [seat.seat for seat in deal.setup.seats]
        busted_at[deal.setup.seats[-1].player] = table_id
        out = director.hand_ended(table_id, finish(deal, busted=(seats[-1],)), now)
        seen.extend(out)
        dealt.update(deals(out))
        now += 10
    assert of(HandForHandStarted, seen) and of(HandForHandEnded, seen)
    assert of(BubbleBurst, seen) == [BubbleBurst(True)], "the bubble burst inside a synchronized round"
    assert director.bubble_burst_in_sync is True
    # each named at the table they busted at, a round's busts from every table included (the
    # server tells the player which table they left by it)
    eliminated = of(PlayerEliminated, seen)
    named = [(e.player, e.table_id) for e in eliminated]
    assert named == [(e.player, busted_at[e.player]) for e in eliminated]
    assert [c.table_id for c in of(FinalTable, seen)] and of(TableClosed, seen)
    (end,) = of(TournamentEnded, seen)
    started_at = of(HandForHandStarted, seen)[0]
    assert (started_at.players_left, started_at.places_paid) == (8, 6), started_at
    places = Counter(p for f in end.finishes for p in range(f.place, f.place + f.shared_places))
    assert sorted(places) == list(range(1, 31))
    prizes = [t for c in of(PostTransfers, seen) for t in c.transfers if t.reason is Reason.PRIZE]
    assert sum(t.amount for t in prizes) == director.prize_pool == 30000


def test_table_index_agrees_with_a_plain_count() -> None:
    rng = random.Random(9)
    index = TableIndex(9)
    truth: dict[int, tuple[int, bool, int]] = {}
    for _ in range(5000):
        table_id = rng.randrange(40)
        if rng.random() < 0.1:
            index.remove(table_id)
            truth.pop(table_id, None)
        else:
            entry = (rng.randrange(10), rng.random() < 0.5, rng.randrange(3))
            index.put(table_id, entry[0], idle=entry[1], times_moved=entry[2])
            truth[table_id] = entry
        counts = [count for count, _, _ in truth.values()]
        assert index.tables == len(truth) and index.players == sum(counts)
        assert index.largest() == max(counts, default=0) and index.smallest() == min(counts, default=0)
        for count in range(10):
            idle = [t for t, (c, i, _) in truth.items() if c == count and i]
            assert index.lowest_idle(count) == min(idle, default=None)
            best = min(((truth[t][2], t) for t in idle), default=None)
            assert index.least_moved_idle(count) == (None if best is None else best[1])


EXAMPLES = ("freezeout-10min", "satellite", "turbo-rebuy", "sunday-major")


def restarted(sim: Simulation, codec: str) -> Simulation:
    snapshot = sim.snapshot()
    if codec == "json":
        data = msgspec.json.decode(msgspec.json.encode(snapshot), type=SimulationSnapshot)
    else:
        data = msgspec.msgpack.decode(msgspec.msgpack.encode(snapshot), type=SimulationSnapshot)
    assert isinstance(data.director, DirectorSnapshot)
    return Simulation.restore(data)


@settings(max_examples=16, deadline=None)
@given(
    example=st.sampled_from(EXAMPLES),
    seed=st.integers(min_value=0, max_value=2**20),
    cut=st.floats(min_value=0.0, max_value=0.98),
    codec=st.sampled_from(["json", "msgpack"]),
)
def test_crash_1_snapshot_restore_continues_as_the_run_that_never_stopped(
    repo_root: Path, example: str, seed: int, cut: float, codec: str
) -> None:
    """At a random hand boundary: snapshot, encode, decode, restore, continue. The hands under
    way are rolled back and dealt again (CRASH-1); the finish order, prizes and every transfer
    are those of the run that never stopped."""
    loaded = load_config(repo_root / "examples" / f"{example}.toml")
    players = 40 if example != "sunday-major" else 60
    whole = Simulation(loaded, players, seed)
    whole.register_everyone()
    whole.start()
    ends = 0
    while not whole.finished:
        whole.step()
        ends += 1
    expected = whole.result()
    sim = Simulation(loaded, players, seed)
    sim.register_everyone()
    sim.start()
    stop = int(cut * ends)
    for _ in range(stop):
        sim.step()
    sim = restarted(sim, codec)
    while not sim.finished:
        sim.step()
    got = sim.result()
    assert got.finishes == expected.finishes, f"{example} seed {seed}: another finish order after step {stop}"
    assert got.transfers == expected.transfers, f"{example} seed {seed}: other transfers after step {stop}"
    assert got == expected


def test_crash_1_restore_deals_the_rolled_back_hand_again_from_its_start() -> None:
    director, commands = started(9)
    (deal,) = deals(commands).values()
    snapshot = msgspec.msgpack.decode(msgspec.msgpack.encode(director.snapshot()), type=DirectorSnapshot)
    restored = Director.restore(snapshot, random.Random())
    assert [hand.hand_number for hand in restored.running_hands()] == [deal.hand_number]
    (again,) = deals(restored.recover(50)).values()
    redealt = deals([*restored.recover(51)])
    assert redealt == {}, "recover deals each rolled-back hand once"
    assert again.hand_number == deal.hand_number and again.setup == deal.setup, "same hand, same stacks"
    restored.hand_ended(1, finish(again), 60)
    restored.check_chips()


def test_crash_1_a_finished_director_restores_as_it_ended(repo_root: Path) -> None:
    """A finished tournament read back from its last snapshot (what a restarted server, or one
    that unloaded it, answers from) reports what the live one did: the players it ended with
    were once forgotten, so the restored one said none were left and the average stack was 0."""
    loaded = load_config(repo_root / "examples" / "freezeout-10min.toml")
    sim = Simulation(loaded, 20, 3)
    sim.register_everyone()
    sim.start()
    while not sim.finished:
        sim.step()
    live = sim.director
    data = msgspec.msgpack.decode(msgspec.msgpack.encode(live.snapshot()), type=DirectorSnapshot)
    restored = Director.restore(data, random.Random())
    assert live.players_left == 1
    assert restored.players_left == live.players_left
    assert restored.snapshot() == live.snapshot()


def test_director_snapshot_refuses_another_version() -> None:
    director, _ = started(9)
    snapshot = dataclasses.replace(director.snapshot(), version=99)
    with pytest.raises(ValueError, match="version 99"):
        Director.restore(snapshot, random.Random())


def test_director_refuses_a_default_config_field_too_large() -> None:
    with pytest.raises(ValueError):
        Director(default_config(2), start_at=0, rng=random.Random(1)).register("", 0, 10**6)


def test_start_now_a_day_early_counts_the_levels_from_now() -> None:
    """An operator's "start now" a day before the scheduled start (what `feltd bots --create`
    and `feltd demo` do): the first level ends one level after now, not a day later. The wakeup
    once pointed a day ahead, so a server whose tables were all held for a break slept through
    its end and never dealt again."""
    repo = Path(__file__).resolve().parent.parent
    config = load_config(repo / "examples" / "freezeout-10min.toml")
    now = 3600.0 * 498_889  # on the hour: its hourly break comes at minute 55, after level 1
    director = Director(config, start_at=now + 86_400, rng=random.Random(1))
    for index in range(20):
        director.register(f"p{index}", now, 100_000)
    director.start_now(now)
    first_level = config.levels[0].minutes * 60
    wakeup = director.next_wakeup()
    assert wakeup is not None and wakeup <= now + first_level, wakeup - now if wakeup else None
    director.tick(now + first_level)
    assert director.level_index == 1


def test_crash_1_a_lost_table_deals_its_hand_again_from_its_start() -> None:
    """One table's actor is lost mid-hand (its worker died): ``TableLost`` rolls that hand back and
    deals it again (same number, level and stacks); the other tables play on, chips are kept,
    and the journal's inputs replayed from the start make the same director."""
    director = Director(config(18), start_at=0, rng=random.Random(4))
    journal: list[inputs.AnyInput] = [
        inputs.Register(now=0, player=f"p{number:02d}", balance=5000) for number in range(18)
    ]
    journal.append(inputs.Tick(now=0))
    commands: list[Command] = []
    for value in journal:
        commands = inputs.apply(director, value)
    dealt = deals(commands)
    assert sorted(dealt) == [1, 2]
    ended = inputs.HandEnded(now=30, table_id=2, stacks=finish(dealt[2]))
    after = inputs.apply(director, ended)
    lost = inputs.TableLost(now=40, table_id=1)
    again = deals(inputs.apply(director, lost))
    journal += [ended, lost]
    assert list(again) == [1], "only the lost table is dealt again"
    assert again[1].hand_number == dealt[1].hand_number and again[1].level == dealt[1].level
    assert again[1].setup == dealt[1].setup, "the same hand from its start: same seats and stacks"
    assert [hand.hand_number for hand in director.running_hands()] == sorted(
        [dealt[1].hand_number, deals(after)[2].hand_number]
    )
    director.check_chips()
    director.check_seats()
    assert deals(inputs.apply(director, inputs.TableLost(now=41, table_id=1)))[1].setup == dealt[1].setup
    journal.append(inputs.TableLost(now=41, table_id=1))
    busted = inputs.HandEnded(now=50, table_id=1, stacks=finish(again[1], busted=(2,)))
    inputs.apply(director, busted)
    journal.append(busted)
    director.check_chips()
    with pytest.raises(NoHandAtTable):
        director.hand_ended(1, finish(again[1]), 51)  # the lost actor's late report: refused
    with pytest.raises(UnknownTable):
        director.table_lost(99, 52)

    replayed = Director(config(18), start_at=0, rng=random.Random(4))
    for value in journal:
        inputs.apply(replayed, inputs.decode(inputs.encode(value)))
    assert replayed.snapshot() == director.snapshot()


def test_crash_1_a_lost_table_between_hands_is_left_as_it_is() -> None:
    director, commands = started(9)
    (deal,) = deals(commands).values()
    director.pause(5)
    assert deals(director.hand_ended(1, finish(deal), 10)) == {}, "paused: the table waits"
    running = director.running_hands()
    before = director.snapshot()
    assert deals(director.table_lost(1, 11)) == {}
    assert director.running_hands() == running
    assert dataclasses.replace(director.snapshot(), now=before.now) == before
