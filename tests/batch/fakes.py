"""An in-memory batch backend answering with the simulated provider (same interface as the SDK ones)."""

from __future__ import annotations

import json
import re
from typing import Any

from legal_judge.batch.base import BatchHandle, BatchLimits, BatchLine, BatchStatus
from legal_judge.judge.judge import Judge
from legal_judge.models import CompletionRequest, CompletionResponse


class SimBatchBackend:
    """Batches answered by the judge's own (simulated) provider; ends after ``polls_to_end`` polls."""

    name = "fake"

    def __init__(self, provider: Any, *, limits: BatchLimits | None = None,
                 polls_to_end: int = 1, reverse: bool = True, unmark: str | None = None) -> None:
        self.provider = provider
        self.limits = limits or BatchLimits(max_requests=50_000, max_bytes=200 * 1024 * 1024)
        self.polls_to_end = polls_to_end
        self.reverse = reverse
        # Text from this marker to the next "]" is ignored when answering (scale tests).
        self.unmark = re.compile(re.escape(unmark) + r"[^\]]*\]") if unmark else None
        self.requests: dict[str, CompletionRequest] = {}
        self.batches: dict[str, list[str]] = {}
        self.polls: dict[str, int] = {}
        self.answers: dict[tuple[Any, ...], CompletionResponse] = {}

    def encode(self, custom_id: str, request: CompletionRequest) -> bytes:
        # Pure, like the SDK backends: the whole request travels in the line.
        return json.dumps({"custom_id": custom_id, "body": request.model_dump(mode="json")},
                          sort_keys=True).encode()

    async def submit(self, lines: list[bytes], *, metadata: dict[str, str]) -> BatchHandle:
        batch_id = f"fake-{self.provider.spec.model}-{len(self.batches) + 1}"
        decoded = [json.loads(x) for x in lines]
        for d in decoded:
            self.requests[d["custom_id"]] = CompletionRequest.model_validate(d["body"])
        self.batches[batch_id] = [d["custom_id"] for d in decoded]
        return BatchHandle(batch_id, {"provider_status": "in_progress"})

    async def status(self, handle: BatchHandle) -> BatchStatus:
        self.polls[handle.id] = self.polls.get(handle.id, 0) + 1
        ended = self.polls[handle.id] >= self.polls_to_end
        return BatchStatus(ended=ended, provider_status="ended" if ended else "in_progress")

    async def results(self, handle: BatchHandle) -> list[BatchLine]:
        ids = self.batches[handle.id][::-1] if self.reverse else self.batches[handle.id]
        return [BatchLine(cid, payload=await self._answer(self.requests[cid])) for cid in ids]

    async def _answer(self, request: CompletionRequest) -> CompletionResponse:
        # The simulator is deterministic per request: identical requests share one computation.
        if self.unmark is not None:
            request = request.model_copy(update={"messages": [
                m.model_copy(update={"content": self.unmark.sub("", m.content)})
                for m in request.messages]})
        key = (request.model, request.temperature, *(m.content for m in request.messages))
        if key not in self.answers:
            self.answers[key] = await self.provider.complete(request)
        return self.answers[key]

    def to_response(self, payload: Any, request: CompletionRequest) -> CompletionResponse:
        assert isinstance(payload, CompletionResponse)
        return payload.model_copy(update={"latency_ms": 0.0, "retries": 0})

    async def aclose(self) -> None:
        pass


def sim_factory(**kwargs: Any) -> Any:
    """A backend factory giving every judge a SimBatchBackend."""
    made: dict[str, SimBatchBackend] = {}

    def factory(judge: Judge) -> SimBatchBackend:
        made[judge.label] = SimBatchBackend(judge.provider, **kwargs)
        return made[judge.label]

    factory.made = made  # type: ignore[attr-defined]
    return factory
