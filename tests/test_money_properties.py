"""Money invariants over random tournaments (DESIGN invariant 2), executed on an in-memory ledger.

Random tournaments go through registration (with unregistrations, a waiting list, tickets),
the start, late registration, rebuys, add-ons, re-entries, eliminations, then end in one of:
a cancellation before the start, a CANCEL-1 settlement at a random moment, a final-table deal,
or play to the last player. Every planned transfer is executed in order on a ledger that
refuses a negative balance on any account but the house and the cashier. At the end:

- every transaction (one action's transfers) nets to zero by account;
- the prize pool paid out exactly what it took in plus the overlay: its balance ends at 0;
- no idempotency key repeats, so no player can be paid a prize twice; nobody gets two prizes;
- no player, ticket or pool balance ever went below zero.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.tournament.config import AddOn, Level, Rebuys, ReEntry, TournamentConfig
from engine.tournament.deals import DealMethod, conclude_deal, max_left_to_play, propose_deal
from engine.tournament.payouts import overlay_transfer, prizes_for_finishes, structure_for
from engine.tournament.registration import Phase, Registration
from engine.tournament.settlement import StoppedTournament, settle
from engine.tournament.standings import Finish
from engine.tournament.transfers import (
    CASHIER,
    Reason,
    Transfer,
    may_go_negative,
    net_by_account,
    player_account,
    pool_account,
    ticket_account,
)

START = 100_000.0
TID = "prop"
POOL = pool_account(TID)


@dataclass
class Ledger:
    """Executes transfers at most once per key and refuses to overdraw a guarded account."""

    balances: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    keys: set[str] = field(default_factory=set)
    prizes: Counter[str] = field(default_factory=Counter)

    def execute(self, transfers: Iterable[Transfer]) -> None:
        batch = tuple(transfers)
        assert sum(net_by_account(batch).values()) == 0, f"a transaction must net to zero: {batch}"
        for t in batch:
            assert t.idempotency_key not in self.keys, f"key planned twice: {t.idempotency_key}"
            self.keys.add(t.idempotency_key)
            self.balances[t.source] -= t.amount
            self.balances[t.target] += t.amount
            if not may_go_negative(t.source):
                assert self.balances[t.source] >= 0, (
                    f"{t.source} went negative ({self.balances[t.source]}) at {t}"
                )
            if t.reason is Reason.PRIZE:
                self.prizes[t.target] += 1
                assert self.prizes[t.target] == 1, f"{t.target} was paid a second prize: {t}"

    def balance(self, account: str) -> int:
        return self.balances[account]


@st.composite
def tournaments(draw: st.DrawFn) -> tuple[TournamentConfig, int, int]:
    fee = draw(st.sampled_from([None, 0, 100, 250]))
    rebuys = draw(st.booleans())
    config = TournamentConfig(
        id=TID,
        name="property",
        levels=(Level(10, 20, 15),),
        buy_in=draw(st.sampled_from([0, 1000, 1111, 2500])),
        fee=fee,
        starting_stack=1500,
        table_size=draw(st.sampled_from([2, 6, 9])),
        min_players=2,
        max_players=draw(st.integers(2, 14)),
        waiting_list=draw(st.integers(0, 3)),
        unregister_cutoff_minutes=draw(st.sampled_from([0, 5])),
        late_registration_minutes=draw(st.sampled_from([0, 30])),
        extended_registration=draw(st.booleans()),
        guarantee=draw(st.sampled_from([0, 5_000, 50_000])),
        rebuys=Rebuys(
            period_minutes=40, cost=1000, chips=1500, max_per_player=draw(st.sampled_from([None, 2]))
        )
        if rebuys
        else None,
        add_on=AddOn(cost=700, chips=2000) if rebuys and draw(st.booleans()) else None,
        re_entry=ReEntry(max_per_player=2, period_minutes=40) if draw(st.booleans()) else None,
    )
    players = draw(st.integers(0, 18))
    seed = draw(st.integers(0, 2**32 - 1))
    return config, players, seed


def run_tournament(config: TournamentConfig, players: int, seed: int) -> Ledger:
    rng = random.Random(seed)
    ledger = Ledger()
    ids = [f"p{i}" for i in range(players)]
    for pid in ids:
        deposit = rng.choice([0, 500, 3000, 10_000])
        if deposit:
            ledger.execute(
                [Transfer(CASHIER, player_account(pid), deposit, f"deposit:{pid}", Reason.DEPOSIT)]
            )
        if rng.random() < 0.15:
            ledger.execute(
                [Transfer(CASHIER, ticket_account(TID, pid), 5000, f"ticket:{pid}", Reason.TICKET)]
            )
    reg = Registration(config, START)

    def cash(pid: str) -> int:
        return ledger.balance(player_account(pid))

    # Registration, with unregistrations and the waiting list.
    now = START - 3600
    for _ in range(players * 2):
        now += rng.uniform(1, 100)
        pid = rng.choice(ids) if ids else "nobody"
        if reg.can_unregister(pid, now) and rng.random() < 0.3:
            ledger.execute(reg.unregister(pid, now).transfers)
        else:
            via_ticket = ledger.balance(ticket_account(TID, pid)) > 0 and rng.random() < 0.7
            balance = ledger.balance(ticket_account(TID, pid)) if via_ticket else cash(pid)
            if reg.can_register(pid, now, balance, via_ticket):
                ledger.execute(reg.register(pid, now, balance, via_ticket).transfers)
    if not reg.can_start(START) or rng.random() < 0.05:
        if reg.can_cancel(START):
            ledger.execute(reg.cancel(START).transfers)
        assert reg.phase is not Phase.RUNNING
        return ledger
    ledger.execute(reg.start(START).transfers)

    # Stage A: purchases are possible; busts are out of the money.
    now = START
    for _ in range(rng.randint(0, 30)):
        now += rng.uniform(10, 300)
        pid = rng.choice(ids)
        roll = rng.random()
        if roll < 0.25 and len(reg.active) > 2 and pid in reg.active:
            ledger.execute(reg.eliminate(pid, now).transfers)
        elif roll < 0.45:
            stack = rng.choice([0, 500, 1500, 5000])
            if reg.can_rebuy(pid, now, cash(pid), stack):
                ledger.execute(reg.rebuy(pid, now, cash(pid), stack).transfers)
        elif roll < 0.6:
            if reg.can_add_on(pid, now, cash(pid)):
                ledger.execute(reg.add_on(pid, now, cash(pid)).transfers)
        elif roll < 0.75:
            if reg.can_re_enter(pid, now, cash(pid)):
                ledger.execute(reg.re_enter(pid, now, cash(pid)).transfers)
        elif reg.can_register(pid, now, cash(pid)):
            ledger.execute(reg.register(pid, now, cash(pid)).transfers)

    window = reg.add_on_window()
    if window is not None and rng.random() < 0.7:
        now = max(now, window[0])
        for pid in reg.active:
            if rng.random() < 0.6 and reg.can_add_on(pid, now, cash(pid)):
                ledger.execute(reg.add_on(pid, now, cash(pid)).transfers)

    def stop(now: float, overlay_paid: int, paid: dict[str, int], structure_now: object) -> None:
        active = reg.active
        chips = {pid: rng.randint(1, 20_000) for pid in active}
        stopped = StoppedTournament(
            tournament_id=TID,
            payments=reg.payments,
            remaining=chips,
            structure=structure_now,  # type: ignore[arg-type]
            minutes_since_start=(now - START) / 60,
            can_restart_within_20_minutes=False,
            prizes_paid=paid,
            overlay_paid=overlay_paid,
            guarantee=config.guarantee,
            freezeout=config.is_freezeout,
            rebuy_period_over=reg.rebuy_period_over(now),
            sit_and_go=rng.random() < 0.1,
        )
        ledger.execute(settle(stopped).transfers)

    if rng.random() < 0.2:
        structure_now = structure_for(config, reg.pool_contributions, len(reg.active))
        stop(now, 0, {}, structure_now)
        return ledger

    # Stage B: purchases over. The overlay comes in, the rest play down, prizes as they bust.
    now = max(now, START + 3 * 3600)
    contributions = reg.pool_contributions
    overlay = overlay_transfer(TID, contributions, config.guarantee)
    if overlay is not None:
        ledger.execute([overlay])
    overlay_paid = overlay.amount if overlay else 0
    structure = structure_for(config, contributions + overlay_paid, len(reg.active))
    paid: dict[str, int] = {}
    ending = rng.choice(["play", "cancel", "deal"])
    stop_at = rng.randint(2, max(2, len(reg.active)))
    while len(reg.active) > 1:
        active = list(reg.active)
        if ending == "cancel" and len(active) <= stop_at:
            stop(now, overlay_paid, paid, structure)
            return ledger
        if ending == "deal" and len(active) <= min(stop_at, 6):
            prizes = structure.prizes[: len(active)]
            if sum(prizes) > 0:
                stacks = [rng.randint(1, 50_000) for _ in active]
                cap = max_left_to_play(config, structure.pool)
                above = sum(prizes) - min(list(prizes) + [0] * (len(active) - len(prizes))) * len(active)
                left = rng.randint(0, min(cap, above)) if rng.random() < 0.5 else 0
                method = rng.choice([DealMethod.ICM, DealMethod.CHIP_CHOP])
                plan = propose_deal(method, active, stacks, prizes, left_to_play=left)
                done = conclude_deal(TID, plan, active, stacks)
                ledger.execute(done.transfers)
                if done.continuation is not None:
                    winner = rng.choice(active)
                    ledger.execute(prizes_for_finishes(done.continuation, [Finish(1, (winner,), 1)], TID))
                return ledger
        now += rng.uniform(10, 600)
        tie = len(active) >= 3 and rng.random() < 0.2
        out = rng.sample(active, 2 if tie else 1)
        for pid in out:
            ledger.execute(reg.eliminate(pid, now).transfers)
        place = len(active) - len(out) + 1
        transfers = prizes_for_finishes(structure, [Finish(place, tuple(out), len(out))], TID)
        for t in transfers:
            paid[t.target.removeprefix("player:")] = paid.get(t.target.removeprefix("player:"), 0) + t.amount
        ledger.execute(transfers)
    (winner,) = reg.active
    ledger.execute(prizes_for_finishes(structure, [Finish(1, (winner,), 1)], TID))
    return ledger


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tournaments())
def test_money_is_conserved_in_random_tournaments(case: tuple[TournamentConfig, int, int]) -> None:
    config, players, seed = case
    ledger = run_tournament(config, players, seed)
    assert ledger.balance(POOL) == 0, f"the prize pool must end empty, {ledger.balance(POOL)} cents left"
    for account, balance in ledger.balances.items():
        if not may_go_negative(account):
            assert balance >= 0, f"{account} ended at {balance}"
    total = sum(ledger.balances.values())
    assert total == 0, f"money was created or destroyed: the ledger sums to {total}"


def test_money_properties_cover_every_ending() -> None:
    """A fixed sweep so the property run is known to reach each ending, not just by luck."""
    config = TournamentConfig(
        id=TID,
        name="sweep",
        levels=(Level(10, 20, 15),),
        buy_in=1000,
        fee=None,
        starting_stack=1500,
        max_players=10,
        guarantee=20_000,
        rebuys=Rebuys(period_minutes=40, cost=1000, chips=1500),
        add_on=AddOn(cost=700, chips=2000),
        re_entry=ReEntry(max_per_player=1, period_minutes=40),
        late_registration_minutes=30,
    )
    for seed in range(40):
        ledger = run_tournament(replace(config, extended_registration=seed % 2 == 0), 12, seed)
        assert ledger.balance(POOL) == 0, f"seed {seed}: pool left {ledger.balance(POOL)}"
