"""Delivery of the store's outbox to Langfuse: bounded, resumable, and honest about what failed.

Each outbox row names an entity (a run, an audit, a calibration, a run's labels, a debias
experiment); its traces and scores are built from the store (:mod:`legal_judge.sync.plan` and
its siblings), masked, and sent within one time budget. Delivered rows are marked synced; an
outage or a timeout leaves the row pending with its error; content no retry can deliver is parked
with its reason and fix. The rest of the package calls this through :mod:`legal_judge.sync.sink`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from legal_judge.assets.catalogue import load_assets
from legal_judge.store import Store
from legal_judge.sync.langfuse_client import Deadline, Undeliverable, client_for, refusal
from legal_judge.sync.langfuse_datasets import link_dataset_run
from legal_judge.sync.langfuse_errors import failure_line, keys_refused
from legal_judge.sync.langfuse_scores import ensure_score_configs, post_scores
from legal_judge.sync.langfuse_traces import emit_trace, flush_spans
from legal_judge.sync.mask import Masker, load_masker
from legal_judge.sync.outbox import EntityKind, kind_of
from legal_judge.sync.plan import ScorePlan, TracePlan, run_plans, score_config_specs
from legal_judge.sync.plan_debias import debias_plan
from legal_judge.sync.plan_escalation import escalation_scores
from legal_judge.sync.plan_estimate import estimate_scores
from legal_judge.sync.plan_other import audit_plan, calibration_plan, label_scores
from legal_judge.sync.settings import judge_prompt_name, require_settings

__all__ = ["DeliveryResult", "deliver_outbox"]

_RETRY_PARKED = "then `legal-judge sync --retry-parked`"


@dataclass
class DeliveryResult:
    """What one delivery attempt did.

    ``parked``: row id -> (reason, fix) of rows newly parked (a row retried by itself and parked
    again is not new); ``retried``: parked rows tried again; ``keys_refused``: Langfuse refused
    the keys (HTTP 401/403), which no rerun resolves until they are fixed.
    """

    delivered: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    timed_out: bool = False
    parked: dict[int, tuple[str, str]] = field(default_factory=dict)
    retried: list[int] = field(default_factory=list)
    quiet: set[int] = field(default_factory=set)
    keys_refused: bool = False


def _plans_for(row: dict[str, Any], store: Store, masker: Masker,
               configs: dict[str, tuple[str, str]]) -> tuple[list[TracePlan], list[ScorePlan],
                                                              list[str]]:
    kind, eid = kind_of(row["entity_kind"]), row["entity_id"]
    if kind is EntityKind.RUN:
        plans = run_plans(store, eid, masker=masker, configs=set(configs),
                          judge_name=judge_prompt_name())
        return link_dataset_run(store, eid, plans, masker=masker), [
            *estimate_scores(store, eid), *escalation_scores(store, eid)], []
    if kind is EntityKind.AUDIT:
        return [audit_plan(store, eid, masker=masker)], [], []
    if kind is EntityKind.CALIBRATION:
        return [calibration_plan(store, eid, masker=masker)], [], []
    if kind is EntityKind.HUMAN_LABELS:
        scores, skipped = label_scores(store, eid, masker=masker,
                                       kinds={k: v[1] for k, v in configs.items()})
        return [], [*scores, *estimate_scores(store, eid), *escalation_scores(store, eid)], [
            f"label not mapped to a score config: {s}" for s in skipped]
    if kind is EntityKind.DEBIAS_EXPERIMENT:
        return [debias_plan(store, eid, masker=masker)], [], []
    raise Undeliverable(
        f"legal-judge {_version()} cannot deliver '{row['entity_kind']}' entities (queued by a newer version?)",
        "upgrade legal-judge: a new version retries parked entities by itself")


def _version() -> str:
    from legal_judge import __version__

    return __version__


def _local_problem(row: dict[str, Any], exc: Exception) -> tuple[str, str]:
    """Reason and fix for an entity whose Langfuse objects cannot be built from the store."""
    if isinstance(exc, Undeliverable):
        return exc.reason, exc.fix
    what = f"{row['entity_kind']} {row['entity_id']}"
    if isinstance(exc, KeyError):
        return (f"the store no longer holds {what}",
                f"`legal-judge sync --drop {row['entity_id']}` removes it from the outbox")
    return (f"cannot build the Langfuse objects of {what} from the store: "
            f"{type(exc).__name__}: {exc}",
            f"report it (`legal-judge sync --status` shows it), {_RETRY_PARKED} after an upgrade")


def deliver_outbox(store: Store, *, timeout_s: float = 10.0, masker: Masker | None = None,
                   retry_parked: bool = False) -> DeliveryResult:
    """Deliver every pending outbox row to Langfuse within ``timeout_s`` (plus at most ~1 s).

    Rows delivered are marked synced; a row that failed for a reason a rerun can resolve (an
    outage, a timeout) is marked with its error and stays pending. A row that cannot be delivered
    as it stands (a kind this version does not know, an entity the store no longer holds, content
    Langfuse refuses) is parked with its reason and fix, and never blocks the others. Parked rows
    are retried: refused content by every sync (the fix is made in Langfuse), the others by
    another legal-judge version (the fix is an upgrade), all of them with ``retry_parked``.
    Never raises for Langfuse being down or slow.
    """
    result = DeliveryResult()
    # Refused content is retried by every sync (its fix is made in Langfuse), the rest by another
    # version (the fix is an upgrade) or on request; a retried row parked again is not news.
    auto = {p["id"] for p in store.outbox_parked()
            if p["park_retry"] == "sync" or p["parked_by"] != _version()}
    retry = [p["id"] for p in store.outbox_parked() if retry_parked or p["id"] in auto]
    rows = store.outbox_pending()
    if not rows and not retry:
        return result
    masker = masker if masker is not None else load_masker()
    dl = Deadline(timeout_s)
    try:
        c = client_for(require_settings())
        configs = ensure_score_configs(c, score_config_specs(load_assets()), dl)
    except Exception as exc:  # outage, auth, timeout: nothing delivered, the outbox stays
        _fail(store, result, [r["id"] for r in rows], exc)
        return result
    if retry:
        store.outbox_unpark(retry)
        result.retried = retry
        result.quiet = auto if not retry_parked else set()
        rows = store.outbox_pending()
    config_ids = {k: v[0] for k, v in configs.items()}
    for row in rows:
        try:
            traces, scores, notes = _plans_for(row, store, masker, configs)
        except Exception as exc:  # built from the store alone: the same next time
            _park(store, result, row["id"], *_local_problem(row, exc), retry="upgrade")
            continue
        try:
            for plan in traces:
                emit_trace(c, plan)
                scores = [*scores, *plan.scores]
            flush_spans(c, dl)
            post_scores(c, scores, config_ids, dl)
        except Exception as exc:
            refused = refusal(exc)
            if refused is not None:
                _park(store, result, row["id"], *refused, retry="sync")
                continue
            _fail(store, result, [row["id"]], exc)
            if result.timed_out:
                rest = [r["id"] for r in rows
                        if r["id"] not in result.failed and r["id"] not in result.parked
                        and r["id"] not in result.delivered]
                _fail(store, result, rest, exc)
                break
            continue
        result.notes += notes
        store.outbox_mark([row["id"]])
        result.delivered.append(row["id"])
    return result


def _park(store: Store, result: DeliveryResult, row_id: int, reason: str, fix: str, *,
          retry: str) -> None:
    store.outbox_park([row_id], reason=reason, fix=fix, by=_version(), retry=retry)
    if row_id not in result.quiet:
        result.parked[row_id] = (reason, fix)


def _fail(store: Store, result: DeliveryResult, ids: list[int], exc: BaseException) -> None:
    if not ids:
        return
    raw = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, TimeoutError) or "timed out" in str(exc).lower() or "Timeout" in raw:
        result.timed_out = True
    result.keys_refused = result.keys_refused or keys_refused(exc)
    # One line (status, what was asked); the raw payload goes to the log (--verbose).
    message, _ = failure_line(exc, "the delivery")
    store.outbox_mark(ids, error=message)
    result.failed.update({i: message for i in ids})
