"""A cached rerun commits each item once (its cached verdicts with its result), and a cached
verdict is still stored when another judge of its item fails."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.progress import CostLimitReached
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.providers.registry import register_provider, unregister_provider
from legal_judge.store import Store


def _writes(store: Store) -> list[int]:
    """Per transaction that wrote verdicts or results, how many such rows it wrote."""
    state: dict[str, Any] = {"open": None, "out": []}

    def trace(sql: str) -> None:
        head = sql.strip().upper()
        if head.startswith("BEGIN"):
            state["open"] = 0
        elif head.startswith(("COMMIT", "ROLLBACK")):
            if state["open"]:
                state["out"].append(state["open"])
            state["open"] = None
        elif "INTO VERDICTS" in head or "INTO ENSEMBLE_RESULTS" in head:
            if state["open"] is None:
                state["out"].append(1)  # autocommit: its own transaction
            else:
                state["open"] += 1

    store.db.set_trace_callback(trace)
    return state["out"]  # filled as the store writes


def test_a_cached_rerun_commits_each_item_once_with_the_same_rows() -> None:
    items = load_dataset(sample_dataset_path())[:10]
    config = load_ensemble_config("demo")
    store = Store()
    first = asyncio.run(run_benchmark(items, config, store=store, run_id="first"))
    writes = _writes(store)
    second = asyncio.run(run_benchmark(items, config, store=store, run_id="second"))
    store.db.set_trace_callback(None)
    assert second.progress.cached == 30
    assert writes == [4] * 10  # three cached verdicts and the result, per item
    verdicts = store.load_verdicts("second")
    assert len(verdicts) == 30 and all(v["cached"] for v in verdicts.values())
    first_results, results = store.load_results("first"), store.load_results("second")
    assert {i: r["scores"] for i, r in results.items()} == {
        i: r["scores"] for i, r in first_results.items()} and len(results) == 10
    assert first.status == second.status == "completed"


class _Down:
    """A judge whose call stops the run (as a cost limit does)."""

    def __init__(self, spec: Any, options: Any, client: Any) -> None:
        self.spec, self.name, self.family = spec, f"down:{spec.model}", "mistral"

    async def complete(self, request: Any) -> Any:
        await asyncio.sleep(0.01)  # after the cached verdicts of the item came back
        raise CostLimitReached("stop here")

    async def aclose(self) -> None:
        return None


@pytest.fixture
def down() -> Iterator[None]:
    register_provider("down", _Down)
    yield
    unregister_provider("down")


def test_cached_verdicts_are_stored_when_another_judge_of_the_item_fails(down: None) -> None:
    items = load_dataset(sample_dataset_path())[:4]
    config = load_ensemble_config("demo")
    store = Store()
    asyncio.run(run_benchmark(items, config, store=store, run_id="first"))
    broken = config.model_copy(update={"judges": [*config.judges[:2], config.judges[2].model_copy(
        update={"spec": "down:mistral-large-latest"})]})
    out = asyncio.run(run_benchmark(items, broken, store=store, run_id="second"))
    assert out.status == "stopped"
    stored = store.load_verdicts("second")
    # Every item the run started has its two cached verdicts stored, as each came.
    assert stored and all(v["cached"] for v in stored.values())
    started = {item_id for item_id, _ in stored}
    assert {k for k in stored} == {(i, j.label) for i in started for j in config.judges[:2]}


def test_a_cached_rerun_reads_the_verdict_cache_once_per_item() -> None:
    items = load_dataset(sample_dataset_path())[:6]
    config = load_ensemble_config("demo")
    store = Store()
    asyncio.run(run_benchmark(items, config, store=store, run_id="first"))
    reads: list[str] = []
    store.db.set_trace_callback(
        lambda sql: reads.append(sql) if sql.lstrip().upper().startswith("SELECT") and (
            "PROVIDER_CACHE" in sql.upper() or "VERDICT_KEY" in sql.upper()) else None)
    out = asyncio.run(run_benchmark(items, config, store=store, run_id="second"))
    store.db.set_trace_callback(None)
    assert out.progress.cached == 18
    assert len(reads) == 6  # one read for the three judges' verdicts of each item
