"""``legal-judge compare``: the paired comparison of two runs, and its regression gate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from legal_judge.commands.ci_outputs import write_ci_outputs
from legal_judge.commands.json_out import json_output
from legal_judge.commands.policy import (
    gate_options,
    policy_flag,
    policy_in_force,
    print_policy,
    release_flags,
)
from legal_judge.commands.tables import Col, ci_cell, print_table, styled
from legal_judge.errors import ConfigError, GateFailure
from legal_judge.store import Store

if TYPE_CHECKING:
    from legal_judge.policy import PolicyInForce

__all__ = ["COMMANDS", "compare_cmd", "release_policy_in_force"]

console = Console()


@click.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@release_flags
@policy_flag("--min-items", key="release.min_items", kind=int,
             help="Fewer paired items than this: the endpoint is 'cannot tell'.")
@click.option("--method", type=click.Choice(["auto", "t-test", "wilcoxon"]), default="auto",
              show_default=True,
              help="Rubric test and bounds: paired t, or Wilcoxon with Hodges-Lehmann bounds; "
                   "auto picks Wilcoxon when Shapiro-Wilk rejects normality.")
@click.option("--corrected", is_flag=True,
              help="Compare the judge-error-corrected figures of both runs (lawyer labels or a "
                   "calibration of the same judge); refused when a run has no correction.")
@click.option("--fail-on-regression", is_flag=True,
              help="The release gate: exit 1 unless every endpoint is shown non-inferior.")
@click.option("--require-validation", is_flag=True, default=None,
              help="The release also needs a validation of record for every judge of RUN_B "
                   "(tightens the policy's [validation] require_of_record).")
@gate_options
def compare_cmd(run_a: str, run_b: str, threshold: float | None, alpha: float | None,
                min_items: int | None, method: str, corrected: bool, fail_on_regression: bool,
                require_validation: bool | None, as_json: bool, policy_file: Path | None,
                overrides: tuple[str, ...],
                junit: Path | None, summary_md: Path | None) -> None:
    """Paired comparison of two runs on the same items (RUN_B against baseline RUN_A).

    The release gate passes only when every endpoint (the pass rate and each rubric mean) is
    shown non-inferior: the one-sided lower confidence bound of B - A is above -margin (the
    [release] policy; `legal-judge policy show`). Compares the judges' raw scores of both runs
    by default (a run scored with --calibration keeps its raw scores, and those are compared).
    """
    from legal_judge.benchmark.compare import compare_runs
    from legal_judge.reports.ci import compare_suite

    if min_items is not None and min_items < 2:
        raise ConfigError(f"--min-items {min_items}: a paired test needs at least 2 items",
                          code="compare-options", fix="use --min-items 20 (the default)")
    with json_output(as_json) as doc:
        policy = release_policy_in_force(console, policy_file, overrides, threshold=threshold,
                                         alpha=alpha, min_items=min_items,
                                         require_validation=require_validation)
        report = compare_runs(Store(), run_a, run_b, policy=policy.release,
                              alpha=0.05 if alpha is None else alpha, method=method,
                              corrected=corrected,
                              require_validation=policy.policy.validation.require_of_record,
                              run_policy=policy.run)
        report["policy"] = policy.as_dict("release")
        doc.set(report)
        print_policy(console, policy, "release")
        _print_compare(report)
        write_ci_outputs(console, lambda: compare_suite(report, policy=policy), junit=junit,
                         summary_md=summary_md)
        release = report["release"]
        if fail_on_regression and not release["passed"]:
            _fail(release, run_b)


def _fail(release: dict[str, Any], run_b: str) -> None:
    """The release gate's failure: every reason, and the fix for each."""
    unknown = [] if release["cannot_tell_allowed"] else release["cannot_tell"]
    endpoints = release["regressed"] + unknown
    # The head names the decision ("regressed"): a "cannot tell" beside a regression is named
    # as such (language_quality was listed among the regressed endpoints).
    failing = ["; ".join(part) for part in (release["regressed"], unknown) if part]
    if release["regressed"] and unknown:
        failing[1] = "cannot tell: " + failing[1]
    fixes = []
    if set(endpoints) - {"flip guard"}:
        fixes.append("the release passes only when every endpoint is shown non-inferior; "
                     "inspect the items listed above, or compare on more items")
    if "flip guard" in release["cannot_tell"] and not release["cannot_tell_allowed"]:
        fixes.append("the flip guard passes only when every critical item is scored in both "
                     "runs: score the ones named above in both (a missing one: run a dataset "
                     "that holds it; an INCONCLUSIVE one: legal-judge run --resume RUN_ID)")
    if release["pending_review"]:
        failing.append(release["review"]["reason"])
        fixes.append("the policy requires every escalated item reviewed: have the lawyers "
                     "fill the escalation's sheet, then legal-judge calibrate import "
                     f"FILLED.csv --run {run_b} (or calibrate import --from-langfuse --queue "
                     "QUEUE_ID)")
    for req in release["requirements"]:
        if req["required"] and not req["met"]:
            failing.append(f"{req['name']}: {req['reason']}")
            fixes.append(req.get("fix") or (
                "the policy requires a validation of record for every judge: validate each "
                "judge listed above with `legal-judge calibrate validate --calibration CAL "
                "--candidate JUDGE`"))
    # The decision names what failed ("regressed", "cannot tell", "pending review"); when only
    # a requirement is unmet the endpoints were non-inferior, and the message says so.
    head = (f"release gate: {release['decision']}" if endpoints or release["pending_review"]
            else "release gate: endpoints non-inferior, but not met")
    raise GateFailure(f"{head}: " + "; ".join(failing), fix="; ".join(fixes))


def release_policy_in_force(out: Console, policy_file: Path | None, overrides: tuple[str, ...],
                            *, threshold: float | None, alpha: float | None,
                            min_items: int | None = None,
                            require_validation: bool | None = None) -> PolicyInForce:
    """The policy for a release decision: ``--threshold`` (deprecated alias of rubric_margin),
    ``--alpha`` (confidence 1 - alpha) and ``--min-items`` may only tighten it.

    Raises:
        ConfigError: a flag loosens the policy (the fix names ``--override``), or a bad value.
    """
    if alpha is not None and not 0 < alpha < 0.5:
        raise ConfigError(f"--alpha {alpha}: must be between 0 and 0.5", code="compare-options",
                          fix="use --alpha 0.05 (a one-sided 95% bound)")
    given = {"release.rubric_margin": ("--threshold", threshold),
             "release.min_items": ("--min-items", min_items),
             "release.confidence": ("--alpha", alpha)}
    try:
        policy = policy_in_force(policy_file, overrides, {
            "release.rubric_margin": threshold, "release.min_items": min_items,
            "release.confidence": None if alpha is None else round(1 - alpha, 12),
            "validation.require_of_record": require_validation})
    except ConfigError as exc:
        # Name the flag the user typed (--alpha sets confidence = 1 - alpha).
        flag = next((f"{name} {value:g}" for key, (name, value) in given.items()
                     if value is not None and key in exc.message), None)
        if exc.code != "policy-loosened" or flag is None or exc.message.startswith(flag):
            raise
        raise ConfigError(f"{flag}: {exc.message}", code=exc.code, fix=exc.fix) from None
    if threshold is not None:
        out.print(f"note: --threshold is deprecated; it sets the policy's rubric_margin "
                  f"({threshold:g}; a flag may only tighten it: use a policy file or --override "
                  "rubric_margin=...)", markup=False, highlight=False, soft_wrap=True)
    return policy


def _print_compare(report: dict[str, Any]) -> None:
    for w in report["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {w}")
    console.print(f"compares {report['compared_note']}", markup=False, highlight=False)
    for note in report.get("notes", []):
        console.print(f"  note: {note}", markup=False, highlight=False)
    if report["compared"] == "corrected":
        _print_compare_corrected(report)
    else:
        _print_descriptive(report)
    _print_release(report)


def _bound(e: dict[str, Any], key: str, spec: str) -> str:
    return "—" if e.get(key) is None else format(e[key] + 0.0, spec).replace("-0.000", "+0.000")


def _print_release(report: dict[str, Any]) -> None:
    release = report["release"]
    conf = f"{report['release_policy']['confidence']:.0%}"
    rows = []
    for e in release["endpoints"]:
        spec = "+.3f"
        rows.append([e["endpoint"], _bound(e, "estimate", spec),
                     f"{_bound(e, 'lower', spec)}..{_bound(e, 'upper', spec)}",
                     f"-{e['margin']:g}", _status_cell(e["decision"])])
    print_table(console, f"release gate: non-inferiority of B against A (one-sided {conf} "
                         "bounds of B - A)",
                [Col("endpoint", keep=True), Col("B-A", numeric=True), Col("bounds", keep=True),
                 Col("margin", numeric=True), Col("decision", keep=True)], rows)
    for e in release["endpoints"]:
        if e["decision"] != "non-inferior":
            console.print(f"  {e['endpoint']}: {e['decision']}: {e['reason']}", markup=False,
                          highlight=False, soft_wrap=True)
    guard = release["flip_guard"]
    console.print(f"flip guard: {guard['decision']}: {guard['reason']}", markup=False,
                  highlight=False, soft_wrap=True)
    if guard["critical_flips"]:
        console.print("  critical items that went pass -> fail: "
                      + ", ".join(guard["critical_flips"]), markup=False, highlight=False,
                      soft_wrap=True)
    review = release.get("review") or {}
    if review.get("escalation_id") or review.get("required"):
        console.print(f"escalation review: {review['decision']}: {review['reason']}",
                      markup=False, highlight=False, soft_wrap=True)
    if report["regressed_items"]:
        console.print(f"items passed in A and failed in B ({len(report['regressed_items'])}): "
                      + ", ".join(report["regressed_items"][:30])
                      + (" ..." if len(report["regressed_items"]) > 30 else ""),
                      markup=False, highlight=False, soft_wrap=True)
    for req in release["requirements"]:
        if req["required"]:
            state = "met" if req["met"] else "NOT MET"
            console.print(f"requirement {req['name']}: {state}: {req['reason']}", markup=False,
                          highlight=False, soft_wrap=True)
    verdict = "PASS" if release["passed"] else "FAIL"
    allowed = " (cannot tell allowed by the policy)" if release["cannot_tell_allowed"] else ""
    unmet = release.get("unmet") or []
    if unmet:
        allowed += f"; not met: {', '.join(unmet)}"
    console.print(f"release gate: {verdict}: {release['decision']}{allowed}", markup=False,
                  highlight=False, soft_wrap=True)
    console.print(f"  rule: {release['rule']}", markup=False, highlight=False, soft_wrap=True)


def _print_descriptive(report: dict[str, Any]) -> None:
    print_table(console, f"{report['run_b']} vs {report['run_a']} ({report['n_items']} paired "
                         "items; descriptive, p Holm-adjusted)",
                [Col("rubric", keep=True), Col("n", numeric=True),
                 Col("mean diff (B-A)", numeric=True), Col("95% CI"),
                 Col("p adj", numeric=True)],
                [[rubric, str(r["n"]), f"{r['mean_difference']:+.3f}",
                  ci_cell(r["ci95"], "+.3f", ".."),
                  "—" if r["p_adjusted"] is None else f"{r['p_adjusted']:.4f}"]
                 for rubric, r in report["rubrics"].items()])
    for rubric, r in report["rubrics"].items():
        if r["regressed_items"]:
            shown = r["regressed_items"][:10]
            console.print(f"  {rubric} dropped on {len(r['regressed_items'])} item(s): "
                          + ", ".join(f"{d['item_id']} {d['before']:.2f}->{d['after']:.2f}"
                                      for d in shown)
                          + (" ..." if len(r["regressed_items"]) > len(shown) else ""),
                          markup=False, highlight=False, soft_wrap=True)
    pf = report["pass_rate"]
    console.print(f"pass rate {pf['rate_a']:.1%} -> {pf['rate_b']:.1%} (McNemar exact p = "
                  f"{pf['p_value']:.4f}; descriptive)", markup=False, highlight=False)


_STATUS_STYLE = {"regressed": ("REGRESSED", "red"), "non-inferior": ("non-inferior", "green"),
                 "cannot tell": ("cannot tell", "yellow")}


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
                      "—" if r["p_adjusted"] is None else f"{r['p_adjusted']:.4f}"])
    print_table(console, f"{report['run_b']} vs {report['run_a']}: corrected for judge error "
                         "(descriptive, p Holm-adjusted)",
                [Col("figure", keep=True), Col("A", numeric=True), Col("B", numeric=True),
                 Col("B-A [95% CI]", keep=True), Col("p adj", numeric=True)], table)


COMMANDS: list[click.Command] = [compare_cmd]
