"""The ``batches`` table: every submitted batch, written the moment the provider accepts it.

A row's ``status`` is ``submitted`` until its results are merged into the store (``collected``), or
``abandoned`` when a resume finds that no request still waits for it (its answers were already in
the store, or the requests were rendered differently since).
``meta_json`` holds the judge, the custom ids in the batch, the provider's own status and request
counts, and whatever the backend needs to fetch results from another process (file ids).
"""

from __future__ import annotations

from typing import Any

from legal_judge.store import Store

__all__ = ["ABANDONED", "COLLECTED", "SUBMITTED", "batch_rows", "insert_batch", "update_batch"]

SUBMITTED = "submitted"
COLLECTED = "collected"
ABANDONED = "abandoned"


def insert_batch(store: Store, batch_id: str, *, run_id: str, provider: str,
                 meta: dict[str, Any]) -> None:
    """Record a batch the provider just accepted."""
    store.batches.insert(batch_id, run_id=run_id, provider=provider, status=SUBMITTED, meta=meta)


def update_batch(store: Store, batch_id: str, *, status: str | None = None,
                 meta: dict[str, Any] | None = None) -> None:
    """Merge ``meta`` into a row and/or change its status."""
    store.batches.merge(batch_id, status=status, meta=meta)


def batch_rows(store: Store, *, run_id: str | None = None, status: str | None = None,
               with_ids: bool = True) -> list[dict[str, Any]]:
    """Batches, oldest first, with decoded meta (without the custom ids and digests unless
    ``with_ids``)."""
    out = []
    for item in store.batches.rows(run_id=run_id, status=status):
        if not with_ids:
            item["meta"].pop("custom_ids", None)
            item["meta"].pop("digests", None)
        out.append(item)
    return out
