"""Online judges share identical in-flight calls; the noise-floor repeat gets its own verdict."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from legal_judge.audit.calls import repeat_seed
from legal_judge.audit.target import JudgeTarget, load_targets
from legal_judge.errors import ProviderUnavailable
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.models import BenchmarkItem, CompletionRequest, CompletionResponse, Message, Usage
from legal_judge.providers.base import parse_spec
from legal_judge.store import Store

from .fakes import verdict_json

ITEM = BenchmarkItem(id="i1", prompt="Is an oral lease of 2 years enforceable in New York?",
                     response="No: N.Y. Gen. Oblig. Law § 5-703 requires a writing for leases over "
                              "one year.",
                     jurisdiction="US-NY", expected_signals=["statute of frauds", "5-703"])


class GatedProvider:
    """Counts calls; each call waits for ``gate``, then fails if a failure is queued."""

    def __init__(self, *, failures: int = 0) -> None:
        self.spec = parse_spec("scripted:model-x")
        self.family = "openai"
        self.base_url = None
        self.gate = asyncio.Event()
        self.calls = 0
        self.failures = failures

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        self.calls += 1
        n = self.calls
        await self.gate.wait()
        if self.failures:
            self.failures -= 1
            raise ProviderUnavailable("503 from the fake", provider="scripted")
        return CompletionResponse(text=f"answer {n}", model=self.spec.model,
                                  finish_reason="stop",
                                  usage=Usage(input_tokens=100, output_tokens=50))

    async def aclose(self) -> None:
        pass


REQUEST = CompletionRequest(model="model-x", messages=[Message(role="user", content="same")])


def _judge(provider: GatedProvider, store: Store | None, *, use_cache: bool = True) -> Judge:
    return Judge(JudgeConfig(spec="scripted:model-x"), provider, store=store, use_cache=use_cache)


async def _two_calls(judge: Judge, provider: GatedProvider) -> list[Any]:
    """Two identical calls, both started (and waiting) before the provider answers."""
    tasks = [asyncio.create_task(judge.complete(REQUEST, run_id="r1", item_id=f"it{n}",
                                                purpose="verdict", attempt=1)) for n in (1, 2)]
    for _ in range(10):  # let both reach their await points
        await asyncio.sleep(0)
    started = provider.calls
    provider.gate.set()
    out = await asyncio.gather(*tasks, return_exceptions=True)
    return [started, *out]


def _logged(store: Store) -> list[tuple[str, int, str | None, str | None]]:
    rows = store.db.execute("SELECT item_id, cached, error, response_text FROM judge_calls "
                            "WHERE run_id = 'r1' ORDER BY id")
    return [(r[0], r[1], r[2], r[3]) for r in rows]


async def test_identical_concurrent_calls_share_one_provider_call(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    provider = GatedProvider()
    judge = _judge(provider, store)
    started, first, second = await _two_calls(judge, provider)
    assert started == 1 and provider.calls == 1  # the second waited instead of calling
    assert isinstance(first, CompletionResponse) and isinstance(second, CompletionResponse)
    assert (first.cached, second.cached) == (False, True)
    assert first.text == second.text == "answer 1"
    assert second.usage == first.usage and second.latency_ms == 0.0
    assert _logged(store) == [("it1", 0, None, "answer 1"), ("it2", 1, None, "answer 1")]
    assert store.call_counts("r1")["calls"] == 2 and store.call_counts("r1")["cached"] == 1
    assert judge.calls._in_flight == {}  # nothing left behind


async def test_a_failed_first_call_lets_the_waiting_call_make_its_own(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    provider = GatedProvider(failures=1)
    judge = _judge(provider, store)
    started, first, second = await _two_calls(judge, provider)
    assert started == 1  # the second waited for the first ...
    assert isinstance(first, ProviderUnavailable)
    assert provider.calls == 2  # ... then, the first having failed, called itself
    assert isinstance(second, CompletionResponse) and not second.cached
    assert second.text == "answer 2"
    logged = _logged(store)
    assert [(r[0], r[1], r[3]) for r in logged] == [("it1", 0, None), ("it2", 0, "answer 2")]
    assert logged[0][2] is not None and "503" in logged[0][2]
    assert judge.calls._in_flight == {}


async def test_without_the_cache_identical_calls_are_not_coalesced(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    provider = GatedProvider()
    judge = _judge(provider, store, use_cache=False)
    started, first, second = await _two_calls(judge, provider)
    assert started == 2 and provider.calls == 2
    assert not first.cached and not second.cached
    assert {first.text, second.text} == {"answer 1", "answer 2"}
    assert [r[1] for r in _logged(store)] == [0, 0]


async def test_without_a_store_identical_calls_are_not_coalesced() -> None:
    provider = GatedProvider()
    started, first, second = await _two_calls(_judge(provider, None), provider)
    assert started == 2 and provider.calls == 2
    assert not first.cached and not second.cached


async def test_different_requests_are_not_coalesced(tmp_path: Path) -> None:
    provider = GatedProvider()
    judge = _judge(provider, Store(tmp_path / "s.sqlite3"))
    other = REQUEST.model_copy(update={"seed": 3})  # only the seed differs
    tasks = [asyncio.create_task(judge.complete(r, run_id="r1", item_id="x", purpose="verdict",
                                                attempt=1)) for r in (REQUEST, other)]
    for _ in range(10):
        await asyncio.sleep(0)
    assert provider.calls == 2
    provider.gate.set()
    first, second = await asyncio.gather(*tasks)
    assert not first.cached and not second.cached


class VerdictProvider(GatedProvider):
    """Answers every call with the same valid verdict (no gate)."""

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        self.calls += 1
        await asyncio.sleep(0)  # concurrent judges overlap here
        return CompletionResponse(text=verdict_json(), model=self.spec.model, finish_reason="stop",
                                  usage=Usage(input_tokens=100, output_tokens=50))


async def test_concurrent_judgments_of_identical_items_pay_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    provider = VerdictProvider()
    judge = _judge(provider, store)
    twin = ITEM.model_copy(update={"id": "i2"})  # same content under another id
    a, b = await asyncio.gather(judge.judge(ITEM, run_id="r1"), judge.judge(twin, run_id="r1"))
    assert provider.calls == 1
    assert a.status == b.status == "ok" and a.scores == b.scores
    assert (a.cached, b.cached) == (False, True)
    assert a.cost_usd is None or a.cost_usd >= 0  # the scripted model has no price
    assert b.cost_usd == 0.0  # the shared call is not paid twice
    assert [(r[0], r[1]) for r in _logged(store)] == [("i1", 0), ("i2", 1)]


def _target(tmp_path: Path) -> JudgeTarget:
    (target,) = load_targets("simulated:demo-openai", store=Store(tmp_path / "audit.sqlite3"))
    assert isinstance(target, JudgeTarget)
    return target


class _Counting:
    """Wraps the target's provider and counts the calls that reach it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.spec, self.family = inner.spec, inner.family
        self.base_url = getattr(inner, "base_url", None)
        self.seeds: list[int | None] = []

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        self.seeds.append(request.seed)
        response: CompletionResponse = await self.inner.complete(request)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def _counted(target: JudgeTarget) -> _Counting:
    counting = _Counting(target.judge.provider)
    target.judge.provider = counting
    return counting


async def test_the_noise_floor_repeat_is_not_served_the_first_verdict(tmp_path: Path) -> None:
    target = _target(tmp_path)
    counting = _counted(target)
    judge_id = target.judge_id
    first = await target.score(ITEM, run_id="a1")
    again = await target.score(ITEM, run_id="a1")
    assert counting.seeds == [None]  # the same judgment twice: the verdict cache answers
    assert not first.cached and again.cached and again.score == first.score
    repeat = await target.score(ITEM, run_id="a1", repeat=1)
    assert not repeat.cached and repeat.status == "ok"
    assert len(counting.seeds) == 2 and counting.seeds[1] is not None  # a fresh, seeded call
    repeat_again = await target.score(ITEM, run_id="a1", repeat=1)
    assert repeat_again.cached and len(counting.seeds) == 2  # the repeat has its own entry
    assert target.judge.judge_id == judge_id  # same judge, only the key differs
    key0 = target.judge.verdict_key(ITEM, None, seed=repeat_seed(None, 0))
    key1 = target.judge.verdict_key(ITEM, None, seed=repeat_seed(None, 1))
    assert key1 != key0 and key1.startswith(key0)
    await target.aclose()


async def test_the_repeat_first_does_not_answer_the_normal_judgment(tmp_path: Path) -> None:
    target = _target(tmp_path)
    counting = _counted(target)
    repeat = await target.score(ITEM, run_id="a1", repeat=1)
    normal = await target.score(ITEM, run_id="a1")
    assert not repeat.cached and not normal.cached
    assert len(counting.seeds) == 2 and counting.seeds[0] is not None and counting.seeds[1] is None
    await target.aclose()
