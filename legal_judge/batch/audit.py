"""``audit run --batch``: the audited judge's calls as provider batch jobs, at batch prices.

The audit runs unchanged (:func:`legal_judge.audit.execute.run_audit`: design, guard, pair tasks,
statistics, report); only the judge's provider is wrapped for the audit
(:class:`~legal_judge.providers.batching.BatchingProvider`), as in ``run --batch`` (see
:mod:`legal_judge.batch.routing`). Every pair task makes up to three judgments in sequence (A, B and
the noise-floor repeat; or the two orders and the repeat of a position pair), so a call's custom id
uses the *call slot* its context carries (``task index * 4 + step``,
:data:`~legal_judge.audit.pairs.SLOT_STRIDE`) in place of an item position: within one round every
parked request has its own id, and a retry or self-debias call of the same judgment differs by its
purpose letter and attempt. Prompts, the provider cache, the call log (``judge_calls`` under the
audit id), parsing and the JSON retry policy are the online path's own code, so the same judge
answers give the same report; each batch id is stored in the ``batches`` table under the audit id
(``legal-judge batches status AUDIT_ID``).

A pair's judgments are made at once (:meth:`AuditBatchRouter.judgments`), so an audit without JSON
retries is one batch round, not three. ``--no-wait`` submits and returns (status ``submitted``);
``audit run --resume AUDIT_ID`` (after ``--no-wait``, a kill or a closed laptop) rebuilds the same
design and requests, adopts the stored batches (custom ids and request digests match), polls them
and answers everything already merged from the caches. A judge without a batch API (simulated,
google, mistral, a generic target) is audited online, and the report says so.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine, Sequence
from typing import Any

from legal_judge.audit.analysis import PairRow
from legal_judge.audit.design import AuditSettings
from legal_judge.audit.execute import AuditOutcome, AuditSuspended, run_audit
from legal_judge.audit.pairs import SLOT_STRIDE, Guard, Progress, in_sequence
from legal_judge.audit.target import AuditTarget, JudgeTarget
from legal_judge.batch.base import BatchBackend
from legal_judge.batch.driver import BackendFactory, BatchDriver, Detach, Sleep, default_backend
from legal_judge.batch.routing import CallRecord, Collector, Lane, batching_provider, records_cost
from legal_judge.models import BenchmarkItem
from legal_judge.store import Store

__all__ = ["SLOT_STRIDE", "AuditBatchRouter", "run_audit_batch"]

log = logging.getLogger("legal_judge.batch")

class AuditBatchRouter:
    """Runs the pair tasks beside the batch driver and prices their calls (a ``TaskRouter``)."""

    bounded = False

    def __init__(self, collector: Collector, driver: BatchDriver, lane: Lane, *, model: str,
                 provider: str, records: list[CallRecord]) -> None:
        self.collector, self.driver, self.lane = collector, driver, lane
        self.model, self.provider = model, provider
        self.records = records  # the batching provider's: every parked call

    async def gather(self, tasks: list[Coroutine[Any, Any, PairRow]]) -> list[PairRow]:
        """Every pair task as an asyncio task, plus the driver's submit/poll/merge rounds."""
        self.collector.start(len(tasks))
        running = [asyncio.create_task(self._task(t)) for t in tasks]
        drive = asyncio.create_task(self.driver.drive())
        try:
            await asyncio.gather(drive, *running)
        except Detach:
            raise AuditSuspended(f"{len(self.driver.open)} batches still running") from None
        finally:
            for t in [drive, *running]:
                t.cancel()
            await asyncio.gather(drive, *running, return_exceptions=True)
        return [t.result() for t in running]

    async def judgments(self, calls: Sequence[Awaitable[Any]],
                        guard: Guard | None = None) -> list[Any]:
        """A pair task's judgments at once, as concurrent flows (one batch round, not three)."""
        self.collector.fork(len(calls))
        left = [len(calls)]

        async def flow(call: Awaitable[Any]) -> Any:
            try:
                return await (guard(call) if guard is not None else call)
            finally:
                left[0] -= 1
                self.collector.flow_done(last=left[0] == 0)

        running = [asyncio.ensure_future(flow(c)) for c in calls]
        try:
            return list(await asyncio.gather(*running))
        except BaseException:
            # One judgment failed the audit (AuthError, BadRequest): its siblings stop too, so
            # the flow count stays exact while the audit is torn down.
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            raise

    async def _task(self, coro: Coroutine[Any, Any, PairRow]) -> PairRow:
        try:
            return await coro
        finally:
            self.collector.task_done()

    def extensions(self) -> dict[str, Any]:
        """``extensions.batch``: batches, requests, online follow-ups and the cost at both rates."""
        def total(batch_rates: bool) -> float | None:
            return records_cost(self.records, provider=self.provider, model=self.model,
                                batch_rates=batch_rates)

        stats = self.driver.stats
        return {"batch": {
            "mode": "batch", "provider": self.lane.backend.name,
            "batches_submitted": stats["submitted"], "batches_collected": stats["collected"],
            "batch_requests": stats["requests"], "online_follow_ups": stats["online"],
            "calls_via_batch": sum(r.via_batch and not r.cached for r in self.records),
            "calls_online": sum(not r.via_batch and not r.cached for r in self.records),
            "calls_coalesced": sum(r.cached for r in self.records),
            "cost_usd": total(True), "cost_usd_at_online_rates": total(False),
        }}


class _OnlineNote:
    """The online path, with the reason the report gives for not batching."""

    bounded = True

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def gather(self, tasks: list[Coroutine[Any, Any, PairRow]]) -> list[PairRow]:
        return list(await asyncio.gather(*tasks))

    async def judgments(self, calls: Sequence[Awaitable[Any]],
                        guard: Guard | None = None) -> list[Any]:
        return await in_sequence(calls, guard)

    def extensions(self) -> dict[str, Any]:
        return {"batch": {"mode": "online", "reason": self.reason}}


def _backend(target: AuditTarget, factory: BackendFactory) -> BatchBackend | str:
    if not isinstance(target, JudgeTarget):
        return f"a {target.kind} target has no provider batch API"
    backend = factory(target.judge)
    if backend is None:
        return f"provider '{target.judge.provider.spec.prefix}' has no batch API"
    return backend


async def run_audit_batch(
    target: AuditTarget, items: list[BenchmarkItem], settings: AuditSettings, *, store: Store,
    progress: Progress | None = None, audit_id: str | None = None, sync: bool = True,
    poll_interval_s: float = 30.0, online_threshold: int = 20, max_resubmits: int = 2,
    backend_factory: BackendFactory | None = None, sleep: Sleep = asyncio.sleep,
    wait: bool = True, resume: bool = False, source: dict[str, Any] | None = None,
) -> AuditOutcome:
    """:func:`~legal_judge.audit.execute.run_audit` with the judge's calls sent as provider batches.

    Args:
        target: The judge under audit (closed by the caller, as for ``run_audit``).
        items: Base items.
        settings: Audit settings (``concurrency`` does not bound batched calls).
        store: The store: report, log, call log and the ``batches`` rows (under the audit id).
        progress: Called with (judgments done, judgments planned).
        audit_id: Id of the audit (default: a new one).
        sync: Queue the audit for Langfuse.
        poll_interval_s: Wait between two polls of the open batches.
        online_threshold: JSON retries and resubmits fewer than this go online.
        max_resubmits: How often a failed or expired request is sent in another batch.
        backend_factory: Judge -> batch backend or None (default: OpenAI and Anthropic).
        sleep: The poll wait (tests inject one that does not wait).
        wait: False does what can be done now (submit, poll once, merge) and returns status
            ``submitted`` while batches still run; ``resume`` continues later.
        resume: Continue the stored audit ``audit_id``: its uncollected batches are polled, not
            resubmitted (a request rendered differently since is sent again).
        source: How to rebuild the target on resume (see :mod:`legal_judge.audit.resume`).

    Returns:
        The outcome; ``report["extensions"]["batch"]`` says how calls were made and priced.

    Raises:
        ConfigError, ProviderError: as ``run_audit``; a batch that cannot be submitted or polled.
    """
    from legal_judge.audit.execute import new_audit_id

    audit_id = audit_id or new_audit_id()
    backend = _backend(target, backend_factory or default_backend)
    if isinstance(backend, str):
        log.info("auditing %s online: %s", target.label, backend)
        return await run_audit(target, items, settings, store=store, progress=progress,
                               audit_id=audit_id, sync=sync, router=_OnlineNote(backend),
                               resume=resume, source=source)
    assert isinstance(target, JudgeTarget)
    collector = Collector(positions={}, unfinished=0, coalesce=target.judge.use_cache)
    judge = target.judge
    lane = Lane(0, target.label, backend, judge.provider)
    # The pair tasks count their own flows (the router): a judgment does not end one.
    batching = batching_provider(lane, collector, judgment_is_flow=False, record=True)
    driver = BatchDriver(store, audit_id, collector, poll_interval_s=poll_interval_s,
                         online_threshold=online_threshold, max_resubmits=max_resubmits,
                         sleep=sleep, wait=wait)
    if resume:
        adopted = driver.adopt({0: lane})
        log.info("audit %s: %d stored batches adopted", audit_id, adopted)
    router = AuditBatchRouter(collector, driver, lane, model=judge.model,
                              provider=judge.provider.spec.prefix,
                              records=batching.records if batching.records is not None else [])
    judge.provider = batching  # for this audit only: the caller closes the target's own
    try:
        return await run_audit(target, items, settings, store=store, progress=progress,
                               audit_id=audit_id, sync=sync, router=router, resume=resume,
                               source=source)
    finally:
        judge.provider = lane.inner
        await backend.aclose()
