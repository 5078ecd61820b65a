"""Escalations of runs to lawyers (table ``escalations``): ``store.escalations``."""

from __future__ import annotations

from typing import Any

from legal_judge.store.base import StoreBase, canonical_json

__all__ = ["Escalations"]


class Escalations:
    """The ``escalations`` table: one row per ``calibrate escalate`` decision, never rewritten."""

    def __init__(self, base: StoreBase) -> None:
        """Queries on the store ``base``."""
        self._base = base

    def save(self, escalation_id: str, *, run_id: str, created_at: str, target: float,
             confidence: float, rubric: str | None, guaranteed: bool,
             report: dict[str, Any]) -> None:
        """Store one escalation (in the caller's transaction, if one is open)."""
        self._base.autocommit(
            "INSERT INTO escalations (id, run_id, created_at, target, confidence, rubric, "
            "guaranteed, report_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (escalation_id, run_id, created_at, target, confidence, rubric, int(guaranteed),
             canonical_json(report)))

    def report(self, escalation_id: str) -> dict[str, Any] | None:
        """An escalation's decoded report, or None."""
        report: dict[str, Any] | None = self._base.one_json(
            "SELECT report_json FROM escalations WHERE id = ?", (escalation_id,))
        return report

    def latest_of_run(self, run_id: str) -> dict[str, Any] | None:
        """The newest escalation report of a run, or None."""
        report: dict[str, Any] | None = self._base.one_json(
            "SELECT report_json FROM escalations WHERE run_id = ? "
            "ORDER BY created_at DESC, rowid DESC LIMIT 1", (run_id,))
        return report

    def count_of_run(self, run_id: str) -> int:
        """How many escalations a run has."""
        row = self._base.db.execute("SELECT COUNT(*) FROM escalations WHERE run_id = ?",
                                    (run_id,)).fetchone()
        return int(row[0])
