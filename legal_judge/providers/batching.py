"""Batching as a provider: a wrapper that parks each call until a provider batch answers it.

A run or an audit installs :class:`BatchingProvider` on a judge in place of its provider (same
spec, family and base URL, so the same judge_id and cache keys); the judge's code is the online
path's own (rendering, the cache, the call log, parsing, the JSON retry policy). Each request
carries its :class:`~legal_judge.models.CallContext` (item, purpose, attempt, an audit's slot),
which is what the batch custom id is made of; ``park`` (the batch orchestration's collector, in
:mod:`legal_judge.batch`) holds the request until a batch round or an online follow-up answers
it. An answer that came through a batch is marked ``batched``, so pricing charges the batch rate.

A batch round is submitted only when every flow of calls has parked or ended; a run's flow is
one judgment, which tells the wrapper it ended through ``judgment_ended`` (an audit's pair tasks
count their own flows, and pass no ``judgment_ended``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from legal_judge.models import CompletionRequest, CompletionResponse

__all__ = ["BatchingProvider", "CallRecord", "Park"]

#: Park one request (it carries its context) until it is answered: the response, and whether it
#: came through a batch.
Park = Callable[[CompletionRequest], Awaitable[tuple[CompletionResponse, bool]]]


@dataclass(frozen=True)
class CallRecord:
    """A parked call, and whether it went through a batch (for pricing).

    ``cached`` calls were answered by an identical request's result and cost nothing.
    """

    purpose: str
    via_batch: bool
    input_tokens: int | None
    output_tokens: int | None
    cached: bool = False


class BatchingProvider:
    """Looks like ``inner`` (same spec, family and base URL); parks calls that carry a context.

    Args:
        inner: The judge's own provider (online follow-ups and closing go to it).
        park: Holds a request until a batch (or an online follow-up) answers it.
        judgment_ended: Called when one judgment of the judge ends (a run's flow); None when
            the caller counts its flows itself (an audit).
        record: Keep a :class:`CallRecord` of every parked call (an audit's batch figures).
    """

    #: Identical requests are coalesced by ``park``, not by the caller's single flight.
    parks = True

    def __init__(self, inner: Any, park: Park, *,
                 judgment_ended: Callable[[], None] | None = None, record: bool = False) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.family = inner.family
        self.name = getattr(inner, "name", str(self.spec.raw))
        # Part of the judge_id and of the cache keys: without it a batched judge differs from the
        # online one (another judge_id, cache misses against the online path's entries).
        self.base_url = getattr(inner, "base_url", None)
        self._park = park
        self._ended = judgment_ended
        self.records: list[CallRecord] | None = [] if record else None

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Park the request until it is answered; a request without a context goes online."""
        if request.context is None:
            response: CompletionResponse = await self.inner.complete(request)
            return response
        response, via_batch = await self._park(request)
        if self.records is not None:
            self.records.append(CallRecord(request.context.purpose, via_batch,
                                           response.usage.input_tokens,
                                           response.usage.output_tokens, cached=response.cached))
        return response.model_copy(update={"batched": True}) if via_batch else response

    def judgment_ended(self) -> None:
        """One judgment of the judge ended (the batch round stops waiting for it)."""
        if self._ended is not None:
            self._ended()

    async def aclose(self) -> None:
        """Close the judge's own provider."""
        await self.inner.aclose()
