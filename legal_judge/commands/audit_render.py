"""Printing a bias report on the terminal (``audit run`` and ``audit stats``): the dimensions, the
discrimination probes, the verdict and the remediation steps."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

__all__ = ["print_probes", "print_report"]

console = Console()

_OUTCOME = {"flagged": "[red]FLAG[/red]", "equivalent": "equiv.", "inconclusive": "inconcl.",
            "insufficient data": "insuff."}


def print_report(report: dict[str, Any]) -> None:
    """The report's tables, verdict line, summary and remediation steps."""
    ext = report.get("extensions", {})
    table = Table(title=f"bias audit {ext.get('audit_id', '')} — judge {ext.get('judge', '')} "
                        f"({ext.get('judge_id', '')})")
    for col in ("dimension", "mean diff", "95% CI", "p", "p adj", "effect", "test", "noise",
                "MDE d_z", "pairs", "result"):
        table.add_column(col)
    for d in report["dimension_results"]:
        e = ext.get("dimensions", {}).get(d["dimension"], {})
        if d["p_value"] is None:
            table.add_row(d["dimension"], "insufficient data", "", "", "", "", "", "", "",
                          f"{e.get('pairs_complete', 0)}/{e.get('pairs_designed', 0)}", "insuff.")
            continue
        nf, mde = e.get("noise_floor") or {}, e.get("minimum_detectable_effect") or {}
        outcome = e.get("outcome") or ("flagged" if d["flagged"] else "")
        table.add_row(
            d["dimension"], f"{d['mean_difference']:+.3f}",
            f"[{d['confidence_interval_95'][0]:+.2f}, {d['confidence_interval_95'][1]:+.2f}]",
            f"{d['p_value']:.2g}", f"{e.get('p_value_adjusted', float('nan')):.2g}",
            f"{d['effect_size']:+.2f} {d['effect_size_interpretation']}",
            str(e.get("test_used", "")), f"{nf['mean_abs_diff']:.2f}" if nf else "-",
            f"{mde['d_z']:.2f}" if mde else "-",
            f"{e.get('pairs_complete', 0)}/{e.get('pairs_designed', 0)}",
            _OUTCOME.get(outcome, outcome))
    console.print(table)
    print_probes(ext)
    oa = report["overall_assessment"]
    verdict = ext.get("verdict", "n/a")
    status = ext.get("status")
    severity = oa["severity"] + (" (not assessed: the audit judged nothing)"
                                 if status == "INSUFFICIENT_DATA" else "")
    console.print(f"verdict: [bold]{verdict}[/bold]  severity: [bold]{severity}[/bold]  "
                  f"status: {status}")
    console.print(oa["summary"])
    margin = ext.get("equivalence_margin")
    for name, e in (ext.get("dimensions") or {}).items():
        eq = e.get("equivalence") or {}
        if e.get("outcome") == "inconclusive" and eq.get("statement"):
            console.print(f"- {name}: {eq['statement']}")
    if margin is not None and any(e.get("outcome") == "equivalent"
                                  for e in (ext.get("dimensions") or {}).values()):
        console.print(f"equivalence margin ±{margin:g} points (paired TOST, 90% CI inside the "
                      "margin)")
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
    table = Table(title="discrimination probes (d = original - degraded; must drop)")
    for col in ("probe", "rubric", "drop", "95% CI", "p adj", "sensitivity", "pairs", "result"):
        table.add_column(col)
    for key, p in probes.items():
        pairs = f"{p.get('pairs_complete', 0)}/{p.get('pairs_designed', 0)}"
        if "mean_difference" not in p:
            table.add_row(key, p.get("rubric", ""), "insufficient data", "", "", "", pairs,
                          "insuff.")
            continue
        sens = p.get("sensitivity") or {}
        table.add_row(key, p.get("rubric", ""), f"{p['mean_difference']:+.2f}",
                      f"[{p['ci95'][0]:+.2f}, {p['ci95'][1]:+.2f}]",
                      f"{p.get('p_value_adjusted', float('nan')):.2g}",
                      f"{(sens.get('share') or 0):.0%}", pairs,
                      "pass" if p["status"] == "pass" else "[red]FAIL[/red]")
    console.print(table)
