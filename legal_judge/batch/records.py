"""The ``batches`` table: every submitted batch, written the moment the provider accepts it.

A row's ``status`` is ``submitted`` until its results are merged into the store (``collected``), or
``abandoned`` when a resume finds that no request still waits for it (its answers were already in
the store, or the requests were rendered differently since).
``meta_json`` holds the judge, the custom ids in the batch, the provider's own status and request
counts, and whatever the backend needs to fetch results from another process (file ids).
"""

from __future__ import annotations

import json
from typing import Any

from legal_judge.store import Store, canonical_json, utcnow

__all__ = ["ABANDONED", "COLLECTED", "SUBMITTED", "batch_rows", "insert_batch", "update_batch"]

SUBMITTED = "submitted"
COLLECTED = "collected"
ABANDONED = "abandoned"


def insert_batch(store: Store, batch_id: str, *, run_id: str, provider: str,
                 meta: dict[str, Any]) -> None:
    """Record a batch the provider just accepted."""
    now = utcnow()
    with store.transaction() as db:
        db.execute("INSERT OR REPLACE INTO batches VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (batch_id, run_id, provider, SUBMITTED, now, now, canonical_json(meta)))


def update_batch(store: Store, batch_id: str, *, status: str | None = None,
                 meta: dict[str, Any] | None = None) -> None:
    """Merge ``meta`` into a row and/or change its status."""
    with store.transaction() as db:
        row = db.execute("SELECT status, meta_json FROM batches WHERE id = ?", (batch_id,)).fetchone()
        if row is None:
            return
        merged = {**json.loads(row[1]), **(meta or {})}
        db.execute("UPDATE batches SET status = ?, updated_at = ?, meta_json = ? WHERE id = ?",
                   (status or row[0], utcnow(), canonical_json(merged), batch_id))


def batch_rows(store: Store, *, run_id: str | None = None, status: str | None = None,
               with_ids: bool = True) -> list[dict[str, Any]]:
    """Batches, oldest first, with decoded meta (without the custom ids and digests unless
    ``with_ids``)."""
    sql, args = "SELECT * FROM batches WHERE 1 = 1", list[str]()
    if run_id is not None:
        sql, args = sql + " AND run_id = ?", [*args, run_id]
    if status is not None:
        sql, args = sql + " AND status = ?", [*args, status]
    out = []
    for row in store.db.execute(sql + " ORDER BY created_at, id", args):
        item = dict(row)
        item["meta"] = json.loads(item.pop("meta_json"))
        if not with_ids:
            item["meta"].pop("custom_ids", None)
            item["meta"].pop("digests", None)
        out.append(item)
    return out
