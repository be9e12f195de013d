"""Group commit for money: many callers' ledger posts share one database transaction.

Each caller (a coordinator, a table actor) awaits ``LedgerWriter.post(transfers)`` exactly as it
would await ``Ledger.post(transfers)``. Whatever arrives while a post is being written (or within
``max_wait_s`` of the first arrival, if set) goes out next as one ``ledger_post`` call: one round
trip and one durable commit for the lot, which is what a single post spends most of its time on.

Promises, the same as ``Ledger.post`` for each caller:

- A caller's batch is atomic: all of its new transfers post or none does.
- Keys already in the ledger are replays (first result returned, ``replayed``); a key that names
  another movement raises ``IdempotencyConflict``; a batch that would overdraw an account raises
  ``InsufficientFunds`` for that caller only. Bad input (``verify_post``) raises at once and never
  reaches the queue.
- The outcome is the one posting the callers' batches one by one, in arrival order, would give:
  transfers apply in that order, and two waiting batches that share a key never go out in the same
  combined batch (the later one waits for the next, so it sees the first as a replay or conflict).
- If the combined batch is refused (one caller's insufficient funds, a conflict), nothing of it
  was posted, and the writer falls back: on ``InsufficientFunds`` it posts the callers before the
  failing one together, the failing one alone (its own result or error), then the rest together
  (again splitting on failure); on any other refusal or failure of the combined batch (a
  conflict, a transfer the database cannot store, the database failing) it posts the callers one
  by one, so one caller's bad batch fails that caller only. No money moves twice: a combined batch
  is all or nothing, and a fallback post of a key that did commit is a replay.
- Every error a caller gets is a ``StoreException`` (``Ledger.post``'s); bad input
  (``verify_post``: an amount past 64 bits, a key past 1024 bytes, an unknown reason...) is
  raised at once, to that caller, and never reaches the queue.
- A caller's ``fence`` (``server.store.fencing``) is checked in the transaction its batch goes
  out in: a stale one raises ``FencedOut`` to that caller (nothing of its batch posted) and the
  others' batches go out without it.
- A caller cancelled before its batch was sent has nothing posted; once sent, cancelling the wait
  does not stop the post. At most ``max_pending`` callers wait (more wait for room).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.tournament.transfers import Transfer
from server.store.errors import FencedOut, InsufficientFunds, StoreException
from server.store.fencing import Fence
from server.store.ledger import Ledger, PostResult, verify_post


@dataclass(slots=True)
class _Waiting:
    """One caller's batch and where its answer goes."""

    transfers: tuple[Transfer, ...]
    future: asyncio.Future[PostResult]
    keys: frozenset[str] = field(default_factory=frozenset)
    fence: Fence | None = None

    @property
    def fences(self) -> tuple[Fence, ...]:
        return () if self.fence is None else (self.fence,)


class LedgerWriter:
    """Group commit for ledger posts (see the module docstring for every promise).

    ``max_transfers`` bounds one combined batch (a single caller's larger batch still goes out
    whole, alone); ``max_wait_s`` (default 0: no timer) lets an idle writer wait that long for
    company before sending; ``close`` waits until everything handed to ``post`` is answered.
    """

    def __init__(
        self, ledger: Ledger, *, max_transfers: int = 1000, max_pending: int = 10_000, max_wait_s: float = 0.0
    ) -> None:
        if max_transfers < 1 or max_pending < 1 or max_wait_s < 0:
            raise ValueError("max_transfers and max_pending are at least 1, max_wait_s is not negative")
        self._ledger = ledger
        self._max_transfers = max_transfers
        self._max_wait_s = max_wait_s
        self._pending: list[_Waiting] = []
        self._room = asyncio.Semaphore(max_pending)
        self._flusher: asyncio.Task[None] | None = None
        self.batches_written = 0
        self.fallbacks = 0

    async def post(self, transfers: Sequence[Transfer], *, fence: Fence | None = None) -> PostResult:
        """Post ``transfers`` atomically with other callers' batches; same result and errors as
        ``Ledger.post`` (``FencedOut`` when ``fence`` is stale)."""
        batch = tuple(transfers)
        verify_post(batch)
        if not batch:
            return PostResult(())
        await self._room.acquire()
        future: asyncio.Future[PostResult] = asyncio.get_running_loop().create_future()
        self._pending.append(_Waiting(batch, future, frozenset(t.idempotency_key for t in batch), fence))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="ledger-writer")
        return await future

    async def close(self) -> None:
        """Wait until everything handed to ``post`` is answered."""
        while self._flusher is not None and not self._flusher.done():
            await self._flusher

    def _next_group(self) -> list[_Waiting]:
        """The oldest waiting batches that fit in one combined batch and share no key; the rest
        keep their order for the next round. Batches whose caller gave up are dropped unsent."""
        group: list[_Waiting] = []
        keys: set[str] = set()
        size = 0
        kept: list[_Waiting] = []
        for waiting in self._pending:
            if waiting.future.done():
                self._room.release()
                continue
            fits = not group or size + len(waiting.transfers) <= self._max_transfers
            # Once one batch waits, later ones wait too, so batches go out in arrival order.
            if fits and not kept and keys.isdisjoint(waiting.keys):
                group.append(waiting)
                keys |= waiting.keys
                size += len(waiting.transfers)
            else:
                kept.append(waiting)
        self._pending = kept
        return group

    async def _flush(self) -> None:
        if self._max_wait_s:
            await asyncio.sleep(self._max_wait_s)
        while self._pending:
            group = self._next_group()
            try:
                # Every Exception is routed to the callers inside; only cancellation gets here.
                await self._post_group(group)
            except BaseException:
                for waiting in group:
                    waiting.future.cancel()
                raise
            finally:
                for _ in group:
                    self._room.release()

    async def _post_group(self, group: list[_Waiting]) -> None:
        """Post ``group`` as one batch; on a ledger refusal, split it so each caller gets its own
        answer. Other failures go to every caller of the group."""
        while group:
            if len(group) == 1:
                await self._post_alone(group[0])
                return
            try:
                result = await self._ledger.post(
                    [t for waiting in group for t in waiting.transfers],
                    fences=[f for waiting in group for f in waiting.fences],
                )
            except FencedOut as fenced:
                # Whose lease it was: they get the refusal, the rest go out again without them.
                stale = Fence(fenced.resource, fenced.token)
                for waiting in group:
                    if waiting.fence == stale and not waiting.future.done():
                        waiting.future.set_exception(fenced)
                group = [waiting for waiting in group if waiting.fence != stale]
                continue
            except InsufficientFunds as refused:
                self.fallbacks += 1
                failing = next(
                    (i for i, waiting in enumerate(group) if refused.idempotency_key in waiting.keys), None
                )
                if failing is None:
                    await self._one_by_one(group)
                    return
                # Everything before the failing batch passed the in-order check: it goes together
                # (and splits again only if balances changed meanwhile). Then the failing batch
                # alone, for its own answer, and the rest together, round the loop.
                await self._post_group(group[:failing])
                await self._post_alone(group[failing])
                group = group[failing + 1 :]
                continue
            except StoreException:
                self.fallbacks += 1
                await self._one_by_one(group)
                return
            except Exception as error:
                for waiting in group:
                    if not waiting.future.done():
                        waiting.future.set_exception(error)
                return
            self.batches_written += 1
            start = 0
            for waiting in group:
                end = start + len(waiting.transfers)
                if not waiting.future.done():
                    waiting.future.set_result(PostResult(result.transactions[start:end]))
                start = end
            return

    async def _one_by_one(self, group: list[_Waiting]) -> None:
        for waiting in group:
            await self._post_alone(waiting)

    async def _post_alone(self, waiting: _Waiting) -> None:
        try:
            result = await self._ledger.post(waiting.transfers, fences=waiting.fences)
        except Exception as error:
            if not waiting.future.done():
                waiting.future.set_exception(error)
            return
        self.batches_written += 1
        if not waiting.future.done():
            waiting.future.set_result(result)


__all__ = ["LedgerWriter"]
