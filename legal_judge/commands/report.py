"""``legal-judge report`` (HTML/Markdown/JSON of a run, audit, calibration or debias experiment) and
``legal-judge doctor`` (the setup checks)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from legal_judge.commands.json_out import json_option
from legal_judge.commands.policy import policy_options, release_flags
from legal_judge.commands.tables import echo_json
from legal_judge.errors import ConfigError

console = Console()


@click.command("report", short_help="Write the report of a run, audit, calibration or debias experiment.")
@click.argument("ids", metavar="ID [RUN_B]", nargs=-1)
@click.option("--site", "site_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Instead of one report: write a static site of the whole store into this "
                   "folder (an index of runs, audits, calibrations, validations and "
                   "experiments, each linking its report; offline).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write a self-contained HTML report (inline charts, no network, prints well).")
@click.option("--md", "md_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the same content as Markdown (for pull requests).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the same content as JSON.")
@release_flags
@policy_options
def report(ids: tuple[str, ...], site_dir: Path | None, html_path: Path | None, md_path: Path | None,
           json_path: Path | None, threshold: float | None, alpha: float | None,
           policy_file: Path | None, overrides: tuple[str, ...]) -> None:
    """Write the report of a run, audit, calibration or debias experiment (kind found from ID),
    or, given two run ids, the comparison of RUN_B against baseline ID (the release decision
    under the [release] policy, as `compare` makes it)."""
    from legal_judge.commands.compare import release_policy_in_force
    from legal_judge.reports import build_comparison_report, build_report, write_report
    from legal_judge.store import Store

    if site_dir is not None:
        if ids or html_path or md_path or json_path:
            raise ConfigError("--site writes every report of the store; it takes no ID, --html, "
                              "--md or --json", code="report-site",
                              fix=f"legal-judge report --site {site_dir}, or legal-judge report "
                                  "ID --html r.html for one report")
        _write_site(site_dir)
        return
    if not ids:
        raise ConfigError("report needs an ID (or --site DIR for the whole store)",
                          code="report-ids",
                          fix="legal-judge report ID --html r.html (`legal-judge runs list` "
                              "shows ids), or legal-judge report --site site/")
    if len(ids) > 2:
        raise ConfigError(f"report takes one id or two run ids, not {len(ids)}",
                          code="report-ids",
                          fix="legal-judge report ID --html r.html, or report RUN_A RUN_B --html c.html")
    if html_path is None and md_path is None and json_path is None:
        raise ConfigError("no output file given", code="report-no-output",
                          fix="add --html report.html (and/or --md report.md, --json report.json)")
    store = Store()
    try:
        if len(ids) == 2:
            policy = release_policy_in_force(console, policy_file, overrides,
                                             threshold=threshold, alpha=alpha)
            doc = build_comparison_report(store, ids[0], ids[1], policy=policy,
                                          alpha=0.05 if alpha is None else alpha)
        else:
            doc = build_report(store, ids[0])
    finally:
        store.close()
    written = write_report(doc, html=html_path, markdown=md_path, json_path=json_path)
    console.print(f"{doc.kind} report {doc.id}: {len(doc.sections)} sections, "
                  f"{len(doc.charts())} charts, {len(doc.tables())} tables",
                  soft_wrap=True, highlight=False, markup=False)
    for path in written:
        console.print(f"  wrote {path}", soft_wrap=True, highlight=False, markup=False)


def _write_site(folder: Path) -> None:
    from legal_judge.reports.site import write_site
    from legal_judge.store import Store

    store = Store()
    try:
        result = write_site(store, folder)
    finally:
        store.close()
    missing = [e for e in result.entries if e.href is None]
    console.print(f"site of {len(result.entries)} entries: {result.reports} reports written"
                  + (f", {len(missing)} without a report (the index says why)" if missing else ""),
                  soft_wrap=True, highlight=False, markup=False)
    for e in missing:
        console.print(f"  {e.kind} {e.id}: {e.problem}", soft_wrap=True, highlight=False,
                      markup=False)
    console.print(f"  wrote {result.index} (open it in a browser; it works offline)",
                  soft_wrap=True, highlight=False, markup=False)


@click.command("doctor", short_help="Check the setup: versions, keys (never printed), store, ensemble, Langfuse.")
@click.option("--ensemble", default="default", show_default=True,
              help="Ensemble TOML file to check, or a bundled one: default, demo.")
@click.option("--timeout", "timeout_s", default=5.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Seconds to wait for Langfuse, and for each judge with --ping.")
@click.option("--ping", is_flag=True,
              help="Send one 1-token request per judge (through its SDK, one retry at most) "
                   "and report each endpoint reachable or not.")
@json_option
def doctor(ensemble: str, timeout_s: float, ping: bool, as_json: bool) -> None:
    """Check the setup: versions, keys (never printed), store, ensemble, Langfuse; exit 2 on a problem.

    With --ping, also whether each judge's endpoint answers.
    """
    from legal_judge.doctor import run_doctor

    result = run_doctor(ensemble=ensemble, timeout_s=timeout_s, ping=ping)
    if as_json:
        echo_json(result.as_dict(pinged=ping))
        if result.problems:
            raise click.exceptions.Exit(2)
        return
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
    console.print("\nall checks passed." + ("" if ping else " The judges' endpoints were not "
                                           "contacted: add --ping to check them."),
                  highlight=False, soft_wrap=True)


COMMANDS: list[click.Command] = [report, doctor]
