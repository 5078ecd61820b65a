"""The one way into the Langfuse outbox: what a producer queues, by typed entity kind.

Everything is stored first; a producer (a run's end, an audit, a calibration, imported labels, a
debias experiment) then queues a reference to what it stored with :func:`enqueue`, in the same
store (inside the producer's transaction when one is open), and never needs the network. The sync
builds the Langfuse objects from the tables, so a row only says what to (re)send:

* ``run`` / run id: the run's traces, scores and dataset-run links;
* ``audit`` / audit id: one audit trace;
* ``calibration`` / calibration id: one calibration trace with its scores;
* ``human_labels`` / run id: the run's lawyer labels as ``source=ANNOTATION`` scores, and its
  corrected figures;
* ``debias_experiment`` / experiment id: one experiment trace.

The kinds are stored as these strings (the outbox's ``entity_kind``); older versions also queued
``labels`` (:data:`LEGACY_KINDS`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from legal_judge.store import Store

__all__ = ["LEGACY_KINDS", "EntityKind", "enqueue", "kind_of"]


class EntityKind(StrEnum):
    """What an outbox row refers to; the value is the stored ``entity_kind``."""

    RUN = "run"
    AUDIT = "audit"
    CALIBRATION = "calibration"
    HUMAN_LABELS = "human_labels"
    DEBIAS_EXPERIMENT = "debias_experiment"

    @property
    def id_field(self) -> str:
        """The payload's field holding the entity's id."""
        return _ID_FIELDS[self]


_ID_FIELDS = {EntityKind.RUN: "run_id", EntityKind.AUDIT: "audit_id",
              EntityKind.CALIBRATION: "calibration_id", EntityKind.HUMAN_LABELS: "run_id",
              EntityKind.DEBIAS_EXPERIMENT: "experiment_id"}

#: Kinds older versions stored, and the kind they are delivered as.
LEGACY_KINDS = {"labels": EntityKind.HUMAN_LABELS}


def enqueue(store: Store, kind: EntityKind, entity_id: str, **extra: Any) -> None:
    """Queue (or refresh) an entity for Langfuse; a refreshed entity is pending again.

    Args:
        store: The store that holds the entity.
        kind: What the entity is.
        entity_id: Its id (a run's, an audit's, ...).
        **extra: More payload fields (a calibration's ``quarter``).
    """
    store.outbox_put(kind.value, entity_id, {kind.id_field: entity_id, **extra})


def kind_of(stored: str) -> EntityKind | None:
    """The kind of a stored ``entity_kind`` (a legacy one included), or None for an unknown one
    (queued by a newer version)."""
    if stored in LEGACY_KINDS:
        return LEGACY_KINDS[stored]
    try:
        return EntityKind(stored)
    except ValueError:
        return None
