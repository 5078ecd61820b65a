"""The run summary a team lead acts on, computed from the store (never from memory)."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from legal_judge import stats
from legal_judge.dataset import expected_pass_of
from legal_judge.store import Store

if TYPE_CHECKING:
    from legal_judge.policy import PolicyInForce

__all__ = ["TOO_FEW_FOR_INTERVAL", "calibrated_means", "correction_fields", "corrected_figures", "scored_by_simulated",
           "summarize_run"]


def _nan_if_none(value: Any) -> float:
    return float("nan") if value is None else float(value)


class _RubricValues:
    """Scores by rubric as float arrays (what the means and CIs need), in the order added."""

    def __init__(self) -> None:
        self.by_rubric: dict[str, array[float]] = {}

    def add(self, scores: dict[str, Any]) -> None:
        for rubric, score in scores.items():
            values = self.by_rubric.get(rubric)
            if values is None:
                values = self.by_rubric[rubric] = array("d")
            values.append(_nan_if_none(score))

    def means(self) -> dict[str, dict[str, Any]]:
        out = {}
        scales = _scales(self.by_rubric)
        for rubric, values in sorted(self.by_rubric.items()):
            # The one place a rubric mean gets its interval: clamped to the rubric's scale, and
            # withheld below stats.MIN_N_FOR_INTERVAL items (a 3-item run printed -3.32 to 8.26
            # on a 0-5 scale). One scored item has no CI (None), not a zero-width one.
            m = stats.mean_ci(np.frombuffer(values, dtype=float) if values else [],
                              bounds=scales.get(rubric), min_n=stats.MIN_N_FOR_INTERVAL)
            entry: dict[str, Any] = {"n": m.n, "mean": m.mean,
                                     "ci95": list(m.ci95) if m.ci95 else None}
            if m.too_few:
                entry["ci_note"] = TOO_FEW_FOR_INTERVAL
            out[rubric] = entry
        return out


#: What a rubric mean says instead of an interval below ``stats.MIN_N_FOR_INTERVAL`` items.
TOO_FEW_FOR_INTERVAL = (f"too few items for an interval (fewer than {stats.MIN_N_FOR_INTERVAL} "
                        "scored)")


def _scales(rubrics: Iterable[str]) -> dict[str, tuple[float, float]]:
    """Each numeric rubric's ``(min, max)`` scale; a rubric no longer known gets none."""
    from legal_judge.assets.catalogue import load_assets
    from legal_judge.errors import ConfigError

    assets = load_assets()
    out: dict[str, tuple[float, float]] = {}
    for name in rubrics:
        try:
            scale = assets.rubric(name).scale
        except ConfigError:
            continue
        if scale is not None:
            out[name] = (float(scale.min), float(scale.max))
    return out


def _rubric_means(results: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    values = _RubricValues()
    for r in results:
        if r["status"] == "ok":
            values.add(r["scores"])
    return values.means()


class _JudgeRow:
    """One judge's running figures; its scores as (position, value) arrays per rubric, which
    both its means and the agreement matrix read."""

    def __init__(self) -> None:
        self.counts: dict[str, Any] = {"ok": 0, "inconclusive": 0, "error": 0, "pass": 0,
                                       "cost_unknown": 0, "judge_id": ""}
        self.cost_usd = 0.0
        self.scores: dict[str, tuple[array[float], array[int]]] = {}

    def add(self, v: dict[str, Any], position: int | None) -> None:
        row = self.counts
        row["judge_id"] = v["judge_id"]
        row[v["status"]] += 1
        if v["status"] == "ok":
            row["pass"] += int(v.get("overall") == "pass")
            for rubric, s in (v["scores"] or {}).items():
                got = self.scores.get(rubric)
                if got is None:
                    got = self.scores[rubric] = (array("d"), array("q"))
                got[0].append(_nan_if_none(s))
                got[1].append(-1 if position is None else position)
        if v.get("cached"):
            return  # paid for by the run that made it
        if v.get("cost_usd") is None and v["status"] == "ok":
            row["cost_unknown"] += 1
        else:
            self.cost_usd += v.get("cost_usd") or 0.0

    def figures(self) -> dict[str, Any]:
        row = self.counts
        means = {r: round(float(np.mean(np.frombuffer(s[0], dtype=float))), 4)
                 for r, s in sorted(self.scores.items())}
        return {k: row[k] for k in ("judge_id", "ok", "inconclusive", "error", "pass",
                                    "cost_unknown")} | {
            "means": means, "pass_rate": row["pass"] / row["ok"] if row["ok"] else None,
            "cost_usd": round(self.cost_usd, 6)}


def _alpha(judges: dict[str, _JudgeRow], positions: list[int]) -> dict[str, float | None]:
    """Krippendorff's alpha per rubric over judges x items (dataset order), NaN where missing."""
    names = sorted(judges)
    rubrics = sorted({r for row in judges.values() for r in row.scores})
    order = np.asarray(positions, dtype=np.int64)
    out: dict[str, float | None] = {}
    for rubric in rubrics:
        matrix = np.full((len(names), len(order)), np.nan)
        for ji, judge in enumerate(names):
            got = judges[judge].scores.get(rubric)
            if got is None:
                continue
            values = np.frombuffer(got[0], dtype=float)
            placed = np.frombuffer(got[1], dtype=np.int64)
            known = placed >= 0
            matrix[ji, np.searchsorted(order, placed[known])] = values[known]
        try:
            value = stats.krippendorff_alpha(matrix, level="interval")
        except stats.StatisticsError:
            value = None
        out[rubric] = None if value is None or np.isnan(value) else round(float(value), 4)
    return out


def _expected_agreement(store: Store, run_id: str) -> dict[str, Any] | None:
    """Agreement with ``metadata.expected_pass`` (what a careful lawyer concluded), when present."""
    n = agree = false_pass = false_fail = 0
    # Only the items whose JSON names the field are read (with their results), in any order.
    for item, result in store.iter_items_with_results(
            run_id, holding='"expected_pass"', item_fields=("id", "metadata"),
            result_fields=("status", "overall")):
        expected = expected_pass_of(item.get("metadata"))
        if expected is None or (result or {}).get("status") != "ok":
            continue
        said = (result or {}).get("overall") == "pass"
        n += 1
        agree += int(said == expected)
        false_pass += int(said and not expected)
        false_fail += int(expected and not said)
    if not n:
        return None
    return {"n": n, "agree": agree, "rate": agree / n, "false_pass": false_pass,
            "false_fail": false_fail}


_RESULT_KEYS = ("status", "overall", "scores", "flagged_for_review", "overrides", "raw_scores",
                "flags")
#: What the summary reads of each verdict.
_VERDICT_KEYS = ("judge_id", "status", "overall", "scores", "cached", "cost_usd", "input_tokens",
                 "output_tokens")


@dataclass
class _Verdicts:
    """Every verdict of a run folded into running figures (nothing per verdict is kept but the
    floats the means, the agreement and the cost sum need)."""

    judges: dict[str, _JudgeRow] = field(default_factory=dict)
    paid_cost: array[float] = field(default_factory=lambda: array("d"))
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("in", "out", "cached_in", "cached_out", "cached_verdicts", "cached_items",
         "unknown_cost"), 0))

    def fold(self, store: Store, run_id: str) -> _Verdicts:
        current: str | None = None
        all_cached = False
        t = self.tokens
        for item_id, judge, position, v in store.iter_verdicts_placed(run_id,
                                                                      fields=_VERDICT_KEYS):
            if item_id != current:
                # Verdicts come by item: an item every verdict of which came from the cache
                # cost nothing.
                t["cached_items"] += int(current is not None and all_cached)
                current, all_cached = item_id, True
            cached = bool(v.get("cached"))
            all_cached = all_cached and cached
            row = self.judges.get(judge)
            if row is None:
                row = self.judges[judge] = _JudgeRow()
            row.add(v, position)
            # Tokens and cost are what this run spent: a verdict reused from the cache was
            # paid for by the run that made it (counting it again showed 422,019 tokens for a
            # run of 0 calls).
            if cached:
                t["cached_verdicts"] += 1
                t["cached_in"] += v.get("input_tokens") or 0
                t["cached_out"] += v.get("output_tokens") or 0
            else:
                t["in"] += v.get("input_tokens") or 0
                t["out"] += v.get("output_tokens") or 0
                t["unknown_cost"] += int(v["status"] == "ok" and v.get("cost_usd") is None)
                self.paid_cost.append(v.get("cost_usd") or 0.0)
        t["cached_items"] += int(current is not None and all_cached)
        return self


def scored_by_simulated(config: Mapping[str, Any]) -> bool:
    """Whether the ensemble of a run (its stored config) has a simulated judge.

    Its spec says so, whatever the judge is named; the text of its verdicts does not (a real
    judge's rationale about "simulated trading" marked a run of real judges "Scored by
    SIMULATED judges", and scanning every verdict for the word cost the summary a tenth).
    """
    from legal_judge.providers.base import is_simulated_spec

    judges = (config.get("ensemble") or {}).get("judges") or []
    return any(is_simulated_spec(j.get("spec") or "") for j in judges)


def corrected_figures(store: Store, run_id: str, *,
                      policy: PolicyInForce | None = None) -> dict[str, Any] | None:
    """The run's pinned figures corrected for judge error (``calibration.shown_estimate``).

    None when nothing corrects them (no lawyer label, no calibration named for the run) or when
    the estimate cannot be computed; the summary never fails for it. The figures are the stored
    ones (a later calibration never moves them); ``policy`` adds its ``[calibration]`` warnings.
    """
    if not store.calibrations.any() and not store.labels.of_run(run_id):
        # What shown_estimate answers then, without importing the calibration package (~0.3 s).
        return None
    from legal_judge.calibration import shown_estimate
    from legal_judge.errors import LegalJudgeError

    try:
        return shown_estimate(store, run_id, policy=policy)
    except LegalJudgeError:
        return None


def _policy_or_none() -> PolicyInForce | None:
    """The policy in this folder (for its warnings), or None when it cannot be read: a defect
    in the policy file is the gates' to report, the summary never fails for it."""
    from legal_judge.errors import LegalJudgeError
    from legal_judge.policy import load_policy

    try:
        return load_policy()
    except LegalJudgeError:
        return None


def correction_fields(store: Store, run_id: str, summary: Mapping[str, Any], *,
                      policy: PolicyInForce | None = None) -> dict[str, Any]:
    """The summary's corrected figures: ``corrected`` (pinned), ``corrected_means`` (one per
    rubric, named by its method), ``corrected_means_note`` (which answers which question when
    the run also has isotonic item scores) and ``correction_available`` (a calibration of the
    run's ensemble exists but none was chosen for it)."""
    out: dict[str, Any] = {"corrected": None, "corrected_means": {},
                           "corrected_means_note": None, "correction_available": None}
    if not store.calibrations.any() and not store.labels.of_run(run_id):
        return out
    from legal_judge.calibration import (
        corrected_means,
        ensemble_judge_id,
        means_note,
    )

    corrected = corrected_figures(store, run_id, policy=policy or _policy_or_none())
    calibrated = summary.get("calibrated")
    out["corrected"] = corrected
    out["corrected_means"] = corrected_means(corrected, summary.get("rubrics") or {}, calibrated)
    out["corrected_means_note"] = means_note(corrected, calibrated)
    if corrected is None:
        run = store.get_run(run_id)
        latest = store.calibrations.latest_of_judge(ensemble_judge_id(run["config"]))
        if latest is not None:
            command = f"legal-judge calibrate estimate {run_id} --calibration {latest['id']}"
            out["correction_available"] = {
                "calibration_id": latest["id"], "created_at": latest["created_at"],
                "command": command,
                "text": f"not corrected for judge error: no calibration was chosen for this run; "
                        f"a calibration of its ensemble exists: {latest['id']} (estimate with "
                        f"`{command}`)"}
    return out


def calibrated_means(store: Store, run_id: str,
                     results: Mapping[str, dict[str, Any]] | None = None) -> dict[str, Any] | None:
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
    # The run's results are read again one at a time when not given (a large run's are not held).
    rows = results.values() if results is not None else (r for _, r in store.iter_results(run_id))
    raw = ({**r, "scores": uncalibrated_scores(r, correction)} for r in rows)
    return {"correction_id": correction.id, "calibration_id": correction.calibration_id,
            "method": "isotonic", "raw_rubrics": _rubric_means(raw)}


def summarize_run(store: Store, run_id: str) -> dict[str, Any]:
    """Pass rate, rubric means with 95% CIs, per-judge figures, agreement, flags, tokens and cost.

    Streamed: results and verdicts are read one at a time and folded into running figures; what
    is kept per item is a few numbers (each score as a float, each paid verdict's cost, each
    item's position) and the ids the summary lists (inconclusive, flagged, overridden).
    """
    rubric_values = _RubricValues()
    scored = passed = 0
    inconclusive: list[str] = []
    flagged: list[str] = []
    overridden: list[str] = []
    for item_id, r in store.iter_results(run_id, fields=_RESULT_KEYS):
        if r["status"] == "ok":
            scored += 1
            passed += int(r["overall"] == "pass")
            rubric_values.add(r["scores"] or {})
        else:
            inconclusive.append(item_id)
        if r.get("flagged_for_review"):
            flagged.append(item_id)
        if r.get("overrides"):
            overridden.append(item_id)
    pass_ci = stats.proportion_ci(passed, scored) if scored else None
    verdicts = _Verdicts().fold(store, run_id)
    positions = store.item_positions(run_id)
    t = verdicts.tokens
    summary = {
        "run_id": run_id,
        "items": len(positions),
        "scored": scored,
        "inconclusive": sorted(inconclusive),
        "pass_rate": passed / scored if scored else None,
        "pass_rate_ci95": list(pass_ci) if pass_ci else None,
        "rubrics": rubric_values.means(),
        "judges": {j: row.figures() for j, row in sorted(verdicts.judges.items())},
        "krippendorff_alpha": _alpha(verdicts.judges, positions),
        "flagged_for_review": sorted(flagged),
        "expected_agreement": _expected_agreement(store, run_id),
        "citation_overrides": sorted(overridden),
        "calls": store.call_counts(run_id),
        "cached_verdicts": t["cached_verdicts"],
        "cached_items": t["cached_items"],
        "input_tokens": t["in"],
        "output_tokens": t["out"],
        "cached_input_tokens": t["cached_in"],
        "cached_output_tokens": t["cached_out"],
        "cost_usd": round(sum(verdicts.paid_cost), 6),
        "cost_complete": t["unknown_cost"] == 0,
        "simulated": scored_by_simulated(store.get_run(run_id)["config"]),
        "calibrated": calibrated_means(store, run_id),
    }
    return summary | correction_fields(store, run_id, summary)
