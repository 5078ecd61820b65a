"""The judge's JSON retry policy through the real SDKs: what actually goes over the wire."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import httpx
import pytest

from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.providers.registry import get_provider

RETRY = "Your previous output was not valid JSON. Ensure the response strictly conforms to the output schema."


def _verdict() -> dict[str, Any]:
    return {"rubrics": {
        "legal_soundness": {"score": 4, "rationale": "r"}, "citation_quality": {"score": 3, "rationale": "r"},
        "jurisdiction_awareness": {"score": 4, "rationale": "r"}, "completeness": {"score": 3, "rationale": "r"},
        "hallucination": {"result": "clean", "notes": ""}}, "overall": "pass", "summary": "s"}


def _item() -> Any:
    return next(i for i in load_dataset(sample_dataset_path()) if i.id == "us-ca-001")


def _run(judge: Judge) -> Any:
    async def go() -> Any:
        return await judge.judge(_item())
    return asyncio.run(go())


def test_openai_retry_policy_on_the_wire(kit: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", kit.OPENAI_KEY)
    template = kit.load_fixture("openai/chat_completion.json")
    contents = ["Sure! The answer scores 4/5.", '{"rubrics": {"legal_soundness": {"score": 9}}}',
                json.dumps(_verdict())]
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        body = copy.deepcopy(template["body"])
        body["choices"][0]["message"]["content"] = contents[len(sent) - 1]
        return httpx.Response(200, json=body)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    judge = Judge(JudgeConfig(spec="openai:gpt-4o"), get_provider("openai:gpt-4o", http_client=client))
    verdict = _run(judge)
    assert verdict.status == "ok" and verdict.attempts == 3 and verdict.scores["legal_soundness"] == 4
    assert [b["temperature"] for b in sent] == [0.0, 0.2, 0.4]
    assert all(b["model"] == "gpt-4o" for b in sent)
    schema = sent[0]["response_format"]["json_schema"]["schema"]
    assert "hallucination" in schema["properties"]["rubrics"]["properties"]
    assert RETRY not in json.dumps(sent[0]["messages"])
    assert sent[1]["messages"][-1]["content"].startswith(RETRY)
    assert sent[1]["messages"][-2] == {"role": "assistant", "content": contents[0]}
    assert sent[2]["messages"][-1]["content"].startswith(RETRY) and "outside 0-5" not in json.dumps(sent[1])
    assert verdict.input_tokens and verdict.cost_usd is not None and verdict.cost_usd > 0


def test_anthropic_forced_tool_then_inconclusive_keeps_raw(kit: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", kit.ANTHROPIC_KEY)
    template = kit.load_fixture("anthropic/message_tool_use.json")
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=template["body"])  # always a verdict missing 4 rubrics

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    spec = "anthropic:claude-haiku-4-5"
    judge = Judge(JudgeConfig(spec=spec), get_provider(spec, http_client=client))
    verdict = _run(judge)
    assert verdict.status == "inconclusive" and verdict.scores == {} and verdict.attempts == 3
    assert "citation_quality is missing" in (verdict.reason or "")
    assert '"legal_soundness"' in verdict.raw
    assert len(sent) == 3
    assert sent[0]["tool_choice"] == {"type": "tool", "name": "verdict"}
    assert "IMPORTANT RULES" in json.dumps(sent[0]["system"])
    assert sent[2]["messages"][-1]["content"].startswith(RETRY) if isinstance(
        sent[2]["messages"][-1]["content"], str) else RETRY in json.dumps(sent[2]["messages"][-1])
