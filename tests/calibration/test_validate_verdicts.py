"""calibrate validate's verdicts on hand-built labelled sets (no judge called).

The paired tests are pinned to scipy/statsmodels on the same vectors: exact McNemar for pass/fail
agreement and the false-pass rate, the paired test on absolute errors with Holm across rubrics.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from legal_judge.calibration.rubrics import rubric_specs
from legal_judge.calibration.validate import overall_verdict, validate_rubrics
from legal_judge.calibration.validation_data import JudgeScores, LawyerSet
from legal_judge.calibration.validation_schema import CalibrationRef, JudgeRef
from legal_judge.models import BenchmarkItem
from legal_judge.policy import ValidationPolicy

POLICY = ValidationPolicy()


def _lawyers(n: int, fails: int) -> LawyerSet:
    _, specs = rubric_specs("legal_judge_set")
    out = LawyerSet([CalibrationRef(calibration_id="cal-x", run_id="r", quarter="2026-Q4",
                                    created_at="2026-11-20T00:00:00+00:00", n_items=n)],
                    specs, "legal_judge_set")
    rng = np.random.default_rng(1)
    for i in range(n):
        key = f"i{i:03d}"
        out.items[key] = BenchmarkItem(id=key, prompt="q", response=f"answer {i}")
        out.runs[key] = "r"
        out.humans.setdefault("legal_soundness", {})[key] = float(1 if i < fails else
                                                                  rng.integers(2, 6))
        out.lawyers_pass[key] = i >= fails
    return out


def _judge(name: str, lawyers: LawyerSet, *, passes: set[str], shift: float,
           seed: int) -> JudgeScores:
    rng = np.random.default_rng(seed)
    out = JudgeScores(JudgeRef(name=name, spec=name, judge_id=name, source="test"))
    for key, score in lawyers.humans["legal_soundness"].items():
        value = float(np.clip(float(score) + shift + rng.normal(0, 0.6), 0, 5))
        out.scores.setdefault("legal_soundness", {})[key] = round(value, 1)
        out.passed[key] = key in passes
    return out


def test_more_false_passes_is_worse_whatever_else_improves() -> None:
    lawyers = _lawyers(60, fails=20)
    keys = lawyers.keys
    right = {k for k in keys if lawyers.lawyers_pass[k]}
    incumbent = _judge("inc", lawyers, passes=right | set(keys[:2]), shift=0.8, seed=1)
    # The candidate scores the rubric closer to the lawyers, but passes 12 of their 20 fails.
    candidate = _judge("cand", lawyers, passes=right | set(keys[:12]), shift=0.0, seed=2)
    rows = validate_rubrics(lawyers, candidate, incumbent, POLICY)
    pf = rows[0]
    fp = pf.false_pass_difference
    assert fp is not None and fp.discordant == (0, 10)
    assert fp.p_value == pytest.approx(mcnemar([[2, 0], [10, 8]], exact=True).pvalue)
    assert pf.verdict == "worse" and pf.reason.startswith("false-pass rate +0.500")
    ls = rows[1]
    assert ls.rubric == "legal_soundness" and ls.verdict == "better"
    verdict, reasons = overall_verdict(rows)
    assert verdict == "worse" and reasons[0].startswith("pass/fail: false-pass rate")
    assert not pf.may_gate and ls.may_gate


def test_absolute_error_test_and_holm_match_scipy_statsmodels() -> None:
    lawyers = _lawyers(40, fails=10)
    lawyers.humans["completeness"] = {k: float(v) for k, v in
                                      lawyers.humans["legal_soundness"].items()}
    inc = _judge("inc", lawyers, passes=set(), shift=0.5, seed=4)
    cand = _judge("cand", lawyers, passes=set(), shift=0.2, seed=5)
    for judge, shift in ((inc, 0.9), (cand, 0.1)):
        judge.scores["completeness"] = {k: float(v) + shift for k, v in
                                        lawyers.humans["completeness"].items()}
    rows = {r.rubric: r for r in validate_rubrics(lawyers, cand, inc, POLICY)}
    h = lawyers.humans["legal_soundness"]
    err_c = [abs(cand.scores["legal_soundness"][k] - float(h[k])) for k in sorted(h)]
    err_i = [abs(inc.scores["legal_soundness"][k] - float(h[k])) for k in sorted(h)]
    diff = rows["legal_soundness"].mae_difference
    assert diff is not None
    expected = (stats.ttest_rel(err_c, err_i).pvalue if diff.test == "paired t-test"
                else stats.wilcoxon(np.round(np.subtract(err_c, err_i), 12)).pvalue)
    assert diff.p_value == pytest.approx(expected, rel=1e-9)
    raw = [rows[r].mae_difference.p_value for r in ("legal_soundness", "completeness")]  # type: ignore[union-attr]
    holm = multipletests(raw, method="holm")[1]
    assert [rows[r].mae_difference.p_adjusted for r in  # type: ignore[union-attr]
            ("legal_soundness", "completeness")] == pytest.approx(list(holm))
    assert rows["completeness"].verdict == "better"


def test_too_few_labels_cannot_tell_and_says_how_many_more() -> None:
    lawyers = _lawyers(12, fails=4)
    right = {k for k in lawyers.keys if lawyers.lawyers_pass[k]}
    same = _judge("a", lawyers, passes=right, shift=0.0, seed=1)
    rows = validate_rubrics(lawyers, same, _judge("b", lawyers, passes=right, shift=0.0, seed=1),
                            POLICY)
    assert rows[0].verdict == "cannot tell" and rows[0].items_needed == 8
    verdict, reasons = overall_verdict(rows)
    assert verdict == "cannot tell" and "about 8 more labelled items" in reasons[0]


def test_identical_judges_on_enough_items_are_not_worse() -> None:
    lawyers = _lawyers(80, fails=20)
    right = {k for k in lawyers.keys if lawyers.lawyers_pass[k]}
    a = _judge("a", lawyers, passes=right, shift=0.0, seed=1)
    b = _judge("b", lawyers, passes=right, shift=0.0, seed=1)
    rows = validate_rubrics(lawyers, a, b, POLICY)
    assert rows[0].verdict == "not worse"  # no discordant item in 80: the CI stays inside 0.05
    assert overall_verdict(rows)[0] == "not worse"
