"""Pairwise judging: the tie rule, score averaging, parsing, retries, repeats and position metrics."""

from __future__ import annotations

import pytest

from legal_judge.debias.pairwise import (
    OrderVerdict,
    PairwiseJudge,
    PairwiseParseError,
    combine_orders,
    pair_fence,
    parse_pairwise,
    position_summary,
    stability,
)
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.models import CompletionRequest

from .conftest import CORRECT, RecordingProvider, knows_answer, pairwise_json

WRONG = "The deadline is one year."


def _ov(winner: str | None, a: float | None = None, b: float | None = None) -> OrderVerdict:
    return OrderVerdict("ok" if winner else "inconclusive", winner=winner, score_a=a,  # type: ignore[arg-type]
                        score_b=b)


def test_consistent_winner_stands_and_scores_average() -> None:
    # Original order: A wins 4 vs 2. Swapped: slot B (= identity A) wins 3 vs 5.
    p = combine_orders(_ov("A", 4.0, 2.0), _ov("B", 3.0, 5.0))
    assert (p.winner, p.verdict_ab, p.verdict_ba, p.consistent) == ("A", "A", "A", True)
    assert p.score_a == pytest.approx(4.5) and p.score_b == pytest.approx(2.5)


def test_inconsistent_winner_is_a_tie() -> None:
    # The judge picked the first slot both times: primacy, so the pair is a tie.
    p = combine_orders(_ov("A", 4.0, 3.0), _ov("A", 4.0, 3.0))
    assert (p.winner, p.verdict_ab, p.verdict_ba, p.consistent) == ("tie", "A", "B", False)
    assert p.score_a == pytest.approx(3.5) and p.score_b == pytest.approx(3.5)
    # An unscored order can never make a consistent winner.
    q = combine_orders(_ov("B", 1.0, 4.0), _ov(None))
    assert q.winner == "tie" and q.score_a is None


def test_parse_pairwise() -> None:
    assert parse_pairwise('```json\n{"winner": "b", "score_a": 1, "score_b": 4.5}\n```') == (
        "B", 1.0, 4.5, "")
    assert parse_pairwise('Reasoning first. {"reasoning": "r", "winner": "A", "score_a": 9}')[:3] \
        == ("A", None, None)
    for bad in ("no json", '{"winner": "C"}', "[1, 2]"):
        with pytest.raises(PairwiseParseError):
            parse_pairwise(bad)


def test_fence_cannot_be_closed_by_either_answer() -> None:
    open_, close = pair_fence("x", "y")
    assert open_ != pair_fence("y", "x")[0]
    assert close.startswith("<<<END_UNTRUSTED_ANSWER ") and open_[-19:-3] == close[-19:-3]


def _pj(answer: object) -> tuple[PairwiseJudge, RecordingProvider]:
    provider = RecordingProvider(answer)  # type: ignore[arg-type]
    return PairwiseJudge(Judge(JudgeConfig(spec="fake:judge-1"), provider)), provider


async def test_compare_asks_both_orders_and_maps_identities() -> None:
    pj, provider = _pj(knows_answer)
    fair = await pj.compare("Deadline?", WRONG, CORRECT, item_id="x")
    assert len(provider.requests) == 2
    assert (fair.winner, fair.consistent) == ("B", True)

    first_slot, _ = _pj(lambda r, f: pairwise_json("A"))
    biased = await first_slot.compare("Deadline?", WRONG, CORRECT, item_id="x")
    assert (biased.winner, biased.verdict_ab, biased.verdict_ba) == ("tie", "A", "B")
    summary = position_summary([biased, biased, fair])
    assert summary["position_consistency"] == pytest.approx(1 / 3)
    assert summary["preference_fairness"] == -1.0  # every flip favoured the first slot
    assert summary["n_primacy"] == 2


async def test_invalid_json_is_retried_then_inconclusive() -> None:
    answers = iter(["not json", pairwise_json("B")])
    pj, provider = _pj(lambda r, f: next(answers))
    v = await pj.ask("Q?", WRONG, CORRECT, item_id="r")
    assert v.status == "ok" and v.winner == "B" and v.calls == 2
    assert "not valid JSON" in provider.requests[1].messages[-1].content
    assert [r.temperature for r in provider.requests] == [0.0, 0.2]

    bad, provider = _pj(lambda r, f: "never json")
    v = await bad.ask("Q?", WRONG, CORRECT, item_id="r")
    assert v.status == "inconclusive" and v.winner is None and v.calls == 3
    assert "invalid output after 3 attempts" in (v.reason or "")


async def test_repeats_are_real_calls_with_distinct_seeds() -> None:
    def by_seed(request: CompletionRequest, fenced: list[str]) -> str:
        return pairwise_json("A" if (request.seed or 0) % 3 == 0 else "B")

    pj, provider = _pj(by_seed)
    reps = await pj.repeat("Q?", WRONG, CORRECT, k=3, item_id="k")
    assert [r.seed for r in provider.requests] == [None, 1, 2]
    assert [v.winner for v in reps] == ["A", "B", "B"]
    assert stability([reps, [_ov("A")] * 3]) == pytest.approx((2 / 3 + 1) / 2)
