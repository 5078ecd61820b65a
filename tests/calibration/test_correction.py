"""The fitted correction: monotone, keyed by judge_id, never hides raw scores, respects overrides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from legal_judge.calibration import (
    apply_correction,
    calibration_history,
    compare,
    correct_result,
    correct_verdict,
    fit_correction,
    from_files,
    load_correction,
    save_calibration,
)
from legal_judge.errors import ConfigError, NotFoundError
from legal_judge.store import Store

# judge score -> lawyer score: the judge is 1 point generous, except at the top of the scale
PAIRS = [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4), (5, 5), (2, 1), (3, 2), (4, 4), (1, 1)]


def _files(tmp_path: Path, *, judge_id: str = "ens-1", shift: int = 0) -> tuple[Path, Path]:
    scores, labels = tmp_path / f"s{shift}.csv", tmp_path / f"l{shift}.csv"
    s = ["item_id,rubric,judge,score,judge_id"]
    lab = ["item_id,rubric,score,annotator,labeled_at"]
    for k, (j, h) in enumerate(PAIRS):
        s.append(f"i{k},legal_soundness,ensemble,{j},{judge_id}")
        s.append(f"i{k},citation_quality,ensemble,{j},{judge_id}")
        lab.append(f"i{k},legal_soundness,{min(5, h + shift)},ann,2026-10-01")
        lab.append(f"i{k},citation_quality,{min(5, h + shift)},ann,2026-10-01")
    scores.write_text("\n".join(s) + "\n")
    labels.write_text("\n".join(lab) + "\n")
    return scores, labels


@pytest.fixture
def correction(store: Store, tmp_path: Path) -> Any:
    report = save_calibration(store, compare(from_files(*_files(tmp_path)), quarter="2026-Q3"))
    return fit_correction(store, report.calibration_id or "", min_pairs=5)


def test_isotonic_map_is_monotone_and_reference(correction: Any) -> None:
    # pooled means per judge score: 1->0.5, 2->1, 3->2, 4->3.5, 5->4.5 (already monotone)
    got = [apply_correction(correction, "legal_soundness", "ens-1", x) for x in (1, 2, 3, 4, 5)]
    assert got == pytest.approx([0.5, 1.0, 2.0, 3.5, 4.5])
    assert apply_correction(correction, "legal_soundness", "ens-1", 3.5) == pytest.approx(2.75)
    assert apply_correction(correction, "legal_soundness", "ens-1", 0) == pytest.approx(0.5)
    with pytest.raises(ConfigError, match="no map for judge_id other"):
        apply_correction(correction, "legal_soundness", "other", 3)


def test_correct_result_keeps_raw_scores_and_overrides(correction: Any) -> None:
    result: dict[str, Any] = {"item_id": "x", "status": "ok", "scores": {"legal_soundness": 3.0,
              "citation_quality": 0.0, "completeness": 4.0},
              "raw_scores": {"legal_soundness": 3.0, "citation_quality": 4.0, "completeness": 4.0},
              "flags": [], "overrides": ["fabricated_source: Rule 1: a fabricated source ..."]}
    out = correct_result(result, correction, judge_id="ens-1")
    assert out["scores"] == {"legal_soundness": 2.0, "citation_quality": 0.0, "completeness": 4.0}
    assert out["raw_scores"] == result["raw_scores"]
    assert out["flags"] == [f"calibrated:{correction.id}"]
    assert result["scores"]["legal_soundness"] == 3.0  # input untouched
    with pytest.raises(ConfigError, match="already calibrated"):
        correct_result(out, correction)
    with pytest.raises(ConfigError, match="fitted for judge_id ens-1, this run's is ens-2"):
        correct_result(result, correction, judge_id="ens-2")
    fresh = correct_result({**result, "raw_scores": {}, "overrides": []}, correction)
    assert fresh["raw_scores"] == result["scores"] and fresh["scores"]["citation_quality"] == 0.5


def test_a_rules_cap_holds_after_the_correction(correction: Any) -> None:
    # Issue 29: rule 4 caps legal_soundness at 1; the map sends 1 -> 0.5 and 5 -> 4.5, so a
    # hedging-only answer the judges scored 5 would come out 4.5 without the cap applied again.
    result: dict[str, Any] = {
        "item_id": "h", "status": "ok", "scores": {"legal_soundness": 1.0},
        "raw_scores": {"legal_soundness": 5.0}, "flags": [],
        "overrides": ["hedging_only: rule 4: hedging without substantive analysis (...)"]}
    out = correct_result(result, correction, judge_id="ens-1")
    assert out["scores"]["legal_soundness"] == pytest.approx(0.5)  # corrected 1, within the cap
    raw_capped = {**result, "scores": {"legal_soundness": 5.0}}  # a producer that did not cap
    assert correct_result(raw_capped, correction)["scores"]["legal_soundness"] == 1.0
    from legal_judge.calibration import uncalibrated_scores

    assert uncalibrated_scores(out, correction) == {"legal_soundness": 1.0}


def test_an_ensemble_map_that_was_not_kept_is_named_so(correction: Any) -> None:
    # "has no map for the ensemble; fix: compare the ensemble with labels, then fit" told a
    # team that had just done so; the fit kept no ensemble map because none beat the raw scores.
    unkept = correction.model_copy(update={"maps": {}})
    result = {"item_id": "x", "status": "ok", "scores": {"legal_soundness": 3.0}, "flags": []}
    with pytest.raises(ConfigError, match="no correction of the ensemble's scores reduced"):
        correct_result(result, unkept, judge_id="ens-1")


def test_correct_verdict_by_its_judge_id(correction: Any) -> None:
    verdict = {"judge_id": "ens-1", "scores": {"legal_soundness": 5.0}, "extra": {}}
    out = correct_verdict(verdict, correction)
    assert out["scores"]["legal_soundness"] == pytest.approx(4.5)
    assert out["extra"] == {"raw_scores": {"legal_soundness": 5.0}, "calibrated": correction.id}
    assert correct_verdict({**verdict, "judge_id": "zzz"}, correction) == {**verdict,
                                                                           "judge_id": "zzz"}


def test_versions_and_loading(store: Store, correction: Any) -> None:
    again = fit_correction(store, correction.calibration_id, min_pairs=5)
    assert (correction.version, again.version) == (1, 2)
    assert load_correction(store, correction.calibration_id).id == again.id  # latest of a calibration
    assert load_correction(store, correction.id).version == 1
    stored = json.loads(store.db.execute("SELECT model_json FROM corrections WHERE id = ?",
                                         (again.id,)).fetchone()[0])
    assert stored["maps"]["ens-1"]["legal_soundness"]["n"] == 10
    with pytest.raises(NotFoundError):
        load_correction(store, "nope")
    with pytest.raises(NotFoundError):
        fit_correction(store, "nope")


def test_too_few_pairs(store: Store, tmp_path: Path) -> None:
    report = save_calibration(store, compare(from_files(*_files(tmp_path)), quarter="2026-Q3"))
    with pytest.raises(ConfigError, match="10 labelled pairs < 20"):
        fit_correction(store, report.calibration_id or "")  # 10 pairs < the default 20


def test_history_marks_a_judge_change(store: Store, tmp_path: Path) -> None:
    save_calibration(store, compare(from_files(*_files(tmp_path)), quarter="2026-Q1"))
    save_calibration(store, compare(from_files(*_files(tmp_path)), quarter="2026-Q2"))
    shifted = _files(tmp_path, judge_id="ens-2", shift=1)
    save_calibration(store, compare(from_files(*shifted), quarter="2026-Q3"))
    rows = calibration_history(store, rubric="legal_soundness")
    assert [(r.quarter, r.drift, r.judge_changed) for r in rows] == [
        ("2026-Q1", False, False), ("2026-Q2", False, False), ("2026-Q3", True, True)]
    assert rows[0].mean_divergence == pytest.approx(0.7)
    assert rows[2].mean_divergence == pytest.approx(-0.2)


def test_bad_quarter_and_no_labels(store: Store, make_run: Any, tmp_path: Path) -> None:
    from legal_judge.calibration import from_store

    with pytest.raises(ConfigError, match="write the quarter as YYYY-Qn"):
        compare(from_files(*_files(tmp_path)), quarter="Q4-2026")
    make_run(store, "r1", n_items=3)
    with pytest.raises(ConfigError, match="import labels first"):
        compare(from_store(store, "r1"), quarter="2026-Q4")
