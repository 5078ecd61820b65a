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
from typing import Any

from legal_judge.errors import LegalJudgeError
from legal_judge.store import Store

__all__ = ["annotation_queue", "annotation_sink", "enqueue", "enqueue_calibration",
           "enqueue_estimates", "enqueue_labels"]

_SINK_MODULES = ("legal_judge.sync.sink", "legal_judge.sync")


def enqueue(store: Store, kind: str, entity_id: str, payload: dict[str, Any]) -> None:
    """Queue an entity for Langfuse (inside the caller's transaction when one is open)."""
    store.outbox_put(kind, entity_id, payload)


def enqueue_labels(store: Store, run_ids: set[str]) -> None:
    """Mark the labels of these runs for (re)sending as ANNOTATION scores."""
    for run_id in sorted(run_ids):
        enqueue(store, "human_labels", run_id, {"run_id": run_id})


def enqueue_estimates(store: Store, run_ids: set[str]) -> None:
    """The labels of these runs changed but are in Langfuse already (read from it): resend only
    the runs' corrected figures (the ``human_labels`` entity skips labels whose source is
    ``langfuse:``, so nothing is duplicated)."""
    enqueue_labels(store, run_ids)


def enqueue_calibration(store: Store, calibration_id: str, quarter: str) -> None:
    """Mark a calibration for sending as a calibration trace with scores."""
    enqueue(store, "calibration", calibration_id,
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

