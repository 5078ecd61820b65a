"""Pinned estimates of a run's figures corrected for judge error (table ``run_estimates``).

Append-only: a stored estimate is never rewritten; a newer one gets the run's next ``seq``.
"""

from __future__ import annotations

import json
from typing import Any

from legal_judge.store.base import StoreBase, canonical_json

__all__ = ["RunEstimates"]

_COLUMNS = "id, run_id, seq, calibration_id, calibration_date, chosen_by, created_at, estimate_json"


def _decoded(row: Any) -> dict[str, Any]:
    out = dict(row)
    out["estimate"] = json.loads(out.pop("estimate_json"))
    return out


class RunEstimates:
    """The ``run_estimates`` table: ``store.run_estimates``."""

    def __init__(self, base: StoreBase) -> None:
        """Queries on the store ``base``."""
        self._base = base

    def add(self, run_id: str, *, calibration_id: str | None, calibration_date: str | None,
            chosen_by: str, created_at: str, estimate: dict[str, Any]) -> dict[str, Any]:
        """Store a new estimate as the run's next one and return its row (decoded).

        The id is ``est-<run_id>-<seq>``; two writers racing get consecutive seqs, since the
        next seq is read and written in one ``BEGIN IMMEDIATE`` transaction.
        """
        with self._base.transaction():
            seq = 1 + int(self._base.db.execute(
                "SELECT IFNULL(MAX(seq), 0) FROM run_estimates WHERE run_id = ?",
                (run_id,)).fetchone()[0])
            est_id = f"est-{run_id}-{seq}"
            self._base.db.execute(
                f"INSERT INTO run_estimates ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (est_id, run_id, seq, calibration_id, calibration_date, chosen_by, created_at,
                 canonical_json(estimate)))
        found = self.get(est_id)
        assert found is not None
        return found

    def get(self, estimate_id: str) -> dict[str, Any] | None:
        """One stored estimate (``estimate`` decoded), or None."""
        row = self._base.db.execute(f"SELECT {_COLUMNS} FROM run_estimates WHERE id = ?",
                                    (estimate_id,)).fetchone()
        return _decoded(row) if row is not None else None

    def latest(self, run_id: str) -> dict[str, Any] | None:
        """The run's newest stored estimate (``estimate`` decoded), or None."""
        row = self._base.db.execute(
            f"SELECT {_COLUMNS} FROM run_estimates WHERE run_id = ? ORDER BY seq DESC LIMIT 1",
            (run_id,)).fetchone()
        return _decoded(row) if row is not None else None

    def of_run(self, run_id: str) -> list[dict[str, Any]]:
        """Every stored estimate of a run, oldest first (without the figures)."""
        rows = self._base.db.execute(
            "SELECT id, run_id, seq, calibration_id, calibration_date, chosen_by, created_at "
            "FROM run_estimates WHERE run_id = ? ORDER BY seq", (run_id,))
        return [dict(r) for r in rows]
