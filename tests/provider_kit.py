"""The provider kit: recorded-shape responses served over httpx.MockTransport, for provider tests.

One copy for two folders: ``tests/contract`` (the real SDKs over HTTP) and ``tests/providers``
(a few adapter tests that need one served response). Each folder's conftest imports the two
fixtures, ``kit`` and the autouse ``provider_env``, so they apply to that folder only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from legal_judge.models import CompletionRequest, Message

# The recorded shapes are the contract tests' data.
FIXTURES = Path(__file__).parent / "contract" / "fixtures"

OPENAI_KEY = "sk-test-secret-value-1234"
ANTHROPIC_KEY = "sk-ant-test-secret-value-9876"

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rubrics": {"type": "object"},
        "overall": {"type": "string", "enum": ["pass", "fail"]},
        "summary": {"type": "string"},
    },
    "required": ["rubrics", "overall"],
}


def load_fixture(name: str) -> dict[str, Any]:
    """A recorded-shape response: {"status", "headers", "body"}."""
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text("utf-8"))
    return data


class Server:
    """Serves fixtures in order and records every request the SDK sent."""

    def __init__(self, *names: str) -> None:
        self.queue = [load_fixture(n) for n in names]
        self.requests: list[httpx.Request] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.queue:
            raise AssertionError(f"unexpected extra request to {request.url}")
        fx = self.queue.pop(0)
        return httpx.Response(fx["status"], headers=fx["headers"], json=fx["body"])

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handler))

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


class SleepRecorder:
    """An injectable sleep that records the waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def no_wait(provider: Any) -> SleepRecorder:
    """Swap the provider's sleep for a recorder (and fix the jitter draw at 0.5)."""
    recorder = SleepRecorder()
    provider.gate.retry = replace(provider.gate.retry, sleep=recorder, random=lambda: 0.5)
    return recorder


def request(model: str, *, schema: bool = True, temperature: float = 0.0) -> CompletionRequest:
    return CompletionRequest(
        model=model,
        messages=[
            Message(role="system", content="You are a strict legal evaluator. Reply in JSON."),
            Message(role="user", content="Evaluate the answer between the fences."),
        ],
        temperature=temperature,
        max_tokens=800,
        json_schema=VERDICT_SCHEMA if schema else None,
        schema_name="verdict",
    )


@pytest.fixture(autouse=True)
def provider_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "MISTRAL_API_KEY",
        "TOGETHER_API_KEY",
        "GROQ_API_KEY",
        "OPENAI_COMPATIBLE_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "LEGAL_JUDGE_PRICES",
    ):
        monkeypatch.delenv(var, raising=False)
    from legal_judge.providers.openai import forget_negotiated_modes

    forget_negotiated_modes()
    yield
    forget_negotiated_modes()


class Kit:
    """Everything the contract tests share, handed out as one fixture (no test-module imports)."""

    Server = Server
    load_fixture = staticmethod(load_fixture)
    no_wait = staticmethod(no_wait)
    request = staticmethod(request)
    OPENAI_KEY = OPENAI_KEY
    ANTHROPIC_KEY = ANTHROPIC_KEY
    VERDICT_SCHEMA = VERDICT_SCHEMA


@pytest.fixture
def kit() -> Kit:
    return Kit()
