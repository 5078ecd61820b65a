"""Importing lawyers' labels: every defect with line and field, all or nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from legal_judge.calibration import import_labels, load_labels, rubric_specs
from legal_judge.errors import InputError
from legal_judge.store import Store

HEADER = "item_id,rubric,score,annotator,labeled_at\n"


def _count(store: Store, table: str) -> int:
    return int(store.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


@pytest.fixture
def specs() -> Any:
    return rubric_specs("legal_judge_set@1")[1]


def test_every_problem_is_reported_and_nothing_stored(
        store: Store, make_run: Any, specs: Any, tmp_path: Path) -> None:
    make_run(store, "r1", n_items=5)
    bad = tmp_path / "labels.csv"
    bad.write_text(HEADER
                   + "item-000,legal_soundness,4,ann1,2026-11-02\n"      # line 2: fine
                   + "ghost,legal_soundness,4,ann1,2026-11-02\n"         # 3: unknown item
                   + "item-001,legal_soundness,7,ann1,2026-11-02\n"      # 4: out of scale
                   + "item-000,legal_soundness,3,ann1,2026-11-02\n"      # 5: duplicate of 2
                   + "item-002,completeness,3,,2026-11-02\n"             # 6: missing annotator
                   + "item-002,tone,3,ann1,2026-11-02\n"                 # 7: unknown rubric
                   + "item-003,hallucination,maybe,ann1,2026-11-02\n"    # 8: bad category
                   + "item-003,completeness,2,ann1,02/11/2026\n"         # 9: bad date
                   + "item-004,completeness,2.5,ann1,2026-11-02\n")      # 10: not a whole score
    with pytest.raises(InputError) as info:
        import_labels(store, bad, specs)
    text = str(info.value)
    expected = [
        (3, "item_id", "unknown item 'ghost'"),
        (4, "legal_soundness", "7 is out of scale"),
        (5, "legal_soundness", "duplicate label for item 'item-000'"),
        (6, "annotator", "annotator is missing"),
        (7, "rubric", "unknown rubric 'tone'"),
        (8, "hallucination", "'maybe' is not a category"),
        (9, "labeled_at", "bad date '02/11/2026'"),
        (10, "completeness", "2.5 is not a whole score"),
    ]
    got = [(p.line, p.field) for p in info.value.problems]
    assert got == [(line, field) for line, field, _ in expected]
    for line, field, message in expected:
        assert f"labels.csv:{line}: field '{field}': {message}" in text
    assert "first on line 2" in text
    assert _count(store, "human_labels") == 0 and _count(store, "outbox") == 0


def test_wide_template_and_long_rows_import(store: Store, make_run: Any, specs: Any,
                                            tmp_path: Path) -> None:
    make_run(store, "r1", n_items=3)
    wide = tmp_path / "wide.csv"
    wide.write_text(
        "\ufeffrun_id,item_id,prompt,response,jurisdiction,legal_soundness,citation_quality,"
        "jurisdiction_awareness,completeness,hallucination,annotator,labeled_at\n"
        'r1,item-000,"Q\nwith newline",A,US,4,3,5,4,Clean,ann1,2026-11-02\n'
        "r1,item-001,Q,A,US,2,,,,,ann1,2026-11-02T09:30:00+01:00\n"
        "r1,item-002,Q,A,US,,,,,,,\n", encoding="utf-8")
    summary = import_labels(store, wide, specs)
    assert (summary.labels, summary.items, summary.annotators) == (6, 2, ["ann1"])
    long = tmp_path / "long.jsonl"
    long.write_text(json.dumps({"item_id": "item-000", "rubric": "legal_soundness", "score": 5,
                                "annotator": "ann2", "labeled_at": "2026-11-03"}) + "\n")
    assert import_labels(store, long, specs, run_id="r1").labels == 1
    labels = load_labels(store, "r1", specs)
    assert {(x.item_id, x.rubric, x.annotator, x.score) for x in labels} >= {
        ("item-000", "hallucination", "ann1", "clean"), ("item-000", "legal_soundness", "ann2", 5.0)}
    assert all(x.run_id == "r1" for x in labels)
    ann1 = next(x for x in labels if x.item_id == "item-001")
    assert ann1.labeled_at == "2026-11-02T09:30:00+01:00"
    pending = store.outbox_pending()
    assert [(p["entity_kind"], p["entity_id"]) for p in pending] == [("human_labels", "r1")]


def test_wide_problems_name_the_spreadsheet_row(store: Store, make_run: Any, specs: Any,
                                               tmp_path: Path) -> None:
    """A multi-line answer cell is one spreadsheet row: the item after it is row 3, not line 4."""
    make_run(store, "r1", n_items=2)
    wide = tmp_path / "wide.csv"
    wide.write_text("item_id,prompt,legal_soundness,annotator,labeled_at,mood\n"
                    'item-000,"two\nlines",4,ann1,2026-11-02,\n'
                    "item-001,x,9,ann1,2026-11-02,\n")
    with pytest.raises(InputError) as info:
        import_labels(store, wide, specs)
    assert [(p.line, p.field) for p in info.value.problems] == [(1, "mood"), (3, "legal_soundness")]


def test_reimport_is_idempotent_and_conflicts_need_replace(store: Store, make_run: Any,
                                                           specs: Any, tmp_path: Path) -> None:
    make_run(store, "r1", n_items=2)
    f = tmp_path / "l.csv"
    f.write_text(HEADER + "item-000,legal_soundness,4,ann1,2026-11-02\n")
    import_labels(store, f, specs)
    again = import_labels(store, f, specs)
    assert (again.labels, again.unchanged) == (0, 1)
    f.write_text(HEADER + "item-000,legal_soundness,2,ann1,2026-11-02\n")
    with pytest.raises(InputError, match="already stored with score 4.0.*--replace"):
        import_labels(store, f, specs)
    assert import_labels(store, f, specs, replace=True).replaced == 1
    assert load_labels(store, "r1", specs)[0].score == 2.0


def test_unknown_item_for_the_given_run(store: Store, make_run: Any, specs: Any,
                                        tmp_path: Path) -> None:
    make_run(store, "r1", n_items=2)
    make_run(store, "r2", n_items=2, prefix="other")
    f = tmp_path / "l.csv"
    f.write_text(HEADER + "other-000,legal_soundness,4,ann1,2026-11-02\n")
    with pytest.raises(InputError, match="unknown item 'other-000'"):
        import_labels(store, f, specs, run_id="r1")
    assert import_labels(store, f, specs).labels == 1  # any run of the store


def test_unreadable_files(store: Store, specs: Any, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        import_labels(store, tmp_path / "missing.csv", specs)
    odd = tmp_path / "l.xlsx"
    odd.write_text("x")
    with pytest.raises(InputError, match="unsupported format"):
        import_labels(store, odd, specs)
    broken = tmp_path / "l.jsonl"
    broken.write_text("{not json\n[1]\n")
    with pytest.raises(InputError) as info:
        import_labels(store, broken, specs)
    assert [(p.line, p.message[:12]) for p in info.value.problems] == [
        (1, "invalid JSON"), (2, "expected a J")]
