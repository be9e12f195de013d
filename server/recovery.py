"""A tournament's director as the journal has it: the newest readable snapshot, then every input
written after it (CRASH-1). The coordinator resumes from it after a restart; the crash campaign
reads it to check that nothing was lost.

A snapshot that cannot be read (damaged, another format) is skipped with a warning and the one
before it is used: the journal keeps every input after the second newest snapshot for that.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field

import msgspec

from engine.tournament import director as d
from engine.tournament import inputs
from engine.tournament.transfers import Transfer
from server.store.errors import JournalError
from server.store.journal import Journal

log = logging.getLogger("feltd.recovery")


@dataclass(slots=True)
class Restored:
    """The director rebuilt, and what the replay went through: the inputs after the snapshot,
    the money they moved (to post again: the same keys move nothing twice), the last entry's
    number and clock time."""

    director: d.Director
    base_seq: int
    seq: int
    last_at: float
    replayed: list[inputs.AnyInput] = field(default_factory=list)
    transfers: list[Transfer] = field(default_factory=list)


async def load_director(journal: Journal, tournament_id: str) -> Restored | None:
    """The director of ``tournament_id`` as of its last journal entry; ``None`` when it has no
    snapshot. Raises ``JournalError`` when an entry is missing or cannot be read."""
    director: d.Director | None = None
    base = None
    for stored in await journal.snapshots(tournament_id, limit=2):
        try:
            if stored.format != d.DIRECTOR_SNAPSHOT_VERSION:
                raise d.DirectorError(f"format {stored.format} is not {d.DIRECTOR_SNAPSHOT_VERSION}")
            snapshot = msgspec.msgpack.decode(stored.data, type=d.DirectorSnapshot)
            director = d.Director.restore(snapshot, random.Random())
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as error:
            log.warning(
                "%s: director snapshot %d cannot be read (%s): trying the one before",
                tournament_id,
                stored.seq,
                error,
            )
            continue
        base = stored
        break
    if director is None or base is None:
        return None
    # A snapshot keeps a table in a hand as it was when the hand began; dealing those hands again
    # (the same setups: only the deck, which the director never holds, would differ) puts the
    # director where it was when the snapshot was taken, so the inputs after it apply as they did.
    director.recover(director.now)
    restored = Restored(director, base.seq, base.seq, director.now)
    for seq, at, data in await journal.entries_after(tournament_id, base.seq):
        if seq != restored.seq + 1:
            raise JournalError(f"{tournament_id}: journal entry {restored.seq + 1} is missing (found {seq})")
        try:
            value = inputs.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            raise JournalError(f"{tournament_id}: journal entry {seq} cannot be read: {error}") from None
        for command in inputs.apply(director, value):
            if isinstance(command, d.PostTransfers):
                restored.transfers.extend(command.transfers)
        restored.replayed.append(value)
        restored.seq = seq
        restored.last_at = max(restored.last_at, at)
    # The replayed director believes the hands it dealt are under way; none is any more (those
    # the ``recover`` above dealt again too, with nothing replayed after the snapshot: skipped
    # here, the coordinator's ``recover`` would find them dealt and deal nothing, for ever).
    # Through a snapshot (which keeps a table in a hand as it was when the hand began) it forgets
    # them, and ``recover`` deals them again (CRASH-1).
    data = msgspec.msgpack.encode(director.snapshot())
    restored.director = d.Director.restore(
        msgspec.msgpack.decode(data, type=d.DirectorSnapshot), random.Random()
    )
    return restored
