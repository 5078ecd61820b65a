"""``legal-judge calibrate validate``: is a changed judge closer to the lawyers than the incumbent?

Registered under the ``calibrate`` group (``commands/calibrate.py`` adds these commands).
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from legal_judge.calibration.validation_schema import ValidationReport
from legal_judge.commands.ci_outputs import write_ci_outputs
from legal_judge.commands.json_out import json_option, json_output
from legal_judge.commands.policy import (
    gate_options,
    policy_in_force,
    policy_options,
    print_policy,
)
from legal_judge.commands.tables import Cell, Col, print_table, styled
from legal_judge.errors import GateFailure
from legal_judge.store import Store

__all__ = ["VALIDATION_COMMANDS", "print_validation", "push_staging", "validate_cmd"]

console = Console()

# ``validate`` and ``align`` both write the validation report on request.
_report_option = click.option(
    "--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Also write the report: .html or .md.")

_STYLE = {"better": "green", "not worse": "green", "worse": "red", "cannot tell": "yellow"}


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _ci(ci: tuple[float, float] | list[float] | None) -> str:
    return "" if not ci else f" [{ci[0]:+.2f}, {ci[1]:+.2f}]"


def _diff(estimate: float | None, ci: tuple[float, float] | None) -> str:
    return "—" if estimate is None else f"{estimate:+.2f}" + ("" if not ci else
                                                               f" {ci[0]:+.2f}..{ci[1]:+.2f}")


def print_validation(report: ValidationReport, out: Console) -> None:
    """The verdict in one sentence, the table per rubric, the allowed uses, the policy."""
    out.print(styled(report.headline, _STYLE[report.verdict]), soft_wrap=True, highlight=False)
    if report.simulated:
        out.print("SIMULATED JUDGE: for demos and tests, never a judge of record",
                  highlight=False)
    out.print(f"candidate {report.candidate.spec} (judge_id {report.candidate.judge_id}) against "
              f"incumbent {report.incumbent.spec} (judge_id {report.incumbent.judge_id}) on "
              f"{report.n_items} lawyer-labelled items", soft_wrap=True, highlight=False,
              markup=False)
    pf = report.rubrics[0]
    fp, fc, fi = pf.false_pass_difference, pf.candidate.false_pass, pf.incumbent.false_pass
    if fp is not None and fc is not None and fi is not None:
        out.print(f"false-pass rate (judge passes, lawyers fail): candidate "
                  f"{_pct(fc.value)} ({fc.k}/{fc.n}), incumbent {_pct(fi.value)} ({fi.k}/{fi.n}),"
                  f" difference {_pct(fp.estimate)}{_ci(fp.ci95)}, exact McNemar p = "
                  f"{fp.p_value:.3g}", soft_wrap=True, highlight=False, markup=False)
    cells: list[list[Cell]] = []
    for r in report.rubrics:
        diff = r.mae_difference or r.agreement_difference
        cells.append([r.rubric, str(r.n), _pct(r.candidate.agreement.value),
                      _pct(r.incumbent.agreement.value),
                      _diff(diff.estimate, diff.ci95),
                      styled(r.verdict, _STYLE[r.verdict]), "yes" if r.may_gate else "no"])
    print_table(out, "validation against the lawyers",
                [Col("rubric", keep=True), Col("n", numeric=True, optional=True), Col("cand", numeric=True),
                 Col("inc", numeric=True), Col("diff, 95% CI"),
                 Col("verdict", keep=True), Col("gate", keep=True)], cells)
    out.print("cand, inc: agreement with the lawyers; diff: candidate - incumbent in agreement "
              "(pass/fail, categories) or in mean absolute error (numeric rubrics)",
              highlight=False, soft_wrap=True)
    for r in report.rubrics:
        need = (f"; about {r.items_needed} more labelled items would be needed"
                if r.verdict == "cannot tell" and r.items_needed is not None else "")
        out.print(f"  {r.rubric}: {r.verdict}: {r.reason}{need}", soft_wrap=True,
                  highlight=False, markup=False)
    uses = report.allowed
    out.print(f"may gate on: {', '.join(uses.may_gate) or 'nothing'}", highlight=False,
              soft_wrap=True)
    for rubric, why in uses.may_not_gate.items():
        out.print(f"  may not gate on {rubric}: {why}", highlight=False, soft_wrap=True,
                  markup=False)
    out.print("validated on: " + ", ".join(f"{c.calibration_id} (run {c.run_id}, {c.quarter}, "
                                           f"{c.n_items} items, {c.created_at[:10]})"
                                           for c in uses.validated_on), highlight=False,
              soft_wrap=True, markup=False)
    out.print("revalidate when " + "; or ".join(uses.revalidate_when), highlight=False,
              soft_wrap=True, markup=False)
    for note in report.notes:
        out.print(f"note: {note}", highlight=False, soft_wrap=True, markup=False)
    out.print(f"validation id: {report.validation_id}", highlight=False)


@click.command("validate")
@click.option("--calibration", "calibrations", multiple=True, required=True,
              help="A calibration id (repeatable): its lawyer-labelled items are re-scored.")
@click.option("--candidate", required=True,
              help="The changed judge: a judge spec (simulated:fair, openai:gpt-4o) or an "
                   "ensemble (TOML file or bundled name).")
@click.option("--incumbent", default=None,
              help="The judge it would replace (default: the calibrated runs' stored ensemble "
                   "results).")
@gate_options
@_report_option
def validate_cmd(calibrations: tuple[str, ...], candidate: str, incumbent: str | None,
                 as_json: bool, report_path: Path | None, junit: Path | None,
                 summary_md: Path | None, policy_file: Path | None,
                 overrides: tuple[str, ...]) -> None:
    """Validate a judge change on the same lawyer-labelled items as the incumbent.

    Exit 0 when the candidate is `better` or `not worse` overall, 1 when it is `worse` or
    `cannot tell` (a judge change passes only on positive evidence).
    """
    from legal_judge.calibration.validation_run import validate_change
    from legal_judge.reports.ci_validation import validation_suite

    policy = policy_in_force(policy_file, overrides)
    store = Store()
    try:
        report = validate_change(store, list(calibrations), candidate, incumbent, policy)
    finally:
        store.close()
    data = report.model_dump(mode="json")
    with json_output(as_json) as doc:
        doc.set(data)
        print_policy(console, policy, "validation")
        print_validation(report, console)
        if report_path is not None:
            from legal_judge.commands.tables import wrote
            from legal_judge.reports.view_validation import write_validation_report

            wrote(console, write_validation_report(data, report_path), what="validation report")
        write_ci_outputs(console, lambda: validation_suite(data, policy.properties("validation")),
                         junit=junit, summary_md=summary_md)
        if report.verdict in ("worse", "cannot tell"):
            raise GateFailure(f"the candidate is {report.verdict.upper()}: "
                              f"{'; '.join(report.reasons)}",
                              fix="keep the incumbent; see the report for the rubrics and items")


VALIDATION_COMMANDS: list[click.Command] = [validate_cmd]


def _print_cross_fit(report: ValidationReport, out: Console) -> None:
    cf = report.cross_fit
    if cf is None:
        return
    out.print(f"pass/fail agreement with the lawyers: in-sample {_pct(cf.in_sample_agreement)} "
              f"(built and scored on the same labels: optimistic), cross-fitted "
              f"{_pct(cf.cross_fitted_agreement)} ({cf.folds} folds, seed {cf.seed}, k = {cf.k}),"
              f" incumbent {_pct(cf.incumbent_agreement)}", soft_wrap=True, highlight=False,
              markup=False)
    out.print(f"false-pass rate: in-sample {_pct(cf.in_sample_false_pass)}, cross-fitted "
              f"{_pct(cf.cross_fitted_false_pass)}", soft_wrap=True, highlight=False)
    out.print(f"candidate prompt: {cf.prompt_dir}", soft_wrap=True, highlight=False, markup=False)
    if cf.notes_count:
        out.print(f"lawyers' notes as drafted ({cf.notes_count} note(s)), cross-fitted: agreement "
                  f"{_pct(cf.notes_cross_fitted_agreement)} (incumbent "
                  f"{_pct(cf.incumbent_agreement)}), false-pass rate "
                  f"{_pct(cf.notes_cross_fitted_false_pass)} (incumbent "
                  f"{_pct(cf.incumbent_false_pass)}); edit them before use", soft_wrap=True,
                  highlight=False, markup=False)
    else:
        out.print("lawyers' notes: no lawyer comment on an item the judge got wrong, nothing to "
                  "cross-validate", soft_wrap=True, highlight=False, markup=False)
    out.print(f"lawyers' notes (a draft to edit, not applied): {cf.notes_file}", soft_wrap=True,
              highlight=False, markup=False)


@click.command("align")
@click.option("--calibration", "calibrations", multiple=True, required=True,
              help="A calibration id (repeatable): its labels and comments build the candidate.")
@click.option("--judge", "judge_spec", required=True, help="The judge to align (a judge spec).")
@click.option("--folds", default=5, show_default=True, help="Cross-fitting folds.")
@click.option("--k", "k", default=4, show_default=True, help="Lawyers' examples in the prompt.")
@click.option("--seed", default=0, show_default=True, help="Seed of the folds.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder of the candidate prompt and notes (default ./aligned-<judge>).")
@click.option("--push/--no-push", default=True, show_default=True,
              help="Push the candidate prompt to Langfuse with the label staging when "
                   "Langfuse is configured.")
@json_option
@_report_option
@policy_options
def align_cmd(calibrations: tuple[str, ...], judge_spec: str, folds: int, k: int, seed: int,
              out_dir: Path | None, push: bool, as_json: bool, report_path: Path | None,
              policy_file: Path | None, overrides: tuple[str, ...]) -> None:
    """Build a few-shot candidate of JUDGE from the lawyers' labels; validate it cross-fitted.

    Each item is scored by a candidate built without it; the verdict uses those scores. The
    final candidate (all labels) is saved as a new prompt version; promote it with
    `calibrate promote VALIDATION_ID` (refused unless better or not worse where it gates).
    """
    import re

    from legal_judge.calibration.align import align_judge

    policy = policy_in_force(policy_file, overrides)
    out = out_dir or Path("aligned-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", judge_spec))
    out.mkdir(parents=True, exist_ok=True)
    store = Store()
    try:
        result = align_judge(store, list(calibrations), judge_spec, out=out, policy=policy,
                             folds=folds, k=k, seed=seed)
    finally:
        store.close()
    report = result.report
    with json_output(as_json) as doc:
        doc.set(report.model_dump(mode="json"))
        print_policy(console, policy, "validation")
        _print_cross_fit(report, console)
        print_validation(report, console)
        if report_path is not None:
            from legal_judge.commands.tables import wrote
            from legal_judge.reports.view_validation import write_validation_report

            wrote(console, write_validation_report(report.model_dump(mode="json"), report_path),
                  what="validation report")
        if push:
            push_staging(result.prompt.root)


def push_staging(root: Path) -> None:
    """The candidate prompt to Langfuse as a new version labelled staging (when configured)."""
    from legal_judge.calibration.promote import push_candidate
    from legal_judge.errors import LegalJudgeError
    from legal_judge.sync.settings import configured

    if not configured():
        return
    try:
        rows = push_candidate(root, label="staging")
    except LegalJudgeError as exc:
        # The candidate is saved and validated already; an outage must not cost it.
        console.print(f"Langfuse push (staging) failed: {exc}", markup=False, soft_wrap=True)
        return
    console.print("Langfuse: " + ", ".join(f"{r['name']} v{r['version']} {r['action']}"
                                          for r in rows if r["action"] != "unchanged"),
                  soft_wrap=True, highlight=False, markup=False)


@click.command("promote")
@click.argument("validation_id")
def promote_cmd(validation_id: str) -> None:
    """Promote a validated candidate to production: refused (exit 1) unless its verdict is
    better or not worse on pass/fail and every rubric of the pass/fail rule."""
    from legal_judge.calibration.promote import promote

    store = Store()
    try:
        lines = promote(store, validation_id)
    finally:
        store.close()
    for line in lines:
        console.print(line, soft_wrap=True, highlight=False, markup=False)


VALIDATION_COMMANDS.extend([align_cmd, promote_cmd])
