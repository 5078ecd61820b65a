"""``metadata.expected_pass`` is a boolean once loaded: ``bool("false")`` never counts as a pass.

Spreadsheet-made CSV/JSONL often hold the text "false"; the run summary read it with ``bool()``, so
every answer the lawyers failed counted as one they passed and the agreement figures were wrong.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.item_outcomes import item_outcomes
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.benchmark.summary import summarize_run
from legal_judge.cli import cli
from legal_judge.dataset import (
    expected_pass_of,
    load_dataset,
    normalise_expected_pass,
    sample_dataset_path,
)
from legal_judge.errors import InputError, Problem
from legal_judge.store import Store

TEXTS = {True: ("true", "Yes", "PASS", " pass "), False: ("false", "No", "FAIL", "False")}


def _sample_rows(n: int) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in sample_dataset_path().read_text("utf-8").splitlines()
            if line.strip()]
    return rows[:n]


def _as_text(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same rows with ``expected_pass`` written as text, the way spreadsheets write it."""
    out = []
    for k, row in enumerate(rows):
        flag = row["metadata"]["expected_pass"]
        out.append({**row, "metadata": {**row["metadata"],
                                        "expected_pass": TEXTS[flag][k % 4]}})
    return out


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_the_rule() -> None:
    for flag, texts in TEXTS.items():
        assert normalise_expected_pass(flag) == (flag, None)
        for text in texts:
            assert normalise_expected_pass(text) == (flag, None)
    for bad in ("maybe", 2, 1, 0, None, "", [True]):
        value, why = normalise_expected_pass(bad)
        assert value is None and why and "write true or false" in why
    assert expected_pass_of({"expected_pass": "false"}) is False
    assert expected_pass_of({"expected_pass": "maybe"}) is None
    assert expected_pass_of({}) is None and expected_pass_of(None) is None


def test_texts_are_booleans_once_loaded_with_a_warning_per_line(tmp_path: Path) -> None:
    rows = _sample_rows(8)
    path = _write(tmp_path / "bench.jsonl", _as_text(rows))
    warnings: list[Problem] = []
    items = load_dataset(path, warnings=warnings)
    assert [i.metadata["expected_pass"] for i in items] == [
        r["metadata"]["expected_pass"] for r in rows]
    assert all(isinstance(i.metadata["expected_pass"], bool) for i in items)
    assert [(w.line, w.field) for w in warnings] == [(n, "metadata.expected_pass")
                                                    for n in range(1, 9)]
    assert 'the text "false" is read as false' in " ".join(str(w) for w in warnings)
    # A CSV made by a spreadsheet: the metadata cell is a JSON object holding the text.
    csv_path = tmp_path / "bench.csv"
    csv_path.write_text('id,prompt,response,metadata\n'
                        'a,Q?,A.,"{""expected_pass"": ""FALSE""}"\n'
                        'b,Q?,A.,"{""expected_pass"": true}"\n', encoding="utf-8")
    assert [i.metadata["expected_pass"] for i in load_dataset(csv_path)] == [False, True]


def test_anything_else_is_a_defect_naming_line_field_and_fix(tmp_path: Path) -> None:
    rows = _sample_rows(4)
    rows[1]["metadata"]["expected_pass"] = "maybe"
    rows[3]["metadata"]["expected_pass"] = 2
    path = _write(tmp_path / "bench.jsonl", rows)
    with pytest.raises(InputError) as info:
        load_dataset(path)
    assert [(p.line, p.field) for p in info.value.problems] == [
        (2, "metadata.expected_pass"), (4, "metadata.expected_pass")]
    assert '"maybe" is not a verdict: write true or false' in str(info.value)
    res = CliRunner().invoke(cli, ["validate", str(path)])
    assert res.exit_code == 2 and "bench.jsonl:4: field 'metadata.expected_pass'" in res.output


def test_validate_warns_with_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path / "bench.jsonl", _as_text(_sample_rows(3)))
    res = CliRunner().invoke(cli, ["validate", str(path)])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "valid" in said
    assert ":3: field 'metadata.expected_pass': the text \"FAIL\" is read as false" in said
    assert said.count("warning:") == 3


def test_the_run_summary_counts_false_texts_as_fails(tmp_path: Path) -> None:
    rows = _sample_rows(12)
    assert {r["metadata"]["expected_pass"] for r in rows} == {True, False}
    store = Store(tmp_path / "store.sqlite3")
    config = load_ensemble_config("demo")
    figures = {}
    for name, batch in (("bools", rows), ("texts", _as_text(rows))):
        items = load_dataset(_write(tmp_path / f"{name}.jsonl", batch))
        asyncio.run(run_benchmark(items, config, store=store, run_id=name))
        figures[name] = summarize_run(store, name)["expected_agreement"]
    assert figures["texts"] == figures["bools"]
    # And the figures are the true ones: recomputed here from the results and the dataset.
    results = store.load_results("texts")
    pairs = [(results[r["id"]]["overall"] == "pass", r["metadata"]["expected_pass"]) for r in rows
             if results[r["id"]]["status"] == "ok"]
    assert figures["texts"]["agree"] == sum(a == b for a, b in pairs)
    assert figures["texts"]["false_pass"] == sum(a and not b for a, b in pairs)
    assert figures["texts"]["false_fail"] == sum(b and not a for a, b in pairs)
    store.close()


def test_readers_of_a_stored_text_see_a_boolean(tmp_path: Path) -> None:
    """A run stored by an older version keeps the text: every reader reads it by the same rule."""
    rows = _sample_rows(6)
    store = Store(tmp_path / "store.sqlite3")
    items = load_dataset(_write(tmp_path / "b.jsonl", rows))
    asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=store, run_id="old"))
    truth = summarize_run(store, "old")["expected_agreement"]
    with store.transaction() as db:
        for k, row in enumerate(rows):
            text = TEXTS[row["metadata"]["expected_pass"]][k % 4]
            db.execute("UPDATE items SET item_json = json_set(item_json, "
                       "'$.metadata.expected_pass', ?) WHERE run_id = 'old' AND item_id = ?",
                       (text, row["id"]))
    stored = store.load_items("old")
    assert all(isinstance(i["metadata"]["expected_pass"], str) for i in stored)
    assert summarize_run(store, "old")["expected_agreement"] == truth
    outcomes = {o.item_id: o.expected_pass for o in item_outcomes(
        stored, store.load_results("old"), store.load_verdicts("old"))}
    assert outcomes == {r["id"]: r["metadata"]["expected_pass"] for r in rows}
    store.close()
