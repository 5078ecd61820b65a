"""Langfuse integration points of the calibration: outbox write-back and the annotation queue.

Offline-first (DESIGN.md): what calibration stores is also queued in the store's ``outbox`` in the
same transaction; the Langfuse sync delivers it when Langfuse is configured, and nothing is lost
while it is not. The sync builds the Langfuse objects from the tables, so the outbox rows only
say what to (re)send:

* ``human_labels`` / ``<run_id>``: the run's lawyer labels changed; send them as
  ``source=ANNOTATION`` scores on the run's item traces (``legal_judge.sync.plan_other.label_scores``).
* ``calibration`` / ``<calibration_id>``: one calibration trace with its scores
  (``legal_judge.sync.plan_other.calibration_plan``, which reads the report's ``per_rubric``).

The annotation queue of a sample is created through ``get_sink()`` of ``legal_judge.sync.sink`` (or
``legal_judge.sync``) when that exists and offers ``create_annotation_queue`` (the protocol is
:class:`~legal_judge.calibration.sample.AnnotationQueueSink`); otherwise :func:`annotation_sink`
returns None and the CSV/JSONL template is the only channel.
"""

from __future__ import annotations

import importlib
import sqlite3
from typing import Any

from legal_judge.store import canonical_json, utcnow

__all__ = ["annotation_sink", "enqueue", "enqueue_calibration", "enqueue_estimates", "enqueue_labels"]

_SINK_MODULES = ("legal_judge.sync.sink", "legal_judge.sync")


def enqueue(db: sqlite3.Connection, kind: str, entity_id: str, payload: dict[str, Any]) -> None:
    """Queue an entity for Langfuse inside the caller's transaction (same SQL as ``Store.outbox_put``)."""
    db.execute(
        """INSERT INTO outbox (entity_kind, entity_id, payload_json, created_at)
           VALUES (?, ?, ?, ?)
           ON CONFLICT (entity_kind, entity_id) DO UPDATE SET
             payload_json = excluded.payload_json, synced_at = NULL""",
        (kind, entity_id, canonical_json(payload), utcnow()),
    )


def enqueue_labels(db: sqlite3.Connection, run_ids: set[str]) -> None:
    """Mark the labels of these runs for (re)sending as ANNOTATION scores."""
    for run_id in sorted(run_ids):
        enqueue(db, "human_labels", run_id, {"run_id": run_id})


def enqueue_estimates(db: sqlite3.Connection, run_ids: set[str]) -> None:
    """The labels of these runs changed but are in Langfuse already (read from it): resend only
    the runs' corrected figures (the ``human_labels`` entity skips labels whose source is
    ``langfuse:``, so nothing is duplicated)."""
    enqueue_labels(db, run_ids)


def enqueue_calibration(db: sqlite3.Connection, calibration_id: str, quarter: str) -> None:
    """Mark a calibration for sending as a calibration trace with scores."""
    enqueue(db, "calibration", calibration_id,
            {"calibration_id": calibration_id, "quarter": quarter})


def annotation_sink() -> Any | None:
    """The Langfuse sink when one is configured and can create annotation queues, else None."""
    for name in _SINK_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        get_sink = getattr(module, "get_sink", None)
        sink = get_sink() if callable(get_sink) else None
        # Only a sink that delivers (Langfuse configured) can create a queue.
        if sink is not None and hasattr(sink, "create_annotation_queue") \
                and getattr(sink, "deliver", True):
            return sink
    return None
