"""The verdict schema sent to providers makes an integral rubric scale an integer enum, so that a
grammar-constrained server (llama.cpp enforces enums, not numeric ranges) cannot emit 7.8 or -1; the
answer is still validated by the judge."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest

from legal_judge.assets.catalogue import load_assets
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.judge.parse import verdict_schema
from legal_judge.models import BenchmarkItem, CompletionRequest, CompletionResponse
from legal_judge.providers.registry import register_provider, unregister_provider


def _rubrics() -> list[Any]:
    assets = load_assets()
    return [assets.rubric(n) for n in assets.rubric_set("legal_judge_set").rubrics]


def test_numeric_rubrics_are_integer_enums() -> None:
    schema = verdict_schema(_rubrics())
    score = schema["properties"]["rubrics"]["properties"]["legal_soundness"]["properties"]["score"]
    assert score["type"] == "integer" and score["enum"] == [0, 1, 2, 3, 4, 5]
    valid = {"rubrics": {r.name: ({"score": 4, "rationale": "x"} if r.kind == "numeric"
                                  else {"result": "clean", "notes": ""}) for r in _rubrics()},
             "overall": "pass", "summary": "ok"}
    jsonschema.validate(valid, schema)
    for bad in (7.8, -1, 3.5):
        broken = json.loads(json.dumps(valid))
        broken["rubrics"]["completeness"]["score"] = bad
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)


class _Scripted:
    """Answers 7.8 once, then a valid verdict; records the schema it was sent."""

    def __init__(self, spec: Any) -> None:
        self.spec, self.family, self.schemas, self.calls = spec, "scripted", [], 0

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        self.calls += 1
        self.schemas.append(request.json_schema)
        score = 7.8 if self.calls == 1 else 4
        body = {"rubrics": {r.name: ({"score": score, "rationale": "x"} if r.kind == "numeric"
                                     else {"result": "clean", "notes": ""}) for r in _rubrics()},
                "overall": "pass", "summary": "ok"}
        return CompletionResponse(text=json.dumps(body), model="m")


def test_the_judge_sends_the_enum_and_still_rejects_an_out_of_scale_answer() -> None:
    made: list[_Scripted] = []

    def factory(spec: Any, options: Any, http: Any) -> _Scripted:
        made.append(_Scripted(spec))
        return made[-1]

    register_provider("scripted-enum", factory)
    try:
        from legal_judge.providers.registry import get_provider

        judge = Judge(JudgeConfig(spec="scripted-enum:m"), get_provider("scripted-enum:m"),
                      store=None)
        verdict = asyncio.run(judge.judge(BenchmarkItem(id="x", prompt="q", response="a")))
    finally:
        unregister_provider("scripted-enum")
    sent = made[0].schemas[0]["properties"]["rubrics"]["properties"]["completeness"]
    assert sent["properties"]["score"]["enum"] == [0, 1, 2, 3, 4, 5]
    assert made[0].calls == 2 and verdict.status == "ok"  # 7.8 was refused and retried
    assert verdict.scores["completeness"] == 4.0
