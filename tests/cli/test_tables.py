"""The table helper: ids, paths and verdicts are whole at every width; the CLI's list commands."""

from __future__ import annotations

import io
import json
import re

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from legal_judge.cli import cli
from legal_judge.commands.tables import Col, layout, print_table, styled

RUN_ID = "run-20261201-084812-a1b2c3"
PATH = "/home/counsel/benchmarks/2026-q4/employment-law/results-with-rationales.csv"
COLS = [Col("run id", keep=True), Col("kind", optional=True), Col("status", keep=True),
        Col("created"), Col("items", numeric=True), Col("file", keep=True, optional=True),
        Col("notes")]
ROWS = [[RUN_ID, "run", "INCONCLUSIVE", "2026-12-01 08:48:12", "57", PATH,
         "judges split on pass/fail on three items; see the HTML report"],
        [RUN_ID.replace("a1b2c3", "ffffff"), "run", styled("completed", "green"),
         "2026-12-01 09:00:00", "5", "x.csv", "[red]not markup[/red]"]]


def _render(width: int) -> str:
    buf = io.StringIO()
    print_table(Console(file=buf, width=width, color_system=None), "Runs", COLS, ROWS)
    return buf.getvalue()


@pytest.mark.parametrize("width", [30, 40, 60, 80, 100, 120, 200])
def test_kept_cells_are_whole_on_one_line_at_every_width(width: int) -> None:
    out = _render(width)
    for text in (RUN_ID, RUN_ID.replace("a1b2c3", "ffffff"), "INCONCLUSIVE", "completed"):
        assert text in out, f"{text!r} cut at width {width}:\n{out}"
    assert "…" not in out


def test_full_table_when_wide_then_optional_columns_dropped_then_blocks() -> None:
    wide = _render(250)
    assert PATH in wide and "narrow terminal" not in wide
    assert "[red]not markup[/red]" in wide  # cells are text, never rich markup
    plan = layout(COLS, ROWS, 250)
    assert plan.widths is not None and len(plan.columns) == len(COLS)
    # 120 columns: the optional path column goes (last optional first) and the table says so.
    plan = layout(COLS, ROWS, 120)
    assert plan.dropped == ["file"] and plan.widths is not None
    assert "narrow terminal: file not shown" in _render(120)
    # 84 columns: both optional columns go; the ids still fit on one line, folded notes beside.
    plan = layout(COLS, ROWS, 84)
    assert plan.dropped == ["kind", "file"] and plan.widths is not None
    for line in _render(84).splitlines():
        assert len(line) <= 84 or line.startswith("(narrow terminal")
    # Too narrow for any table: one block per row with every column, path included.
    narrow = _render(30)
    assert layout(COLS, ROWS, 30).widths is None
    assert f"run id: {RUN_ID}" in narrow and f"  file: {PATH}" in narrow


def _cli(*args: str, columns: int = 80) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": str(columns)})


def test_runs_list_shows_whole_ids_at_80_and_200_columns_and_json() -> None:
    assert _cli("demo", "--quiet").exit_code == 0
    res = _cli("runs", "list")
    assert res.exit_code == 0, res.output
    (run_id,) = re.findall(r"run-\d{8}-\d{6}-[0-9a-f]{6}", res.output)
    assert "…" not in res.output and "pass rate" in res.output and " kind " in res.output
    # Issue 33: at 80 columns the optional columns go, and one line says which.
    assert "(narrow terminal: dataset, ensemble, created not shown; --json shows all)" in \
        res.output
    listed = json.loads(_cli("runs", "list", "--json").output)
    assert [r["id"] for r in listed] == [run_id] and listed[0]["results"] == 57
    shown = json.loads(_cli("runs", "show", run_id, "--json").output)
    assert shown["id"] == run_id and shown["summary"]["scored"] == 57
    summary = _cli("runs", "show", run_id)
    for judge in ("gemini-2.5-pro (simulated)", "gpt-4o (simulated)", "mistral-large (simulated)"):
        assert judge in summary.output
    assert "…" not in summary.output


def test_every_list_command_has_json() -> None:
    assert json.loads(_cli("runs", "list", "--json").output) == []
    assert json.loads(_cli("audit", "list", "--json").output) == []
    assert json.loads(_cli("calibrate", "history", "--json").output) == []
    assert json.loads(_cli("batches", "status", "--json").output) == []
    res = _cli("audit", "run", "--judge", "simulated:fair", "--dimensions", "verbosity",
               "--pairs", "20", "--noise-pairs", "4")
    assert res.exit_code == 0, res.output
    (audit,) = json.loads(_cli("audit", "list", "--json").output)
    assert audit["status"] == "complete" and audit["severity"] == "none" and audit["review"] is None
    listing = _cli("audit", "list")
    assert audit["id"] in listing.output and "…" not in listing.output
    dims = json.loads(_cli("audit", "dimensions", "--json").output)
    assert {"position", "verbosity", "authority", "demographic"} <= {d["name"] for d in dims}
    assert all(d["kind"] in ("dimension", "probe") and d["description"] for d in dims)
    # The listing names the discrimination probes too, with the rubric that must move.
    probes = {d["name"]: d for d in dims if d["kind"] == "probe"}
    assert {"conclusion_flip", "wrong_jurisdiction", "fabricated_authority", "hedge_only",
            "partial_answer"} <= set(probes)
    assert probes["conclusion_flip"]["type"] == "legal_soundness must drop"
    table = _cli("audit", "dimensions")
    assert table.exit_code == 0 and "verbosity" in table.output and "…" not in table.output


def test_unknown_commands_suggest_the_closest_one() -> None:
    res = _cli("runn")
    assert res.exit_code == 2 and "No such command 'runn'. Did you mean 'run'?" in res.output
    res = _cli("calibrat")
    assert res.exit_code == 2 and "Did you mean 'calibrate'?" in res.output
    res = _cli("runs", "lst")
    assert res.exit_code == 2 and "Did you mean 'list'?" in res.output
    res = _cli("xyzzy")
    assert res.exit_code == 2 and "Did you mean" not in res.output
