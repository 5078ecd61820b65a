"""Issue 20 item 3: a run scored with ``--calibration`` labels its corrected figures everywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pg_server import set_json_field

from legal_judge.benchmark.export import result_rows
from legal_judge.benchmark.summary import summarize_run
from legal_judge.calibration import (
    compare,
    correct_result,
    fit_correction,
    from_store,
    save_calibration,
)
from legal_judge.store import Store


def _calibrated_run(store: Store, make_run: Any, invoke: Any, tmp_path: Path) -> str:
    truth = make_run(store, "q3", n_items=50, bias=1.0, seed=1)
    lines = ["item_id,rubric,score,annotator,labeled_at"]
    for i in sorted(truth.scores)[:45]:
        lines += [f"{i},{r},{int(v)},lawyer,2026-08-02" for r, v in truth.scores[i].items()]
    (tmp_path / "l.csv").write_text("\n".join(lines) + "\n")
    assert invoke("calibrate", "import", str(tmp_path / "l.csv"), "--run", "q3").exit_code == 0
    cal = save_calibration(store, compare(from_store(store, "q3"), quarter="2026-Q3"))
    correction = fit_correction(store, cal.calibration_id or "")
    make_run(store, "q4", n_items=30, bias=1.0, seed=2, prefix="q4item")
    set_json_field(store, "runs", "config_json", "q4", "calibration", correction.id)
    for item_id, r in store.load_results("q4").items():
        store.save_result("q4", item_id, correct_result(r, correction,
                                                        judge_id=cal.ensemble_judge_id))
    return correction.id


def test_summary_export_and_terminal_label_calibrated_means(store: Store, make_run: Any,
                                                            invoke: Any, tmp_path: Path) -> None:
    corr_id = _calibrated_run(store, make_run, invoke, tmp_path)
    results = store.load_results("q4")
    s = summarize_run(store, "q4")
    assert s["calibrated"]["correction_id"] == corr_id
    raw_ls = [r["raw_scores"]["legal_soundness"] for r in results.values()]
    assert s["calibrated"]["raw_rubrics"]["legal_soundness"]["mean"] == pytest.approx(
        float(np.mean(raw_ls)))
    assert s["rubrics"]["legal_soundness"]["mean"] < float(np.mean(raw_ls))  # corrected down
    rows = {r["item_id"]: r for r in result_rows(store, "q4")}
    one = next(iter(results))
    assert rows[one]["ensemble.legal_soundness"] == results[one]["raw_scores"]["legal_soundness"]
    assert rows[one]["ensemble.legal_soundness.calibrated"] == results[one]["scores"][
        "legal_soundness"]
    assert rows[one]["calibration"] == corr_id
    store.finish_run("q4", status="completed", summary=s)
    shown = " ".join(invoke("runs", "show", "q4").output.split())
    assert f"CALIBRATED with {corr_id}" in shown and "raw mean" in shown
    assert "transported from" in shown  # the later run without labels: error rates carried over
    page = tmp_path / "q4.html"
    assert invoke("report", "q4", "--html", str(page)).exit_code == 0
    html = page.read_text("utf-8")
    # Issue 28 item 5: one corrected mean per rubric, named by its method; the isotonic item
    # scores are explained, not shown as a second "corrected" mean.
    assert f"Item scores CALIBRATED with {corr_id}" in html
    assert "one corrected mean per rubric named by its method" in html
    assert "Raw means beside the means calibrated" not in html
    assert "their average is not a second estimate of the run&#39;s mean" in html
