"""The trace plan of a debias experiment (pure; no langfuse import).

A debias experiment (``legal-judge debias compare``) is one trace (seed ``debias_experiment:<id>``),
delivered like an audit:

* a ``chain`` root: input = the judge, its spec and the settings (modes, biases, orders, repeats,
  significance level, pairs, trials), output = the recommendation per bias;
* one ``evaluator`` per bias (``debias.<bias>``) with the per-mode figures (accuracy with its CI,
  change against plain, McNemar p raw and Holm-adjusted, significance, over-correction) and the
  recommendation; ``WARNING`` when a mode over-corrects. Trial outcomes are counted, not copied;
* the scores of :func:`legal_judge.debias.analysis.langfuse_scores`: the per-bias ones on their
  bias observation, the per-mode token costs on the trace.
"""

from __future__ import annotations

from typing import Any

from legal_judge.store import Store
from legal_judge.sync.mask import Masker
from legal_judge.sync.plan import ObsPlan, TracePlan, det_id, score, ts
from legal_judge.sync.plan_tags import simulated_labels

__all__ = ["debias_plan"]

_CELL_KEYS = ("n", "accuracy", "ci95", "change", "p_holm", "significant", "worse", "unscored",
              "tokens_per_trial", "self_changed_rate")


def _cell(c: dict[str, Any]) -> dict[str, Any]:
    out = {k: c.get(k) for k in _CELL_KEYS}
    out["p_value"] = (c.get("mcnemar") or {}).get("p_value")
    oc = c.get("over_correction")
    out["over_corrected"] = None if oc is None else bool(oc.get("flagged"))
    return out


def debias_plan(store: Store, experiment_id: str, *, masker: Masker) -> TracePlan:
    """The trace of one debias experiment.

    Raises:
        KeyError: the store holds no experiment with this id.
    """
    from legal_judge.debias.analysis import langfuse_scores
    from legal_judge.debias.experiment import load_experiment

    report = load_experiment(store, experiment_id)
    if report is None:
        raise KeyError(f"debias experiment {experiment_id}")
    tid, when = det_id(f"debias_experiment:{experiment_id}"), ts(report["created_at"])
    meta = {"experiment_id": experiment_id, "judge_id": report.get("judge_id")}
    sim_tags, sim_meta = simulated_labels(report.get("simulated"))
    plan = TracePlan(tid, "legal_judge.debias_experiment", None,
                     tags=["legal_judge", "debias", *sim_tags],
                     metadata={**{k: str(v) for k, v in meta.items()}, **sim_meta})
    recommendations = {b: {k: v["recommendation"].get(k) for k in
                           ("mode", "basis", "change", "p_value", "p_holm")}
                       for b, v in report["biases"].items()}
    plan.observations.append(ObsPlan(
        "root", "debias_experiment", "chain", when, when,
        input=masker.deep({"judge": report.get("judge"), "spec": report.get("spec"),
                           "judge_ids": report.get("judge_ids"),
                           "settings": report.get("settings"), "simulated": report.get("simulated")}),
        output=masker.deep({"recommendations": recommendations, "modes": report.get("modes")}),
        metadata=meta))
    n_trials: dict[str, int] = {}
    for o in report.get("outcomes") or []:
        n_trials[o["bias"]] = n_trials.get(o["bias"], 0) + 1
    for bias, b in sorted(report["biases"].items()):
        over = any((c.get("over_correction") or {}).get("flagged") for c in b["modes"].values())
        plan.observations.append(ObsPlan(
            f"bias:{bias}", f"debias.{bias}", "evaluator", when, when, "root",
            output=masker.deep({"n_pairs": b.get("n_pairs"), "n_outcomes": n_trials.get(bias, 0),
                                "repetition_stability": b.get("repetition_stability"),
                                "modes": {m: _cell(c) for m, c in b["modes"].items()},
                                "recommendation": b["recommendation"]}),
            metadata={"bias": bias}, level="WARNING" if over else None))
    for s in langfuse_scores(report):
        plan.scores.append(score(
            tid, s["name"], s["value"], s["data_type"], when,
            obs=f"bias:{s['bias']}" if s["bias"] else None,
            comment=s.get("comment"), meta={"experiment_id": experiment_id}))
    return plan
