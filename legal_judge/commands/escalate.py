"""``legal-judge calibrate escalate``: which items the judges decide, which go to a lawyer."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from legal_judge.calibration.escalation import escalate, write_escalation_sheet
from legal_judge.calibration.escalation_schema import EscalationFigures, EscalationReport
from legal_judge.calibration.plan import LabelPlan, plan_labels
from legal_judge.calibration.rubrics import rubric_specs, stored_rubric_set
from legal_judge.calibration.sample import guide_path
from legal_judge.commands.json_out import json_output
from legal_judge.commands.tables import echo_json, wrote
from legal_judge.errors import GateFailure
from legal_judge.store import Store
from legal_judge.sync.sink import annotation_queue

__all__ = ["escalate_cmd", "plan_cmd", "print_escalation_figures", "queue_or_warning"]

console = Console()
#: How many escalated ids the terminal lists (all of them are in --json and the sheet).
SHOWN_IDS = 20


def _levels(prefix: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--target`` and ``--confidence`` of the guarantee (escalate, and plan's escalation)."""
    def add(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn = click.option("--confidence", default=0.95, show_default=True, type=float,
                          help=f"{prefix}probability of the guarantee.".capitalize())(fn)
        return click.option("--target", default=0.90, show_default=True, type=float,
                            help=f"{prefix}agreement with the lawyers to guarantee on the items "
                                 "the judges decide.".capitalize())(fn)
    return add


@click.command("escalate")
@click.argument("run_id")
@_levels("")
@click.option("--rubric", default=None,
              help="Agree on this rubric within one point (default: the pass/fail decision).")
@click.option("--assume-random", is_flag=True,
              help="Take labels that match no `calibrate sample` as a simple random sample.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Lawyers' sheet of the escalated items (default <run_id>-escalated.csv).")
@click.option("--langfuse-queue/--no-langfuse-queue", default=True, show_default=True,
              help="Also put the escalated traces in a Langfuse annotation queue (human.* "
                   "score configs) when Langfuse is configured.")
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON.")
def escalate_cmd(run_id: str, target: float, confidence: float, rubric: str | None,
                 assume_random: bool, out: Path | None, langfuse_queue: bool,
                 as_json: bool) -> None:
    """Decide which items of RUN_ID the judges may decide, with a guaranteed agreement level.

    On the run's lawyer labels (a random sample), a confidence threshold is chosen by
    fixed-sequence testing with exact binomial bounds; items below it go to a lawyer (a sheet in
    the `calibrate sample` format). Exit 1 when no threshold can be guaranteed (every item is
    then escalated, and the labels that would be needed are printed).
    """
    # Under --json a Langfuse outage's warning (from _queue) goes to stderr with the text.
    with json_output(as_json) as doc, contextlib.closing(Store()) as store:
        report = escalate(store, run_id, target=target, confidence=confidence, rubric=rubric,
                          assume_random=assume_random)
        path = write_escalation_sheet(store, report, out or Path(f"{run_id}-escalated.csv"))
        rubric_set = stored_rubric_set(store.get_run(run_id)["config"])
        queue = _queue(report, rubric_set) if langfuse_queue and report.escalated else None
        report = report.model_copy(update={"sheet": str(path), "annotation_queue": queue})
        doc.set(report.model_dump(mode="json"))
        if not as_json:
            _print(report)
        if not report.guaranteed:
            raise GateFailure(f"cannot guarantee {report.target:.0%} agreement at "
                              f"{report.confidence:.0%} confidence: every item goes to a lawyer",
                              fix="label more items (see above), or review them all")


def queue_or_warning(*, name: str, run_id: str, item_ids: list[str],
                     rubrics: list[dict[str, Any]], human: bool = False) -> str | None:
    """A Langfuse annotation queue of the items' traces (``calibrate sample`` and ``escalate``).

    Returns:
        The queue id, or None when Langfuse is not configured or failed; a failure is printed
        as a warning, not raised: the lawyers' sheet is written already and must not be lost.
    """
    queue, failed = annotation_queue(name=name, run_id=run_id, item_ids=item_ids,
                                     rubrics=rubrics, human=human)
    if failed:
        console.print(f"[yellow]Langfuse annotation queue not created[/yellow]: {failed}")
    return queue


def _queue(report: EscalationReport, rubric_set: str) -> str | None:
    """The Langfuse annotation queue of the escalated traces, with the lawyers' own configs."""
    _, specs = rubric_specs(rubric_set)
    return queue_or_warning(
        name=f"legal-judge escalation {report.escalation_id}", run_id=report.run_id,
        item_ids=report.escalated, human=True,
        rubrics=[{"name": s.name, "kind": s.kind} for s in specs.values()] + [{"name": "overall"}])


def _print(r: EscalationReport) -> None:
    console.print(f"escalation [bold]{r.escalation_id}[/bold] of run {r.run_id}: agreement on "
                  f"{r.agreement_on}, target {r.target:.0%} at {r.confidence:.0%} confidence")
    console.print(f"labels: {r.n_labelled} lawyer-labelled items of run {r.label_run_id} "
                  f"({r.sample_kind}" + (f", sample {r.sample_id})" if r.sample_id else ")"))
    style = "green" if r.guaranteed else "yellow"
    console.print(f"[bold {style}]{'GUARANTEED' if r.guaranteed else 'CANNOT GUARANTEE'}"
                  f"[/bold {style}]: {r.sentence}.")
    if r.guaranteed and r.threshold is not None:
        lo, hi = r.agreement_ci95 or (0.0, 0.0)
        console.print(f"  threshold: confidence >= {r.threshold:.3f}; coverage "
                      f"{r.coverage:.0%} ({len(r.decided)} of {r.n_items} items decided by "
                      "the judges)")
        console.print(f"  observed agreement on kept labelled items: "
                      f"{r.observed_agreement:.1%} [{lo:.1%}, {hi:.1%}] "
                      f"(exact {r.confidence:.0%} CI); lower bound {r.agreement_lower:.1%}")
        if r.decided_pass_rate is not None:
            console.print(f"  pass rate on the judge-decided items: {r.decided_pass_rate:.1%}")
    console.print(f"  the walk started at the most confident threshold keeping {r.min_start} "
                  f"labelled items (zero disagreements among {r.min_start} reject H0) and made "
                  f"{len(r.steps)} test(s)")
    shown = ", ".join(r.escalated[:SHOWN_IDS]) + (" ..." if len(r.escalated) > SHOWN_IDS else "")
    console.print(f"escalated to a lawyer: {len(r.escalated)} items"
                  + (f" ({len(r.reviewed)} more already labelled)" if r.reviewed else "")
                  + (f": {shown}" if shown else ""), soft_wrap=True, highlight=False)
    if r.sheet:
        wrote(console, r.sheet, len(r.escalated), what="lawyers' sheet of the escalated items")
        console.print(f"  guide for the lawyers: {guide_path(Path(r.sheet))}", soft_wrap=True,
                      markup=False, highlight=False)
    if r.annotation_queue:
        console.print(f"  Langfuse annotation queue: {r.annotation_queue} (lawyers' scores "
                      "named human.<rubric> and human.overall; import them with `calibrate "
                      f"import --from-langfuse --queue {r.annotation_queue}`)", soft_wrap=True,
                      highlight=False)
    for note in r.notes:
        console.print(f"  [yellow]note[/yellow]: {note}")
    console.print("assumption: the labelled items are exchangeable with the run's items (a "
                  "random sample of the same run)")


def print_escalation_figures(f: EscalationFigures, out: Console) -> None:
    """The run's figures split: decided by the judges, pending lawyer review, combined."""
    out.print(f"escalation {f.escalation_id}: " + (
        f"the judges decide {f.decided} of {f.n_items} items (agreement with the lawyers >= "
        f"{f.target:.0%} at {f.confidence:.0%} confidence)" if f.guaranteed else
        f"nothing guaranteed at {f.target:.0%}: all {f.n_items} items go to a lawyer"),
        soft_wrap=True, highlight=False)
    if f.decided_pass_rate is not None:
        out.print(f"  pass rate on the judge-decided items: {f.decided_pass_rate:.1%} "
                  f"({f.decided} items)")
    out.print(f"  escalated to lawyers: {f.escalated} items, {f.reviewed} reviewed, "
              f"{f.pending} pending review"
              + (f"; lawyers' pass rate {f.lawyer_pass_rate:.1%}" if f.lawyer_pass_rate
                 is not None else ""), highlight=False)
    if f.combined_pass_rate is not None:
        out.print(f"  combined pass rate: {f.combined_pass_rate:.1%} (the judges' decisions on "
                  f"the {f.decided} kept items and the lawyers' on the {f.escalated} "
                  "escalated ones)", highlight=False)
    else:
        out.print(f"  combined pass rate: pending ({f.pending} escalated items await a lawyer)",
                  highlight=False)


@click.command("plan")
@click.argument("run_id")
@click.option("--margin", default=0.05, show_default=True, type=float,
              help="Wanted half-width of the corrected pass rate's 95% CI (0.05 = ±5 points).")
@_levels("Escalation: ")
@click.option("--pass-rate", type=float, default=None, help="Assume the lawyers' pass rate.")
@click.option("--rho", type=float, default=None, help="Assume the judge-lawyer correlation.")
@click.option("--coverage", type=float, default=None,
              help="Assume the share of answers the judges decide.")
@click.option("--disagreement", type=float, default=None,
              help="Assume the judge-lawyer disagreement rate on the kept answers.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan_cmd(run_id: str, margin: float, target: float, confidence: float,
             pass_rate: float | None, rho: float | None, coverage: float | None,
             disagreement: float | None, as_json: bool) -> None:
    """How many lawyer labels the next calibration and the escalation of RUN_ID need.

    Inputs come from the newest calibration of the run's ensemble and the run's newest
    escalation; a flag states an assumption instead (and the plan says which is which).
    """
    store = Store()
    try:
        plan = plan_labels(store, run_id, margin=margin, target=target, confidence=confidence,
                           pass_rate=pass_rate, rho=rho, coverage=coverage,
                           disagreement=disagreement)
    finally:
        store.close()
    if as_json:
        echo_json(plan.model_dump(mode="json"))
        return
    _print_plan(plan)


def _n(value: int | None) -> str:
    return "more than 1,000,000" if value is None else f"{value:,}"


def _print_plan(p: LabelPlan) -> None:
    console.print(f"label plan for run {p.run_id} ({p.n_items} judged items)")
    for key, where in p.sources.items():
        value = getattr(p, key)
        console.print(f"  {key} {value:.2f}: {where}", soft_wrap=True, highlight=False)
    console.print(f"corrected pass rate within ±{p.margin:.0%} (95% CI): "
                  f"{_n(p.labels_with_judges)} labels with the judges' scores (PPI++, "
                  f"correlation {p.rho:.2f}), {_n(p.labels_without_judges)} without them",
                  highlight=False)
    if p.break_even_rho is not None:
        verdict = ("the judges' scores help" if p.judges_help else
                   "the judges' scores do not help: label without them")
        console.print(f"  break-even correlation 1/sqrt(n-2) = {p.break_even_rho:.2f}: "
                      f"{verdict}", highlight=False)
    console.print(f"escalation at {p.target:.0%} ({p.confidence:.0%} confidence), coverage "
                  f"{p.coverage:.0%}, disagreement {p.disagreement:.1%} on kept answers: "
                  + (f"about {p.escalation_labels:,} random labels" if p.escalation_labels
                     is not None else "no number of labels guarantees it (the judges disagree "
                     f"with the lawyers on more than {1 - p.target:.0%} of the kept answers)"),
                  highlight=False)
    console.print(f"  expected escalations: {p.escalated_per_1000} per 1,000 answers",
                  highlight=False)
    for note in p.notes:
        console.print(f"  [yellow]note[/yellow]: {note}")
