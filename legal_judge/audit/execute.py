"""Run an audit: design, guard, judge every variant concurrently, log everything, report.

Judge calls go through the target's judge machinery (provider cache, retries, call log in the store)
with ``asyncio.gather`` under a semaphore (:mod:`legal_judge.audit.pairs`). A variant whose judgment
fails is recorded, excluded from the statistics and listed in the report. The demographic subgroup
guard runs before any judge call.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from legal_judge.audit.analysis import PairRow
from legal_judge.audit.design import AuditSettings, Design, build_design, subgroup_counts
from legal_judge.audit.dimensions import Dimension, resolve_dimensions
from legal_judge.audit.history import base_judge
from legal_judge.audit.log import AuditLog, report_digest
from legal_judge.audit.pairs import PairRunner, Progress, TaskRouter, judge_pairs, planned_calls
from legal_judge.audit.probes import Probe, resolve_probes
from legal_judge.audit.report import build_report, validate_report
from legal_judge.audit.target import AuditTarget
from legal_judge.errors import ConfigError, LegalJudgeError
from legal_judge.models import BenchmarkItem
from legal_judge.providers.base import is_simulated_spec
from legal_judge.run_owner import hold_run
from legal_judge.store import Store, canonical_json

__all__ = ["AuditOutcome", "AuditSuspended", "RESUMABLE", "check_settings", "close_provider",
           "new_audit_id",
           "run_audit"]

#: Audit statuses ``audit run --resume`` picks up (``running``: the process died without a word).
RESUMABLE = ("running", "failed", "interrupted", "submitted")


class AuditSuspended(Exception):  # noqa: N818 - a state, not an error: batches left with the provider
    """Raised by a router that leaves the judge calls with the provider (``--no-wait``)."""


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


def check_settings(settings: AuditSettings) -> Any:
    """Check what an audit's settings name before the audit exists (a user mistake leaves no
    audit row, so no ``interrupted`` audit whose resume fails the same way).

    Returns:
        The auditor model of ``llm_variants`` (its spec and key checked), or None; the caller
        closes it (:func:`close_provider`).

    Raises:
        ConfigError: unknown dimensions or probes (or unreadable files of them); an auditor
            model with a bad spec or without its API key.
    """
    resolve_dimensions(settings.dimensions, extra_file=settings.dimensions_file)
    resolve_probes(settings.probes, extra_file=settings.probes_file)
    if not settings.llm_variants:
        return None
    from legal_judge.providers.registry import get_provider

    return get_provider(settings.llm_variants)


async def close_provider(provider: Any) -> None:
    """Close a provider that has anything to close (None: nothing)."""
    close = getattr(provider, "aclose", None)
    if close is not None:
        await close()


def _start(store: Store, audit_id: str, target: AuditTarget, settings: AuditSettings,
           dims: list[Dimension], items: list[BenchmarkItem], design: Design,
           source: dict[str, Any] | None, resume: bool) -> None:
    # One commit: the audits row with the log entries a resume needs (items, design), so a
    # process killed while starting leaves either nothing or a resumable audit.
    log = AuditLog(store)
    with store.transaction():
        if resume:
            store.audits.set_status(audit_id, "running")
            log.append_many(audit_id, [("audit_resumed", {"judge_id": target.judge_id})])
            return
        config = {"settings": settings.model_dump(), "target": target.describe(),
                  "judge": target.label, "high_stakes": target.high_stakes, "source": source}
        store.audits.start(audit_id, judge_id=target.judge_id, config=config)
        log.append_many(audit_id, [("audit_started", {
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
    store.audits.set_status(audit_id, status)
    log.append(audit_id, f"audit_{status}", payload)


def _finish(store: Store, log: AuditLog, audit_id: str, status: str,
            report: dict[str, Any]) -> None:
    problems = validate_report(report)
    log.append(audit_id, "validator", {"schema": "bias_report.schema.json", "valid": not problems,
                                       "problems": problems})
    severity = report["overall_assessment"]["severity"]
    store.audits.finish(audit_id, status=status, severity=severity, report=report)
    log.append(audit_id, "audit_finished", {
        "status": status, "severity": severity,
        "verdict": report.get("extensions", {}).get("verdict"),
        "report_sha256": report_digest(report),  # what `audit gate` checks a report against
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
                          judge_label=str(extensions.get("judge") or "(unknown)"),
                          judge_spec=(extensions.get("target") or {}).get("spec"))
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
    auditor = check_settings(settings)
    try:
        return await _checked_audit(target, items, settings, store=store, progress=progress,
                                    audit_id=audit_id, sync=sync, router=router, resume=resume,
                                    source=source, auditor=auditor)
    finally:
        await close_provider(auditor)


async def _checked_audit(target: AuditTarget, items: list[BenchmarkItem],
                         settings: AuditSettings, *, store: Store, progress: Progress | None,
                         audit_id: str | None, sync: bool, router: TaskRouter | None,
                         resume: bool, source: dict[str, Any] | None,
                         auditor: Any) -> AuditOutcome:
    """run_audit once its settings are checked: design, start, conduct."""
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
                              audit_id=audit_id, progress=progress, router=router, sync=sync,
                              auditor=auditor)


async def _conduct(target: AuditTarget, settings: AuditSettings, design: Design,
                   dims: list[Dimension], probes: list[Probe], *, store: Store, log: AuditLog,
                   audit_id: str, progress: Progress | None, router: TaskRouter | None,
                   sync: bool, auditor: Any = None) -> AuditOutcome:
    """The audit after its start is stored: variants, judgments, report (run_audit's body)."""
    ext: dict[str, Any] = {"judge_id": target.judge_id, "audit_id": audit_id, "judge": target.label,
                           "target_kind": target.kind, "high_stakes": target.high_stakes,
                           "design_seed": design.seed, "target": target.describe(),
                           "base_judge": base_judge(target)}
    if is_simulated_spec(_spec(target) or ""):
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
                                      target=target, provider=auditor)
        ext["llm_variants"] = llm
        status = "INCONCLUSIVE" if llm["requested"] and not llm["ok"] else status
    runner = PairRunner(target, settings, audit_id, progress, planned_calls(design, settings),
                        router=router)
    try:
        step = float(target.describe().get("scale_step") or 1.0)
        rows, probe_rows = await judge_pairs(design, runner, settings, router, step=step)
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
        judge_label=target.label, probes=probes, status=status,
        judge_spec=_spec(target))
    _finish(store, log, audit_id, status, report)
    if sync:
        _sync(store, audit_id)
    return AuditOutcome(audit_id, target.judge_id, status, report, rows, probe_rows)


def _spec(target: AuditTarget) -> str | None:
    """The judge's spec as the report records it (a team's own judge: its provider spec)."""
    spec = target.describe().get("spec")
    return str(spec) if spec else None


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
