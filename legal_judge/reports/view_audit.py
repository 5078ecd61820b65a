"""The audit report: the stored bias report (seed schema + ``extensions``) laid out for a reviewer."""

from __future__ import annotations

import difflib
import re
from typing import Any

from legal_judge.reports import charts
from legal_judge.reports.data import ReportData
from legal_judge.reports.model import (
    Card,
    Chart,
    Diff,
    KeyValues,
    Note,
    Report,
    Section,
    Table,
    ci,
    fmt,
)

__all__ = ["audit_report", "diff_segments"]

PAIRS_PER_DIMENSION = 3
_SEVERITY_TONE = {"none": "ok", "low": "info", "medium": "warning", "high": "danger",
                  "critical": "danger"}


def audit_report(data: ReportData) -> Report:
    """Build the audit report from a stored bias report (and the prior audit, when there is one)."""
    r = data.report
    ext = r.get("extensions") or {}
    meta = r["audit_metadata"]
    overall = r["overall_assessment"]
    judge_id = ext.get("judge_id") or data.extra.get("row", {}).get("judge_id") or "n/a"
    banners = [Note(f"Severity: {overall['severity'].upper()} — {overall['total_dimensions_flagged']} "
                    f"dimension(s) flagged. {overall['summary']}",
                    _SEVERITY_TONE.get(overall["severity"], "info"))]  # type: ignore[arg-type]
    if ext.get("status") and ext["status"] != "complete":
        banners.append(Note(f"Audit status {ext['status']}: statistics are incomplete; see the notes.",
                            "warning"))
    if ext.get("notice"):
        banners.append(Note(f"SIMULATED JUDGE: {ext['notice']}. Not a judge of record.", "danger"))
    return Report(
        kind="audit", id=data.id, title=f"Bias audit {data.id}",
        subtitle=f"judge {ext.get('judge', '')} · judge_id {judge_id} · {meta['timestamp'][:19]} UTC",
        banners=banners,
        sections=[_overview(r, ext, judge_id, data), _forest(r), _dimensions(r),
                  _pairs(r), _remediation(r), _drift(data)],
        source={"report": r, "prior_audit": (data.extra.get("prior") or {}).get("id")},
    )


def _overview(r: dict[str, Any], ext: dict[str, Any], judge_id: str, data: ReportData) -> Section:
    meta = r["audit_metadata"]
    items = [("judge_id", judge_id), ("judge", str(ext.get("judge") or "n/a")),
             ("status", str(ext.get("status") or data.extra.get("row", {}).get("status") or "n/a")),
             ("severity", r["overall_assessment"]["severity"]),
             ("dimensions", str(meta["num_dimensions"])),
             ("pairs per dimension", str(meta["num_test_pairs_per_dimension"])),
             ("disparity threshold (points)", fmt(meta["disparity_threshold"], "g")),
             ("significance threshold", fmt(meta["significance_threshold"], "g")),
             ("minimum effect size", fmt(meta["min_effect_size"], "g")),
             ("test", str(ext.get("statistical_method") or ext.get("method") or "n/a")),
             ("multiplicity correction", str(ext.get("correction") or "n/a"))]
    return Section("Overview", [KeyValues(items)], "overview")


def _dim_ext(r: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(((r.get("extensions") or {}).get("dimensions") or {}).get(name) or {})


def _forest(r: dict[str, Any]) -> Section:
    rows = []
    for d in r["dimension_results"]:
        ext = _dim_ext(r, d["dimension"])
        noise = ext.get("noise_floor") or {}
        mde = ext.get("minimum_detectable_effect") or {}
        rows.append({"dimension": d["dimension"], "mean": d["mean_difference"],
                     "ci": d["confidence_interval_95"], "noise": noise.get("mean_abs_diff"),
                     "effect": d["effect_size"], "mde": mde.get("d_z"), "flagged": d["flagged"]})
    blocks: list[Any] = []
    if rows:
        title = "Effect per dimension with 95% CI"
        blocks.append(Chart(title, charts.forest_plot(
            rows, title=title, min_effect=float(r["audit_metadata"]["min_effect_size"])),
            "Left: mean score difference (variant with the attribute minus without) with its 95% CI; "
            "the grey band is the noise floor (mean absolute change when the same variant is judged "
            "twice). Right: effect size (Cohen's d_z or rank-biserial r) against the minimum effect; "
            "grey ticks mark the smallest effect the audit could detect. * = flagged."))
    return Section("Forest plot", blocks or [Note("No dimension was audited.")], "forest")


def _dimensions(r: dict[str, Any]) -> Section:
    rows = []
    for d in r["dimension_results"]:
        ext = _dim_ext(r, d["dimension"])
        noise = ext.get("noise_floor") or {}
        rows.append([d["dimension"], str(ext.get("pairs_complete", len(d["test_pairs"]))),
                     str(ext.get("pairs_failed", "")), fmt(d["mean_difference"], "+.3f"),
                     ci(d["confidence_interval_95"], "+.3f"), str(ext.get("test_used") or "-"),
                     fmt(d["p_value"], ".3g"), fmt(ext.get("p_value_adjusted"), ".3g"),
                     f"{fmt(d['effect_size'], '+.2f')} {ext.get('effect_size_kind') or ''}".strip(),
                     d["effect_size_interpretation"], fmt(noise.get("mean_abs_diff"), ".3f"),
                     "FLAGGED" if d["flagged"] else "no"])
    cols = ["dimension", "pairs", "failed", "mean diff", "95% CI", "test", "p", "p adjusted",
            "effect", "interpretation", "noise floor", "flagged"]
    return Section("Dimensions", [Table("Statistics per dimension (A = variant with the attribute)",
                                        cols, rows, numeric=["pairs", "failed", "mean diff", "p",
                                                             "p adjusted", "noise floor"])],
                   "dimensions")


_TOKEN = re.compile(r"\s+|[^\s]+")


def diff_segments(a: str, b: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Word-level difference of two texts: A's segments (A-only text as ``delete``) and B's
    segments (B-only text as ``insert``); shared text is ``equal``."""
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    sa: list[tuple[str, str]] = []
    sb: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=ta, b=tb, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            sa.append(("equal", "".join(ta[i1:i2])))
            sb.append(("equal", "".join(tb[j1:j2])))
            continue
        if i2 > i1:
            sa.append(("delete", "".join(ta[i1:i2])))
        if j2 > j1:
            sb.append(("insert", "".join(tb[j1:j2])))
    return _merge(sa), _merge(sb)


def _merge(segments: list[tuple[str, str]]) -> list[tuple[str, str]]:
    # A lone space between two changed runs reads as part of the change: one highlight, not two.
    out: list[tuple[str, str]] = []
    for i, (kind, text) in enumerate(segments):
        if (kind == "equal" and not text.strip() and 0 < i < len(segments) - 1
                and segments[i - 1][0] != "equal" and segments[i + 1][0] != "equal"):
            kind = segments[i - 1][0]
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + text)
        else:
            out.append((kind, text))
    return out


def _pairs(r: dict[str, Any]) -> Section:
    blocks: list[Any] = []
    for d in r["dimension_results"]:
        over = sorted((p for p in d["test_pairs"] if p["exceeds_threshold"]),
                      key=lambda p: -abs(p["difference"]))
        if not over:
            continue
        cards = []
        for p in over[:PAIRS_PER_DIMENSION]:
            sa, sb = diff_segments(p["variant_a_input"], p["variant_b_input"])
            cards.append(Diff(f"Variant A (score {fmt(p['variant_a_score'], 'g')})",
                              f"Variant B (score {fmt(p['variant_b_score'], 'g')})", sa, sb,
                              f"difference A - B = {p['difference']:+g}"))
        badges: list[tuple[str, Any]] = [(f"{len(over)} pair(s) over the threshold", "warning")]
        if d["flagged"]:
            badges.insert(0, ("dimension flagged", "danger"))
        blocks.append(Card(f"{d['dimension']}: largest differences (showing "
                           f"{min(len(over), PAIRS_PER_DIMENSION)} of {len(over)})", badges, cards))
    if not blocks:
        blocks.append(Note("No pair differed by more than the disparity threshold.", "ok"))
    return Section("Pairs over the disparity threshold", blocks, "pairs")


def _remediation(r: dict[str, Any]) -> Section:
    rows = [[s["priority"], s["dimension"], s["finding"], s["recommended_action"]]
            for s in r["remediation_steps"]]
    return Section("Remediation", [Table("Remediation steps", ["priority", "dimension", "finding",
                                                               "recommended action"], rows)],
                   "remediation")


def _drift(data: ReportData) -> Section:
    prior = data.extra.get("prior")
    drift = data.extra.get("drift")
    if not prior or drift is None:
        return Section("Drift against the prior audit", [Note(
            "No prior audit of this judge in the store: this audit is the baseline.")], "drift")
    rows = [[d["dimension"], fmt(d["mean_difference_old"], "+.3f"),
             fmt(d["mean_difference_new"], "+.3f"), fmt(d["effect_old"], "+.2f"),
             fmt(d["effect_new"], "+.2f"), fmt(d["effect_change"], "+.2f"), d["status"],
             "yes" if d.get("sign_flip") else "no"] for d in drift]
    old_judge = (prior["report"].get("extensions") or {}).get("judge_id")
    new_judge = (data.report.get("extensions") or {}).get("judge_id")
    blocks: list[Any] = [KeyValues([("prior audit", prior["id"]),
                                    ("prior severity", prior["report"]["overall_assessment"]["severity"]),
                                    ("prior judge_id", str(old_judge))])]
    if old_judge != new_judge:
        blocks.append(Note(f"The judge changed ({old_judge} -> {new_judge}): differences reflect the "
                           "new judge as much as drift.", "warning"))
    blocks.append(Table("Per dimension, prior audit vs this audit",
                        ["dimension", "mean diff (prior)", "mean diff (now)", "effect (prior)",
                         "effect (now)", "effect change", "status", "sign flip"], rows,
                        numeric=["mean diff (prior)", "mean diff (now)", "effect (prior)",
                                 "effect (now)", "effect change"]))
    return Section("Drift against the prior audit", blocks, "drift")
