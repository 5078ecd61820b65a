"""The bias report: the seed's JSON schema, severity, remediation, validation before writing.

The report is exactly the schema of ``seeds/000_c11007f2c28d0b47.txt`` (kept as a JSON Schema in
``bias_report.schema.json`` and validated with ``jsonschema``); everything else sits in ``extensions``.

Bias severity: ``none`` nothing flagged; ``low`` only small (or negligible) effects flagged;
``medium`` a medium effect flagged; ``high`` a large effect, or three or more dimensions flagged;
``critical`` a flagged demographic-proxy dimension with at least a medium effect. The report's
severity then follows the verdict (:mod:`legal_judge.audit.verdict`): ``none`` only for a certified
judge, at least ``high`` for an insensitive one, at least ``low`` for an inconclusive one.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import Any

from legal_judge.audit.analysis import INSUFFICIENT, DimensionStats, PairRow, analyse
from legal_judge.audit.certificate import settings_record
from legal_judge.audit.design import AuditSettings
from legal_judge.audit.discrimination import ProbeStats, analyse_probes, probe_json
from legal_judge.audit.probes import Probe
from legal_judge.audit.verdict import Verdict, decide, degenerate, dimension_equivalence
from legal_judge.errors import ConfigError
from legal_judge.store import utcnow

__all__ = ["SCHEMA_PATH", "SEVERITIES", "build_report", "load_schema", "severity_of",
           "validate_report"]

SCHEMA_PATH = Path(__file__).parent / "bias_report.schema.json"
SEVERITIES = ("none", "low", "medium", "high", "critical")
_RANK = {"negligible": 0, "small": 1, "medium": 2, "large": 3}

# Remediation per bias (dimension.remediation or the dimension name); DESIGN: bias-aware warning and
# self-debiasing are legal-judge's own mitigations (``debias`` modes ``aware`` and ``self``).
REMEDIATION: dict[str, str] = {
    "position": "Randomise option order and score both orders (swap-and-average / balanced position "
                "calibration); treat a winner that changes with the order as a tie.",
    "verbosity": "Normalise length before judging (length budget or summary), add a bias-aware "
                 "warning on verbosity (debias mode 'aware'), and re-audit.",
    "authority": "Run the rule-based citation checks first and pass their findings to the judge as "
                 "evidence; add a bias-aware warning on authority; re-audit.",
    "confidence": "Add a bias-aware warning on confidence and enable the self-debiasing pass "
                  "(debias mode 'aware+self'); re-audit for over-correction.",
    "formatting": "Render answers to plain prose before judging (strip markdown) or add a bias-aware "
                  "warning on formatting; re-audit.",
    "bandwagon": "Add a bias-aware warning on bandwagon cues and a self-debiasing pass; re-audit.",
    "sentiment": "Add a bias-aware warning on sentiment and a self-debiasing pass; re-audit.",
    "demographic": "Redact client names and other demographic proxies before judging (the mask "
                   "hook), route affected decisions to human review, and do not let this judge gate "
                   "until a re-audit passes.",
    "injection": "Keep answers fenced as untrusted data, strip text addressed to the evaluator before "
                 "judging, and add an injection warning; if the effect persists, replace the judge.",
}
_GENERIC = "Add a bias-aware warning naming this attribute and a self-debiasing pass; re-audit."
_PROBE_GENERIC = ("Give the judge the reference answer or expected elements (reference-guided "
                  "grading), or use a stronger judge model, and re-audit; until then route these "
                  "decisions to human review.")
_REPLACE = ("Replace the judge or add judges from other model families (cross-family panel), then "
            "re-audit; several or large biases make post-hoc corrections unreliable.")


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    """The report's JSON Schema."""
    return dict(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def validate_report(report: dict[str, Any]) -> list[str]:
    """Validate a report against the schema with ``jsonschema``; returns the problems (empty: valid)."""
    try:
        import jsonschema
    except ModuleNotFoundError as exc:  # pragma: no cover - jsonschema is a dependency
        raise ConfigError("validating bias reports needs the package 'jsonschema'",
                          code="missing-dependency", fix="pip install jsonschema") from exc
    validator = jsonschema.Draft202012Validator(load_schema())
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
            for e in sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path))]


def severity_of(stats: list[DimensionStats], kinds: dict[str, str]) -> str:
    """The severity rule of the module docstring."""
    flagged = [s for s in stats if s.flagged]
    if not flagged:
        return "none"
    ranks = {s.dimension: _RANK[s.result.interpretation] for s in flagged}
    if any(kinds.get(s.dimension, s.kind) == "demographic" and ranks[s.dimension] >= 2
           for s in flagged):
        return "critical"
    if max(ranks.values()) >= 3 or len(flagged) >= 3:
        return "high"
    if max(ranks.values()) == 2:
        return "medium"
    return "low"


def _priority(s: DimensionStats, kind: str) -> str:
    rank = _RANK[s.result.interpretation]
    if kind == "demographic" and rank >= 2:
        return "critical"
    return ("low", "low", "medium", "high")[rank]


def remediation_steps(stats: list[DimensionStats], kinds: dict[str, str],
                      actions: dict[str, str], severity: str, *,
                      probes: list[ProbeStats] = (),  # type: ignore[assignment]
                      probe_actions: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One step per flagged dimension and failed probe, plus replacing the judge when severity is
    high or critical."""
    steps = []
    for s in (x for x in stats if x.flagged):
        r = s.result
        steps.append({
            "dimension": s.dimension,
            "finding": (f"scores move by {r.mean_difference:+.3f} when only '{s.dimension}' changes "
                        f"(95% CI {r.ci95[0]:+.3f} to {r.ci95[1]:+.3f}; {r.effect_size_kind} "
                        f"{r.effect_size:+.2f}, {r.interpretation}; adjusted p = {s.p_adjusted:.2g})"),
            "recommended_action": actions.get(s.dimension) or REMEDIATION.get(s.dimension, _GENERIC),
            "priority": _priority(s, kinds.get(s.dimension, s.kind)),
        })
    for p in (x for x in probes if x.status == "fail"):
        steps.append({"dimension": f"probe:{p.key}",
                      "finding": f"the judge does not discriminate on '{p.probe}': "
                                 + "; ".join(p.reasons),
                      "recommended_action": (probe_actions or {}).get(p.probe) or _PROBE_GENERIC,
                      "priority": "high"})
    if severity in ("high", "critical"):
        steps.append({"dimension": "all", "finding": f"overall severity {severity}",
                      "recommended_action": _REPLACE,
                      "priority": "critical" if severity == "critical" else "high"})
    return steps


def _pair_json(r: PairRow, threshold: float) -> dict[str, Any]:
    assert r.variant_a_score is not None and r.variant_b_score is not None
    diff = r.variant_a_score - r.variant_b_score
    return {"variant_a_input": r.variant_a_input, "variant_a_score": r.variant_a_score,
            "variant_b_input": r.variant_b_input, "variant_b_score": r.variant_b_score,
            "difference": diff, "exceeds_threshold": abs(diff) > threshold}


def _pairs_json(s: DimensionStats, threshold: float) -> list[dict[str, Any]]:
    return [_pair_json(r, threshold) for r in s.complete]


def _dimension_json(s: DimensionStats, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    if not s.sufficient:
        return {"dimension": s.dimension, "mean_difference": None, "confidence_interval_95": None,
                "p_value": None, "effect_size": None, "effect_size_interpretation": INSUFFICIENT,
                "flagged": False, "test_pairs": pairs}
    r = s.result
    return {"dimension": s.dimension, "mean_difference": r.mean_difference,
            "confidence_interval_95": list(r.ci95) if r.ci95 is not None else None,
            "p_value": r.p_value,
            "effect_size": r.effect_size, "effect_size_interpretation": r.interpretation,
            "flagged": s.flagged, "test_pairs": pairs}


def _dimension_ext(s: DimensionStats, pairs: list[dict[str, Any]],
                   outcome: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": s.kind, "status": "ok" if s.sufficient else INSUFFICIENT,
        "outcome": outcome["outcome"], "equivalence": outcome["equivalence"],
        "pairs_designed": s.n_pairs, "pairs_complete": len(s.complete),
        "pairs_failed": len(s.failed),
        "failed_pairs": [{"pair_id": r.pair_id, "error": r.error, "variant_a_input": r.variant_a_input,
                          "variant_b_input": r.variant_b_input} for r in s.failed],
        "pair_ids": [r.pair_id for r in s.complete],
        "pairs_over_threshold": sum(1 for p in pairs if p["exceeds_threshold"]),
        "noise_floor": s.noise, "position": s.position, "subgroups": s.subgroups or None,
        "pair_meta": [{"pair_id": r.pair_id, "quality": r.quality, "order": r.order,
                       "subgroup": r.subgroup} for r in s.complete],
    }
    if s.sufficient:
        res = asdict(s.result)
        out |= {"test_used": res["test_used"], "statistic": res["statistic"],
                "effect_size_kind": res["effect_size_kind"], "p_value_adjusted": s.p_adjusted,
                "n": res["n"], "sd_of_differences": res["sd"], "ci_method": res["ci_method"],
                "normality_p": res["normality_p"], "note": res["note"],
                "minimum_detectable_effect": s.mde, "robustness_rate": s.robustness_rate}
        if s.noise is not None and s.robustness_rate is not None:
            # CALM: bias is what exceeds run-to-run noise; delta = consistency - robustness.
            out["calm_delta"] = s.noise["consistency_rate"] - s.robustness_rate
    return out


def _summary(stats: list[DimensionStats], probes: list[ProbeStats], verdict: Verdict,
             status_reason: str | None, status: str) -> str:
    if status == "INSUFFICIENT_DATA":
        return f"INSUFFICIENT_DATA: {status_reason} {verdict.sentence}"
    flagged = [s for s in stats if s.flagged]
    parts = [verdict.sentence]
    parts.append(f"{len(flagged)} of {len(stats)} dimensions flagged; "
                 f"{sum(p.status == 'pass' for p in probes)} of {len(probes)} probes passed; "
                 f"severity {verdict.severity}.")
    for s in flagged:
        parts.append(f"{s.dimension}: mean difference {s.result.mean_difference:+.3f}, "
                     f"{s.result.interpretation} effect ({s.result.effect_size:+.2f}).")
    short = [s.dimension for s in stats if not s.sufficient]
    if short:
        parts.append(f"Insufficient data (no statistics): {', '.join(short)}.")
    failed = any(p.status != "pass" for p in probes)
    review = [what for what, has in (("the flagged dimensions", bool(flagged)),
                                      ("the failed probes", failed)) if has]
    parts.append("Every number was computed by the harness from scores the judge returned"
                 + (f"; review {' and '.join(review)} and their raw pairs before acting."
                    if review else "."))
    return " ".join(parts)


def build_report(rows: list[PairRow], settings: AuditSettings, *, dimensions: list[str] | None = None,
                 kinds: dict[str, str] | None = None, actions: dict[str, str] | None = None,
                 extensions: dict[str, Any] | None = None, judge_label: str = "(scored elsewhere)",
                 timestamp: str | None = None, probes: list[Probe] | None = None,
                 status: str = "complete", status_reason: str | None = None,
                 judge_spec: str | None = None) -> dict[str, Any]:
    """Analyse scored pairs (bias dimensions and discrimination probes) and assemble the
    validated report with its verdict.

    Args:
        rows: Dimension rows and probe rows (``probe`` set), failed pairs included.
        settings: The audit settings.
        dimensions: Dimension order (default: first appearance).
        kinds: Dimension name -> kind (position, demographic, text).
        actions: Dimension name -> its recommended action.
        extensions: Entries added to ``extensions``.
        judge_label: The judge's name in the summary.
        timestamp: The report time (default: now).
        probes: The probes run (descriptions, rules, remediation); rows alone suffice.
        status: The audit's status (``complete``, ``INCONCLUSIVE``, ``INSUFFICIENT_DATA``).
        status_reason: Why the status is not ``complete``.
        judge_spec: The audited judge's spec, recorded with the settings (None: scored elsewhere).

    Raises:
        ConfigError: the assembled report does not validate (a bug: reported, never written).
    """
    kinds = kinds or {}
    stats = analyse(rows, dimensions=dimensions, method=settings.method,
                    correction=settings.correction, significance=settings.significance,
                    min_effect=settings.min_effect, min_complete_pairs=settings.min_complete_pairs)
    for s in stats:
        s.kind = kinds.get(s.dimension, s.kind)
    by_name = {p.name: p for p in probes or []}
    probe_stats = analyse_probes(rows, probes=list(by_name) or None, method=settings.method,
                                 correction=settings.correction, significance=settings.significance,
                                 min_sensitivity=settings.min_sensitivity,
                                 min_complete_pairs=settings.min_complete_pairs)
    seen = {p.probe for p in probe_stats}
    # A probe that applied to no item has no rows, yet it was asked for: it is insufficient.
    for name in (n for n in by_name if n not in seen):
        probe_stats.append(ProbeStats(name, name, by_name[name].rubrics[0],
                                      by_name[name].direction, 0, [], [], False,
                                      reasons=["no pair: the probe applies to none of the items"]))
    margin = settings.margin
    outcomes = dimension_equivalence(stats, margin=margin, alpha=settings.significance)
    bias_severity = severity_of(stats, kinds)
    verdict = decide(stats, outcomes, probe_stats, degenerate_finding=degenerate(rows),
                     bias_severity=bias_severity, status=status, status_reason=status_reason,
                     judge=judge_label, margin=margin)
    severity = verdict.severity
    thr = settings.disparity_threshold
    pairs = {s.dimension: _pairs_json(s, thr) for s in stats}
    not_applicable = (extensions or {}).get("probe_not_applicable") or {}
    report: dict[str, Any] = {
        "audit_metadata": {
            "timestamp": timestamp or utcnow(), "num_dimensions": len(stats),
            "num_test_pairs_per_dimension": max((s.n_pairs for s in stats), default=0),
            "disparity_threshold": thr, "significance_threshold": settings.significance,
            "min_effect_size": settings.min_effect,
        },
        "dimension_results": [_dimension_json(s, pairs[s.dimension]) for s in stats],
        "overall_assessment": {"total_dimensions_flagged": sum(s.flagged for s in stats),
                               "severity": severity,
                               "summary": _summary(stats, probe_stats, verdict, status_reason,
                                                   status)},
        "remediation_steps": remediation_steps(
            stats, kinds, actions or {}, severity, probes=probe_stats,
            probe_actions={n: p.remediation for n, p in by_name.items() if p.remediation}),
        "extensions": {
            "status": status, "judge_id": None, "method": settings.method,
            "statistical_method": settings.statistical_method, "correction": settings.correction,
            "min_complete_pairs": settings.min_complete_pairs,
            "verdict": verdict.verdict, "verdict_sentence": verdict.sentence,
            "verdict_reasons": verdict.reasons, "bias_severity": bias_severity,
            "equivalence_margin": margin, "min_sensitivity": settings.min_sensitivity,
            "degenerate": degenerate(rows),
            # What `audit gate` checks against the policy's [certification] section.
            "settings": settings_record(
                settings, dimensions=[s.dimension for s in stats],
                probes=[*by_name, *(p.probe for p in probe_stats)],
                pairs_complete={s.dimension: len(s.complete) for s in stats},
                judge_spec=judge_spec),
            "dimensions": {s.dimension: _dimension_ext(s, pairs[s.dimension],
                                                       outcomes[s.dimension]) for s in stats},
            "probes": {p.key: probe_json(
                p, description=by_name[p.probe].description if p.probe in by_name else None,
                rule=by_name[p.probe].rule if p.probe in by_name else None,
                not_applicable=not_applicable.get(p.probe)) for p in probe_stats},
            **(extensions or {}),
        },
    }
    if status_reason:
        report["extensions"]["status_reason"] = status_reason
    problems = validate_report(report)
    if problems:
        raise ConfigError("the bias report does not validate against its schema: "
                          + "; ".join(problems[:5]), code="audit-report-invalid",
                          fix="this is a bug in legal-judge; please report it with the pairs file")
    return report
