"""`legal-judge check`: list every legal citation in an answer with a status and the reasons."""

from __future__ import annotations

import json
import sys
from datetime import date, datetime
from pathlib import Path

import click
from rich.console import Console

from legal_judge.checks.citations import CitationLookup, check_citations
from legal_judge.checks.report import FORCING_STATUSES, CitationReport
from legal_judge.commands.tables import Col, print_table, styled
from legal_judge.errors import ConfigError, InputError, Problem

__all__ = ["COMMANDS", "check"]

console = Console()
_STYLE = {
    "invalid": "bold red",
    "mismatch": "bold red",
    "not_found": "bold red",
    "suspicious": "yellow",
    "ambiguous": "yellow",
    "unverifiable": "dim",
    "verified": "green",
}


def _read_rows(path: Path) -> list[tuple[str, str]]:
    """Rows of (id, response): the project's dataset loader first; bare JSONL rows that only
    carry ``id`` and ``response`` (no prompt) are accepted too, since only answers are checked."""
    from legal_judge.dataset import load_dataset

    try:
        return [(item.id, item.response) for item in load_dataset(path)]
    except InputError as full_error:
        rows, problems = _bare_jsonl(path)
        if problems or not rows:
            raise full_error from None
        return rows


def _bare_jsonl(path: Path) -> tuple[list[tuple[str, str]], list[Problem]]:
    rows, problems = [], []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            rows.append((str(row["id"]), str(row["response"])))
        except (ValueError, KeyError, TypeError) as exc:
            problems.append(
                Problem(str(path), lineno, None, f"not a row with id and response ({exc})")
            )
    return rows, problems


def _inputs(file: Path | None, text: str | None, dataset: Path | None) -> list[tuple[str, str]]:
    given = [x is not None for x in (file, text, dataset)]
    if sum(given) != 1:
        raise ConfigError(
            "give exactly one of FILE, --text or --dataset",
            code="check-input",
            fix="legal-judge check answer.txt | --text '...' | --dataset rows.jsonl",
        )
    if text is not None:
        return [("text", text)]
    if file is not None:
        if str(file) == "-":
            return [("stdin", sys.stdin.read())]
        return [(str(file), file.read_text(encoding="utf-8"))]
    assert dataset is not None
    return _read_rows(dataset)


def _render(name: str, report: CitationReport) -> None:
    rows = [[styled(f.status, _STYLE.get(f.status, "")), f.kind, f.text,
             "; ".join(f"{h.rule}: {h.message}" for h in f.reasons)] for f in report.findings]
    print_table(console, f"{name}: {len(report.findings)} citations",
                [Col("status", keep=True), Col("kind", optional=True), Col("citation"),
                 Col("reasons")], rows)
    counts = ", ".join(f"{k} {v}" for k, v in report.counts.items() if v) or "no citations"
    console.print(f"  {counts}")
    for reason in report.forcing_reasons:
        console.print(f"  [bold red]forces citation_quality = 0[/bold red]: {reason}")


@click.command()
@click.argument(
    "file", required=False, type=click.Path(dir_okay=False, allow_dash=True, path_type=Path)
)
@click.option("--text", default=None, help="Check this text instead of a file.")
@click.option(
    "--dataset",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="JSONL rows with 'id' and 'response'.",
)
@click.option(
    "--lookup",
    "use_lookup",
    is_flag=True,
    help="Also look case citations up in CourtListener (needs COURTLISTENER_TOKEN).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON.")
@click.option(
    "--today",
    type=click.DateTime(["%Y-%m-%d"]),
    default=None,
    help="Date the rules treat as now (default: today).",
)
@click.pass_context
def check(
    ctx: click.Context,
    file: Path | None,
    text: str | None,
    dataset: Path | None,
    use_lookup: bool,
    as_json: bool,
    today: datetime | None,
) -> None:
    """Check the legal citations in an answer; exit 1 if any is invalid, mismatched or not found."""
    inputs = _inputs(file, text, dataset)
    lookup: CitationLookup | None = None
    if use_lookup:
        from legal_judge.checks.courtlistener import CourtListenerLookup

        lookup = CourtListenerLookup.from_env()
    day = today.date() if today else date.today()  # noqa: DTZ011 - the user's local date
    reports = [(name, check_citations(body, today=day, lookup=lookup)) for name, body in inputs]
    if as_json:
        payload = [{"id": name, **r.model_dump(mode="json")} for name, r in reports]
        click.echo(json.dumps(payload if dataset else payload[0], indent=2, ensure_ascii=False))
    else:
        for name, report in reports:
            _render(name, report)
    if any(f.status in FORCING_STATUSES for _, r in reports for f in r.findings):
        ctx.exit(1)


COMMANDS: list[click.Command] = [check]
