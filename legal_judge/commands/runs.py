"""``legal-judge runs``: list, show and export stored runs."""

from __future__ import annotations

from pathlib import Path

import click

from legal_judge.commands.core import console, export_and_say, print_summary
from legal_judge.commands.tables import Col, echo_json, print_table
from legal_judge.store import Store

__all__ = ["COMMANDS", "runs"]


@click.group()
def runs() -> None:
    """List, show and export stored runs."""


@runs.command("list")
@click.option("--limit", default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
def runs_list(limit: int, as_json: bool) -> None:
    """Most recent runs."""
    rows = Store().list_runs(limit=limit)
    if as_json:
        echo_json(rows)
        return
    print_table(console, "Runs",
                [Col("run id", keep=True), Col("kind", optional=True), Col("status", keep=True),
                 Col("created"), Col("items", numeric=True), Col("results", numeric=True)],
                [[r["id"], r["kind"], r["status"], r["created_at"][:19].replace("T", " "),
                  str(r["items"]), str(r["results"])] for r in rows],
                empty="no runs yet: `legal-judge demo` makes one")


@runs.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the run (config and summary) as JSON.")
def runs_show(run_id: str, as_json: bool) -> None:
    """A run's summary."""
    store = Store()
    run = store.get_run(run_id)
    if run["summary"] is not None:
        # Labels arrive after a run: the corrected figures are computed when shown.
        from legal_judge.summary import corrected_figures

        run["summary"]["corrected"] = corrected_figures(store, run_id)
    if as_json:
        echo_json(run)
    else:
        print_summary(run)


@runs.command("export")
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl", "parquet"]), default=None,
              help="File format (default: from --out, else csv); parquet needs pyarrow.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write (default: RUN_ID.<format> here).")
def runs_export(run_id: str, fmt: str | None, out: Path | None) -> None:
    """Write a stored run as one row per item: ensemble and per-judge scores, rationales, reasons."""
    store = Store()
    run = store.get_run(run_id)
    path = out or Path(f"{run_id}.{fmt or 'csv'}")
    export_and_say(store, run_id, path, fmt=fmt)
    if run["status"] != "completed":
        console.print(f"run {run_id} is {run['status']}: finish it with "
                      f"`legal-judge run --resume {run_id}`", soft_wrap=True, markup=False)


COMMANDS: list[click.Command] = [runs]
