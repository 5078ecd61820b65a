"""``legal-judge report`` (HTML/Markdown/JSON of a run, audit, calibration or debias experiment) and
``legal-judge doctor`` (the setup checks)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from legal_judge.errors import ConfigError

console = Console()


@click.command("report")
@click.argument("entity_id", metavar="ID")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write a self-contained HTML report (inline charts, no scripts, prints well).")
@click.option("--md", "md_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the same content as Markdown (for pull requests).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the same content as JSON.")
def report(entity_id: str, html_path: Path | None, md_path: Path | None,
           json_path: Path | None) -> None:
    """Write the report of a run, audit, calibration or debias experiment (kind found from ID)."""
    from legal_judge.reports import build_report, write_report
    from legal_judge.store import Store

    if html_path is None and md_path is None and json_path is None:
        raise ConfigError("no output file given", code="report-no-output",
                          fix="add --html report.html (and/or --md report.md, --json report.json)")
    store = Store()
    try:
        doc = build_report(store, entity_id)
    finally:
        store.close()
    written = write_report(doc, html=html_path, markdown=md_path, json_path=json_path)
    console.print(f"{doc.kind} report {doc.id}: {len(doc.sections)} sections, "
                  f"{len(doc.charts())} charts, {len(doc.tables())} tables")
    for path in written:
        console.print(f"  wrote {path}", soft_wrap=True, highlight=False, markup=False)


@click.command("doctor")
@click.option("--ensemble", default="default", show_default=True,
              help="Ensemble TOML file to check, or a bundled one: default, demo.")
@click.option("--timeout", "timeout_s", default=5.0, show_default=True,
              help="Seconds to wait for Langfuse.")
def doctor(ensemble: str, timeout_s: float) -> None:
    """Check the setup: versions, keys (never printed), store, ensemble, Langfuse; exit 2 on a problem."""
    from legal_judge.doctor import run_doctor

    result = run_doctor(ensemble=ensemble, timeout_s=timeout_s)
    for check in result.checks:
        style = {"ok": "green", "info": "cyan", "problem": "red"}[check.status]
        console.print(f"{check.status:>7}", style=style, end="")
        console.print(f"  {check.name}: {check.detail}", soft_wrap=True, highlight=False,
                      markup=False)
        if check.fix:
            console.print(f"           fix: {check.fix}", soft_wrap=True, highlight=False,
                          markup=False)
    problems = result.problems
    if problems:
        console.print(f"\n{len(problems)} problem(s) found.", highlight=False)
        raise click.exceptions.Exit(2)
    console.print("\nall checks passed.", highlight=False)


COMMANDS: list[click.Command] = [report, doctor]
