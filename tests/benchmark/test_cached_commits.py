"""A cached rerun commits each chunk of items once (their cached verdicts with their results),
reads the verdict cache once per chunk, and a cached verdict is still stored when another judge
of its item fails."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.pipeline import CostLimitReached
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


@pytest.mark.sqlite_only("counts statements with SQLite's trace callback")
@pytest.mark.parametrize("chunk, settle, commits", [
    (256, 64, [40]), (4, 64, [16, 16, 8]), (256, 3, [12, 12, 12, 4])])
def test_a_cached_rerun_commits_each_chunk_once_with_the_same_rows(
        monkeypatch: pytest.MonkeyPatch, chunk: int, settle: int, commits: list[int]) -> None:
    import legal_judge.benchmark.run_items as run_items

    monkeypatch.setattr(run_items, "CHUNK", chunk)
    monkeypatch.setattr(run_items, "SETTLE", settle)
    items = load_dataset(sample_dataset_path())[:10]
    config = load_ensemble_config("demo")
    store = Store()
    first = asyncio.run(run_benchmark(items, config, store=store, run_id="first"))
    writes = _writes(store)
    second = asyncio.run(run_benchmark(items, config, store=store, run_id="second"))
    store.db.set_trace_callback(None)
    assert second.progress.cached == 30 and second.progress.items_done == 10
    assert writes == commits  # three cached verdicts and the result per item, a commit per chunk
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


@pytest.mark.sqlite_only("counts statements with SQLite's trace callback")
@pytest.mark.parametrize("chunk, expected", [(256, 1), (4, 2)])
def test_a_cached_rerun_reads_the_verdict_cache_once_per_chunk(
        monkeypatch: pytest.MonkeyPatch, chunk: int, expected: int) -> None:
    import legal_judge.benchmark.run_items as run_items

    monkeypatch.setattr(run_items, "CHUNK", chunk)
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
    assert len(reads) == expected  # one read for the three judges' verdicts of a chunk's items


def test_a_rerun_with_new_items_settles_the_cached_ones_and_judges_only_the_new() -> None:
    """A chunk of cached and new items: the cached are stored in the chunk's commit (no call),
    the new go to the workers with the checks and cache hits already found; every result is
    the one a run of the whole set that reads no cache stores."""
    items = load_dataset(sample_dataset_path())[:10]
    config = load_ensemble_config("demo")
    assert config.run_checks  # the verdict keys depend on the checks' evidence
    store = Store()
    asyncio.run(run_benchmark(items[:6], config, store=store, run_id="first"))
    second = asyncio.run(run_benchmark(items, config, store=store, run_id="second"))
    assert (second.progress.cached, second.progress.items_done) == (18, 10)
    assert second.progress.calls == 12  # the four new items' verdicts, and no cached one
    scratch = asyncio.run(run_benchmark(items, config, store=store, run_id="scratch",
                                        use_cache=False))
    assert scratch.progress.cached == 0
    got, want = store.load_results("second"), store.load_results("scratch")
    assert set(got) == set(want) == {i.id for i in items}
    keys = ("status", "overall", "scores", "weights", "votes", "overrides")
    for item_id, result in got.items():
        assert {k: result[k] for k in keys} == {k: want[item_id][k] for k in keys}
        assert (result["checks"]["reasons"], result["checks"]["forces_citation_zero"]) == (
            want[item_id]["checks"]["reasons"], want[item_id]["checks"]["forces_citation_zero"])
    verdicts = store.load_verdicts("second")
    assert sum(v["cached"] for v in verdicts.values()) == 18 and len(verdicts) == 30


def test_checking_the_items_of_a_chunk_lets_the_calls_in_flight_go_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The feeder checks a chunk's items before looking them up: the event loop runs between two
    items' checks, so responses in flight are not held up for the whole chunk's checks."""
    import legal_judge.benchmark.pipeline as pipeline
    from legal_judge.benchmark.runner import plan_run

    items = load_dataset(sample_dataset_path())[:8]
    events: list[str] = []
    real = pipeline.run_item_checks

    def checks(item: Any, lookup: Any = None) -> Any:
        events.append("check")
        return real(item)

    monkeypatch.setattr(pipeline, "run_item_checks", checks)

    async def main() -> list[Any]:
        run = plan_run(items, load_ensemble_config("demo"), store=Store(), run_id="r")
        stop = False

        async def in_flight() -> None:  # what a call's response handling looks like to the loop
            while not stop:
                events.append("loop")
                await asyncio.sleep(0)

        ticker = asyncio.create_task(in_flight())
        await asyncio.sleep(0)
        rest = await pipeline.settle_cached(run.job, items)
        stop = True
        await ticker
        return rest

    rest = asyncio.run(main())
    assert len(rest) == 8 and all(r.checks is not None and r.hits == [None] * 3 for r in rest)
    first, last = events.index("check"), len(events) - 1 - events[::-1].index("check")
    between = events[first:last]
    assert between.count("check") == 7 and between.count("loop") >= 7


def test_stored_documents_read_back_as_json_reads_them() -> None:
    import json
    import math

    from legal_judge.store import document_json

    value = {"z": 1, "a": [2.0, 2.5e-7, 1e20, -0.0, None, True], "é": "naïve — \u2028 \"q\"",
             "nested": {"inf": math.inf, "nan": math.nan}}
    back = json.loads(document_json(value))
    assert back["z"] == 1 and isinstance(back["z"], int) and back["a"] == value["a"]
    assert back["é"] == value["é"] and back["nested"]["inf"] == math.inf
    assert math.isnan(back["nested"]["nan"])


def test_a_cached_rerun_stores_its_documents_without_the_sorted_encoder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Items, verdicts and results are written by ``document_json``; the sorted encoder (3x
    slower: the largest single cost of storing a cached rerun) is kept for hashes and keys."""
    import legal_judge.store.base as base

    items = load_dataset(sample_dataset_path())[:10]
    config = load_ensemble_config("demo")
    store = Store()
    asyncio.run(run_benchmark(items, config, store=store, run_id="first"))
    sorted_encodes = 0
    encode = base._CANONICAL.encode

    def counted(value: Any) -> str:
        nonlocal sorted_encodes
        sorted_encodes += 1
        return encode(value)

    monkeypatch.setattr(base._CANONICAL, "encode", counted)
    counts = []
    for n in (5, 10):
        sorted_encodes = 0
        rerun = asyncio.run(run_benchmark(items[:n], config, store=store, run_id=f"rerun-{n}"))
        assert rerun.progress.cached == 3 * n
        counts.append(sorted_encodes)
    # The judges' ids, the run's config and summary: as many for 5 items as for 10 (it was five
    # more per item: the item, its three verdicts and its result).
    assert counts[0] == counts[1] < 10
    # What was stored reads back as the first run's documents, but for what says "cached".
    relabelled = ("cached", "cost_usd", "latency_ms", "extra")
    first, again = store.load_verdicts("first"), store.load_verdicts("rerun-10")
    assert again.keys() == first.keys() and all(v["cached"] for v in again.values())
    assert all({k: x for k, x in again[key].items() if k not in relabelled}
               == {k: x for k, x in first[key].items() if k not in relabelled} for key in first)
    def decided(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {i: {k: x for k, x in r.items() if k != "checks"} for i, r in results.items()}

    assert decided(store.load_results("rerun-10")) == decided(store.load_results("first"))
    assert [i["id"] for i in store.iter_items("rerun-10")] == [i.id for i in items]
