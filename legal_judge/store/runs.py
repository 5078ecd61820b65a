"""Runs and their items, and the process that owns a run or an audit (tables ``runs``, ``items``).

A run and its items are written in one commit, so a process killed while starting leaves either
nothing or a resumable run. ``owner_pid``/``owner_host``/``heartbeat_at`` (m005_run_owner,
m007_audit_owner) say which process executes a run or an audit.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any, Literal

from legal_judge.errors import NotFoundError
from legal_judge.store import base

__all__ = ["OwnedKind", "RunsMixin"]

#: What can have an owning process, and its table.
OwnedKind = Literal["run", "audit"]
_OWNED_TABLES: dict[str, str] = {"run": "runs", "audit": "audits"}


def _insert_items(db: sqlite3.Connection, run_id: str, items: Iterable[dict[str, Any]]) -> None:
    db.executemany(  # rows made one at a time: a large run's items are not all encoded at once
        "INSERT OR IGNORE INTO items (run_id, item_id, position, item_json) VALUES (?, ?, ?, ?)",
        ((run_id, it["id"], i, base.document_json(it)) for i, it in enumerate(items)),
    )


class RunsMixin(base.StoreBase):
    """The :class:`~legal_judge.store.Store` methods of runs, items and owners."""

    def create_run(self, run_id: str, *, kind: str, config: dict[str, Any],
                   items: Iterable[dict[str, Any]] | None = None) -> None:
        """Record a new run, with its items in the same commit when given.

        A process killed while starting then leaves either nothing or a resumable run, never a run
        without its items (which a resume would "complete" with no results).
        """
        with self.transaction() as db:
            db.execute(
                "INSERT INTO runs (id, kind, status, created_at, config_json) VALUES (?, ?, ?, ?, ?)",
                (run_id, kind, "running", base.utcnow(), base.canonical_json(config)),
            )
            if items is not None:
                _insert_items(db, run_id, items)

    @base.names_the_run
    def finish_run(self, run_id: str, *, status: str, summary: dict[str, Any] | None) -> None:
        """Set a run's final status and summary."""
        with self.transaction() as db:
            db.execute(
                "UPDATE runs SET status = ?, finished_at = ?, summary_json = ? WHERE id = ?",
                (status, base.utcnow(),
                 base.canonical_json(summary) if summary is not None else None, run_id),
            )

    def get_run(self, run_id: str) -> dict[str, Any]:
        """A run row with decoded config and summary."""
        row = self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no run '{run_id}' in {self.path}",
                                fix="`legal-judge runs list` shows the runs in this store")
        out = dict(row)
        out["config"] = json.loads(out.pop("config_json"))
        summary = out.pop("summary_json")
        out["summary"] = json.loads(summary) if summary else None
        return out

    def list_runs(self, *, limit: int = 50) -> list[dict[str, Any]]:
        """Most recent runs first, with item and result counts."""
        rows = self.db.execute(
            """SELECT r.id, r.kind, r.status, r.created_at, r.finished_at,
                      (SELECT COUNT(*) FROM items i WHERE i.run_id = r.id) AS items,
                      (SELECT COUNT(*) FROM ensemble_results e WHERE e.run_id = r.id) AS results
               FROM runs r ORDER BY r.created_at DESC LIMIT ?""",
            (limit,),
        )
        return [dict(r) for r in rows]

    def iter_runs(self) -> Iterator[dict[str, Any]]:
        """Every run, most recent first, with decoded config and summary and item and result
        counts; read lazily, so a caller that filters and stops early reads only what it shows."""
        cursor = self.db.execute(
            """SELECT r.id, r.kind, r.status, r.created_at, r.finished_at, r.config_json,
                      r.summary_json,
                      (SELECT COUNT(*) FROM items i WHERE i.run_id = r.id) AS items,
                      (SELECT COUNT(*) FROM ensemble_results e WHERE e.run_id = r.id) AS results
               FROM runs r ORDER BY r.created_at DESC, r.id DESC""")
        for row in cursor:
            out = dict(row)
            out["config"] = json.loads(out.pop("config_json") or "{}")
            summary = out.pop("summary_json")
            out["summary"] = json.loads(summary) if summary else None
            yield out

    def save_items(self, run_id: str, items: list[dict[str, Any]]) -> None:
        """Store the run's items (idempotent)."""
        with self.transaction() as db:
            _insert_items(db, run_id, items)

    def load_items(self, run_id: str) -> list[dict[str, Any]]:
        """The run's items in dataset order."""
        rows = self.db.execute(
            "SELECT item_json FROM items WHERE run_id = ? ORDER BY position", (run_id,)
        )
        return [json.loads(r[0]) for r in rows]

    def iter_items(self, run_id: str) -> Iterator[dict[str, Any]]:
        """The run's items in dataset order, one at a time."""
        cursor = self.db.execute(
            "SELECT item_json FROM items WHERE run_id = ? ORDER BY position", (run_id,))
        for (data,) in cursor:
            yield json.loads(data)

    def item_count(self, run_id: str) -> int:
        """How many items a run has."""
        return int(self.db.execute("SELECT COUNT(*) FROM items WHERE run_id = ?",
                                   (run_id,)).fetchone()[0])

    def item_positions(self, run_id: str) -> list[int]:
        """The positions of a run's items, in dataset order."""
        return [int(r[0]) for r in self.db.execute(
            "SELECT position FROM items WHERE run_id = ? ORDER BY position", (run_id,))]

    def items_stored_in_order(self, run_id: str) -> bool:
        """Whether the run's items were inserted in dataset order (rowid order is position
        order), which lets :meth:`item_chunk` read them by rowid: every run this version writes."""
        return not self.db.execute(
            """SELECT EXISTS (SELECT 1 FROM (SELECT position - LAG(position) OVER (ORDER BY rowid)
                                             AS step FROM items WHERE run_id = ?) AS steps
                              WHERE step <= 0)""", (run_id,)).fetchone()[0]

    def item_chunk(self, run_id: str, *, after: int, limit: int,
                   by_rowid: bool = True) -> list[tuple[int, str]]:
        """Up to ``limit`` items ``(key, item JSON)`` after key ``after``, in dataset order (the
        runner reads a large run's items back in chunks instead of holding them all, and decodes
        each with its model: one pass in pydantic-core instead of ``json`` and then a validation).

        ``key`` is the rowid (start at 0) when :meth:`items_stored_in_order`, so each chunk is a
        range of the table (no index on position: a position-ordered chunk sorts every item of
        the run, ~9 KB each, again for each chunk); else the position (start at -1).
        """
        if by_rowid:
            rows = self.db.execute(  # +run_id: the rowid range, not the run's index and a sort
                "SELECT rowid, item_json FROM items WHERE rowid > ? AND +run_id = ? "
                "ORDER BY rowid LIMIT ?", (after, run_id, limit))
        else:
            rows = self.db.execute(
                "SELECT position, item_json FROM items WHERE run_id = ? AND position > ? "
                "ORDER BY position LIMIT ?", (run_id, after, limit))
        return [(int(key), str(data)) for key, data in rows]

    def verdicts_of_items(self, run_id: str,
                          item_ids: list[str]) -> dict[tuple[str, str], dict[str, Any]]:
        """Verdicts of some items of a run keyed by (item_id, judge) (a resume, chunk by chunk)."""
        out: dict[tuple[str, str], dict[str, Any]] = {}
        for start in range(0, len(item_ids), 500):
            chunk = item_ids[start:start + 500]
            rows = self.db.execute(
                "SELECT item_id, judge, verdict_json FROM verdicts WHERE run_id = ? "  # noqa: S608
                f"AND item_id IN ({', '.join('?' * len(chunk))})", (run_id, *chunk))
            out.update({(r[0], r[1]): json.loads(r[2]) for r in rows})
        return out

    def iter_verdicts_placed(self, run_id: str, *, fields: tuple[str, ...] | None = None,
                             ) -> Iterator[tuple[str, str, int | None, dict[str, Any]]]:
        """``(item_id, judge, position, verdict)`` of a run one at a time, by item id then judge
        (the order of :meth:`iter_verdicts`); ``position`` is None for an item the run lacks.

        Args:
            fields: Read only these keys of each verdict (two or more; a missing one is None).
        """
        column = "v.verdict_json" if fields is None else base.json_fields("v.verdict_json", fields)
        cursor = self.db.execute(
            f"""SELECT v.item_id, v.judge, i.position, {column} FROM verdicts v
               LEFT JOIN items i ON i.run_id = v.run_id AND i.item_id = v.item_id
               WHERE v.run_id = ? ORDER BY v.item_id, v.judge""", (run_id,))  # noqa: S608
        for item_id, judge, position, data in cursor:
            yield item_id, judge, position, (json.loads(data) if fields is None
                                             else base.decode_fields(data, fields))

    def iter_items_with_results(self, run_id: str, *, holding: str,
                                item_fields: tuple[str, ...], result_fields: tuple[str, ...],
                                ) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
        """``(item, result or None)`` of each item of a run whose stored JSON holds the text
        ``holding`` (a cheap filter: e.g. a field name), in no particular order; of each, only
        the keys named (two or more each: a missing one is None)."""
        cursor = self.db.execute(
            f"""SELECT {base.json_fields("i.item_json", item_fields)},
                       {base.json_fields("e.result_json", result_fields)}
                FROM items i LEFT JOIN ensemble_results e
                   ON e.run_id = i.run_id AND e.item_id = i.item_id
                WHERE i.run_id = ? AND instr(i.item_json, ?) > 0""",  # noqa: S608
            (run_id, holding))
        for item, result in cursor:
            yield (base.decode_fields(item, item_fields),
                   base.decode_fields(result, result_fields) if result is not None else None)

    def run_exists(self, run_id: str) -> bool:
        """Whether a run (of any kind) has this id."""
        return self.db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is not None

    def runs_of_kind(self, kind: str) -> list[dict[str, Any]]:
        """``{"id", "config"}`` of every run of ``kind``, oldest first."""
        rows = self.db.execute(
            "SELECT id, config_json FROM runs WHERE kind = ? ORDER BY created_at, id", (kind,))
        return [{"id": r[0], "config": json.loads(r[1]) if r[1] else {}} for r in rows]

    def item_keys(self, run_id: str | None = None) -> list[tuple[str, str]]:
        """``(run_id, item_id)`` of the items of one run, or of every run when None."""
        if run_id is None:
            rows = self.db.execute("SELECT run_id, item_id FROM items")
        else:
            rows = self.db.execute("SELECT run_id, item_id FROM items WHERE run_id = ?", (run_id,))
        return [(str(r[0]), str(r[1])) for r in rows]

    # owners of runs and audits (m005_run_owner, m007_audit_owner) ------------------------------
    def claim_owner(self, kind: OwnedKind, entity_id: str, *, pid: int, host: str) -> None:
        """Record this process as the one executing a run or an audit (a new one or a resume)."""
        table = _OWNED_TABLES[kind]
        with self.transaction() as db:
            db.execute(f"UPDATE {table} SET status = 'running', owner_pid = ?, owner_host = ?, "  # noqa: S608
                       "heartbeat_at = ? WHERE id = ?", (pid, host, base.utcnow(), entity_id))

    def beat_owner(self, kind: OwnedKind, entity_id: str, *, pid: int) -> None:
        """Refresh the owner's heartbeat (only while ``pid`` still owns the run or audit)."""
        self.autocommit(f"UPDATE {_OWNED_TABLES[kind]} SET heartbeat_at = ? "  # noqa: S608
                    "WHERE id = ? AND owner_pid = ?", (base.utcnow(), entity_id, pid))

    def owners(self, kind: OwnedKind, ids: list[str]) -> dict[str, dict[str, Any]]:
        """Id -> ``{"status", "pid", "host", "heartbeat_at"}`` of runs or audits (None values for
        those never claimed; ids not in the store are left out)."""
        table = _OWNED_TABLES[kind]
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = self.db.execute(
                f"SELECT id, status, owner_pid, owner_host, heartbeat_at FROM {table} "  # noqa: S608
                f"WHERE id IN ({', '.join('?' * len(chunk))})", chunk)
            out.update({r[0]: {"status": r[1], "pid": r[2], "host": r[3], "heartbeat_at": r[4]}
                        for r in rows})
        return out

