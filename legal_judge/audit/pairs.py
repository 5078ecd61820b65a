"""Judge an audit's pairs: every variant through the target, concurrently, in a fixed order.

:class:`PairRunner` judges one pair at a time (a text pair, a position pair, a probe pair) through
the target's judge machinery (provider cache, retries, call log) under a semaphore;
:func:`judge_pairs` runs all of a design's pairs (through a :class:`TaskRouter` for provider
batches). A judgment that fails is recorded in its row, never scored. Used by
:mod:`legal_judge.audit.execute` (``audit run``) and :mod:`legal_judge.audit.validation` (no store).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol

from legal_judge.audit.analysis import PairRow
from legal_judge.audit.calls import Scored
from legal_judge.audit.design import AuditSettings, Design, ProbePair, TestPair
from legal_judge.audit.probes import SCORE, Probe
from legal_judge.audit.target import AuditTarget
from legal_judge.models import BenchmarkItem

__all__ = ["SLOT_STRIDE", "Guard", "PairRunner", "Progress", "TaskRouter", "in_sequence", "judge_pairs",
           "planned_calls", "variant_input"]

Progress = Callable[[int, int], None]
Guard = Callable[[Awaitable[Any]], Awaitable[Any]]


async def in_sequence(calls: Sequence[Awaitable[Any]], guard: Guard | None = None) -> list[Any]:
    """Await ``calls`` one after the other (each through ``guard``).

    When one fails, the calls not started yet are closed, so none is left "never awaited".
    """
    waiting, out = list(calls), []
    try:
        while waiting:
            call = waiting.pop(0)
            out.append(await (guard(call) if guard is not None else call))
    finally:
        for call in waiting:
            if inspect.iscoroutine(call):
                call.close()
    return out


class TaskRouter(Protocol):
    """Runs the audit's pair tasks in place of a bounded ``asyncio.gather`` (``audit run --batch``).

    ``bounded`` False lifts the call semaphore: batched calls park until a whole round is
    submitted, so a bound would stall the round.
    """

    bounded: bool

    async def gather(self, tasks: list[Coroutine[Any, Any, Any]]) -> list[Any]:
        """Run every pair task; the results (a row, or a probe pair's rows) in task order."""
        ...

    async def judgments(self, calls: Sequence[Awaitable[Any]],
                        guard: Guard | None = None) -> list[Any]:
        """One pair task's judgments (A, B, repeat), each through ``guard``: in order
        (:func:`in_sequence`), or at once when batched."""
        ...

    def extensions(self) -> dict[str, Any]:
        """Entries for the report's ``extensions`` (how the calls were made and priced)."""
        ...


def variant_input(item: BenchmarkItem) -> str:
    """The variant as the seed's ``variant_*_input``: the judge's [INPUT] and [OUTPUT]."""
    return f"[INPUT]\n{item.prompt}\n\n[OUTPUT]\n{item.response}"


def _position_input(question: str, first: str, second: str) -> str:
    return f"[INPUT]\n{question}\n\n[OPTION A]\n{first}\n\n[OPTION B]\n{second}"


def _other_answer(text: str) -> str:
    # The second, equal-quality answer of a position pair: the same text, paragraphs re-flowed.
    return "\n".join(line for line in text.splitlines() if line.strip())


#: Judgments one pair task may make (at most 3: A, B and the noise-floor repeat). A judgment's call
#: slot is ``task index * SLOT_STRIDE + step``: unique in the audit and the same on every rerun of
#: its design, so a batch custom id built from it finds a stored batch's line again.
SLOT_STRIDE = 4


def _slots(task: int, n: int) -> list[int]:
    if n > SLOT_STRIDE:
        raise RuntimeError(f"pair task {task} makes more than {SLOT_STRIDE} judgments")
    return [task * SLOT_STRIDE + step for step in range(n)]


class PairRunner:
    """Judges the pairs of one audit and keeps each judgment's raw output (``raw``)."""

    def __init__(self, target: AuditTarget, settings: AuditSettings, audit_id: str,
                 progress: Progress | None, total: int, *, router: TaskRouter | None = None) -> None:
        bounded = router is None or router.bounded
        self.target = target
        self.settings = settings
        self.audit_id = audit_id
        self.sem = asyncio.Semaphore(settings.concurrency if bounded else max(1, total))
        self.router = router
        self.progress = progress
        self.done = 0
        self.total = total
        self.raw: dict[str, dict[str, Any]] = {}

    async def _guard(self, coro: Awaitable[Any]) -> Any:
        try:
            async with self.sem:
                out = await coro
        finally:
            # Cancelled while waiting for the semaphore (Ctrl-C): the judgment never started.
            if inspect.iscoroutine(coro) and inspect.getcoroutinestate(coro) == "CORO_CREATED":
                coro.close()
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)
        return out

    async def _judgments(self, calls: Sequence[Awaitable[Any]]) -> list[Any]:
        # A router may make a pair's judgments at once (batched: one round, not three, and a
        # round can take a day). Either way they start in this order, so batch call slots (and
        # custom ids) do not depend on the mode.
        if self.router is not None:
            return await self.router.judgments(calls, self._guard)
        return await in_sequence(calls, self._guard)

    async def text_pair(self, pair: TestPair, kind: str, repeat: bool, task: int = 0) -> PairRow:
        """Judge a counterfactual pair (and B once more for a noise repeat): one row; ``task``
        is the pair task's index (its judgments' call slots)."""
        run = self.audit_id
        if pair.meta.get("llm_error"):  # no valid variants: nothing to judge, documented as failed
            return PairRow(dimension=pair.dimension, pair_id=pair.pair_id,
                           variant_a_input=variant_input(pair.a), variant_a_score=None,
                           variant_b_input=variant_input(pair.b), variant_b_score=None,
                           error=f"variant generation INCONCLUSIVE: {pair.meta['llm_error']}",
                           kind=kind, subgroup=pair.subgroup)  # type: ignore[arg-type]
        first, second = (pair.a, pair.b) if pair.order == "ab" else (pair.b, pair.a)
        slot = _slots(task, 2 + repeat)
        calls = [self.target.score(first, run_id=run, slot=slot[0]),
                 self.target.score(second, run_id=run, slot=slot[1])]
        if repeat:
            calls.append(self.target.score(pair.b, run_id=run, repeat=1, slot=slot[2]))
        s1, s2, *more = await self._judgments(calls)
        sa, sb = (s1, s2) if pair.order == "ab" else (s2, s1)
        rep = more[0] if more else None
        errors = [f"variant {n}: {s.status}: {s.error}" for n, s in (("A", sa), ("B", sb))
                  if s.score is None]
        self.raw[pair.pair_id] = {"a": {"status": sa.status, "score": sa.score, "raw": sa.raw,
                                        "error": sa.error},
                                  "b": {"status": sb.status, "score": sb.score, "raw": sb.raw,
                                        "error": sb.error},
                                  "repeat_b": None if rep is None else {"score": rep.score,
                                                                         "raw": rep.raw}}
        return PairRow(dimension=pair.dimension, pair_id=pair.pair_id,
                       variant_a_input=variant_input(pair.a), variant_a_score=sa.score,
                       variant_b_input=variant_input(pair.b), variant_b_score=sb.score,
                       error="; ".join(errors) or None, kind=kind,  # type: ignore[arg-type]
                       subgroup=pair.subgroup, quality=pair.quality, order=pair.order,
                       repeat_score=rep.score if rep is not None else None)

    async def position_pair(self, pair: TestPair, repeat: bool, task: int = 0) -> PairRow:
        """Judge an answer shown first and second against its re-flowed twin: one row."""
        q, x = pair.a.prompt, pair.a.response
        y = _other_answer(x)
        run, iid = self.audit_id, pair.pair_id
        orders = [("ab", x, y), ("ba", y, x)] if pair.order == "ab" else [("ba", y, x), ("ab", x, y)]
        slot = _slots(task, 2 + repeat)
        calls = [self.target.compare(q, first, second, run_id=run, item_id=iid, slot=s)
                 for s, (_, first, second) in zip(slot, orders, strict=False)]
        if repeat:
            calls.append(self.target.compare(q, y, x, run_id=run, item_id=iid, repeat=1,
                                             slot=slot[2]))
        c1, c2, *more = await self._judgments(calls)
        got = {orders[0][0]: c1, orders[1][0]: c2}
        ab, ba = got["ab"], got["ba"]
        rep = more[0] if more else None
        errors = [f"order {n}: {c.status}: {c.error}" for n, c in (("ab", ab), ("ba", ba))
                  if c.score_first is None]
        to_identity = {"A": "B", "B": "A", "tie": "tie"}
        winners = None if errors else (ab.winner, to_identity[ba.winner])
        self.raw[iid] = {"ab": {"status": ab.status, "raw": ab.raw, "error": ab.error},
                         "ba": {"status": ba.status, "raw": ba.raw, "error": ba.error}}
        return PairRow(dimension=pair.dimension, pair_id=iid,
                       variant_a_input="[ORDER] the answer shown first\n" + _position_input(q, x, y),
                       variant_a_score=ab.score_first,
                       variant_b_input="[ORDER] the same answer shown second\n"
                                       + _position_input(q, y, x),
                       variant_b_score=ba.score_second, error="; ".join(errors) or None,
                       kind="position", quality=pair.quality, order=pair.order,
                       repeat_score=rep.score_second if rep is not None else None,
                       winners=winners)


    async def probe_pair(self, pair: ProbePair, probe: Probe, step: float,
                         task: int = 0) -> list[PairRow]:
        """Judge a sound answer and its degraded variant; one row per rubric the probe scores."""
        run = self.audit_id
        first, second = ((pair.original, pair.degraded) if pair.order == "od"
                         else (pair.degraded, pair.original))
        slot = _slots(task, 2)
        s1, s2 = await self._judgments([self.target.score(first, run_id=run, slot=slot[0]),
                                        self.target.score(second, run_id=run, slot=slot[1])])
        so, sd = (s1, s2) if pair.order == "od" else (s2, s1)
        self.raw[pair.pair_id] = {
            side: {"status": x.status, "score": x.score, "detail": x.detail, "raw": x.raw,
                   "error": x.error} for side, x in (("original", so), ("degraded", sd))}
        checks = None
        if sd.score is not None and sd.detail is not None:
            checks = {c.label: c.holds(sd.detail) for c in probe.checks}
        rows = []
        for rubric in probe.rubrics:
            vo, eo = _rubric_value(so, rubric)
            vd, ed = _rubric_value(sd, rubric)
            errors = [f"{n}: {e}" for n, e in (("original", eo), ("degraded", ed)) if e]
            rows.append(PairRow(
                probe=probe.name, pair_id=pair.pair_id, base_item_id=pair.base_item_id,
                variant_a_input=variant_input(pair.original),
                variant_a_score=None if errors else vo,
                variant_b_input=variant_input(pair.degraded),
                variant_b_score=None if errors else vd, error="; ".join(errors) or None,
                kind="probe", order=pair.order, rubric=rubric,
                expected_direction=probe.direction, checks=None if errors else checks,
                step=step))
        return rows


def _rubric_value(scored: Scored, rubric: str) -> tuple[float | None, str | None]:
    """The score a probe reads from a judgment: the rubric's, or the target's only score."""
    if scored.score is None:
        return None, f"{scored.status}: {scored.error}"
    scores = (scored.detail or {}).get("scores")
    if scores is None or rubric == SCORE:
        return scored.score, None  # a single-score target is probed on its score
    if rubric not in scores:
        return None, f"rubric '{rubric}' not in the verdict"
    return float(scores[rubric]), None


def planned_calls(design: Design, settings: AuditSettings) -> int:
    """How many judgments a design needs (pairs, noise repeats, probe pairs): the progress total."""
    n = 2 * len(design.probe_pairs)
    for dim, pairs in design.by_dimension().items():
        del dim
        n += 2 * len(pairs) + min(settings.noise_pairs, len(pairs))
    return n


async def judge_pairs(design: Design, runner: PairRunner, settings: AuditSettings,
                      router: TaskRouter | None = None, *, step: float = 1.0
                      ) -> tuple[list[PairRow], list[PairRow]]:
    """Judge every pair: the dimension rows and the probe rows (one per probe rubric)."""
    kinds = {d.name: d.effective_kind for d in design.dimensions}
    probes = {p.name: p for p in design.probes}
    tasks: list[Coroutine[Any, Any, Any]] = []
    for name, pairs in design.by_dimension().items():
        for i, pair in enumerate(pairs):
            repeat = i < settings.noise_pairs
            if kinds[name] == "position":
                tasks.append(runner.position_pair(pair, repeat, len(tasks)))
            else:
                tasks.append(runner.text_pair(pair, kinds[name], repeat, len(tasks)))
    n_dimension = len(tasks)
    tasks += [runner.probe_pair(pair, probes[pair.probe], step, n_dimension + i)
              for i, pair in enumerate(design.probe_pairs)]
    out = await router.gather(tasks) if router is not None else list(await asyncio.gather(*tasks))
    return list(out[:n_dimension]), [row for rows in out[n_dimension:] for row in rows]
