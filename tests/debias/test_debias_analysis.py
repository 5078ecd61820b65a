"""McNemar against statsmodels reference values, over-correction, the recommendation rule."""

from __future__ import annotations

from typing import Any

import pytest

from legal_judge.debias.analysis import analyze, recommend
from legal_judge.debias.experiment import run_experiment
from legal_judge.debias.pairs import DebiasPair, TrialOutcome
from legal_judge.judge.config import JudgeConfig
from legal_judge.models import CompletionRequest
from legal_judge.stats import mcnemar_exact, mcnemar_from_outcomes

from .conftest import CORRECT, RecordingProvider, knows_answer, pair_row, pairwise_json

# statsmodels.stats.contingency_tables.mcnemar(table, exact=True) on these 2x2 tables
# [[both right, right->wrong], [wrong->right, both wrong]] (statsmodels 0.14):
STATSMODELS = [
    ([[10, 1], [8, 5]], 1.0, 0.0390625),
    ([[20, 2], [10, 4]], 2.0, 0.03857421875),
    ([[7, 5], [5, 3]], 5.0, 1.0),
    ([[12, 0], [6, 2]], 0.0, 0.03125),
    ([[30, 3], [12, 9]], 3.0, 0.03515625),
    ([[5, 14], [4, 1]], 4.0, 0.0308837890625),
]


@pytest.mark.parametrize(("table", "statistic", "p"), STATSMODELS)
def test_mcnemar_matches_statsmodels(table: list[list[int]], statistic: float, p: float) -> None:
    res = mcnemar_exact(table[0][1], table[1][0])
    assert res.statistic == statistic
    assert res.p_value == pytest.approx(p, rel=1e-12)
    # The same table as per-item outcomes, the way the experiment calls it.
    before = [True] * (table[0][0] + table[0][1]) + [False] * (table[1][0] + table[1][1])
    after = ([True] * table[0][0] + [False] * table[0][1] + [True] * table[1][0]
             + [False] * table[1][1])
    assert mcnemar_from_outcomes(before, after).p_value == pytest.approx(p, rel=1e-12)


def _outcome(i: int, mode: str, correct: bool, *, bias: str = "authority", role: str = "test",
             tokens: int = 100) -> TrialOutcome:
    return TrialOutcome(key=f"{bias}-{i}:wrong-first", pair_id=f"{bias}-{i}", bias=bias, role=role,
                        wrong_first=True, mode=mode, status="ok", winner="B" if correct else "A",
                        correct=correct, changed=None, calls=1, input_tokens=tokens,
                        output_tokens=0, cost_usd=0.0)


def test_analyze_uses_the_paired_table() -> None:
    # 24 trials: plain right on 11; aware keeps 10 of them, loses 1, gains 8 (table 1 above).
    plain = [True] * 11 + [False] * 13
    aware = [True] * 10 + [False] + [True] * 8 + [False] * 5
    rows = [_outcome(i, "plain", c) for i, c in enumerate(plain)]
    rows += [_outcome(i, "aware", c, tokens=120) for i, c in enumerate(aware)]
    report = analyze(rows, modes=["plain", "aware"], requests={"plain": 1, "aware": 1})
    cell = report["biases"]["authority"]["modes"]["aware"]
    assert cell["mcnemar"]["p_value"] == pytest.approx(0.0390625)
    assert (cell["mcnemar"]["b"], cell["mcnemar"]["c"]) == (1, 8)
    assert cell["accuracy"] == pytest.approx(18 / 24) and cell["change"] == pytest.approx(7 / 24)
    lo, hi = cell["ci95"]
    assert lo == pytest.approx(0.5506, abs=1e-3) and hi == pytest.approx(0.8804, abs=1e-3)
    assert report["biases"]["authority"]["recommendation"]["mode"] == "aware"
    assert report["modes"]["aware"]["tokens_per_trial"] == 120


def _cell(change: float, p: float, *, tokens: float = 100.0, flagged: bool = False) -> dict[str, Any]:
    return {"change": change, "significant": p < 0.05, "worse": False, "accuracy": 0.5 + change,
            "mcnemar": {"p_value": p}, "p_holm": p, "tokens_per_trial": tokens,
            "over_correction": {"flagged": flagged}}


def test_recommend_prefers_fewer_requests_then_the_warning_then_specific() -> None:
    req = {"plain": 1, "aware": 1, "aware-generic": 1, "self": 2, "aware+self": 2}
    base = {"plain": _cell(0.0, 1.0)}
    cells = {**base, "aware": _cell(0.2, 0.01, tokens=130), "aware-generic": _cell(0.3, 0.001),
             "self": _cell(0.4, 0.0001), "aware+self": _cell(0.4, 0.0001)}
    assert recommend("authority", cells, requests=req)["mode"] == "aware"
    cells = {**base, "aware": _cell(0.05, 0.6), "aware-generic": _cell(-0.1, 0.5),
             "self": _cell(0.3, 0.001, tokens=800), "aware+self": _cell(0.3, 0.001, tokens=900)}
    r = recommend("verbosity", cells, requests=req)
    assert (r["mode"], r["basis"], r["agrees_with_paper"]) == ("self", "significant", True)
    # Nothing significant: no recommendation (plain), the largest gain kept only for the record;
    # an over-correcting mode never wins (issue 20 #19).
    cells = {**base, "aware": _cell(0.1, 0.3), "self": _cell(0.2, 0.2),
             "aware+self": _cell(0.5, 0.001, flagged=True)}
    r = recommend("authority", cells, requests=req)
    assert (r["mode"], r["basis"]) == ("plain", "no mode helped significantly")
    assert r["largest_gain"]["mode"] == "self" and "p_value" not in r
    cells = {**base, "aware": _cell(-0.1, 0.3)}
    assert recommend("authority", cells, requests=req)["strategy"] == "plain"


async def test_over_correction_is_flagged_on_reversed_signal_controls() -> None:
    # Plain follows the first slot (a position bias); warned, it flips to always the second slot:
    # right on every wrong-first trial, wrong on every reversed (correct-first) control.
    def answer(request: CompletionRequest, fenced: list[str]) -> str:
        warned = "IMPORTANT:" in request.messages[0].content
        return pairwise_json("B" if warned else "A")

    pairs = [DebiasPair(**pair_row(i, "position", wrong_first=True)) for i in range(10)]
    provider = RecordingProvider(answer)
    report = await run_experiment(JudgeConfig(spec="fake:judge-1"), pairs, provider=provider,
                                  modes=["plain", "aware"], repeats=1)
    pos = report["biases"]["position"]
    assert pos["modes"]["plain"]["accuracy"] == 0.0
    aware = pos["modes"]["aware"]
    assert aware["accuracy"] == 1.0 and aware["significant"]
    oc = aware["over_correction"]
    assert (oc["effect_plain"], oc["effect_mode"]) == (1.0, -1.0)
    assert oc["sign_flip"] and oc["flagged"] and oc["control_accuracy"] == 0.0
    assert oc["control_mcnemar_p"] == pytest.approx(2 * 0.5 ** 10)
    assert pos["recommendation"]["strategy"] == "plain"
    # Both orders of every pair were asked: the tie rule turns all of them into ties.
    bal = pos["modes"]["plain"]["balanced"]
    assert bal["tie_rate"] == 1.0 and bal["position_consistency"] == 0.0
    assert bal["preference_fairness"] == -1.0


async def test_a_fair_judge_is_not_flagged_and_needs_no_mitigation() -> None:
    pairs = [DebiasPair(**pair_row(i, b, wrong_first=i % 2 == 0))
             for i in range(6) for b in ("position", "authority")]
    provider = RecordingProvider(knows_answer)
    report = await run_experiment(JudgeConfig(spec="fake:judge-1"), pairs, provider=provider,
                                  modes=["plain", "aware", "self"], repeats=2)
    for bias in ("position", "authority"):
        b = report["biases"][bias]
        assert b["modes"]["plain"]["accuracy"] == 1.0
        assert b["recommendation"]["mode"] == "plain"
        assert b["repetition_stability"] == 1.0
    assert report["biases"]["position"]["modes"]["aware"]["over_correction"]["flagged"] is False
    assert report["biases"]["authority"]["modes"]["aware"]["over_correction"] is None
    # plain: 12 pairs x 2 orders + 1 repeat of the 18 test trials; self: 2 requests per trial.
    assert report["modes"]["plain"]["calls"] == 24 and report["modes"]["self"]["calls"] == 48
    assert len(provider.requests) == 24 + 18 + 24 + 48
    assert CORRECT in provider.requests[0].messages[0].content
