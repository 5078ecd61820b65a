"""``legal-judge calibrate``: the quarterly human calibration (sample, import, compare, fit, history)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import click
from rich.console import Console

from legal_judge.assets.rubrics import DEFAULT_RUBRIC_SET
from legal_judge.calibration import (
    HistoryRow,
    RunEstimate,
    calibration_history,
    compare,
    correct_result,
    draw_sample,
    ensemble_judge_id,
    fit_correction,
    from_files,
    from_store,
    import_labels,
    load_correction,
    rubric_specs,
    save_calibration,
    write_template,
)
from legal_judge.calibration.rubrics import stored_rubric_set
from legal_judge.calibration.sample import SampleReport, guide_path
from legal_judge.commands.calibrate_view import (
    print_calibration,
    print_estimate,
    print_fit,
    print_pin,
)
from legal_judge.commands.escalate import escalate_cmd, plan_cmd, queue_or_warning
from legal_judge.commands.json_out import json_option, json_output
from legal_judge.commands.policy import policy_flag, policy_in_force, policy_options
from legal_judge.commands.tables import Col, echo_json, print_table, styled, wrote
from legal_judge.errors import ConfigError
from legal_judge.store import Store

__all__ = ["COMMANDS", "calibrate"]

console = Console()


def _fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


@click.group()
def calibrate() -> None:
    """Quarterly calibration of the judges against lawyers' scores."""


@calibrate.command("sample")
@click.argument("run_id")
@click.option("--n", "n", default=50, show_default=True, help="Items to sample.")
@click.option("--stratify", type=click.Choice(["pass_fail", "rubric", "disagreement"]),
              default=None, help="Stratify the sample (proportional allocation).")
@click.option("--stratify-rubric", default="legal_soundness", show_default=True,
              help="Rubric whose score levels are the strata of --stratify rubric.")
@click.option("--seed", type=int, default=None, help="Seed (drawn and printed when omitted).")
@click.option("--enrich", default=0, show_default=True,
              help="Slots reserved for the items the judges disagreed on most.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Template file, .csv or .jsonl (default <run_id>-calibration.csv).")
@click.option("--langfuse-queue/--no-langfuse-queue", default=True, show_default=True,
              help="Also create a Langfuse annotation queue when Langfuse is configured.")
@json_option
def sample_cmd(run_id: str, n: int, stratify: str | None, stratify_rubric: str, seed: int | None,
               enrich: int, out: Path | None, langfuse_queue: bool, as_json: bool) -> None:
    """Draw a reproducible sample of RUN_ID and write the lawyers' template."""
    store = Store()
    with json_output(as_json) as doc, contextlib.closing(store):
        report = draw_sample(store, run_id, n=n, stratify=stratify, seed=seed,  # type: ignore[arg-type]
                             enrich=enrich, stratify_rubric=stratify_rubric)
        rubric_set = stored_rubric_set(store.get_run(run_id)["config"])
        path = write_template(store, report, out or Path(f"{run_id}-calibration.csv"),
                              rubric_set=rubric_set)
        report = report.model_copy(update={"out": str(path), "annotation_queue": _queue(
            report, rubric_set) if langfuse_queue else None})
        doc.set({**report.model_dump(mode="json"), "guide": str(guide_path(path))})
        _print_sample(report)


def _queue(report: SampleReport, rubric_set: str) -> str | None:
    _, specs = rubric_specs(rubric_set)
    return queue_or_warning(
        name=f"legal-judge calibration {report.sample_id}", run_id=report.run_id,
        item_ids=[i.item_id for i in report.items],
        rubrics=[{"name": s.name, "kind": s.kind, "scale": s.scale} for s in specs.values()])


def _print_sample(report: SampleReport) -> None:
    console.print(f"sample [bold]{report.sample_id}[/bold] of run {report.run_id}: "
                  f"{len(report.items)} of {report.n_eligible} items, seed {report.seed}")
    if report.strata:
        console.print("  strata: " + ", ".join(f"{k} ({v})" for k, v in report.strata.items()))
    wrote(console, report.out or "", len(report.items), what="lawyers' template")
    if report.out:
        console.print(f"  guide for the lawyers (rubric definitions and scales): "
                      f"{guide_path(Path(report.out))}", soft_wrap=True, markup=False,
                      highlight=False)
    if report.annotation_queue:
        console.print(f"  Langfuse annotation queue: {report.annotation_queue}")
    for note in report.notes:
        console.print(f"  [yellow]note[/yellow]: {note}")


@calibrate.command("import")
@click.argument("labels", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option("--run", "run_id", default=None, help="Only accept items of this run.")
@click.option("--replace", is_flag=True, help="Overwrite labels already stored with another score.")
@click.option("--from-langfuse", is_flag=True,
              help="Read the lawyers' ANNOTATION scores from Langfuse instead of a file "
                   "(--queue QUEUE_ID, or --run RUN_ID for every item trace of the run).")
@click.option("--queue", "queue_id", default=None, help="With --from-langfuse: the annotation queue.")
@json_option
def import_cmd(labels: Path | None, run_id: str | None, replace: bool, from_langfuse: bool,
               queue_id: str | None, as_json: bool) -> None:
    """Import lawyers' labels (CSV/JSONL, long or template layout, or Langfuse); all or nothing."""
    if from_langfuse == (labels is not None):
        raise ConfigError("give a LABELS file or --from-langfuse, not both and not neither",
                          code="calibration-args",
                          fix="legal-judge calibrate import LABELS.csv, or calibrate import "
                              "--from-langfuse --queue QUEUE_ID")
    if queue_id and not from_langfuse:
        raise ConfigError("--queue needs --from-langfuse", code="calibration-args",
                          fix="add --from-langfuse")
    if from_langfuse and not (queue_id or run_id):
        raise ConfigError("--from-langfuse needs --queue QUEUE_ID or --run RUN_ID",
                          code="calibration-args",
                          fix="legal-judge calibrate import --from-langfuse --queue QUEUE_ID")
    store = Store()
    skipped = 0
    try:
        run_cfg = store.get_run(run_id)["config"] if run_id else {}
        _, specs = rubric_specs(stored_rubric_set(run_cfg))
        if from_langfuse:
            from legal_judge.calibration.langfuse_import import import_from_langfuse

            summary, skipped = import_from_langfuse(store, specs, queue_id=queue_id,
                                                    run_id=run_id, replace=replace)
        else:
            summary = import_labels(store, labels, specs, run_id=run_id,  # type: ignore[arg-type]
                                    replace=replace)
    finally:
        store.close()
    if as_json:
        echo_json({**summary.model_dump(mode="json"), "skipped_scores": skipped})
        return
    console.print(f"imported {summary.labels} labels on {summary.items} items from "
                  f"{len(summary.annotators)} annotator(s): {', '.join(summary.annotators)}"
                  + (f" ({summary.replaced} replaced)" if summary.replaced else "")
                  + (f" ({summary.unchanged} already stored)" if summary.unchanged else "")
                  + (f", and {summary.comments} comment(s)" if summary.comments else "")
                  + (f" from {summary.file}" if from_langfuse else ""))
    if skipped:
        console.print(f"  skipped {skipped} ANNOTATION score(s) whose name is no rubric nor "
                      "'overall'")


@calibrate.command("compare")
@click.argument("run_id", required=False)
@click.option("--quarter", default=None, help="YYYY-Qn (default: the current quarter).")
@policy_flag("--threshold", "--divergence", "threshold", key="calibration.divergence", kind=float,
             help="Recalibrate when |mean divergence| exceeds this many points.")
@policy_flag("--min-labels", key="calibration.min_labels", kind=int,
             help="An 'ok' needs at least this many labelled items (a 'recalibrate' counts from "
                  "calibration.min_labels_recalibrate).")
@policy_flag("--min-kappa", key="calibration.min_kappa", kind=float,
             help="Recalibrate when quadratic-weighted kappa is below this.")
@policy_flag("--max-loa", key="calibration.max_loa", kind=float,
             help="Recalibrate when the limits of agreement leave ±this many points.")
@policy_flag("--max-false-pass", key="calibration.max_false_pass", kind=float,
             help="Recalibrate when the judges pass more than this share of the lawyers' fails.")
@click.option("--scores", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Files-only mode: judge scores CSV (item_id, rubric, judge, score).")
@click.option("--labels", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Files-only mode: labels CSV/JSONL.")
@click.option("--rubric-set", default=DEFAULT_RUBRIC_SET, show_default=True,
              help="Rubric set of files-only mode.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report as JSON.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@policy_options
def compare_cmd(run_id: str | None, quarter: str | None, threshold: float | None,
                min_labels: int | None, min_kappa: float | None, max_loa: float | None,
                max_false_pass: float | None, scores: Path | None, labels: Path | None,
                rubric_set: str, out: Path | None, as_json: bool, policy_file: Path | None,
                overrides: tuple[str, ...]) -> None:
    """Compare the judges of RUN_ID (or --scores/--labels files) with the lawyers.

    Each rubric, each judge and the ensemble get a verdict: recalibrate (with every reason that
    fired), ok, or insufficient (too few labelled items for either). The thresholds are the
    policy's [calibration] section (`legal-judge policy show`); a flag may only tighten one.
    """
    if (scores is None) != (labels is None) or (run_id is None) == (scores is None):
        raise ConfigError("give either RUN_ID or both --scores and --labels",
                          code="calibration-args",
                          fix="legal-judge calibrate compare RUN_ID, or --scores S.csv --labels L.csv")
    policy = policy_in_force(policy_file, overrides, {
        "calibration.divergence": threshold, "calibration.min_labels": min_labels,
        "calibration.min_kappa": min_kappa, "calibration.max_loa": max_loa,
        "calibration.max_false_pass": max_false_pass})
    store = Store()
    try:
        data = (from_store(store, run_id) if run_id else
                from_files(scores, labels, rubric_set=rubric_set))  # type: ignore[arg-type]
        report = save_calibration(store, compare(data, quarter=quarter, policy=policy))
    finally:
        store.close()
    text = report.model_dump_json(indent=2)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
    if as_json:
        click.echo(text)
        return
    print_calibration(report, console)
    if out is not None:
        wrote(console, out, what="calibration report JSON")


@calibrate.command("fit")
@click.argument("calibration_id")
@click.option("--min-pairs", default=20, show_default=True,
              help="Skip a rubric of a judge with fewer labelled pairs.")
@click.option("--folds", default=5, show_default=True,
              help="Folds of the cross-validation that checks each correction.")
@json_option
def fit_cmd(calibration_id: str, min_pairs: int, folds: int, as_json: bool) -> None:
    """Fit a monotone (isotonic) correction per rubric per judge from a calibration.

    Each correction is kept only when it reduces the cross-validated (held-out) error.
    """
    if folds < 2:
        raise ConfigError(f"--folds {folds}: cross-validation needs at least 2 folds",
                          code="calibration-fit", fix="use --folds 5 (the default)")
    store = Store()
    try:
        correction = fit_correction(store, calibration_id, min_pairs=min_pairs, folds=folds)
    finally:
        store.close()
    if as_json:
        echo_json(correction.model_dump(mode="json"))
        return
    print_fit(correction, console)


@calibrate.command("apply")
@click.argument("run_id")
@click.argument("correction_id")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="JSONL of the corrected ensemble results (the store is not changed).")
@json_option
def apply_cmd(run_id: str, correction_id: str, out: Path, as_json: bool) -> None:
    """Write RUN_ID's ensemble results corrected with CORRECTION_ID (raw scores kept)."""
    store = Store()
    try:
        correction = load_correction(store, correction_id)
        run = store.get_run(run_id)
        results = store.load_results(run_id)
    finally:
        store.close()
    # The run's ensemble must be the one calibrated, as `run --calibration` requires: another
    # judge's error map would silently move this run's scores.
    judge_id = ensemble_judge_id(run["config"])
    rows = [correct_result(r, correction, judge_id=judge_id) if r.get("status") == "ok" else r
            for _, r in sorted(results.items())]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    if as_json:
        echo_json({"run_id": run_id, "correction_id": correction.id, "out": str(out),
                   "rows": len(rows), "corrected": sum(r.get("status") == "ok" for r in rows)})
        return
    wrote(console, out, len(rows), what=f"results corrected with {correction.id}")


@calibrate.command("estimate")
@click.argument("run_id")
@click.option("--calibration", "calibration_id", default=None, metavar="CAL",
              help="Estimate with this calibration of the run's ensemble (a new, named estimate; "
                   "the run shows the latest chosen). Default: the run's pinned estimate.")
@click.option("--min-labels", default=20, show_default=True,
              help="Fewer labelled items than this: a figure is not corrected.")
@click.option("--policy", "policy_file", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="The policy whose [calibration] age and label floor are "
                                 "checked (default: ./legal-judge.policy.toml, else bundled).")
@click.option("--json", "as_json", is_flag=True, help="Print the estimate as JSON.")
def estimate_cmd(run_id: str, calibration_id: str | None, min_labels: int,
                 policy_file: Path | None, as_json: bool) -> None:
    """RUN_ID's raw pass rate and rubric means beside the ones corrected for judge error.

    Computed once and pinned: with the calibration the run was scored with, else the run's own
    lawyer labels (PPI++, stratified for a stratified sample), else the latest calibration of
    its ensemble judge_id (transported). A later calibration never changes them; estimating
    again with --calibration CAL stores a new estimate, which the run then shows.
    """
    from legal_judge.calibration import choose_estimate, described

    policy = policy_in_force(policy_file)
    store = Store()
    try:
        row = choose_estimate(store, run_id, calibration_id=calibration_id,
                              min_labels=min_labels)
        run = store.get_run(run_id)
        shown = described(store, run, row, policy=policy) if row is not None else None
    finally:
        store.close()
    if row is None or shown is None:
        judge_id = ensemble_judge_id(run["config"])
        raise ConfigError(
            f"run {run_id} has no lawyer labels and no calibration of its ensemble judge_id "
            f"{judge_id} exists: its figures cannot be corrected for judge error",
            code="calibration-no-estimate",
            fix=f"label a sample: legal-judge calibrate sample {run_id}, then calibrate import")
    if as_json:
        echo_json(shown)
        return
    print_estimate(RunEstimate.model_validate(row["estimate"]), console)
    print_pin(shown, console)


@calibrate.command("history")
@click.option("--rubric", default=None, help="Only this rubric.")
@click.option("--judge", default="ensemble", show_default=True, help="Judge name.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
def history_cmd(rubric: str | None, judge: str, as_json: bool) -> None:
    """Divergence per rubric across quarters, with drift alerts."""
    store = Store()
    try:
        rows = calibration_history(store, rubric=rubric, judge=judge)
    finally:
        store.close()
    if as_json:
        echo_json([r.model_dump(mode="json") for r in rows])
        return
    _print_history(rows)


def _print_history(rows: list[HistoryRow]) -> None:
    cells = []
    for r in rows:
        # No space inside the interval: a narrow column wraps between words, never inside it.
        ci = f" [{_fmt(r.ci95[0])},{_fmt(r.ci95[1])}]" if r.ci95 else ""
        alerts = [a for a, on in (("drift", r.drift), ("judge changed", r.judge_changed),
                                  ("recalibrate", r.recalibrate)) if on]
        cells.append([r.rubric, r.quarter, r.judge_id or "—", str(r.n),
                      _fmt(r.mean_divergence) + ci, _fmt(r.previous_mean_divergence),
                      _fmt(r.kappa_quadratic),
                      styled(", ".join(alerts), "red") if r.drift else ", ".join(alerts)])
    print_table(console, "calibration history",
                [Col("rubric", keep=True), Col("quarter", keep=True), Col("judge_id", keep=True),
                 Col("n", numeric=True), Col("mean div [95% CI]", numeric=True),
                 Col("previous", numeric=True, optional=True),
                 Col("κ quad", numeric=True, optional=True), Col("alert")], cells,
                empty="no calibration yet: `legal-judge calibrate compare RUN_ID` makes one")
    drifted = sorted({r.rubric for r in rows if r.drift})
    if drifted:
        console.print(f"[red]drift alert[/red]: {', '.join(drifted)}: last quarter's mean "
                      "divergence lies outside this quarter's 95% CI")


calibrate.add_command(escalate_cmd)
calibrate.add_command(plan_cmd)

COMMANDS: list[click.Command] = [calibrate]

# Judge-change validation lives in its own module; it joins this group here (one-way import).
from legal_judge.commands.calibrate_validate import VALIDATION_COMMANDS  # noqa: E402

for _command in VALIDATION_COMMANDS:
    calibrate.add_command(_command)
