"""Shared helpers of the debias tests: a recording fake provider and a small pair fixture."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from legal_judge.models import CompletionRequest, CompletionResponse, Usage
from legal_judge.providers.base import parse_spec

_FENCED = re.compile(r"<<<UNTRUSTED_ANSWER (\w+)>>>\n?(.*?)\n?<<<END_UNTRUSTED_ANSWER \1>>>",
                     re.DOTALL)
CORRECT = "The statutory deadline is thirty days from the decision; it runs from notification."

Answer = Callable[[CompletionRequest, list[str]], str]


class RecordingProvider:
    """Answers with ``answer(request, fenced_answers)`` and records every request it receives."""

    def __init__(self, answer: Answer, *, spec: str = "fake:judge-1") -> None:
        self.spec = parse_spec(spec)
        self.family = "fake"
        self.answer = answer
        self.requests: list[CompletionRequest] = []

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        self.requests.append(request)
        first_user = next(m.content for m in request.messages if m.role == "user")
        fenced = [m.group(2) for m in _FENCED.finditer(first_user)]
        text = self.answer(request, fenced)
        return CompletionResponse(text=text, model=self.spec.model,
                                  usage=Usage(input_tokens=100, output_tokens=20))

    async def aclose(self) -> None:
        """Nothing to release."""


def pairwise_json(winner: str, score_a: float = 4.0, score_b: float = 2.0) -> str:
    """A pairwise verdict as the judge would write it."""
    return json.dumps({"reasoning": "because", "winner": winner, "score_a": score_a,
                       "score_b": score_b})


def knows_answer(request: CompletionRequest, fenced: list[str]) -> str:
    """A fair judge: picks the slot holding the correct answer."""
    return pairwise_json("A" if fenced and fenced[0] == CORRECT else "B")


def pair_row(i: int, bias: str, *, wrong_first: bool, **extra: Any) -> dict[str, Any]:
    """One valid pair-file row."""
    return {"id": f"{bias}-{i:03d}", "bias": bias, "question": f"Question {i}?",
            "criterion": "legal accuracy", "correct_answer": CORRECT,
            "wrong_answer": f"Wrong answer {i} for {bias}.", "wrong_first": wrong_first,
            "reason": "The statute says thirty days.", "jurisdiction": "FR", **extra}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty LEGAL_JUDGE_HOME."""
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(tmp_path))
    return tmp_path
