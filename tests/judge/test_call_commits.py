"""One commit per judged call: its call log row, its response's cache entry and its verdict (which
is its own verdict cache entry) are written in one transaction, and what a failed, refused or
cancelled judgment paid for is committed all the same."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from legal_judge.benchmark.ensemble_config import EnsembleConfig, load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import AuthError, ProviderError
from legal_judge.judge.config import JudgeConfig
from legal_judge.models import CompletionRequest, CompletionResponse
from legal_judge.providers.registry import register_provider, unregister_provider
from legal_judge.store import Store

from .fakes import ScriptedProvider, verdict_json

_TABLES = ("JUDGE_CALLS", "PROVIDER_CACHE", "VERDICTS", "ENSEMBLE_RESULTS")


def _transactions(store: Store) -> list[list[str]]:
    """Every committed write as the tables it wrote, one list per transaction (an autocommit
    statement is a transaction of its own), filled as the store writes."""
    state: dict[str, Any] = {"open": None, "out": []}

    def trace(sql: str) -> None:
        head = " ".join(sql.split()).upper()
        if head.startswith("BEGIN"):
            state["open"] = []
        elif head.startswith("COMMIT"):
            state["out"].append(state["open"])
            state["open"] = None
        elif head.startswith("ROLLBACK"):
            state["open"] = None
        elif head.startswith("INSERT"):
            table = next((t for t in _TABLES if f"INTO {t} " in head), "OTHER")
            if state["open"] is None:
                state["out"].append([table])
            else:
                state["open"].append(table)

    store.db.set_trace_callback(trace)
    return state["out"]  # type: ignore[no-any-return]


def test_a_fresh_judged_call_is_one_commit_with_its_log_row_cache_entry_and_verdict() -> None:
    items = load_dataset(sample_dataset_path())[:4]
    store = Store()
    commits = _transactions(store)
    out = asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=store, run_id="R"))
    store.db.set_trace_callback(None)
    assert out.status == "completed" and out.progress.cached == 0
    judged = [t for t in commits if "JUDGE_CALLS" in t or "VERDICTS" in t
              or "PROVIDER_CACHE" in t]
    # Twelve calls: twelve commits, each with its call, its response and its verdict (stored
    # once: no second copy of the verdict in provider_cache).
    assert sorted(sorted(t) for t in judged) == [["JUDGE_CALLS", "PROVIDER_CACHE", "VERDICTS"]] * 12
    assert sorted(t for t in commits if "ENSEMBLE_RESULTS" in t) == [["ENSEMBLE_RESULTS"]] * 4
    db = sqlite3.connect(store.path)
    assert db.execute("SELECT COUNT(*) FROM provider_cache WHERE key LIKE 'verdict:%'").fetchone() \
        == (0,)
    assert db.execute("SELECT COUNT(*) FROM verdicts WHERE verdict_key IS NOT NULL").fetchone() \
        == (12,)


class _Stalling(ScriptedProvider):
    """Answers its queue, then waits forever (a call in flight when the run is stopped)."""

    def __init__(self, *args: Any, waiting: asyncio.Event, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waiting = waiting

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        if self.queue:
            return await super().complete(request)
        self.requests.append(request)
        self.waiting.set()
        await asyncio.sleep(3600)
        raise AssertionError("not cancelled")


@pytest.fixture
def providers() -> Iterator[dict[str, ScriptedProvider]]:
    made: dict[str, ScriptedProvider] = {}
    yield made
    for prefix in made:
        unregister_provider(prefix)


def _register(made: dict[str, ScriptedProvider], prefix: str, provider: ScriptedProvider) -> None:
    made[prefix] = provider
    register_provider(prefix, lambda spec, options, client: provider)


def _config(*prefixes: str) -> EnsembleConfig:
    families = ("mistral", "google", "anthropic")  # not the sample answers' family
    return EnsembleConfig(judges=[JudgeConfig(spec=f"{p}:model-{p}", family=f)
                                  for p, f in zip(prefixes, families, strict=False)], quorum=1)


def _rows(store: Store, sql: str) -> list[tuple[Any, ...]]:
    return sqlite3.connect(store.path).execute(sql).fetchall()


def test_a_call_in_flight_when_the_run_is_cancelled_keeps_what_was_paid(
        providers: dict[str, ScriptedProvider]) -> None:
    item = load_dataset(sample_dataset_path())[0]
    store = Store()

    async def scenario() -> None:
        waiting = asyncio.Event()
        # "fast" answers; "slow" answers invalid JSON (paid), then its retry hangs.
        _register(providers, "fast", ScriptedProvider("fast:model-fast", outputs=[verdict_json()]))
        _register(providers, "slow", _Stalling("slow:model-slow", outputs=["not json"],
                                               waiting=waiting))
        run = asyncio.create_task(run_benchmark([item], _config("fast", "slow"), store=store,
                                                run_id="R"))
        await waiting.wait()
        await asyncio.sleep(0.05)
        run.cancel()
        try:
            out = await run
            assert out.status == "interrupted"
        except asyncio.CancelledError:
            pass

    asyncio.run(scenario())
    calls = _rows(store, "SELECT judge, attempt, response_text FROM judge_calls ORDER BY id")
    assert sorted(calls) == [("fast:model-fast", 1, verdict_json()), ("slow:model-slow", 1, "not json")]
    # Both answers are in the response cache (a resume is served the invalid one, not charged).
    assert _rows(store, "SELECT COUNT(*) FROM provider_cache WHERE key NOT LIKE 'verdict:%'") \
        == [(2,)]
    assert _rows(store, "SELECT judge, status FROM verdicts") == [("fast:model-fast", "ok")]


def test_a_provider_failure_and_a_refused_key_keep_their_call_rows(
        providers: dict[str, ScriptedProvider]) -> None:
    items = load_dataset(sample_dataset_path())[:1]
    store = Store()
    _register(providers, "good", ScriptedProvider("good:model-good", outputs=[verdict_json()] * 2))
    _register(providers, "down", ScriptedProvider(
        "down:model-down", outputs=[ProviderError("503 after retries", provider="down")]))
    out = asyncio.run(run_benchmark(items, _config("good", "down"), store=store, run_id="R"))
    assert out.status == "completed"
    assert sorted(_rows(store, "SELECT judge, attempt, error IS NOT NULL FROM judge_calls")) == [
        ("down:model-down", 1, 1), ("good:model-good", 1, 0)]
    assert sorted(_rows(store, "SELECT judge, status FROM verdicts")) == [
        ("down:model-down", "error"), ("good:model-good", "ok")]
    assert _rows(store, "SELECT COUNT(*) FROM provider_cache WHERE key NOT LIKE 'verdict:%'") \
        == [(1,)]

    # A refused key ends the run (exit 2); its failed call is in the call log all the same.
    _register(providers, "refused", ScriptedProvider(
        "refused:model-refused", outputs=[AuthError("401 invalid key", provider="refused")]))
    other = items[0].model_copy(update={"id": "other", "prompt": items[0].prompt + " (other)"})
    with pytest.raises(AuthError):
        asyncio.run(run_benchmark([other], _config("refused"), store=store, run_id="R2"))
    assert _rows(store, "SELECT judge, error FROM judge_calls WHERE run_id = 'R2'") == [
        ("refused:model-refused", "refused: 401 invalid key")]


def test_a_verdict_cached_by_an_older_version_still_answers() -> None:
    items = load_dataset(sample_dataset_path())[:2]
    config = load_ensemble_config("demo")
    store = Store()
    asyncio.run(run_benchmark(items, config, store=store, run_id="R1"))
    # As an older version stored it: the verdict's copy in provider_cache, no key on the row.
    db = sqlite3.connect(store.path, isolation_level=None)
    db.execute("""INSERT INTO provider_cache SELECT verdict_key, 'simulated', 'm', verdict_json,
                  created_at FROM verdicts WHERE verdict_key IS NOT NULL""")
    db.execute("UPDATE verdicts SET verdict_key = NULL")
    out = asyncio.run(run_benchmark(items, config, store=store, run_id="R2"))
    assert out.progress.cached == 6
    assert _rows(store, "SELECT COUNT(*) FROM judge_calls WHERE run_id = 'R2'") == [(0,)]
    assert store.load_results("R2").keys() == store.load_results("R1").keys()
