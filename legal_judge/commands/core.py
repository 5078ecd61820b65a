"""Core commands: validate, judge, run, demo, compare (``runs`` lives in commands/runs.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from legal_judge.benchmark.inputs import ItemSelection
from legal_judge.commands.ci_outputs import ci_options, write_ci_outputs
from legal_judge.commands.tables import Col, echo_json, print_table, styled, wrote
from legal_judge.config import store_path
from legal_judge.dataset import load_dataset, sample_dataset_path, summarize
from legal_judge.errors import ConfigError, GateFailure, NotFoundError, Problem
from legal_judge.store import Store

console = Console()
err_console = Console(stderr=True)


_SHOWN_WARNINGS = 10


@click.command()
@click.argument("dataset", type=click.Path(dir_okay=False, path_type=Path))
def validate(dataset: Path) -> None:
    """Check a benchmark dataset without running anything."""
    warnings: list[Problem] = []
    items = load_dataset(dataset, warnings=warnings)
    s = summarize(items)
    console.print(f"[green]valid[/green]: {dataset} — {s.rows} rows")
    for title, counts in (("jurisdictions", s.jurisdictions), ("systems under test",
                          s.systems_under_test), ("datasets", s.datasets)):
        console.print(f"  {title}: " + ", ".join(f"{k} ({v})" for k, v in counts.items()))
    for w in warnings[:_SHOWN_WARNINGS]:
        # The file's own words: plain text, never rich markup.
        console.print(Text(f"warning: {w}"), soft_wrap=True)
    if len(warnings) > _SHOWN_WARNINGS:
        console.print(f"warning: ... and {len(warnings) - _SHOWN_WARNINGS} more rows the same "
                      "way (each is read as the boolean it says)")


@click.command()
@click.option("--judge", "spec", required=True, help="Judge spec, e.g. openai:gpt-4o or simulated:fair.")
@click.option("--item", "item_id", required=True, help="Item id in the dataset.")
@click.option("--dataset", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Dataset file (default: the bundled sample).")
@click.option("--no-cache", is_flag=True, help="Do not read the provider cache.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
def judge(spec: str, item_id: str, dataset: Path | None, no_cache: bool, as_json: bool) -> None:
    """Judge one item with one judge and print the verdict."""
    from legal_judge.judge.judge import Judge, JudgeConfig
    from legal_judge.providers.registry import get_provider

    items = {i.id: i for i in load_dataset(dataset or sample_dataset_path())}
    if item_id not in items:
        raise NotFoundError(f"no item '{item_id}' in the dataset",
                            fix=f"use one of: {', '.join(list(items)[:8])} ...")
    store = Store()
    j = Judge(JudgeConfig(spec=spec), get_provider(spec), store=store, use_cache=not no_cache)
    verdict = asyncio.run(_judge_once(j, items[item_id]))
    if as_json:
        click.echo(verdict.model_dump_json(indent=2))
        return
    rows: list[list[Any]] = [[rubric, f"{score:g}", verdict.rationales.get(rubric, "")]
                             for rubric, score in verdict.scores.items()]
    if verdict.hallucination:
        rows.append(["hallucination", verdict.hallucination,
                     verdict.rationales.get("hallucination", "")])
    print_table(console, f"{spec} on {item_id} (judge_id {verdict.judge_id})",
                [Col("rubric", keep=True), Col("score", keep=True, numeric=True), Col("rationale")],
                rows)
    console.print(f"status: {verdict.status}  overall: {verdict.overall}  "
                  f"cost: {_money(verdict.cost_usd)}  cached: {verdict.cached}")
    if verdict.reason:
        console.print(f"reason: {verdict.reason}")


async def _judge_once(j: Any, item: Any) -> Any:
    try:
        return await j.judge(item)
    finally:
        await j.provider.aclose()


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _progress_bar() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), TimeRemainingColumn(),
        console=err_console, transient=False,
    )


def _execute(dataset: str | None, ensemble: str, *, resume: str | None, no_cache: bool,
             run_id: str | None, quiet: bool, calibration: str | None = None,
             lookup: bool = False, selection: ItemSelection | None = None) -> dict[str, Any]:
    from legal_judge.benchmark.inputs import resolve_inputs
    from legal_judge.benchmark.progress import RunProgress
    from legal_judge.benchmark.runner import execute_plan, plan_run

    store = Store()
    inputs = resolve_inputs(store, dataset, ensemble, resume=resume, selection=selection)
    items, config = inputs.items, inputs.config
    if lookup and not resume:
        config = config.model_copy(update={"citation_lookup": True})
    # Everything is checked before the run exists and before a progress bar is drawn.
    plan = plan_run(items, config, store=store, run_id=resume or run_id, resume=bool(resume),
                    use_cache=not no_cache, calibration=calibration)
    extra: dict[str, Any] = {"dataset": str(dataset) if dataset else None,
                             "ensemble_path": ensemble}
    if inputs.selection is not None:
        extra["selection"] = inputs.selection

    def go(on_progress: Any) -> Any:
        return asyncio.run(execute_plan(plan, on_progress=on_progress, extra_config=extra))

    if quiet:
        outcome = go(None)
    else:
        with _progress_bar() as bar:
            task = bar.add_task("judging", total=len(plan.items) or None, stats="")

            def on_progress(p: RunProgress) -> None:
                bar.update(task, completed=p.items_done, total=p.items_total or None, stats=(
                    f"calls {p.calls} cached {p.cached} retries {p.retries} failed {p.failures} "
                    f"tokens {p.input_tokens + p.output_tokens:,} cost ${p.cost_usd:.4f}"))

            outcome = go(on_progress)
    return {"run": store.get_run(outcome.run_id), "outcome": outcome}


def export_and_say(store: Store, run_id: str, path: Path, *, fmt: str | None = None) -> None:
    """Write the run's results file (``run --out``, ``runs export``) and say so."""
    from legal_judge.benchmark.export import export_run

    result = export_run(store, run_id, path, fmt=fmt)
    wrote(console, result.path, result.rows,
          what=f"{result.pending} item(s) not judged yet" if result.pending else None)


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


def _ci(pair: list[float] | None, spec: str, sep: str) -> str:
    # A single item or pair has no confidence interval (stats return None), not a zero-width one.
    return "n/a" if not pair else f"{pair[0]:{spec}}{sep}{pair[1]:{spec}}"


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
                     _ci(m["ci95"], ".2f", "–"),
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
                  f"{len(s['flagged_for_review'])}  citation overrides (rule 1): "
                  f"{len(s['citation_overrides'])}")
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


@click.command()
@click.argument("dataset", required=False)
@click.option("--ensemble", default="default", show_default=True,
              help="Ensemble TOML file, or a bundled one: default, demo.")
@click.option("--resume", "resume", default=None, help="Finish an interrupted run.")
@click.option("--run-id", default=None, help="Id for the new run (default: generated).")
@click.option("--no-cache", is_flag=True, help="Do not read the provider cache.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write results as .csv, .jsonl or .parquet (as `runs export`).")
@click.option("--limit", type=int, default=None,
              help="Judge only the first N items (try before you pay).")
@click.option("--sample", type=int, default=None,
              help="Judge N items drawn at random, stratified by jurisdiction.")
@click.option("--seed", type=int, default=None, help="Seed of --sample (drawn and shown if omitted).")
@click.option("--ids", default=None, help="Judge only these item ids (comma-separated).")
@click.option("--calibration", default=None,
              help="Apply the correction fitted by `calibrate fit` (raw scores are kept).")
@click.option("--lookup", is_flag=True,
              help="Verify citations with CourtListener (COURTLISTENER_TOKEN) during the run.")
@click.option("--batch", is_flag=True,
              help="Send OpenAI/Anthropic judge calls as provider batch jobs (batch prices); "
                   "collect later with --resume RUN_ID --batch.")
@click.option("--no-wait", is_flag=True,
              help="With --batch: submit, merge what has ended, and return; finish later with "
                   "--resume RUN_ID --batch.")
@ci_options
@click.option("--quiet", is_flag=True, help="No progress bar.")
def run(dataset: str | None, ensemble: str, resume: str | None, run_id: str | None,
        no_cache: bool, out: Path | None, limit: int | None, sample: int | None,
        seed: int | None, ids: str | None, calibration: str | None, lookup: bool, batch: bool,
        no_wait: bool, junit: Path | None, summary_md: Path | None, quiet: bool) -> None:
    """Score DATASET (a file, or langfuse:NAME) with the three-judge ensemble."""
    if no_wait and not batch:
        raise ConfigError("--no-wait needs --batch", code="batch-options",
                          fix="add --batch, or drop --no-wait")
    selection = ItemSelection.from_options(limit=limit, sample=sample, seed=seed, ids=ids)
    if out is not None:
        from legal_judge.benchmark.export import check_export_path

        check_export_path(out)  # before anything is paid for
    if batch:
        if calibration or lookup:
            raise ConfigError("--batch does not combine with --calibration or --lookup yet",
                              code="batch-options", fix="drop --batch for this run")
        from legal_judge.batch.cli import run_batch_cli

        res = run_batch_cli(dataset, ensemble, resume=resume, run_id=run_id, no_cache=no_cache,
                            quiet=quiet, wait=not no_wait, selection=selection)
    else:
        res = _execute(dataset, ensemble, resume=resume, no_cache=no_cache, run_id=run_id,
                       quiet=quiet, calibration=calibration, lookup=lookup, selection=selection)
    outcome = res["outcome"]
    print_summary(res["run"])
    if out is not None and outcome.status == "completed":
        export_and_say(Store(), outcome.run_id, out)
    from legal_judge.reports.ci import run_suite

    write_ci_outputs(console, lambda: run_suite(Store(), outcome.run_id), junit=junit,
                     summary_md=summary_md)
    _end_unfinished(outcome, batch=batch)


def _end_unfinished(outcome: Any, *, batch: bool = False) -> None:
    """Say how to finish a run that did not complete; an interrupted run exits 130."""
    if outcome.status == "completed":
        return
    if outcome.status == "stopped":
        for w in outcome.warnings:
            if w.startswith("cost limit"):
                console.print(f"[yellow]stopped:[/yellow] {w}", soft_wrap=True, highlight=False)
    console.print(f"[yellow]run {outcome.status}[/yellow]: finish it with "
                  f"`legal-judge run --resume {outcome.run_id}{' --batch' if batch else ''}`",
                  soft_wrap=True)
    if outcome.status == "interrupted":
        # Ctrl-C must not look green in CI: the contract's "interrupted" exit code.
        raise click.exceptions.Exit(130)
    if outcome.status == "stopped":
        # Stopped by its cost limit: part of the run is missing, so it is not green either
        # (it exited 0, and CI read a third of a run as a finished one).
        raise click.exceptions.Exit(1)


@click.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write results as .csv, .jsonl or .parquet (as `runs export`).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def demo(out: Path | None, quiet: bool) -> None:
    """Score the bundled sample with three simulated judges (no keys, no network)."""
    if out is not None:
        from legal_judge.benchmark.export import check_export_path

        check_export_path(out)
    res = _execute(str(sample_dataset_path()), "demo", resume=None, no_cache=False, run_id=None,
                   quiet=quiet)
    print_summary(res["run"])
    if out is not None and res["outcome"].status == "completed":
        export_and_say(Store(), res["outcome"].run_id, out)
    _end_unfinished(res["outcome"])
    console.print(
        "\nThis demo used simulated judges. To use real judges: set OPENAI_API_KEY, GEMINI_API_KEY "
        "and MISTRAL_API_KEY, then run\n  legal-judge run your_bench.jsonl --ensemble default\n"
        "or write your own ensemble TOML (see README)."
    )


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
                  _ci(r["ci95"], "+.3f", ".."),
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


COMMANDS: list[click.Command] = [validate, judge, run, demo, compare_cmd]
