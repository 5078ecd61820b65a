"""Printing a run's summary on the terminal (``run``, ``demo``, ``runs show``): the pass rate, the
per-rubric and per-judge tables, the corrected and calibrated figures, the calls, cache and cost."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from legal_judge.commands.tables import Col, ci_cell, print_table
from legal_judge.config import store_path

__all__ = ["print_summary"]

console = Console()


def _selection_line(run: dict[str, Any]) -> str | None:
    sel = (run.get("config") or {}).get("selection")
    if not sel:
        return None
    strata = sel.get("strata")
    by = (" stratified by jurisdiction: " + ", ".join(f"{k} {v}" for k, v in strata.items())
          if strata else "")
    return (f"items: {sel['selected']} of {sel['of']} ({sel['options']}){by}. A partial run: a "
            "later run of the same items with the same judges reuses these verdicts.")


def _cache_line(s: dict[str, Any]) -> str:
    verdicts = sum(j["ok"] + j["inconclusive"] + j["error"] for j in s["judges"].values())
    reused = f"{s.get('cached_verdicts', 0)} of {verdicts} judge verdicts"
    if s.get("cached_items") is None:  # a summary stored before items were counted
        return f"reused from the cache: {reused}"
    line = f"reused from the cache: {s['cached_items']} of {s['items']} items ({reused})"
    return line + (", not paid again" if s.get("cached_verdicts") else "")


def print_summary(run: dict[str, Any]) -> None:
    """Render a run summary for a team lead."""
    s = run["summary"]
    if s is None:
        console.print(f"run {run['id']}: {run['status']} (no summary)", soft_wrap=True)
        return
    console.print(f"\n[bold]Run {run['id']}[/bold] — {run['status']}", soft_wrap=True)
    if s.get("simulated"):
        console.print("[yellow]Scored by SIMULATED judges (demo only, never a judge of record).[/yellow]")
    selection = _selection_line(run)
    if selection:
        console.print(selection, markup=False, highlight=False)
    pr = s["pass_rate"]
    ci = s["pass_rate_ci95"]
    console.print(f"pass rate: {pr:.1%} (95% CI {ci[0]:.1%}–{ci[1]:.1%}) over {s['scored']} scored items"
                  + (" (the judges' raw figure)" if s.get("corrected") else "")
                  if pr is not None else "pass rate: n/a (nothing scored)")
    _print_corrected(s.get("corrected"))
    cal = s.get("calibrated")
    raw_means = (cal or {}).get("raw_rubrics", {})
    title = "Ensemble scores per rubric (0–5)" + (
        f", CALIBRATED with {cal['correction_id']} (isotonic); raw = the judges' own"
        if cal else "")
    cols = [Col("rubric", keep=True), Col("n", numeric=True),
            Col("calibrated mean" if cal else "mean", numeric=True), Col("95% CI"),
            *([Col("raw mean", numeric=True, keep=True)] if cal else []),
            Col("Krippendorff α (judges)", numeric=True)]
    rows = []
    for rubric, m in s["rubrics"].items():
        alpha = s["krippendorff_alpha"].get(rubric)
        raw = raw_means.get(rubric)
        rows.append([rubric, str(m["n"]), f"{m['mean']:.2f}",
                     ci_cell(m["ci95"], ".2f", "–"),
                     *([f"{raw['mean']:.2f}" if raw else "n/a"] if cal else []),
                     "n/a" if alpha is None else f"{alpha:.2f}"])
    print_table(console, title, cols, rows)
    print_table(console, "Per judge",
                [Col("judge", keep=True), Col("judge_id", keep=True), Col("ok", numeric=True),
                 Col("inconclusive", numeric=True), Col("error", numeric=True),
                 Col("pass rate", numeric=True), Col("cost", numeric=True, optional=True)],
                [[name, j["judge_id"], str(j["ok"]), str(j["inconclusive"]), str(j["error"]),
                  "n/a" if j["pass_rate"] is None else f"{j['pass_rate']:.1%}",
                  f"${j['cost_usd']:.4f}" + (" +unknown" if j["cost_unknown"] else "")]
                 for name, j in s["judges"].items()])
    console.print(f"inconclusive items: {len(s['inconclusive'])}  flagged for human review: "
                  f"{len(s['flagged_for_review'])}  items with rule overrides (`legal-judge "
                  f"rules`): {len(s['citation_overrides'])}")
    exp = s.get("expected_agreement")
    if exp:
        console.print(f"agreement with the lawyers' conclusions in the dataset: {exp['agree']}/{exp['n']} "
                      f"({exp['rate']:.0%}); passed but should fail: {exp['false_pass']}; "
                      f"failed but should pass: {exp['false_fail']}")
    calls = s["calls"]
    console.print(f"provider calls: {calls['calls']} (cached {calls['cached']}, failed "
                  f"{calls['failed']}, retries {calls['retries']})")
    console.print(_cache_line(s), soft_wrap=True)
    console.print(f"tokens: {s['input_tokens']:,} in / "
                  f"{s['output_tokens']:,} out  cost: ${s['cost_usd']:.4f}"
                  + ("" if s["cost_complete"] else " (some prices unknown)")
                  + (" (this run's calls only)" if s.get("cached_verdicts") else ""))
    console.print(f"store: {store_path()}", soft_wrap=True, highlight=False, markup=False)
    for w in s.get("warnings", [])[:10]:
        console.print(f"[yellow]warning:[/yellow] {w}")


def _print_corrected(est: dict[str, Any] | None) -> None:
    """The judge-error-corrected pass rate and means beside the raw ones (calibrate estimate)."""
    if not est:
        return
    pr = est["pass_rate"]
    if pr["status"] == "corrected":
        lo, hi = pr["corrected_ci95"]
        console.print(f"pass rate corrected for judge error: {pr['corrected']:.1%} (95% CI "
                      f"{lo:.1%}–{hi:.1%}; {pr['method']}, {pr['n_labelled']} lawyer labels)")
    else:
        console.print(f"pass rate corrected for judge error: {pr['status']} ({pr['reason']})")
    means = [f"{name} {r['raw']:.2f} -> {r['corrected']:.2f}" for name, r in
             est["rubrics"].items() if r["status"] == "corrected" and r["raw"] is not None]
    if means:
        console.print("rubric means, raw -> corrected: " + ", ".join(means))
    console.print(f"  ({est['label']}; details: legal-judge calibrate estimate {est['run_id']})")
