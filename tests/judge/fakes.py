"""A scripted provider that records every request (the llm MockModel / inspect mockllm idea)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from legal_judge.errors import ProviderError
from legal_judge.models import CompletionRequest, CompletionResponse, Usage
from legal_judge.providers.base import ProviderSpec, parse_spec


def verdict_json(ls: float = 4, cq: float = 4, ja: float = 4, co: float = 4,
                 hall: str = "clean", overall: str = "pass") -> str:
    """A valid verdict for the five rubrics."""
    return json.dumps({
        "rubrics": {
            "legal_soundness": {"score": ls, "rationale": "r"},
            "citation_quality": {"score": cq, "rationale": "r"},
            "jurisdiction_awareness": {"score": ja, "rationale": "r"},
            "completeness": {"score": co, "rationale": "r"},
            "hallucination": {"result": hall, "notes": ""},
        },
        "overall": overall, "summary": "s"})


class ScriptedProvider:
    """Answers with the queued texts (or raises queued errors) and records the requests."""

    def __init__(self, spec: str = "scripted:model-x", *, family: str = "openai",
                 outputs: Iterable[str | Exception | CompletionResponse] = ()) -> None:
        self.spec: ProviderSpec = parse_spec(spec)
        self.family = family
        self.queue: list[Any] = list(outputs)
        self.requests: list[CompletionRequest] = []

    def enqueue(self, *outputs: str | Exception | CompletionResponse) -> None:
        self.queue.extend(outputs)

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        self.requests.append(request)
        if not self.queue:
            raise AssertionError("ScriptedProvider: no output queued")
        out = self.queue.pop(0)
        if isinstance(out, ProviderError):
            raise out
        if isinstance(out, CompletionResponse):
            return out
        return CompletionResponse(text=out, model=self.spec.model, finish_reason="stop",
                                  usage=Usage(input_tokens=100, output_tokens=50))

    async def aclose(self) -> None:
        pass
