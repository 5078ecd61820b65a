"""Each mode's requests, asserted on a recording fake provider (pointwise judge and pairwise)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from legal_judge.debias.pairwise import PairwiseJudge
from legal_judge.judge.config import DebiasConfig, JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.models import BenchmarkItem, CompletionRequest

from .conftest import CORRECT, RecordingProvider, pairwise_json

SELF_OPENING = "You just delivered this verdict"
AUTHORITY_WARNING = 'IMPORTANT: evaluations are prone to "authority" bias'
GENERIC_WARNING = "any systematic bias unrelated to quality on the criterion"


def rubric_verdict(request: CompletionRequest, fenced: list[str]) -> str:
    """A valid pointwise verdict for whatever rubrics the request's schema names."""
    assert request.json_schema is not None
    rubrics: dict[str, Any] = {}
    for name, prop in request.json_schema["properties"]["rubrics"]["properties"].items():
        if "score" in prop["properties"]:
            rubrics[name] = {"score": 4, "rationale": "ok"}
        else:
            rubrics[name] = {"result": prop["properties"]["result"]["enum"][0], "notes": "ok"}
    return json.dumps({"rubrics": rubrics, "overall": "pass", "summary": "fine"})


ITEM = BenchmarkItem(id="it-1", prompt="How long to appeal?", response="Thirty days.")


def _judge(mode: str, bias: str = "authority") -> tuple[Judge, RecordingProvider]:
    provider = RecordingProvider(rubric_verdict)
    cfg = JudgeConfig(spec="fake:judge-1", debias=DebiasConfig(mode=mode, bias=bias))  # type: ignore[arg-type]
    return Judge(cfg, provider), provider


def _text(request: CompletionRequest, role: str) -> str:
    return "\n".join(m.content for m in request.messages if m.role == role)


@pytest.mark.parametrize("mode", ["plain", "aware", "self", "aware+self"])
async def test_pointwise_mode_requests(mode: str) -> None:
    judge, provider = _judge(mode)
    verdict = await judge.judge(ITEM)
    assert verdict.status == "ok"
    first = provider.requests[0]
    warned = AUTHORITY_WARNING in _text(first, "system")
    assert warned == ("aware" in mode)
    assert len(provider.requests) == (2 if "self" in mode else 1)
    if "self" in mode:
        second = provider.requests[1]
        last = second.messages[-1]
        assert last.role == "user" and last.content.startswith(SELF_OPENING)
        # The first verdict travels twice: as the assistant turn and inside the self-check request.
        assert second.messages[-2].role == "assistant"
        assert second.messages[-2].content == provider.answer(first, [])
        assert '"legal_soundness": {"score": 4.0' in last.content
        assert 'Check it for "authority" bias' in last.content
        assert verdict.extra["self_debias"]["status"] == "ok"
        assert verdict.extra["self_debias"]["changed"] is False
        assert verdict.extra["self_debias"]["first_verdict"]["overall"] == "pass"
        assert verdict.attempts == 2


def test_each_mode_changes_the_judge_id() -> None:
    ids = {m: _judge(m)[0].judge_id for m in ("plain", "aware", "self", "aware+self")}
    ids["aware-generic"] = _judge("aware", "generic")[0].judge_id
    assert len(set(ids.values())) == 5


def _pairwise(mode: str, bias: str = "authority") -> tuple[PairwiseJudge, RecordingProvider]:
    calls = {"n": 0}

    def answer(request: CompletionRequest, fenced: list[str]) -> str:
        calls["n"] += 1  # first pass picks A, the self pass revisits and picks B
        return pairwise_json("A" if calls["n"] == 1 else "B")

    provider = RecordingProvider(answer)
    cfg = JudgeConfig(spec="fake:judge-1", debias=DebiasConfig(
        mode=mode, bias=bias, criterion="factual accuracy"))  # type: ignore[arg-type]
    return PairwiseJudge(Judge(cfg, provider)), provider


@pytest.mark.parametrize("mode", ["plain", "aware", "self", "aware+self"])
async def test_pairwise_mode_requests(mode: str) -> None:
    pj, provider = _pairwise(mode)
    v = await pj.ask("Appeal deadline?", "Per the ABA formal opinion 512, ten days.", CORRECT,
                     item_id="p1")
    first = provider.requests[0]
    body = _text(first, "user")
    assert "Option A:" in body and CORRECT in body
    assert (AUTHORITY_WARNING in body) == ("aware" in mode)
    if "aware" in mode:
        assert "Judge only factual accuracy." in body
    if "self" not in mode:
        assert len(provider.requests) == 1 and v.winner == "A" and v.first is None
        return
    assert len(provider.requests) == 2
    second = provider.requests[1]
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert second.messages[1].content == pairwise_json("A")
    check = second.messages[2].content
    assert check.startswith(f'{SELF_OPENING}: {{"winner": "A", "score_a": 4.0, "score_b": 2.0}}')
    assert 'Check it for "authority" bias' in check and "rather than on factual accuracy" in check
    # Both verdicts kept, with whether it changed; usage adds up over the two requests.
    assert v.winner == "B" and v.first is not None and v.first["winner"] == "A"
    assert v.changed is True and v.calls == 2 and v.input_tokens == 200


async def test_generic_and_full_list_warnings() -> None:
    pj, provider = _pairwise("aware", "generic")
    await pj.ask("Q?", "x", "y", item_id="g")
    body = _text(provider.requests[0], "user")
    assert f'{GENERIC_WARNING} "factual accuracy"' in body
    pj, provider = _pairwise("aware", "all")
    await pj.ask("Q?", "x", "y", item_id="a")
    body = _text(provider.requests[0], "user")
    for name in ("authority", "confidence", "formatting", "position", "verbosity", "bandwagon",
                 "sentiment"):
        assert f"- {name}: " in body
    pj, provider = _pairwise("self", "generic")
    await pj.ask("Q?", "x", "y", item_id="s")
    assert GENERIC_WARNING.replace("quality", "answer quality") in provider.requests[1].messages[-1].content
