"""Statistics of the discrimination probes: can the judge tell good from bad?

Per probe and rubric (DESIGN.md, "Statistics conventions"): ``d_i = score(original) - score(degraded)``
over the complete pairs; the paired mean with its 95% CI, a one-sided paired test that the score
moved in the expected direction (:func:`~legal_judge.stats.one_sided_paired_test`: the same
t/Wilcoxon rule as the bias dimensions), the effect size, and the sensitivity (share of pairs that
moved by at least one scale step, Clopper-Pearson CI: :func:`~legal_judge.stats.moved_share`).
Holm (the audit's ``correction``) runs across the probes with enough data. A probe fails when the
adjusted p is not below the significance threshold, when its sensitivity is below
``min_sensitivity``, or when a rule check holds in fewer than ``min_sensitivity`` of the pairs;
fewer than ``min_complete_pairs`` complete pairs: "insufficient data", no statistics.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from legal_judge.audit.analysis import INSUFFICIENT, PairRow
from legal_judge.stats import (
    MovedShare,
    OneSidedResult,
    adjust_pvalues,
    moved_share,
    one_sided_paired_test,
    proportion_ci,
)

__all__ = ["PASS", "FAIL", "ProbeStats", "analyse_probes", "probe_json"]

PASS, FAIL = "pass", "fail"


@dataclass
class ProbeStats:
    """Everything computed for one probe (one rubric of it)."""

    key: str
    probe: str
    rubric: str
    direction: str
    n_pairs: int
    complete: list[PairRow]
    failed: list[PairRow]
    sufficient: bool
    result: OneSidedResult | None = None
    p_adjusted: float | None = None
    sensitivity: MovedShare | None = None
    checks: list[dict[str, Any]] = field(default_factory=list)
    status: str = INSUFFICIENT
    reasons: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """The probe passed (the judge discriminates on it)."""
        return self.status == PASS


def _checks(rows: list[PairRow], min_share: float) -> list[dict[str, Any]]:
    names = list(dict.fromkeys(k for r in rows for k in (r.checks or {})))
    out = []
    for name in names:
        held = [(r.checks or {}).get(name) for r in rows]
        known = [h for h in held if h is not None]
        if not known:
            out.append({"name": name, "k": 0, "n": 0, "share": None, "ci95": None,
                        "passed": None, "note": "the verdicts do not carry this field"})
            continue
        k, n = sum(bool(h) for h in known), len(known)
        ci = proportion_ci(k, n, method="exact")
        out.append({"name": name, "k": k, "n": n, "share": k / n, "ci95": list(ci),
                    "passed": k / n >= min_share})
    return out


def _one(key: str, rows: list[PairRow], *, method: str, min_pairs: int,
         min_sensitivity: float) -> ProbeStats:
    first = rows[0]
    complete = [r for r in rows if r.complete]
    failed = [r for r in rows if not r.complete]
    rubric = next((r.rubric for r in rows if r.rubric), None) or "score"
    st = ProbeStats(key, str(first.probe), rubric,
                    first.expected_direction or "drop", len(rows), complete, failed,
                    len(complete) >= min_pairs)
    if not st.sufficient:
        st.reasons.append(f"{len(complete)} complete pair(s), fewer than the {min_pairs} needed")
        return st
    alternative = "greater" if st.direction == "drop" else "less"
    a = [r.variant_a_score for r in complete]
    b = [r.variant_b_score for r in complete]
    st.result = one_sided_paired_test(a, b, alternative=alternative,  # type: ignore[arg-type]
                                      method=method)  # type: ignore[arg-type]
    step = float(first.step or 1.0)
    st.sensitivity = moved_share(a, b, step=step, direction=alternative)  # type: ignore[arg-type]
    st.checks = _checks(complete, min_sensitivity)
    return st


def analyse_probes(rows: list[PairRow], *, probes: list[str] | None = None, method: str = "auto",
                   correction: str = "holm", significance: float = 0.05,
                   min_sensitivity: float = 0.7, min_complete_pairs: int = 10) -> list[ProbeStats]:
    """Statistics and pass/fail of every probe (the probe rows of ``rows``).

    Args:
        rows: Scored pairs; rows without ``probe`` are ignored.
        probes: Probe order (default: order of first appearance).
        method: ``auto``, ``t-test`` or ``wilcoxon`` (the same rule as the dimensions).
        correction: ``holm``, ``bh`` or ``none`` across the probes with enough data.
        significance: Threshold of the adjusted one-sided p-value.
        min_sensitivity: Minimum share of pairs that must move by a scale step (and of pairs
            that must meet each rule check).
        min_complete_pairs: Fewer complete pairs: "insufficient data".
    """
    probe_rows = [r for r in rows if r.probe is not None]
    order = {name: i for i, name in enumerate(probes or [])}
    named: dict[str, set[str]] = {}
    for r in probe_rows:
        named.setdefault(str(r.probe), set()).update([r.rubric] if r.rubric else [])
    groups: dict[tuple[str, str], list[PairRow]] = {}
    for r in sorted(probe_rows, key=lambda r: order.get(str(r.probe), len(order))):
        # A row without a rubric (a failed pair, a single-score judge) joins the probe's rubric.
        only = sorted(named[str(r.probe)])
        rubric = r.rubric or (only[0] if len(only) == 1 else "score")
        groups.setdefault((str(r.probe), rubric), []).append(r)
    rubrics_of: dict[str, int] = {}
    for probe, _ in groups:
        rubrics_of[probe] = rubrics_of.get(probe, 0) + 1
    stats = [_one(f"{probe}:{rubric}" if rubrics_of[probe] > 1 else probe, grows,
                  method=method, min_pairs=min_complete_pairs, min_sensitivity=min_sensitivity)
             for (probe, rubric), grows in groups.items()]
    raw = [s.result.p_value if s.result is not None else np.nan for s in stats]
    adjusted = adjust_pvalues(raw, correction) if stats else np.array([])  # type: ignore[arg-type]
    for s, p_adj in zip(stats, adjusted, strict=True):
        if s.result is None:
            continue
        # A single pair has no p-value: undefined, and _decide fails the probe for it.
        s.p_adjusted = None if s.result.p_value is None else float(p_adj)
        _decide(s, significance=significance, min_sensitivity=min_sensitivity)
    return stats


def _decide(s: ProbeStats, *, significance: float, min_sensitivity: float) -> None:
    assert s.result is not None and s.sensitivity is not None
    verb = "drop" if s.direction == "drop" else "rise"
    if s.p_adjusted is None:
        s.reasons.append(f"{s.result.n} pair: no test, so no evidence that the {s.rubric} score "
                         f"{verb}s")
    elif s.p_adjusted >= significance:
        s.reasons.append(f"the {s.rubric} score does not {verb} significantly "
                         f"(one-sided adjusted p = {s.p_adjusted:.2g}, mean change "
                         f"{s.result.mean_difference:+.2f})")
    share = s.sensitivity.share or 0.0
    if share < min_sensitivity:
        s.reasons.append(f"sensitivity {share:.0%}: the score moved by a scale step in "
                         f"{s.sensitivity.k} of {s.sensitivity.n} pairs (minimum "
                         f"{min_sensitivity:.0%})")
    for c in s.checks:
        if c["passed"] is False:
            s.reasons.append(f"rule check '{c['name']}' held in {c['k']} of {c['n']} pairs "
                             f"(minimum {min_sensitivity:.0%})")
    s.status = FAIL if s.reasons else PASS


def probe_json(s: ProbeStats, *, description: str | None = None, rule: str | None = None,
               not_applicable: list[str] | None = None) -> dict[str, Any]:
    """The probe's entry in ``extensions.probes``."""
    out: dict[str, Any] = {
        "probe": s.probe, "rubric": s.rubric, "expected_direction": s.direction,
        "description": description, "rule": rule, "status": s.status, "reasons": s.reasons,
        "pairs_designed": s.n_pairs, "pairs_complete": len(s.complete),
        "pairs_failed": len(s.failed),
        "failed_pairs": [{"pair_id": r.pair_id, "error": r.error} for r in s.failed],
        "not_applicable": not_applicable or [],
        "pairs": [{"pair_id": r.pair_id, "base_item_id": r.base_item_id,
                   "original_score": r.variant_a_score, "degraded_score": r.variant_b_score,
                   "difference": float(np.round((r.variant_a_score or 0.0)
                                                - (r.variant_b_score or 0.0), 12)),
                   "checks": r.checks} for r in s.complete],
    }
    if s.result is not None:
        res = asdict(s.result)
        out |= {"mean_difference": res["mean_difference"], "ci95": list(res["ci95"]),
                "test_used": res["test_used"], "alternative": res["alternative"],
                "statistic": res["statistic"], "p_value": res["p_value"],
                "p_value_adjusted": s.p_adjusted, "effect_size": res["effect_size"],
                "effect_size_kind": res["effect_size_kind"],
                "effect_size_interpretation": res["interpretation"], "n": res["n"],
                "sd_of_differences": res["sd"], "note": res["note"],
                "what": "d = score(original) - score(degraded); one-sided test that d "
                        + ("> 0" if s.direction == "drop" else "< 0")}
    if s.sensitivity is not None:
        sens = asdict(s.sensitivity)
        sens["ci95"] = list(sens["ci95"]) if sens["ci95"] else None
        out["sensitivity"] = sens
    out["checks"] = s.checks
    return out
