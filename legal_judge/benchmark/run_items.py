"""A run's items as a stream: checked as they pass, stored as they come, read back in chunks.

A 100,000-item run held every item three times (the loaded list, the run's list and a queue of
all of them). Now :meth:`~legal_judge.benchmark.runner.RunState.start` stores the items as the
source yields them (:func:`stored_items`, with the judge-family checks of :class:`FamilyCheck`
made on the way), and :func:`drive` feeds the workers from the store, ``CHUNK`` items at a time in
dataset order, with the stored verdicts of those items only (a resume reuses them); each item
then takes the one item pipeline (:mod:`legal_judge.benchmark.pipeline`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from typing import Any

from legal_judge.benchmark.ensemble import check_policy
from legal_judge.benchmark.pipeline import ItemInputs, ItemJob, judge_item, settle_cached
from legal_judge.models import BenchmarkItem

__all__ = ["CHUNK", "SETTLE", "FamilyCheck", "drive", "stored_items"]

#: Items read from the store at a time; the workers' queue holds at most this many.
CHUNK = 256
#: Items checked and looked up in the verdict cache together (one read, one commit of those
#: needing no call): the workers get the first items of a chunk before the whole is checked.
SETTLE = 64


class FamilyCheck:
    """The judge-family checks of a run, made once per answering system's family as items pass.

    Raises (from :meth:`see`):
        ConfigError: a refused same-family configuration.
    """

    def __init__(self, job: ItemJob) -> None:
        self.job = job
        self.seen: set[str | None] = set()
        self.warnings: list[str] = []

    def see(self, item: BenchmarkItem) -> None:
        """Check the family of the system that answered ``item``, the first time it is seen."""
        family = self.job.sut_family(item)
        if family not in self.seen:
            self.seen.add(family)
            self.warnings += check_policy(self.job.slots, family, self.job.policy)


def stored_items(items: Iterable[BenchmarkItem],
                 families: FamilyCheck | None) -> Iterator[dict[str, Any]]:
    """The items as rows to store, one at a time, checked by ``families`` on the way."""
    for item in items:
        if families is not None:
            families.see(item)
        yield item.model_dump()


async def drive(job: ItemJob, *, concurrency: int, resume: bool) -> None:
    """Judge every stored item of ``job``'s run with ``concurrency`` workers, in dataset order.

    A feeder reads the items back ``CHUNK`` at a time (with their stored verdicts on a resume),
    stores the results of those needing no call in one commit
    (:func:`~legal_judge.benchmark.pipeline.settle_cached`) and queues the rest for
    :func:`~legal_judge.benchmark.pipeline.judge_item`; an item's verdicts leave ``job.done``
    once it is judged, so memory stays flat.
    """
    workers_n = max(1, concurrency)
    queue: asyncio.Queue[ItemInputs | None] = asyncio.Queue(maxsize=CHUNK)
    job.stored = {}
    store, run_id = job.store, job.run_id

    by_rowid = store.items_stored_in_order(run_id)

    async def feeder() -> None:
        after = 0 if by_rowid else -1
        while True:
            chunk = store.item_chunk(run_id, after=after, limit=CHUNK, by_rowid=by_rowid)
            if not chunk:
                break
            after = chunk[-1][0]
            items = [BenchmarkItem.model_validate_json(text) for _, text in chunk]
            if resume:
                job.done.update(store.verdicts_of_items(run_id, [i.id for i in items]))
            # Items needing no call are stored at once (a cached rerun: a commit per SETTLE
            # items); the others are queued as soon as their part of the chunk is checked.
            for start in range(0, len(items), SETTLE):
                for inputs in await settle_cached(job, items[start:start + SETTLE]):
                    await queue.put(inputs)
        for _ in range(workers_n):
            await queue.put(None)

    async def worker() -> None:
        while (inputs := await queue.get()) is not None:
            await judge_item(job, inputs.item, inputs)
            for judge in job.judges:
                job.done.pop((inputs.item.id, judge.label), None)

    tasks = [asyncio.create_task(feeder()), *(asyncio.create_task(worker())
                                             for _ in range(workers_n))]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
