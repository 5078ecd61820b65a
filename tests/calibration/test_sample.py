"""The lawyers' sample: reproducible, stratified, enriched, formula-safe."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from legal_judge.calibration import draw_sample, write_template
from legal_judge.calibration.sample import neutralise_cell
from legal_judge.errors import ConfigError, NotFoundError
from legal_judge.store import Store


def test_same_seed_same_sample_other_seed_other_sample(store: Store, make_run: Any) -> None:
    make_run(store, "r1", n_items=80)
    a = draw_sample(store, "r1", n=50, seed=7)
    b = draw_sample(store, "r1", n=50, seed=7)
    c = draw_sample(store, "r1", n=50, seed=8)
    ids = [i.item_id for i in a.items]
    assert ids == [i.item_id for i in b.items]
    assert len(set(ids)) == 50
    assert set(ids) != {i.item_id for i in c.items}
    assert a.sample_id == b.sample_id != c.sample_id
    recorded = store.get_run(a.sample_id)
    assert recorded["kind"] == "calibration_sample" and recorded["config"]["seed"] == 7
    assert recorded["config"]["items"] == ids


def test_seed_is_drawn_and_recorded_when_omitted(store: Store, make_run: Any) -> None:
    make_run(store, "r1", n_items=60)
    a = draw_sample(store, "r1", n=10)
    again = draw_sample(store, "r1", n=10, seed=a.seed)
    assert [i.item_id for i in a.items] == [i.item_id for i in again.items]


def test_pass_fail_strata_are_proportional(store: Store, make_run: Any) -> None:
    make_run(store, "r1", n_items=80)
    results = store.load_results("r1")
    population = Counter(r["overall"] for r in results.values())
    report = draw_sample(store, "r1", n=40, stratify="pass_fail", seed=1)
    got = Counter(i.stratum for i in report.items)
    assert sum(got.values()) == 40
    for stratum, size in population.items():
        assert abs(got[stratum] - 40 * size / 80) < 1.0
    assert all(results[i.item_id]["overall"] == i.stratum for i in report.items)


def test_rubric_strata_cover_the_scale(store: Store, make_run: Any) -> None:
    make_run(store, "r1", n_items=80)
    report = draw_sample(store, "r1", n=30, stratify="rubric", seed=3)
    results = store.load_results("r1")
    population = {f"legal_soundness={int(results[i]['scores']['legal_soundness'] + 0.5)}"
                  for i in results}
    assert {i.stratum for i in report.items} == population


def test_enrichment_takes_the_flagged_items_first(store: Store, make_run: Any) -> None:
    make_run(store, "r1", n_items=80)
    flagged = {i for i, r in store.load_results("r1").items() if r["flagged_for_review"]}
    assert len(flagged) >= 5
    report = draw_sample(store, "r1", n=20, enrich=5, stratify="disagreement", seed=2)
    enriched = [i.item_id for i in report.items if i.reason == "enriched"]
    assert len(enriched) == 5 and set(enriched) <= flagged
    assert any("not uniformly random" in n for n in report.notes)


def test_more_than_available_is_noted(store: Store, make_run: Any) -> None:
    make_run(store, "r1", n_items=12)
    report = draw_sample(store, "r1", n=50, seed=0)
    assert len(report.items) == 12 and "fewer than the 50 asked" in report.notes[0]


def test_bad_requests(store: Store, make_run: Any) -> None:
    make_run(store, "r1", n_items=5)
    with pytest.raises(NotFoundError):
        draw_sample(store, "nope", n=5)
    with pytest.raises(ConfigError, match="bad sample size"):
        draw_sample(store, "r1", n=5, enrich=6)


def test_template_csv_is_formula_safe_and_blind(store: Store, tmp_path: Path, make_run: Any) -> None:
    make_run(store, "r1", n_items=3)
    item = store.load_items("r1")[0]
    store.db.execute("UPDATE items SET item_json = ? WHERE run_id = 'r1' AND item_id = ?",
                     (json.dumps({**item, "prompt": "=HYPERLINK(\"http://x\")",
                                  "response": "+1 then -2", "jurisdiction": "@US"}), item["id"]))
    report = draw_sample(store, "r1", n=3, seed=0)
    path = write_template(store, report, tmp_path / "t.csv")
    with path.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["run_id", "item_id", "prompt", "response", "jurisdiction",
                             "legal_soundness", "citation_quality", "jurisdiction_awareness",
                             "completeness", "hallucination", "pass_fail", "comment", "annotator",
                             "labeled_at"]
    bad = next(r for r in rows if r["item_id"] == item["id"])
    assert bad["prompt"] == "'=HYPERLINK(\"http://x\")"
    assert bad["response"] == "'+1 then -2" and bad["jurisdiction"] == "'@US"
    assert all(r["legal_soundness"] == "" and r["annotator"] == "" for r in rows)
    assert neutralise_cell("-3") == "'-3" and neutralise_cell("plain") == "plain"


def test_template_jsonl(store: Store, tmp_path: Path, make_run: Any) -> None:
    make_run(store, "r1", n_items=4)
    report = draw_sample(store, "r1", n=4, seed=0)
    lines = (write_template(store, report, tmp_path / "t.jsonl")).read_text().splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 4 and first["run_id"] == "r1" and first["hallucination"] is None
    with pytest.raises(ConfigError, match="unsupported template format"):
        write_template(store, report, tmp_path / "t.xlsx")
