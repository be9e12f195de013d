"""What an operator's connection may ask (every type starts with ``op_``), and the final-table
deal requests players send.

Operator requests need an operator's token (``feltd admin operator add`` prints one); from any
other connection they are refused with ``forbidden`` and change nothing. Each carries a required
``request_id`` and is answered by exactly one reply naming it: ``ack``, ``error``, or the
``op_`` answer the request names (``op_tournaments``, ``op_tournament``, ``op_results``).
Operators see what they did in the operators' event stream (``op_subscribe``): every command is
noted there, with who gave it.

Deal requests (``deal_ask``, ``deal_propose``, ``deal_accept``, ``deal_abandon``) come from the
players at the final table (DEAL-1..4 in docs/rules.md); their progress goes to every follower of
the tournament as ``deal_talks`` and ``deal_done`` tournament events.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from protocol.kinds import DealMethod, InMoneyMethod
from protocol.structs import Count, Id, Message, Millis, Positive

TOML_MAX_CHARS = 12_000
"""A tournament definition sent by ``op_tournament_create`` or ``op_tournament_edit``."""
NOTICE_MAX_CHARS = 500
"""An operator's message to players."""

Toml = Annotated[str, msgspec.Meta(min_length=1, max_length=TOML_MAX_CHARS)]
Text = Annotated[str, msgspec.Meta(min_length=1, max_length=NOTICE_MAX_CHARS)]


# --- tournaments ---------------------------------------------------------------------------------


class OpTournamentCreate(Message, frozen=True, kw_only=True):
    """Schedule a tournament from its TOML definition (docs/rules.md lists every setting), to
    start at ``start_ms`` (``None``: five minutes from now; up to a minute past: now). Answered
    by ``op_tournament``."""

    request_id: Id
    toml: Toml
    start_ms: Millis | None = None


class OpTournamentEdit(Message, frozen=True, kw_only=True):
    """Before the start: a new definition and/or start time. Once players have registered, the
    buy-in and fee may not change (their money is in). Answered by ``op_tournament``."""

    request_id: Id
    tournament_id: Id
    toml: Toml | None = None
    start_ms: Millis | None = None


class OpTournamentDelete(Message, frozen=True, kw_only=True):
    """Take a tournament nobody has registered for off the schedule (with entrants: cancel it)."""

    request_id: Id
    tournament_id: Id


class OpTournamentList(Message, frozen=True, kw_only=True):
    """Every tournament this server runs or ran since it started, as the lobby has them, and
    those only scheduled in the store. Answered by ``op_tournaments``."""

    request_id: Id


class OpTournamentShow(Message, frozen=True, kw_only=True):
    """One tournament in full: its summary, state, definition and players. Answered by
    ``op_tournament``."""

    request_id: Id
    tournament_id: Id


class OpTournamentStart(Message, frozen=True, kw_only=True):
    """Start now, before the scheduled time (the level clock counts from now)."""

    request_id: Id
    tournament_id: Id


class OpTournamentPause(Message, frozen=True, kw_only=True):
    """Stop the clock: every table finishes the hand it is playing, then waits."""

    request_id: Id
    tournament_id: Id


class OpTournamentResume(Message, frozen=True, kw_only=True):
    request_id: Id
    tournament_id: Id


class OpTournamentCancel(Message, frozen=True, kw_only=True):
    """Stop for good and settle by CANCEL-1: before the start everyone is refunded; after it,
    the money is shared by the players left (``in_money``: by chips or by ICM) as docs/payouts.md
    says. Every player is told what they got (``tournament_event`` ``cancelled``, a ``notice``
    with their cents, ``balance``)."""

    request_id: Id
    tournament_id: Id
    in_money: InMoneyMethod = InMoneyMethod.CHIPS


class OpTournamentResults(Message, frozen=True, kw_only=True):
    """The places and prizes so far (all of them once finished). Answered by ``op_results``."""

    request_id: Id
    tournament_id: Id


# --- players -----------------------------------------------------------------------------------


class OpPlayerRegister(Message, frozen=True, kw_only=True):
    """Register ``player`` (by id), paying from their own balance as if they had asked."""

    request_id: Id
    tournament_id: Id
    player: Id


class OpPlayerUnregister(Message, frozen=True, kw_only=True):
    """Before the start: give ``player`` their buy-in and fee back and take them off."""

    request_id: Id
    tournament_id: Id
    player: Id


class OpRemoveNoShows(Message, frozen=True, kw_only=True):
    """Before the start: unregister (with a full refund) every registered player who has not
    connected since they registered or since the server started. After the start absent players
    are dealt in and blinded (CLK-2): disqualify one to remove them."""

    request_id: Id
    tournament_id: Id


class OpPenalize(Message, frozen=True, kw_only=True):
    """PEN-1: ``player`` sits out their next ``hands`` hands (dealt in, posting, folded)."""

    request_id: Id
    tournament_id: Id
    player: Id
    hands: Positive


class OpDisqualify(Message, frozen=True, kw_only=True):
    """PEN-1: ``player`` is out now (or when their hand ends), their chips out of play."""

    request_id: Id
    tournament_id: Id
    player: Id


class OpSitOut(Message, frozen=True, kw_only=True):
    """Mark ``player`` away (``away``: true; dealt in, checked or folded at once) or back."""

    request_id: Id
    tournament_id: Id
    player: Id
    away: bool = True


class OpMessage(Message, frozen=True, kw_only=True):
    """A notice to the players: of the whole tournament, of one table (``table_id``) or to one
    player (``player``). They receive it as ``notice``."""

    request_id: Id
    tournament_id: Id
    text: Text
    table_id: Positive | None = None
    player: Id | None = None


# --- the event stream --------------------------------------------------------------------------


class OpSubscribe(Message, frozen=True, kw_only=True):
    """Receive ``op_event`` for one tournament (``tournament_id``) or for all (``None``):
    registrations, eliminations, payouts, status changes, operators' commands, errors."""

    request_id: Id | None = None
    tournament_id: Id | None = None


class OpUnsubscribe(Message, frozen=True, kw_only=True):
    request_id: Id | None = None
    tournament_id: Id | None = None


# --- deals at the final table (players) --------------------------------------------------------


class DealAsk(Message, frozen=True, kw_only=True):
    """DEAL-1/2: ask for a deal. Once every player at the final table has, the clock stops."""

    tournament_id: Id
    request_id: Id


class DealPropose(Message, frozen=True, kw_only=True):
    """DEAL-3: propose dividing the prizes not yet paid by ICM or by chips, keeping
    ``left_to_play_cents`` to play for (at most what the operator allows). The numbers come to
    everyone as ``deal_talks``; a new proposal replaces the one before and clears acceptances."""

    tournament_id: Id
    request_id: Id
    method: DealMethod = DealMethod.ICM
    left_to_play_cents: Count = 0


class DealAccept(Message, frozen=True, kw_only=True):
    """Accept the proposal on the table; when every player has, it is paid (DEAL-4)."""

    tournament_id: Id
    request_id: Id


class DealAbandon(Message, frozen=True, kw_only=True):
    """Walk away from the talks: the clock runs again and play goes on."""

    tournament_id: Id
    request_id: Id


OperatorRequest = (
    OpTournamentCreate
    | OpTournamentEdit
    | OpTournamentDelete
    | OpTournamentList
    | OpTournamentShow
    | OpTournamentStart
    | OpTournamentPause
    | OpTournamentResume
    | OpTournamentCancel
    | OpTournamentResults
    | OpPlayerRegister
    | OpPlayerUnregister
    | OpRemoveNoShows
    | OpPenalize
    | OpDisqualify
    | OpSitOut
    | OpMessage
    | OpSubscribe
    | OpUnsubscribe
)
"""Requests only an operator's connection may send."""

DealRequest = DealAsk | DealPropose | DealAccept | DealAbandon
