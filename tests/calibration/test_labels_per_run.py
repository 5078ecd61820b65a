"""A label judges one run's answer: the same benchmark re-run every quarter keeps each quarter's labels."""

from __future__ import annotations

import asyncio
import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.calibration import (
    compare,
    draw_sample,
    from_store,
    import_labels,
    load_labels,
    rubric_specs,
    write_template,
)
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import InputError
from legal_judge.store import MIGRATIONS, Store, utcnow

HEADER = "item_id,rubric,score,annotator,labeled_at\n"
N_ITEMS = 6


def _count(store: Store, table: str = "human_labels") -> int:
    return int(store.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


@pytest.fixture
def specs() -> Any:
    return rubric_specs("legal_judge_set@1")[1]


def _quarterly_runs(store: Store) -> list[str]:
    """Q1 and Q2: the same item ids judged by the simulated ensemble, Q2 with other answers."""
    items = load_dataset(sample_dataset_path())[:N_ITEMS]
    revised = [i.model_copy(update={"response": i.response + " Revised by the Q2 model: see the "
                                    "2026 amendment, which changes the notice period."})
               for i in items]
    config = load_ensemble_config("demo")
    for run_id, batch in (("q1", items), ("q2", revised)):
        out = asyncio.run(run_benchmark(batch, config, store=store, run_id=run_id))
        assert out.status == "completed"
    assert store.load_items("q1")[0]["response"] != store.load_items("q2")[0]["response"]
    return [i.id for i in items]


def _fill_template(template: Path, out: Path, score: int) -> list[dict[str, str]]:
    """A lawyer scores legal_soundness on every row of the ``calibrate sample`` template."""
    with template.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows, columns = list(reader), list(reader.fieldnames or [])
    for row in rows:
        row["legal_soundness"], row["annotator"], row["labeled_at"] = str(score), "lawyer", "2026-03-31"
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return rows


def _ensemble_legal_soundness(report: Any) -> tuple[list[float], float | None]:
    humans = [p.human_score for p in report.pairs
              if p.judge == "ensemble" and p.rubric == "legal_soundness"]
    comp = next(c for c in report.rubrics if c.rubric == "legal_soundness")
    return humans, next(r for r in comp.judges if r.judge == "ensemble").mean_divergence


def test_each_quarter_keeps_its_own_labels(store: Store, specs: Any, tmp_path: Path) -> None:
    ids = _quarterly_runs(store)
    # Q1 through the lawyers' template: its run_id column carries the run back on import, so the
    # item ids (held by both runs) are not ambiguous.
    sample = draw_sample(store, "q1", n=N_ITEMS, seed=3)
    template = write_template(store, sample, tmp_path / "q1.csv", rubric_set="legal_judge_set@1")
    rows = _fill_template(template, tmp_path / "q1-filled.csv", score=1)
    assert {r["run_id"] for r in rows} == {"q1"} and {r["item_id"] for r in rows} == set(ids)
    q1 = import_labels(store, tmp_path / "q1-filled.csv", specs)
    assert (q1.labels, q1.replaced, q1.unchanged) == (N_ITEMS, 0, 0)
    # Q2 in the long layout with a run_id column: same items, annotator and rubric, other scores.
    q2_file = tmp_path / "q2.jsonl"
    q2_file.write_text("".join(json.dumps({
        "item_id": i, "run_id": "q2", "rubric": "legal_soundness", "score": 5,
        "annotator": "lawyer", "labeled_at": "2026-06-30"}) + "\n" for i in ids))
    q2 = import_labels(store, q2_file, specs)  # no replace: another run's answer, another label
    assert (q2.labels, q2.replaced, q2.unchanged) == (N_ITEMS, 0, 0)
    assert _count(store) == 2 * N_ITEMS

    assert {(x.run_id, x.score) for x in load_labels(store, "q1", specs)} == {("q1", 1.0)}
    assert {(x.run_id, x.score) for x in load_labels(store, "q2", specs)} == {("q2", 5.0)}
    for run_id, human in (("q1", 1.0), ("q2", 5.0)):
        report = compare(from_store(store, run_id), quarter="2026-Q2")
        humans, divergence = _ensemble_legal_soundness(report)
        assert humans == [human] * N_ITEMS and report.n_labelled_items == N_ITEMS
        ensemble = store.load_results(run_id)
        expected = np.mean([ensemble[i]["scores"]["legal_soundness"] - human for i in ids])
        assert divergence == pytest.approx(float(expected))


def test_replace_is_still_needed_within_a_run(store: Store, make_run: Any, specs: Any,
                                              tmp_path: Path) -> None:
    make_run(store, "r1", n_items=2)
    make_run(store, "r2", n_items=2)
    f = tmp_path / "l.csv"
    f.write_text("run_id," + HEADER + "r1,item-000,legal_soundness,4,ann1,2026-03-02\n"
                 "r2,item-000,legal_soundness,2,ann1,2026-06-02\n")
    assert import_labels(store, f, specs).labels == 2
    f.write_text("run_id," + HEADER + "r2,item-000,legal_soundness,3,ann1,2026-06-03\n")
    with pytest.raises(InputError) as info:
        import_labels(store, f, specs)
    assert "already stored with score 2.0 for annotator 'ann1' in run 'r2'; rerun with " \
           "--replace" in str(info.value)
    assert import_labels(store, f, specs, replace=True).replaced == 1
    assert [(x.score, x.labeled_at[:10]) for x in load_labels(store, "r2", specs)] == [
        (3.0, "2026-06-03")]
    assert [x.score for x in load_labels(store, "r1", specs)] == [4.0]  # Q1 history untouched


def test_same_item_of_two_runs_in_one_file_is_not_a_duplicate(
        store: Store, make_run: Any, specs: Any, tmp_path: Path) -> None:
    make_run(store, "r1", n_items=1)
    make_run(store, "r2", n_items=1)
    f = tmp_path / "l.csv"
    f.write_text("run_id," + HEADER + "r1,item-000,completeness,1,ann1,2026-03-02\n"
                 "r2,item-000,completeness,4,ann1,2026-06-02\n"
                 "r2,item-000,completeness,4,ann1,2026-06-02\n")
    with pytest.raises(InputError) as info:
        import_labels(store, f, specs)
    assert [(p.line, p.message[:40]) for p in info.value.problems] == [
        (4, "duplicate label for item 'item-000', rub")]
    assert "first on line 3" in str(info.value)


def test_run_less_label_of_an_item_in_two_runs_is_refused(
        store: Store, make_run: Any, specs: Any, tmp_path: Path) -> None:
    make_run(store, "r1", n_items=2)
    make_run(store, "r2", n_items=2)
    make_run(store, "r3", n_items=1, prefix="solo")
    f = tmp_path / "l.csv"
    f.write_text(HEADER + "item-001,legal_soundness,4,ann1,2026-06-02\n"
                 "solo-000,legal_soundness,3,ann1,2026-06-02\n")
    with pytest.raises(InputError) as info:
        import_labels(store, f, specs)
    assert [(p.line, p.field) for p in info.value.problems] == [(2, "run_id")]
    assert ("l.csv:2: field 'run_id': item 'item-001' is in 2 runs (r1, r2) and the label names "
            "none: add a run_id column or pass --run RUN_ID") in str(info.value)
    assert _count(store) == 0 and _count(store, "outbox") == 0
    only_r2 = tmp_path / "r2.csv"
    only_r2.write_text(HEADER + "item-001,legal_soundness,4,ann1,2026-06-02\n")
    assert import_labels(store, only_r2, specs, run_id="r2").labels == 1
    assert [x.run_id for x in load_labels(store, "r2", specs)] == ["r2"]
    assert load_labels(store, "r1", specs) == []


def test_wide_row_without_run_reports_once_per_line(store: Store, make_run: Any, specs: Any,
                                                    tmp_path: Path) -> None:
    make_run(store, "r1", n_items=1)
    make_run(store, "r2", n_items=1)
    f = tmp_path / "wide.csv"
    f.write_text("item_id,legal_soundness,completeness,annotator,labeled_at\n"
                 "item-000,4,3,ann1,2026-06-02\n")
    with pytest.raises(InputError) as info:
        import_labels(store, f, specs)
    assert [(p.line, p.field) for p in info.value.problems] == [(2, "run_id")]


def _m002_store(path: Path) -> None:
    """A store as the previous release left it: only the first two migrations applied."""
    assert [name for name, _ in MIGRATIONS[:2]] == ["m001_core", "m002_audit_calibration_sync"]
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, fn in MIGRATIONS[:2]:
        fn(db)
        db.execute("INSERT INTO _migrations VALUES (?, ?)", (name, utcnow()))
    rows = [("item-000", None, "legal_soundness", "2.0", "ann1"),   # run-less: item in 2 runs
            ("item-001", "a", "legal_soundness", "4.0", "ann1"),
            ("item-001", "a", "hallucination", "clean", "ann2")]
    for row in rows:
        db.execute("INSERT INTO human_labels (item_id, run_id, rubric, score, annotator, "
                   "labeled_at, source, created_at) VALUES (?, ?, ?, ?, ?, '2026-01-15', "
                   "'file:old.csv', '2026-01-15')", row)
    with pytest.raises(sqlite3.IntegrityError):  # the old key: no run in it
        db.execute("INSERT INTO human_labels (item_id, run_id, rubric, score, annotator, "
                   "labeled_at, source, created_at) VALUES ('item-001', 'b', 'legal_soundness', "
                   "'1.0', 'ann1', 'x', 'x', 'x')")
    db.close()


def test_store_at_m002_keeps_its_labels(home: Path, make_run: Any, specs: Any,
                                        tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    _m002_store(path)
    store = Store(path)
    try:
        applied = {r[0] for r in store.db.execute("SELECT name FROM _migrations")}
        assert "m003_labels_per_run" in applied
        got = [tuple(r) for r in store.db.execute(
            "SELECT id, item_id, run_id, rubric, score, annotator, source FROM human_labels "
            "ORDER BY id")]
        assert got == [(1, "item-000", None, "legal_soundness", "2.0", "ann1", "file:old.csv"),
                       (2, "item-001", "a", "legal_soundness", "4.0", "ann1", "file:old.csv"),
                       (3, "item-001", "a", "hallucination", "clean", "ann2", "file:old.csv")]
        index = store.db.execute("SELECT sql FROM sqlite_master WHERE name = 'human_labels_key'")
        assert "IFNULL(run_id, '')" in index.fetchone()[0]
        make_run(store, "a", n_items=2)
        make_run(store, "b", n_items=2)
        # The old run-less label counts for both runs until a run has its own.
        assert [(x.item_id, x.run_id, x.score) for x in load_labels(store, "b", specs)] == [
            ("item-000", None, 2.0)]
        f = tmp_path / "b.csv"
        f.write_text("run_id," + HEADER + "b,item-000,legal_soundness,5,ann1,2026-06-02\n"
                     "b,item-001,legal_soundness,1,ann1,2026-06-02\n")
        summary = import_labels(store, f, specs)
        assert (summary.labels, summary.replaced) == (2, 0)
        assert sorted((x.item_id, x.run_id, x.score) for x in load_labels(store, "b", specs)) == [
            ("item-000", "b", 5.0), ("item-001", "b", 1.0)]
        assert sorted((x.item_id, x.run_id, x.rubric, x.score)
                      for x in load_labels(store, "a", specs)) == [
            ("item-000", None, "legal_soundness", 2.0), ("item-001", "a", "hallucination", "clean"),
            ("item-001", "a", "legal_soundness", 4.0)]
        # A new row continues after the copied ids.
        assert max(r[0] for r in store.db.execute("SELECT id FROM human_labels")) == 5
    finally:
        store.close()
    reopened = Store(path)  # m003 runs once
    try:
        assert _count(reopened) == 5
    finally:
        reopened.close()


def test_cli_import_per_run(invoke: Any, store: Store, make_run: Any, tmp_path: Path) -> None:
    make_run(store, "r1", n_items=2)
    make_run(store, "r2", n_items=2)
    q1, q2 = tmp_path / "q1.csv", tmp_path / "q2.csv"
    q1.write_text(HEADER + "item-000,legal_soundness,2,lawyer,2026-03-30\n")
    q2.write_text(HEADER + "item-000,legal_soundness,4,lawyer,2026-06-30\n")
    res = invoke("calibrate", "import", str(q1), "--run", "r1")
    assert res.exit_code == 0 and "imported 1 labels on 1 items" in res.output, res.output
    res = invoke("calibrate", "import", str(q2))
    assert res.exit_code == 2
    assert "item 'item-000' is in 2 runs (r1, r2)" in res.output
    assert "add a run_id column or pass --run RUN_ID" in res.output
    res = invoke("calibrate", "import", str(q2), "--run", "r2")
    assert res.exit_code == 0 and "imported 1 labels" in res.output, res.output
    q2.write_text(HEADER + "item-000,legal_soundness,3,lawyer,2026-06-30\n")
    res = invoke("calibrate", "import", str(q2), "--run", "r2")
    assert res.exit_code == 2 and "--replace" in res.output
    res = invoke("calibrate", "import", str(q2), "--run", "r2", "--replace")
    assert res.exit_code == 0 and "(1 replaced)" in res.output, res.output
    got = sorted(tuple(r) for r in store.db.execute(
        "SELECT run_id, score FROM human_labels WHERE item_id = 'item-000'"))
    assert got == [("r1", "2.0"), ("r2", "3.0")]


def test_langfuse_label_scores_prefer_the_run_label_over_an_old_run_less_one(tmp_path: Path) -> None:
    from legal_judge.sync.mask import Masker
    from legal_judge.sync.plan_other import label_scores

    store = Store(tmp_path / "sync.sqlite3")
    items = load_dataset(sample_dataset_path())[:2]
    store.create_run("r1", kind="run", config={}, items=[i.model_dump() for i in items])
    rows = [(items[0].id, "r1", "4"), (items[0].id, None, "2"), (items[1].id, None, "3")]
    with store.transaction() as db:
        for item_id, run_id, value in rows:  # the run-less label first: an old store's order
            db.execute("INSERT INTO human_labels (item_id, run_id, rubric, score, annotator, "
                       "labeled_at, source, created_at) VALUES (?, ?, 'legal_soundness', ?, "
                       "'ann', '2026-01-01T00:00:00', 'file:x', '2026-01-01T00:00:00')",
                       (item_id, run_id, value))
    planned, skipped = label_scores(store, "r1", masker=Masker(),
                                    kinds={"legal_soundness": "NUMERIC"})
    assert not skipped
    assert sorted(p.value for p in planned) == [3.0, 4.0]  # not 2.0: the run's own label wins
    assert len({p.id for p in planned}) == 2


def test_files_mode_takes_the_template_run_id_but_refuses_two_runs_of_one_item(
        tmp_path: Path) -> None:
    from legal_judge.calibration import compare, from_files

    scores, labels = tmp_path / "scores.csv", tmp_path / "labels.csv"
    scores.write_text("item_id,rubric,judge,score\n" + "".join(
        f"i{k},legal_soundness,ensemble,{k % 5 + 1}\n" for k in range(12)))
    rows = [f"r1,i{k},legal_soundness,{k % 5},ann,2026-10-01\n" for k in range(12)]
    labels.write_text("run_id,item_id,rubric,score,annotator,labeled_at\n" + "".join(rows))
    data = from_files(scores, labels)  # a filled `calibrate sample` sheet names its run
    assert len(data.labels) == 12 and {lab.run_id for lab in data.labels} == {"r1"}
    assert compare(data, quarter="2026-Q4").n_labelled_items == 12

    labels.write_text(labels.read_text() + "r2,i3,legal_soundness,4,ann,2026-10-01\n")
    with pytest.raises(InputError) as exc:
        from_files(scores, labels)
    assert "item 'i3' has labels of 2 runs (r1, r2)" in str(exc.value)


def test_many_run_less_rows_are_one_line_with_their_rows(invoke: Any, store: Store,
                                                         make_run: Any, tmp_path: Path) -> None:
    """Issue 33: a label file without run_id over two runs printed the same problem per row."""
    make_run(store, "r1", n_items=30)
    make_run(store, "r2", n_items=30)
    sheet = tmp_path / "q.csv"
    sheet.write_text(HEADER + "".join(f"item-{i:03d},legal_soundness,3,lawyer,2026-06-30\n"
                                      for i in range(30)) + "nope,legal_soundness,3,lawyer,"
                     "2026-06-30\n")
    res = invoke("calibrate", "import", str(sheet))
    assert res.exit_code == 2
    assert "31 problems found" in res.output
    flat = " ".join(res.output.split())
    assert ("q.csv: 30 rows: run_id missing, and their items are in several runs (r1, r2): "
            "add a run_id column or pass --run RUN_ID (rows 2-31)") in flat, res.output
    assert flat.count("run_id missing") == 1 and "item 'item-007'" not in flat
    assert "q.csv:32: field 'item_id': unknown item 'nope'" in flat  # another problem: its own line
    assert store.db.execute("SELECT COUNT(*) FROM human_labels").fetchone()[0] == 0
