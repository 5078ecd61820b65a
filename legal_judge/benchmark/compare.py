"""The regression detector: paired comparison of two runs on the same items.

Like with like: by default both runs' **raw** ensemble scores (a run scored with ``--calibration``
keeps its uncorrected scores, and those are compared; the report says so). ``corrected=True``
compares the judge-error-corrected figures of both runs instead (``calibration.estimate_run``:
PPI++ from the run's lawyer labels, or transported from a calibration of the same judge), with the
CI of each difference, and refuses when either run has no correction.

Per rubric: mean difference (B - A) with 95% CI and a paired test (``stats.paired_test``); the
p-values are Holm-adjusted across the rubrics compared. A rubric with fewer than ``min_items``
paired items is ``insufficient``, never a regression. A rubric regresses when its adjusted p is
below ``alpha`` and it drops by more than ``threshold`` points; it improved when it rises so.
Each rubric entry carries ``status``: ``regression``, ``improved``, ``no change`` or
``insufficient``, and a regression lists its regressed items (id, before, after). Pass rate:
exact McNemar (``stats.mcnemar_from_outcomes``), reported beside the gate.
"""

from __future__ import annotations

from typing import Any

from legal_judge import stats
from legal_judge.errors import ConfigError
from legal_judge.store import Store

__all__ = ["compare_runs"]

#: The status of a rubric entry (what a JUnit writer or a CI gate reads).
STATUSES = ("regression", "improved", "no change", "insufficient")


def _judge_ids(run: dict[str, Any]) -> dict[str, str]:
    return dict(run["config"].get("judge_ids", {}))


def _raw_results(store: Store, run: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The run's results with their uncorrected scores, and the correction they carried."""
    from legal_judge.calibration import run_correction, uncalibrated_scores

    results = store.load_results(run["id"])
    correction = run_correction(store, run)
    if correction is None:
        return results, None
    return ({i: {**r, "scores": uncalibrated_scores(r, correction)} for i, r in results.items()},
            correction.id)


def _status(n: int, p_adj: float | None, diff: float, *, min_items: int, alpha: float,
            threshold: float) -> str:
    if n < min_items or p_adj is None:
        return "insufficient"
    if p_adj < alpha and diff < -threshold:
        return "regression"
    if p_adj < alpha and diff > threshold:
        return "improved"
    return "no change"


def _regressed_items(ids: list[str], before: list[float], after: list[float]) -> list[dict[str, Any]]:
    drops = [{"item_id": i, "before": a, "after": b} for i, a, b in zip(ids, before, after,
                                                                        strict=True) if b < a]
    return sorted(drops, key=lambda d: (d["after"] - d["before"], d["item_id"]))


def _raw_rubrics(res_a: dict[str, Any], res_b: dict[str, Any], common: list[str], *,
                 threshold: float, alpha: float, min_items: int) -> dict[str, Any]:
    names = sorted({r for i in common for r in res_a[i]["scores"]} &
                   {r for i in common for r in res_b[i]["scores"]})
    rubrics: dict[str, Any] = {}
    tested: list[str] = []
    for rubric in names:
        ids = [i for i in common if rubric in res_a[i]["scores"] and rubric in res_b[i]["scores"]]
        a = [float(res_a[i]["scores"][rubric]) for i in ids]
        b = [float(res_b[i]["scores"][rubric]) for i in ids]
        entry: dict[str, Any] = {"n": len(ids), "ids": ids, "a": a, "b": b}
        if len(ids) >= min_items:
            t = stats.paired_test(b, a, method="auto")
            entry.update(mean_difference=t.mean_difference, ci95=list(t.ci95) if t.ci95 else None,
                         test=t.test_used, p_value=t.p_value, effect_size=t.effect_size)
            tested.append(rubric)
        else:
            entry.update(mean_difference=(sum(b) - sum(a)) / len(ids) if ids else 0.0, ci95=None,
                         test=None, p_value=None, effect_size=None)
        rubrics[rubric] = entry
    adjusted = stats.adjust_pvalues([rubrics[r]["p_value"] for r in tested], "holm")
    for rubric, p_adj in zip(tested, adjusted, strict=True):
        rubrics[rubric]["p_adjusted"] = float(p_adj)
    for e in rubrics.values():
        e.setdefault("p_adjusted", None)
        e["status"] = _status(e["n"], e["p_adjusted"], e["mean_difference"], min_items=min_items,
                              alpha=alpha, threshold=threshold)
        e["regressed"] = e["status"] == "regression"
        ids, a, b = e.pop("ids"), e.pop("a"), e.pop("b")
        e["regressed_items"] = _regressed_items(ids, a, b) if e["regressed"] else []
        if e["status"] == "insufficient":
            e["reason"] = f"{e['n']} paired items (fewer than {min_items}): not tested"
    return rubrics


def compare_runs(store: Store, run_a: str, run_b: str, *, threshold: float = 0.25,
                 alpha: float = 0.05, min_items: int = 20,
                 corrected: bool = False) -> dict[str, Any]:
    """Compare run B against baseline run A on their common scored items.

    Args:
        store: The store holding both runs.
        run_a: The baseline run.
        run_b: The run under test.
        threshold: A rubric regresses only when it drops by more than this (points).
        alpha: Significance level of the Holm-adjusted p-values.
        min_items: Fewer paired items than this: ``insufficient``, not tested.
        corrected: Compare the judge-error-corrected figures of both runs (with the CI of the
            difference) instead of the raw scores.

    Returns:
        A dict: ``rubrics`` (per rubric: ``status``, figures, ``regressed_items``),
        ``regressions``, ``insufficient``, ``pass_rate``, ``compared`` (what was compared), and
        ``warnings``.

    Raises:
        ConfigError: the runs share no scored item, or ``corrected`` and a run has no correction.
    """
    meta_a, meta_b = store.get_run(run_a), store.get_run(run_b)
    if corrected:
        from legal_judge.benchmark.compare_corrected import compare_corrected

        return compare_corrected(store, meta_a, meta_b, threshold=threshold, alpha=alpha)
    (res_a, cal_a), (res_b, cal_b) = _raw_results(store, meta_a), _raw_results(store, meta_b)
    common = sorted(i for i in res_a.keys() & res_b.keys()
                    if res_a[i]["status"] == "ok" and res_b[i]["status"] == "ok")
    if not common:
        raise ConfigError(f"runs {run_a} and {run_b} have no scored item in common",
                          code="compare-no-overlap", fix="compare two runs over the same dataset")
    warnings = []
    if _judge_ids(meta_a) != _judge_ids(meta_b):
        warnings.append("the judges differ between the runs (judge_id changed): a difference may "
                        "come from the judge, not from the system under test")
    rubrics = _raw_rubrics(res_a, res_b, common, threshold=threshold, alpha=alpha,
                           min_items=min_items)
    passed_a = [res_a[i]["overall"] == "pass" for i in common]
    passed_b = [res_b[i]["overall"] == "pass" for i in common]
    mc = stats.mcnemar_from_outcomes(passed_a, passed_b)
    regressed_items = [i for i in common if res_a[i]["overall"] == "pass"
                       and res_b[i]["overall"] == "fail"]
    rate_a, rate_b = sum(passed_a) / len(common), sum(passed_b) / len(common)
    # A release gate that passes a significant drop of the pass rate says more than it knows.
    pass_status = ("insufficient" if len(common) < min_items else
                   "regression" if mc.p_value < alpha and rate_b < rate_a else
                   "improved" if mc.p_value < alpha and rate_b > rate_a else "no change")
    notes = [f"run {rid} was scored with --calibration {cid}: its raw (uncorrected) scores are "
             "compared; use --corrected to compare judge-error-corrected figures"
             for rid, cid in ((run_a, cal_a), (run_b, cal_b)) if cid]
    return {
        "run_a": run_a, "run_b": run_b, "n_items": len(common), "warnings": warnings,
        "compared": "raw", "calibrated": {run_a: cal_a, run_b: cal_b},
        "compared_note": "the judges' raw scores of both runs" + (
            " (corrections applied with --calibration are set aside)" if notes else ""),
        "notes": notes, "threshold": threshold, "alpha": alpha, "min_items": min_items,
        "correction": "holm",
        "rubrics": rubrics, "regressions": [r for r, e in rubrics.items() if e["regressed"]]
        + (["pass_rate"] if pass_status == "regression" else []),
        "insufficient": [r for r, e in rubrics.items() if e["status"] == "insufficient"],
        "regressed_items": regressed_items,
        "pass_rate": {"rate_a": rate_a, "rate_b": rate_b, "p_value": mc.p_value, "b": mc.b,
                      "c": mc.c, "status": pass_status},
    }

