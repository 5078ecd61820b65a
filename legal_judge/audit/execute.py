"""Run an audit: design, guard, judge every variant concurrently, log everything, report.

Judge calls go through the target's judge machinery (provider cache, retries, call log in the store)
with ``asyncio.gather`` under a semaphore. A variant whose judgment fails is recorded, excluded from the
statistics and listed in the report. The demographic subgroup guard runs before any judge call.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import secrets
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from legal_judge.audit.analysis import PairRow
from legal_judge.audit.calls import Scored
from legal_judge.audit.design import (
    AuditSettings,
    Design,
    ProbePair,
    TestPair,
    build_design,
    subgroup_counts,
)
from legal_judge.audit.dimensions import Dimension, resolve_dimensions
from legal_judge.audit.history import base_judge
from legal_judge.audit.log import AuditLog
from legal_judge.audit.probes import SCORE, Probe, resolve_probes
from legal_judge.audit.report import build_report, validate_report
from legal_judge.audit.target import AuditTarget
from legal_judge.errors import ConfigError, LegalJudgeError
from legal_judge.models import BenchmarkItem
from legal_judge.run_owner import hold_run
from legal_judge.store import Store, canonical_json, utcnow

__all__ = ["AuditOutcome", "AuditSuspended", "RESUMABLE", "TaskRouter", "in_sequence", "new_audit_id",
           "run_audit", "variant_input"]

#: Audit statuses ``audit run --resume`` picks up (``running``: the process died without a word).
RESUMABLE = ("running", "failed", "interrupted", "submitted")


class AuditSuspended(Exception):  # noqa: N818 - a state, not an error: batches left with the provider
    """Raised by a router that leaves the judge calls with the provider (``--no-wait``)."""

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


@dataclass
class AuditOutcome:
    """What ``audit run`` produced."""

    audit_id: str
    judge_id: str
    status: str
    report: dict[str, Any]
    rows: list[PairRow]
    probe_rows: list[PairRow] = field(default_factory=list)


def new_audit_id() -> str:
    """``audit-<UTC timestamp>-<random>``."""
    return f"audit-{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def variant_input(item: BenchmarkItem) -> str:
    """The variant as the seed's ``variant_*_input``: the judge's [INPUT] and [OUTPUT]."""
    return f"[INPUT]\n{item.prompt}\n\n[OUTPUT]\n{item.response}"


def _position_input(question: str, first: str, second: str) -> str:
    return f"[INPUT]\n{question}\n\n[OPTION A]\n{first}\n\n[OPTION B]\n{second}"


def _other_answer(text: str) -> str:
    # The second, equal-quality answer of a position pair: the same text, paragraphs re-flowed.
    return "\n".join(line for line in text.splitlines() if line.strip())


class _Runner:
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

    async def text_pair(self, pair: TestPair, kind: str, repeat: bool) -> PairRow:
        run = self.audit_id
        if pair.meta.get("llm_error"):  # no valid variants: nothing to judge, documented as failed
            return PairRow(dimension=pair.dimension, pair_id=pair.pair_id,
                           variant_a_input=variant_input(pair.a), variant_a_score=None,
                           variant_b_input=variant_input(pair.b), variant_b_score=None,
                           error=f"variant generation INCONCLUSIVE: {pair.meta['llm_error']}",
                           kind=kind, subgroup=pair.subgroup)  # type: ignore[arg-type]
        first, second = (pair.a, pair.b) if pair.order == "ab" else (pair.b, pair.a)
        calls = [self.target.score(first, run_id=run), self.target.score(second, run_id=run)]
        if repeat:
            calls.append(self.target.score(pair.b, run_id=run, repeat=1))
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

    async def position_pair(self, pair: TestPair, repeat: bool) -> PairRow:
        q, x = pair.a.prompt, pair.a.response
        y = _other_answer(x)
        run, iid = self.audit_id, pair.pair_id
        orders = [("ab", x, y), ("ba", y, x)] if pair.order == "ab" else [("ba", y, x), ("ab", x, y)]
        calls = [self.target.compare(q, first, second, run_id=run, item_id=iid)
                 for _, first, second in orders]
        if repeat:
            calls.append(self.target.compare(q, y, x, run_id=run, item_id=iid, repeat=1))
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


    async def probe_pair(self, pair: ProbePair, probe: Probe, step: float) -> list[PairRow]:
        """Judge a sound answer and its degraded variant; one row per rubric the probe scores."""
        run = self.audit_id
        first, second = ((pair.original, pair.degraded) if pair.order == "od"
                         else (pair.degraded, pair.original))
        s1, s2 = await self._judgments([self.target.score(first, run_id=run),
                                        self.target.score(second, run_id=run)])
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


def _calls(design: Design, settings: AuditSettings) -> int:
    n = 2 * len(design.probe_pairs)
    for dim, pairs in design.by_dimension().items():
        del dim
        n += 2 * len(pairs) + min(settings.noise_pairs, len(pairs))
    return n


async def _execute(design: Design, runner: _Runner, settings: AuditSettings,
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
                tasks.append(runner.position_pair(pair, repeat))
            else:
                tasks.append(runner.text_pair(pair, kinds[name], repeat))
    n_dimension = len(tasks)
    tasks += [runner.probe_pair(pair, probes[pair.probe], step) for pair in design.probe_pairs]
    out = await router.gather(tasks) if router is not None else list(await asyncio.gather(*tasks))
    return list(out[:n_dimension]), [row for rows in out[n_dimension:] for row in rows]


def _start(store: Store, audit_id: str, target: AuditTarget, settings: AuditSettings,
           dims: list[Dimension], items: list[BenchmarkItem], design: Design,
           source: dict[str, Any] | None, resume: bool) -> None:
    # One commit: the audits row with the log entries a resume needs (items, design), so a
    # process killed while starting leaves either nothing or a resumable audit.
    with store.transaction() as db:
        if resume:
            db.execute("UPDATE audits SET status = 'running' WHERE id = ?", (audit_id,))
            AuditLog.append_in(db, audit_id, [("audit_resumed", {"judge_id": target.judge_id})])
            return
        config = {"settings": settings.model_dump(), "target": target.describe(),
                  "judge": target.label, "high_stakes": target.high_stakes, "source": source}
        db.execute("INSERT INTO audits (id, created_at, judge_id, status, config_json) "
                   "VALUES (?, ?, ?, ?, ?)",
                   (audit_id, utcnow(), target.judge_id, "running", canonical_json(config)))
        AuditLog.append_in(db, audit_id, [("audit_started", {
            **config, "judge_id": target.judge_id, "target_kind": target.kind,
            "dimensions": [d.model_dump() for d in dims],
            "items": [i.model_dump(mode="json") for i in items],
        })] + [("design", {"dimension": dim, "pairs": [p.describe() for p in pairs]})
               for dim, pairs in design.by_dimension().items()]
          + [("probe_design", {"probe": name, "pairs": [p.describe() for p in pairs],
                               "not_applicable": design.not_applicable.get(name, [])})
             for name, pairs in design.by_probe().items()])


def _check_design(log: AuditLog, audit_id: str, design: Design) -> None:
    """A resumed audit must rebuild the very pairs it logged (same seed, items and dimensions)."""
    logged = {e.payload["dimension"]: e.payload["pairs"]
              for e in log.entries(audit_id, kind="design")}
    logged |= {f"probe {e.payload['probe']}": e.payload["pairs"]
               for e in log.entries(audit_id, kind="probe_design")}
    rebuilt = {dim: json.loads(canonical_json([p.describe() for p in pairs]))
               for dim, pairs in design.by_dimension().items()}
    rebuilt |= {f"probe {name}": json.loads(canonical_json([p.describe() for p in pairs]))
                for name, pairs in design.by_probe().items()}
    if logged != rebuilt:
        changed = sorted(d for d in set(logged) | set(rebuilt) if logged.get(d) != rebuilt.get(d))
        raise ConfigError(
            f"audit {audit_id} cannot be resumed: its test pairs no longer rebuild the same "
            f"({', '.join(changed)} differ)", code="audit-resume-design",
            fix="start a new audit (the dimension definitions or items changed since)")


def _stopped(store: Store, log: AuditLog, audit_id: str, status: str,
             payload: dict[str, Any]) -> None:
    with store.transaction() as db:
        db.execute("UPDATE audits SET status = ? WHERE id = ?", (status, audit_id))
    log.append(audit_id, f"audit_{status}", payload)


def _finish(store: Store, log: AuditLog, audit_id: str, status: str,
            report: dict[str, Any]) -> None:
    text = canonical_json(report)
    problems = validate_report(report)
    log.append(audit_id, "validator", {"schema": "bias_report.schema.json", "valid": not problems,
                                       "problems": problems})
    severity = report["overall_assessment"]["severity"]
    with store.transaction() as db:
        db.execute("UPDATE audits SET status = ?, severity = ?, report_json = ? WHERE id = ?",
                   (status, severity, text, audit_id))
    log.append(audit_id, "audit_finished", {
        "status": status, "severity": severity,
        "verdict": report.get("extensions", {}).get("verdict"),
        "report_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "flagged": [d["dimension"] for d in report["dimension_results"] if d["flagged"]],
    })


def _insufficient_report(settings: AuditSettings, short: dict[str, dict[str, int]],
                         extensions: dict[str, Any], *, probes: list[Probe]) -> dict[str, Any]:
    detail = "; ".join(f"{d}: " + ", ".join(f"{g} {n}" for g, n in c.items())
                       for d, c in short.items())
    why = (f"fewer than {settings.min_sample} scored examples per demographic subgroup "
           f"({detail}); the audit stopped before any judge call. Raise --pairs to at least "
           f"{settings.min_sample} per subgroup.")
    report = build_report([], settings, extensions={**extensions, "subgroup_counts": short},
                          status="INSUFFICIENT_DATA", status_reason=why, probes=probes,
                          judge_label=str(extensions.get("judge") or "(unknown)"))
    return report


async def run_audit(target: AuditTarget, items: list[BenchmarkItem], settings: AuditSettings, *,
                    store: Store, progress: Progress | None = None,
                    audit_id: str | None = None, sync: bool = True,
                    router: TaskRouter | None = None, resume: bool = False,
                    source: dict[str, Any] | None = None) -> AuditOutcome:
    """Run one audit of one judge end to end and store it (report in ``audits``, log entries).

    With ``sync`` the audit is queued in the outbox for Langfuse and delivered when configured.
    ``router`` runs the judge calls another way (provider batches: :mod:`legal_judge.batch.audit`).
    ``resume`` continues the stored audit ``audit_id`` (see :mod:`legal_judge.audit.resume`): the
    design must rebuild the pairs it logged; judgments made before come from the caches.

    Args:
        source: How to rebuild the target on resume (stored with the audit's config).

    Returns:
        The outcome; status ``submitted`` (no report yet) when the router left the calls with
        the provider.

    Raises:
        ConfigError: unknown dimensions, no items, a resumed design that changed; provider
            configuration errors propagate.
    """
    dims = resolve_dimensions(settings.dimensions, extra_file=settings.dimensions_file)
    probes = resolve_probes(settings.probes, extra_file=settings.probes_file)
    design = build_design(items, dims, pairs=settings.pairs, seed=settings.seed, probes=probes,
                          probe_pairs=settings.probe_pairs)
    audit_id = audit_id or new_audit_id()
    log = AuditLog(store)
    if resume:
        _check_design(log, audit_id, design)
    _start(store, audit_id, target, settings, dims, items, design, source, resume)
    # Owned from its first commit: a process killed mid-way leaves an audit that `audit list`
    # shows interrupted (with its resume command), not running forever.
    with hold_run(store, audit_id, kind="audit"):
        return await _conduct(target, settings, design, dims, probes, store=store, log=log,
                              audit_id=audit_id, progress=progress, router=router, sync=sync)


async def _conduct(target: AuditTarget, settings: AuditSettings, design: Design,
                   dims: list[Dimension], probes: list[Probe], *, store: Store, log: AuditLog,
                   audit_id: str, progress: Progress | None, router: TaskRouter | None,
                   sync: bool) -> AuditOutcome:
    """The audit after its start is stored: variants, judgments, report (run_audit's body)."""
    ext: dict[str, Any] = {"judge_id": target.judge_id, "audit_id": audit_id, "judge": target.label,
                           "target_kind": target.kind, "high_stakes": target.high_stakes,
                           "design_seed": design.seed, "target": target.describe(),
                           "base_judge": base_judge(target)}
    if "simulated" in str(target.describe().get("spec", "")):
        ext["notice"] = "simulated judge: for demos, tests and power studies only"
    counts = subgroup_counts(design)
    short = {d: c for d, c in counts.items() if min(c.values(), default=0) < settings.min_sample}
    if short:
        report = _insufficient_report(settings, short, ext, probes=probes)
        _finish(store, log, audit_id, "INSUFFICIENT_DATA", report)
        if sync:
            _sync(store, audit_id)
        return AuditOutcome(audit_id, target.judge_id, "INSUFFICIENT_DATA", report, [])
    status = "complete"
    if settings.llm_variants:
        from legal_judge.audit.assisted import generate_variants

        llm = await generate_variants(design, settings, store=store, log=log, audit_id=audit_id,
                                      target=target)
        ext["llm_variants"] = llm
        status = "INCONCLUSIVE" if llm["requested"] and not llm["ok"] else status
    runner = _Runner(target, settings, audit_id, progress, _calls(design, settings), router=router)
    try:
        step = float(target.describe().get("scale_step") or 1.0)
        rows, probe_rows = await _execute(design, runner, settings, router, step=step)
    except AuditSuspended as exc:
        _stopped(store, log, audit_id, "submitted", {"detail": str(exc)})
        return AuditOutcome(audit_id, target.judge_id, "submitted", {}, [])
    except LegalJudgeError as exc:
        _stopped(store, log, audit_id, "failed", {"error": str(exc)})
        raise
    except (KeyboardInterrupt, asyncio.CancelledError):
        _stopped(store, log, audit_id, "interrupted", {"judgments_done": runner.done})
        raise
    for dim in design.by_dimension():
        log.append(audit_id, "judgments", {"dimension": dim, "outputs": {
            r.pair_id: runner.raw.get(r.pair_id) for r in rows if r.dimension == dim}})
    for name, pairs in design.by_probe().items():
        log.append(audit_id, "probe_judgments", {"probe": name, "outputs": {
            p.pair_id: runner.raw.get(p.pair_id) for p in pairs}})
    distinct = {(p.original.prompt, p.original.response) for p in design.probe_pairs} | \
        {(p.degraded.prompt, p.degraded.response) for p in design.probe_pairs}
    ext["counts"] = {"subgroups": counts, "calls_planned": runner.total,
                     "probe_judgments_planned": 2 * len(design.probe_pairs),
                     "probe_distinct_variants": len(distinct),
                     "sound_items": design.sound_items}
    ext["probe_not_applicable"] = design.not_applicable
    if router is not None:
        ext.update(router.extensions())
    report = build_report(
        rows + probe_rows, settings, dimensions=[d.name for d in dims],
        kinds={d.name: d.effective_kind for d in dims},
        actions={d.name: _action(d) for d in dims if _action(d)}, extensions=ext,
        judge_label=target.label, probes=probes, status=status)
    _finish(store, log, audit_id, status, report)
    if sync:
        _sync(store, audit_id)
    return AuditOutcome(audit_id, target.judge_id, status, report, rows, probe_rows)


def _sync(store: Store, audit_id: str) -> None:
    # Stored first; Langfuse gets it when configured (never raises when Langfuse is down).
    from legal_judge.sync.sink import get_sink

    sink = get_sink()
    sink.enqueue_audit(store, audit_id)
    sink.flush(store, timeout_s=10.0)


def _action(d: Dimension) -> str:
    from legal_judge.audit.report import REMEDIATION

    if d.remediation and d.remediation in REMEDIATION:
        return REMEDIATION[d.remediation]
    return d.remediation or ""  # a user dimension's own recommended action, in words
