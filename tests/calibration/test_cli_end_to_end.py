"""End to end from the CLI: sample, label, import, compare, fit, apply, history with drift."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from legal_judge.calibration import correct_result, ensemble_judge_id, load_correction
from legal_judge.store import Store

RUBRICS = ("legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness")


def _fill_template(template: Path, truth: Any, out: Path, *, annotator: str, day: str) -> list[str]:
    """What a lawyer does: fill the score columns with the truth, sign and date each row."""
    with template.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows, columns = list(reader), list(reader.fieldnames or [])
    for row in rows:
        for rubric in RUBRICS:
            row[rubric] = str(int(truth.scores[row["item_id"]][rubric]))
        row["hallucination"] = truth.hallucination[row["item_id"]]
        row["annotator"], row["labeled_at"] = annotator, day
    with out.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return [r["item_id"] for r in rows]


def _second_lawyer(items: list[str], truth: Any, out: Path) -> dict[str, float]:
    """A second lawyer scores legal_soundness on 15 items, one point higher on every third."""
    scores = {}
    with out.open("w", encoding="utf-8") as fh:
        for k, item_id in enumerate(items[:15]):
            q = truth.scores[item_id]["legal_soundness"]
            scores[item_id] = min(5.0, q + 1) if k % 3 == 0 else q
            fh.write(json.dumps({"item_id": item_id, "rubric": "legal_soundness",
                                 "score": scores[item_id], "annotator": "lawyer_b",
                                 "labeled_at": "2026-08-20"}) + "\n")
    return scores


def _quarter(invoke: Any, store: Store, truth: Any, run_id: str, quarter: str,
             tmp_path: Path) -> tuple[dict[str, Any], list[str], dict[str, float]]:
    res = invoke("calibrate", "sample", run_id, "--n", "50", "--seed", "11",
                 "--stratify", "pass_fail", "--out", str(tmp_path / f"{run_id}.csv"))
    assert res.exit_code == 0, res.output
    assert "50 of 70 items, seed 11" in res.output
    items = _fill_template(tmp_path / f"{run_id}.csv", truth, tmp_path / f"{run_id}-a.csv",
                           annotator="lawyer_a", day="2026-08-15")
    second = _second_lawyer(items, truth, tmp_path / f"{run_id}-b.jsonl")
    for f in (f"{run_id}-a.csv", f"{run_id}-b.jsonl"):
        res = invoke("calibrate", "import", str(tmp_path / f), "--run", run_id)
        assert res.exit_code == 0, res.output
    res = invoke("calibrate", "compare", run_id, "--quarter", quarter, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.output), items, second


def _human_ls(items: list[str], truth: Any, second: dict[str, float]) -> np.ndarray:
    return np.array([(truth.scores[i]["legal_soundness"] + second[i]) / 2 if i in second
                     else truth.scores[i]["legal_soundness"] for i in items])


def test_quarterly_calibration_end_to_end(invoke: Any, store: Store, make_run: Any,
                                          tmp_path: Path) -> None:
    truth = make_run(store, "q3", n_items=70, bias=1.0, seed=1)
    report, items, second = _quarter(invoke, store, truth, "q3", "2026-Q3", tmp_path)

    # compare: the judges sit about one point above the lawyers -> recalibrate
    results = store.load_results("q3")
    ens = np.array([results[i]["scores"]["legal_soundness"] for i in items])
    human = _human_ls(items, truth, second)
    ls = next(c for c in report["rubrics"] if c["rubric"] == "legal_soundness")
    row = next(r for r in ls["judges"] if r["judge"] == "ensemble")
    assert row["n"] == 50 and row["mean_divergence"] == pytest.approx(float(np.mean(ens - human)))
    assert row["mean_divergence"] > 0.5 and row["recalibrate"] is True
    assert [r["judge"] for r in ls["judges"]] == ["ensemble", "judge_a", "judge_b", "judge_c"]
    assert {r["judge_id"] for r in ls["judges"][1:]} == {"jid-judge_a", "jid-judge_b", "jid-judge_c"}
    assert ls["inter_annotator"]["items_multi"] == 15
    assert report["n_labelled_items"] == 50 and report["below_quarterly_standard"] is False
    assert "legal_soundness" in report["recalibrate_rubrics"] and report["recalibrate"] is True
    assert report["pass_fail"]["ensemble"]["n"] == 50
    assert report["largest_disagreements"][0]["judge"] == "ensemble"
    cal_id = report["calibration_id"]
    row_db = store.db.execute("SELECT quarter, judge_id, rubric_set, run_id FROM calibrations "
                              "WHERE id = ?", (cal_id,)).fetchone()
    assert tuple(row_db) == ("2026-Q3", report["ensemble_judge_id"], "legal_judge_set@1", "q3")

    # fit: a monotone correction per rubric per judge_id, versioned
    res = invoke("calibrate", "fit", cal_id)
    assert res.exit_code == 0, res.output
    corr_id = re.search(r"correction id: (\S+)", res.output).group(1)  # type: ignore[union-attr]
    assert corr_id == f"corr-{cal_id}-v1"
    assert "correction id: " + f"corr-{cal_id}-v2" in invoke("calibrate", "fit", cal_id).output
    correction = load_correction(store, corr_id)
    assert set(correction.maps) == {report["ensemble_judge_id"], "jid-judge_a", "jid-judge_b",
                                    "jid-judge_c"}

    # apply: corrected scores remove the bias on the labelled items; raw scores are kept
    res = invoke("calibrate", "apply", "q3", corr_id, "--out", str(tmp_path / "corrected.jsonl"))
    assert res.exit_code == 0, res.output
    corrected = {r["item_id"]: r for r in map(json.loads, (tmp_path / "corrected.jsonl")
                                              .read_text().splitlines())}
    fixed = np.array([corrected[i]["scores"]["legal_soundness"] for i in items])
    # isotonic regression preserves the mean of what it fits: in-sample divergence is zero
    assert float(np.mean(fixed - human)) == pytest.approx(0.0, abs=1e-9)
    one = corrected[items[0]]
    assert one["raw_scores"] == results[items[0]]["raw_scores"]
    assert f"calibrated:{corr_id}" in one["flags"]

    # the next quarter: a new judge run without the bias -> drift alert in the history
    truth4 = make_run(store, "q4", n_items=70, bias=0.0, seed=2, prefix="q4item")
    report4, items4, second4 = _quarter(invoke, store, truth4, "q4", "2026-Q4", tmp_path)
    res = invoke("calibrate", "history", "--rubric", "legal_soundness", "--json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert [r["quarter"] for r in rows] == ["2026-Q3", "2026-Q4"]
    assert rows[0]["drift"] is False and rows[1]["drift"] is True
    assert rows[1]["previous_mean_divergence"] == pytest.approx(row["mean_divergence"])
    lo, hi = rows[1]["ci95"]
    assert not lo <= row["mean_divergence"] <= hi
    text = invoke("calibrate", "history").output
    assert "drift alert" in text and "legal_soundness" in text

    # "rerun with the correction": the runner's hook applied to the new run's results
    q4 = store.load_results("q4")
    # (a run of the same judges has the same ensemble judge_id, so the correction applies)
    assert ensemble_judge_id(store.get_run("q4")["config"]) == correction.ensemble_judge_id
    corrected4 = correct_result(q4[items4[0]], correction,
                                judge_id=ensemble_judge_id(store.get_run("q4")["config"]))
    assert corrected4["raw_scores"] == q4[items4[0]]["raw_scores"]
    assert corrected4["scores"] != q4[items4[0]]["scores"]


def test_bad_label_file_from_the_cli_stores_nothing(invoke: Any, store: Store, make_run: Any,
                                                    tmp_path: Path) -> None:
    make_run(store, "r1", n_items=3)
    f = tmp_path / "bad.csv"
    f.write_text("item_id,rubric,score,annotator,labeled_at\n"
                 "item-000,legal_soundness,4,a,2026-11-02\n"
                 "nope,legal_soundness,4,a,2026-11-02\n"
                 "item-001,completeness,6,a,2026-11-02\n"
                 "item-000,legal_soundness,4,a,2026-11-02\n"
                 "item-002,completeness,3,,2026-11-02\n")
    res = invoke("calibrate", "import", str(f))
    assert res.exit_code == 2
    for needle in ("4 problems found", "bad.csv:3: field 'item_id': unknown item 'nope'",
                   "bad.csv:4: field 'completeness': 6 is out of scale",
                   "bad.csv:5: field 'legal_soundness': duplicate label",
                   "bad.csv:6: field 'annotator': annotator is missing", "nothing was stored"):
        assert needle in res.output
    assert store.db.execute("SELECT COUNT(*) FROM human_labels").fetchone()[0] == 0


def test_compare_on_files_alone(invoke: Any, store: Store, tmp_path: Path) -> None:
    scores, labels = tmp_path / "judge_scores.csv", tmp_path / "labels.csv"
    rows = ["item_id,rubric,judge,score,judge_id"]
    lab = ["item_id,rubric,score,annotator,labeled_at"]
    for i in range(8):
        rows.append(f"x{i},completeness,ensemble,{min(5, i % 5 + 1)},ens-1")
        rows.append(f"x{i},completeness,judge_a,{i % 5},ja-1")
        lab.append(f"x{i},completeness,{i % 5},lawyer,2026-10-01")
    scores.write_text("\n".join(rows) + "\n")
    labels.write_text("\n".join(lab) + "\n")
    out = tmp_path / "calibration.json"
    res = invoke("calibrate", "compare", "--scores", str(scores), "--labels", str(labels),
                 "--out", str(out), "--quarter", "2026-Q4")
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    assert report["source"] == "files" and report["judge_ids"] == {"ensemble": "ens-1",
                                                                   "judge_a": "ja-1"}
    rows_c = report["rubrics"][0]["judges"]
    assert rows_c[0]["mean_divergence"] == pytest.approx(1.0)  # i % 5 + 1 capped at 5 never caps
    assert rows_c[1]["mean_divergence"] == 0 and rows_c[1]["kappa"] == 1.0
    assert "fewer than calibration.min_labels = 50" in " ".join(res.output.split())
    assert f"calibration id: {report['calibration_id']}" in res.output
    res = invoke("calibrate", "compare", "--scores", str(scores))
    assert res.exit_code == 2 and "give either RUN_ID or both --scores and --labels" in res.output


def test_apply_refuses_a_correction_fitted_for_another_ensemble(
        invoke: Any, store: Store, make_run: Any, tmp_path: Path) -> None:
    """`calibrate apply` wrote another ensemble's error map onto a run (exit 0) where
    `run --calibration` refuses it: both now refuse, naming both judge ids."""
    truth = make_run(store, "q3", n_items=70, bias=1.0, seed=1)
    report, _, _ = _quarter(invoke, store, truth, "q3", "2026-Q3", tmp_path)
    assert invoke("calibrate", "fit", report["calibration_id"]).exit_code == 0
    corr_id = f"corr-{report['calibration_id']}-v1"
    store.create_run("other", kind="run", config={"rubric_set": "legal_judge_set@1",
                                                 "judge_id": "ens-another"})
    store.save_items("other", [{"id": "item-000", "prompt": "Q?", "response": "A.",
                                "jurisdiction": "US-CA"}])
    store.save_result("other", "item-000", store.load_results("q3")["item-000"])
    out = tmp_path / "other.jsonl"
    res = invoke("calibrate", "apply", "other", corr_id, "--out", str(out))
    assert res.exit_code == 2, res.output
    assert (f"was fitted for judge_id {report['ensemble_judge_id']}, this run's is ens-another"
            in " ".join(res.output.split()))
    assert not out.exists()
