"""End to end on the bundled demo run (three simulated judges), all through the CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from legal_judge.store import Store

NUMERIC = ("legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness")


def _demo_run(invoke: Any) -> str:
    res = invoke("demo", "--quiet")
    assert res.exit_code == 0, res.output
    store = Store()
    try:
        return str(next(r["id"] for r in store.list_runs() if r["kind"] == "run"))
    finally:
        store.close()


def _label(invoke: Any, run_id: str, tmp_path: Path, *, shift: int, annotator: str,
           quarter: str) -> dict[str, Any]:
    """Sample 50, let the 'lawyers' score ``shift`` below the ensemble, import, compare."""
    template = tmp_path / f"{annotator}.csv"
    res = invoke("calibrate", "sample", run_id, "--n", "50", "--seed", "5", "--out", str(template))
    assert res.exit_code == 0, res.output
    store = Store()
    results = store.load_results(run_id)
    store.close()
    with template.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows, columns = list(reader), list(reader.fieldnames or [])
    for row in rows:
        result = results[row["item_id"]]
        for rubric in NUMERIC:
            row[rubric] = str(int(np.clip(np.floor(result["scores"][rubric] + 0.5) - shift, 0, 5)))
        row["hallucination"] = result["hallucination"]
        row["annotator"], row["labeled_at"] = annotator, f"{quarter[:4]}-09-30"
    labels = tmp_path / f"{annotator}-filled.csv"
    with labels.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    res = invoke("calibrate", "import", str(labels), "--run", run_id)
    assert res.exit_code == 0 and "on 50 items" in res.output, res.output
    res = invoke("calibrate", "compare", run_id, "--quarter", quarter, "--json")
    assert res.exit_code == 0, res.output
    return dict(json.loads(res.output))


def _ensemble(report: dict[str, Any], rubric: str) -> dict[str, Any]:
    comp = next(c for c in report["rubrics"] if c["rubric"] == rubric)
    return dict(next(r for r in comp["judges"] if r["judge"] == "ensemble"))


def test_demo_run_sample_import_compare_fit_apply_history(invoke: Any, tmp_path: Path) -> None:
    run_q3 = _demo_run(invoke)
    q3 = _label(invoke, run_q3, tmp_path, shift=1, annotator="lawyer_q3", quarter="2026-Q3")
    assert q3["n_labelled_items"] == 50 and not q3["below_quarterly_standard"]
    ls = _ensemble(q3, "legal_soundness")
    assert ls["n"] == 50 and ls["mean_divergence"] > 0.5 and ls["recalibrate"]
    assert len(q3["judge_ids"]) == 4  # the ensemble and three simulated judges
    assert q3["judge_ids"]["ensemble"] == q3["ensemble_judge_id"]

    res = invoke("calibrate", "fit", q3["calibration_id"])
    assert res.exit_code == 0, res.output
    corr_id = f"corr-{q3['calibration_id']}-v1"
    out = tmp_path / "corrected.jsonl"
    assert invoke("calibrate", "apply", run_q3, corr_id, "--out", str(out)).exit_code == 0
    corrected = {r["item_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    pairs = [p for p in q3["pairs"] if p["judge"] == "ensemble" and p["rubric"] == "legal_soundness"]
    diffs = [corrected[p["item_id"]]["scores"]["legal_soundness"] - p["human_score"] for p in pairs]
    assert float(np.mean(diffs)) == pytest.approx(0.0, abs=1e-9)
    assert all(f"calibrated:{corr_id}" in corrected[p["item_id"]]["flags"] for p in pairs)

    run_q4 = _demo_run(invoke)  # the same judges a quarter later; lawyers now agree with them
    assert run_q4 != run_q3
    q4 = _label(invoke, run_q4, tmp_path, shift=0, annotator="lawyer_q4", quarter="2026-Q4")
    assert abs(_ensemble(q4, "legal_soundness")["mean_divergence"]) < 0.5
    res = invoke("calibrate", "history", "--rubric", "legal_soundness", "--json")
    rows = json.loads(res.output)
    assert [(r["quarter"], r["drift"]) for r in rows] == [("2026-Q3", False), ("2026-Q4", True)]
    assert rows[1]["judge_changed"] is False


def test_run_with_calibration_keeps_raw_and_corrected(invoke: Any, tmp_path: Path) -> None:
    run_q3 = _demo_run(invoke)
    q3 = _label(invoke, run_q3, tmp_path, shift=1, annotator="lawyer", quarter="2026-Q3")
    assert invoke("calibrate", "fit", q3["calibration_id"]).exit_code == 0
    from legal_judge.dataset import sample_dataset_path

    res = invoke("run", str(sample_dataset_path()), "--ensemble", "demo",
                 "--calibration", q3["calibration_id"], "--run-id", "corrected", "--quiet")
    assert res.exit_code == 0, res.output
    store = Store()
    results = store.load_results("corrected")
    raw = store.load_results(run_q3)
    store.close()
    item = next(i for i, r in results.items() if r["status"] == "ok")
    r = results[item]
    assert any(f.startswith("calibrated:") for f in r["flags"])
    assert r["raw_scores"]["legal_soundness"] == raw[item]["scores"]["legal_soundness"]
    assert r["scores"]["legal_soundness"] < r["raw_scores"]["legal_soundness"]  # lawyers scored 1 lower
