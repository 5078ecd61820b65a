"""A run's figures corrected for judge error, where users see them (terminal, report, JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from legal_judge.calibration import compare, estimate_run, from_store, save_calibration
from legal_judge.calibration.sample import item_strata
from legal_judge.stats import ppi_mean, ppi_mean_stratified, rogan_gladen
from legal_judge.store import Store


def _vectors(store: Store, run_id: str) -> tuple[dict[str, float], dict[str, float],
                                                 dict[str, float], dict[str, float]]:
    """Independently of the estimator: judge pass, lawyer pass, judge and lawyer legal_soundness."""
    results = {i: r for i, r in store.load_results(run_id).items() if r["status"] == "ok"}
    judge_pass = {i: float(r["overall"] == "pass") for i, r in results.items()}
    judge_ls = {i: float(r["scores"]["legal_soundness"]) for i, r in results.items()}
    lawyers = _lawyers(store, run_id)
    return judge_pass, lawyers["pass"], judge_ls, lawyers["legal_soundness"]


def _lawyers(store: Store, run_id: str) -> dict[str, dict[str, float]]:
    """The lawyers' mean score per item and rubric, and their pass by the seed's rule."""
    cells: dict[tuple[str, str], list[str]] = {}
    for item_id, rubric, score in store.db.execute(
            "SELECT item_id, rubric, score FROM human_labels WHERE run_id = ?", (run_id,)):
        cells.setdefault((rubric, item_id), []).append(score)
    out: dict[str, dict[str, float]] = {"pass": {}}
    hall: dict[str, str] = {}
    for (rubric, item_id), values in cells.items():
        if rubric == "hallucination":
            hall[item_id] = max(values, key=lambda v: (values.count(v),
                                                       ["clean", "uncertain", "hallucinated"].index(v)))
        else:
            out.setdefault(rubric, {})[item_id] = sum(map(float, values)) / len(values)
    for item_id, h in hall.items():
        ls, ja = out["legal_soundness"][item_id], out["jurisdiction_awareness"][item_id]
        out["pass"][item_id] = 0.0 if h == "hallucinated" or ls <= 1 or ja == 0 else 1.0
    return out


def _split(truth: dict[str, float], judged: dict[str, float]) -> tuple[list[float], ...]:
    lab = sorted(i for i in truth if i in judged)
    return ([truth[i] for i in lab], [judged[i] for i in lab],
            [judged[i] for i in sorted(judged) if i not in truth])


def test_tour_estimate_equals_ppi_and_rogan_gladen(tour: Any, invoke: Any) -> None:
    store = Store()
    est = estimate_run(store, tour.run_id)
    jp, lp, jl, ll = _vectors(store, tour.run_id)
    store.close()
    assert est is not None and est.source == "labels" and est.n_labelled_items == 50
    assert not est.stratified  # a simple random sample
    ref = ppi_mean(*_split(lp, jp))
    assert (est.pass_rate.corrected, *(est.pass_rate.corrected_ci95 or ())) == pytest.approx(
        (ref.estimate, *ref.ci))
    assert est.pass_rate.raw == pytest.approx(sum(jp.values()) / len(jp))
    assert est.pass_rate.corrected < est.pass_rate.raw - 0.1  # the judges pass failed answers
    ref_ls = ppi_mean(*_split(ll, jl))
    assert est.rubrics["legal_soundness"].corrected == pytest.approx(ref_ls.estimate)
    assert est.rubrics["legal_soundness"].lam == pytest.approx(ref_ls.lam)
    rg = rogan_gladen(*_split(lp, jp))
    assert est.rogan_gladen is not None and est.rogan_gladen.corrected == pytest.approx(rg.estimate)
    assert est.rubrics["language_quality"].status == "insufficient"

    shown = " ".join(invoke("runs", "show", tour.run_id).output.split())  # unwrap the 80 columns
    assert f"pass rate: {est.pass_rate.raw:.1%}" in shown and "the judges' raw figure" in shown
    assert f"pass rate corrected for judge error: {est.pass_rate.corrected:.1%}" in shown
    text = invoke("calibrate", "estimate", tour.run_id).output
    assert "PPI++" in text and f"{est.pass_rate.corrected:.1%}" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    html = Path("run.html")
    assert invoke("report", tour.run_id, "--html", str(html)).exit_code == 0
    page = html.read_text("utf-8")
    assert "Raw and corrected figures" in page and "pass rate corrected for judge error" in page
    assert f"{est.pass_rate.corrected:.1%}" in page and f"{est.pass_rate.raw:.1%}" in page


def test_stratified_sample_is_weighted_by_stratum(store: Store, make_run: Any, invoke: Any,
                                                  tmp_path: Path) -> None:
    truth = make_run(store, "s1", n_items=80, bias=1.0, seed=5)
    res = invoke("calibrate", "sample", "s1", "--n", "30", "--seed", "2", "--stratify",
                 "pass_fail", "--out", str(tmp_path / "s.csv"))
    assert res.exit_code == 0, res.output
    lines = ["item_id,rubric,score,annotator,labeled_at"]
    import csv

    with (tmp_path / "s.csv").open(encoding="utf-8-sig", newline="") as fh:
        sampled = [r["item_id"] for r in csv.DictReader(fh)]
    for i in sampled:
        for r, v in truth.scores[i].items():
            lines.append(f"{i},{r},{int(v)},lawyer,2026-11-02")
        lines.append(f"{i},hallucination,{truth.hallucination[i]},lawyer,2026-11-02")
    (tmp_path / "l.csv").write_text("\n".join(lines) + "\n")
    assert invoke("calibrate", "import", str(tmp_path / "l.csv"), "--run", "s1").exit_code == 0
    est = estimate_run(store, "s1")
    assert est is not None and est.stratified and est.sample_id is not None
    strata = item_strata(store, "s1", {"stratify": "pass_fail", "enrich": 0})
    jp, lp, jl, ll = _vectors(store, "s1")
    groups: dict[str, dict[str, float]] = {}
    for i, v in jl.items():
        groups.setdefault(strata[i], {})[i] = v
    ref = ppi_mean_stratified({k: _split({i: ll[i] for i in g if i in ll}, g)
                               for k, g in sorted(groups.items())})
    row = est.rubrics["legal_soundness"]
    assert row.corrected == pytest.approx(ref.estimate) and row.method == "PPI++ stratified"
    assert "stratified sample" in est.label


def test_a_run_labelled_whole_is_the_lawyers_figure_not_undefined(
        store: Store, make_run: Any, invoke: Any, tmp_path: Path) -> None:
    """Every item labelled (a small benchmark, a census): each corrected figure was "undefined"
    (no unlabelled item for PPI) and a release gate on corrected figures said "cannot tell";
    it is the lawyers' own figure, exactly, as a census stratum of a stratified sample is."""
    truth = make_run(store, "all", n_items=30, bias=1.0, seed=4)
    lines = ["item_id,rubric,score,annotator,labeled_at"]
    for i, scores in truth.scores.items():
        lines += [f"{i},{r},{int(v)},lawyer,2026-11-02" for r, v in scores.items()]
        lines.append(f"{i},hallucination,{truth.hallucination[i]},lawyer,2026-11-02")
    (tmp_path / "all.csv").write_text("\n".join(lines) + "\n")
    assert invoke("calibrate", "import", str(tmp_path / "all.csv"), "--run", "all").exit_code == 0
    est = estimate_run(store, "all")
    _, lp, _, ll = _vectors(store, "all")
    assert est is not None and est.pass_rate.status == "corrected", est
    assert est.pass_rate.corrected == pytest.approx(sum(lp.values()) / len(lp))
    assert est.pass_rate.se == 0.0 and est.pass_rate.method == "census"
    row = est.rubrics["legal_soundness"]
    assert row.corrected == pytest.approx(sum(ll.values()) / len(ll)) and row.n_unlabelled == 0
    assert est.rogan_gladen is not None and est.rogan_gladen.status == "corrected"
    assert "every item labelled" in est.label


def test_transported_to_a_later_run_of_the_same_judge(store: Store, make_run: Any,
                                                      invoke: Any) -> None:
    truth = make_run(store, "q3", n_items=60, bias=1.0, seed=1)
    lines = ["item_id,rubric,score,annotator,labeled_at"]
    for i in sorted(truth.scores)[:40]:
        for r, v in truth.scores[i].items():
            lines.append(f"{i},{r},{int(v)},lawyer,2026-08-02")
        lines.append(f"{i},hallucination,{truth.hallucination[i]},lawyer,2026-08-02")
    Path("l.csv").write_text("\n".join(lines) + "\n")
    assert invoke("calibrate", "import", "l.csv", "--run", "q3").exit_code == 0
    cal = save_calibration(store, compare(from_store(store, "q3"), quarter="2026-Q3"))
    make_run(store, "q4", n_items=50, bias=1.0, seed=2, prefix="q4item")
    est = estimate_run(store, "q4")
    assert est is not None and est.source == "transported"
    assert est.calibration_id == cal.calibration_id
    assert est.label.startswith(f"transported from {cal.calibration_id}: assumes the judge's "
                                "error rates carry over")
    pf = cal.pass_fail["ensemble"]
    y = [1.0] * (pf.both_pass + pf.judge_fail_human_pass) + [0.0] * (
        pf.judge_pass_human_fail + pf.both_fail)
    yhat = [1.0] * pf.both_pass + [0.0] * pf.judge_fail_human_pass + [1.0] * \
        pf.judge_pass_human_fail + [0.0] * pf.both_fail
    new_pass = [float(r["overall"] == "pass") for r in store.load_results("q4").values()]
    ref = rogan_gladen(y, yhat, new_pass)
    assert est.pass_rate.method == "Rogan-Gladen"
    assert est.pass_rate.corrected == pytest.approx(ref.estimate)
    out = json.loads(invoke("calibrate", "estimate", "q4", "--json").output)
    assert out["source"] == "transported" and out["pass_rate"]["n_labelled"] == len(y)


def test_estimate_refused_without_labels_or_calibration(store: Store, make_run: Any,
                                                        invoke: Any) -> None:
    make_run(store, "bare", n_items=5)
    res = invoke("calibrate", "estimate", "bare")
    assert res.exit_code == 2
    assert "has no lawyer labels and no calibration" in res.output
    assert "calibrate sample bare" in res.output
    assert invoke("calibrate", "estimate", "nope").exit_code == 2
