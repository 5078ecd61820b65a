"""Printing a bias report on the terminal (``audit run`` and ``audit stats``): the dimensions, the
discrimination probes, the verdict and the remediation steps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from legal_judge.commands.tables import Cell, Col, print_table, styled, wrote
from legal_judge.reports.view_audit import equivalence_ci

__all__ = ["print_outcomes", "print_probes", "print_report", "write_report_json"]

console = Console()


def write_report_json(report: dict[str, Any], out: Path | None) -> None:
    """Write an audit's (or a traffic audit's) report as JSON to ``out`` (``--out``), and say so."""
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
        wrote(console, out, what="report JSON")

_OUTCOME: dict[str, Cell] = {"flagged": styled("FLAG", "red"), "equivalent": "equiv.",
                             "inconclusive": "inconcl.", "insufficient data": "insuff."}

_REPORT_COLS = [Col("dimension", keep=True), Col("mean diff", numeric=True), Col("95% CI"),
                Col("p", numeric=True, optional=True), Col("p adj", numeric=True),
                Col("effect"), Col("test", optional=True),
                Col("noise", numeric=True, optional=True),
                Col("MDE d_z", numeric=True, optional=True), Col("pairs", keep=True),
                Col("result", keep=True)]

# At 80 columns the rubric gives way first (the verdict sentence names what failed).
_PROBE_COLS = [Col("probe", keep=True), Col("rubric", optional=True), Col("drop", numeric=True),
               Col("95% CI"), Col("p adj", numeric=True), Col("sens.", numeric=True),
               Col("pairs", keep=True), Col("result", keep=True)]


def _dimension_row(d: dict[str, Any], e: dict[str, Any]) -> list[Cell]:
    pairs = f"{e.get('pairs_complete', 0)}/{e.get('pairs_designed', 0)}"
    if d["p_value"] is None:
        return [d["dimension"], "insufficient data", "", "", "", "", "", "", "", pairs, "insuff."]
    nf, mde = e.get("noise_floor") or {}, e.get("minimum_detectable_effect") or {}
    outcome = e.get("outcome") or ("flagged" if d["flagged"] else "")
    return [d["dimension"], f"{d['mean_difference']:+.3f}",
            f"[{d['confidence_interval_95'][0]:+.2f}, {d['confidence_interval_95'][1]:+.2f}]",
            f"{d['p_value']:.2g}", f"{e.get('p_value_adjusted', float('nan')):.2g}",
            f"{d['effect_size']:+.2f} {d['effect_size_interpretation']}",
            str(e.get("test_used", "")), f"{nf['mean_abs_diff']:.2f}" if nf else "-",
            f"{mde['d_z']:.2f}" if mde else "-", pairs, _OUTCOME.get(outcome, outcome)]


def print_report(report: dict[str, Any]) -> None:
    """The report's tables, verdict line, summary and remediation steps."""
    ext = report.get("extensions", {})
    dims = ext.get("dimensions", {})
    title = (f"bias audit {ext['audit_id']} — judge {ext.get('judge')} ({ext.get('judge_id')})"
             if ext.get("audit_id") else "bias statistics of pairs scored elsewhere (no judge "
                                         "recorded, no audit log)")
    print_table(console, title, _REPORT_COLS,
                [_dimension_row(d, dims.get(d["dimension"], {}))
                 for d in report["dimension_results"]])
    print_probes(ext)
    oa = report["overall_assessment"]
    verdict = ext.get("verdict", "n/a")
    status = ext.get("status")
    severity = oa["severity"] + (" (not assessed: the audit judged nothing)"
                                 if status == "INSUFFICIENT_DATA" else "")
    console.print(f"verdict: [bold]{verdict}[/bold]  severity: [bold]{severity}[/bold]  "
                  f"status: {status}")
    console.print(oa["summary"], markup=False)
    margin = ext.get("equivalence_margin")
    for name, e in (ext.get("dimensions") or {}).items():
        eq = e.get("equivalence") or {}
        if e.get("outcome") == "inconclusive" and eq.get("statement"):
            console.print(f"- {name}: {eq['statement']}", markup=False)
    if margin is not None and any(e.get("outcome") == "equivalent"
                                  for e in (ext.get("dimensions") or {}).values()):
        console.print(f"equivalence margin ±{margin:g} points (paired TOST, {equivalence_ci(ext)} "
                      "inside the margin)")
    for step in report["remediation_steps"]:
        console.print(escape(f"- [{step['priority']}] {step['dimension']}: "
                             f"{step['recommended_action']}"))


def print_probes(ext: dict[str, Any]) -> None:
    """One row per probe: the drop with its CI, the adjusted p, the sensitivity, the result."""
    probes = ext.get("probes") or {}
    if not probes:
        console.print("no discrimination probe was run: the audit cannot show that the judge "
                      "tells good answers from bad ones")
        return
    rows: list[list[Cell]] = []
    for key, p in probes.items():
        pairs = f"{p.get('pairs_complete', 0)}/{p.get('pairs_designed', 0)}"
        if "mean_difference" not in p:
            rows.append([key, p.get("rubric", ""), "insufficient data", "", "", "", pairs,
                         "insuff."])
            continue
        sens = p.get("sensitivity") or {}
        rows.append([key, p.get("rubric", ""), f"{p['mean_difference']:+.2f}",
                     f"[{p['ci95'][0]:+.2f}, {p['ci95'][1]:+.2f}]",
                     f"{p.get('p_value_adjusted', float('nan')):.2g}",
                     f"{(sens.get('share') or 0):.0%}", pairs,
                     "pass" if p["status"] == "pass" else styled("FAIL", "red")])
    print_table(console, "discrimination probes (d = original - degraded; must drop)",
                _PROBE_COLS, rows)


def print_outcomes(outcomes: list[Any], files: list[Any]) -> None:
    """One row per judge audited by one ``audit run`` (an ensemble: every judge)."""
    rows: list[list[Cell]] = []
    for o, file in zip(outcomes, files, strict=True):
        ext = o.report.get("extensions") or {}
        severity = (o.report.get("overall_assessment") or {}).get("severity")
        rows.append([ext.get("judge") or o.judge_id, o.judge_id, o.audit_id, o.status,
                     ext.get("verdict") or "", severity or "", str(file) if file else ""])
    print_table(console, f"{len(outcomes)} judges audited, one audit each",
                [Col("judge"), Col("judge_id", optional=True), Col("audit", keep=True),
                 Col("status", optional=True), Col("verdict", keep=True),
                 Col("severity", keep=True), Col("report file", optional=True)], rows)
