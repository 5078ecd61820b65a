"""``legal-judge run --batch``: the ensemble's judge calls as provider batch jobs, at batch prices.

Judges whose provider has a batch API (``openai:``, ``anthropic:``) are routed through batches (see
:mod:`legal_judge.batch.routing`); every other judge runs online through the unchanged Judge, in the
same run. Items, verdicts, judge calls, the provider cache, ensemble results and the summary land in
the same tables as the online path, through the runner's own ``_Run``.

Rounds: once every batch-judge call is parked, new requests are split within the provider limits and
submitted; each batch id is written to the ``batches`` table as soon as the provider accepts it, so
closing the laptop loses nothing: ``--resume`` re-renders the same requests (same custom ids),
recognises those already in a stored batch and only polls. Invalid JSON results go round again as
the judge's retry attempts (follow-up batches, or online calls when fewer than ``online_threshold``);
failed or expired requests are resubmitted up to ``max_resubmits`` times, then become ``error``
verdicts (which ``--resume`` retries).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from legal_judge.batch.base import BatchBackend, BatchHandle, line_digest, split_lines
from legal_judge.batch.records import (
    ABANDONED,
    COLLECTED,
    SUBMITTED,
    batch_rows,
    insert_batch,
    update_batch,
)
from legal_judge.batch.routing import BatchJudge, Collector, Lane, Pending, RoutedProvider
from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.benchmark.runner import (
    RunOutcome,
    RunProgress,
    _check_families,
    _CostLimit,
    _Run,
    build_judges,
    new_run_id,
)
from legal_judge.errors import ProviderError
from legal_judge.judge.judge import Judge
from legal_judge.models import BenchmarkItem
from legal_judge.store import Store

__all__ = ["BackendFactory", "BatchRunOutcome", "default_backend", "run_benchmark_batch"]

log = logging.getLogger("legal_judge.batch")

BackendFactory = Callable[[Judge], BatchBackend | None]
Sleep = Callable[[float], Awaitable[None]]


@dataclass
class BatchRunOutcome(RunOutcome):
    """A :class:`RunOutcome` plus the batches this process submitted and collected."""

    batches_submitted: int = 0
    batches_collected: int = 0
    online_follow_ups: int = 0
    batch_requests: int = 0
    notes: list[str] = field(default_factory=list)


class _Detach(Exception):  # noqa: N818 - a state, not an error
    """``wait=False``: nothing more can be done now; the batches stay with the provider."""


def default_backend(judge: Judge) -> BatchBackend | None:
    """The batch backend of a judge's provider, or None when it has no batch API."""
    prefix = judge.provider.spec.prefix
    if prefix == "openai":
        from legal_judge.batch.openai_batch import OpenAIBatchBackend

        return OpenAIBatchBackend(judge.provider)
    if prefix == "anthropic":
        from legal_judge.batch.anthropic_batch import AnthropicBatchBackend

        return AnthropicBatchBackend(judge.provider)
    return None


class _BatchDriver:
    """Submit, poll and merge rounds until every batch-judge task has its verdict."""

    def __init__(self, store: Store, run_id: str, collector: Collector, *, poll_interval_s: float,
                 online_threshold: int, max_resubmits: int, sleep: Sleep, wait: bool) -> None:
        self.store, self.run_id, self.collector = store, run_id, collector
        self.poll_interval_s, self.online_threshold = poll_interval_s, online_threshold
        self.max_resubmits, self.sleep, self.wait = max_resubmits, sleep, wait
        self.open: dict[str, tuple[Lane, BatchHandle]] = {}
        self.delivered: list[str] = []
        self.stats = {"submitted": 0, "collected": 0, "online": 0, "requests": 0}

    def adopt(self, lanes: dict[int, Lane]) -> int:
        """Take over the stored, uncollected batches of this run or audit (resume).

        Returns:
            How many batches were adopted.
        """
        n = 0
        for row in batch_rows(self.store, run_id=self.run_id, status=SUBMITTED):
            lane = lanes.get(int(row["meta"].get("judge_index", -1)))
            if lane is None or lane.label != row["meta"].get("judge"):
                continue
            self.open[row["id"]] = (lane, BatchHandle(row["id"], row["meta"]))
            ids = row["meta"].get("custom_ids", [])
            digests = row["meta"].get("digests") or [None] * len(ids)  # older rows: no digests
            for cid, digest in zip(ids, digests, strict=True):
                self.collector.in_flight[cid] = (row["id"], digest)
            n += 1
        return n

    async def drive(self) -> None:
        """Rounds until no batch-judge task is left."""
        while True:
            await self.collector.wait_settled()
            self._mark_collected()
            self._abandon_unneeded()
            if self.collector.unfinished <= 0:
                return
            if await self._dispatch():
                continue  # online follow-ups answered: their tasks run on
            if self.wait:
                await self._poll_until_delivered()
            elif not await self._poll_once():
                raise _Detach  # nothing has ended yet: leave the batches with the provider

    def _mark_collected(self) -> None:
        # Results of a batch are in the store (cache, call log) once the tasks they woke have
        # parked again or finished: only then is the row marked collected.
        for batch_id in self.delivered:
            update_batch(self.store, batch_id, status=COLLECTED)
        self.delivered = []

    def _abandon_unneeded(self) -> None:
        # Once every task is parked, an adopted batch that no parked request waits for holds only
        # answers already in the store (or requests rendered differently since): polling it would
        # only wait, possibly for a day. It is marked abandoned, its results never merged.
        needed = {p.batch_id for p in self.collector.pending.values()}
        for batch_id in [b for b in self.open if b not in needed]:
            del self.open[batch_id]
            update_batch(self.store, batch_id, status=ABANDONED,
                         meta={"abandoned": "no request of this resume waits for its results"})
            log.info("batch %s abandoned: nothing waits for it", batch_id)

    async def _dispatch(self) -> bool:
        """Submit parked requests not yet in a batch; returns True when some were answered online."""
        fresh = [p for p in self.collector.pending.values() if p.batch_id is None and not p.online]
        by_lane: dict[int, list[Pending]] = {}
        for p in fresh:
            by_lane.setdefault(p.lane.index, []).append(p)
        online: list[Pending] = []
        for entries in by_lane.values():
            follow = [p for p in entries if p.follow_up or p.resubmits]
            if follow and len(follow) < self.online_threshold:
                online += follow
                entries = [p for p in entries if p not in follow]
            if entries:
                await self._submit(entries[0].lane, entries)
        if online:
            await asyncio.gather(*(self._online(p) for p in online))
        if not online and not self.open:
            raise RuntimeError("batch run stalled: requests are parked but nothing is in flight")
        return bool(online)

    async def _submit(self, lane: Lane, entries: list[Pending]) -> None:
        lines = [(p.custom_id, lane.backend.encode(p.custom_id, p.request)) for p in entries]
        by_id = {p.custom_id: p for p in entries}
        digests = {cid: line_digest(line) for cid, line in lines}
        for chunk in split_lines(lines, lane.backend.limits):
            ids = [cid for cid, _ in chunk]
            handle = await lane.backend.submit(
                [line for _, line in chunk], metadata={"legal_judge_run": self.run_id,
                                                       "judge": lane.label})
            # Stored before anything else can fail: the batch is paid for from now on.
            insert_batch(self.store, handle.id, run_id=self.run_id, provider=lane.backend.name,
                         meta={**handle.meta, "judge": lane.label, "judge_index": lane.index,
                               "requests": len(chunk), "bytes": sum(len(x) + 1 for _, x in chunk),
                               "custom_ids": ids, "digests": [digests[c] for c in ids]})
            self.open[handle.id] = (lane, handle)
            for cid in ids:
                by_id[cid].batch_id = handle.id
                self.collector.in_flight[cid] = (handle.id, digests[cid])
            self.stats["submitted"] += 1
            self.stats["requests"] += len(chunk)
            log.info("submitted %s batch %s (%d requests)", lane.label, handle.id, len(chunk))

    async def _online(self, entry: Pending) -> None:
        entry.online = True
        self.stats["online"] += 1
        try:
            response = await entry.lane.inner.complete(entry.request)
        except ProviderError as exc:
            self.collector.fail(entry, exc)
            return
        self.collector.resolve(entry, response, via_batch=False)

    async def _poll_until_delivered(self) -> None:
        while not await self._poll_once():
            await self.sleep(self.poll_interval_s)

    async def _poll_once(self) -> bool:
        """Poll every open batch once and merge those that ended; True when some had."""
        ended = []
        for batch_id, (lane, handle) in list(self.open.items()):
            status = await lane.backend.status(handle)
            handle.meta.update(status.meta)
            update_batch(self.store, batch_id, meta=status.meta)
            if status.ended:
                ended.append(batch_id)
        for batch_id in ended:
            await self._collect(batch_id)
        return bool(ended)

    async def _collect(self, batch_id: str) -> None:
        lane, handle = self.open.pop(batch_id)
        lines = await lane.backend.results(handle)
        seen: set[str] = set()
        for line in lines:
            entry = self.collector.pending.get(line.custom_id)
            if entry is None or entry.batch_id != batch_id or line.custom_id in seen:
                continue  # answered already (an older batch, or a duplicate line)
            seen.add(line.custom_id)
            if line.error is None:
                try:
                    response = lane.backend.to_response(line.payload, entry.request)
                except (ProviderError, ValueError) as exc:
                    self._failed(entry, f"unreadable result: {exc}", retryable=False)
                    continue
                self.collector.resolve(entry, response, via_batch=True)
            else:
                self._failed(entry, line.error, retryable=line.retryable)
        status = handle.meta.get("provider_status", "ended")
        for entry in [p for p in self.collector.pending.values() if p.batch_id == batch_id]:
            self._failed(entry, f"no result in batch {batch_id} ({status})", retryable=True)
        for cid in handle.meta.get("custom_ids", []):
            if self.collector.in_flight.get(cid, ("",))[0] == batch_id:
                del self.collector.in_flight[cid]
        self.delivered.append(batch_id)
        self.stats["collected"] += 1

    def _failed(self, entry: Pending, error: str, *, retryable: bool) -> None:
        if retryable and entry.resubmits < self.max_resubmits:
            entry.resubmits += 1
            entry.batch_id = None
            return
        self.collector.fail(entry, ProviderError(f"batch request {entry.custom_id} failed: {error}",
                                                 provider=entry.lane.label))


def _route(judges: list[Judge], config: EnsembleConfig, store: Store, collector: Collector,
           factory: BackendFactory, use_cache: bool) -> tuple[list[Judge], dict[int, Lane]]:
    routed: list[Judge] = []
    lanes: dict[int, Lane] = {}
    for index, judge in enumerate(judges):
        backend = factory(judge)
        if backend is None:
            routed.append(judge)
            continue
        lane = lanes[index] = Lane(index, judge.label, backend, judge.provider)
        bj = BatchJudge(judge.config, RoutedProvider(lane, collector), assets=judge.assets,
                        rubric_set=config.rubric_set, store=store, use_cache=use_cache)
        bj.collector = collector
        routed.append(bj)
    return routed, lanes


async def run_benchmark_batch(
    items: list[BenchmarkItem], config: EnsembleConfig, *, store: Store, run_id: str | None = None,
    resume: bool = False, poll_interval_s: float = 30.0, online_threshold: int = 20,
    max_resubmits: int = 2, use_cache: bool = True, http_client: Any = None,
    backend_factory: BackendFactory | None = None, sleep: Sleep = asyncio.sleep, wait: bool = True,
    on_progress: Callable[[RunProgress], None] | None = None,
    extra_config: dict[str, Any] | None = None,
) -> BatchRunOutcome:
    """Score ``items`` with the ensemble through provider batch APIs; store everything.

    Args:
        items: Validated benchmark items (ignored on resume: the stored items are used).
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
        The outcome; ``status`` is ``completed``, ``submitted``, ``interrupted`` or ``stopped``.

    Raises:
        ConfigError: a refused same-family configuration or a missing key, before any call.
        ProviderError: a batch could not be submitted or polled (auth, outage after retries).
    """
    from legal_judge.run_owner import hold_run, refuse_if_owned

    run_id = run_id or new_run_id()
    if resume:
        refuse_if_owned(store, run_id)
    judges = build_judges(config, store, use_cache=use_cache, http_client=http_client)
    if resume:
        items = [BenchmarkItem.model_validate(x) for x in store.load_items(run_id)]
    positions = {item.id: i for i, item in enumerate(items)}
    done = store.load_verdicts(run_id) if resume else {}
    collector = Collector(positions, unfinished=0, coalesce=use_cache)
    judges, lanes = _route(judges, config, store, collector, backend_factory or default_backend,
                           use_cache)
    collector.start(sum(
        1 for item in items for lane in lanes.values()
        if done.get((item.id, lane.label), {}).get("status") not in ("ok", "inconclusive")))
    run = _Run(config, judges, store, run_id, on_progress=on_progress)
    # The runner's call semaphore exists for online concurrency; parked batch calls must not hold
    # it. Online judges stay bounded by their providers' own gates (max_concurrency).
    run.calls = asyncio.Semaphore(max(1, len(items) * len(judges)))
    _check_families(run, items)
    if not resume:
        store.create_run(run_id, kind="run", items=[i.model_dump() for i in items], config={
            "ensemble": config.model_dump(), "judge_ids": {j.label: j.judge_id for j in judges},
            "judge_id": run.ensemble_id, "rubric_set": run.rubric_set.id, "batch": True,
            **(extra_config or {}),
        })
    run.progress.items_total = len(items)
    driver = _BatchDriver(store, run_id, collector, poll_interval_s=poll_interval_s,
                          online_threshold=online_threshold, max_resubmits=max_resubmits,
                          sleep=sleep, wait=wait)
    driver.adopt(lanes)
    with hold_run(store, run_id):  # a killed batch run is shown interrupted, not running
        status = await _execute(run, driver, items, judges)
        return _finish(run, driver, status)


async def _execute(run: _Run, driver: _BatchDriver, items: list[BenchmarkItem],
                   judges: list[Judge]) -> str:
    status = "completed"
    tasks = [asyncio.create_task(run.item(item)) for item in items]
    drive = asyncio.create_task(driver.drive())
    try:
        await asyncio.gather(drive, *tasks)
    except _CostLimit as exc:
        status = "stopped"
        run.warnings.append(str(exc))
    except _Detach:
        status = "submitted"
    except (KeyboardInterrupt, asyncio.CancelledError):
        status = "interrupted"
    finally:
        for t in [drive, *tasks]:
            t.cancel()
        await asyncio.gather(drive, *tasks, return_exceptions=True)
        for j in judges:
            await j.provider.aclose()
    return status


def _finish(run: _Run, driver: _BatchDriver, status: str) -> BatchRunOutcome:
    from legal_judge.benchmark.summary import summarize_run

    run.warnings += run.language_warnings()
    summary = summarize_run(run.store, run.run_id) if status == "completed" else None
    if summary is not None:
        summary["warnings"] = run.warnings
        summary["batch"] = {"batches": driver.stats["submitted"],
                            "online_follow_ups": driver.stats["online"]}
    run.store.finish_run(run.run_id, status=status, summary=summary)
    return BatchRunOutcome(
        run_id=run.run_id, status=status, results=run.results, progress=run.progress,
        warnings=run.warnings, batches_submitted=driver.stats["submitted"],
        batches_collected=driver.stats["collected"], online_follow_ups=driver.stats["online"],
        batch_requests=driver.stats["requests"],
    )
