"""Collect a judge's provider calls into batches while the unchanged Judge code drives them.

Each (item, judge) pair runs ``Judge.judge`` as in the online path; the judge's provider is a
:class:`~legal_judge.providers.batching.BatchingProvider` (:func:`batching_provider`) whose
``complete`` parks the request in the :class:`Collector` under the custom id its
:class:`~legal_judge.models.CallContext` gives, and waits.
When every batch-judge task is parked (the collector is *settled*), the orchestrator submits the
parked requests as batches and resolves the waits with the batch results. Rendering, the cache, the
call log, parsing, the JSON retry policy and the verdict are therefore the online path's own code:
a retry is simply the next request the judge parks, sent in a follow-up batch.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from legal_judge.batch.base import BatchBackend, CallTag, custom_id, line_digest
from legal_judge.models import CompletionRequest, CompletionResponse
from legal_judge.providers.batching import BatchingProvider, CallRecord
from legal_judge.store import canonical_json

__all__ = ["CallRecord", "Collector", "Lane", "Pending", "batching_provider", "records_cost"]

log = logging.getLogger("legal_judge.batch")


@dataclass
class Lane:
    """One batch-capable judge: its index in the ensemble, its backend and its online provider."""

    index: int
    label: str
    backend: BatchBackend
    inner: Any


@dataclass
class Pending:
    """A parked request, and the identical requests parked after it (answered together)."""

    custom_id: str
    request: CompletionRequest
    lane: Lane
    future: asyncio.Future[tuple[CompletionResponse, bool]]
    follow_up: bool
    key: str = ""
    resubmits: int = 0
    batch_id: str | None = None
    online: bool = False
    followers: list[asyncio.Future[tuple[CompletionResponse, bool]]] = field(default_factory=list)


@dataclass
class Collector:
    """Parked requests, and how many call flows are still running (not parked, not done).

    A *flow* is a chain of provider calls made one after the other: an (item, judge) task of a run,
    or one judgment of an audit pair. The collector is *settled* when every flow is parked or
    done; only then is a round submitted, so a round holds every request that can be made.
    """

    positions: dict[str, int]
    unfinished: int
    pending: dict[str, Pending] = field(default_factory=dict)
    # custom id -> (batch id, digest of the line submitted); adopted from the store on resume.
    in_flight: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    active: int = 0
    coalesce: bool = True  # False with --no-cache: every request is sent, as online
    coalesced: int = 0
    _by_key: dict[str, Pending] = field(default_factory=dict)
    _event: asyncio.Event = field(default_factory=asyncio.Event)

    def start(self, tasks: int) -> None:
        """``tasks`` tasks begin, each one running flow."""
        self.unfinished = self.active = tasks
        self._check()

    def is_settled(self) -> bool:
        """True when every flow is parked or done."""
        return self.unfinished <= 0 or self.active <= 0

    def _check(self) -> None:
        if self.is_settled():
            self._event.set()

    async def wait_settled(self) -> None:
        """Wait until :meth:`is_settled`."""
        while not self.is_settled():
            self._event.clear()
            await self._event.wait()

    async def park(self, lane: Lane, tag: CallTag,
                   request: CompletionRequest) -> tuple[CompletionResponse, bool]:
        """Park one request until a batch (or an online follow-up) answers it.

        A request identical to one already parked (same judge, same body) is not sent twice: it
        waits for the first and gets its answer as a cache hit, as it would online once the first
        call had returned (unless ``coalesce`` is off: ``--no-cache``).
        """
        position = self.positions[tag.item_id] if tag.position is None else tag.position
        cid = custom_id(lane.index, position, tag.purpose, tag.attempt)
        future: asyncio.Future[tuple[CompletionResponse, bool]] = (
            asyncio.get_running_loop().create_future())
        # The request itself, seed included (as the provider cache keys it): a noise-floor repeat
        # differs from the first judgment only by a seed some wires do not carry, and must not
        # be answered by it.
        key = f"{lane.index}:{line_digest(canonical_json(request.model_dump(mode='json')).encode())}"
        entry = Pending(cid, request, lane, future, follow_up=tag.attempt > 1, key=key,
                        batch_id=self._submitted_in(cid, lane, request))
        leader = self._by_key.get(key) if self.coalesce else None
        if leader is not None and (leader.batch_id is not None or entry.batch_id is None):
            leader.followers.append(future)
            self.coalesced += 1
        else:
            if leader is not None:  # the new one is already in a stored batch: it leads
                del self.pending[leader.custom_id]
                entry.followers += [leader.future, *leader.followers]
            self.pending[cid] = entry
            self._by_key[key] = entry
        self.active -= 1
        self._check()
        try:
            return await future
        except asyncio.CancelledError:
            if future.cancelled():  # this flow was cancelled while parked (its audit aborts)
                self.active += 1  # it runs again, only to leave
                self._forget(key)
            raise

    def _forget(self, key: str) -> None:
        """Drop a parked request once nobody waits for its answer any more."""
        entry = self._by_key.get(key)
        if entry is not None and all(f.done() for f in [entry.future, *entry.followers]):
            self.pending.pop(entry.custom_id, None)
            del self._by_key[key]

    def _submitted_in(self, cid: str, lane: Lane, request: CompletionRequest) -> str | None:
        """The stored batch that already holds this very request, if any.

        The same custom id is not enough: a request rendered differently since (another prompt
        version, model or retry history) must not be answered by the old batch's line.
        """
        held = self.in_flight.get(cid)
        if held is None:
            return None
        batch_id, expected = held
        if expected is not None and line_digest(lane.backend.encode(cid, request)) != expected:
            log.warning("request %s differs from the one in batch %s; sending it again",
                        cid, batch_id)
            return None
        return batch_id

    def fork(self, flows: int) -> None:
        """One running flow becomes ``flows`` flows (calls made concurrently)."""
        self.active += flows - 1

    def flow_done(self, *, last: bool) -> None:
        """A forked flow ended; the ``last`` one hands over to the flow that forked it."""
        if not last:
            self.active -= 1
            self._check()

    def task_done(self) -> None:
        """One task finished (its flow ends)."""
        self.unfinished -= 1
        self.active -= 1
        self._check()

    def _release(self, entry: Pending) -> list[asyncio.Future[tuple[CompletionResponse, bool]]]:
        self.pending.pop(entry.custom_id, None)
        if self._by_key.get(entry.key) is entry:
            del self._by_key[entry.key]
        waiting = [f for f in [entry.future, *entry.followers] if not f.done()]
        self.active += len(waiting)  # they run again from now on, before their tasks resume
        return waiting

    def resolve(self, entry: Pending, response: CompletionResponse, *, via_batch: bool) -> None:
        """Answer a parked request (and the identical requests parked after it)."""
        waiting = self._release(entry)
        for f in waiting:
            f.set_result((response, via_batch) if f is entry.future else
                         (response.model_copy(update={"cached": True}), via_batch))

    def fail(self, entry: Pending, error: BaseException) -> None:
        """Fail a parked request (the judge turns a ProviderError into an ``error`` verdict)."""
        for f in self._release(entry):
            f.set_exception(error)


def batching_provider(lane: Lane, collector: Collector, *, judgment_is_flow: bool,
                      record: bool = False) -> BatchingProvider:
    """The lane's provider wrapped to park its calls in ``collector`` under their custom ids.

    Args:
        lane: The judge's lane (its index, backend and online provider).
        collector: Where the calls park until a batch round answers them.
        judgment_is_flow: Each judgment is one flow that ends with it (a run); False when the
            caller counts its flows (an audit's pair tasks).
        record: Keep a record of every call (an audit's batch figures).
    """
    async def park(request: CompletionRequest) -> tuple[CompletionResponse, bool]:
        ctx = request.context
        assert ctx is not None  # the wrapper parks only requests that carry a context
        tag = CallTag(ctx.item, ctx.purpose, ctx.attempt, position=ctx.slot)
        return await collector.park(lane, tag, request)

    return BatchingProvider(lane.inner, park, record=record,
                            judgment_ended=collector.task_done if judgment_is_flow else None)


def records_cost(records: list[CallRecord], *, provider: str, model: str,
                 batch_rates: bool = True) -> float | None:
    """What the calls cost: batch calls at the batch discount (unless not ``batch_rates``),
    coalesced calls nothing; None when a price is unknown."""
    from legal_judge.providers.pricing import cost_usd

    total: float | None = 0.0
    for r in records:
        if r.cached:
            continue
        cost = cost_usd(model, r.input_tokens, r.output_tokens, provider=provider,
                        batch=batch_rates and r.via_batch)
        total = None if total is None or cost is None else total + cost
    return total

