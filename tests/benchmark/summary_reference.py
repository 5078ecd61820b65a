"""summarize_run as it was before it was streamed (main at c11b022), kept verbatim as the oracle of
tests/benchmark/test_summary_stream.py: the streamed summary must give the identical dict."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from legal_judge import stats
from legal_judge.benchmark.summary import TOO_FEW_FOR_INTERVAL
from legal_judge.dataset import expected_pass_of
from legal_judge.store import Store

__all__ = ["summarize_run"]


def _rubric_means(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    by_rubric: dict[str, list[float]] = defaultdict(list)
    for r in results.values():
        if r["status"] == "ok":
            for rubric, score in r["scores"].items():
                by_rubric[rubric].append(score)
    out = {}
    for rubric, values in sorted(by_rubric.items()):
        # Issue 33 changed the interval rule in both (the one deliberate change since c11b022):
        # clamped to the rubrics' 0-5 scale, withheld below stats.MIN_N_FOR_INTERVAL items.
        m = stats.mean_ci(values, bounds=(0.0, 5.0), min_n=stats.MIN_N_FOR_INTERVAL)
        # One scored item has no CI (None), not a zero-width one.
        out[rubric] = {"n": m.n, "mean": m.mean, "ci95": list(m.ci95) if m.ci95 else None}
        if m.too_few:
            out[rubric]["ci_note"] = TOO_FEW_FOR_INTERVAL
    return out


def _per_judge(verdicts: dict[tuple[str, str], dict[str, Any]]) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = defaultdict(lambda: {"scores": defaultdict(list), "ok": 0,
                                                          "inconclusive": 0, "error": 0,
                                                          "pass": 0, "cost_usd": 0.0,
                                                          "cost_unknown": 0, "judge_id": ""})
    for (_, judge), v in verdicts.items():
        row = rows[judge]
        row["judge_id"] = v["judge_id"]
        row[v["status"]] += 1
        if v["status"] == "ok":
            row["pass"] += int(v.get("overall") == "pass")
            for rubric, s in v["scores"].items():
                row["scores"][rubric].append(s)
        if v.get("cached"):
            continue  # paid for by the run that made it
        if v.get("cost_usd") is None and v["status"] == "ok":
            row["cost_unknown"] += 1
        else:
            row["cost_usd"] += v.get("cost_usd") or 0.0
    out = {}
    for judge, row in sorted(rows.items()):
        means = {r: round(float(np.mean(s)), 4) for r, s in sorted(row["scores"].items())}
        out[judge] = {k: row[k] for k in ("judge_id", "ok", "inconclusive", "error", "pass",
                                          "cost_unknown")} | {
            "means": means, "pass_rate": row["pass"] / row["ok"] if row["ok"] else None,
            "cost_usd": round(row["cost_usd"], 6)}
    return out


def _alpha(verdicts: dict[tuple[str, str], dict[str, Any]], items: list[str]) -> dict[str, float | None]:
    judges = sorted({j for _, j in verdicts})
    rubrics = sorted({r for v in verdicts.values() if v["status"] == "ok" for r in v["scores"]})
    out: dict[str, float | None] = {}
    for rubric in rubrics:
        matrix = np.full((len(judges), len(items)), np.nan)
        for ji, judge in enumerate(judges):
            for ii, item in enumerate(items):
                v = verdicts.get((item, judge))
                if v and v["status"] == "ok" and rubric in v["scores"]:
                    matrix[ji, ii] = v["scores"][rubric]
        try:
            value = stats.krippendorff_alpha(matrix, level="interval")
        except stats.StatisticsError:
            value = None
        out[rubric] = None if value is None or np.isnan(value) else round(float(value), 4)
    return out


def _expected_agreement(results: dict[str, dict[str, Any]],
                        items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Agreement with ``metadata.expected_pass`` (what a careful lawyer concluded), when present."""
    pairs = [(results[i["id"]]["overall"] == "pass", expected)
             for i in items
             if (expected := expected_pass_of(i.get("metadata"))) is not None
             and results.get(i["id"], {}).get("status") == "ok"]
    if not pairs:
        return None
    agree = sum(1 for a, b in pairs if a == b)
    return {"n": len(pairs), "agree": agree, "rate": agree / len(pairs),
            "false_pass": sum(1 for a, b in pairs if a and not b),
            "false_fail": sum(1 for a, b in pairs if b and not a)}


_VERDICT_KEYS = ("judge_id", "judge", "status", "overall", "scores", "cost_usd", "input_tokens",
                 "output_tokens", "cached")
_RESULT_KEYS = ("status", "overall", "scores", "flagged_for_review", "overrides", "raw_scores",
                "flags")


def _slim_verdicts(store: Store, run_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    # Keep only the figures the summary needs: raw outputs and rationales of a 10,000-item run
    # would otherwise be held in memory all at once.
    out = {}
    for item_id, judge, v in store.iter_verdicts(run_id):
        slim = {k: v.get(k) for k in _VERDICT_KEYS}
        slim["scores"] = slim["scores"] or {}
        out[(item_id, judge)] = slim
    return out


def _cached_items(verdicts: dict[tuple[str, str], dict[str, Any]]) -> int:
    """Items every judge's verdict of which came from the cache: nothing was paid for them."""
    cached: dict[str, bool] = {}
    for (item_id, _), v in verdicts.items():
        cached[item_id] = cached.get(item_id, True) and bool(v.get("cached"))
    return sum(cached.values())



def corrected_figures(store: Store, run_id: str) -> dict[str, Any] | None:
    """The run's figures corrected for judge error (``calibration.estimate_run``) as a dict.

    None when nothing can correct them (no lawyer label, no calibration of the judge) or when
    the estimate cannot be computed; the summary never fails for it. Computed when shown, since
    labels arrive after the run.
    """
    if not store.calibrations.any() and not store.labels.of_run(run_id):
        # What estimate_run answers then, without importing the calibration package (~0.3 s).
        return None
    from legal_judge.calibration import estimate_run
    from legal_judge.errors import LegalJudgeError

    try:
        est = estimate_run(store, run_id)
    except LegalJudgeError:
        return None
    return None if est is None else est.model_dump(mode="json")


def calibrated_means(store: Store, run_id: str,
                     results: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """For a run scored with ``--calibration``: the correction id and the uncorrected means.

    The rubric means of such a run are calibrated; the judges' own (raw) means are kept beside
    them so no corrected figure passes for a raw one.
    """
    run = store.get_run(run_id)
    if not (run.get("config") or {}).get("calibration"):
        return None  # what run_correction answers, without importing the calibration package
    from legal_judge.calibration import run_correction, uncalibrated_scores

    correction = run_correction(store, run)
    if correction is None:
        return None
    raw = {i: {**r, "scores": uncalibrated_scores(r, correction)} for i, r in results.items()}
    return {"correction_id": correction.id, "calibration_id": correction.calibration_id,
            "method": "isotonic", "raw_rubrics": _rubric_means(raw)}


def summarize_run(store: Store, run_id: str) -> dict[str, Any]:
    """Pass rate, rubric means with 95% CIs, per-judge figures, agreement, flags, tokens and cost."""
    results = {i: {k: r.get(k) for k in _RESULT_KEYS} for i, r in store.iter_results(run_id)}
    verdicts = _slim_verdicts(store, run_id)
    item_rows = [{"id": i["id"], "metadata": {k: v for k, v in (i.get("metadata") or {}).items()
                                              if k == "expected_pass"}}
                 for i in store.iter_items(run_id)]
    items = [i["id"] for i in item_rows]
    ok = [r for r in results.values() if r["status"] == "ok"]
    passed = sum(1 for r in ok if r["overall"] == "pass")
    pass_ci = stats.proportion_ci(passed, len(ok)) if ok else None
    flagged = sorted(i for i, r in results.items() if r.get("flagged_for_review"))
    overridden = sorted(i for i, r in results.items() if r.get("overrides"))
    # Tokens and cost are what this run spent: a verdict reused from the cache was paid for by
    # the run that made it (counting it again showed 422,019 tokens for a run of 0 calls).
    paid = [v for v in verdicts.values() if not v.get("cached")]
    reused = [v for v in verdicts.values() if v.get("cached")]
    tokens_in = sum(v.get("input_tokens") or 0 for v in paid)
    tokens_out = sum(v.get("output_tokens") or 0 for v in paid)
    unknown_cost = sum(1 for v in paid if v["status"] == "ok" and v.get("cost_usd") is None)
    cost = sum(v.get("cost_usd") or 0.0 for v in paid)
    return {
        "run_id": run_id,
        "items": len(items),
        "scored": len(ok),
        "inconclusive": [i for i, r in sorted(results.items()) if r["status"] != "ok"],
        "pass_rate": passed / len(ok) if ok else None,
        "pass_rate_ci95": list(pass_ci) if pass_ci else None,
        "rubrics": _rubric_means(results),
        "judges": _per_judge(verdicts),
        "krippendorff_alpha": _alpha(verdicts, items),
        "flagged_for_review": flagged,
        "expected_agreement": _expected_agreement(results, item_rows),
        "citation_overrides": overridden,
        "calls": store.call_counts(run_id),
        "cached_verdicts": sum(1 for v in verdicts.values() if v.get("cached")),
        "cached_items": _cached_items(verdicts),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "cached_input_tokens": sum(v.get("input_tokens") or 0 for v in reused),
        "cached_output_tokens": sum(v.get("output_tokens") or 0 for v in reused),
        "cost_usd": round(cost, 6),
        "cost_complete": unknown_cost == 0,
        # A simulated judge is named by its spec in the run's ensemble, whatever its verdicts say.
        "simulated": any(j["spec"].partition(":")[0].strip().lower() == "simulated"
                         for j in store.get_run(run_id)["config"]["ensemble"]["judges"]),
        "calibrated": calibrated_means(store, run_id, results),
        "corrected": corrected_figures(store, run_id),
    }
