"""Agreement statistics of the calibration report against fixed reference numbers.

References computed once with scikit-learn 1.9 (``cohen_kappa_score``), krippendorff 0.9
(``alpha``) and scipy (``spearmanr``, ``ttest_1samp``) on the vectors below; see the comment of
each constant. Missing labels: item 10 has no lawyer label, item 11 no judge score, and lawyer B
skipped items 3, 10 and 11.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from legal_judge.calibration import compare, from_files
from legal_judge.policy import load_policy

NAN = math.nan
JUDGE = [4, 3.4, 5, 2, 1, 0, 3, 4, 2.6, 5, 3, NAN]
LAWYER_A = [4, 3, 4, 2, 2, 0, 3, 3, 2, 5, NAN, 1]
LAWYER_B = [5, 3, 4, NAN, 1, 1, 3, 3, 3, 4, NAN, NAN]
HALL_JUDGE = ["clean", "clean", "hallucinated", "uncertain", "clean", "hallucinated", "clean",
              "uncertain", "clean", "clean", "hallucinated", "clean"]
HALL_HUMAN = ["clean", "uncertain", "hallucinated", "hallucinated", "clean", "hallucinated",
              "clean", "clean", "clean", "clean", None, "clean"]

# Human = mean of the lawyers; pairs complete on 10 items. Kappa and ordinal alpha on np.rint of
# both sides with labels 0..5; interval alpha and Spearman on the raw values.
REF = {
    "n": 10,
    "mean_divergence": 0.15,
    "ci95": (-0.25920805033071326, 0.5592080503307132),  # scipy ttest_1samp CI
    "mean_abs_divergence": 0.45,
    "kappa": 0.382716049382716,  # sklearn cohen_kappa_score(labels=range(6))
    "kappa_linear": 0.6794871794871795,
    "kappa_quadratic": 0.8717948717948718,
    "alpha_ordinal": 0.8706254948535234,  # krippendorff.alpha(level_of_measurement="ordinal")
    "alpha_interval": 0.9236773743901666,  # krippendorff.alpha(level_of_measurement="interval")
    "spearman": 0.941217068774333,  # scipy.stats.spearmanr
    "spearman_p": 4.864225589367226e-05,
}
IAA = {"alpha_ordinal": 0.9066049382716049, "alpha_interval": 0.8473967684021544,
       "alpha_nominal": 0.3089430894308943}  # krippendorff.alpha on lawyers A, B (NaN = missing)
HALL = {"kappa": 0.484375, "kappa_linear": 0.6666666666666667,
        "kappa_quadratic": 0.8047337278106509,  # sklearn, severity codes, labels [0, 1, 2]
        "alpha_nominal": 0.5039370078740157, "alpha_ordinal": 0.7628412609062765}


def _write(tmp_path: Path) -> tuple[Path, Path]:
    scores, labels = tmp_path / "judge_scores.csv", tmp_path / "labels.csv"
    with scores.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "rubric", "judge", "score"])
        for i, (s, h) in enumerate(zip(JUDGE, HALL_JUDGE, strict=True)):
            if not math.isnan(s):
                w.writerow([f"i{i:02d}", "legal_soundness", "ensemble", s])
            w.writerow([f"i{i:02d}", "hallucination", "ensemble", h])
    with labels.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "rubric", "score", "annotator", "labeled_at"])
        for name, col in (("lawyer_a", LAWYER_A), ("lawyer_b", LAWYER_B)):
            for i, v in enumerate(col):
                if not math.isnan(v):
                    w.writerow([f"i{i:02d}", "legal_soundness", int(v), name, "2026-11-02"])
        for i, label in enumerate(HALL_HUMAN):
            if label is not None:
                w.writerow([f"i{i:02d}", "hallucination", label, "lawyer_a",
                            "2026-11-02T10:00:00Z"])
    return scores, labels


def test_numeric_rubric_matches_references(tmp_path: Path) -> None:
    scores, labels = _write(tmp_path)
    report = compare(from_files(scores, labels), quarter="2026-Q4")
    comp = next(c for c in report.rubrics if c.rubric == "legal_soundness")
    row = comp.judges[0]
    assert row.judge == "ensemble"
    assert row.n == REF["n"]
    assert row.n_unpaired == 1  # item 11: labelled, not scored
    for key in ("mean_divergence", "mean_abs_divergence", "kappa", "kappa_linear",
                "kappa_quadratic", "alpha_ordinal", "alpha_interval", "spearman", "spearman_p"):
        assert getattr(row, key) == pytest.approx(REF[key], rel=1e-9), key
    assert row.ci95 == pytest.approx(REF["ci95"], rel=1e-9)
    assert row.recalibrate is False  # |0.15| <= 0.5


def test_inter_annotator_alpha_matches_references(tmp_path: Path) -> None:
    scores, labels = _write(tmp_path)
    report = compare(from_files(scores, labels), quarter="2026-Q4")
    ia = next(c for c in report.rubrics if c.rubric == "legal_soundness").inter_annotator
    assert ia is not None
    assert ia.annotators == ["lawyer_a", "lawyer_b"]
    assert ia.items_multi == 9
    for key, value in IAA.items():
        assert getattr(ia, key) == pytest.approx(value, rel=1e-9), key


def test_categorical_rubric_matches_references(tmp_path: Path) -> None:
    scores, labels = _write(tmp_path)
    report = compare(from_files(scores, labels), quarter="2026-Q4")
    comp = next(c for c in report.rubrics if c.rubric == "hallucination")
    row = comp.judges[0]
    assert comp.kind == "categorical"
    assert row.n == 11
    assert row.mean_divergence is None and row.recalibrate is False
    for key, value in HALL.items():
        assert getattr(row, key) == pytest.approx(value, rel=1e-9), key


def test_threshold_flag_and_below_standard(tmp_path: Path) -> None:
    scores, labels = _write(tmp_path)
    policy = load_policy(cwd=tmp_path).with_settings({"calibration.divergence": 0.1})
    # 11 labelled items are fewer than the 20 a recalibrate needs: no verdict either way (it used
    # to say "recalibrate" on 11 items, and on 2)
    default = compare(from_files(scores, labels), quarter="2026-Q4", policy=policy)
    assert not default.recalibrate and default.verdict == "insufficient"
    assert default.insufficient_rubrics == ["legal_soundness", "hallucination"]
    lowered = policy.with_settings(overrides=["min_labels_recalibrate=10"])
    report = compare(from_files(scores, labels), quarter="2026-Q4", policy=lowered)
    assert report.recalibrate and "legal_soundness" in report.recalibrate_rubrics
    row = next(c for c in report.rubrics if c.rubric == "legal_soundness").judges[0]
    assert "divergence" in [r.code for r in row.reasons]
    assert report.below_quarterly_standard and report.n_labelled_items == 11  # i10 unlabelled
    assert any("fewer than calibration.min_labels = 50" in n for n in report.notes)
    assert report.per_rubric["legal_soundness"]["ensemble.mean_divergence"] == pytest.approx(0.15)
    assert report.min_labels_recalibrate == 10 and report.threshold == 0.1
    assert report.override_lines == [
        "policy override: calibration.min_labels_recalibrate=10 (policy 20)"]


def test_largest_disagreements_are_sorted(tmp_path: Path) -> None:
    scores, labels = _write(tmp_path)
    report = compare(from_files(scores, labels), quarter="2026-Q4")
    top = report.largest_disagreements
    assert [(d.item_id, d.difference) for d in top[:2]] == [("i02", 1.0), ("i07", 1.0)]
    assert all(abs(a.difference) >= abs(b.difference) for a, b in zip(top, top[1:], strict=False))
