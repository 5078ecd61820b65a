"""The release gate: paired comparison of two runs on the same items, decided by non-inferiority.

Like with like: by default both runs' **raw** ensemble scores (a run scored with ``--calibration``
keeps its uncorrected scores, and those are compared; the report says so). ``corrected=True``
(or the policy's ``use_corrected`` when both runs have a correction) compares the
judge-error-corrected figures of both runs instead (``compare_corrected``).

The decision (``benchmark.release``): every endpoint, the pass rate and each rubric mean, must be
shown **non-inferior**: the one-sided lower confidence bound of ``B - A`` above ``-margin``
(``[release]`` policy: ``pass_rate_margin``, ``rubric_margin``, ``confidence``, ``min_items``).
Pass rate: Tango's score bounds for paired proportions. Rubric means: the paired t bounds or the
Hodges-Lehmann bounds of the Wilcoxon signed-rank test, following the test ``paired_test`` picks
with ``method`` (``auto``: Wilcoxon when Shapiro-Wilk rejects normality). Each endpoint is
``non-inferior``, ``regressed`` or ``cannot tell`` (``status``), and a flip guard counts the
critical items that went pass -> fail.

The descriptive figures stay beside the decision: mean difference with its two-sided 95% CI, the
paired test's p Holm-adjusted across rubrics (``alpha``), exact McNemar for the pass rate. They
do not decide the gate. Every item whose score dropped is listed per rubric (``regressed_items``),
with or without a pass/fail flip.
"""

from __future__ import annotations

from typing import Any

from legal_judge import stats
from legal_judge.benchmark.item_outcomes import DIFFERENT_QUESTION, question_of
from legal_judge.benchmark.release import (
    DECISIONS,
    endpoint_decision,
    flip_guard,
    release_verdict,
    review_guard,
    scored_requirement,
)
from legal_judge.errors import ConfigError
from legal_judge.policy import ReleasePolicy, RunPolicy
from legal_judge.store import Store

__all__ = ["compare_runs", "release_policy"]

#: The status of an endpoint (what a JUnit writer or a CI gate reads).
STATUSES = DECISIONS


def release_policy(policy: ReleasePolicy | None = None, *, threshold: float | None = None,
                   min_items: int | None = None) -> ReleasePolicy:
    """The ``[release]`` settings a library caller asked for (bundled defaults when None).

    ``threshold`` is the deprecated name of ``rubric_margin``; the CLI goes through the policy
    file and its tighten-only flags instead.
    """
    base = policy or ReleasePolicy()
    update: dict[str, Any] = {}
    if threshold is not None:
        update["rubric_margin"] = threshold
    if min_items is not None:
        update["min_items"] = min_items
    return base.model_copy(update=update) if update else base


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


def _dropped_items(ids: list[str], before: list[float], after: list[float]) -> list[dict[str, Any]]:
    drops = [{"item_id": i, "before": a, "after": b} for i, a, b in zip(ids, before, after,
                                                                        strict=True) if b < a]
    return sorted(drops, key=lambda d: (d["after"] - d["before"], d["item_id"]))


def _bounds(a: list[float], b: list[float], *, method: str, policy: ReleasePolicy,
            test_used: str) -> tuple[float | None, float | None, float | None, str, float | None]:
    """``(lower, upper, sd, method, hodges_lehmann)`` of the rubric's shift ``B - A``.

    The bounds follow the test ``paired_test`` chose. Under Wilcoxon the Hodges-Lehmann bounds
    speak for the typical item: when most items do not move they stay at 0 however far a few
    items fall, while the endpoint is the rubric *mean*. So under Wilcoxon both the Hodges-
    Lehmann and the t bound must clear the margin (the lower of the two lower bounds, the
    higher of the upper ones): an intersection-union again, still at level ``1 - confidence``.
    """
    t = stats.mean_bounds(b, a, confidence=policy.confidence)
    if test_used != "wilcoxon signed-rank" and not (method == "wilcoxon" and test_used != "none"):
        return t.lower, t.upper, t.sd, "t", None
    hl = stats.hodges_lehmann_bounds(b, a, confidence=policy.confidence)
    if None in (hl.lower, hl.upper, t.lower, t.upper):
        return None, None, t.sd, "hodges-lehmann + t", hl.estimate
    return (min(hl.lower, t.lower), max(hl.upper, t.upper),  # type: ignore[type-var]
            t.sd, "hodges-lehmann + t", hl.estimate)


def _rubric(ids: list[str], a: list[float], b: list[float], *, method: str,
            policy: ReleasePolicy, compared: int) -> dict[str, Any]:
    n = len(ids)
    entry: dict[str, Any] = {"n": n, "mean_difference": (sum(b) - sum(a)) / n if n else 0.0,
                             "ci95": None, "test": None, "p_value": None, "effect_size": None}
    lower = upper = sd = hl = None
    how = "none"
    if n >= max(2, policy.min_items):
        t = stats.paired_test(b, a, method=method)  # type: ignore[arg-type]
        entry.update(mean_difference=t.mean_difference, ci95=list(t.ci95) if t.ci95 else None,
                     test=t.test_used, p_value=t.p_value, effect_size=t.effect_size)
        lower, upper, sd, how, hl = _bounds(a, b, method=method, policy=policy,
                                            test_used=t.test_used)
    identical = compared >= policy.min_items and all(x == y for x, y in zip(a, b, strict=True))
    decision = endpoint_decision("", n=n, estimate=entry["mean_difference"], lower=lower,
                                 upper=upper, margin=policy.rubric_margin, policy=policy,
                                 method=how, sd=sd, identical=identical)
    entry.update({k: v for k, v in decision.items() if k != "endpoint"},
                 hodges_lehmann=hl, status=decision["decision"],
                 regressed=decision["decision"] == "regressed",
                 regressed_items=_dropped_items(ids, a, b))
    return entry


def _raw_rubrics(res_a: dict[str, Any], res_b: dict[str, Any], common: list[str], *,
                 policy: ReleasePolicy, method: str) -> dict[str, Any]:
    names = sorted({r for i in common for r in res_a[i]["scores"]} &
                   {r for i in common for r in res_b[i]["scores"]})
    rubrics: dict[str, Any] = {}
    for rubric in names:
        ids = [i for i in common if rubric in res_a[i]["scores"] and rubric in res_b[i]["scores"]]
        rubrics[rubric] = _rubric(ids, [float(res_a[i]["scores"][rubric]) for i in ids],
                                  [float(res_b[i]["scores"][rubric]) for i in ids],
                                  method=method, policy=policy, compared=len(common))
    tested = [r for r, e in rubrics.items() if e["p_value"] is not None]
    adjusted = stats.adjust_pvalues([rubrics[r]["p_value"] for r in tested], "holm")
    for rubric, p_adj in zip(tested, adjusted, strict=True):
        rubrics[rubric]["p_adjusted"] = float(p_adj)
    for e in rubrics.values():
        e.setdefault("p_adjusted", None)
    return rubrics


def _questions(store: Store, run_id: str) -> tuple[dict[str, tuple[str, str | None]], set[str]]:
    """Each item's question (``question_of``) and the items the run's dataset marks critical."""
    questions, critical = {}, set()
    for item in store.iter_items(run_id):
        questions[str(item["id"])] = question_of(item)
        if item.get("critical"):
            critical.add(str(item["id"]))
    return questions, critical


def _pairing(store: Store, run_a: str, run_b: str, res_a: dict[str, Any],
             res_b: dict[str, Any], policy: ReleasePolicy, run_policy: RunPolicy,
             ) -> tuple[list[str], list[str], list[str], dict[str, Any], dict[str, Any]]:
    """``(common, different, flipped, flip guard, scored)``: the items both runs scored on the
    same question, the ids whose question differs, the pass -> fail items, the guard and the
    requirement that each run scored enough of its items (``release.scored_requirement``).

    A critical item the guard cannot check (passed in A and not scored in B, or missing from
    it; not scored in A and not passed in B; asked differently) is ``unchecked``.
    """
    (q_a, crit_a), (q_b, crit_b) = _questions(store, run_a), _questions(store, run_b)
    different = sorted(i for i in q_a.keys() & q_b.keys() if q_a[i] != q_b[i])
    outcome_a, outcome_b = ({i: r["overall"] for i, r in res.items()
                             if r["status"] == "ok" and i not in different}
                            for res in (res_a, res_b))
    common = sorted(outcome_a.keys() & outcome_b.keys())
    flipped = [i for i in common if outcome_a[i] == "pass" and outcome_b[i] == "fail"]
    present = q_a.keys() | q_b.keys()
    unchecked = [i for i in present if (i not in outcome_a or i not in outcome_b)
                 and outcome_a.get(i) != "fail" and outcome_b.get(i) != "pass"]
    guard = flip_guard(flipped, crit_a | crit_b, policy=policy, unchecked=unchecked,
                       present=present)
    scored = scored_requirement({rid: (len(q), sum(1 for i in q if i in res and res[i]["status"]
                                                   == "ok"))
                                 for rid, q, res in ((run_a, q_a, res_a), (run_b, q_b, res_b))},
                                policy=run_policy)
    return common, different, flipped, guard, scored


def _different_warning(different: list[str]) -> str:
    shown = ", ".join(different[:10]) + (" ..." if len(different) > 10 else "")
    return (f"{len(different)} item(s) have the same id but {DIFFERENT_QUESTION}: not compared "
            f"({shown})")


def _pass_rate(res_a: dict[str, Any], res_b: dict[str, Any], common: list[str], *,
               policy: ReleasePolicy) -> dict[str, Any]:
    passed_a = [res_a[i]["overall"] == "pass" for i in common]
    passed_b = [res_b[i]["overall"] == "pass" for i in common]
    mc = stats.mcnemar_from_outcomes(passed_a, passed_b)
    pb = stats.paired_proportions_bounds(passed_a, passed_b, confidence=policy.confidence)
    decision = endpoint_decision("pass_rate", n=len(common), estimate=pb.difference,
                                 lower=pb.lower, upper=pb.upper, margin=policy.pass_rate_margin,
                                 policy=policy, method=pb.method, sd=pb.sd, unit="pass rate",
                                 shares=(pb.better / pb.n, pb.worse / pb.n))
    return {"rate_a": sum(passed_a) / len(common), "rate_b": sum(passed_b) / len(common),
            "p_value": mc.p_value, "b": mc.b, "c": mc.c,
            **{k: v for k, v in decision.items() if k != "endpoint"},
            "status": decision["decision"], "regressed": decision["decision"] == "regressed"}


def _use_corrected(store: Store, meta_a: dict[str, Any], meta_b: dict[str, Any]) -> bool:
    """Policy ``use_corrected``: compare corrected figures only when both runs have them.

    "Have them" as ``compare --corrected`` reads them (the figures each run shows, pinned): an
    estimate transported from whichever calibration is newest is not a run's correction.
    """
    from legal_judge.calibration import shown_estimate

    return all(shown_estimate(store, m["id"]) is not None for m in (meta_a, meta_b))


def _review_guard(store: Store, run_b: str, policy: ReleasePolicy) -> dict[str, Any]:
    """Run B's escalated items pending lawyer review (the newest escalation's split figures)."""
    from legal_judge.calibration.escalation import escalation_figures

    figures = escalation_figures(store, run_b)
    review = review_guard(run_b, escalation_id=figures.escalation_id if figures else None,
                          escalated=figures.escalated if figures else 0,
                          pending=figures.pending if figures else 0, policy=policy)
    return {**review, "facts": [list(f) for f in figures.facts()] if figures else []}


def _gate(store: Store, report: dict[str, Any], endpoints: list[dict[str, Any]],
          guard: dict[str, Any], policy: ReleasePolicy,
          requirements: list[dict[str, Any]]) -> dict[str, Any]:
    review = _review_guard(store, str(report["run_b"]), policy)
    verdict = release_verdict(endpoints, guard, policy=policy, review=review)
    # A requirement (e.g. a validation of record) is met only on positive evidence; an unmet one
    # fails the release whatever the endpoints say, and is named beside the regressions.
    unmet = [r["name"] for r in requirements if not r["met"]]
    verdict.update(requirements=requirements, unmet=unmet,
                   passed=verdict["passed"] and not unmet)
    report.update(release={**verdict, "endpoints": endpoints, "flip_guard": guard,
                           "review": review},
                  release_policy=policy.model_dump(mode="json"),
                  regressions=verdict["regressed"], cannot_tell=verdict["cannot_tell"],
                  insufficient=[e["endpoint"] for e in endpoints
                                if e["n"] is not None and e["n"] < policy.min_items])
    return report


def compare_runs(store: Store, run_a: str, run_b: str, *, policy: ReleasePolicy | None = None,
                 alpha: float = 0.05, method: str = "auto", corrected: bool = False,
                 threshold: float | None = None, min_items: int | None = None,
                 require_validation: bool = False,
                 run_policy: RunPolicy | None = None) -> dict[str, Any]:
    """Compare run B against baseline run A on their common scored items: the release decision.

    Args:
        store: The store holding both runs.
        run_a: The baseline run.
        run_b: The run under test.
        policy: The ``[release]`` policy (margins, confidence, min_items, flip guard); the
            bundled defaults when None.
        alpha: Significance level of the descriptive Holm-adjusted p-values (not the gate).
        method: ``auto``, ``t-test`` or ``wilcoxon``: the rubric test and so its bounds.
        corrected: Compare the judge-error-corrected figures of both runs instead of the raw
            scores (refused when a run has none).
        require_validation: The policy's ``[validation] require_of_record``: every judge of run
            B must have a validation of record that lets it gate, or the release fails.
        run_policy: The ``[run]`` policy: a run whose share of items not scored is above its
            ``max_inconclusive_share`` fails the release (bundled default when None).
        threshold: Deprecated alias of ``rubric_margin`` (library callers).
        min_items: Overrides the policy's ``min_items`` (library callers).

    Returns:
        A dict: ``release`` (``decision``, ``passed``, ``endpoints``, ``flip_guard``, ``rule``),
        ``rubrics`` and ``pass_rate`` (per endpoint: ``status`` = decision, bounds, margin,
        ``reason``, descriptive figures, ``regressed_items``), ``regressions``,
        ``cannot_tell``, ``insufficient``, ``regressed_items`` (pass -> fail), ``warnings``.

    Raises:
        ConfigError: the runs share no scored item, or ``corrected`` and a run has no correction.
    """
    pol = release_policy(policy, threshold=threshold, min_items=min_items)
    meta_a, meta_b = store.get_run(run_a), store.get_run(run_b)
    (res_a, cal_a), (res_b, cal_b) = _raw_results(store, meta_a), _raw_results(store, meta_b)
    common, different, flipped, guard, scored = _pairing(store, run_a, run_b, res_a, res_b, pol,
                                                         run_policy or RunPolicy())
    requirements = [scored, _validation(store, meta_b, require_validation)]
    fallback = pol.use_corrected and not corrected and not _use_corrected(store, meta_a, meta_b)
    if corrected or (pol.use_corrected and not fallback):
        from legal_judge.benchmark.compare_corrected import compare_corrected

        report = compare_corrected(store, meta_a, meta_b, policy=pol, alpha=alpha)
        report.update(regressed_items=flipped, different_question=different)
        if different:
            report["warnings"] = [*report.get("warnings", []), _different_warning(different)]
        return _gate(store, report, report.pop("endpoints"), guard, pol, requirements)
    if not common:
        why = (f": the {len(different)} id(s) they share hold different questions (prompt or "
               f"jurisdiction), e.g. {different[0]}" if different else "")
        raise ConfigError(f"runs {run_a} and {run_b} have no scored item in common{why}",
                          code="compare-no-overlap",
                          fix="compare two runs over the same dataset (the same questions; only "
                              "the answers may differ)")
    warnings = [_different_warning(different)] if different else []
    if _judge_ids(meta_a) != _judge_ids(meta_b):
        warnings.append("the judges differ between the runs (judge_id changed): a difference may "
                        "come from the judge, not from the system under test")
    rubrics = _raw_rubrics(res_a, res_b, common, policy=pol, method=method)
    pass_rate = _pass_rate(res_a, res_b, common, policy=pol)
    notes = [f"run {rid} was scored with --calibration {cid}: its raw (uncorrected) scores are "
             "compared; use --corrected to compare judge-error-corrected figures"
             for rid, cid in ((run_a, cal_a), (run_b, cal_b)) if cid]
    if fallback:
        notes.append("the policy's use_corrected is set, but a run has no correction for judge "
                     "error: the raw scores of both runs are compared")
    endpoints = [{"endpoint": "pass_rate", **pass_rate},
                 *({"endpoint": r, **e} for r, e in rubrics.items())]
    report = {
        "run_a": run_a, "run_b": run_b, "n_items": len(common), "warnings": warnings,
        "different_question": different,
        "compared": "raw", "calibrated": {run_a: cal_a, run_b: cal_b},
        "compared_note": "the judges' raw scores of both runs" + (
            " (corrections applied with --calibration are set aside)" if notes else ""),
        "notes": notes, "alpha": alpha, "method": method, "correction": "holm",
        "rubrics": rubrics, "regressed_items": flipped, "pass_rate": pass_rate,
    }
    return _gate(store, report, [_endpoint_row(e) for e in endpoints], guard, pol,
                 requirements)


def _validation(store: Store, run: dict[str, Any], required: bool) -> dict[str, Any]:
    """The ``[validation] require_of_record`` requirement on run B's judges."""
    from legal_judge.calibration import validation_requirement

    return validation_requirement(store, _judge_ids(run), required=required)


def _endpoint_row(e: dict[str, Any]) -> dict[str, Any]:
    """An endpoint's decision without its item lists (those stay in ``rubrics``)."""
    keep = ("endpoint", "decision", "n", "estimate", "lower", "upper", "margin", "unit",
            "confidence", "method", "items_needed", "reason")
    return {k: e.get(k) for k in keep}
