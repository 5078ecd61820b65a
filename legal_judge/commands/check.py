"""`legal-judge check`: list every legal citation in an answer with a status and the reasons."""

from __future__ import annotations

import json
import sys
from datetime import date, datetime
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from legal_judge.checks.citations import CitationLookup, check_citations
from legal_judge.checks.report import FORCING_STATUSES, CitationFinding, CitationReport
from legal_judge.commands.tables import Col, print_table
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


def _nonempty(name: str, body: str, fix: str) -> list[tuple[str, str]]:
    if not body.strip():
        raise ConfigError(f"{name} is empty: there is nothing to check", code="check-input",
                          fix=fix)
    return [(name, body)]


def _read_file(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such file", code="check-input",
                          fix="give the path of the answer to check, or --text '...'") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{file}: not UTF-8 text (byte {exc.start}: {exc.reason})", code="check-input",
            fix="save the answer as UTF-8 text (a PDF or Word file must be converted first)",
        ) from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot be read ({exc.strerror})", code="check-input",
                          fix="check the path and its permissions") from None


def _inputs(file: Path | None, text: str | None, dataset: Path | None) -> list[tuple[str, str]]:
    given = [x is not None for x in (file, text, dataset)]
    if sum(given) != 1:
        raise ConfigError(
            "give exactly one of FILE, --text or --dataset",
            code="check-input",
            fix="legal-judge check answer.txt | --text '...' | --dataset rows.jsonl",
        )
    if text is not None:
        return _nonempty("--text", text, "pass the answer's text: --text 'See 42 U.S.C. § 1983.'")
    if file is not None:
        if str(file) == "-":
            return _nonempty("standard input", sys.stdin.read(), "pipe the answer's text in")
        return _nonempty(str(file), _read_file(file), "check a file that holds the answer")
    assert dataset is not None
    rows = _read_rows(dataset)
    if not rows:
        raise ConfigError(f"{dataset} has no rows", code="check-input",
                          fix="give a JSONL file with one {\"id\", \"response\"} object a line")
    return rows


def _citation_cell(f: CitationFinding) -> Text:
    # Plain text, never markup: a citation or case name with brackets prints as written.
    cell = Text()
    if f.case_name:
        cell.append(f.case_name + "\n")
    cell.append(f.normalized or f.text, style="bold" if f.normalized else "")
    where = ", ".join(str(p) for p in (f.court_name, f.year) if p)
    if where:
        cell.append("\n" + where)
    return cell


def _why_cell(f: CitationFinding) -> Text:
    lines: list[tuple[str, str]] = [(h.message, "") for h in f.reasons if h.severity != "info"]
    lines += [(f"note: {h.message}", "dim") for h in f.reasons if h.severity == "info"]
    if f.verify:
        lines.append((f.verify, ""))
    if not lines:
        return Text("no rule fired")
    return Text("\n").join(Text(line, style=style) for line, style in lines)


def _render(name: str, report: CitationReport) -> None:
    n = len(report.findings)
    if not n:
        console.print(f"{escape(name)}: no citations found")
        return
    rows = [[Text.assemble((f.status, _STYLE.get(f.status, "")), "\n", (f.kind, "dim")),
             _citation_cell(f), _why_cell(f)] for f in report.findings]
    print_table(console, f"{name}: {n} citation{'s' if n != 1 else ''}",
                [Col("status", keep=True), Col("citation"), Col("why")], rows)
    counts = ", ".join(f"{k} {v}" for k, v in report.counts.items() if v) or "no citations"
    console.print(f"  {counts}")
    for reason in report.forcing_reasons:
        console.print(f"  [bold red]forces citation_quality = 0[/bold red]: {escape(reason)}")


def _rollup(reports: list[tuple[str, CitationReport]]) -> None:
    """The closing summary of ``check --dataset``."""
    totals: dict[str, int] = {}
    for _, r in reports:
        for status, count in r.counts.items():
            totals[status] = totals.get(status, 0) + count
    cited = sum(totals.values())
    flagged = [name for name, r in reports if r.counts.get("invalid")]
    forcing = [name for name, r in reports if r.forces_zero]
    console.print(f"\n[bold]{len(reports)} items, {cited} citations[/bold]")
    console.print("  " + (", ".join(f"{k} {v}" for k, v in totals.items() if v) or "no citations"))
    shown = ", ".join(escape(x) for x in flagged[:10]) + (" ..." if len(flagged) > 10 else "")
    console.print(f"  items with an invalid citation: {len(flagged)}" + (f" ({shown})" if flagged
                                                                          else ""))
    if len(forcing) != len(flagged):
        console.print(f"  items whose citation_quality is forced to 0: {len(forcing)}")


def _about(as_json: bool) -> None:
    """What the offline verdicts rest on: versions, and each table's date and source."""
    from legal_judge.checks.about import checker_about

    info = checker_about()
    if as_json:
        click.echo(json.dumps(info, indent=2, ensure_ascii=False))
        return
    console.print(f"checker: {escape(info['checker_version'])}")
    console.print(f"rules: {escape(info['rules_file'])} (version {info['rules_version']})")
    rows = [[Text(t["table"]), Text(t["as_of"]), Text(t["source"])] for t in info["tables"]]
    print_table(console, "tables the offline rules use", [Col("table", keep=True),
                Col("as of", keep=True), Col("source")], rows)


@click.command(short_help="Check the legal citations in an answer; exit 1 if any is invalid.")
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
@click.option("--about", is_flag=True,
              help="Print the checker's version and the date and source of every table it uses.")
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
    about: bool,
    today: datetime | None,
) -> None:
    """Check the legal citations in an answer; exit 1 if any is invalid, mismatched or not found."""
    if about:
        _about(as_json)
        return
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
        if dataset is not None:
            _rollup(reports)
    if any(f.status in FORCING_STATUSES for _, r in reports for f in r.findings):
        ctx.exit(1)


COMMANDS: list[click.Command] = [check]
