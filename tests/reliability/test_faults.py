"""Item 1: fault injection over a 500-item run with three judges, simulated and over real HTTP.

Faults per attempt: 30% 429 (with Retry-After), 10% 5xx, 5% timeouts, 10% invalid JSON, 2% truncated
output. Every item must end scored or INCONCLUSIVE with its reason, none lost or duplicated, no score
invented, and every transport attempt accounted for in ``judge_calls`` (attempts = rows + retries).
"""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.errors import ProviderUnavailable, RateLimitError
from legal_judge.judge.config import JudgeConfig
from legal_judge.models import CompletionRequest, CompletionResponse
from legal_judge.providers import base as provider_base
from legal_judge.providers.retry import RetryPolicy
from legal_judge.providers.simulated import SimulatedProvider
from legal_judge.store import Store

from .conftest import FAULTS, Stub, bench_items
from .invariants import check_run, dump

N_ITEMS = 500
QUORUM = 3  # every judge must answer, so faults visibly turn items INCONCLUSIVE


def _count_simulated_faults(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    seen: Counter[str] = Counter()
    original = SimulatedProvider._attempt

    async def counting(self: SimulatedProvider, request: CompletionRequest) -> CompletionResponse:
        seen["attempts"] += 1
        try:
            resp = await original(self, request)
        except RateLimitError:
            seen["429"] += 1
            raise
        except ProviderUnavailable as exc:
            seen["5xx" if exc.status == 503 else "timeout"] += 1
            raise
        if resp.finish_reason == "length":
            seen["truncated"] += 1
        elif not resp.text.startswith("{"):
            seen["invalid_json"] += 1
        return resp

    monkeypatch.setattr(SimulatedProvider, "_attempt", counting)
    return seen


def test_simulated_faults_over_500_items(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _count_simulated_faults(monkeypatch)
    params = "&".join(f"{k}={v}" for k, v in FAULTS.items())
    judges = [JudgeConfig(spec=f"simulated:demo-{f}?{params}", name=f)
              for f in ("openai", "google", "mistral")]
    config = EnsembleConfig(judges=judges, quorum=QUORUM, concurrency=32, run_checks=False)
    items = bench_items(N_ITEMS)
    store = Store()
    out = asyncio.run(run_benchmark(items, config, store=store))
    assert out.status == "completed"
    figures = check_run(store, out.run_id, items, judges=[j.label for j in judges], quorum=QUORUM)
    # Every attempt the simulator made is in the call log: one row per call plus its retries.
    assert figures["provider_attempts"] == seen["attempts"]
    # Each transport fault was retried, except the last one of a call that ran out of retries.
    assert figures["transport_retries"] + figures["failed_calls"] == (
        seen["429"] + seen["5xx"] + seen["timeout"])
    assert figures["json_retry_calls"] >= seen["invalid_json"] + seen["truncated"] - figures[
        "verdicts"].get("inconclusive", 0)
    # The fault mix really happened (not asserting exact rates: they are draws).
    for fault, rate in FAULTS.items():
        key = {"rate_429": "429", "server_5xx": "5xx"}.get(fault, fault)
        assert seen[key] > 0.5 * rate * seen["attempts"] * (0.55 if key in
                                                             ("invalid_json", "truncated") else 1)
    assert figures["items"].get("inconclusive", 0) > 0 and figures["items"]["ok"] > 0.9 * N_ITEMS
    print(dump({"simulated": figures, "faults_seen": dict(seen)}))


def _stub_policy(waits: list[float]) -> Callable[..., RetryPolicy]:
    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        await asyncio.sleep(min(seconds, 0.02))

    # Short backoff (timeouts have no Retry-After); the policy's decisions are otherwise unchanged.
    return functools.partial(RetryPolicy, base_s=0.02, cap_s=0.1, sleep=sleep)


def test_http_stub_faults_through_the_openai_provider(
        start_stub: Callable[..., Stub], monkeypatch: pytest.MonkeyPatch) -> None:
    stub = start_stub("--rate-429", "0.3", "--rate-5xx", "0.1", "--timeout-rate", "0.05",
                      "--invalid-json", "0.1", "--truncated", "0.02", "--timeout-s", "3",
                      "--retry-after-ms", "7", "--seed", "11", latency_ms=2)
    waits: list[float] = []
    monkeypatch.setattr(provider_base, "RetryPolicy", _stub_policy(waits))
    # The client gives up after 2 s: the stub's injected timeouts (3 s) always trip it, while a 2 ms
    # answer delayed by a loaded machine does not. At 0.6 s a busy CI box timed out answers the stub
    # never counted, and the exact attempt count below broke for a reason that is no fault.
    options: dict[str, Any] = {"timeout_s": 2.0, "max_retries": 6}
    judges = [JudgeConfig(spec=f"openai-compatible:{m}@{stub.url}", name=m, options=options)
              for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest")]
    config = EnsembleConfig(judges=judges, quorum=QUORUM, concurrency=16, run_checks=False)
    items = bench_items(N_ITEMS)
    store = Store()
    out = asyncio.run(run_benchmark(items, config, store=store, use_cache=False))
    assert out.status == "completed"
    figures = check_run(store, out.run_id, items, judges=[j.label for j in judges], quorum=QUORUM)
    stats = stub.stats()
    faults = stats["faults"]
    # The stub saw exactly the attempts the call log accounts for.
    assert figures["provider_attempts"] == stats["requests"]
    assert figures["transport_retries"] + figures["failed_calls"] == (
        faults["429"] + faults["5xx"] + faults["timeout"])
    # Retry-After honoured: a 429/503 is followed by the 7 ms wait the stub asked for (except the
    # last fault of a call out of retries); timeouts carry no Retry-After and back off with jitter.
    asked = sum(1 for w in waits if w == pytest.approx(0.007))
    assert len(waits) == figures["transport_retries"]
    assert faults["429"] + faults["5xx"] - figures["failed_calls"] <= asked <= (
        faults["429"] + faults["5xx"])
    assert all(w <= 0.1 for w in waits)
    assert faults["invalid_json"] > 0 and faults["truncated"] > 0
    assert figures["items"].get("inconclusive", 0) > 0 and figures["items"]["ok"] > 0.9 * N_ITEMS
    print(dump({"http_stub": figures, "stub": stats}))


def test_a_gateway_html_page_is_retried_not_a_crash(
        start_stub: Callable[..., Stub], monkeypatch: pytest.MonkeyPatch) -> None:
    """A 200 whose body is no chat completion (a proxy's error page) used to abort the whole run."""
    stub = start_stub("--bad-body", "0.25", "--seed", "5", latency_ms=1)
    waits: list[float] = []
    monkeypatch.setattr(provider_base, "RetryPolicy", _stub_policy(waits))
    judges = [JudgeConfig(spec=f"openai-compatible:{m}@{stub.url}", name=m)
              for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest")]
    config = EnsembleConfig(judges=judges, quorum=QUORUM, concurrency=8, run_checks=False)
    items = bench_items(40)
    store = Store()
    out = asyncio.run(run_benchmark(items, config, store=store, use_cache=False))
    assert out.status == "completed"
    figures = check_run(store, out.run_id, items, judges=[j.label for j in judges], quorum=QUORUM)
    stats = stub.stats()
    assert stats["faults"]["bad_body"] > 10
    assert figures["provider_attempts"] == stats["requests"]
    assert figures["transport_retries"] + figures["failed_calls"] == stats["faults"]["bad_body"]
    print(dump({"bad_body": figures, "stub": stats}))
