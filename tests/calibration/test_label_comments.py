"""The lawyer's comment column: stored on import, shown beside the answers the judges got wrong.

Also: an item id holding a control character is refused by the label reader (issue 20 item 16),
with the spreadsheet row, as ``validate`` refuses it in a dataset.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from legal_judge.calibration import compare, from_files, from_store, import_labels, rubric_specs
from legal_judge.errors import InputError
from legal_judge.store import Store

WIDE = ("run_id,item_id,prompt,response,jurisdiction,legal_soundness,pass_fail,comment,"
        "annotator,labeled_at")


@pytest.fixture
def specs() -> Any:
    return rubric_specs("legal_judge_set@1")[1]


def _sheet(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=WIDE.split(","))
        writer.writeheader()
        for row in rows:
            writer.writerow({"run_id": "r1", "prompt": "Q", "response": "two\nlines",
                             "jurisdiction": "US-CA", "annotator": "ann1",
                             "labeled_at": "2026-11-02", **row})
    return path


def _comments(store: Store) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in store.db.execute(
        "SELECT item_id, run_id, annotator, comment FROM label_comments ORDER BY id")]


def test_the_migration_is_registered(store: Store) -> None:
    names = [r[0] for r in store.db.execute("SELECT name FROM _migrations ORDER BY name")]
    assert "m006_label_comments" in names
    assert names.index("m006_label_comments") == names.index("m005_run_owner") + 1


def test_comments_are_stored_multi_line_and_empty_is_none(
        store: Store, make_run: Any, specs: Any, tmp_path: Path) -> None:
    make_run(store, "r1", n_items=3)
    sheet = _sheet(tmp_path / "filled.csv", [
        {"item_id": "item-000", "legal_soundness": "1", "pass_fail": "fail",
         "comment": "Cites a repealed article.\r\nSee L1232-2 instead.\tTab kept."},
        {"item_id": "item-001", "legal_soundness": "4", "pass_fail": "pass", "comment": "  "},
        {"item_id": "item-002", "legal_soundness": "4", "pass_fail": "pass", "comment": ""},
    ])
    summary = import_labels(store, sheet, specs)
    assert summary.comments == 1
    assert _comments(store) == [("item-000", "r1", "ann1",
                                 "Cites a repealed article.\nSee L1232-2 instead.\tTab kept.")]
    # A re-import of the same sheet changes nothing; another comment needs --replace.
    assert import_labels(store, sheet, specs).comments == 0
    _sheet(sheet, [{"item_id": "item-000", "legal_soundness": "1", "pass_fail": "fail",
                    "comment": "Second thoughts."}])
    with pytest.raises(InputError, match="different comment .*--replace"):
        import_labels(store, sheet, specs)
    assert import_labels(store, sheet, specs, replace=True).comments == 1
    assert _comments(store)[0][3] == "Second thoughts."


def test_a_control_character_in_a_comment_is_refused_by_spreadsheet_row(
        store: Store, make_run: Any, specs: Any, tmp_path: Path) -> None:
    make_run(store, "r1", n_items=3)
    sheet = _sheet(tmp_path / "filled.csv", [
        {"item_id": "item-000", "legal_soundness": "4", "pass_fail": "pass", "comment": "fine"},
        {"item_id": "item-001", "legal_soundness": "4", "pass_fail": "pass",
         "comment": "bad\x07bell"},
    ])
    with pytest.raises(InputError) as info:
        import_labels(store, sheet, specs)
    # Each answer cell spans two lines: item-001 is spreadsheet row 3 (file line 5).
    assert [(p.line, p.field) for p in info.value.problems] == [(3, "comment")]
    assert "U+0007" in str(info.value) and "nothing was stored" in str(info.value)
    assert _comments(store) == []
    assert store.db.execute("SELECT COUNT(*) FROM human_labels").fetchone()[0] == 0


def test_an_item_id_with_a_control_character_is_refused(
        store: Store, make_run: Any, specs: Any, tmp_path: Path) -> None:
    make_run(store, "r1", n_items=2)
    sheet = _sheet(tmp_path / "filled.csv", [
        {"item_id": "item-000", "legal_soundness": "4", "pass_fail": "pass"},
        {"item_id": "item-\x1b001", "legal_soundness": "4", "pass_fail": "pass",
         "comment": "escape in the id"},
    ])
    with pytest.raises(InputError) as info:
        import_labels(store, sheet, specs)
    # One problem for the row (its two score cells and its comment share it), named by row.
    assert [(p.line, p.field) for p in info.value.problems] == [(3, "item_id")]
    text = str(info.value)
    assert "U+001B" in text and "remove it" in text and "unknown item" not in text
    long = tmp_path / "long.jsonl"
    long.write_text(json.dumps({"item_id": "item\n-000", "rubric": "legal_soundness", "score": 4,
                                "annotator": "ann1", "labeled_at": "2026-11-02"}) + "\n")
    with pytest.raises(InputError, match=r"long.jsonl:1: field 'item_id': contains U\+000A "
                                         r"\(a line break\) at character 5"):
        import_labels(store, long, specs)


def test_the_report_lists_the_comments_where_the_judges_got_it_wrong(
        store: Store, make_run: Any, specs: Any, tmp_path: Path) -> None:
    truth = make_run(store, "r1", n_items=6, bias=2.0)
    results = store.load_results("r1")
    rows = []
    for item_id in sorted(truth.scores):
        judged_pass = results[item_id]["overall"] == "pass"
        # The lawyers fail every answer the judges passed, and say why on the first one.
        rows.append({"item_id": item_id, "legal_soundness": "0", "pass_fail": "fail",
                     "comment": "Invented case.\nNo such court." if judged_pass else ""})
    assert any(results[i]["overall"] == "pass" for i in truth.scores)
    import_labels(store, _sheet(tmp_path / "filled.csv", rows), specs)
    report = compare(from_store(store, "r1"), quarter="2026-Q4")
    misses = report.pass_fail_misses
    assert misses and all(m.judge_pass and not m.lawyers_pass for m in misses)
    assert all(m.judge == "ensemble" for m in misses)
    commented = [m for m in misses if m.comments]
    assert commented and commented[0].comments[0].comment == "Invented case.\nNo such court."
    assert {c.item_id for c in report.lawyer_comments} == {m.item_id for m in misses}
    with_comment = [d for d in report.largest_disagreements if d.comments]
    assert with_comment and all(d.comments[0].annotator == "ann1" for d in with_comment)
    assert {d.item_id for d in with_comment} <= {m.item_id for m in misses}
    dumped = json.loads(report.model_dump_json())
    assert dumped["lawyer_comments"][0]["comment"] == "Invented case.\nNo such court."


def test_files_mode_carries_the_comments(store: Store, make_run: Any, specs: Any,
                                        tmp_path: Path) -> None:
    make_run(store, "r1", n_items=2)
    scores = tmp_path / "scores.csv"
    scores.write_text("item_id,rubric,judge,score\n"
                      "item-000,legal_soundness,gpt,5\nitem-001,legal_soundness,gpt,5\n")
    labels = _sheet(tmp_path / "filled.csv", [
        {"item_id": "item-000", "legal_soundness": "1", "comment": "Wrong statute."},
        {"item_id": "item-001", "legal_soundness": "5"}])
    report = compare(from_files(scores, labels), quarter="2026-Q4")
    assert [(c.item_id, c.comment) for c in report.lawyer_comments] == [("item-000",
                                                                          "Wrong statute.")]
    assert report.largest_disagreements[0].comments[0].comment == "Wrong statute."
