"""Calibrations against lawyers and the corrections fitted from them (tables ``calibrations``,
``corrections``).
"""

from __future__ import annotations

import json
from typing import Any

from legal_judge.store.base import StoreBase
from legal_judge.store.documents import Documents

__all__ = ["Calibrations"]

_META = "id, run_id, judge_id, quarter, created_at"


class Calibrations:
    """The ``calibrations`` and ``corrections`` tables: ``store.calibrations``."""

    def __init__(self, base: StoreBase) -> None:
        """Queries on the store ``base``."""
        self._base = base
        self._reports = Documents(base, "calibrations")
        self._corrections = Documents(base, "corrections", column="model_json")

    def save(self, calibration_id: str, *, run_id: str | None, quarter: str,
             judge_id: str | None, rubric_set: str | None, created_at: str,
             report: dict[str, Any]) -> None:
        """Store one calibration report (in the caller's transaction, if one is open)."""
        self._reports.add(report, id=calibration_id, run_id=run_id, quarter=quarter,
                          judge_id=judge_id, rubric_set=rubric_set, created_at=created_at)

    def get(self, calibration_id: str) -> dict[str, Any] | None:
        """A calibration row as stored (``report_json`` undecoded), or None."""
        return self._base.one_row("SELECT * FROM calibrations WHERE id = ?", (calibration_id,))

    def exists(self, calibration_id: str) -> bool:
        """Whether a calibration has this id."""
        return self._base.has_row("SELECT 1 FROM calibrations WHERE id = ?", (calibration_id,))

    def report(self, calibration_id: str) -> dict[str, Any] | None:
        """A calibration's decoded report, or None."""
        return self._reports.of(calibration_id)

    def any(self) -> bool:
        """Whether the store holds any calibration (a cheap test before loading one)."""
        return self._base.has_row("SELECT 1 FROM calibrations LIMIT 1")

    def recent(self, *, limit: int) -> list[dict[str, Any]]:
        """The newest calibrations first (id, run_id, judge_id, quarter, created_at)."""
        rows = self._base.db.execute(
            f"SELECT {_META} FROM calibrations ORDER BY created_at DESC, id DESC LIMIT ?",
            (limit,))
        return [dict(r) for r in rows]

    def reports(self) -> list[dict[str, Any]]:
        """Every calibration's decoded report, by quarter, then in the order they were made."""
        rows = self._base.db.execute(
            "SELECT report_json FROM calibrations ORDER BY quarter, created_at, id")
        return [json.loads(raw) for (raw,) in rows]

    def latest_report_of_judge(self, judge_id: str, *, not_of_run: str) -> dict[str, Any] | None:
        """The newest calibration report of a judge_id made on another run than ``not_of_run``
        (calibrations without a run count as another run), or None."""
        report: dict[str, Any] | None = self._base.one_json(
            "SELECT report_json FROM calibrations WHERE judge_id = ? AND IFNULL(run_id, '') != ? "
            "ORDER BY created_at DESC, id DESC LIMIT 1", (judge_id, not_of_run))
        return report

    def latest_of_judge(self, judge_id: str) -> dict[str, Any] | None:
        """The newest calibration of a judge_id (id, run_id, quarter, created_at), or None."""
        return self._base.one_row(f"SELECT {_META} FROM calibrations WHERE judge_id = ? "
                                  "ORDER BY created_at DESC, id DESC LIMIT 1", (judge_id,))

    def latest_of_run(self, run_id: str) -> dict[str, Any] | None:
        """The newest calibration made on a run's labels (id, run_id, quarter, created_at)."""
        return self._base.one_row(f"SELECT {_META} FROM calibrations WHERE run_id = ? "
                                  "ORDER BY created_at DESC, id DESC LIMIT 1", (run_id,))

    def meta(self, calibration_id: str) -> dict[str, Any] | None:
        """A calibration's id, run_id, judge_id, quarter and created_at (no report), or None."""
        return self._base.one_row(f"SELECT {_META} FROM calibrations WHERE id = ?",
                                  (calibration_id,))

    # corrections ---------------------------------------------------------------------------------
    def correction_count(self, calibration_id: str) -> int:
        """How many corrections were fitted from a calibration (the next one's version - 1)."""
        return int(self._base.db.execute(
            "SELECT COUNT(*) FROM corrections WHERE calibration_id = ?",
            (calibration_id,)).fetchone()[0])

    def save_correction(self, correction_id: str, *, calibration_id: str, created_at: str,
                        model: dict[str, Any]) -> None:
        """Store a fitted correction (in the caller's transaction, if one is open)."""
        self._corrections.add(model, id=correction_id, calibration_id=calibration_id,
                              created_at=created_at)

    def correction(self, correction_id: str) -> dict[str, Any] | None:
        """A stored correction's decoded model, or None."""
        return self._corrections.of(correction_id)

    def latest_correction(self, calibration_id: str) -> dict[str, Any] | None:
        """The newest correction fitted from a calibration (decoded model), or None."""
        return self._corrections.latest("calibration_id", calibration_id)
