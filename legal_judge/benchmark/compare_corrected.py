"""``compare --corrected``: two runs compared on their judge-error-corrected figures.

Each run's figures are the ones it shows (:func:`legal_judge.calibration.shown_estimate`: its
pinned estimate, PPI++ with the run's lawyer labels or transported from the calibration chosen for
it), so a later calibration of another run never moves a comparison already made. The two estimates rest on
different labelled samples and are treated as independent: the difference ``B - A`` has
``se = sqrt(se_A² + se_B²)``, a normal 95% CI and a two-sided z-test, Holm-adjusted across the
figures compared (descriptive). The release decision per figure uses the normal one-sided bounds
``B - A ± z(confidence)·se`` against the policy's margin (``benchmark.release``). A run without a
correction is refused (comparing a corrected figure with a raw one would mix two different things).
"""

from __future__ import annotations

import math
from typing import Any

from scipy import stats as sps

from legal_judge import stats
from legal_judge.benchmark.release import endpoint_decision
from legal_judge.errors import ConfigError
from legal_judge.policy import ReleasePolicy
from legal_judge.store import Store

__all__ = ["compare_corrected"]


def _estimate(store: Store, run: dict[str, Any]) -> dict[str, Any]:
    from legal_judge.calibration import shown_estimate

    est = shown_estimate(store, run["id"])
    if est is None:
        raise ConfigError(
            f"run {run['id']} has no correction for judge error: no lawyer label on it and no "
            "calibration chosen for it",
            code="compare-no-correction",
            fix=f"label a sample of it (legal-judge calibrate sample {run['id']}), choose a "
                f"calibration (legal-judge calibrate estimate {run['id']} --calibration CAL), "
                "or compare the raw scores (drop --corrected)")
    return est


def _figures(est: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {"pass_rate": est["pass_rate"], **est["rubrics"]}


def _p(diff: float, se: float) -> float:
    if se <= 0 or not math.isfinite(se):
        return 1.0 if diff == 0 else 0.0
    return float(2 * sps.norm.sf(abs(diff) / se))


def _decide(name: str, e: dict[str, Any], policy: ReleasePolicy) -> dict[str, Any]:
    margin = policy.pass_rate_margin if name == "pass_rate" else policy.rubric_margin
    unit = "pass rate" if name == "pass_rate" else "points"
    if e.get("se") is None:
        return {"endpoint": name, "decision": "cannot tell", "n": None, "estimate": None,
                "lower": None, "upper": None, "margin": margin, "unit": unit,
                "confidence": policy.confidence, "method": "none", "items_needed": None,
                "reason": f"no corrected figure: {e.get('reason')}"}
    half = float(sps.norm.ppf(policy.confidence)) * e["se"]
    diff = e["mean_difference"]
    return endpoint_decision(name, n=None, estimate=diff, lower=diff - half, upper=diff + half,
                             margin=margin, policy=policy, method="normal (independent "
                             "estimates)", unit=unit)


def compare_corrected(store: Store, run_a: dict[str, Any], run_b: dict[str, Any], *,
                      policy: ReleasePolicy, alpha: float) -> dict[str, Any]:
    """The corrected figures of B against A, with the CI of each difference and its decision.

    Raises:
        ConfigError: a run has no correction.
    """
    est_a, est_b = _estimate(store, run_a), _estimate(store, run_b)
    fa, fb = _figures(est_a), _figures(est_b)
    z = float(sps.norm.ppf(0.975))
    rows: dict[str, Any] = {}
    tested = []
    for name in sorted(fa.keys() & fb.keys(), key=lambda n: (n != "pass_rate", n)):
        a, b = fa[name], fb[name]
        if a["status"] != "corrected" or b["status"] != "corrected" or a["se"] is None \
                or b["se"] is None:
            why = a["reason"] if a["status"] != "corrected" else b["reason"]
            rows[name] = {"reason": why, "a": a["corrected"],
                          "b": b["corrected"], "mean_difference": None, "ci95": None,
                          "p_value": None, "p_adjusted": None, "regressed_items": []}
            continue
        diff = b["corrected"] - a["corrected"]
        se = math.sqrt(a["se"] ** 2 + b["se"] ** 2)
        rows[name] = {"a": a["corrected"], "b": b["corrected"], "method_a": a["method"],
                      "method_b": b["method"], "mean_difference": diff,
                      "ci95": [diff - z * se, diff + z * se], "se": se, "test": "z (independent)",
                      "p_value": _p(diff, se), "regressed_items": []}
        tested.append(name)
    for name, p_adj in zip(tested, stats.adjust_pvalues([rows[n]["p_value"] for n in tested],
                                                        "holm"), strict=True):
        rows[name]["p_adjusted"] = float(p_adj)
    endpoints = []
    for name, e in rows.items():
        d = _decide(name, e, policy)
        endpoints.append(d)
        e.update({k: v for k, v in d.items() if k not in ("endpoint", "reason")},
                 reason=e.get("reason") or d["reason"], status=d["decision"],
                 regressed=d["decision"] == "regressed")
    pass_row = rows.pop("pass_rate", None)
    return {
        "run_a": run_a["id"], "run_b": run_b["id"], "compared": "corrected",
        "compared_note": "judge-error-corrected figures of both runs: "
                         f"{est_a['run_id']}: {est_a['label']}; {est_b['run_id']}: {est_b['label']}",
        "n_items": None, "warnings": [], "notes": [], "alpha": alpha,
        "correction": "holm", "rubrics": rows, "corrected_pass_rate": pass_row,
        "regressed_items": [], "estimates": {run_a["id"]: est_a, run_b["id"]: est_b},
        "endpoints": endpoints,
    }
