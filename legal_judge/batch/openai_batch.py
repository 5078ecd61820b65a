"""OpenAI Batch API through the official SDK: JSONL upload, create, poll, output and error files.

Requests are rendered by the online provider's batch protocol (``batch_body``: structured output
as ``json_schema``, which api.openai.com always accepts) and results are turned back into responses
by its ``batch_response``, so a batch verdict is parsed exactly like an online one. One batch
holds at most 50,000 requests and a 200 MB input file; the orchestrator splits larger runs.
"""

from __future__ import annotations

import json
from typing import Any, Final

import openai

from legal_judge.batch.base import BatchHandle, BatchLimits, BatchLine, BatchStatus
from legal_judge.models import CompletionRequest, CompletionResponse
from legal_judge.providers.openai import OpenAIProvider

__all__ = ["OPENAI_LIMITS", "OpenAIBatchBackend"]

OPENAI_LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * 1024 * 1024)
ENDPOINT: Final = "/v1/chat/completions"
_TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
# Line failures another batch can fix; 4xx other than these is the request's own fault.
_RETRYABLE_CODES = frozenset({"batch_expired", "batch_cancelled", "rate_limit_exceeded",
                              "server_error"})


class OpenAIBatchBackend:
    """Batches for an ``openai:`` judge, sharing the judge's SDK client (key, base URL, transport)."""

    name = "openai"

    def __init__(self, provider: OpenAIProvider, *, limits: BatchLimits = OPENAI_LIMITS) -> None:
        self.provider = provider
        self.limits = limits
        self.client = provider.sdk_client

    def encode(self, custom_id: str, request: CompletionRequest) -> bytes:
        """One JSONL line: ``{"custom_id", "method", "url", "body"}``."""
        body = self.provider.batch_body(request)
        line = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
        return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    async def submit(self, lines: list[bytes], *, metadata: dict[str, str]) -> BatchHandle:
        """Upload the JSONL file and create the batch."""
        data = b"\n".join(lines) + b"\n"
        try:
            uploaded = await self.client.files.create(
                file=("legal-judge-batch.jsonl", data, "application/jsonl"), purpose="batch")
            batch = await self.client.batches.create(
                input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h",
                metadata={k: v[:512] for k, v in metadata.items()})
        except openai.APIError as exc:
            raise self.provider.translate_error(exc) from exc
        return BatchHandle(batch.id, {"input_file_id": uploaded.id, "provider_status": batch.status})

    async def status(self, handle: BatchHandle) -> BatchStatus:
        """Retrieve the batch: status, counts, output and error file ids."""
        try:
            batch = await self.client.batches.retrieve(handle.id)
        except openai.APIError as exc:
            raise self.provider.translate_error(exc) from exc
        meta: dict[str, Any] = {
            "provider_status": batch.status, "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "counts": batch.request_counts.model_dump() if batch.request_counts else None,
        }
        if batch.errors and batch.errors.data:
            meta["errors"] = [f"{e.code}: {e.message}" for e in batch.errors.data][:20]
        return BatchStatus(ended=batch.status in _TERMINAL, provider_status=batch.status, meta=meta)

    async def results(self, handle: BatchHandle) -> list[BatchLine]:
        """Lines of the output file, then of the error file (each in the provider's order)."""
        out: list[BatchLine] = []
        for key in ("output_file_id", "error_file_id"):
            file_id = handle.meta.get(key)
            if not file_id:
                continue
            try:
                content = await self.client.files.content(file_id)
            except openai.APIError as exc:
                raise self.provider.translate_error(exc) from exc
            out += [_line(json.loads(raw)) for raw in content.text.splitlines() if raw.strip()]
        return out

    def to_response(self, payload: Any, request: CompletionRequest) -> CompletionResponse:
        """A chat completion body as the online provider's response (latency 0: not measured)."""
        return self.provider.batch_response(payload, request)

    async def aclose(self) -> None:
        """The SDK client belongs to the provider, which the run closes."""


def _line(obj: dict[str, Any]) -> BatchLine:
    cid = str(obj.get("custom_id"))
    response = obj.get("response") or {}
    error = obj.get("error") or {}
    status = response.get("status_code")
    if status == 200 and isinstance(response.get("body"), dict):
        return BatchLine(cid, payload=response["body"])
    body_error = (response.get("body") or {}).get("error") or {}
    code = error.get("code") or body_error.get("code") or body_error.get("type")
    message = error.get("message") or body_error.get("message") or "no response"
    retryable = (status is None or status in (408, 409, 429) or status >= 500
                 or code in _RETRYABLE_CODES)
    return BatchLine(cid, error=f"{status or code}: {message}", retryable=retryable)
