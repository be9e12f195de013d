"""The tournament as players see it on the wire: the director's announcements as ``protocol``
tournament events, and the lobby summary and tournament state of a director. Pure functions;
the coordinator sends what they return.
"""

from __future__ import annotations

from engine import betting
from engine.tournament import director as d
from engine.tournament.deals import DealMethod, NegotiationPhase
from engine.tournament.levels import BreakKind as EngineBreakKind
from engine.tournament.registration import CloseReason as EngineCloseReason
from engine.tournament.settlement import SettlementKind as EngineSettlementKind
from protocol import kinds
from protocol import tournament_events as wire
from protocol.server_messages import OpPlayer, TournamentState, TournamentSummary
from server.clock import milliseconds

ANTES = {
    betting.AnteKind.NONE: kinds.AnteKind.NONE,
    betting.AnteKind.EACH: kinds.AnteKind.EACH,
    betting.AnteKind.BIG_BLIND: kinds.AnteKind.BIG_BLIND,
}
LIMITS = {
    betting.Limit.NO_LIMIT: kinds.Limit.NO_LIMIT,
    betting.Limit.POT_LIMIT: kinds.Limit.POT_LIMIT,
    betting.Limit.FIXED_LIMIT: kinds.Limit.FIXED_LIMIT,
}
BREAKS = {kind: kinds.BreakKind(kind.value.replace("-", "_")) for kind in EngineBreakKind}
CLOSES = {reason: kinds.CloseReason(reason.value.replace("-", "_")) for reason in EngineCloseReason}
# RESTART has no wire form: a tournament that restarts is not cancelled
SETTLEMENTS = {
    kind: kinds.SettlementKind(kind.value.replace("-", "_"))
    for kind in EngineSettlementKind
    if kind is not EngineSettlementKind.RESTART
}
STATUSES = {
    d.Status.REGISTERING: kinds.TournamentStatus.REGISTERING,
    d.Status.RUNNING: kinds.TournamentStatus.RUNNING,
    d.Status.FINISHED: kinds.TournamentStatus.FINISHED,
    d.Status.CANCELLED: kinds.TournamentStatus.CANCELLED,
}


def tournament_event(command: d.Command, director: d.Director) -> wire.TournamentEventBody | None:
    """The public tournament event a director command announces, if any (``rebuy_offered`` goes
    to one player only: ``RebuyOffered`` is not public)."""
    if isinstance(command, d.TournamentStarted):
        return wire.TournamentStarted(players=command.players, tables=command.tables)
    if isinstance(command, d.RegistrationClosed):
        return wire.RegistrationClosed(reason=CLOSES[command.reason])
    if isinstance(command, d.LevelStarted):
        level = command.level
        return wire.LevelStarted(
            level=command.number,
            small_blind=level.small_blind,
            big_blind=level.big_blind,
            ante=level.ante,
            ante_kind=ANTES[level.ante_kind],
            ends_ms=_next_level_ms(director),
        )
    if isinstance(command, d.BreakStarted):
        return wire.BreakStarted(kind=BREAKS[command.kind], until_ms=milliseconds(command.until))
    if isinstance(command, d.BreakEnded):
        return wire.BreakEnded()
    if isinstance(command, d.AddOnsOffered):
        return wire.AddOnsOffered(until_ms=milliseconds(command.until))
    if isinstance(command, d.HandForHandStarted):
        return wire.HandForHandStarted(players_left=command.players_left, places_paid=command.places_paid)
    if isinstance(command, d.HandForHandEnded):
        return wire.HandForHandEnded(hands=command.hands)
    if isinstance(command, d.BubbleBurst):
        return wire.BubbleBurst(in_sync=command.in_sync)
    if isinstance(command, d.FinalTable):
        return wire.FinalTable(table_id=command.table_id)
    if isinstance(command, d.PlayerEliminated):
        return wire.Eliminated(
            player=command.player,
            place=command.place,
            shared_places=command.shared_places,
            prize_cents=command.prize,
        )
    if isinstance(command, d.TournamentPaused):
        return wire.Paused()
    if isinstance(command, d.TournamentResumed):
        return wire.Resumed()
    if isinstance(command, d.TournamentEnded):
        prizes = dict(command.prizes)
        return wire.TournamentEnded(
            results=[
                wire.PlaceResult(
                    place=finish.place,
                    players=list(finish.players),
                    prize_cents=sum(prizes.get(player, 0) for player in finish.players)
                    // max(1, len(finish.players)),
                )
                for finish in command.finishes
            ]
        )
    if isinstance(command, d.TournamentCancelled) and command.kind in SETTLEMENTS:
        return wire.Cancelled(kind=SETTLEMENTS[command.kind])
    if isinstance(command, d.DealTalks):
        return deal_talks(command, director)
    if isinstance(command, d.DealDone):
        return wire.DealDone(
            shares=[wire.DealShare(player=p, chips=0, cents=cents) for p, cents in command.shares],
            left_to_play_cents=command.left_to_play,
            ends=command.ends,
        )
    return None


DEAL_PHASES = {phase: kinds.DealPhase(phase.value) for phase in NegotiationPhase}
DEAL_METHODS = {
    DealMethod.ICM: kinds.DealMethod.ICM,
    DealMethod.CHIP_CHOP: kinds.DealMethod.CHIP_CHOP,
}


def deal_talks(command: d.DealTalks, director: d.Director) -> wire.DealTalks:
    """The talks at the final table: who is in them, their chips, the proposal's numbers."""
    chips = {seated.player: seated.stack for table in director.tables.values() for seated in table.players}
    plan = command.plan
    structure = director.structure()
    remaining = sum(structure.prize(place) for place in range(1, len(chips) + 1))
    return wire.DealTalks(
        phase=DEAL_PHASES[command.phase],
        players=sorted(chips),
        asked=list(command.asked),
        accepted=list(command.accepted),
        method=None if plan is None else DEAL_METHODS.get(plan.method),
        shares=[]
        if plan is None
        else [
            wire.DealShare(player=player, chips=chips.get(player, 0), cents=cents)
            for player, cents in sorted(plan.shares.items())
        ],
        left_to_play_cents=0 if plan is None else plan.left_to_play,
        remaining_cents=remaining,
    )


def results(director: d.Director) -> list[wire.PlaceResult]:
    """The places decided so far, first place first, with what each player there won."""
    if director.standings is None:
        return []
    paid = director.prizes_paid
    return [
        wire.PlaceResult(
            place=finish.place,
            players=list(finish.players),
            prize_cents=sum(paid.get(player, 0) for player in finish.players) // max(1, len(finish.players)),
        )
        for finish in sorted(director.standings.finishes, key=lambda finish: finish.place)
    ]


def players(director: d.Director, away: set[str] | frozenset[str] = frozenset()) -> list[OpPlayer]:
    """Every player of the tournament as an operator sees them."""
    registration = director.registration
    places: dict[str, int] = {}
    if director.standings is not None:
        for finish in director.standings.finishes:
            for player in finish.players:
                places[player] = finish.place
    paid = director.prizes_paid
    seats: dict[str, tuple[int, int, int, bool]] = {}
    for table_id, table in director.tables.items():
        for seated in table.players:
            seats[seated.player] = (table_id, seated.seat, seated.stack, seated.absent)
    out: list[OpPlayer] = []
    for player in [*registration.registered, *registration.waiting]:
        seat = seats.get(player)
        if player in registration.waiting:
            status = kinds.RegistrationStatus.WAITING
        elif player in places or registration.is_eliminated(player):
            status = kinds.RegistrationStatus.ELIMINATED
        elif director.status is d.Status.RUNNING:
            status = kinds.RegistrationStatus.PLAYING
        else:
            status = kinds.RegistrationStatus.REGISTERED
        out.append(
            OpPlayer(
                player=player,
                status=status,
                table_id=None if seat is None else seat[0],
                seat=None if seat is None else seat[1],
                chips=None if seat is None else seat[2],
                away=seat is not None and (seat[3] or player in away),
                place=places.get(player),
                prize_cents=paid.get(player) if player in places or player in paid else None,
            )
        )
    return out


def _next_level_ms(director: d.Director) -> int | None:
    at = director.next_level_at()
    return None if at is None else milliseconds(at)


def state(director: d.Director) -> TournamentState:
    """The ``tournament_state`` of ``director`` now."""
    levels = director.clock.levels
    index = min(director.level_index, len(levels) - 1)
    level = levels[index]
    started = director.status is not d.Status.REGISTERING
    elapsed = director.elapsed(director.now)
    window = director.clock.next_break(elapsed) if director.status is d.Status.RUNNING else None
    on_break = window is not None and window.start <= elapsed
    structure = director.structure()
    left = director.players_left
    chips = director.chips_issued - director.chips_removed
    return TournamentState(
        tournament_id=director.config.id,
        status=STATUSES[director.status],
        paused=director.paused,
        level=index + 1 if started else 0,
        small_blind=level.small_blind,
        big_blind=level.big_blind,
        ante=level.ante,
        ante_kind=ANTES[level.ante_kind],
        next_level_ms=_next_level_ms(director) if director.status is d.Status.RUNNING else None,
        next_break_ms=None if window is None or on_break else milliseconds(director.start_at + window.start),
        break_until_ms=milliseconds(director.start_at + window.end)
        if window is not None and on_break
        else None,
        players_left=left,
        entrants=director.registration.entries,
        average_stack=chips // left if started and left else 0,
        prize_pool_cents=max(director.prize_pool, structure.pool),
        payouts_cents=list(structure.prizes[:1000]),
        payouts_final=director.purchases_final,
        hand_for_hand=director.hand_for_hand,
    )


def summary(director: d.Director, name: str) -> TournamentSummary:
    """The lobby's line for ``director``'s tournament."""
    config = director.config
    late = config.late_registration_minutes * 60
    fee = config.fee if config.fee is not None else 0
    return TournamentSummary(
        tournament_id=config.id,
        name=name,
        status=STATUSES[director.status],
        game=kinds.Game(config.game),
        limit=LIMITS[config.limit],
        buy_in_cents=config.buy_in,
        fee_cents=fee,
        starting_stack=config.starting_stack,
        entrants=director.registration.entries,
        players_left=director.players_left,
        max_players=config.max_players,
        prize_pool_cents=max(director.prize_pool, director.registration.pool_contributions),
        guarantee_cents=config.guarantee,
        start_ms=milliseconds(director.start_at),
        late_registration_until_ms=milliseconds(director.start_at + late) if late else None,
        rebuys=config.rebuys is not None,
        add_on=config.add_on is not None,
    )
