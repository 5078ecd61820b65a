"""Bias audits and their hash-chained log (tables ``audits``, ``audit_log``).

:class:`Audits` holds one row per audit (config, status, severity, report); :class:`AuditLogRows`
the log's rows. The chain itself (hashes, verification) is :mod:`legal_judge.audit.log`'s: this
module only reads and appends rows, it never updates or deletes a log entry.
"""

from __future__ import annotations

import json
from typing import Any

from legal_judge.store.base import StoreBase, canonical_json, utcnow

__all__ = ["AuditLogRows", "Audits"]

#: Statuses of audits whose process is still at work or stopped before a report.
_UNREPORTED = ("running", "failed", "submitted", "interrupted")


def _decoded(row: Any) -> dict[str, Any]:
    out = dict(row)
    raw = out.get("report_json")
    out["report"] = json.loads(raw) if raw else None
    return out


class Audits:
    """The ``audits`` table: ``store.audits``."""

    def __init__(self, base: StoreBase) -> None:
        """Queries on the store ``base``."""
        self._base = base

    def start(self, audit_id: str, *, judge_id: str, config: dict[str, Any]) -> None:
        """Record a new audit, status ``running`` (in the caller's transaction, if one is open)."""
        self._base.autocommit(
            "INSERT INTO audits (id, created_at, judge_id, status, config_json) "
            "VALUES (?, ?, ?, ?, ?)", (audit_id, utcnow(), judge_id, "running", canonical_json(config)))

    def set_status(self, audit_id: str, status: str) -> None:
        """Change an audit's status (resumed, stopped, submitted, interrupted)."""
        self._base.autocommit("UPDATE audits SET status = ? WHERE id = ?", (status, audit_id))

    def finish(self, audit_id: str, *, status: str, severity: str | None,
               report: dict[str, Any]) -> str:
        """Store an audit's final status, severity and report.

        Returns:
            The report's stored canonical JSON text (what its log entry's digest covers).
        """
        text = canonical_json(report)
        self._base.autocommit(
            "UPDATE audits SET status = ?, severity = ?, report_json = ? WHERE id = ?",
            (status, severity, text, audit_id))
        return text

    def get(self, audit_id: str) -> dict[str, Any] | None:
        """An audit row as stored (``config_json``, ``report_json`` undecoded), or None."""
        row = self._base.db.execute("SELECT * FROM audits WHERE id = ?", (audit_id,)).fetchone()
        return dict(row) if row is not None else None

    def exists(self, audit_id: str) -> bool:
        """Whether an audit has this id."""
        return self._base.db.execute("SELECT 1 FROM audits WHERE id = ?",
                                     (audit_id,)).fetchone() is not None

    def ids(self) -> set[str]:
        """The ids of every stored audit."""
        return {str(r[0]) for r in self._base.db.execute("SELECT id FROM audits")}

    def recent(self, *, limit: int) -> list[dict[str, Any]]:
        """The newest audits first: ``id``, ``created_at``, ``judge_id``, ``status``, ``severity``."""
        rows = self._base.db.execute(
            "SELECT id, created_at, judge_id, status, severity FROM audits "
            "ORDER BY created_at DESC LIMIT ?", (limit,)).fetchall()
        return [dict(r) for r in rows]

    def latest_id(self, judge_id: str, *, finished_only: bool = True) -> str | None:
        """The newest audit id of a judge_id (not running or failed when ``finished_only``)."""
        sql = "SELECT id FROM audits WHERE judge_id = ?"
        if finished_only:
            sql += " AND status NOT IN ('running', 'failed')"
        row = self._base.db.execute(sql + " ORDER BY created_at DESC, rowid DESC LIMIT 1",
                                    (judge_id,)).fetchone()
        return str(row[0]) if row else None

    def reported(self, judge_id: str) -> list[dict[str, Any]]:
        """The audits of a judge_id that ended (not running, failed, submitted or interrupted),
        newest first: ``id``, ``status`` and the decoded ``report`` (None when there is none)."""
        marks = ", ".join("?" * len(_UNREPORTED))
        rows = self._base.db.execute(
            f"SELECT id, status, report_json FROM audits WHERE judge_id = ? "  # noqa: S608 - fixed marks
            f"AND status NOT IN ({marks}) ORDER BY created_at DESC, rowid DESC",
            (judge_id, *_UNREPORTED)).fetchall()
        return [_decoded(r) for r in rows]

    def earlier_with_report(self, audit_id: str) -> list[dict[str, Any]]:
        """The audits stored before ``audit_id`` that have a report, latest first: ``id``,
        ``judge_id``, ``status`` and the decoded ``report`` (empty when the audit is unknown)."""
        rows = self._base.db.execute(
            "SELECT id, judge_id, status, report_json FROM audits WHERE rowid < "
            "(SELECT rowid FROM audits WHERE id = ?) AND report_json IS NOT NULL "
            "ORDER BY rowid DESC", (audit_id,)).fetchall()
        return [_decoded(r) for r in rows]


class AuditLogRows:
    """The ``audit_log`` table's rows: ``store.audit_log`` (append and read only)."""

    def __init__(self, base: StoreBase) -> None:
        """Queries on the store ``base``."""
        self._base = base

    def last(self) -> tuple[int, str] | None:
        """``(seq, hash)`` of the last entry, or None for an empty log."""
        row = self._base.db.execute(
            "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def insert(self, *, seq: int, audit_id: str, kind: str, payload_json: str, prev_hash: str,
               hash: str, created_at: str) -> None:  # noqa: A002 - the column's name
        """Append one entry as computed by the chain (inside the caller's transaction)."""
        self._base.autocommit(
            "INSERT INTO audit_log (seq, audit_id, kind, payload_json, prev_hash, hash, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (seq, audit_id, kind, payload_json, prev_hash, hash, created_at))

    def rows(self, audit_id: str | None = None, *, kind: str | None = None) -> list[dict[str, Any]]:
        """Entries in sequence order, optionally of one audit and one kind (payload undecoded)."""
        sql = "SELECT * FROM audit_log"
        cond, args = [], []
        if audit_id is not None:
            cond.append("audit_id = ?")
            args.append(audit_id)
        if kind is not None:
            cond.append("kind = ?")
            args.append(kind)
        if cond:
            sql += " WHERE " + " AND ".join(cond)
        return [dict(r) for r in self._base.db.execute(sql + " ORDER BY seq", args).fetchall()]

    def stored_order(self) -> list[dict[str, Any]]:
        """Every entry in the order the rows are stored (rowid), as a verification reads them."""
        rows = self._base.db.execute(
            "SELECT seq, audit_id, kind, payload_json, prev_hash, hash, created_at FROM audit_log"
            " ORDER BY rowid").fetchall()
        return [dict(r) for r in rows]
