"""One item of a run, from its checks to its stored result; and the bulk path of cached items.

:func:`judge_item` checks one item, has each judge's verdict reused (stored, or from the verdict
cache) or paid for, aggregates them and stores the result. A cached rerun is made of items whose
every verdict is in the cache: :func:`settle_cached` finds those of a whole chunk with one store
read and stores their verdicts and results in one commit, without a task, a semaphore or an
``await`` per item. The other items go to the workers with what was learnt on the way (their
checks and their cache hits, as :class:`ItemInputs`), so no item is checked or looked up twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from legal_judge.assets.rubrics import RubricSet
from legal_judge.benchmark.ensemble import EnsemblePolicy, JudgeSlot, aggregate
from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.benchmark.item_checks import run_item_checks
from legal_judge.benchmark.item_state import (
    PendingVerdicts,
    cached_verdicts,
    cached_verdicts_of,
    note_language,
)
from legal_judge.benchmark.progress import RunProgress, check_cost_limit
from legal_judge.judge.judge import Judge
from legal_judge.models import BenchmarkItem, Verdict
from legal_judge.store import Store

__all__ = ["ItemInputs", "JudgedRun", "check_item", "decide_item", "judge_item", "judge_one",
           "settle_cached"]

#: A stored verdict with one of these statuses is reused by a resume; an error is judged again.
_REUSED = ("ok", "inconclusive")


class JudgedRun(Protocol):
    """What judging an item needs of its run (:class:`~legal_judge.benchmark.runner.RunState`)."""

    config: EnsembleConfig
    store: Store
    run_id: str
    resume: bool
    judges: list[Judge]
    slots: list[JudgeSlot]
    policy: EnsemblePolicy
    rubric_set: RubricSet
    severity: list[str]
    correction: Any
    ensemble_id: str
    lookup: Any
    calls: asyncio.Semaphore
    progress: RunProgress
    on_progress: Callable[[RunProgress], None] | None
    non_english: dict[str, list[str]]
    non_english_count: dict[str, int]
    done: dict[tuple[str, str], dict[str, Any]]

    def sut_family(self, item: BenchmarkItem) -> str | None: ...


@dataclass
class ItemInputs:
    """An item on its way to a worker, with what :func:`settle_cached` learnt about it.

    ``checks`` is None when they were not run yet (a citation lookup runs them in the worker, off
    the event loop); ``hits`` is None when the cache was not read yet.
    """

    item: BenchmarkItem
    checks: dict[str, Any] | None = None
    evidence: str | None = None
    hits: list[str | None] | None = None


async def judge_item(run: JudgedRun, item: BenchmarkItem, inputs: ItemInputs | None = None) -> None:
    """Check, judge and aggregate one item; its ensemble result is stored."""
    pending = PendingVerdicts()
    try:
        data = await _judged(run, item, pending, inputs)
    except BaseException:
        pending.closed = True  # committed as before: the item's other verdicts at once
        run.store.save_verdicts(run.run_id, item.id, pending.rows)
        raise
    pending.closed = True
    # The cached verdicts and the result in one commit.
    run.store.save_verdicts(run.run_id, item.id, pending.rows, data)
    _item_done(run)


async def judge_one(run: JudgedRun, judge: Judge, item: BenchmarkItem, evidence: str | None,
                    pending: PendingVerdicts | None = None, cached: str | None = None,
                    *, looked_up: bool = False) -> Verdict:
    """One judge's verdict on one item (a stored ok/inconclusive one is reused), stored: a paid
    one with its calls in one commit, a ``cached`` one (``looked_up`` for the whole item) in
    ``pending`` (while open), committed with the result."""
    done = run.done.get((item.id, judge.label))
    if done is not None and done["status"] in _REUSED:
        return Verdict.model_validate(done)
    if cached is not None:
        verdict = judge.cached_verdict(cached)
        if pending is not None and not pending.closed:
            pending.rows.append((judge.label, verdict.model_dump()))
        else:
            run.store.save_verdict(run.run_id, item.id, judge.label, verdict.model_dump())
    else:
        writes = run.store.writes()
        try:
            async with run.calls:
                verdict = await judge.judge(item, run_id=run.run_id, evidence=evidence,
                                            writes=writes, read_cache=not looked_up)
            writes.verdict(run.run_id, item.id, judge.label, verdict.model_dump())
        finally:
            writes.flush()  # one commit, also of what a failed or cancelled judgment paid for
    _count(run, verdict)
    return verdict


async def settle_cached(run: JudgedRun, items: Sequence[BenchmarkItem]) -> list[ItemInputs]:
    """Store the result of every item of ``items`` whose verdicts are all stored or cached (one
    store read, one commit); the others, with their checks and cache hits, for the workers.

    Items whose checks need a citation lookup (the network) all go to the workers unchecked. The
    event loop runs between two items' checks (a few milliseconds each), so the calls in flight
    are not held up while a batch of items is checked.
    """
    if run.config.run_checks and run.lookup is not None:
        return [ItemInputs(item) for item in items]
    inputs: list[ItemInputs] = []
    for item in items:
        inputs.append(ItemInputs(item, *_local_checks(run, item)))
        if run.config.run_checks:
            await asyncio.sleep(0)
    hits = cached_verdicts_of(run.store, run.judges, [(i.item, i.evidence) for i in inputs])
    rest: list[ItemInputs] = []
    settled: list[tuple[str, list[Verdict]]] = []
    verdict_rows: list[tuple[str, str, dict[str, Any]]] = []
    results: list[tuple[str, dict[str, Any]]] = []
    for entry, found in zip(inputs, hits, strict=True):
        entry.hits = found
        sourced = _reusable(run, entry)
        if sourced is None:
            rest.append(entry)
            continue
        item_id = entry.item.id
        fresh = [(judge.label, v) for judge, (v, reused) in zip(run.judges, sourced, strict=True)
                 if not reused]
        verdict_rows += [(item_id, label, v.model_dump()) for label, v in fresh]
        results.append((item_id, decide_item(run, entry.item, [v for v, _ in sourced],
                                         entry.checks or {})))
        settled.append((item_id, [v for _, v in fresh]))
    if results:
        run.store.save_settled(run.run_id, verdict_rows, results)
    for item_id, counted in settled:
        for verdict in counted:
            _count(run, verdict)
        _item_done(run)
        for judge in run.judges:
            run.done.pop((item_id, judge.label), None)
    return rest


def _reusable(run: JudgedRun, entry: ItemInputs) -> list[tuple[Verdict, bool]] | None:
    """Per judge, its verdict on the item without a call and whether it is one this run stored
    (a resume's), or None when some judge must be called."""
    # Per judge: the verdict this run stored (a resume's, a dict), else the cache's JSON text.
    sources: list[dict[str, Any] | str] = []
    for judge, hit in zip(run.judges, entry.hits or [None] * len(run.judges), strict=True):
        done = run.done.get((entry.item.id, judge.label))
        if done is not None and done["status"] in _REUSED:
            sources.append(done)
        elif hit is not None:
            sources.append(hit)
        else:
            return None  # before any verdict is built: most items of a fresh run end here
    return [(judge.cached_verdict(source), False) if isinstance(source, str)
            else (Verdict.model_validate(source), True)
            for judge, source in zip(run.judges, sources, strict=True)]


async def _judged(run: JudgedRun, item: BenchmarkItem, pending: PendingVerdicts,
                  inputs: ItemInputs | None) -> dict[str, Any]:
    if inputs is not None and inputs.checks is not None:
        checks, evidence = inputs.checks, inputs.evidence
    else:
        checks, evidence = await check_item(run, item)
    hits = inputs.hits if inputs is not None and inputs.hits is not None else (
        cached_verdicts(run.store, run.judges, item, evidence))  # one read per item
    verdicts = await asyncio.gather(*(judge_one(run, j, item, evidence, pending, hit,
                                                looked_up=True)
                                      for j, hit in zip(run.judges, hits, strict=True)))
    return decide_item(run, item, list(verdicts), checks)


async def check_item(run: JudgedRun, item: BenchmarkItem) -> tuple[dict[str, Any], str | None]:
    """The item's rule-based checks (with the run's citation lookup, if any) and their evidence
    for the judges: the first step of every path that decides an item."""
    if run.config.run_checks and run.lookup is not None:
        # The lookup client is synchronous and rate-limited: keep it off the event loop.
        return await asyncio.to_thread(run_item_checks, item, run.lookup)
    return _local_checks(run, item)


def _local_checks(run: JudgedRun, item: BenchmarkItem) -> tuple[dict[str, Any], str | None]:
    """The item's rule-based checks and their evidence for the judges, without a lookup."""
    return run_item_checks(item) if run.config.run_checks else ({}, None)


def decide_item(run: JudgedRun, item: BenchmarkItem, verdicts: list[Verdict],
                checks: dict[str, Any]) -> dict[str, Any]:
    """The item's decision as stored: its judges' verdicts aggregated, the answer rules applied
    to its checks' findings, corrected when the run has a calibration. Every path that decides an
    item (a run, a resume, a batch run, ``judge``, ``assert_judged``) ends here."""
    note_language(item, run.judges, run.non_english, run.non_english_count)
    result = aggregate(item.id, verdicts, run.slots, sut_family=run.sut_family(item),
                       policy=run.policy, rubric_set=run.rubric_set, severity=run.severity,
                       checks=checks)
    data = result.model_dump()
    if run.correction is not None and result.status == "ok":
        from legal_judge.calibration import correct_result

        # Corrected scores replace `scores`; the ensemble's own stay in `raw_scores`.
        data = correct_result(data, run.correction, judge_id=run.ensemble_id)
    return data


def _count(run: JudgedRun, verdict: Verdict) -> None:
    run.progress.add(verdict)
    if run.on_progress:
        run.on_progress(run.progress)
    check_cost_limit(run.progress, run.config.cost_limit_usd)


def _item_done(run: JudgedRun) -> None:
    run.progress.items_done += 1
    if run.on_progress:
        run.on_progress(run.progress)
