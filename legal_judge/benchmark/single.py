"""Judge one answer with an ensemble (``legal-judge judge``, the pytest plugin, scripts).

The answer is decided as a run decides an item, through the one item pipeline
(:func:`~legal_judge.benchmark.pipeline.check_item`, each judge's ``Judge.judge`` with the checks'
evidence, then :func:`~legal_judge.benchmark.pipeline.decide_item`), so ``judge``, ``assert_judged`` and
``run`` agree on the same item and judges. With ``save`` it is an ordinary one-item run: every
call and verdict is stored (``legal-judge runs show RUN_ID``) and synced to Langfuse when
configured; without it nothing is stored but the provider and verdict caches (no run, no
Langfuse trace). Works from synchronous code and from inside a running event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.models import BenchmarkItem, EnsembleResult, Verdict
from legal_judge.store import Store

__all__ = ["JudgedAnswer", "judge_answer"]

T = TypeVar("T")


@dataclass(frozen=True)
class JudgedAnswer:
    """The ensemble's result on one answer, with each judge's verdict."""

    run_id: str | None  # None: not saved
    status: str
    item: BenchmarkItem
    result: EnsembleResult | None
    verdicts: list[Verdict]


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    # Called from async code: the run gets its own loop in a worker thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def judge_answer(prompt: str, response: str, *, ensemble: str = "default",
                 jurisdiction: str | None = None, item_id: str | None = None,
                 metadata: dict[str, Any] | None = None, store: Store | None = None,
                 use_cache: bool = True, source: str = "api", save: bool = True,
                 config: EnsembleConfig | None = None,
                 item: BenchmarkItem | None = None) -> JudgedAnswer:
    """Judge ``response`` to ``prompt`` with the ensemble and store it as a one-item run.

    Args:
        prompt: The question put to the system under test.
        response: Its answer.
        ensemble: Ensemble TOML path or bundled name (``default``, ``demo``).
        jurisdiction: The jurisdiction the answer must respect, when known.
        item_id: The item's id (default: a digest of prompt and response).
        metadata: Stored with the item.
        store: The store (default: ``$LEGAL_JUDGE_HOME``).
        use_cache: Read the provider and verdict cache.
        source: Recorded in the run's config (``pytest``, ``api``, ``cli``).
        save: Store the judgment as a one-item run (False: store nothing but the caches).
        config: The ensemble itself (default: read from ``ensemble``).
        item: The item itself (an item of a dataset); ``prompt`` and ``response`` are then
            ignored.

    Raises:
        ConfigError: a bad ensemble, a refused same-family configuration or a missing key.
    """
    from legal_judge.benchmark.ensemble_config import load_ensemble_config
    from legal_judge.benchmark.runner import run_benchmark

    store = store or Store()
    if item is None:
        digest = hashlib.sha256(f"{prompt}\x00{response}".encode()).hexdigest()[:12]
        item = BenchmarkItem(id=item_id or f"answer-{digest}", prompt=prompt, response=response,
                             jurisdiction=jurisdiction, metadata=metadata or {})
    config = config or load_ensemble_config(ensemble)
    if not save:
        return _run_sync(_decide_unsaved(item, config, store, use_cache=use_cache))
    outcome = _run_sync(run_benchmark([item], config, store=store, use_cache=use_cache,
                                      extra_config={"source": source, "ensemble_path": ensemble}))
    verdicts = [Verdict.model_validate(v) for (i, _), v in
                sorted(store.load_verdicts(outcome.run_id).items()) if i == item.id]
    result = outcome.results.get(item.id)
    return JudgedAnswer(run_id=outcome.run_id, status=outcome.status, item=item, result=result,
                        verdicts=verdicts)


async def _decide_unsaved(item: BenchmarkItem, config: EnsembleConfig, store: Store, *,
                          use_cache: bool) -> JudgedAnswer:
    """The run's own steps for one item, with no run: checks, judges, rules, aggregation."""
    from legal_judge.benchmark.pipeline import check_item, decide_item
    from legal_judge.benchmark.runner import plan_run

    plan = plan_run([item], config, store=store, use_cache=use_cache)
    try:
        plan.check_families()  # refused as `run` refuses it: before any call
        checks, evidence = await check_item(plan.job, item)
        verdicts = list(await asyncio.gather(*(j.judge(item, evidence=evidence)
                                               for j in plan.judges)))
    finally:
        for j in plan.judges:
            await j.provider.aclose()
    result = EnsembleResult.model_validate(decide_item(plan.job, item, verdicts, checks))
    return JudgedAnswer(run_id=None, status="completed", item=item, result=result,
                        verdicts=verdicts)
