"""Provider batches and debias experiments (tables ``batches``, ``debias_experiments``).

The meaning of a batch row's status and meta is :mod:`legal_judge.batch.records`'s; this module
only reads and writes the rows.
"""

from __future__ import annotations

import json
from typing import Any

from legal_judge.store.base import StoreBase, canonical_json, utcnow
from legal_judge.store.documents import Documents

__all__ = ["Batches", "DebiasExperiments"]


class Batches:
    """The ``batches`` table: ``store.batches``."""

    def __init__(self, base: StoreBase) -> None:
        """Queries on the store ``base``."""
        self._base = base

    def insert(self, batch_id: str, *, run_id: str, provider: str, status: str,
               meta: dict[str, Any]) -> None:
        """Record a batch (replacing a row of the same id)."""
        now = utcnow()
        self._base.autocommit("INSERT OR REPLACE INTO batches VALUES (?, ?, ?, ?, ?, ?, ?)",
                              (batch_id, run_id, provider, status, now, now, canonical_json(meta)))

    def merge(self, batch_id: str, *, status: str | None = None,
              meta: dict[str, Any] | None = None) -> None:
        """Merge ``meta`` into a row's meta and/or change its status, in one transaction
        (nothing happens to an unknown id)."""
        with self._base.transaction() as db:
            row = db.execute("SELECT status, meta_json FROM batches WHERE id = ?",
                             (batch_id,)).fetchone()
            if row is None:
                return
            merged = {**json.loads(row[1]), **(meta or {})}
            db.execute("UPDATE batches SET status = ?, updated_at = ?, meta_json = ? WHERE id = ?",
                       (status or row[0], utcnow(), canonical_json(merged), batch_id))

    def rows(self, *, run_id: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
        """Batches, oldest first, optionally of one run and one status, with decoded ``meta``."""
        sql, args = "SELECT * FROM batches WHERE 1 = 1", list[str]()
        if run_id is not None:
            sql, args = sql + " AND run_id = ?", [*args, run_id]
        if status is not None:
            sql, args = sql + " AND status = ?", [*args, status]
        out = []
        for row in self._base.db.execute(sql + " ORDER BY created_at, id", args):
            item = dict(row)
            item["meta"] = json.loads(item.pop("meta_json"))
            out.append(item)
        return out


class DebiasExperiments:
    """The ``debias_experiments`` table: ``store.debias_experiments``."""

    def __init__(self, base: StoreBase) -> None:
        """Queries on the store ``base``."""
        self._base = base
        self._reports = Documents(base, "debias_experiments")

    def save(self, experiment_id: str, *, created_at: str, judge_id: str,
             config: dict[str, Any], report: dict[str, Any]) -> None:
        """Store (or replace) one experiment with its report."""
        self._base.autocommit(
            "INSERT OR REPLACE INTO debias_experiments VALUES (?, ?, ?, ?, ?)",
            (experiment_id, created_at, judge_id, canonical_json(config), canonical_json(report)))

    def get(self, experiment_id: str) -> dict[str, Any] | None:
        """An experiment row as stored (``config_json``, ``report_json`` undecoded), or None."""
        return self._base.one_row("SELECT * FROM debias_experiments WHERE id = ?",
                                  (experiment_id,))

    def recent(self, *, limit: int) -> list[dict[str, Any]]:
        """The newest experiments first (id, created_at, judge_id; not their reports)."""
        rows = self._base.db.execute(
            "SELECT id, created_at, judge_id FROM debias_experiments "
            "ORDER BY created_at DESC, id DESC LIMIT ?", (limit,))
        return [dict(r) for r in rows]

    def exists(self, experiment_id: str) -> bool:
        """Whether an experiment has this id."""
        return self._base.has_row("SELECT 1 FROM debias_experiments WHERE id = ?",
                                  (experiment_id,))

    def report(self, experiment_id: str) -> dict[str, Any] | None:
        """An experiment's decoded report, or None (also for a row without one)."""
        return self._reports.of(experiment_id)
