"""Issue 18 item 4: the run summary is folded from the store row by row, never held whole.

The streamed :func:`summarize_run` must give the very dict the old one gave (kept verbatim in
``summary_reference.py``) on runs with every case the summary counts: verdicts in error,
inconclusive ones, judges that disagree, verdicts reused from the cache, a lawyer's expected
pass, a calibrated (corrected) run; and hold a small fraction of what the old one held.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from pathlib import Path

from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.benchmark.summary import summarize_run
from legal_judge.calibration import (
    compare,
    correct_result,
    fit_correction,
    from_store,
    save_calibration,
)
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.models import BenchmarkItem
from legal_judge.store import Store

from . import summary_reference


def _faulty_config(concurrency: int = 16) -> EnsembleConfig:
    """Three simulated judges: one answers bad JSON (inconclusive), one fails outright with no
    retry (errors), one is noisy (disagreements)."""
    return EnsembleConfig.model_validate({
        "name": "faulty", "quorum": 2, "concurrency": concurrency, "run_checks": True,
        "judges": [
            {"name": "flaky-json", "spec": "simulated:demo-openai?invalid_json=0.5"},
            {"name": "down", "spec": "simulated:demo-google?server_5xx=0.4",
             "options": {"max_retries": 0}},
            {"name": "noisy", "spec": "simulated:demo-mistral?noise_sd=1.5"},
        ]})


def _items(n: int) -> list[BenchmarkItem]:
    base = load_dataset(sample_dataset_path())
    out = []
    for i in range(n):
        item = base[i % len(base)]
        meta = dict(item.metadata or {})
        if i % 3 == 0:
            meta["expected_pass"] = i % 2 == 0  # what a lawyer concluded, on a third of them
        else:
            meta.pop("expected_pass", None)
        out.append(item.model_copy(update={"id": f"s{i:04d}", "prompt": f"{item.prompt} [{i}]",
                                           "metadata": meta}))
    return out


#: Issue 28 item 5 added to the summary after the oracle was frozen: the pinned estimate's
#: provenance and the one corrected mean per rubric. The figures themselves are compared below.
_PINNED_KEYS = ("pin", "newer_calibration", "policy_warnings")
_ADDED_KEYS = ("corrected_means", "corrected_means_note", "correction_available")


def _same(store: Store, run_id: str) -> dict[str, object]:
    full = summarize_run(store, run_id)
    new = {k: v for k, v in full.items() if k not in _ADDED_KEYS}
    if isinstance(new.get("corrected"), dict):
        new["corrected"] = {k: v for k, v in new["corrected"].items() if k not in _PINNED_KEYS}
    old = summary_reference.summarize_run(store, run_id)
    # Compared as stored (canonical JSON: NaN, key order and float text all count).
    assert json.dumps(new, sort_keys=True) == json.dumps(old, sort_keys=True)
    assert new == old or json.dumps(new) == json.dumps(old)
    return full


def test_the_streamed_summary_is_the_old_one_on_a_run_with_every_case(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    items = _items(120)
    asyncio.run(run_benchmark(iter(items), _faulty_config(), store=store, run_id="faulty"))
    s = _same(store, "faulty")
    judges = s["judges"]
    assert isinstance(judges, dict)
    assert judges["down"]["error"] > 0 and judges["flaky-json"]["inconclusive"] > 0
    assert s["inconclusive"] and s["expected_agreement"] and s["krippendorff_alpha"]
    # The same items again: verdicts come from the cache (cached items, reused tokens).
    asyncio.run(run_benchmark(items[:60] + _items(150)[120:], _faulty_config(), store=store,
                              run_id="again"))
    again = _same(store, "again")
    assert again["cached_verdicts"] and again["cached_items"]
    store.close()


def test_the_streamed_summary_is_the_old_one_on_a_calibrated_run(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.sqlite3")
    items = _items(60)
    asyncio.run(run_benchmark(items, _faulty_config(), store=store, run_id="q3"))
    with store.transaction() as db:  # a lawyer's scores on the first 40 items (+1 on each)
        for item_id, result in list(store.iter_results("q3"))[:40]:
            for rubric, score in (result.get("scores") or {}).items():
                db.execute("INSERT INTO human_labels (item_id, run_id, rubric, score, annotator, "
                           "labeled_at, source, created_at) VALUES (?, 'q3', ?, ?, 'lawyer', "
                           "'2026-08-02', 'test', '2026-08-02')",
                           (item_id, rubric, str(min(5, round(score) + 1))))
    cal = save_calibration(store, compare(from_store(store, "q3"), quarter="2026-Q3"))
    correction = fit_correction(store, cal.calibration_id or "")
    asyncio.run(run_benchmark(_items(100)[60:], _faulty_config(), store=store, run_id="q4"))
    store.db.execute("UPDATE runs SET config_json = json_set(config_json, '$.calibration', ?) "
                     "WHERE id = 'q4'", (correction.id,))
    for item_id, r in store.load_results("q4").items():
        if r["status"] == "ok":
            store.save_result("q4", item_id, correct_result(r, correction,
                                                            judge_id=cal.ensemble_judge_id))
    s = _same(store, "q4")
    assert s["calibrated"] is not None and s["calibrated"]["raw_rubrics"]
    assert s["corrected"] is not None
    store.close()


def _synthetic_run(store: Store, n: int) -> None:
    """A run of ``n`` items x 3 judges written straight to the store, each verdict carrying a
    4 KB rationale and raw output as real ones do."""
    store.create_run("big", kind="run", config={},
                     items=({"id": f"i{i:05d}", "prompt": "q", "response": "a"} for i in range(n)))
    rationale = "The answer cites the statute correctly. " * 100
    for i in range(n):
        item_id = f"i{i:05d}"
        rows = []
        for k, judge in enumerate(("a", "b", "c")):
            scores = {r: float((i + k + j) % 5) for j, r in enumerate(
                ("legal_soundness", "citation_quality", "completeness"))}
            rows.append((judge, {"judge_id": f"jid-{judge}", "judge": judge, "status": "ok",
                                 "overall": "pass" if i % 2 else "fail", "scores": scores,
                                 "rationale": rationale, "raw": rationale, "cost_usd": 0.001,
                                 "input_tokens": 900, "output_tokens": 120, "cached": False}))
        result = {"status": "ok", "overall": "pass" if i % 2 else "fail",
                  "scores": {"legal_soundness": (i % 5) + 0.5}, "rationale": rationale,
                  "flagged_for_review": i % 97 == 0}
        store.save_verdicts("big", item_id, rows, result)


def test_the_summary_of_a_large_run_holds_numbers_not_rows(tmp_path: Path) -> None:
    """The old summary held a dict per verdict and per result: about 1 KB each, 13 MB for
    3,000 items; the streamed one keeps a few floats per verdict."""
    store = Store(tmp_path / "big.sqlite3")
    n = 3000
    _synthetic_run(store, n)
    summarize_run(store, "big")  # warm: imports and caches are not the summary's memory
    tracemalloc.start()
    try:
        s = summarize_run(store, "big")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert s["items"] == n and s["judges"]["a"]["ok"] == n
    # 3 judges x 3 rubrics x 3,000 (value, position) pairs = 0.4 MB; the old one peaked at ~6 MB.
    assert peak < 2 * 2**20, f"summary peak {peak / 2**20:.1f} MiB for {n} items"
    store.close()
