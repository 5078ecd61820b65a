"""One retry loop and one pairwise schema for every caller; the noise-floor seed as a parameter."""

from __future__ import annotations

import json
from pathlib import Path

from legal_judge.audit.target import JudgeTarget
from legal_judge.debias.pairwise import PairwiseJudge
from legal_judge.judge.config import DebiasConfig, JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.models import BenchmarkItem, CompletionResponse, Usage
from legal_judge.store import Store

from .fakes import ScriptedProvider, verdict_json

ITEM = BenchmarkItem(id="i1", prompt="Is an oral lease of 2 years enforceable in New York?",
                     response="No: N.Y. Gen. Oblig. Law § 5-703 requires a writing for leases over "
                              "one year.",
                     jurisdiction="US-NY", expected_signals=["statute of frauds", "5-703"])
PAIR = json.dumps({"reasoning": "r", "winner": "B", "score_a": 2, "score_b": 4})


def _judge(provider: ScriptedProvider, store: Store | None = None, *, mode: str = "plain") -> Judge:
    config = JudgeConfig(spec="scripted:model-x", debias=DebiasConfig(mode=mode))  # type: ignore[arg-type]
    return Judge(config, provider, store=store)


async def test_a_seeded_judgment_seeds_every_request_and_is_cached_apart(tmp_path: Path) -> None:
    provider = ScriptedProvider(outputs=[verdict_json()] * 4)
    judge = _judge(provider, Store(tmp_path / "s.sqlite3"), mode="self")
    seeded = await judge.judge(ITEM, run_id="r1", seed=7)
    assert seeded.status == "ok" and seeded.attempts == 2  # the verdict and the self pass
    assert [r.seed for r in provider.requests] == [7, 7]
    plain = await judge.judge(ITEM, run_id="r1")  # not served the seeded verdict
    assert not plain.cached and [r.seed for r in provider.requests[2:]] == [None, None]
    again = await judge.judge(ITEM, run_id="r1", seed=7)
    assert again.cached and len(provider.requests) == 4
    assert seeded.judge_id == plain.judge_id  # the same judge, only the key differs


async def test_the_audit_and_the_debias_experiment_send_one_pairwise_schema() -> None:
    audit = ScriptedProvider(outputs=[PAIR])
    out = await JudgeTarget(_judge(audit)).compare("Q?", "one", "two", run_id="a", item_id="p")
    debias = ScriptedProvider(outputs=[PAIR])
    order = await PairwiseJudge(_judge(debias)).ask("Q?", "one", "two", item_id="p")
    assert out.winner == "B" and order.winner == "B"
    sent = audit.requests[0].json_schema
    assert sent is not None and sent == debias.requests[0].json_schema
    # The template's scale (0-5), which both parsers hold the scores to.
    assert sent["properties"]["score_a"] == {"type": "number", "minimum": 0, "maximum": 5}


def _truncated(text: str) -> CompletionResponse:
    return CompletionResponse(text=text, model="model-x", finish_reason="length",
                              usage=Usage(input_tokens=10, output_tokens=5))


async def test_a_truncated_pairwise_answer_is_retried_like_a_verdict() -> None:
    provider = ScriptedProvider(outputs=[_truncated(PAIR), PAIR])
    order = await PairwiseJudge(_judge(provider)).ask("Q?", "one", "two", item_id="p")
    assert order.status == "ok" and order.calls == 2
    assert "truncated at max_tokens" in provider.requests[1].messages[-1].content
    assert [r.temperature for r in provider.requests] == [0.0, 0.2]
    # Usage is the loop's: both calls counted (the scripted model has no price).
    assert order.input_tokens == 110 and order.output_tokens == 55
