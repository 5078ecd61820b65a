"""The Langfuse outbox (table ``outbox``): what is stored but not yet delivered.

An entity is queued (or refreshed) by kind and id; a sync delivers the pending ones, marks them, or
parks those that cannot be delivered with the reason and the fix (m004_outbox_parking). Queueing a
parked entity again makes it pending (the migration's trigger).
"""

from __future__ import annotations

import json
from typing import Any

from legal_judge.store.base import StoreBase, canonical_json, utcnow

__all__ = ["OutboxMixin"]


class OutboxMixin(StoreBase):
    """The :class:`~legal_judge.store.Store` methods of the outbox."""

    def outbox_put(self, kind: str, entity_id: str, payload: dict[str, Any]) -> None:
        """Queue (or refresh) an entity for Langfuse; a refreshed entity is pending again."""
        with self.transaction() as db:
            db.execute(
                """INSERT INTO outbox (entity_kind, entity_id, payload_json, created_at)
                   VALUES (?, ?, ?, ?)
                   ON CONFLICT (entity_kind, entity_id) DO UPDATE SET
                     payload_json = excluded.payload_json, synced_at = NULL""",
                (kind, entity_id, canonical_json(payload), utcnow()),
            )

    def outbox_pending(self, *, limit: int = 10_000) -> list[dict[str, Any]]:
        """Entities not yet delivered and not parked, oldest first."""
        rows = self.db.execute(
            """SELECT id, entity_kind, entity_id, payload_json, attempts, last_error FROM outbox
               WHERE synced_at IS NULL AND parked_at IS NULL ORDER BY id LIMIT ?""",
            (limit,),
        )
        return [{**dict(r), "payload": json.loads(r["payload_json"])} for r in rows]

    def outbox_park(self, ids: list[int], *, reason: str, fix: str, by: str,
                    retry: str = "upgrade") -> None:
        """Park outbox rows that cannot be delivered: kept, not pending, listed with the fix.

        ``by`` is the legal-judge version that parked them; ``retry`` says when a sync tries
        them again: ``sync`` (every sync) or ``upgrade`` (another version, or on request).
        """
        with self.transaction() as db:
            db.executemany(
                """UPDATE outbox SET parked_at = ?, park_reason = ?, park_fix = ?, parked_by = ?,
                          park_retry = ?, attempts = attempts + 1, last_error = ? WHERE id = ?""",
                [(utcnow(), reason[:500], fix[:500], by, retry, reason[:500], i) for i in ids],
            )

    def outbox_parked(self) -> list[dict[str, Any]]:
        """Parked (undelivered) entities, oldest first, with reason, fix and parking version."""
        rows = self.db.execute(
            """SELECT id, entity_kind, entity_id, attempts, last_error, parked_at, park_reason,
                      park_fix, parked_by, park_retry FROM outbox
               WHERE synced_at IS NULL AND parked_at IS NOT NULL ORDER BY id""")
        return [dict(r) for r in rows]

    def outbox_unpark(self, ids: list[int]) -> None:
        """Make parked rows pending again (the next sync retries them)."""
        with self.transaction() as db:
            db.executemany(
                """UPDATE outbox SET parked_at = NULL, park_reason = NULL, park_fix = NULL,
                          parked_by = NULL, park_retry = NULL WHERE id = ?""",
                [(i,) for i in ids])

    def outbox_drop(self, ids: list[int]) -> None:
        """Remove outbox rows (a parked entity the user gives up on; the store keeps the entity)."""
        with self.transaction() as db:
            db.executemany("DELETE FROM outbox WHERE id = ?", [(i,) for i in ids])

    def outbox_mark(self, ids: list[int], *, error: str | None = None) -> None:
        """Mark outbox rows delivered (``error is None``) or failed once more."""
        with self.transaction() as db:
            if error is None:
                db.executemany("UPDATE outbox SET synced_at = ?, last_error = NULL WHERE id = ?",
                               [(utcnow(), i) for i in ids])
            else:
                db.executemany(
                    "UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                    [(error[:500], i) for i in ids],
                )

    def outbox_status(self) -> dict[str, int]:
        """Counts of pending (not parked) and delivered outbox rows (parked: :meth:`outbox_parked`)."""
        row = self.db.execute(
            """SELECT COUNT(*) FILTER (WHERE synced_at IS NULL AND parked_at IS NULL),
                      COUNT(*) FILTER (WHERE synced_at IS NOT NULL) FROM outbox"""
        ).fetchone()
        return {"pending": row[0], "delivered": row[1]}
