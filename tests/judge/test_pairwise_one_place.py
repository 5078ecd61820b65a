"""Pairwise judging in one place (``judge/pairwise.py``): the callers' differing rules are explicit
parameters, and the requests keep the bytes (so the cache keys) the stores already hold."""

from __future__ import annotations

import hashlib
import json

import pytest

from legal_judge.assets.catalogue import load_assets
from legal_judge.audit.target import JudgeTarget
from legal_judge.debias.pairwise import PairwiseJudge
from legal_judge.judge.config import DebiasConfig, JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.judge.mitigation import prompt_texts
from legal_judge.judge.pairwise import (
    AUDIT_RULES,
    DEBIAS_RULES,
    PairwiseAnswer,
    PairwiseParseError,
    PairwiseRules,
    parse_pairwise_answer,
)

from .fakes import ScriptedProvider

PAIR = json.dumps({"reasoning": "r", "winner": "B", "score_a": 2, "score_b": 4})
# Cache keys of the first request, computed by the code before pairwise judging had one home (the
# audit's fence digested the answers joined by a newline, the experiment's by a NUL).
STORED = {
    ("audit", "plain"): "e2df6c1ca9d66afe09c702a2e259f5f1471b373344da9e27789449e249472aea",
    ("debias", "plain"): "65cb5ce05cb7a05a90a58adfbd0c10e55aa6acd6bce86fd21dbdd5db46c17c35",
    ("audit", "aware"): "8dfae24ccafeba01ce2eac0d61fdc155561f8176813277f6a49c43bf6699c0c8",
    ("debias", "aware"): "8435f1cf3fbc9051e6beb7af5091ccba6232babc9bb9a8484f57e3aa1c3b731d",
}
PROMPT_TEXTS = "82fd2c140dcf69007ab2aa19f24d52adea0e893fa2c4dc561ed290d4bc58f9c1"


def _judge(mode: str) -> tuple[Judge, ScriptedProvider]:
    provider = ScriptedProvider(outputs=[PAIR])
    debias = DebiasConfig(mode=mode, bias="authority")  # type: ignore[arg-type]
    return Judge(JudgeConfig(spec="scripted:model-x", debias=debias), provider), provider


@pytest.mark.parametrize("mode", ["plain", "aware"])
async def test_the_audit_and_the_experiment_send_the_requests_they_cached_before(mode: str) -> None:
    judge, provider = _judge(mode)
    await JudgeTarget(judge).compare("Q?", "one\nanswer", "two", run_id="a", item_id="p")
    assert judge.cache_key(provider.requests[0]) == STORED[("audit", mode)]
    judge, provider = _judge(mode)
    await PairwiseJudge(judge).ask("Q?", "one\nanswer", "two", item_id="p")
    assert judge.cache_key(provider.requests[0]) == STORED[("debias", mode)]


def test_the_pasteable_prompts_are_unchanged() -> None:
    texts = prompt_texts(load_assets(), "authority", criterion="legal accuracy")
    assert hashlib.sha256(json.dumps(texts).encode()).hexdigest() == PROMPT_TEXTS


def test_a_tie_is_an_answer_only_where_the_rules_allow_it() -> None:
    tie = '{"winner": "tie", "score_a": 3, "score_b": 3}'
    assert parse_pairwise_answer(tie, AUDIT_RULES) == PairwiseAnswer("tie", 3.0, 3.0)
    with pytest.raises(PairwiseParseError, match="winner must be 'A' or 'B', got 'tie'"):
        parse_pairwise_answer(tie, DEBIAS_RULES)
    lenient = PairwiseRules(ties=True, scores_required=False)
    assert parse_pairwise_answer(tie, lenient).winner == "tie"


def test_scores_are_required_only_where_the_rules_say_so() -> None:
    no_scores = '{"winner": "A", "reasoning": "r"}'
    assert parse_pairwise_answer(no_scores, DEBIAS_RULES) == PairwiseAnswer("A", None, None, "r")
    with pytest.raises(PairwiseParseError, match="'score_a' not found"):
        parse_pairwise_answer(no_scores, AUDIT_RULES)
    # Out of scale: dropped where optional (the winner stands), refused where required.
    far = '{"winner": "B", "score_a": 9, "score_b": 4}'
    assert parse_pairwise_answer(far, DEBIAS_RULES) == PairwiseAnswer("B", None, 4.0)
    with pytest.raises(PairwiseParseError, match="score_a 9 is outside 0-5"):
        parse_pairwise_answer(far, AUDIT_RULES)
    # Required scores decide a missing winner; an optional-score reading needs the winner.
    assert parse_pairwise_answer('{"score_a": 1, "score_b": 4}', AUDIT_RULES).winner == "B"
    with pytest.raises(PairwiseParseError, match="winner must be"):
        parse_pairwise_answer('{"score_a": 1, "score_b": 4}', DEBIAS_RULES)
