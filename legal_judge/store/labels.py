"""Lawyers' labels and comments (tables ``human_labels``, ``label_comments``).

A label judges one run's answer: its key is item, run (``''`` for the run-less labels of stores from
before labels carried their run), rubric and annotator (m003_labels_per_run); a comment's key is
item, run and annotator (m006_label_comments). Of a run, a label or comment tied to it wins; a
run-less one counts only where the same annotator left none on the run's item.
"""

from __future__ import annotations

from typing import Any

from legal_judge.store.base import StoreBase, utcnow

__all__ = ["Labels"]


class Labels:
    """The ``human_labels`` and ``label_comments`` tables: ``store.labels``."""

    def __init__(self, base: StoreBase) -> None:
        """Queries on the store ``base``."""
        self._base = base

    def scores(self) -> dict[tuple[str, str, str, str], str]:
        """``(item_id, run_id or "", rubric, annotator) -> score`` (as stored text) of every label."""
        return {(r[0], r[1], r[2], r[3]): r[4] for r in self._base.db.execute(
            "SELECT item_id, IFNULL(run_id, ''), rubric, annotator, score FROM human_labels")}

    def upsert(self, *, item_id: str, run_id: str | None, rubric: str, score: str,
               annotator: str, labeled_at: str, source: str) -> None:
        """Store one label (a new score replaces the one of the same key), in the caller's
        transaction when one is open (an import writes all its labels or none)."""
        self._base.autocommit(
            """INSERT INTO human_labels (item_id, run_id, rubric, score, annotator, labeled_at,
               source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (item_id, IFNULL(run_id, ''), rubric, annotator) DO UPDATE SET
                 score = excluded.score, labeled_at = excluded.labeled_at,
                 source = excluded.source""",
            (item_id, run_id, rubric, score, annotator, labeled_at, source, utcnow()),
        )

    def of_run(self, run_id: str) -> list[tuple[str, str | None, str, str, str, str]]:
        """The labels of a run's answers (the run rule above), in import order.

        Returns:
            ``(item_id, run_id, rubric, score, annotator, labeled_at)`` tuples, score as stored.
        """
        rows = self._base.db.execute(
            """SELECT h.item_id, h.run_id, h.rubric, h.score, h.annotator, h.labeled_at
               FROM human_labels h JOIN items i ON i.item_id = h.item_id AND i.run_id = ?
               WHERE h.run_id = ? OR (h.run_id IS NULL AND NOT EXISTS (
                   SELECT 1 FROM human_labels o WHERE o.item_id = h.item_id AND o.run_id = ?
                     AND o.rubric = h.rubric AND o.annotator = h.annotator))
               ORDER BY h.id""",
            (run_id, run_id, run_id),
        )
        return [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]

    def rows_for_run(self, run_id: str) -> list[dict[str, Any]]:
        """Every ``human_labels`` row tied to the run, or run-less on one of its items, in id
        order, as stored (the caller chooses between a run's label and a run-less one)."""
        return [dict(r) for r in self._base.db.execute(
            """SELECT * FROM human_labels WHERE run_id = ? OR (run_id IS NULL AND item_id IN
               (SELECT item_id FROM items WHERE run_id = ?)) ORDER BY id""", (run_id, run_id))]

    # lawyers' comments (m006_label_comments) -----------------------------------------------------
    def comments(self) -> dict[tuple[str, str, str], str]:
        """``(item_id, run_id or "", annotator) -> comment`` of every stored comment."""
        return {(r[0], r[1], r[2]): r[3] for r in self._base.db.execute(
            "SELECT item_id, IFNULL(run_id, ''), annotator, comment FROM label_comments")}

    def upsert_comment(self, *, item_id: str, run_id: str | None, annotator: str, comment: str,
                       labeled_at: str, source: str) -> None:
        """Store one lawyer's comment on one answer, in the caller's transaction when one is
        open (the labels of the same import are written in it: all or nothing)."""
        self._base.autocommit(
            """INSERT INTO label_comments (item_id, run_id, annotator, comment, labeled_at,
               source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (item_id, IFNULL(run_id, ''), annotator) DO UPDATE SET
                 comment = excluded.comment, labeled_at = excluded.labeled_at,
                 source = excluded.source""",
            (item_id, run_id, annotator, comment, labeled_at, source, utcnow()),
        )

    def comments_of_run(self, run_id: str) -> list[dict[str, str]]:
        """The lawyers' comments on a run's answers (the run rule above), in import order.

        Returns:
            ``{"item_id", "annotator", "comment"}`` dicts.
        """
        rows = self._base.db.execute(
            """SELECT c.item_id, c.annotator, c.comment
               FROM label_comments c JOIN items i ON i.item_id = c.item_id AND i.run_id = ?
               WHERE c.run_id = ? OR (c.run_id IS NULL AND NOT EXISTS (
                   SELECT 1 FROM label_comments o WHERE o.item_id = c.item_id AND o.run_id = ?
                     AND o.annotator = c.annotator))
               ORDER BY c.id""",
            (run_id, run_id, run_id),
        )
        return [{"item_id": r[0], "annotator": r[1], "comment": r[2]} for r in rows]
