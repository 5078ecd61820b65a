"""Issue 35, Build 5: the reliability test "two processes write one store at once, one of them
SIGKILLed mid-run and resumed" (test_crash.py, on SQLite) on a shared PostgreSQL store.

Runs A and B write one PostgreSQL schema at once; A is killed with SIGKILL after 40 verdicts while
B keeps writing; then A is resumed while a third run C writes. Every run completes with the same
results, no verdict is stored twice, and C, started after B completed, buys no call (one
provider cache for every process).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from legal_judge.store import Store

from .conftest import Stub, bench_items, two_writers_one_killed, write_jsonl

N_ITEMS = 40
CONCURRENCY = 4


def _results(store: Store, run_id: str) -> dict[str, Any]:
    return {item: (r.get("status"), r.get("overall"), r.get("scores"))
            for item, r in store.load_results(run_id).items()}


def test_two_processes_write_one_postgres_store_at_once_and_a_killed_one_resumes(
        tmp_path: Path, pg_schema_url: str, start_stub: Callable[..., Stub]) -> None:
    stub = start_stub(latency_ms=20)
    bench = write_jsonl(tmp_path / "bench.jsonl", bench_items(N_ITEMS))
    cfg = tmp_path / "stub.toml"
    cfg.write_text(f"name = 'stub'\nconcurrency = {CONCURRENCY}\nrun_checks = false\n" + "".join(
        f'\n[[judges]]\nspec = "openai-compatible:{m}@{stub.url}"\n'
        for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest")), encoding="utf-8")
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(tmp_path / "home"),
           "LEGAL_JUDGE_STORE": pg_schema_url}
    Store(pg_schema_url).close()  # both processes then open an existing, migrated store
    cmd = [sys.executable, "-m", "legal_judge", "run", str(bench), "--ensemble", str(cfg),
           "--quiet"]
    watch = Store(pg_schema_url)

    def progressed() -> bool:
        return watch.run_exists("A") and watch.call_counts("A")["calls"] >= N_ITEMS

    two_writers_one_killed(cmd, env, progressed, require_alive=True)
    store = Store(pg_schema_url)
    results = {r: _results(store, r) for r in ("A", "B", "C")}
    assert len(results["A"]) == N_ITEMS
    assert results["A"] == results["B"] == results["C"]
    for run_id in ("A", "B", "C"):
        assert store.get_run(run_id)["status"] == "completed"
        verdicts = [(item, judge) for item, judge, _ in store.iter_verdicts(run_id)]
        assert len(verdicts) == len(set(verdicts)) == 3 * N_ITEMS  # none stored twice
    # A and B judged the same items at the same time, so both may buy one call before either
    # has cached it; C, after both, bought none (one provider cache for every process).
    assert stub.stats()["distinct"] == 3 * N_ITEMS
    paid_by_c = store.call_counts("C")
    assert paid_by_c["calls"] - paid_by_c["cached"] == 0, paid_by_c
