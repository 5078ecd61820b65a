"""The small interface the runner, audit and calibration use to send things to Langfuse.

Everything is stored locally first; a sink only queues a reference in the store's outbox
(through :func:`legal_judge.sync.outbox.enqueue`, the one way in) and :meth:`Sink.flush` delivers the outbox when Langfuse is configured
(:mod:`legal_judge.sync.settings`), within a bounded timeout. An outage leaves the rows pending
with their error; ``legal-judge sync`` delivers them later. This module imports no ``langfuse``
module, not even in a function: delivery lives in :mod:`legal_judge.sync.langfuse_delivery` and the
annotation queue in :mod:`legal_judge.sync.langfuse_labels`, loaded (with the SDK) only when a
delivery or a queue is asked for, so a process that never syncs never loads the SDK.

Typical use at the end of a run::

    sink = get_sink()
    sink.enqueue_run(store, run_id)
    report = sink.flush(store, timeout_s=10)   # never raises for Langfuse being down
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from legal_judge.errors import LegalJudgeError
from legal_judge.store import Store
from legal_judge.sync.mask import Masker, load_masker
from legal_judge.sync.outbox import EntityKind, enqueue
from legal_judge.sync.settings import configured, require_settings

__all__ = ["OutboxSink", "Sink", "SyncReport", "annotation_queue", "annotation_sink", "get_sink",
           "sync_now"]


@dataclass
class SyncReport:
    """What a flush did.

    ``parked`` lists every entity parked now (kind, id, reason, fix, ...: ``Store.outbox_parked``),
    ``newly_parked`` how many of them this flush parked; a parked entity is kept in the outbox
    and skipped until its fix is applied (see ``legal-judge sync --status``).
    """

    configured: bool
    delivered: int = 0
    failed: int = 0
    pending: int = 0
    timed_out: bool = False
    elapsed_s: float = 0.0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    parked: list[dict[str, Any]] = field(default_factory=list)
    newly_parked: int = 0
    retried: int = 0
    #: Langfuse refused the keys (HTTP 401/403): a later sync delivers only once they are fixed.
    keys_refused: bool = False

    @property
    def incomplete(self) -> bool:
        """Something was not delivered that the user should hear about."""
        return bool(self.failed or self.timed_out or self.newly_parked)

    @property
    def advice(self) -> str:
        """One line for a command that flushed at its end (what happened, what to run)."""
        parts = []
        if self.newly_parked:
            parts.append(f"{self.newly_parked} not deliverable as stored, parked "
                         "(`legal-judge sync --status` gives the reason and the fix)")
        if self.keys_refused:
            parts.append(f"{self.pending} pending: Langfuse refused the keys; the store keeps "
                         "everything: fix LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY, then run "
                         "`legal-judge sync`")
        elif self.failed or self.timed_out:
            parts.append(f"{self.pending} pending; the store keeps everything: run "
                         "`legal-judge sync` later")
        return "Langfuse sync incomplete: " + "; ".join(parts) if parts else ""


class Sink(Protocol):
    """Where the core modules report what they stored."""

    def enqueue_run(self, store: Store, run_id: str) -> None:
        """Queue a run (its items, judge calls, verdicts, results) for delivery."""

    def enqueue_audit(self, store: Store, audit_id: str) -> None:
        """Queue a bias audit."""

    def flush(self, store: Store, *, timeout_s: float = 10.0) -> SyncReport:
        """Deliver what is queued, within ``timeout_s``; never raises for Langfuse being down."""


class OutboxSink:
    """Writes outbox rows; delivers them on :meth:`flush` when ``deliver`` is true."""

    def __init__(self, *, deliver: bool, masker: Masker | None = None) -> None:
        self.deliver = deliver
        self.masker = masker

    def enqueue_run(self, store: Store, run_id: str) -> None:
        enqueue(store, EntityKind.RUN, run_id)

    def enqueue_audit(self, store: Store, audit_id: str) -> None:
        enqueue(store, EntityKind.AUDIT, audit_id)

    def create_annotation_queue(self, *, name: str, run_id: str, trace_seeds: list[str],
                                rubrics: list[dict[str, Any]], human: bool = False) -> str:
        """A Langfuse annotation queue for a calibration sample, or with ``human`` for an
        escalation (the lawyers' ``human.*`` score configs); Langfuse must be configured."""
        from legal_judge.sync.langfuse_labels import create_annotation_queue

        return create_annotation_queue(name=name, run_id=run_id, trace_seeds=trace_seeds,
                                       rubrics=rubrics, human=human)

    def flush(self, store: Store, *, timeout_s: float = 10.0) -> SyncReport:
        if not self.deliver:
            return SyncReport(configured=False, pending=store.outbox_status()["pending"])
        return sync_now(store, timeout_s=timeout_s, masker=self.masker)


def sync_now(store: Store, *, timeout_s: float = 30.0, masker: Masker | None = None,
             retry_parked: bool = False) -> SyncReport:
    """Deliver the outbox to Langfuse now (what ``legal-judge sync`` runs).

    Args:
        store: The store whose outbox is delivered.
        timeout_s: The delivery budget.
        masker: The redaction hook (default: ``LEGAL_JUDGE_MASK_FILE``).
        retry_parked: Retry parked entities too (after their fix was applied).

    Raises:
        ConfigError: Langfuse is not configured or the mask file is invalid.
    """
    require_settings()
    from legal_judge.sync.langfuse_delivery import deliver_outbox  # loads the SDK: only to deliver

    t0 = time.monotonic()
    res = deliver_outbox(store, timeout_s=timeout_s,
                         masker=masker if masker is not None else load_masker(),
                         retry_parked=retry_parked)
    return SyncReport(
        configured=True, delivered=len(res.delivered), failed=len(res.failed),
        pending=store.outbox_status()["pending"], timed_out=res.timed_out,
        elapsed_s=time.monotonic() - t0,
        errors=sorted(set(res.failed.values()))[:10], notes=res.notes,
        parked=store.outbox_parked(), newly_parked=len(res.parked), retried=len(res.retried),
        keys_refused=res.keys_refused)


def get_sink(*, masker: Masker | None = None) -> OutboxSink:
    """The sink for this process: delivering when Langfuse is configured, queue-only otherwise."""
    return OutboxSink(deliver=configured(), masker=masker)


def annotation_sink() -> OutboxSink | None:
    """The sink that creates Langfuse annotation queues (for a calibration sample or an
    escalation) when Langfuse is configured, else None: the CSV/JSONL sheet is then the only
    channel."""
    sink = get_sink()
    return sink if sink.deliver else None


def annotation_queue(*, name: str, run_id: str, item_ids: list[str],
                     rubrics: list[dict[str, Any]], human: bool = False,
                     ) -> tuple[str | None, str | None]:
    """A Langfuse annotation queue of a run's items' traces, when Langfuse is configured.

    Used by ``calibrate sample`` (a sample's items) and ``calibrate escalate`` (the escalated
    items, with ``human``: the lawyers' own ``human.*`` score configs).

    Returns:
        ``(queue id, None)`` when created; ``(None, None)`` when Langfuse is not configured;
        ``(None, reason)`` when Langfuse failed: the caller's sheet is written already, and an
        outage must not cost it, so the reason is said, not raised.
    """
    sink = annotation_sink()
    if sink is None:
        return None, None
    try:
        return str(sink.create_annotation_queue(
            name=name, run_id=run_id, trace_seeds=[f"{run_id}:{i}" for i in item_ids],
            rubrics=rubrics, **({"human": True} if human else {}))), None
    except LegalJudgeError as exc:
        return None, str(exc)
