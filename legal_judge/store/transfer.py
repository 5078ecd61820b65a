"""Rows moved between runs and between stores: shard runs merged into one run, whole stores copied.

Three uses, one set of queries:

* :func:`merge_run_rows` writes the rows of finished shard runs (items, verdicts, ensemble results,
  the call log) under the sharded run's id, in one transaction of the store that holds them;
* :func:`copy_runs` brings whole runs (their run row and rows) from another store file, for
  ``runs merge`` on SQLite, where each CI runner had a store of its own;
* :func:`copy_store` copies every table of one store into another (SQLite <-> PostgreSQL) keeping
  every id, so the audit log's hash chain and its sequence numbers arrive unchanged; rows already
  there are left alone, so a copy can be rerun.

Rows are read in stored (rowid) order and written in that order, so queries that order by insertion
read them back as in the source.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from legal_judge.store.base import StoreBase

__all__ = ["COPIED_TABLES", "RUN_TABLES", "copy_runs", "copy_store", "merge_run_rows",
           "row_counts", "runs_with_prefix"]

#: The tables of one run's rows besides its run row (judge_calls' id is the target's own).
RUN_TABLES = ("items", "verdicts", "ensemble_results", "judge_calls")

#: Every table a store copy moves, parents before children (the schema is the migrations').
COPIED_TABLES = ("runs", "items", "judge_calls", "verdicts", "ensemble_results", "provider_cache",
                 "lookup_cache", "audits", "audit_log", "calibrations", "corrections",
                 "human_labels", "label_comments", "outbox", "debias_experiments", "batches",
                 "run_estimates", "judge_validations", "escalations")

#: Columns written by the target itself (an id of its own).
_OWN_ID = {"judge_calls": "id"}


def _columns(store: StoreBase, table: str) -> list[str]:
    if store.postgres is not None:
        return list(store.postgres.columns[table])
    return [str(r[1]) for r in store.db.execute(f"PRAGMA table_info({table})")]


def runs_with_prefix(store: StoreBase, prefix: str) -> list[dict[str, Any]]:
    """Run rows whose id starts with ``prefix`` (a sharded run's shard runs), oldest first."""
    rows = store.db.execute(
        "SELECT id, status, config_json, created_at FROM runs "
        "WHERE substr(id, 1, length(?)) = ? ORDER BY created_at, id", (prefix, prefix))
    return [dict(r) for r in rows]


def merge_run_rows(store: StoreBase, target: str, sources: Iterable[str]) -> None:
    """Write the rows of the ``sources`` runs under the run ``target`` (inside the caller's
    transaction when one is open). Items are not copied: the caller stores them in dataset order
    with :meth:`~legal_judge.store.Store.create_run`."""
    with store.transaction() as db:
        for source in sources:
            for table in RUN_TABLES[1:]:
                names = [c for c in _columns(store, table) if c not in ("run_id", _OWN_ID.get(table))]
                listed = ", ".join(names)
                db.execute(f"INSERT OR IGNORE INTO {table} (run_id, {listed}) "
                           f"SELECT CAST(? AS TEXT), {listed} FROM {table} WHERE run_id = ? ORDER BY rowid",
                           (target, source))


def _copy_table(source: StoreBase, target: StoreBase, table: str, *, where: str = "",
                params: tuple[Any, ...] = (), keep_ids: bool = True) -> int:
    names = [c for c in _columns(source, table)
             if keep_ids or c != _OWN_ID.get(table)]
    rows = source.db.execute(f"SELECT {', '.join(names)} FROM {table} {where} ORDER BY rowid",
                             params).fetchall()
    marks = ", ".join("?" for _ in names)
    with target.transaction() as db:
        db.executemany(f"INSERT OR IGNORE INTO {table} ({', '.join(names)}) VALUES ({marks})",
                       [tuple(r) for r in rows])
    return len(rows)


def copy_runs(source: StoreBase, target: StoreBase, run_ids: Iterable[str]) -> None:
    """Copy whole runs (run row and rows) from ``source`` into ``target``, each in one transaction;
    a run already in ``target`` is skipped (a rerun copies nothing twice)."""
    for run_id in run_ids:
        if target.db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
            continue
        with target.transaction():
            _copy_table(source, target, "runs", where="WHERE id = ?", params=(run_id,))
            for table in RUN_TABLES:
                _copy_table(source, target, table, where="WHERE run_id = ?", params=(run_id,),
                            keep_ids=False)


def copy_store(source: StoreBase, target: StoreBase) -> dict[str, int]:
    """Copy every table of ``source`` into ``target`` keeping ids; rows already there are kept.

    Returns:
        Rows read per table.
    """
    read = {}
    with target.transaction():
        for table in COPIED_TABLES:
            read[table] = _copy_table(source, target, table)
        if target.postgres is not None:
            # Ids were written explicitly: the identity sequences continue after them.
            for table, column in (("judge_calls", "id"), ("audit_log", "seq"),
                                  ("human_labels", "id"), ("label_comments", "id"),
                                  ("outbox", "id")):
                target.db.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                    f"COALESCE((SELECT MAX({column}) FROM {table}), 0) + 1, false)").fetchall()
    return read


def row_counts(store: StoreBase) -> dict[str, int]:
    """Rows per copied table."""
    return {table: int(store.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
            for table in COPIED_TABLES}
