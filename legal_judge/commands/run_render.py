"""Printing a run's summary on the terminal (``run``, ``demo``, ``runs show``): the pass rate, the
per-rubric and per-judge tables, the corrected and calibrated figures, the calls, cache and cost."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from legal_judge.commands.tables import Col, ci_cell, print_table
from legal_judge.config import store_address, store_setting
from legal_judge.run_owner import resume_command
from legal_judge.sync.plan_tags import RELEASE_KEY

if TYPE_CHECKING:
    from legal_judge.benchmark.run_gate import RunGate
    from legal_judge.policy import PolicyInForce

__all__ = ["print_run_gate", "print_summary", "run_document"]

console = Console()


def _selection_line(run: dict[str, Any]) -> str | None:
    sel = (run.get("config") or {}).get("selection")
    if not sel:
        return None
    strata = sel.get("strata")
    by = (" stratified by jurisdiction: " + ", ".join(f"{k} {v}" for k, v in strata.items())
          if strata else "")
    if sel["selected"] >= sel["of"]:
        # `--sample 500` of 57 items judges every item: a full run, not a partial one.
        return (f"items: all {sel['of']} ({sel['options']} covers every item): a full run.")
    return (f"items: {sel['selected']} of {sel['of']} ({sel['options']}){by}. A partial run: a "
            "later run of the same items with the same judges reuses these verdicts.")


def _cache_line(s: dict[str, Any]) -> str:
    verdicts = sum(j["ok"] + j["inconclusive"] + j["error"] for j in s["judges"].values())
    reused = f"{s.get('cached_verdicts', 0)} of {verdicts} judge verdicts"
    if s.get("cached_items") is None:  # a summary stored before items were counted
        return f"reused from the cache: {reused}"
    line = f"reused from the cache: {s['cached_items']} of {s['items']} items ({reused})"
    return line + (", not paid again" if s.get("cached_verdicts") else "")


def run_document(run: dict[str, Any], *, gate: RunGate | None = None,
                 policy: PolicyInForce | None = None, out: Path | None = None) -> dict[str, Any]:
    """``run --json`` / ``demo --json``: the stored run (as ``runs show --json``), its ``[run]``
    gate and the policy it applied (None when not gated: a demo, an unfinished run), the command
    that finishes it, the results file and the store: every figure :func:`print_summary` shows.
    """
    finished = run["status"] == "completed"
    # A completed run whose gate failed on a judge's failed calls is finished by a resume too.
    again = not finished or (gate is not None and gate.exit_code == 3)
    return {**run, "resume_command": resume_command(run) if again else None,
            "gate": gate.as_dict() if gate is not None else None,
            "policy": policy.as_dict("run") if policy is not None else None,
            "results_file": str(out) if out is not None and finished else None,
            "store": store_address()}


def print_run_gate(run: dict[str, Any], policy: PolicyInForce, *,
                   resumable: bool = False) -> RunGate | None:
    """The ``[run]`` gate of a completed run, printed with the policy it applied; None (the policy
    line alone) for a run that did not complete.

    One decision for every command that completes a run: ``run`` (and its last ``--shard``),
    ``runs finish`` and ``runs merge``; the caller exits with the gate's ``exit_code`` when it
    did not pass. A judge short of its coverage is named with why its calls failed (read from
    the store only then); for a run a resume finishes (``resumable``: ``run``), with the command
    that judges them again.
    """
    from legal_judge.commands.policy import print_policy

    gate = None
    if run["status"] == "completed":
        from legal_judge.benchmark.run_gate import judge_causes, run_gate

        gate = run_gate(run["summary"], policy.run)
        console.print(gate.line, style=None if gate.passed else "red", soft_wrap=True,
                      highlight=False, markup=False)
        causes = {}
        if gate.short:
            from legal_judge.store import Store

            with contextlib.closing(Store()) as store:
                causes = judge_causes(store, run["id"], gate)
        for note in gate.judge_notes(causes):
            console.print(f"  {note}", soft_wrap=True, highlight=False, markup=False)
        if resumable and gate.exit_code == 3:
            console.print(f"fix the cause (`legal-judge doctor --ping` checks every judge), then "
                          f"`{resume_command(run)}` judges the failed verdicts again (nothing "
                          "else is repeated)", soft_wrap=True, highlight=False, markup=False)
    print_policy(console, policy, "run")
    return gate


def print_summary(run: dict[str, Any]) -> None:
    """Render a run summary for a team lead."""
    s = run["summary"]
    if s is None:
        console.print(f"run {run['id']}: {run['status']} (no summary)", soft_wrap=True)
        return
    console.print(f"\n[bold]Run {run['id']}[/bold] — {run['status']}", soft_wrap=True)
    release = run["config"].get(RELEASE_KEY)  # `run --release`: the release this run judged
    if release:
        console.print(f"release: {release}", markup=False, highlight=False)
    failure = (s.get("failure") or {}).get("reason")
    if failure:
        console.print(f"[red]failed:[/red] {escape(failure)}", soft_wrap=True, highlight=False)
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
    _print_corrected(s.get("corrected"), s.get("correction_available"))
    _print_rubrics(s)
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
                  f"{calls['failed']}, retries {calls['retries']})"
                  + (" -- rate limits, server errors, timeouts and refused connections are "
                     "retried; --verbose shows each"
                     if calls["retries"] else ""))
    console.print(_cache_line(s), soft_wrap=True)
    console.print(f"tokens: {s['input_tokens']:,} in / "
                  f"{s['output_tokens']:,} out  cost: ${s['cost_usd']:.4f}"
                  + ("" if s["cost_complete"] else " (some prices unknown)")
                  + (" (this run's calls only)" if s.get("cached_verdicts") else ""))
    console.print(f"store: {store_setting().describe()}", soft_wrap=True, highlight=False, markup=False)
    for w in s.get("warnings", [])[:10]:
        console.print(f"[yellow]warning:[/yellow] {w}")


def _print_rubrics(s: dict[str, Any]) -> None:
    """The rubric table: the judges' raw mean and CI, then one corrected mean per rubric."""
    cal = s.get("calibrated")
    raw_means = (cal or {}).get("raw_rubrics") or s["rubrics"]
    means = s.get("corrected_means") or {}
    title = "Ensemble scores per rubric (0–5): the judges' raw mean" + (
        "; corrected: one mean per rubric, method below" if means else "")
    cols = [Col("rubric", keep=True), Col("n", numeric=True), Col("mean", numeric=True),
            Col("95% CI"),
            *([Col("corrected mean", numeric=True, keep=True), Col("corrected 95% CI")]
              if means else []),
            Col("Krippendorff α (judges)", numeric=True, optional=bool(means))]
    rows = []
    for rubric, m in s["rubrics"].items():
        alpha = s["krippendorff_alpha"].get(rubric)
        raw = raw_means.get(rubric) or m
        fixed = means.get(rubric)
        interval = "too few items" if raw.get("ci_note") else ci_cell(raw["ci95"], ".2f", "–")
        rows.append([rubric, str(raw["n"]), f"{raw['mean']:.2f}", interval,
                     *([f"{fixed['mean']:.2f}" if fixed else "—",
                        ci_cell(fixed["ci95"], ".2f", "–") if fixed else "—"] if means else []),
                     "n/a" if alpha is None else f"{alpha:.2f}"])
    print_table(console, title, cols, rows)
    notes = sorted({m["ci_note"] for m in raw_means.values() if m.get("ci_note")})
    for note in notes:
        console.print(f"  95% CI: {note}", markup=False, highlight=False)
    methods: dict[str, list[str]] = {}
    for rubric, fixed in means.items():
        methods.setdefault(fixed["method"], []).append(rubric)
    for method, names in methods.items():
        console.print(f"  corrected mean of {', '.join(names)}: {method}", markup=False,
                      highlight=False)
    if cal:
        console.print(f"  item scores CALIBRATED with {cal['correction_id']} (isotonic); the "
                      "mean column is the judges' own (raw mean)", markup=False,
                      highlight=False)
    if s.get("corrected_means_note"):
        console.print(f"  {s['corrected_means_note']}", markup=False, highlight=False)


def _print_corrected(est: dict[str, Any] | None, available: dict[str, Any] | None) -> None:
    """The pinned judge-error-corrected pass rate, what it rests on, newer calibrations and the
    policy's warnings (the means are in the rubric table)."""
    if not est:
        if available:
            console.print(available["text"], markup=False, highlight=False)
        return
    pr = est["pass_rate"]
    if pr["status"] == "corrected":
        lo, hi = pr["corrected_ci95"]
        console.print(f"pass rate corrected for judge error: {pr['corrected']:.1%} (95% CI "
                      f"{lo:.1%}–{hi:.1%}; {pr['method']}, {pr['n_labelled']} lawyer labels)")
    else:
        console.print(f"pass rate corrected for judge error: {pr['status']} ({pr['reason']})")
    console.print(f"  ({est['label']}; details: legal-judge calibrate estimate {est['run_id']})",
                  markup=False, highlight=False)
    pin = est.get("pin")
    if pin:
        on = (f"calibration {pin['calibration_id']} (made {str(pin['calibration_date'])[:10]})"
              if pin["calibration_id"] else "this run's lawyer labels")
        console.print(f"  rests on {on}: {pin['chosen']}; {pin['text']}", markup=False,
                      highlight=False)
    newer = est.get("newer_calibration")
    if newer:
        console.print(f"  {newer['text']}", markup=False, highlight=False)
    for w in est.get("policy_warnings") or []:
        # Not markup: the policy line ends in "[calibration]"; a path is never folded.
        console.print(Text.assemble(("warning:", "yellow"), f" {w}"), highlight=False,
                  soft_wrap=True)
