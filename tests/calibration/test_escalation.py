"""The escalation's library: the item confidence, the sample rules, transported labels."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from legal_judge.calibration import compare, draw_sample, from_store, rubric_specs, save_calibration
from legal_judge.calibration.confidence import item_confidence
from legal_judge.calibration.escalation import escalate, escalation_figures
from legal_judge.calibration.labels import import_labels
from legal_judge.calibration.verdict import kappa_reason
from legal_judge.errors import ConfigError
from legal_judge.policy import CalibrationPolicy
from legal_judge.store import Store

RSET, SPECS = rubric_specs()


def _result(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "item_id": "x", "status": "ok", "overall": "pass", "votes": {"pass": 1.0, "fail": 0.0},
        "scores": {"legal_soundness": 4.0, "jurisdiction_awareness": 3.0, "completeness": 4.0},
        "disagreement": {"legal_soundness": {"range": 1.0}, "completeness": {"range": 0.5}},
        "flagged_for_review": False, "overrides": [], "checks": {}}
    return {**base, **kw}


def test_item_confidence_components() -> None:
    sure = item_confidence(_result(), RSET)
    assert sure is not None
    # unanimous vote 1; 3 points above the closest line (capped: 1); largest range 1 of 5
    assert (sure.vote, sure.rule, sure.agreement, sure.review) == (1.0, 1.0, 0.8, False)
    assert sure.value == pytest.approx((1 + 1 + 0.8) / 3)
    split = item_confidence(_result(votes={"pass": 2 / 3, "fail": 1 / 3},
                                     flagged_for_review=True), RSET)
    assert split is not None and split.vote == pytest.approx(1 / 3) and split.review
    assert split.value == pytest.approx((1 / 3 + 1 + 0.8) / 3 / 2)
    # a fail decided by legal_soundness 0.5 <= 1: half a point below the line
    fail = item_confidence(_result(overall="fail", votes={"pass": 0.0, "fail": 1.0},
                                   scores={"legal_soundness": 0.5,
                                           "jurisdiction_awareness": 3.0}), RSET)
    assert fail is not None and fail.rule == pytest.approx(0.25)
    near = item_confidence(_result(scores={"legal_soundness": 1.5,
                                           "jurisdiction_awareness": 3.0}), RSET)
    assert near is not None and near.rule == pytest.approx(0.25)
    assert item_confidence(_result(status="inconclusive"), RSET) is None
    forced = item_confidence(_result(checks={"forces_citation_zero": True}), RSET)
    assert forced is not None and forced.review and forced.value == pytest.approx(sure.value / 2)
    on_rubric = item_confidence(_result(), RSET, rubric="completeness")
    assert on_rubric is not None and on_rubric.value == pytest.approx(0.9)


def test_item_confidence_uses_log_probability_expected_scores_when_present() -> None:
    sure = item_confidence(_result(), RSET)
    assert sure is not None and sure.expected is None  # no log-probabilities: three components
    # the judges chose 4 on legal soundness but weighed it down to an expected 1.5: half a point
    # above the line (1) instead of three, so the rule distance on expected scores is 0.25
    soft = item_confidence(_result(expected_scores={"legal_soundness": 1.5,
                                                    "jurisdiction_awareness": 3.0}), RSET)
    assert soft is not None and soft.expected == pytest.approx(0.25)
    assert soft.value == pytest.approx((1 + 1 + 0.8 + 0.25) / 4)
    # on one rubric: 1 - |expected - chosen| beside that rubric's agreement
    on_rubric = item_confidence(_result(expected_scores={"completeness": 3.6}), RSET,
                                rubric="completeness")
    assert on_rubric is not None and on_rubric.expected == pytest.approx(0.6)
    assert on_rubric.value == pytest.approx((0.9 + 0.6) / 2)


def _label(store: Store, run_id: str, items: list[str], truth: Any, path: Path) -> None:
    """Lawyers' own pass/fail on ``items``: the truth's rule."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "run_id", "rubric", "score", "annotator", "labeled_at"])
        for i in items:
            s, h = truth.scores[i], truth.hallucination[i]
            failed = h == "hallucinated" or s["legal_soundness"] <= 1 or \
                s["jurisdiction_awareness"] == 0
            w.writerow([i, run_id, "pass_fail", "fail" if failed else "pass", "lawyer_a",
                        "2026-11-20"])
            w.writerow([i, run_id, "legal_soundness", int(s["legal_soundness"]), "lawyer_a",
                        "2026-11-20"])
    import_labels(store, path, SPECS, run_id=run_id)


def test_transported_from_another_run_of_the_same_ensemble(store: Store, make_run: Any,
                                                           home: Path) -> None:
    truth = make_run(store, "run-a", n_items=80, bias=0.0, seed=1)
    sample = draw_sample(store, "run-a", n=70, seed=2)
    _label(store, "run-a", [s.item_id for s in sample.items], truth, home / "a.csv")
    save_calibration(store, compare(from_store(store, "run-a"), quarter="2026-Q4"))
    make_run(store, "run-b", n_items=40, bias=0.0, seed=3, prefix="b")
    report = escalate(store, "run-b", target=0.85, confidence=0.95)
    assert report.source == "transported" and report.label_run_id == "run-a"
    assert report.n_items == 40 and report.n_labelled == 70
    assert report.notes[0].startswith("transported from run run-a (calibration cal-2026-Q4-")
    # every item of run-b is either decided or escalated, none was labelled here
    assert sorted(report.decided + report.escalated) == sorted(f"b-{i:03d}" for i in range(40))
    assert report.reviewed == []
    figures = escalation_figures(store, "run-b")
    assert figures is not None and figures.pending == len(report.escalated)


def test_unequal_strata_weighted_empty_stratum_refused_and_assume_random(
        store: Store, make_run: Any, home: Path) -> None:
    truth = make_run(store, "run-s", n_items=80, seed=4)
    sample = draw_sample(store, "run-s", n=60, stratify="pass_fail", seed=5)
    fails = [s.item_id for s in sample.items if s.stratum == "fail"]
    passes = [s.item_id for s in sample.items if s.stratum == "pass"]
    assert len(fails) > 2 and passes
    # no sampled fail labelled at all: nothing can stand for the run's fails
    _label(store, "run-s", passes, truth, home / "s0.csv")
    with pytest.raises(ConfigError, match="cover no item of stratum 'fail'") as err:
        escalate(store, "run-s")
    assert err.value.code == "escalation-sample"
    # the lawyers labelled every sampled pass but only two sampled fails: weighted, and said so
    _label(store, "run-s", fails[:2], truth, home / "s1.csv")
    report = escalate(store, "run-s", target=0.8)
    assert report.sample_kind.endswith("unequal rates: weighted (effective sample size)")
    assert any("the guarantee is approximate, not exact" in n for n in report.notes)
    # the two fails weigh as many as the run's fails: the effective count is below the labels'
    assert report.n_labelled == len(passes) + 2
    assert report.steps and all(step.n_kept < report.n_labelled for step in report.steps)

    make_run(store, "run-r", n_items=60, seed=6, prefix="r")
    _label(store, "run-r", [f"r-{i:03d}" for i in range(50)],
           _truth_of(store, "run-r"), home / "r.csv")
    with pytest.raises(ConfigError, match="match no sample"):
        escalate(store, "run-r")
    report = escalate(store, "run-r", assume_random=True, target=0.8)
    assert report.sample_kind == "assumed random (--assume-random)"
    assert "--assume-random" in report.notes[0]
    on_rubric = escalate(store, "run-r", assume_random=True, target=0.8,
                         rubric="legal_soundness")
    assert on_rubric.agreement_on == "legal_soundness within ±1 point"
    assert on_rubric.n_labelled == 50
    with pytest.raises(ConfigError, match="not a numeric rubric") as bad:
        escalate(store, "run-r", assume_random=True, rubric="hallucination")
    assert "legal_soundness" in (bad.value.fix or "")


class _Truth:
    def __init__(self, scores: dict[str, dict[str, float]], hall: dict[str, str]) -> None:
        self.scores, self.hallucination = scores, hall


def _truth_of(store: Store, run_id: str) -> _Truth:
    """Lawyers who agree with the ensemble's scores (for the sample-rule tests)."""
    results = store.load_results(run_id)
    return _Truth({i: {k: float(round(v)) for k, v in r["scores"].items()}
                   for i, r in results.items()},
                  {i: str(r.get("hallucination") or "clean") for i, r in results.items()})


def test_kappa_paradox_sentence() -> None:
    th = CalibrationPolicy()
    with_ac1 = kappa_reason(0.21, (-0.1, 0.5), 0.875, th, kind="pass/fail kappa",
                            robust=("AC1", 0.85))
    assert with_ac1 is not None and "kappa paradox" in with_ac1.message
    assert "AC1 0.85" in with_ac1.message and "raw agreement is high (88%)" in with_ac1.message
    plain = kappa_reason(0.21, (-0.1, 0.5), 0.875, th, kind="pass/fail kappa")
    low_ac1 = kappa_reason(0.21, (-0.1, 0.5), 0.875, th, robust=("AC1", 0.4))
    low_raw = kappa_reason(0.21, (-0.1, 0.5), 0.6, th, robust=("AC1", 0.85))
    assert all(r is not None and "paradox" not in r.message for r in (plain, low_ac1, low_raw))


def test_plan_from_stated_assumptions(store: Store, make_run: Any, invoke: Any) -> None:
    from legal_judge.stats import labels_for_margin

    make_run(store, "run-p", n_items=40, seed=8)
    missing = invoke("calibrate", "plan", "run-p")
    assert missing.exit_code == 2 and "--pass-rate" in missing.output
    res = invoke("calibrate", "plan", "run-p", "--pass-rate", "0.8", "--rho", "0.8",
                 "--coverage", "0.8", "--disagreement", "0", "--json")
    assert res.exit_code == 0, res.output
    import json

    plan = json.loads(res.output)
    assert plan["labels_without_judges"] == 246  # z^2 · 0.16 / 0.05^2 = 245.9
    assert plan["labels_with_judges"] == labels_for_margin(0.16, 0.05, rho=0.8, n_unlabelled=40)
    assert 89 < plan["labels_with_judges"] < 246  # 89 for an infinite run
    assert plan["escalation_labels"] == 37  # floor(0.8 · 37) = 29 kept, zero disagreements
    assert plan["escalated_per_1000"] == 200 and plan["judges_help"] is True
    assert set(plan["sources"].values()) == {"stated"}
    text = " ".join(invoke("calibrate", "plan", "run-p", "--pass-rate", "0.8", "--rho", "0.05",
                           "--disagreement", "0.2").output.split())
    assert "the judges' scores do not help" in text and "no number of labels guarantees" in text
    assert "expected escalations: 1000 per 1,000" in text


def test_plan_refuses_a_stated_input_out_of_range(store: Store, make_run: Any,
                                                  invoke: Any) -> None:
    # `--pass-rate 1.5` planned "1 labels"; `--coverage 0` blamed a 0% disagreement for "more
    # than 10%"; `--target 0.3` was taken although `calibrate escalate` refuses it.
    make_run(store, "run-q", n_items=40, seed=8)
    stated = ("--pass-rate", "0.8", "--rho", "0.8", "--coverage", "0.8", "--disagreement", "0")
    for flag, value in (("--pass-rate", "1.5"), ("--coverage", "0"), ("--margin", "2"),
                        ("--rho", "nan"), ("--disagreement", "-0.1")):
        args = list(stated)
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
        res = invoke("calibrate", "plan", "run-q", *args)
        assert res.exit_code == 2 and f"{flag} {value}: must be a number" in res.output, \
            res.output
    res = invoke("calibrate", "plan", "run-q", *stated, "--target", "0.3")
    assert res.exit_code == 2 and "must lie in [0.5, 1)" in res.output
