"""Route a judge's provider calls into batches while the unchanged Judge code drives them.

Each (item, judge) pair runs ``Judge.judge`` as in the online path; the judge's provider is a
:class:`RoutedProvider` whose ``complete`` parks the request in the :class:`Collector` and waits.
When every batch-judge task is parked (the collector is *settled*), the orchestrator submits the
parked requests as batches and resolves the waits with the batch results. Rendering, the cache, the
call log, parsing, the JSON retry policy and the verdict are therefore the online path's own code:
a retry is simply the next request the judge parks, sent in a follow-up batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from legal_judge.batch.base import BatchBackend, CallTag, custom_id
from legal_judge.judge import Judge
from legal_judge.models import BenchmarkItem, CompletionRequest, CompletionResponse, Verdict

__all__ = ["BatchJudge", "CallRecord", "Collector", "Lane", "Pending", "RoutedProvider",
           "recording_calls", "tagged_call"]

_CALL: ContextVar[CallTag | None] = ContextVar("legal_judge_batch_call", default=None)
_TASK: ContextVar[list[CallRecord] | None] = ContextVar("legal_judge_batch_task", default=None)


@dataclass(frozen=True)
class CallRecord:
    """A provider call of one task, and whether it went through a batch (for pricing)."""

    purpose: str
    via_batch: bool
    input_tokens: int | None
    output_tokens: int | None


@dataclass
class Lane:
    """One batch-capable judge: its index in the ensemble, its backend and its online provider."""

    index: int
    label: str
    backend: BatchBackend
    inner: Any


@dataclass
class Pending:
    """A parked request."""

    custom_id: str
    request: CompletionRequest
    lane: Lane
    future: asyncio.Future[tuple[CompletionResponse, bool]]
    follow_up: bool
    resubmits: int = 0
    batch_id: str | None = None
    online: bool = False


@dataclass
class Collector:
    """Parked requests and the count of batch-judge tasks still running."""

    positions: dict[str, int]
    unfinished: int
    pending: dict[str, Pending] = field(default_factory=dict)
    in_flight: dict[str, str] = field(default_factory=dict)
    _event: asyncio.Event = field(default_factory=asyncio.Event)

    def is_settled(self) -> bool:
        """True when every running batch-judge task is parked (or none is left)."""
        return self.unfinished <= 0 or len(self.pending) >= self.unfinished

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
        """Park one request until a batch (or an online follow-up) answers it."""
        position = self.positions[tag.item_id] if tag.position is None else tag.position
        cid = custom_id(lane.index, position, tag.purpose, tag.attempt)
        future: asyncio.Future[tuple[CompletionResponse, bool]] = (
            asyncio.get_running_loop().create_future())
        entry = Pending(cid, request, lane, future, follow_up=tag.attempt > 1,
                        batch_id=self.in_flight.get(cid))
        self.pending[cid] = entry
        self._check()
        return await future

    def task_done(self) -> None:
        """One batch-judge task returned its verdict."""
        self.unfinished -= 1
        self._check()

    def resolve(self, entry: Pending, response: CompletionResponse, *, via_batch: bool) -> None:
        """Answer a parked request."""
        self.pending.pop(entry.custom_id, None)
        if not entry.future.done():
            entry.future.set_result((response, via_batch))

    def fail(self, entry: Pending, error: BaseException) -> None:
        """Fail a parked request (the judge turns a ProviderError into an ``error`` verdict)."""
        self.pending.pop(entry.custom_id, None)
        if not entry.future.done():
            entry.future.set_exception(error)


@contextmanager
def tagged_call(tag: CallTag) -> Iterator[None]:
    """Provider calls made inside are parked under ``tag`` (for callers other than BatchJudge)."""
    token = _CALL.set(tag)
    try:
        yield
    finally:
        _CALL.reset(token)


@contextmanager
def recording_calls(records: list[CallRecord]) -> Iterator[None]:
    """Routed calls made inside append their :class:`CallRecord` to ``records`` (for pricing)."""
    token = _TASK.set(records)
    try:
        yield
    finally:
        _TASK.reset(token)


class RoutedProvider:
    """Looks like the judge's provider (same spec, so the same judge_id and cache keys)."""

    def __init__(self, lane: Lane, collector: Collector) -> None:
        self.lane = lane
        self.collector = collector
        self.spec = lane.inner.spec
        self.family = lane.inner.family
        self.name = getattr(lane.inner, "name", str(self.spec.raw))
        # Part of the judge_id and of the cache keys: without it a routed judge differs from the
        # online one (another judge_id, cache misses against the online path's entries).
        self.base_url = getattr(lane.inner, "base_url", None)

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Park the request; record how it was answered for batch pricing."""
        tag = _CALL.get()
        if tag is None:  # not called through BatchJudge.complete: behave like the provider
            response: CompletionResponse = await self.lane.inner.complete(request)
            return response
        response, via_batch = await self.collector.park(self.lane, tag, request)
        records = _TASK.get()
        if records is not None:
            records.append(CallRecord(tag.purpose, via_batch, response.usage.input_tokens,
                                      response.usage.output_tokens))
        return response

    async def aclose(self) -> None:
        """Close the real provider."""
        await self.lane.inner.aclose()


class BatchJudge(Judge):
    """A Judge whose calls carry their item, purpose and attempt to the routed provider."""

    collector: Collector

    async def complete(self, request: CompletionRequest, *, run_id: str | None, item_id: str,
                       purpose: str, attempt: int) -> CompletionResponse:
        """The online ``complete`` (cache, call log), tagged for the custom id."""
        token = _CALL.set(CallTag(item_id, purpose, attempt))
        try:
            return await super().complete(request, run_id=run_id, item_id=item_id,
                                          purpose=purpose, attempt=attempt)
        finally:
            _CALL.reset(token)

    async def judge(self, item: BenchmarkItem, *, run_id: str | None = None,
                    evidence: str | None = None) -> Verdict:
        """The online ``judge``, then the cost re-priced at batch rates for batch calls."""
        records: list[CallRecord] = []
        token = _TASK.set(records)
        try:
            verdict = await super().judge(item, run_id=run_id, evidence=evidence)
        finally:
            _TASK.reset(token)
            self.collector.task_done()
        return batch_priced(verdict, records, provider=self.provider.spec.prefix, model=self.model)


def batch_priced(verdict: Verdict, records: list[CallRecord], *, provider: str,
                 model: str) -> Verdict:
    """The verdict with its cost recomputed: batch calls at the provider's batch discount.

    The calls counted are those the verdict's cost covers (a failed self-debias pass is not).
    """
    batch_calls = sum(r.via_batch for r in records)
    if not batch_calls or verdict.status == "error":
        return verdict
    from legal_judge.providers.pricing import cost_usd

    sd = verdict.extra.get("self_debias")
    counted = [r for r in records if r.purpose == "verdict" or sd is None
               or sd.get("status") == "ok"]
    total: float | None = 0.0
    for r in counted:
        cost = cost_usd(model, r.input_tokens, r.output_tokens, provider=provider,
                        batch=r.via_batch)
        total = None if total is None or cost is None else total + cost
    return verdict.model_copy(update={"cost_usd": total,
                                      "extra": {**verdict.extra, "batch_calls": batch_calls}})
