"""A run's items as a stream: checked as they pass, stored as they come, read back in chunks.

A 100,000-item run held every item three times (the loaded list, the run's list and a queue of
all of them). Now :meth:`~legal_judge.benchmark.runner.RunState.start` stores the items as the
source yields them (:func:`stored_items`, with the judge-family checks of :class:`FamilyCheck`
made on the way), and :func:`drive` feeds the workers from the store, ``CHUNK`` items at a time in
dataset order, with the stored verdicts of those items only (a resume reuses them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from legal_judge.benchmark.ensemble import check_policy
from legal_judge.benchmark.item_judging import ItemInputs, JudgedRun
from legal_judge.models import BenchmarkItem

__all__ = ["CHUNK", "SETTLE", "FamilyCheck", "drive", "stored_items"]

#: Items read from the store at a time; the workers' queue holds at most this many.
CHUNK = 256
#: Items checked and looked up in the verdict cache together (one read, one commit of those
#: needing no call): the workers get the first items of a chunk before the whole is checked.
SETTLE = 64


class _Run(JudgedRun, Protocol):
    async def settle(self, items: list[BenchmarkItem]) -> list[ItemInputs]: ...

    async def item(self, item: BenchmarkItem, inputs: ItemInputs | None = None) -> None: ...


class FamilyCheck:
    """The judge-family checks of a run, made once per answering system's family as items pass.

    Raises (from :meth:`see`):
        ConfigError: a refused same-family configuration.
    """

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.seen: set[str | None] = set()
        self.warnings: list[str] = []

    def see(self, item: BenchmarkItem) -> None:
        """Check the family of the system that answered ``item``, the first time it is seen."""
        family = self.run.sut_family(item)
        if family not in self.seen:
            self.seen.add(family)
            self.warnings += check_policy(self.run.slots, family, self.run.policy)


def stored_items(items: Iterable[BenchmarkItem],
                 families: FamilyCheck | None) -> Iterator[dict[str, Any]]:
    """The items as rows to store, one at a time, checked by ``families`` on the way."""
    for item in items:
        if families is not None:
            families.see(item)
        yield item.model_dump()


async def drive(run: _Run) -> None:
    """Judge every stored item of ``run`` with ``config.concurrency`` workers, in dataset order.

    A feeder reads the items back ``CHUNK`` at a time (with their stored verdicts on a resume),
    stores the results of those needing no call in one commit (``run.settle``) and queues the
    rest; an item's verdicts leave ``run.done`` once it is judged, so memory stays flat.
    """
    workers_n = max(1, run.config.concurrency)
    queue: asyncio.Queue[ItemInputs | None] = asyncio.Queue(maxsize=CHUNK)
    run.done = {}

    by_rowid = run.store.items_stored_in_order(run.run_id)

    async def feeder() -> None:
        after = 0 if by_rowid else -1
        while True:
            chunk = run.store.item_chunk(run.run_id, after=after, limit=CHUNK, by_rowid=by_rowid)
            if not chunk:
                break
            after = chunk[-1][0]
            items = [BenchmarkItem.model_validate_json(text) for _, text in chunk]
            if run.resume:
                run.done.update(run.store.verdicts_of_items(run.run_id, [i.id for i in items]))
            # Items needing no call are stored at once (a cached rerun: a commit per SETTLE
            # items); the others are queued as soon as their part of the chunk is checked.
            for start in range(0, len(items), SETTLE):
                for inputs in await run.settle(items[start:start + SETTLE]):
                    await queue.put(inputs)
        for _ in range(workers_n):
            await queue.put(None)

    async def worker() -> None:
        while (inputs := await queue.get()) is not None:
            await run.item(inputs.item, inputs)
            for judge in run.judges:
                run.done.pop((inputs.item.id, judge.label), None)

    tasks = [asyncio.create_task(feeder()), *(asyncio.create_task(worker())
                                             for _ in range(workers_n))]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
