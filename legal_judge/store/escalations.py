"""Escalations of runs to lawyers (table ``escalations``): ``store.escalations``."""

from __future__ import annotations

from typing import Any

from legal_judge.store.base import StoreBase
from legal_judge.store.documents import Documents

__all__ = ["Escalations"]


class Escalations:
    """The ``escalations`` table: one row per ``calibrate escalate`` decision, never rewritten."""

    def __init__(self, base: StoreBase) -> None:
        """Queries on the store ``base``."""
        self._base = base
        # Same-second escalations of a run are told apart by insertion order, as they always were.
        self._reports = Documents(base, "escalations", tiebreak="rowid")

    def save(self, escalation_id: str, *, run_id: str, created_at: str, target: float,
             confidence: float, rubric: str | None, guaranteed: bool,
             report: dict[str, Any]) -> None:
        """Store one escalation (in the caller's transaction, if one is open)."""
        self._reports.add(report, id=escalation_id, run_id=run_id, created_at=created_at,
                          target=target, confidence=confidence, rubric=rubric,
                          guaranteed=int(guaranteed))

    def report(self, escalation_id: str) -> dict[str, Any] | None:
        """An escalation's decoded report, or None."""
        return self._reports.of(escalation_id)

    def latest_of_run(self, run_id: str) -> dict[str, Any] | None:
        """The newest escalation report of a run, or None."""
        return self._reports.latest("run_id", run_id)

    def count_of_run(self, run_id: str) -> int:
        """How many escalations a run has."""
        row = self._base.db.execute("SELECT COUNT(*) FROM escalations WHERE run_id = ?",
                                    (run_id,)).fetchone()
        return int(row[0])
