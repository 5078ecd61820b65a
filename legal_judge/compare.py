"""The regression detector: paired comparison of two runs on the same items.

Per rubric: mean difference (B - A) with 95% CI and a paired test (``stats.paired_test``); pass rate:
exact McNemar (``stats.mcnemar_from_outcomes``). A rubric regresses when it drops significantly
(p < alpha) by more than ``threshold`` points. This is the CI gate for a model release.
"""

from __future__ import annotations

from typing import Any

from legal_judge import stats
from legal_judge.errors import ConfigError
from legal_judge.store import Store

__all__ = ["compare_runs"]


def _judge_ids(run: dict[str, Any]) -> dict[str, str]:
    return dict(run["config"].get("judge_ids", {}))


def compare_runs(store: Store, run_a: str, run_b: str, *, threshold: float = 0.25,
                 alpha: float = 0.05) -> dict[str, Any]:
    """Compare run B against baseline run A on their common scored items.

    Raises:
        ConfigError: the runs share no scored item.
    """
    meta_a, meta_b = store.get_run(run_a), store.get_run(run_b)
    res_a, res_b = store.load_results(run_a), store.load_results(run_b)
    common = sorted(i for i in res_a.keys() & res_b.keys()
                    if res_a[i]["status"] == "ok" and res_b[i]["status"] == "ok")
    if not common:
        raise ConfigError(f"runs {run_a} and {run_b} have no scored item in common",
                          code="compare-no-overlap", fix="compare two runs over the same dataset")
    warnings = []
    if _judge_ids(meta_a) != _judge_ids(meta_b):
        warnings.append("the judges differ between the runs (judge_id changed): a difference may "
                        "come from the judge, not from the system under test")
    rubrics: dict[str, Any] = {}
    regressions = []
    names = sorted({r for i in common for r in res_a[i]["scores"]} &
                   {r for i in common for r in res_b[i]["scores"]})
    for rubric in names:
        ids = [i for i in common if rubric in res_a[i]["scores"] and rubric in res_b[i]["scores"]]
        b_scores = [res_b[i]["scores"][rubric] for i in ids]
        a_scores = [res_a[i]["scores"][rubric] for i in ids]
        t = stats.paired_test(b_scores, a_scores, method="auto")
        regressed = t.p_value < alpha and t.mean_difference < -threshold
        if regressed:
            regressions.append(rubric)
        rubrics[rubric] = {"n": t.n, "mean_difference": t.mean_difference, "ci95": list(t.ci95) if t.ci95 else None,
                           "test": t.test_used, "p_value": t.p_value, "effect_size": t.effect_size,
                           "regressed": regressed}
    passed_a = [res_a[i]["overall"] == "pass" for i in common]
    passed_b = [res_b[i]["overall"] == "pass" for i in common]
    mc = stats.mcnemar_from_outcomes(passed_a, passed_b)
    regressed_items = [i for i in common if res_a[i]["overall"] == "pass" and res_b[i]["overall"] == "fail"]
    return {
        "run_a": run_a, "run_b": run_b, "n_items": len(common), "warnings": warnings,
        "rubrics": rubrics, "regressions": regressions, "regressed_items": regressed_items,
        "pass_rate": {"rate_a": sum(passed_a) / len(common), "rate_b": sum(passed_b) / len(common),
                      "p_value": mc.p_value, "b": mc.b, "c": mc.c},
    }
