"""Core commands: validate, run, demo (``judge`` lives in commands/judging.py, ``runs`` in
commands/runs.py, ``compare`` in commands/compare.py, the run summary they print in
commands/run_render.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from legal_judge.benchmark.inputs import ItemSelection
from legal_judge.commands.batches import batch_options, check_no_wait
from legal_judge.commands.ci_outputs import check_ci_paths, write_ci_outputs
from legal_judge.commands.json_out import json_option, json_output
from legal_judge.commands.policy import gate_options, policy_in_force
from legal_judge.commands.run_render import print_run_gate, print_summary, run_document
from legal_judge.commands.tables import wrote
from legal_judge.dataset import load_dataset, sample_dataset_path, summarize
from legal_judge.errors import ConfigError, Problem
from legal_judge.store import Store

if TYPE_CHECKING:
    from legal_judge.commands.json_out import JsonDocument
    from legal_judge.policy import PolicyInForce

__all__ = ["COMMANDS", "console", "export_and_say"]

console = Console()
err_console = Console(stderr=True)


_SHOWN_WARNINGS = 10


@click.command()
@click.argument("dataset", type=click.Path(dir_okay=False, path_type=Path))
@json_option
def validate(dataset: Path, as_json: bool) -> None:
    """Check a benchmark dataset without running anything."""
    warnings: list[Problem] = []
    items = load_dataset(dataset, warnings=warnings)
    s = summarize(items)
    if as_json:
        from legal_judge.commands.tables import echo_json

        echo_json({"dataset": str(dataset), "valid": True, "rows": s.rows,
                   "jurisdictions": s.jurisdictions, "systems_under_test": s.systems_under_test,
                   "datasets": s.datasets, "warnings": [str(w) for w in warnings]})
        return
    console.print(f"[green]valid[/green]: {dataset} — {s.rows} rows")
    for title, counts in (("jurisdictions", s.jurisdictions), ("systems under test",
                          s.systems_under_test), ("datasets", s.datasets)):
        console.print(f"  {title}: " + ", ".join(f"{k} ({v})" for k, v in counts.items()))
    for w in warnings[:_SHOWN_WARNINGS]:
        # The file's own words: plain text, never rich markup.
        console.print(Text(f"warning: {w}"), soft_wrap=True)
    if len(warnings) > _SHOWN_WARNINGS:
        console.print(f"warning: ... and {len(warnings) - _SHOWN_WARNINGS} more rows read "
                      "the same ways as above")


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
             lookup: bool = False, selection: ItemSelection | None = None,
             release: str | None = None) -> dict[str, Any]:
    from legal_judge.benchmark.inputs import resolve_inputs
    from legal_judge.benchmark.pipeline import RunProgress
    from legal_judge.benchmark.runner import execute_plan, plan_run

    store = Store()
    inputs = resolve_inputs(store, dataset, ensemble, resume=resume, selection=selection)
    items, config = inputs.items, inputs.config
    if lookup and not resume:
        config = config.model_copy(update={"citation_lookup": True})
    # Everything is checked before the run exists and before a progress bar is drawn.
    plan = plan_run(items, config, store=store, run_id=resume or run_id, resume=bool(resume),
                    use_cache=not no_cache, calibration=calibration)
    if resume and not all(j.use_cache for j in plan.judges):
        err_console.print(f"run {resume} was started with --no-cache: its resume does not read "
                          "the cache either", soft_wrap=True, markup=False, highlight=False)
    extra = inputs.run_config(dataset, ensemble, release=release)
    # The run is created, its items stored as the dataset is read again, before a bar is drawn.
    plan.start(extra_config=extra)

    from legal_judge.providers.retry import counting_retries

    def go(on_progress: Any) -> Any:
        return asyncio.run(execute_plan(plan, on_progress=on_progress))

    if quiet:
        outcome = go(None)
    else:
        with _progress_bar() as bar, counting_retries() as tally:
            task = bar.add_task("judging", total=plan.progress.items_total or None, stats="")

            def on_progress(p: RunProgress) -> None:
                p.retries = tally.count
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


@click.command()
@click.argument("dataset", required=False)
@click.option("--ensemble", default="default", show_default=True,
              help="Ensemble TOML file, or a bundled one: default, demo.")
@click.option("--resume", "resume", default=None, help="Finish an interrupted run.")
@click.option("--run-id", default=None, help="Id for the new run (default: generated).")
@click.option("--shard", default=None, metavar="K/N",
              help="Judge shard K of N of DATASET under --run-id (one per CI runner); the run "
                   "completes when its last shard does.")
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
@batch_options("OpenAI/Anthropic judge calls", "batch prices", "--resume RUN_ID --batch")
@click.option("--release", default=None,
              help="Name the release this run judges: stored with the run, and a tag and "
                   "metadata on its Langfuse traces.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@gate_options
def run(dataset: str | None, ensemble: str, resume: str | None, run_id: str | None,
        no_cache: bool, out: Path | None, limit: int | None, sample: int | None,
        seed: int | None, ids: str | None, calibration: str | None, lookup: bool, batch: bool,
        no_wait: bool, release: str | None, junit: Path | None, summary_md: Path | None,
        policy_file: Path | None, overrides: tuple[str, ...], quiet: bool, as_json: bool,
        shard: str | None = None) -> None:
    """Score DATASET (a file, or langfuse:NAME) with the three-judge ensemble.

    Exits 1 when the share of INCONCLUSIVE items is above the policy's
    run.max_inconclusive_share, and 3 when no item could be judged (resume it).
    """
    check_no_wait(no_wait, batch, code="batch-options")
    release = _release_name(release, resume=resume)
    policy = policy_in_force(policy_file, overrides)  # a defect in it costs nothing yet
    selection = ItemSelection.from_options(limit=limit, sample=sample, seed=seed, ids=ids)
    if out is not None:
        from legal_judge.benchmark.export import check_export_path

        check_export_path(out)  # before anything is paid for
    check_ci_paths(junit=junit, summary_md=summary_md)
    if shard is not None and (batch or resume or lookup):
        raise ConfigError("--shard does not combine with --batch, --resume or --lookup",
                          code="shard-options",
                          fix="rerun the same --shard command to resume a shard")
    with json_output(as_json) as doc:
        _run(dataset, ensemble, resume=resume, run_id=run_id, no_cache=no_cache, out=out,
             calibration=calibration, lookup=lookup, batch=batch, no_wait=no_wait,
             selection=selection, junit=junit, summary_md=summary_md, policy=policy,
             quiet=quiet or as_json, doc=doc, release=release, shard=shard)


def _run(dataset: str | None, ensemble: str, *, resume: str | None, run_id: str | None,
         no_cache: bool, out: Path | None, calibration: str | None, lookup: bool, batch: bool,
         no_wait: bool, selection: ItemSelection, junit: Path | None, summary_md: Path | None,
         policy: PolicyInForce, quiet: bool, doc: JsonDocument, release: str | None,
         shard: str | None) -> None:
    """``run`` once its options are checked: judge, print, gate; ``doc`` gets the run's JSON."""
    if shard is not None:
        from legal_judge.commands.shards import run_shard_cli

        shard_res = run_shard_cli(console, dataset, ensemble, run_id=run_id, shard=shard,
                                  no_cache=no_cache, calibration=calibration, selection=selection,
                                  release=release)
        if shard_res.get("pending"):
            # This shard is done and the run waits for the others (said): the shard's run.
            doc.set(run_document(shard_res["run"], gate=None, policy=policy, out=None))
            return
        res = shard_res
    elif batch:
        if calibration or lookup:
            raise ConfigError("--batch does not combine with --calibration or --lookup yet",
                              code="batch-options", fix="drop --batch for this run")
        from legal_judge.batch.cli import run_batch_cli

        res = run_batch_cli(dataset, ensemble, resume=resume, run_id=run_id, no_cache=no_cache,
                            quiet=quiet, wait=not no_wait, selection=selection,
                            release=release)
    else:
        res = _execute(dataset, ensemble, resume=resume, no_cache=no_cache, run_id=run_id,
                       quiet=quiet, calibration=calibration, lookup=lookup, selection=selection,
                       release=release)
    outcome = res["outcome"]
    print_summary(res["run"])
    gate = print_run_gate(res["run"], policy, resumable=True)
    doc.set(run_document(res["run"], gate=gate, policy=policy, out=out))
    if out is not None and outcome.status == "completed":
        export_and_say(Store(), outcome.run_id, out)
    from legal_judge.reports.ci import run_suite

    write_ci_outputs(console, lambda: run_suite(Store(), outcome.run_id, policy=policy,
                                                gate=gate), junit=junit, summary_md=summary_md)
    _end_unfinished(outcome, batch=batch)
    if gate is not None and not gate.passed:
        # Stored and completed: the [run] gate failed (3: a judge's calls failed, a resume
        # judges them again).
        raise click.exceptions.Exit(gate.exit_code)


#: Longest ``--release`` name (a Langfuse tag ``release:<name>`` stays readable in the UI).
_MAX_RELEASE = 100


def _release_name(release: str | None, *, resume: str | None) -> str | None:
    """``--release`` checked before anything exists: a name, on a new run only."""
    if release is None:
        return None
    name = release.strip()
    if not name or len(name) > _MAX_RELEASE or any(c.isspace() for c in name):
        raise ConfigError(f"--release {release!r} is not a release name",
                          code="release-name",
                          fix=f"give a name without spaces, at most {_MAX_RELEASE} characters "
                              "(e.g. --release v2.3.1)")
    if resume:
        raise ConfigError("--release names a new run; a resumed run keeps the release it was "
                          "started with", code="release-name",
                          fix=f"drop --release to finish run {resume}")
    return name


def _end_unfinished(outcome: Any, *, batch: bool = False) -> None:
    """Say how to finish a run that did not complete; an interrupted run exits 130."""
    if outcome.status == "completed":
        return
    resume = f"legal-judge run --resume {outcome.run_id}{' --batch' if batch else ''}"
    if outcome.status == "failed" and outcome.failure is not None:
        # One line that says why, then what to do; never a green exit for a run that judged
        # nothing (it exited 0 as "completed" with empty tables).
        console.print(f"[red]run failed:[/red] {escape(outcome.failure.reason)}", soft_wrap=True,
                      highlight=False)
        if outcome.failure.external:
            console.print(f"fix the cause (`legal-judge doctor --ping` checks every judge), "
                          f"then finish it with `{resume}` (calls already made are not "
                          "repeated)", soft_wrap=True, highlight=False, markup=False)
        else:
            console.print("a resume would reuse these verdicts: correct the judges (their "
                          "reasons are in `legal-judge runs export "
                          f"{outcome.run_id}`), then start a new run", soft_wrap=True,
                          highlight=False, markup=False)
        raise click.exceptions.Exit(outcome.failure.exit_code)
    if outcome.status == "stopped":
        for w in outcome.warnings:
            if w.startswith("cost limit"):
                console.print(f"[yellow]stopped:[/yellow] {w}", soft_wrap=True, highlight=False)
    console.print(f"[yellow]run {outcome.status}[/yellow]: finish it with `{resume}`",
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
@json_option
def demo(out: Path | None, quiet: bool, as_json: bool) -> None:
    """Score the bundled sample with three simulated judges (no keys, no network)."""
    if out is not None:
        from legal_judge.benchmark.export import check_export_path

        check_export_path(out)
    with json_output(as_json) as doc:
        res = _execute(str(sample_dataset_path()), "demo", resume=None, no_cache=False,
                       run_id=None, quiet=quiet or as_json)
        print_summary(res["run"])
        doc.set(run_document(res["run"], out=out))
        if out is not None and res["outcome"].status == "completed":
            export_and_say(Store(), res["outcome"].run_id, out)
        _end_unfinished(res["outcome"])
    if as_json:
        return
    console.print(
        "\nThis demo used simulated judges. To use real judges: set OPENAI_API_KEY, GEMINI_API_KEY "
        "and MISTRAL_API_KEY, then run\n  legal-judge run your_bench.jsonl --ensemble default\n"
        "or write your own ensemble TOML (see README)."
    )


COMMANDS: list[click.Command] = [validate, run, demo]
