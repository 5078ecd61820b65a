"""SDK clients are built on the first provider call, not when a judge is set up.

A rerun answered wholly from the cache must not pay for three SDK clients (each loads the SSL
certificates); a missing key or URL is still refused when the provider is built.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anthropic
import openai
import pytest

from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.devtools.openai_stub import StubServer
from legal_judge.errors import ConfigError, MissingKeyError
from legal_judge.judge.config import JudgeConfig
from legal_judge.providers.anthropic import AnthropicProvider
from legal_judge.providers.base import parse_spec
from legal_judge.providers.openai import OpenAIProvider
from legal_judge.providers.sdk import LazySDK
from legal_judge.store import Store


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the SDK clients constructed, per SDK."""
    counts = {"openai": 0, "anthropic": 0}

    class CountedOpenAI(openai.AsyncOpenAI):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            counts["openai"] += 1
            super().__init__(*args, **kwargs)

    class CountedAnthropic(anthropic.AsyncAnthropic):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            counts["anthropic"] += 1
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(openai, "AsyncOpenAI", CountedOpenAI)
    monkeypatch.setattr(anthropic, "AsyncAnthropic", CountedAnthropic)
    return counts


@asynccontextmanager
async def _stub() -> AsyncIterator[tuple[StubServer, str]]:
    stub = StubServer(latency_ms=1, http_version="1.1")
    server = await asyncio.start_server(stub.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield stub, f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()
        await server.wait_closed()


async def _two_runs(store: Store, counts: dict[str, int]) -> tuple[int, int, Any]:
    items = load_dataset(sample_dataset_path())[:4]
    async with _stub() as (_, url):
        config = EnsembleConfig(name="lazy", concurrency=4, run_checks=False, judges=[
            JudgeConfig(spec=f"openai-compatible:{m}@{url}")
            for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest")])
        await run_benchmark(items, config, store=store, run_id="first")
        first = counts["openai"]
        second = await run_benchmark(items, config, store=store, run_id="second")
        return first, counts["openai"] - first, second


def test_a_cached_rerun_builds_no_sdk_client(built: dict[str, int]) -> None:
    store = Store()
    first, rerun, outcome = asyncio.run(_two_runs(store, built))
    assert first == 3  # one per judge, for the calls the first run made
    assert outcome.progress.cached == 12 and store.call_counts("second")["calls"] == 0
    assert rerun == 0


def test_clients_are_built_on_first_use_and_closed_only_if_built(
        built: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    oai = OpenAIProvider(parse_spec("openai-compatible:m@http://127.0.0.1:9/v1"))
    ant = AnthropicProvider(parse_spec("anthropic:claude-sonnet-4-5"))
    assert built == {"openai": 0, "anthropic": 0}
    asyncio.run(oai.aclose())
    asyncio.run(ant.aclose())
    assert built == {"openai": 0, "anthropic": 0}
    assert oai.sdk_client is oai.sdk_client and ant.sdk_client is ant.sdk_client
    assert built == {"openai": 1, "anthropic": 1}
    assert str(oai.sdk_client.base_url) == "http://127.0.0.1:9/v1/"
    assert oai.sdk_client.organization is None and oai.sdk_client.max_retries == 0


def test_a_missing_key_or_url_is_still_refused_when_the_provider_is_built(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(MissingKeyError):
        OpenAIProvider(parse_spec("openai:gpt-4o"))
    with pytest.raises(MissingKeyError):
        AnthropicProvider(parse_spec("anthropic:claude-sonnet-4-5"))
    with pytest.raises(ConfigError, match="names no server URL"):
        OpenAIProvider(parse_spec("openai-compatible:m"))


def test_the_lazy_holder_builds_once_prepares_once_and_closes_only_what_it_built() -> None:
    made: list[Any] = []
    prepared: list[Any] = []

    class Client:
        def __init__(self, **kwargs: Any) -> None:
            self.kwargs, self.closed = kwargs, False
            made.append(self)

        async def close(self) -> None:
            self.closed = True

    holder = LazySDK(Client, api_key="k", base_url="http://127.0.0.1:9/v1", timeout_s=7.0,
                     http_client=None, prepare=prepared.append)
    asyncio.run(holder.close())
    assert made == [] and prepared == []
    assert holder.client is holder.client
    assert made == prepared and len(made) == 1
    # No SDK retry of its own: RetryPolicy is the one retry layer, so every retry is counted.
    assert made[0].kwargs == {"api_key": "k", "base_url": "http://127.0.0.1:9/v1", "timeout": 7.0,
                              "max_retries": 0, "http_client": None}
    asyncio.run(holder.close())
    assert made[0].closed
