"""A cached rerun commits each chunk of items once (their cached verdicts with their results),
reads the verdict cache once per chunk, and a cached verdict is still stored when another judge
of its item fails."""

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
    assert second.progress.calls >= 12  # the four new items' verdicts were paid for
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
    import legal_judge.benchmark.item_judging as item_judging
    from legal_judge.benchmark.runner import plan_run

    items = load_dataset(sample_dataset_path())[:8]
    events: list[str] = []
    real = item_judging.run_item_checks

    def checks(item: Any, lookup: Any = None) -> Any:
        events.append("check")
        return real(item)

    monkeypatch.setattr(item_judging, "run_item_checks", checks)

    async def main() -> list[Any]:
        run = plan_run(items, load_ensemble_config("demo"), store=Store(), run_id="r")
        stop = False

        async def in_flight() -> None:  # what a call's response handling looks like to the loop
            while not stop:
                events.append("loop")
                await asyncio.sleep(0)

        ticker = asyncio.create_task(in_flight())
        await asyncio.sleep(0)
        rest = await run.settle(items)
        stop = True
        await ticker
        return rest

    rest = asyncio.run(main())
    assert len(rest) == 8 and all(r.checks is not None and r.hits == [None] * 3 for r in rest)
    first, last = events.index("check"), len(events) - 1 - events[::-1].index("check")
    between = events[first:last]
    assert between.count("check") == 7 and between.count("loop") >= 7
