"""Issue 33: no figure or id is ever cut, in any table of any command, at 60, 80 and 120 columns.

One store is built per module (the demo run, a 50-item lawyer sample, a calibration, an audit, a
debias experiment); every reporting command is rendered at three widths while the table helper
records what each table had to show. Every word of a shown cell that holds a digit (a figure, an
interval, an n, an id) must appear whole in the output: a fold would leave ``5`` of ``50``.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from legal_judge.cli import cli
from legal_judge.commands import tables
from legal_judge.dataset import sample_dataset_path

WIDTHS = (60, 80, 120)
RUBRICS = ("legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness",
           "hallucination")


class Store:
    """The module's home and the ids made in it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.ids: dict[str, str] = {}

    def cli(self, *args: str, width: int = 80,
            monkeypatch: pytest.MonkeyPatch | None = None) -> Result:
        if monkeypatch is not None:
            # A module's Console reads COLUMNS once, when first built: in one process every
            # command would print at the first width asked for. Each gets a console this wide,
            # for this test only.
            for module in [m for name, m in list(sys.modules.items())
                           if name.startswith("legal_judge.commands.")]:
                for attr, value in list(vars(module).items()):
                    if isinstance(value, Console):
                        monkeypatch.setattr(module, attr,
                                            Console(width=width, stderr=value.stderr))
        # COLUMNS only beside the consoles made for it: a console first built under COLUMNS
        # keeps that width for the whole process (the other tests' commands included).
        env = {"LEGAL_JUDGE_HOME": str(self.home)}
        if monkeypatch is not None:
            env["COLUMNS"] = str(width)
        return CliRunner().invoke(cli, list(args), env=env)


def _fill(sheet: Path, out: Path) -> None:
    """Two lawyers: the dataset's expected scores, one point lower every fourth row for one."""
    rows = [json.loads(line) for line in sample_dataset_path().read_text("utf-8").splitlines()
            if line.strip()]
    expected = {r["id"]: r["metadata"]["expected_scores"] for r in rows}
    with sheet.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        data, columns = list(reader), list(reader.fieldnames or [])
    filled = []
    for annotator in ("lawyer_a", "lawyer_b"):
        for k, row in enumerate(data):
            e = expected[row["item_id"]]
            new = {**row, **{r: str(e[r]) for r in RUBRICS}, "annotator": annotator,
                   "labeled_at": "2026-11-20"}
            if "language_quality" in new:
                new["language_quality"] = ""
            if annotator == "lawyer_b" and k % 4 == 0 and int(e["legal_soundness"]) > 0:
                new["legal_soundness"] = str(int(e["legal_soundness"]) - 1)
            filled.append(new)
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(filled)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    base = tmp_path_factory.mktemp("tables")
    s = Store(base / "home")

    def ok(*args: str) -> Result:
        res = s.cli(*args)
        assert res.exit_code == 0, res.output
        return res

    ok("demo", "--quiet")
    s.ids["run"] = json.loads(ok("runs", "list", "--json").output)[0]["id"]
    ok("calibrate", "sample", s.ids["run"], "--n", "50", "--seed", "7", "--out",
       str(base / "sheet.csv"))
    _fill(base / "sheet.csv", base / "filled.csv")
    ok("calibrate", "import", str(base / "filled.csv"), "--run", s.ids["run"])
    s.ids["calibration"] = json.loads(ok("calibrate", "compare", s.ids["run"],
                                         "--json").output)["calibration_id"]
    ok("audit", "run", "--judge", "simulated:fair", "--dimensions", "verbosity", "--pairs", "20",
       "--noise-pairs", "4")
    s.ids["audit"] = json.loads(ok("audit", "list", "--json").output)[0]["id"]
    return s


def _commands(s: Store) -> list[tuple[str, ...]]:
    run, cal, audit = s.ids["run"], s.ids["calibration"], s.ids["audit"]
    return [("runs", "list", "--all"), ("runs", "show", run), ("calibrate", "estimate", run),
            ("calibrate", "history"), ("calibrate", "compare", run), ("calibrate", "fit", cal),
            ("audit", "list"), ("audit", "dimensions"), ("audit", "gate", audit),
            ("audit", "needed", "--judge", "simulated:fair"), ("policy", "show"), ("rules",),
            ("batches", "status"),
            ("debias", "compare", "--judge", "simulated:demo-openai", "--biases",
             "authority,position", "--modes", "plain,aware,swap", "--repeats", "1")]


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[Any, ...]]]:
    """Every table laid out: its columns, rows and the plan (the helper's own layout)."""
    seen: list[tuple[Any, ...]] = []
    real = tables.layout

    def spy(cols: Any, rows: Any, width: int, **kw: Any) -> Any:
        plan = real(cols, rows, width, **kw)
        if seen and seen[-1][1] is rows:
            seen.pop()  # a second layout of the same table (without rules): this one is used
        seen.append((cols, rows, plan))
        return plan

    monkeypatch.setattr(tables, "layout", spy)
    yield seen


def _words(text: str) -> set[str]:
    return set(re.split(r"[\s│┃|]+", text))


def _digit_words(cell: Any) -> list[str]:
    text = "" if cell is None else getattr(cell, "plain", str(cell))
    return [w for w in text.split() if any(c.isdigit() for c in w)]


@pytest.mark.parametrize("width", WIDTHS)
def test_every_figure_and_id_of_every_table_is_whole(store: Store, width: int,
                                                     recorded: list[tuple[Any, ...]],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    checked = 0
    for args in _commands(store):
        recorded.clear()
        res = store.cli(*args, width=width, monkeypatch=monkeypatch)
        assert res.exit_code in (0, 1), f"{args}: {res.output}"
        assert "…" not in res.output, f"{args} at {width}:\n{res.output}"
        printed = _words(res.output)
        for cols, rows, plan in recorded:
            shown = plan.columns if plan.widths is not None else range(len(cols))
            for row in rows:
                if tuple(row) == tables.SECTION:
                    continue
                for i in shown:
                    for word in _digit_words(row[i]):
                        checked += 1
                        assert word in printed, (
                            f"{' '.join(args)} at {width} columns cut {word!r} "
                            f"({cols[i].header}):\n{res.output}")
        for line in res.output.splitlines():
            if line.startswith("(narrow terminal"):
                assert len(line) <= min(width, 80), line
    assert checked > 200  # the tables were there, with their figures


def test_calibrate_estimate_at_80_columns_shows_n_and_both_intervals_whole(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """`calibrate estimate` once printed ``78.9% [66.7%–87.5%  50.4% [37.3%–63.5% ... 5``."""
    res = store.cli("calibrate", "estimate", store.ids["run"], width=80, monkeypatch=monkeypatch)
    est = json.loads(store.cli("calibrate", "estimate", store.ids["run"], "--json").output)
    pr = est["estimate"]["pass_rate"] if "estimate" in est else est["pass_rate"]
    row = next(line for line in res.output.splitlines() if line.strip("│ ").startswith(
        "pass rate "))
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells[-1] == str(pr["n_labelled"]) == "50", res.output
    lo, hi = pr["raw_ci95"]
    assert f"[{lo:.1%}–{hi:.1%}]" in res.output
    clo, chi = pr["corrected_ci95"]
    assert f"[{clo:.1%}–{chi:.1%}]" in res.output
    assert all(len(line) <= 80 for line in res.output.splitlines() if "│" in line), res.output


def test_every_terminal_table_goes_through_the_helper() -> None:
    """`calibrate estimate` built its own rich Table, which folded n = 50 into ``5``."""
    commands = Path(tables.__file__).parent
    own = [p.name for p in sorted(commands.glob("*.py"))
           if p.name != "tables.py" and re.search(r"\bTable\(", p.read_text("utf-8"))]
    assert own == []
