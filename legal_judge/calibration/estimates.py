"""A run's figures corrected for judge error: what ``calibrate estimate``, the summary and reports show.

With lawyer labels on the run: PPI++ (:func:`legal_judge.stats.ppi_mean`) for the pass rate and each
numeric rubric mean, stratified when the labels come from a ``calibrate sample --stratify`` (or
``--enrich``) sample, and Rogan-Gladen beside the pass rate. Without labels: the pass rate by
Rogan-Gladen with the error rates of a calibration of the same ensemble judge_id (the one named, else
the latest), and the means by plain PPI (lambda = 1: the judge's mean error) from that calibration's
pairs, labelled as transported. The judges' raw figures (before any ``--calibration`` correction) sit
beside them. This module computes; :mod:`legal_judge.calibration.pinned` stores the result once and
shows the stored one.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from legal_judge.calibration.correction import (
    load_calibration,
    run_correction,
    uncalibrated_scores,
)
from legal_judge.calibration.data import (
    ENSEMBLE,
    ComparisonData,
    ensemble_judge_id,
    human_scores,
    lawyers_pass,
)
from legal_judge.calibration.labels import load_labels
from legal_judge.calibration.rubrics import rubric_specs, stored_rubric_set
from legal_judge.calibration.sample import item_strata, run_samples
from legal_judge.calibration.schema import CalibrationReport, EstimateRow, RunEstimate
from legal_judge.errors import ConfigError
from legal_judge.stats import (
    StatisticsError,
    mean_ci,
    ppi_mean,
    ppi_mean_stratified,
    proportion_ci,
    rogan_gladen,
    rogan_gladen_stratified,
)
from legal_judge.store import Store

__all__ = ["estimate_run"]

PASS_RATE = "pass rate"
RG_NAME = "pass rate (Rogan-Gladen)"
CENSUS = "census"
Vectors = tuple[list[float], list[float], list[float]]


def _raw_row(name: str, values: list[float], *, rate: bool) -> EstimateRow:
    if not values:
        return EstimateRow(name=name, raw=None, raw_ci95=None, status="insufficient",
                           reason="no scored item")
    if rate:
        k = int(sum(values))
        return EstimateRow(name=name, raw=k / len(values), raw_ci95=proportion_ci(k, len(values)))
    m = mean_ci(values)
    return EstimateRow(name=name, raw=m.mean, raw_ci95=m.ci95)


def _vectors(truth: dict[str, float], judged: dict[str, float]) -> Vectors:
    labelled = sorted(i for i in truth if i in judged)
    return ([truth[i] for i in labelled], [judged[i] for i in labelled],
            [judged[i] for i in sorted(judged) if i not in truth])


def _strata_vectors(truth: dict[str, float], judged: dict[str, float],
                    strata: dict[str, str]) -> dict[str, Vectors]:
    groups: dict[str, dict[str, float]] = defaultdict(dict)
    for item_id, value in judged.items():
        groups[strata.get(item_id, "unsampled")][item_id] = value
    return {k: _vectors({i: truth[i] for i in g if i in truth}, g) for k, g in sorted(groups.items())}


def _corrected(row: EstimateRow, truth: dict[str, float], judged: dict[str, float], *,
               strata: dict[str, str] | None, min_labels: int, alpha: float,
               rg: bool = False, tuned: bool = True) -> EstimateRow:
    y, yhat, yhat_u = _vectors(truth, judged)
    base = row.model_copy(update={"n_labelled": len(y), "n_unlabelled": len(yhat_u)})
    if len(y) < min_labels:
        return base.model_copy(update={
            "status": "insufficient",
            "reason": f"{len(y)} labelled item(s) (fewer than {min_labels}): not corrected"})
    if strata is None and not yhat_u:
        # Every item is labelled: the lawyers' figure is the run's, exactly (as a census stratum
        # of a stratified sample is), not "undefined" for want of an item left to predict.
        exact = sum(y) / len(y)
        return base.model_copy(update={
            "corrected": exact, "corrected_ci95": (exact, exact), "se": 0.0, "method": CENSUS,
            "reason": "every item is labelled: the lawyers' own figure (nothing to predict)"})
    try:
        if strata is not None:
            parts = _strata_vectors(truth, judged, strata)
            res = (rogan_gladen_stratified(parts, alpha=alpha) if rg
                   else ppi_mean_stratified(parts, alpha=alpha, tuned=tuned))
            if res.estimate is None:
                return base.model_copy(update={"status": "undefined", "reason": res.reason,
                                               "method": res.method})
            return base.model_copy(update={"corrected": res.estimate, "corrected_ci95": res.ci,
                                           "se": res.se, "method": res.method})
        if rg:
            r = rogan_gladen(y, yhat, yhat_u, alpha=alpha)
            if r.estimate is None:
                return base.model_copy(update={"status": "undefined", "reason": r.reason,
                                               "method": "Rogan-Gladen"})
            return base.model_copy(update={
                "corrected": r.estimate, "corrected_ci95": r.ci, "se": r.se,
                "method": "Rogan-Gladen",
                "reason": f"TPR {r.tpr:.2f}, TNR {r.tnr:.2f} on {len(y)} labelled items; CI by "
                          f"the {r.method}"})
        m = ppi_mean(y, yhat, yhat_u, alpha=alpha, tuned=tuned)
    except StatisticsError as exc:
        return base.model_copy(update={"status": "undefined", "reason": exc.message})
    return base.model_copy(update={"corrected": m.estimate, "corrected_ci95": m.ci, "se": m.se,
                                   "method": m.method, "lam": m.lam})


def _judged(store: Store, run: dict[str, Any]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """The ensemble's pass (1/0) and uncorrected rubric scores of every conclusive item."""
    correction = run_correction(store, run)
    passed: dict[str, float] = {}
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    for item_id, result in store.iter_results(run["id"]):
        if result.get("status") != "ok":
            continue
        if result.get("overall") in ("pass", "fail"):
            passed[item_id] = 1.0 if result["overall"] == "pass" else 0.0
        for rubric, value in uncalibrated_scores(result, correction).items():
            scores[rubric][item_id] = float(value)
    return passed, dict(scores)


def _stratification(store: Store, run_id: str, labelled: set[str]) -> tuple[str | None,
                                                                            dict[str, str] | None]:
    """The recorded sample the labels come from, and its strata when it was not a simple one."""
    best = None
    for sample in run_samples(store, run_id):
        covered = len(labelled & set(sample.get("items") or []))
        if covered and (best is None or covered > best[0]):
            best = (covered, sample)
    if best is None:
        return None, None
    sample = best[1]
    if not sample.get("stratify") and not sample.get("enrich"):
        return str(sample["sample_id"]), None
    return str(sample["sample_id"]), item_strata(store, run_id, sample)


def _from_labels(store: Store, run: dict[str, Any], data: ComparisonData, *, min_labels: int,
                 alpha: float) -> RunEstimate | None:
    humans = human_scores(data.labels, data.specs)
    lawyers, _ = lawyers_pass(data, humans)
    passed, scores = _judged(store, run)
    labelled = {x.item_id for x in data.labels}
    if not labelled & set(passed):
        return None
    sample_id, strata = _stratification(store, run["id"], labelled)
    truth_pass = {i: 1.0 if v else 0.0 for i, v in lawyers.items() if v is not None}
    kw = {"strata": strata, "min_labels": min_labels, "alpha": alpha}
    pass_row = _corrected(_raw_row(PASS_RATE, list(passed.values()), rate=True), truth_pass,
                          passed, **kw)  # type: ignore[arg-type]
    rg_row = _corrected(_raw_row(RG_NAME, list(passed.values()), rate=True), truth_pass, passed,
                        rg=True, **kw)  # type: ignore[arg-type]
    rubrics = {}
    for name, spec in data.specs.items():
        if spec.kind != "numeric" or name not in scores:
            continue
        truth = {i: float(v) for i, v in humans.get(name, {}).items()}
        rubrics[name] = _corrected(_raw_row(name, list(scores[name].values()), rate=False), truth,
                                   scores[name], **kw)  # type: ignore[arg-type]
    how = ("stratified sample " + str(sample_id) + ": per-stratum estimates weighted by stratum "
           "size" if strata is not None else
           "every item labelled: the lawyers' figures" if pass_row.method == CENSUS else "PPI++")
    notes = []
    if sample_id is None:
        notes.append("the labels match no recorded sample of this run: they are treated as a "
                     "simple random sample")
    return RunEstimate(
        run_id=run["id"], source="labels", judge_id=data.judge_ids.get(ENSEMBLE),
        sample_id=sample_id, stratified=strata is not None,
        n_labelled_items=len(labelled & set(passed)),
        label=f"corrected for judge error with {len(labelled & set(passed))} lawyer-labelled "
              f"items of this run ({how}; 95% CI)",
        pass_rate=pass_row, rogan_gladen=rg_row, rubrics=rubrics, notes=notes)


def _ensemble_pairs(cal: CalibrationReport, rubric: str) -> list[tuple[float, float]] | None:
    pairs = [(p.judge_score, p.human_score) for p in cal.pairs
             if p.judge == ENSEMBLE and p.rubric == rubric and p.judge_score is not None]
    return pairs or None


def _latest_calibration(store: Store, judge_id: str, run_id: str) -> CalibrationReport | None:
    report = store.calibrations.latest_report_of_judge(judge_id, not_of_run=run_id)
    return CalibrationReport.model_validate(report) if report is not None else None


def _transported(store: Store, run: dict[str, Any], judge_id: str, *,
                 cal: CalibrationReport | None, min_labels: int,
                 alpha: float) -> RunEstimate | None:
    if cal is None or cal.calibration_id is None:
        return None
    passed, scores = _judged(store, run)
    pf = cal.pass_fail.get(ENSEMBLE)
    rg_row = _raw_row(PASS_RATE, list(passed.values()), rate=True)
    if pf is None:
        rg_row = rg_row.model_copy(update={"status": "undefined",
                                           "reason": f"{cal.calibration_id} has no pass/fail "
                                                     "comparison of the ensemble"})
    else:
        y = [1.0] * (pf.both_pass + pf.judge_fail_human_pass) + [0.0] * (
            pf.judge_pass_human_fail + pf.both_fail)
        yhat = [1.0] * pf.both_pass + [0.0] * pf.judge_fail_human_pass + [1.0] * \
            pf.judge_pass_human_fail + [0.0] * pf.both_fail
        # The calibration's items are not this run's: keyed apart so none counts as labelled.
        truth = {f"cal:{k}": v for k, v in enumerate(y)}
        judged = {**{f"cal:{k}": v for k, v in enumerate(yhat)}, **passed}
        rg_row = _corrected(rg_row, truth, judged, strata=None, min_labels=min_labels,
                            alpha=alpha, rg=True)
    rubrics = {}
    for rubric, col in sorted(scores.items()):
        pairs = _ensemble_pairs(cal, rubric)
        if pairs is None:
            continue
        truth = {f"cal:{k}": h for k, (_, h) in enumerate(pairs)}
        judged = {**{f"cal:{k}": j for k, (j, _) in enumerate(pairs)}, **col}
        rubrics[rubric] = _corrected(_raw_row(rubric, list(col.values()), rate=False), truth,
                                     judged, strata=None, min_labels=min_labels, alpha=alpha,
                                     tuned=False)
    return RunEstimate(
        run_id=run["id"], source="transported", judge_id=judge_id,
        calibration_id=cal.calibration_id, calibration_date=cal.created_at, n_labelled_items=0,
        label=f"transported from {cal.calibration_id}: assumes the judge's error rates carry "
              "over (Rogan-Gladen for the pass rate, the judge's mean error for the means)",
        pass_rate=rg_row, rubrics=rubrics,
        notes=[f"this run has no lawyer labels; {cal.calibration_id} ({cal.quarter}) measured "
               f"the same ensemble judge_id {judge_id} on {cal.n_labelled_items} labelled items"])


def _named_calibration(store: Store, run_id: str, judge_id: str,
                       calibration_id: str) -> CalibrationReport:
    """The calibration a user named for a run's estimate, checked against the run's judge.

    Raises:
        NotFoundError: no such calibration.
        ConfigError: it calibrated another ensemble judge_id.
    """
    cal = load_calibration(store, calibration_id)
    if cal.ensemble_judge_id != judge_id:
        raise ConfigError(
            f"calibration {calibration_id} measured the ensemble judge_id "
            f"{cal.ensemble_judge_id}, run {run_id}'s is {judge_id}: its error rates do not "
            "carry over to another judge", code="calibration-mismatch",
            fix="name a calibration of this run's ensemble (`legal-judge calibrate history` "
                "lists them), or calibrate this judge")
    return cal


def estimate_run(store: Store, run_id: str, *, alpha: float = 0.05, min_labels: int = 20,
                 calibration_id: str | None = None) -> RunEstimate | None:
    """The run's raw figures next to the judge-error-corrected ones, or None when nothing can
    correct them (no lawyer label on the run and no calibration of its ensemble judge_id).

    Args:
        store: The store holding the run.
        run_id: The run.
        alpha: 1 - the confidence of the intervals.
        min_labels: Fewer labelled items: a figure is not corrected.
        calibration_id: The calibration to rest on. One made on this run's own labels gives
            the estimate from those labels (PPI++); one of another run of the same ensemble
            judge_id is transported. None: the run's labels, else the latest calibration of
            its judge_id made on another run.

    Raises:
        NotFoundError: no such run or calibration.
        ConfigError: the named calibration measured another ensemble judge_id.
    """
    run = store.get_run(run_id)
    rset, specs = rubric_specs(stored_rubric_set(run["config"]))
    judge_id = str(ensemble_judge_id(run["config"]))
    cal = (_named_calibration(store, run_id, judge_id, calibration_id)
           if calibration_id is not None else None)
    if cal is not None and cal.run_id != run_id:
        return _transported(store, run, judge_id, cal=cal, min_labels=min_labels, alpha=alpha)
    # Only the labels and the run config: a 10,000-item run's verdicts stay on disk.
    data = ComparisonData(rset, specs, "store", run_id, load_labels(store, run_id, specs))
    data.judge_ids = {ENSEMBLE: ensemble_judge_id(run["config"])}
    if data.labels:
        found = _from_labels(store, run, data, min_labels=min_labels, alpha=alpha)
        if found is not None:
            if cal is not None:
                found = found.model_copy(update={"calibration_id": cal.calibration_id,
                                                 "calibration_date": cal.created_at})
            return found
    if cal is not None:
        return None  # a calibration of this run whose labels match none of its results
    return _transported(store, run, judge_id, cal=_latest_calibration(store, judge_id, run_id),
                        min_labels=min_labels, alpha=alpha)
