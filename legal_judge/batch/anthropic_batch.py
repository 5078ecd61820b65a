"""Anthropic Message Batches through the official SDK: create, retrieve, results.

The params of each request are the online provider's (forced tool use for structured output, system
prompt split off, ``temperature`` unless the model refused it before: ``batch_body`` of the
provider's batch protocol); results are turned back into responses by its ``batch_response``. The
SDK client is the provider's own, so an ``httpx.AsyncClient`` given to the run reaches it through :class:`LegacyHttpxTransport` exactly as
online calls do. One batch holds at most 100,000 requests and 256 MB.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic

from legal_judge.batch.base import BatchHandle, BatchLimits, BatchLine, BatchStatus
from legal_judge.models import CompletionRequest, CompletionResponse
from legal_judge.providers.anthropic import AnthropicProvider

__all__ = ["ANTHROPIC_LIMITS", "AnthropicBatchBackend"]

ANTHROPIC_LIMITS = BatchLimits(max_requests=100_000, max_bytes=256 * 1000 * 1000)
# Error types another batch cannot fix (the request itself, or the account).
_FINAL_ERRORS = frozenset({"invalid_request_error", "authentication_error", "permission_error",
                           "not_found_error", "request_too_large"})


class AnthropicBatchBackend:
    """Message Batches for an ``anthropic:`` judge, sharing the judge's SDK client."""

    name = "anthropic"

    def __init__(self, provider: AnthropicProvider, *,
                 limits: BatchLimits = ANTHROPIC_LIMITS) -> None:
        self.provider = provider
        self.limits = limits
        self.client = provider.sdk_client

    def encode(self, custom_id: str, request: CompletionRequest) -> bytes:
        """One request object: ``{"custom_id", "params"}``."""
        line = {"custom_id": custom_id, "params": self.provider.batch_body(request)}
        return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    async def submit(self, lines: list[bytes], *, metadata: dict[str, str]) -> BatchHandle:
        """Create the batch (Message Batches take no metadata; the store keeps ours)."""
        del metadata
        try:
            batch = await self.client.messages.batches.create(
                requests=[json.loads(line) for line in lines])
        except anthropic.APIError as exc:
            raise self.provider.translate_error(exc) from exc
        return BatchHandle(batch.id, {"provider_status": batch.processing_status})

    async def status(self, handle: BatchHandle) -> BatchStatus:
        """Retrieve the batch: processing status and request counts."""
        try:
            batch = await self.client.messages.batches.retrieve(handle.id)
        except anthropic.APIError as exc:
            raise self.provider.translate_error(exc) from exc
        meta = {"provider_status": batch.processing_status,
                "counts": batch.request_counts.model_dump(), "results_url": batch.results_url}
        return BatchStatus(ended=batch.processing_status == "ended",
                           provider_status=batch.processing_status, meta=meta)

    async def results(self, handle: BatchHandle) -> list[BatchLine]:
        """Every individual result, in the order the provider streams them."""
        out: list[BatchLine] = []
        try:
            decoder = await self.client.messages.batches.results(handle.id)
            async for entry in decoder:
                out.append(_line(entry.custom_id, entry.result))
        except anthropic.APIError as exc:
            raise self.provider.translate_error(exc) from exc
        return out

    def to_response(self, payload: Any, request: CompletionRequest) -> CompletionResponse:
        """A succeeded result's message as the online provider's response."""
        return self.provider.batch_response(payload, request)

    async def aclose(self) -> None:
        """The SDK client belongs to the provider, which the run closes."""


def _line(cid: str, result: Any) -> BatchLine:
    kind = result.type
    if kind == "succeeded":
        return BatchLine(cid, payload=result.message)
    if kind == "errored":
        inner = getattr(result.error, "error", None)
        etype = getattr(inner, "type", "api_error")
        message = getattr(inner, "message", "request errored")
        return BatchLine(cid, error=f"{etype}: {message}", retryable=etype not in _FINAL_ERRORS)
    # canceled / expired: another batch can still answer it.
    return BatchLine(cid, error=f"{kind}: the batch ended before this request ran", retryable=True)
