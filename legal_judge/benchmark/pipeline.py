"""One item's path, from its checks to its stored result: the one pipeline every decision takes,
with the run's live counters and its cost limit (:class:`RunProgress`, shared by online and batch
runs: every verdict is counted as it is stored).

A run, a resume, a batch run, ``legal-judge judge`` and the pytest plugin's ``assert_judged``
decide an item with the same steps (the answer-decision issue 29 asks for one path):

1. :func:`check_item`: the rule-based checks and their evidence for the judges;
2. the verdict cache, read once for all the item's judges (:func:`cached_verdicts_of`);
3. each judge's verdict reused (stored by this run, or cached) or paid for (:func:`judge_one`);
4. :func:`decide_item`: aggregation, the answer rules, the calibration's correction;
5. the verdicts and the result stored (:func:`judge_item`).

What the steps need of their run is one explicit :class:`ItemJob` (the run's judges, store,
policy, counters and the verdicts it stored), built by
:class:`~legal_judge.benchmark.runner.RunState`. A cached rerun is made of items whose every
verdict is in the cache: :func:`settle_cached` finds those of a whole chunk with one store read
and stores their verdicts and results in one commit, without a task, a semaphore or an ``await``
per item. The other items go to the workers with what was learnt on the way (their checks and
their cache hits, as :class:`ItemInputs`), so no item is checked or looked up twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from legal_judge.assets.rubrics import RubricSet
from legal_judge.benchmark.ensemble import EnsemblePolicy, JudgeSlot, aggregate
from legal_judge.benchmark.item_checks import detect_language, run_item_checks
from legal_judge.judge.judge import Judge, verdict_key_item_part
from legal_judge.models import BenchmarkItem, Verdict
from legal_judge.store import Store

__all__ = ["CostLimitReached", "ItemInputs", "ItemJob", "PendingVerdicts", "RunProgress",
           "cached_verdicts_of", "check_cost_limit", "check_item", "decide_item", "judge_item",
           "judge_one", "settle_cached"]


#: A stored verdict with one of these statuses is reused by a resume; an error is judged again.
_REUSED = ("ok", "inconclusive")


@dataclass
class RunProgress:
    """Live counters shown in the progress bar and returned at the end."""

    items_total: int = 0
    items_done: int = 0
    calls: int = 0
    cached: int = 0
    #: Transport retries (429, 5xx, timeouts) of this invocation: the caller sets it from
    #: :func:`legal_judge.providers.retry.counting_retries`, the count the call log keeps too. A
    #: JSON re-ask is a call, not a retry (counting it here showed "retries 6" beside 35).
    retries: int = 0
    failures: int = 0
    inconclusive: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown_calls: int = 0

    def add(self, v: Verdict) -> None:
        """Count one finished verdict.

        A verdict reused from the cache counts as ``cached`` only: its attempts and tokens are
        those of the run that paid for them (counting them again showed "calls 171 ... tokens
        444,849" while the run sent no request and its summary said 0 calls).
        """
        self.failures += int(v.status == "error")
        self.inconclusive += int(v.status == "inconclusive")
        if v.cached:
            self.cached += 1
            return
        self.calls += v.attempts
        self.input_tokens += v.input_tokens or 0
        self.output_tokens += v.output_tokens or 0
        if v.cost_usd is None and v.status != "error":
            self.cost_unknown_calls += 1
        else:
            self.cost_usd += v.cost_usd or 0.0


class CostLimitReached(Exception):  # noqa: N818 - a stop condition, not a fault
    """The run spent more than ``cost_limit_usd``; it stops as ``stopped`` and can be resumed."""


def check_cost_limit(progress: RunProgress, limit: float | None) -> None:
    """Stop the run once it has spent more than ``limit`` dollars (None: no limit).

    Raises:
        CostLimitReached: the message says what was spent and what a resume may spend.
    """
    if limit is None or progress.cost_usd <= limit:
        return
    # The limit is per invocation (a resume starts counting again from 0): the user reads what a
    # resume will spend before typing it.
    raise CostLimitReached(f"cost limit ${limit:.2f} reached (${progress.cost_usd:.2f} spent); "
                           "cost_limit_usd applies to each invocation, so a resume may spend up "
                           f"to ${limit:.2f} more")


@dataclass
class ItemJob:
    """Everything judging an item of a run needs, and the run's counters it updates.

    ``stored`` holds the verdicts this run stored, by (item id, judge): all of them once read
    (batch runs, on first use), or only those of the items in hand
    (:func:`~legal_judge.benchmark.run_items.drive`). ``calls`` bounds the calls in flight.
    """

    store: Store
    run_id: str
    judges: list[Judge]
    slots: list[JudgeSlot]
    policy: EnsemblePolicy
    rubric_set: RubricSet
    severity: list[str]
    sut_family: Callable[[BenchmarkItem], str | None]
    calls: asyncio.Semaphore
    run_checks: bool = True
    lookup: Any = None
    correction: Any = None
    ensemble_id: str = ""
    cost_limit_usd: float | None = None
    progress: RunProgress = field(default_factory=RunProgress)
    on_progress: Callable[[RunProgress], None] | None = None
    stored: dict[tuple[str, str], dict[str, Any]] | None = None
    # Per judge: how many non-English answers, and the first ids the warning names (a list of
    # every id grew with the run).
    non_english: dict[str, list[str]] = field(default_factory=dict)
    non_english_count: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> dict[tuple[str, str], dict[str, Any]]:
        """The verdicts this run stored, by (item id, judge); all of them are read on first use."""
        if self.stored is None:
            self.stored = self.store.load_verdicts(self.run_id)
        return self.stored

    def count(self, verdict: Verdict) -> None:
        """Count a finished verdict; stop the run past its cost limit (``CostLimitReached``)."""
        self.progress.add(verdict)
        if self.on_progress:
            self.on_progress(self.progress)
        check_cost_limit(self.progress, self.cost_limit_usd)

    def item_done(self) -> None:
        """Count a decided item."""
        self.progress.items_done += 1
        if self.on_progress:
            self.on_progress(self.progress)


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


@dataclass
class PendingVerdicts:
    """An item's verdicts from the cache, ``(judge, verdict)``, waiting to be committed with its
    result; once ``closed``, a verdict is committed on its own as it comes."""

    rows: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    closed: bool = False


async def judge_item(job: ItemJob, item: BenchmarkItem, inputs: ItemInputs | None = None) -> None:
    """Check, judge and aggregate one item; its ensemble result is stored."""
    pending = PendingVerdicts()
    try:
        data = await _judged(job, item, pending, inputs)
    except BaseException:
        pending.closed = True  # committed as before: the item's other verdicts at once
        job.store.save_verdicts(job.run_id, item.id, pending.rows)
        raise
    pending.closed = True
    # The cached verdicts and the result in one commit.
    writes = job.store.writes()
    for label, verdict in pending.rows:
        writes.verdict(job.run_id, item.id, label, verdict)
    writes.result(job.run_id, item.id, data)
    await job.store.commit(writes)
    job.item_done()


async def judge_one(job: ItemJob, judge: Judge, item: BenchmarkItem, evidence: str | None,
                    pending: PendingVerdicts | None = None, cached: str | None = None,
                    *, looked_up: bool = False) -> Verdict:
    """One judge's verdict on one item (a stored ok/inconclusive one is reused), stored: a paid
    one with its calls in one commit, a ``cached`` one (``looked_up`` for the whole item) in
    ``pending`` (while open), committed with the result."""
    done = job.done.get((item.id, judge.label))
    if done is not None and done["status"] in _REUSED:
        return Verdict.model_validate(done)
    if cached is not None:
        verdict = judge.cached_verdict(cached)
        if pending is not None and not pending.closed:
            pending.rows.append((judge.label, verdict.model_dump()))
        else:
            job.store.save_verdict(job.run_id, item.id, judge.label, verdict.model_dump())
    else:
        writes = job.store.writes()
        try:
            async with job.calls:
                verdict = await judge.judge(item, run_id=job.run_id, evidence=evidence,
                                            writes=writes, read_cache=not looked_up)
            writes.verdict(job.run_id, item.id, judge.label, verdict.model_dump())
        finally:
            await job.store.commit(writes)  # also what a failed or cancelled judgment paid for
    job.count(verdict)
    return verdict


async def settle_cached(job: ItemJob, items: Sequence[BenchmarkItem]) -> list[ItemInputs]:
    """Store the result of every item of ``items`` whose verdicts are all stored or cached (one
    store read, one commit); the others, with their checks and cache hits, for the workers.

    Items whose checks need a citation lookup (the network) all go to the workers unchecked. The
    event loop runs between two items' checks (a few milliseconds each), so the calls in flight
    are not held up while a batch of items is checked.
    """
    if job.run_checks and job.lookup is not None:
        return [ItemInputs(item) for item in items]
    inputs: list[ItemInputs] = []
    for item in items:
        inputs.append(ItemInputs(item, *_local_checks(job, item)))
        if job.run_checks:
            await asyncio.sleep(0)
    hits = cached_verdicts_of(job.store, job.judges, [(i.item, i.evidence) for i in inputs])
    rest: list[ItemInputs] = []
    settled: list[tuple[str, list[Verdict]]] = []
    writes = job.store.writes()
    for entry, found in zip(inputs, hits, strict=True):
        entry.hits = found
        sourced = _reusable(job, entry)
        if sourced is None:
            rest.append(entry)
            continue
        item_id = entry.item.id
        fresh = [(judge.label, v) for judge, (v, reused) in zip(job.judges, sourced, strict=True)
                 if not reused]
        for label, verdict in fresh:
            writes.verdict(job.run_id, item_id, label, verdict.model_dump())
        writes.result(job.run_id, item_id, decide_item(job, entry.item, [v for v, _ in sourced],
                                                       entry.checks or {}))
        settled.append((item_id, [v for _, v in fresh]))
    # Nothing here was paid for: on a server the next chunk is settled while this one commits.
    job.store.commit_soon(writes)
    for item_id, counted in settled:
        for verdict in counted:
            job.count(verdict)
        job.item_done()
        for judge in job.judges:
            job.done.pop((item_id, judge.label), None)
    return rest


def _reusable(job: ItemJob, entry: ItemInputs) -> list[tuple[Verdict, bool]] | None:
    """Per judge, its verdict on the item without a call and whether it is one this run stored
    (a resume's), or None when some judge must be called."""
    # Per judge: the verdict this run stored (a resume's, a dict), else the cache's JSON text.
    sources: list[dict[str, Any] | str] = []
    for judge, hit in zip(job.judges, entry.hits or [None] * len(job.judges), strict=True):
        done = job.done.get((entry.item.id, judge.label))
        if done is not None and done["status"] in _REUSED:
            sources.append(done)
        elif hit is not None:
            sources.append(hit)
        else:
            return None  # before any verdict is built: most items of a fresh run end here
    return [(judge.cached_verdict(source), False) if isinstance(source, str)
            else (Verdict.model_validate(source), True)
            for judge, source in zip(job.judges, sources, strict=True)]


async def _judged(job: ItemJob, item: BenchmarkItem, pending: PendingVerdicts,
                  inputs: ItemInputs | None) -> dict[str, Any]:
    if inputs is not None and inputs.checks is not None:
        checks, evidence = inputs.checks, inputs.evidence
    else:
        checks, evidence = await check_item(job, item)
    hits = inputs.hits if inputs is not None and inputs.hits is not None else (
        cached_verdicts_of(job.store, job.judges, [(item, evidence)])[0])  # one read per item
    verdicts = await asyncio.gather(*(judge_one(job, j, item, evidence, pending, hit,
                                                looked_up=True)
                                      for j, hit in zip(job.judges, hits, strict=True)))
    return decide_item(job, item, list(verdicts), checks)


def cached_verdicts_of(store: Store, judges: Sequence[Judge],
                       items: Sequence[tuple[BenchmarkItem, str | None]],
                       ) -> list[list[str | None]]:
    """Per ``(item, evidence)`` and judge (in order), its cached verdict (JSON text) or None, in
    one store read. A judge that does not read the cache (``use_cache`` off) gets None, as its own
    lookup would."""
    keys = []
    for item, evidence in items:
        part = verdict_key_item_part(item, evidence)  # the same for every judge
        keys.append([j.verdict_key(item, evidence, item_part=part) if j.use_cache else None
                     for j in judges])
    found = store.cached_verdicts([k for row in keys for k in row if k is not None])
    return [[None if k is None else found.get(k) for k in row] for row in keys]


async def check_item(job: ItemJob, item: BenchmarkItem) -> tuple[dict[str, Any], str | None]:
    """The item's rule-based checks (with the run's citation lookup, if any) and their evidence
    for the judges: the first step of every path that decides an item."""
    if job.run_checks and job.lookup is not None:
        # The lookup client is synchronous and rate-limited: keep it off the event loop.
        return await asyncio.to_thread(run_item_checks, item, job.lookup)
    return _local_checks(job, item)


def _local_checks(job: ItemJob, item: BenchmarkItem) -> tuple[dict[str, Any], str | None]:
    """The item's rule-based checks and their evidence for the judges, without a lookup."""
    return run_item_checks(item) if job.run_checks else ({}, None)


def decide_item(job: ItemJob, item: BenchmarkItem, verdicts: list[Verdict],
                checks: dict[str, Any]) -> dict[str, Any]:
    """The item's decision as stored: its judges' verdicts aggregated, the answer rules applied
    to its checks' findings, corrected when the run has a calibration. Every path that decides an
    item (a run, a resume, a batch run, ``judge``, ``assert_judged``) ends here."""
    _note_language(job, item)
    result = aggregate(item.id, verdicts, job.slots, sut_family=job.sut_family(item),
                       policy=job.policy, rubric_set=job.rubric_set, severity=job.severity,
                       checks=checks)
    data = result.model_dump()
    if job.correction is not None and result.status == "ok":
        from legal_judge.calibration import correct_result

        # Corrected scores replace `scores`; the ensemble's own stay in `raw_scores`.
        data = correct_result(data, job.correction, judge_id=job.ensemble_id)
    return data


def _note_language(job: ItemJob, item: BenchmarkItem) -> None:
    """Count a non-English answer against each judge not marked multilingual, and name it among
    the judge's first six (the warning's examples)."""
    language = detect_language(item)
    if language == "en":
        return
    for j in job.judges:
        if not j.config.multilingual:
            examples = job.non_english.setdefault(j.label, [])
            if len(examples) < 6:
                examples.append(f"{item.id} ({language})")
            job.non_english_count[j.label] = job.non_english_count.get(j.label, 0) + 1
