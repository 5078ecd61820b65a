"""``legal-judge run --batch``: the ensemble's judge calls as provider batch jobs, at batch prices.

Judges whose provider has a batch API (``openai:``, ``anthropic:``) are routed through batches (see
:mod:`legal_judge.batch.routing`); every other judge runs online through the unchanged Judge, in the
same run. A batch run is an online run's :class:`~legal_judge.benchmark.runner.RunState` with the
batch judges' calls routed: the same checks before it exists (a reused run id, the ensemble, the
judge families), the same start (run row with its items, owner), the same judging of each item, the
same finish (summary, status, Langfuse sync); items, verdicts, judge calls, the provider cache,
ensemble results and the summary land in the same tables.

The batch rounds (:class:`~legal_judge.batch.driver.BatchDriver`) store each batch id in the
``batches`` table as soon as the provider accepts it, so closing the laptop loses nothing:
``--resume`` re-renders the same requests (same custom ids), recognises those already in a stored
batch and only polls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from legal_judge.batch.driver import BackendFactory, BatchDriver, Detach, Sleep, default_backend
from legal_judge.batch.routing import Collector, Lane, batching_provider
from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.benchmark.pipeline import RunProgress
from legal_judge.benchmark.runner import RunOutcome, RunState, plan_run
from legal_judge.judge.judge import Judge
from legal_judge.models import BenchmarkItem
from legal_judge.providers.batching import BatchingProvider
from legal_judge.store import Store

__all__ = ["BatchRunOutcome", "run_benchmark_batch"]


@dataclass
class BatchRunOutcome(RunOutcome):
    """A :class:`RunOutcome` plus the batches this process submitted and collected."""

    batches_submitted: int = 0
    batches_collected: int = 0
    online_follow_ups: int = 0
    batch_requests: int = 0
    notes: list[str] = field(default_factory=list)


def _install_batching(run: RunState, collector: Collector,
                      factory: BackendFactory) -> dict[int, Lane]:
    """Route the calls of every judge that has a batch API through ``collector``; the others
    stay online. The run installs the providers (:meth:`RunState.route_calls`)."""
    lanes: dict[int, Lane] = {}

    def route(index: int, judge: Judge) -> BatchingProvider | None:
        backend = factory(judge)
        if backend is None:
            return None
        lane = lanes[index] = Lane(index, judge.label, backend, judge.provider)
        return batching_provider(lane, collector, judgment_is_flow=True)

    run.route_calls(route)
    return lanes


async def run_benchmark_batch(
    items: Iterable[BenchmarkItem], config: EnsembleConfig, *, store: Store, run_id: str | None = None,
    resume: bool = False, poll_interval_s: float = 30.0, online_threshold: int = 20,
    max_resubmits: int = 2, use_cache: bool = True, http_client: Any = None,
    backend_factory: BackendFactory | None = None, sleep: Sleep = asyncio.sleep, wait: bool = True,
    on_progress: Callable[[RunProgress], None] | None = None,
    extra_config: dict[str, Any] | None = None,
) -> BatchRunOutcome:
    """Score ``items`` with the ensemble through provider batch APIs; store everything.

    Args:
        items: Validated benchmark items, any iterable (ignored on resume: the stored items are
            used). A batch run holds its items in a list (``RunState.items``): a batch file is
            bounded by the provider's batch limits.
        config: The ensemble configuration.
        store: The SQLite store.
        run_id: Id for a new run, or the run to resume.
        resume: Pick up ``run_id``: stored verdicts are kept, stored batches are polled, not resent.
        poll_interval_s: Wait between two polls of the open batches.
        online_threshold: Retry and resubmit rounds smaller than this go online instead.
        max_resubmits: How often a failed or expired request is sent in another batch.
        use_cache: Read the provider cache.
        http_client: An httpx.AsyncClient for the SDK providers (tests and benchmarks).
        backend_factory: Judge -> batch backend or None (default: OpenAI and Anthropic).
        sleep: The poll wait (tests inject one that does not wait).
        wait: False does what can be done now (submit, poll once, merge what has ended, submit
            follow-ups) and returns with status ``submitted`` while batches are still running.
        on_progress: Called after every verdict and item.
        extra_config: Stored with the run.

    Returns:
        The outcome; ``status`` is ``completed``, ``failed`` (no item scored),
        ``submitted``, ``interrupted`` or ``stopped``.

    Raises:
        ConfigError: anything :func:`~legal_judge.benchmark.runner.plan_run` refuses (a reused
            run id, an invalid ensemble, a missing key) or ``RunState.start`` refuses as it
            stores the items (a refused same-family configuration), before any call and before
            the run exists.
        ProviderError: a batch could not be submitted or polled (auth, outage after retries).
    """
    # Parked batch calls wait for a round, not for one of the run's call slots.
    run = plan_run(items, config, store=store, run_id=run_id, resume=resume, use_cache=use_cache,
                   http_client=http_client, bound_calls=False)
    positions = {item.id: i for i, item in enumerate(run.items)}
    collector = Collector(positions, unfinished=0, coalesce=use_cache)
    lanes = _install_batching(run, collector, backend_factory or default_backend)
    collector.start(sum(
        1 for item in run.items for lane in lanes.values()
        if run.done.get((item.id, lane.label), {}).get("status") not in ("ok", "inconclusive")))
    driver = BatchDriver(store, run.run_id, collector, poll_interval_s=poll_interval_s,
                         online_threshold=online_threshold, max_resubmits=max_resubmits,
                         sleep=sleep, wait=wait)
    run.start(on_progress=on_progress, extra_config={"batch": True, **(extra_config or {})})
    driver.adopt(lanes)
    status = await run.execute(_rounds(run, driver))
    stats = driver.stats
    outcome = run.finish(status, summary_extra={"batch": {
        "batches": stats["submitted"], "online_follow_ups": stats["online"]}})
    return BatchRunOutcome(
        run_id=outcome.run_id, status=outcome.status, results=outcome.results,
        progress=outcome.progress, warnings=outcome.warnings, failure=outcome.failure,
        batches_submitted=stats["submitted"], batches_collected=stats["collected"],
        online_follow_ups=stats["online"], batch_requests=stats["requests"])


async def _rounds(run: RunState, driver: BatchDriver) -> str | None:
    """Every item's judging beside the driver's rounds; ``submitted`` when they detached."""
    tasks = [asyncio.create_task(run.item(item)) for item in run.items]
    drive = asyncio.create_task(driver.drive())
    try:
        await asyncio.gather(drive, *tasks)
    except Detach:
        return "submitted"
    finally:
        for t in [drive, *tasks]:
            t.cancel()
        await asyncio.gather(drive, *tasks, return_exceptions=True)
    return None
