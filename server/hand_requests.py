"""``hand_list`` and ``hand_history``: stored hands for the replayer, as the asker may see them.

The store keeps every hand with every hole card (the operator's record). A player is answered
only about hands they were dealt in, cut to their own view by ``own_phh`` (their hole cards, and
others' only where shown at the showdown), the same cut ``feltd history export --player`` makes.
A hand the player was not dealt in is answered exactly as a hand that does not exist, so ids
cannot be probed. Observers get nothing.
"""

from __future__ import annotations

import logging

import asyncpg

from engine.history.phh import PhhError, PhhHand, loads_phh
from protocol.client_messages import HandHistory, HandList
from protocol.errors import ErrorCode
from protocol.kinds import Role
from protocol.server_messages import Error, HandHistories, HandRecord, HandSummary
from server.cli.history_export import own_phh
from server.clock import milliseconds
from server.store.errors import HandHistoryError, StoreError
from server.store.histories import HandHistories as StoredHands
from server.store.histories import HandRecord as StoredHand

HandAnswer = HandHistories | HandRecord | Error

log = logging.getLogger("feltd.gateway")


async def answer(
    histories: StoredHands, role: Role, player: str | None, request: HandList | HandHistory
) -> HandAnswer:
    """The reply to ``request`` from a connection of ``role`` (``player`` for a player's); a
    database that does not answer is ``server_busy`` (the request may be sent again)."""
    try:
        return await _answer(histories, role, player, request)
    except (StoreError, asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as error:
        log.error("%s: the store did not answer: %s", request.request_id, error)
        return _error(
            ErrorCode.SERVER_BUSY, "the stored hands cannot be read now; try again", request.request_id
        )


async def _answer(
    histories: StoredHands, role: Role, player: str | None, request: HandList | HandHistory
) -> HandAnswer:
    request_id = request.request_id
    if role is Role.OBSERVER or (role is Role.PLAYER and player is None):
        text = "stored hands are for the players dealt in and operators"
        return _error(ErrorCode.FORBIDDEN, text, request_id)
    viewer = player if role is Role.PLAYER else None
    if isinstance(request, HandList):
        return await _list(histories, viewer, request)
    try:
        stored = await histories.get(request.hand_id)
    except HandHistoryError:
        stored = None
    if stored is None or (viewer is not None and viewer not in {p.player_id for p in stored.players}):
        return _error(ErrorCode.NOT_FOUND, f"no stored hand {request.hand_id!r} of yours", request_id)
    own = stored.phh if viewer is None else _own(stored.phh, viewer)
    try:
        hand = loads_phh(own) if own is not None else None
    except PhhError:
        hand = None
    if hand is None:
        return _error(ErrorCode.NOT_AVAILABLE, f"hand {stored.hand_id!r} has no PHH record", request_id)
    return _record(request_id, stored, hand)


async def _list(histories: StoredHands, viewer: str | None, request: HandList) -> HandAnswer:
    if viewer is None:
        if request.tournament_id is None:
            return _error(
                ErrorCode.INVALID_FIELD, "an operator's hand_list names a tournament_id", request.request_id
            )
        hands = await histories.latest(tournament_id=request.tournament_id, limit=request.limit)
    else:
        hands = await histories.latest(
            tournament_id=request.tournament_id, player_id=viewer, limit=request.limit
        )
    return HandHistories(
        request_id=request.request_id,
        hands=[
            HandSummary(
                hand_id=h.hand_id,
                tournament_id=h.tournament_id,
                table_id=h.table_id,
                hand_number=h.hand_number,
                finished_at_ms=milliseconds(h.finished_at.timestamp()),
                players=[p.player_id for p in sorted(h.players, key=lambda p: p.seat)],
            )
            for h in hands
        ],
    )


def _own(text: str, player: str) -> str | None:
    try:
        return own_phh(text, player)
    except PhhError:
        return None


def _record(request_id: str, stored: StoredHand, hand: PhhHand) -> HandRecord | Error:
    names = list(hand.players or ())
    starting = [s for s in hand.starting_stacks if s is not None]
    if hand.scale != 1 or len(starting) != len(names) or hand.seats is None:
        text = f"hand {stored.hand_id!r} has no complete PHH record"
        return _error(ErrorCode.NOT_AVAILABLE, text, request_id)
    return HandRecord(
        request_id=request_id,
        hand_id=stored.hand_id,
        tournament_id=stored.tournament_id,
        table_id=stored.table_id,
        hand_number=stored.hand_number,
        finished_at_ms=milliseconds(stored.finished_at.timestamp()),
        variant=hand.variant,
        seat_count=hand.seat_count or max(hand.seats),
        players=names,
        seats=list(hand.seats),
        starting_stacks=starting,
        finishing_stacks=list(hand.finishing_stacks or ()),
        antes=list(hand.antes),
        blinds_or_straddles=list(hand.blinds_or_straddles),
        actions=list(hand.actions),
    )


def _error(code: ErrorCode, text: str, request_id: str) -> Error:
    return Error(code=code, message=text, request_id=request_id, fatal=False)
