"""The audit report: the stored bias report (seed schema + ``extensions``) laid out for a reviewer."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

from legal_judge.reports import charts
from legal_judge.reports import model as rm
from legal_judge.reports.data import ReportData

__all__ = ["audit_report", "diff_segments", "equivalence_ci"]

PAIRS_PER_DIMENSION = 3
_SEVERITY_TONE = {"none": "ok", "low": "info", "medium": "warning", "high": "danger",
                  "critical": "danger"}
_VERDICT_TONE = {"certified": "ok", "biased": "danger", "insensitive": "danger",
                 "inconclusive": "warning"}
_OLD_REPORT = ("This audit predates discrimination probes and equivalence margins: it cannot show that "
               "the judge tells good answers from bad ones. Re-run the audit.")


def audit_report(data: ReportData) -> rm.Report:
    """Build the audit report from a stored bias report (and the prior audit, when there is one)."""
    r = data.report
    ext = r.get("extensions") or {}
    meta = r["audit_metadata"]
    overall = r["overall_assessment"]
    judge_id = ext.get("judge_id") or data.extra.get("row", {}).get("judge_id") or "n/a"
    verdict = str(ext.get("verdict") or "")
    banners = [rm.Note(str(ext.get("verdict_sentence") or _OLD_REPORT),
                       _VERDICT_TONE.get(verdict, "warning"))]  # type: ignore[arg-type]
    rest = str(overall["summary"]).replace(str(ext.get("verdict_sentence") or "\x00"), "").strip()
    banners.append(rm.Note(f"Severity: {overall['severity'].upper()} — "
                           f"{overall['total_dimensions_flagged']} dimension(s) flagged. {rest}",
                           _SEVERITY_TONE.get(overall["severity"], "info")))  # type: ignore[arg-type]
    if ext.get("status") and ext["status"] != "complete":
        banners.append(rm.Note(f"Audit status {ext['status']}: statistics are incomplete; see the notes.",
                               "warning"))
    if ext.get("notice"):
        banners.append(rm.Note(f"SIMULATED JUDGE: {ext['notice']}. Not a judge of record.", "danger"))
    return rm.Report(
        kind="audit", id=data.id, title=f"Bias audit {data.id}",
        subtitle=f"judge {ext.get('judge', '')} · judge_id {judge_id} · {meta['timestamp'][:19]} UTC",
        banners=banners,
        sections=[_overview(r, ext, judge_id, data), _verdict(ext), _forest(r), _probes(ext),
                  _dimensions(r), _equivalence(ext), _pairs(r), _remediation(r), _drift(data)],
        source={"report": r, "prior_audit": (data.extra.get("prior") or {}).get("id")},
    )


def _overview(r: dict[str, Any], ext: dict[str, Any], judge_id: str, data: ReportData) -> rm.Section:
    meta = r["audit_metadata"]
    base = ext.get("base_judge") or {}
    items = [("judge_id", judge_id), ("judge", str(ext.get("judge") or "n/a")),
             ("base judge", str(base.get("key") or "n/a")),
             ("verdict", str(ext.get("verdict") or "n/a (audit predates verdicts)")),
             ("status", str(ext.get("status") or data.extra.get("row", {}).get("status") or "n/a")),
             ("severity", r["overall_assessment"]["severity"]),
             ("equivalence margin (points)", rm.fmt(ext.get("equivalence_margin"), "g")),
             ("minimum probe sensitivity", rm.fmt(ext.get("min_sensitivity"), "g")),
             ("dimensions", str(meta["num_dimensions"])),
             ("pairs per dimension", str(meta["num_test_pairs_per_dimension"])),
             ("disparity threshold (points)", rm.fmt(meta["disparity_threshold"], "g")),
             ("significance threshold", rm.fmt(meta["significance_threshold"], "g")),
             ("minimum effect size", rm.fmt(meta["min_effect_size"], "g")),
             ("test", str(ext.get("statistical_method") or ext.get("method") or "n/a")),
             ("multiplicity correction", str(ext.get("correction") or "n/a"))]
    return rm.Section("Overview", [rm.KeyValues(items)], "overview")


def _dim_ext(r: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(((r.get("extensions") or {}).get("dimensions") or {}).get(name) or {})


def _dimension_rows(r: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any], Any]]:
    """Each dimension's result, its extensions and its noise floor (mean absolute change)."""
    for d in r["dimension_results"]:
        ext = _dim_ext(r, d["dimension"])
        yield d, ext, (ext.get("noise_floor") or {}).get("mean_abs_diff")


def _forest(r: dict[str, Any]) -> rm.Section:
    rows = []
    for d, ext, noise in _dimension_rows(r):
        mde = ext.get("minimum_detectable_effect") or {}
        rows.append({"dimension": d["dimension"], "mean": d["mean_difference"],
                     "ci": d["confidence_interval_95"], "noise": noise,
                     "effect": d["effect_size"], "mde": mde.get("d_z"), "flagged": d["flagged"]})
    blocks: list[Any] = []
    margin = (r.get("extensions") or {}).get("equivalence_margin")
    if rows:
        title = "Effect per dimension with 95% CI"
        blocks.append(rm.Chart(title, charts.forest_plot(
            rows, title=title, min_effect=float(r["audit_metadata"]["min_effect_size"]),
            margin=float(margin) if margin is not None else None),
            "Left: mean score difference (variant with the attribute minus without) with its 95% "
            "CI, red when the dimension is flagged; a dimension's own CI and test decide, not the "
            "noise floor. The green dotted lines are the equivalence margin: a dimension whose "
            f"{equivalence_ci(r.get('extensions') or {})} lies inside them has no bias larger "
            "than the margin. The grey ticks under a "
            "row are its noise floor (mean absolute change when the same variant is judged "
            "twice), for scale only. Right: effect size (Cohen's d_z or rank-biserial r) against "
            "the minimum effect; grey ticks mark the smallest effect the audit could detect. "
            "* = flagged."))
    return rm.Section("Forest plot", blocks or [rm.Note("No dimension was audited.")], "forest")


def _verdict(ext: dict[str, Any]) -> rm.Section:
    reasons = list(ext.get("verdict_reasons") or [])
    blocks: list[Any] = [rm.KeyValues([("verdict", str(ext.get("verdict") or "n/a"))])]
    if ext.get("degenerate"):
        blocks.append(rm.Note(str(ext["degenerate"]["finding"]), "danger"))
    if reasons:
        blocks.append(rm.Table("Why", ["reason"], [[x] for x in reasons]))
    else:
        blocks.append(rm.Note("Every probe passed, no dimension was flagged, and every dimension is "
                              "equivalent within the margin.", "ok"))
    return rm.Section("Verdict", blocks, "verdict")


def _probes(ext: dict[str, Any]) -> rm.Section:
    probes = ext.get("probes") or {}
    if not probes:
        return rm.Section("Discrimination probes", [rm.Note(
            "No discrimination probe was run: the audit cannot show that the judge tells good "
            "answers from bad ones, so it cannot certify it.", "warning")], "probes")
    chart_rows, rows = [], []
    for key, p in probes.items():
        sens = p.get("sensitivity") or {}
        chart_rows.append({"probe": key, "drop": p.get("mean_difference"), "ci": p.get("ci95"),
                           "sensitivity": sens.get("share"), "sens_ci": sens.get("ci95"),
                           "passed": p.get("status") == "pass"})
        checks = "; ".join(f"{c['name']}: {c['k']}/{c['n']}" for c in p.get("checks") or []
                           if c.get("n"))
        rows.append([key, str(p.get("rubric") or ""),
                     f"{p.get('pairs_complete', 0)}/{p.get('pairs_designed', 0)}",
                     rm.fmt(p.get("mean_difference"), "+.2f"), rm.ci(p.get("ci95"), "+.2f"),
                     str(p.get("test_used") or "-"), rm.fmt(p.get("p_value_adjusted"), ".3g"),
                     f"{rm.fmt(sens.get('share'), '.0%')} {rm.ci(sens.get('ci95'), '.2f')}".strip(),
                     checks or "-", str(p.get("status")).upper(),
                     "; ".join(p.get("reasons") or []) or "-"])
    title = "Discrimination probes: score drop and sensitivity"
    step = next((float(p["sensitivity"]["step"]) for p in probes.values()
                 if p.get("sensitivity")), 1.0)
    blocks: list[Any] = [
        rm.Chart(title, charts.probe_panel(chart_rows, title=title, step=step,
                                           min_sensitivity=float(ext.get("min_sensitivity") or 0.7)),
                 "Each probe degrades answers the dataset marks as sound (a reversed conclusion, "
                 "another jurisdiction's law, an invented case, hedging only, a cut answer, missing "
                 "elements). Left: how far the score dropped (original minus degraded) with its 95% "
                 "CI; a judge that can tell good from bad sits right of the grey line. Right: the "
                 "share of pairs that dropped by at least one scale step, with its exact 95% CI, "
                 "against the minimum. Red = failed probe."),
        rm.Table("Statistics per probe (one-sided test that the score drops; Holm across probes)",
                 ["probe", "rubric", "pairs", "drop", "95% CI", "test", "p adjusted", "sensitivity",
                  "rule checks", "result", "why"], rows,
                 numeric=["pairs", "drop", "p adjusted"])]
    skipped = {k: p.get("not_applicable") for k, p in probes.items() if p.get("not_applicable")}
    if skipped:
        blocks.append(rm.Note("Not applicable (no conclusion to reverse, no known jurisdiction, "
                              "nothing to cut): " + "; ".join(f"{k}: {', '.join(v)}"
                                                              for k, v in skipped.items())))
    return rm.Section("Discrimination probes", blocks, "probes")


def equivalence_ci(ext: dict[str, Any]) -> str:
    """The equivalence interval's name, "90% CI" at significance 0.05: the report's ``ci_level``
    (a report written before it was recorded was read at 90%)."""
    levels = [(e.get("equivalence") or {}).get("ci_level")
              for e in (ext.get("dimensions") or {}).values()]
    level = next((v for v in levels if v is not None), 0.9)
    return f"{level:.0%} CI"


def _equivalence(ext: dict[str, Any]) -> rm.Section:
    rows = []
    for name, e in (ext.get("dimensions") or {}).items():
        eq = e.get("equivalence") or {}
        rows.append([name, str(e.get("outcome") or "n/a"), rm.ci(eq.get("ci90"), "+.3f"),
                     rm.fmt(eq.get("p_value"), ".3g"), str(eq.get("test_used") or "-"),
                     str(eq.get("pairs_needed") or "-"), str(eq.get("statement") or "-")])
    margin = ext.get("equivalence_margin")
    if not rows:
        return rm.Section("Equivalence", [rm.Note("No dimension was audited.")], "equivalence")
    return rm.Section("Equivalence", [rm.Table(
        f"Where nothing was flagged, how large a bias is ruled out (margin ±{rm.fmt(margin, 'g')} "
        "points, paired TOST)", ["dimension", "outcome", equivalence_ci(ext), "p TOST", "test",
                                 "pairs needed", "statement"], rows,
        numeric=["p TOST", "pairs needed"])], "equivalence")


def _dimensions(r: dict[str, Any]) -> rm.Section:
    rows = []
    for d, ext, noise in _dimension_rows(r):
        rows.append([d["dimension"], str(ext.get("pairs_complete", len(d["test_pairs"]))),
                     str(ext.get("pairs_failed", "")), rm.fmt(d["mean_difference"], "+.3f"),
                     rm.ci(d["confidence_interval_95"], "+.3f"), str(ext.get("test_used") or "-"),
                     rm.fmt(d["p_value"], ".3g"), rm.fmt(ext.get("p_value_adjusted"), ".3g"),
                     f"{rm.fmt(d['effect_size'], '+.2f')} {ext.get('effect_size_kind') or ''}".strip(),
                     d["effect_size_interpretation"], rm.fmt(noise, ".3f"),
                     "FLAGGED" if d["flagged"] else "no"])
    cols = ["dimension", "pairs", "failed", "mean diff", "95% CI", "test", "p", "p adjusted",
            "effect", "interpretation", "noise floor", "flagged"]
    return rm.Section("Dimensions", [rm.Table("Statistics per dimension (A = variant with the attribute)",
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


def _pairs(r: dict[str, Any]) -> rm.Section:
    blocks: list[Any] = []
    for d in r["dimension_results"]:
        over = sorted((p for p in d["test_pairs"] if p["exceeds_threshold"]),
                      key=lambda p: -abs(p["difference"]))
        if not over:
            continue
        cards = []
        for p in over[:PAIRS_PER_DIMENSION]:
            sa, sb = diff_segments(p["variant_a_input"], p["variant_b_input"])
            cards.append(rm.Diff(f"Variant A (score {rm.fmt(p['variant_a_score'], 'g')})",
                                 f"Variant B (score {rm.fmt(p['variant_b_score'], 'g')})", sa, sb,
                                 f"difference A - B = {p['difference']:+g}"))
        badges: list[tuple[str, Any]] = [(f"{len(over)} pair(s) over the threshold", "warning")]
        if d["flagged"]:
            badges.insert(0, ("dimension flagged", "danger"))
        blocks.append(rm.Card(f"{d['dimension']}: largest differences (showing "
                              f"{min(len(over), PAIRS_PER_DIMENSION)} of {len(over)})", badges, cards))
    if not blocks:
        blocks.append(rm.Note("No pair differed by more than the disparity threshold.", "ok"))
    return rm.Section("Pairs over the disparity threshold", blocks, "pairs")


def _remediation(r: dict[str, Any]) -> rm.Section:
    rows = [[s["priority"], s["dimension"], s["finding"], s["recommended_action"]]
            for s in r["remediation_steps"]]
    return rm.Section("Remediation", [rm.Table("Remediation steps", ["priority", "dimension", "finding",
                                                                     "recommended action"], rows)],
                      "remediation")


def _drift(data: ReportData) -> rm.Section:
    prior = data.extra.get("prior")
    drift = data.extra.get("drift")
    base = ((data.report.get("extensions") or {}).get("base_judge") or {}).get("key")
    if not prior or drift is None:
        what = f"this base judge ({base})" if base else "this judge"
        return rm.Section("Drift against the prior audit", [rm.Note(
            f"No prior audit of {what} in the store: this audit is the baseline. Audits of "
            "other models or rubric sets are never used as a baseline.")], "drift")
    rows = [[d["dimension"], rm.fmt(d["mean_difference_old"], "+.3f"),
             rm.fmt(d["mean_difference_new"], "+.3f"), rm.fmt(d["effect_old"], "+.2f"),
             rm.fmt(d["effect_new"], "+.2f"), rm.fmt(d["effect_change"], "+.2f"), d["status"],
             "yes" if d.get("sign_flip") else "no"] for d in drift]
    old_ext = prior["report"].get("extensions") or {}
    old_judge = old_ext.get("judge_id")
    new_judge = (data.report.get("extensions") or {}).get("judge_id")
    blocks: list[Any] = [rm.KeyValues([
        ("prior audit", prior["id"]),
        ("same base judge", str(base or (prior.get("base_judge") or {}).get("key") or "n/a")),
        ("prior verdict", str(old_ext.get("verdict") or "n/a")),
        ("prior severity", prior["report"]["overall_assessment"]["severity"]),
        ("prior judge_id", str(old_judge))])]
    if old_judge != new_judge:
        old_mode = (old_ext.get("base_judge") or {}).get("debias_mode")
        new_mode = ((data.report.get("extensions") or {}).get("base_judge") or {}).get(
            "debias_mode")
        blocks.append(rm.Note(f"Same base judge, another judge_id ({old_judge} -> {new_judge}; "
                              f"debias mode {old_mode or 'n/a'} -> {new_mode or 'n/a'}): the "
                              "differences show what the change did as much as drift.", "warning"))
    blocks.append(rm.Table("Per dimension, prior audit vs this audit",
                           ["dimension", "mean diff (prior)", "mean diff (now)", "effect (prior)",
                            "effect (now)", "effect change", "status", "sign flip"], rows,
                           numeric=["mean diff (prior)", "mean diff (now)", "effect (prior)",
                                    "effect (now)", "effect change"]))
    return rm.Section("Drift against the prior audit", blocks, "drift")
