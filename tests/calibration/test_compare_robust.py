"""calibrate compare reports Gwet's AC1/AC2 and PABAK beside kappa, from the same tables."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from legal_judge.calibration import compare, from_store, rubric_specs
from legal_judge.calibration.labels import import_labels
from legal_judge.stats import gwet_ac, pabak
from legal_judge.store import Store

_, SPECS = rubric_specs()


def _passes(truth: Any, i: str) -> bool:
    s = truth.scores[i]
    return not (truth.hallucination[i] == "hallucinated" or s["legal_soundness"] <= 1
                or s["jurisdiction_awareness"] == 0)


def test_compare_carries_ac1_ac2_pabak(store: Store, make_run: Any, home: Path) -> None:
    truth = make_run(store, "r1", n_items=40, bias=0.5, seed=11)
    path = home / "labels.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "run_id", "rubric", "score", "annotator", "labeled_at"])
        for i, s in truth.scores.items():
            w.writerow([i, "r1", "legal_soundness", int(s["legal_soundness"]), "a", "2026-11-20"])
            w.writerow([i, "r1", "pass_fail", "pass" if _passes(truth, i) else "fail", "a",
                        "2026-11-20"])
    import_labels(store, path, SPECS, run_id="r1")
    report = compare(from_store(store, "r1"), quarter="2026-Q4")
    results = store.load_results("r1")
    items = sorted(truth.scores)
    judged = [int(np.rint(results[i]["scores"]["legal_soundness"])) for i in items]
    human = [int(truth.scores[i]["legal_soundness"]) for i in items]
    row = next(r for c in report.rubrics if c.rubric == "legal_soundness" for r in c.judges
               if r.judge == "ensemble")
    ref = gwet_ac(judged, human, weights="quadratic", labels=[0, 1, 2, 3, 4, 5])
    assert row.ac2 == pytest.approx(ref.value) and row.ac2_ci95 == pytest.approx(ref.ci)
    pf = report.pass_fail["ensemble"]
    lawyers = [_passes(truth, i) for i in items]
    judge = [results[i]["overall"] == "pass" for i in items]
    assert pf.ac1 == pytest.approx(gwet_ac(judge, lawyers, labels=[False, True]).value)
    assert pf.pabak == pytest.approx(pabak(judge, lawyers, labels=[False, True]).value)
    assert pf.pabak == pytest.approx(2 * pf.agreement - 1)
