"""The call's identity rides on the request (``CallContext``), outside the cache key; batching is a
provider that marks batched answers, which pricing charges at the batch rate."""

from __future__ import annotations

import asyncio
from pathlib import Path

from legal_judge.judge.calls import Calls, call_cost
from legal_judge.judge.config import DebiasConfig, JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.models import (
    BenchmarkItem,
    CallContext,
    CompletionRequest,
    CompletionResponse,
    Message,
    Usage,
)
from legal_judge.providers.base import parse_spec
from legal_judge.providers.batching import BatchingProvider
from legal_judge.store import Store

from .fakes import ScriptedProvider, verdict_json

REQUEST = CompletionRequest(
    model="gpt-4o", messages=[Message(role="system", content="Be exact."),
                              Message(role="user", content="Is a 2-year oral lease enforceable "
                                                           "in New York?")],
    temperature=0.0, max_tokens=300, json_schema={"type": "object"}, schema_name="verdict", seed=7)
# The key today's stores hold for REQUEST (computed by the code before CallContext existed): a
# context must not move it, or every cached response would miss.
STORED_KEY = "0aaafb40d676f5e862dc4af85c0b46a82011574b8bad174444ccc2cd5ff0aa20"
ITEM = BenchmarkItem(id="i1", prompt="Is an oral lease of 2 years enforceable in New York?",
                     response="No: N.Y. Gen. Oblig. Law § 5-703 requires a writing.",
                     jurisdiction="US-NY")


class _Spec:
    spec = parse_spec("openai:gpt-4o")
    family = "openai"


def test_the_context_is_outside_the_cache_key_and_every_dump() -> None:
    calls = Calls(_Spec(), label="j", store=None)
    one = REQUEST.with_context(CallContext("run-1", "item-1", "j", "verdict", 1))
    other = REQUEST.with_context(CallContext("run-2", "item-9", "k", "self_debias", 3, slot=5))
    assert calls.cache_key(one) == calls.cache_key(other) == calls.cache_key(REQUEST) == STORED_KEY
    assert one.model_dump() == other.model_dump() == REQUEST.model_dump()
    assert "context" not in one.model_dump_json()
    assert one.context is not None and one.context.item == "item-1"


async def test_a_judgment_s_calls_carry_their_context_and_are_logged_by_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    provider = ScriptedProvider(outputs=["not json", verdict_json(), verdict_json()])
    config = JudgeConfig(spec="scripted:model-x", debias=DebiasConfig(mode="self"))
    judge = Judge(config, provider, store=store)
    verdict = await judge.judge(ITEM, run_id="r1", slot=6)
    assert verdict.status == "ok"
    contexts = [r.context for r in provider.requests]
    assert contexts == [CallContext("r1", "i1", judge.label, "verdict", 1, 6),
                        CallContext("r1", "i1", judge.label, "verdict", 2, 6),
                        CallContext("r1", "i1", judge.label, "self_debias", 1, 6)]
    assert store.call_counts("r1")["calls"] == 3  # each logged under its context's run


async def test_a_batched_answer_is_marked_and_priced_at_the_batch_rate() -> None:
    answer = CompletionResponse(text="{}", model="gpt-4o", finish_reason="stop",
                                usage=Usage(input_tokens=1_000, output_tokens=500))

    async def park(request: CompletionRequest) -> tuple[CompletionResponse, bool]:
        assert request.context is not None and request.context.slot == 2
        return answer, True

    ended: list[int] = []
    batching = BatchingProvider(_Spec(), park, judgment_ended=lambda: ended.append(1), record=True)
    got = await batching.complete(REQUEST.with_context(CallContext("a", "x", "j", slot=2)))
    assert got.batched and not answer.batched and "batched" not in got.model_dump()
    online = call_cost("openai", "gpt-4o", answer)
    assert online is not None and call_cost("openai", "gpt-4o", got) == online / 2
    assert batching.records is not None and batching.records[0].via_batch
    batching.judgment_ended()
    assert ended == [1] and batching.parks and batching.spec.raw == "openai:gpt-4o"


def test_a_request_without_a_context_goes_to_the_provider_itself() -> None:
    class Inner(_Spec):
        async def complete(self, request: CompletionRequest) -> CompletionResponse:
            return CompletionResponse(text="online", model="gpt-4o")

    async def park(request: CompletionRequest) -> tuple[CompletionResponse, bool]:
        raise AssertionError("parked a call without a context")

    got = asyncio.run(BatchingProvider(Inner(), park).complete(REQUEST))
    assert got.text == "online" and not got.batched
