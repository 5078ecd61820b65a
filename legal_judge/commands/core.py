"""Core commands: validate, judge, run, demo, runs, compare."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from legal_judge.dataset import load_dataset, sample_dataset_path, summarize
from legal_judge.errors import ConfigError, GateFailure, NotFoundError
from legal_judge.store import Store

console = Console()
err_console = Console(stderr=True)


@click.command()
@click.argument("dataset", type=click.Path(dir_okay=False, path_type=Path))
def validate(dataset: Path) -> None:
    """Check a benchmark dataset without running anything."""
    items = load_dataset(dataset)
    s = summarize(items)
    console.print(f"[green]valid[/green]: {dataset} — {s.rows} rows")
    for title, counts in (("jurisdictions", s.jurisdictions), ("systems under test",
                          s.systems_under_test), ("datasets", s.datasets)):
        console.print(f"  {title}: " + ", ".join(f"{k} ({v})" for k, v in counts.items()))


@click.command()
@click.option("--judge", "spec", required=True, help="Judge spec, e.g. openai:gpt-4o or simulated:fair.")
@click.option("--item", "item_id", required=True, help="Item id in the dataset.")
@click.option("--dataset", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Dataset file (default: the bundled sample).")
@click.option("--no-cache", is_flag=True, help="Do not read the provider cache.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
def judge(spec: str, item_id: str, dataset: Path | None, no_cache: bool, as_json: bool) -> None:
    """Judge one item with one judge and print the verdict."""
    from legal_judge.judge import Judge, JudgeConfig
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
    table = Table(title=f"{spec} on {item_id} (judge_id {verdict.judge_id})")
    table.add_column("rubric")
    table.add_column("score")
    table.add_column("rationale")
    for rubric, score in verdict.scores.items():
        table.add_row(rubric, f"{score:g}", verdict.rationales.get(rubric, ""))
    if verdict.hallucination:
        table.add_row("hallucination", verdict.hallucination, verdict.rationales.get("hallucination", ""))
    console.print(table)
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
             out: Path | None, run_id: str | None, quiet: bool,
             calibration: str | None = None, lookup: bool = False) -> dict[str, Any]:
    from legal_judge.runner import RunProgress, run_benchmark, run_inputs

    store = Store()
    items, config = run_inputs(store, dataset, ensemble, resume=resume)
    if lookup and not resume:
        config = config.model_copy(update={"citation_lookup": True})
    def go(on_progress: Any) -> Any:
        return asyncio.run(run_benchmark(
            items, config, store=store, run_id=resume or run_id, resume=bool(resume),
            use_cache=not no_cache, on_progress=on_progress, calibration=calibration,
            extra_config={"dataset": str(dataset) if dataset else None, "ensemble_path": ensemble},
        ))

    if quiet:
        outcome = go(None)
    else:
        with _progress_bar() as bar:
            task = bar.add_task("judging", total=len(items) or None, stats="")

            def on_progress(p: RunProgress) -> None:
                bar.update(task, completed=p.items_done, total=p.items_total or None, stats=(
                    f"calls {p.calls} cached {p.cached} retries {p.retries} failed {p.failures} "
                    f"tokens {p.input_tokens + p.output_tokens:,} cost ${p.cost_usd:.4f}"))

            outcome = go(on_progress)
    run = store.get_run(outcome.run_id)
    if out is not None and outcome.status == "completed":
        from legal_judge.export import export_results

        export_results(store, outcome.run_id, out)
    return {"run": run, "outcome": outcome}


def _ci(pair: list[float] | None, spec: str, sep: str) -> str:
    # A single item or pair has no confidence interval (stats return None), not a zero-width one.
    return "n/a" if not pair else f"{pair[0]:{spec}}{sep}{pair[1]:{spec}}"


def print_summary(run: dict[str, Any]) -> None:
    """Render a run summary for a team lead."""
    s = run["summary"]
    if s is None:
        console.print(f"run {run['id']}: {run['status']} (no summary)")
        return
    console.print(f"\n[bold]Run {run['id']}[/bold] — {run['status']}")
    if s.get("simulated"):
        console.print("[yellow]Scored by SIMULATED judges (demo only, never a judge of record).[/yellow]")
    pr = s["pass_rate"]
    ci = s["pass_rate_ci95"]
    console.print(f"pass rate: {pr:.1%} (95% CI {ci[0]:.1%}–{ci[1]:.1%}) over {s['scored']} scored items"
                  if pr is not None else "pass rate: n/a (nothing scored)")
    table = Table(title="Ensemble scores per rubric (0–5)")
    for col in ("rubric", "n", "mean", "95% CI", "Krippendorff α (judges)"):
        table.add_column(col)
    for rubric, m in s["rubrics"].items():
        alpha = s["krippendorff_alpha"].get(rubric)
        table.add_row(rubric, str(m["n"]), f"{m['mean']:.2f}", _ci(m["ci95"], ".2f", "–"),
                      "n/a" if alpha is None else f"{alpha:.2f}")
    console.print(table)
    jt = Table(title="Per judge")
    for col in ("judge", "judge_id", "ok", "inconclusive", "error", "pass rate", "cost"):
        jt.add_column(col)
    for name, j in s["judges"].items():
        jt.add_row(name, j["judge_id"], str(j["ok"]), str(j["inconclusive"]), str(j["error"]),
                   "n/a" if j["pass_rate"] is None else f"{j['pass_rate']:.1%}",
                   f"${j['cost_usd']:.4f}" + (" +unknown" if j["cost_unknown"] else ""))
    console.print(jt)
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
                  f"{calls['failed']}, retries {calls['retries']}); verdicts from the cache: "
                  f"{s.get('cached_verdicts', 0)}")
    console.print(f"tokens: {s['input_tokens']:,} in / "
                  f"{s['output_tokens']:,} out  cost: ${s['cost_usd']:.4f}"
                  + ("" if s["cost_complete"] else " (some prices unknown)"))
    for w in s.get("warnings", [])[:10]:
        console.print(f"[yellow]warning:[/yellow] {w}")


@click.command()
@click.argument("dataset", required=False)
@click.option("--ensemble", default="default", show_default=True,
              help="Ensemble TOML file, or a bundled one: default, demo.")
@click.option("--resume", "resume", default=None, help="Finish an interrupted run.")
@click.option("--run-id", default=None, help="Id for the new run (default: generated).")
@click.option("--no-cache", is_flag=True, help="Do not read the provider cache.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write results as .jsonl or .csv.")
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
@click.option("--quiet", is_flag=True, help="No progress bar.")
def run(dataset: str | None, ensemble: str, resume: str | None, run_id: str | None,
        no_cache: bool, out: Path | None, calibration: str | None, lookup: bool, batch: bool,
        no_wait: bool, quiet: bool) -> None:
    """Score DATASET (a file, or langfuse:NAME) with the three-judge ensemble."""
    if no_wait and not batch:
        raise ConfigError("--no-wait needs --batch", code="batch-options",
                          fix="add --batch, or drop --no-wait")
    if batch:
        if calibration or lookup:
            raise ConfigError("--batch does not combine with --calibration or --lookup yet",
                              code="batch-options", fix="drop --batch for this run")
        from legal_judge.batch.cli import run_batch_cli

        res = run_batch_cli(dataset, ensemble, resume=resume, run_id=run_id, no_cache=no_cache,
                            out=out, quiet=quiet, wait=not no_wait)
    else:
        res = _execute(dataset, ensemble, resume=resume, no_cache=no_cache, out=out,
                       run_id=run_id, quiet=quiet, calibration=calibration, lookup=lookup)
    print_summary(res["run"])
    if res["outcome"].status != "completed":
        console.print(f"[yellow]run {res['outcome'].status}[/yellow]: finish it with "
                      f"`legal-judge run --resume {res['outcome'].run_id}"
                      f"{' --batch' if batch else ''}`")


@click.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write results as .jsonl or .csv.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def demo(out: Path | None, quiet: bool) -> None:
    """Score the bundled sample with three simulated judges (no keys, no network)."""
    res = _execute(str(sample_dataset_path()), "demo", resume=None, no_cache=False, out=out, run_id=None,
                   quiet=quiet)
    print_summary(res["run"])
    console.print(
        "\nThis demo used simulated judges. To use real judges: set OPENAI_API_KEY, GEMINI_API_KEY "
        "and MISTRAL_API_KEY, then run\n  legal-judge run your_bench.jsonl --ensemble default\n"
        "or write your own ensemble TOML (see README)."
    )


@click.group()
def runs() -> None:
    """List and show stored runs."""


@runs.command("list")
@click.option("--limit", default=20, show_default=True)
def runs_list(limit: int) -> None:
    """Most recent runs."""
    table = Table(title="Runs")
    for col in ("run id", "kind", "status", "created", "items", "results"):
        table.add_column(col)
    for r in Store().list_runs(limit=limit):
        table.add_row(r["id"], r["kind"], r["status"], r["created_at"][:19], str(r["items"]),
                      str(r["results"]))
    console.print(table)


@runs.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
def runs_show(run_id: str, as_json: bool) -> None:
    """A run's summary."""
    run = Store().get_run(run_id)
    if as_json:
        click.echo(json.dumps(run, indent=2, default=str))
    else:
        print_summary(run)


@click.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--threshold", default=0.25, show_default=True,
              help="A rubric regresses when it drops significantly by more than this (points).")
@click.option("--alpha", default=0.05, show_default=True)
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when a regression is found.")
@click.option("--json", "as_json", is_flag=True)
def compare_cmd(run_a: str, run_b: str, threshold: float, alpha: float, fail_on_regression: bool,
                as_json: bool) -> None:
    """Paired comparison of two runs on the same items (RUN_B against baseline RUN_A)."""
    from legal_judge.compare import compare_runs

    report = compare_runs(Store(), run_a, run_b, threshold=threshold, alpha=alpha)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        _print_compare(report)
    if fail_on_regression and report["regressions"]:
        raise GateFailure(f"{len(report['regressions'])} rubric(s) regressed: "
                          + ", ".join(report["regressions"]),
                          fix="inspect the regressed items listed above before releasing")


def _print_compare(report: dict[str, Any]) -> None:
    for w in report["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {w}")
    table = Table(title=f"{report['run_b']} vs {report['run_a']} ({report['n_items']} paired items)")
    for col in ("rubric", "mean diff (B-A)", "95% CI", "test", "p", "regressed"):
        table.add_column(col)
    for rubric, r in report["rubrics"].items():
        table.add_row(rubric, f"{r['mean_difference']:+.3f}",
                      _ci(r["ci95"], "+.3f", ".."), r["test"], f"{r['p_value']:.4f}",
                      "YES" if r["regressed"] else "")
    console.print(table)
    pf = report["pass_rate"]
    console.print(f"pass rate {pf['rate_a']:.1%} -> {pf['rate_b']:.1%} (McNemar exact p = "
                  f"{pf['p_value']:.4f})")
    if report["regressed_items"]:
        console.print("regressed items: " + ", ".join(report["regressed_items"][:30]))


COMMANDS: list[click.Command] = [validate, judge, run, demo, runs, compare_cmd]
