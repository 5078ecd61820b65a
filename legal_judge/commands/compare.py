"""``legal-judge compare``: the paired comparison of two runs, and its regression gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from legal_judge.commands.ci_outputs import ci_options, write_ci_outputs
from legal_judge.commands.tables import Col, ci_cell, echo_json, print_table, styled
from legal_judge.errors import ConfigError, GateFailure
from legal_judge.store import Store

__all__ = ["COMMANDS", "compare_cmd"]

console = Console()
err_console = Console(stderr=True)


@click.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--threshold", default=0.25, show_default=True,
              help="A rubric regresses when it drops significantly by more than this (points).")
@click.option("--alpha", default=0.05, show_default=True,
              help="Significance level (Holm-adjusted across the rubrics compared).")
@click.option("--min-items", default=20, show_default=True,
              help="Fewer paired items than this: the rubric is 'insufficient', not tested.")
@click.option("--corrected", is_flag=True,
              help="Compare the judge-error-corrected figures of both runs (lawyer labels or a "
                   "calibration of the same judge); refused when a run has no correction.")
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when a regression is found.")
@click.option("--json", "as_json", is_flag=True)
@ci_options
def compare_cmd(run_a: str, run_b: str, threshold: float, alpha: float, min_items: int,
                corrected: bool, fail_on_regression: bool, as_json: bool, junit: Path | None,
                summary_md: Path | None) -> None:
    """Paired comparison of two runs on the same items (RUN_B against baseline RUN_A).

    Compares the judges' raw scores of both runs by default (a run scored with --calibration
    keeps its raw scores, and those are compared).
    """
    from legal_judge.benchmark.compare import compare_runs
    from legal_judge.reports.ci import compare_suite

    if min_items < 2:
        raise ConfigError(f"--min-items {min_items}: a paired test needs at least 2 items",
                          code="compare-options", fix="use --min-items 20 (the default)")
    report = compare_runs(Store(), run_a, run_b, threshold=threshold, alpha=alpha,
                          min_items=min_items, corrected=corrected)
    if as_json:
        echo_json(report)
    else:
        _print_compare(report)
    # With --json, stdout is the JSON alone: the "wrote ..." lines go to stderr.
    write_ci_outputs(err_console if as_json else console,
                     lambda: compare_suite(report, alpha=alpha), junit=junit, summary_md=summary_md)
    if fail_on_regression and report["regressions"]:
        raise GateFailure(f"{len(report['regressions'])} figure(s) regressed: "
                          + ", ".join(report["regressions"]),
                          fix="inspect the regressed items listed above before releasing")
    if fail_on_regression and report["rubrics"] and len(report["insufficient"]) == len(
            report["rubrics"]):
        raise GateFailure("the gate cannot tell: every rubric has too few paired items "
                          f"(fewer than {min_items})",
                          fix="compare runs over at least --min-items common scored items")


def _print_compare(report: dict[str, Any]) -> None:
    for w in report["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {w}")
    console.print(f"compares {report['compared_note']}", markup=False, highlight=False)
    for note in report.get("notes", []):
        console.print(f"  note: {note}", markup=False, highlight=False)
    if report["compared"] == "corrected":
        _print_compare_corrected(report)
        return
    print_table(console, f"{report['run_b']} vs {report['run_a']} ({report['n_items']} paired "
                         "items; p Holm-adjusted)",
                [Col("rubric", keep=True), Col("n", numeric=True),
                 Col("mean diff (B-A)", numeric=True), Col("95% CI"),
                 Col("p adj", numeric=True), Col("status", keep=True)],
                [[rubric, str(r["n"]), f"{r['mean_difference']:+.3f}",
                  ci_cell(r["ci95"], "+.3f", ".."),
                  "—" if r["p_adjusted"] is None else f"{r['p_adjusted']:.4f}",
                  _status_cell(r["status"])]
                 for rubric, r in report["rubrics"].items()])
    for rubric, r in report["rubrics"].items():
        if r.get("reason"):
            console.print(f"  {rubric}: insufficient: {r['reason']}", markup=False,
                          highlight=False)
        if r["regressed_items"]:
            shown = r["regressed_items"][:10]
            console.print(f"  {rubric} regressed on {len(r['regressed_items'])} item(s): "
                          + ", ".join(f"{d['item_id']} {d['before']:.2f}->{d['after']:.2f}"
                                      for d in shown)
                          + (" ..." if len(r["regressed_items"]) > len(shown) else ""),
                          markup=False, highlight=False)
    pf = report["pass_rate"]
    verdict = {"regression": ": REGRESSION (a significant drop)",
               "insufficient": f": insufficient (fewer than {report['min_items']} items)"}
    console.print(f"pass rate {pf['rate_a']:.1%} -> {pf['rate_b']:.1%} (McNemar exact p = "
                  f"{pf['p_value']:.4f}){verdict.get(pf.get('status', ''), '')}",
                  markup=False, highlight=False)
    if report["regressed_items"]:
        console.print("items passed before and failed after: "
                      + ", ".join(report["regressed_items"][:30]), markup=False, highlight=False)


_STATUS_STYLE = {"regression": ("REGRESSION", "red"), "improved": ("improved", "green"),
                 "insufficient": ("insufficient", "yellow")}


def _status_cell(status: str) -> Any:
    text, style = _STATUS_STYLE.get(status, (status, ""))
    return styled(text, style) if style else text


def _print_compare_corrected(report: dict[str, Any]) -> None:
    rows = ([("pass_rate", report["corrected_pass_rate"])] if report["corrected_pass_rate"]
            else []) + list(report["rubrics"].items())
    table = []
    for name, r in rows:
        spec = ".1%" if name == "pass_rate" else ".2f"
        diff = ("—" if r["mean_difference"] is None else
                f"{r['mean_difference']:+{spec}} [{r['ci95'][0]:+{spec}}, {r['ci95'][1]:+{spec}}]")
        table.append([name, "—" if r["a"] is None else format(r["a"], spec),
                      "—" if r["b"] is None else format(r["b"], spec), diff,
                      "—" if r["p_adjusted"] is None else f"{r['p_adjusted']:.4f}",
                      _status_cell(r["status"])])
    print_table(console, f"{report['run_b']} vs {report['run_a']}: corrected for judge error "
                         "(p Holm-adjusted)",
                [Col("figure", keep=True), Col("A", numeric=True), Col("B", numeric=True),
                 Col("B-A [95% CI]", keep=True), Col("p adj", numeric=True),
                 Col("status", keep=True)], table)
    for name, r in rows:
        if r.get("reason"):
            console.print(f"  {name}: {r['reason']}", markup=False, highlight=False)


COMMANDS: list[click.Command] = [compare_cmd]
