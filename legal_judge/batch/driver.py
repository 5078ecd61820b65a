"""The batch rounds of a run or an audit: submit parked requests, poll, merge, resubmit.

A :class:`BatchDriver` runs beside the judge tasks (``run --batch``:
:mod:`legal_judge.batch.orchestrator`; ``audit run --batch``: :mod:`legal_judge.batch.audit`). Once
every batch-judge call is parked in the :class:`~legal_judge.batch.routing.Collector`, new requests
are split within the provider limits and submitted; each batch id is written to the ``batches``
table as soon as the provider accepts it. Invalid JSON results go round again as the judge's retry
attempts (follow-up batches, or online calls when fewer than ``online_threshold``); failed or
expired requests are resubmitted up to ``max_resubmits`` times, then fail their call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from legal_judge.batch.base import BatchBackend, BatchHandle, line_digest, split_lines
from legal_judge.batch.records import (
    ABANDONED,
    COLLECTED,
    SUBMITTED,
    batch_rows,
    insert_batch,
    update_batch,
)
from legal_judge.batch.routing import Collector, Lane, Pending
from legal_judge.errors import ProviderError
from legal_judge.judge.judge import Judge
from legal_judge.store import Store

__all__ = ["BackendFactory", "BatchDriver", "Detach", "Sleep", "default_backend"]

log = logging.getLogger("legal_judge.batch")

BackendFactory = Callable[[Judge], BatchBackend | None]
Sleep = Callable[[float], Awaitable[None]]


class Detach(Exception):  # noqa: N818 - a state, not an error
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


class BatchDriver:
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
                raise Detach  # nothing has ended yet: leave the batches with the provider

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
