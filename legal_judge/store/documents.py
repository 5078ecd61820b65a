"""Tables of JSON documents that rows are only ever added to (reports of calibrations, escalations,
validations; fitted corrections).

Each of those tables keeps an ``id``, a ``created_at`` and one JSON document column, and is read the
same two ways: the document of an id, and the newest document of a run or a judge. One class holds
those queries so the repositories that own the tables say only which table and which key.
"""

from __future__ import annotations

from typing import Any

from legal_judge.store.base import StoreBase, canonical_json

__all__ = ["Documents"]


class Documents:
    """The document queries of one table (names are this module's constants, never user text)."""

    def __init__(self, base: StoreBase, table: str, *, column: str = "report_json",
                 tiebreak: str = "id") -> None:
        """Queries on ``table`` of the store ``base``.

        Args:
            base: the store.
            table: the table's name.
            column: the JSON document column.
            tiebreak: what orders rows made in the same second, newest last (``id`` or ``rowid``:
                each table keeps the order it always had).
        """
        self._base = base
        self._table = table
        self._column = column
        self._tiebreak = tiebreak

    def add(self, document: dict[str, Any], **columns: Any) -> None:
        """Insert one row with its document (in the caller's transaction, if one is open)."""
        names = [*columns, self._column]
        self._base.autocommit(
            f"INSERT INTO {self._table} ({', '.join(names)}) "
            f"VALUES ({', '.join('?' * len(names))})",
            (*columns.values(), canonical_json(document)))

    def of(self, row_id: str) -> dict[str, Any] | None:
        """The decoded document of a row, or None (no such row, or a row without one)."""
        document: dict[str, Any] | None = self._base.one_json(
            f"SELECT {self._column} FROM {self._table} WHERE id = ?", (row_id,))
        return document

    def latest(self, key: str, value: str) -> dict[str, Any] | None:
        """The newest decoded document of the rows whose ``key`` column is ``value``, or None."""
        document: dict[str, Any] | None = self._base.one_json(
            f"SELECT {self._column} FROM {self._table} WHERE {key} = ? "
            f"ORDER BY created_at DESC, {self._tiebreak} DESC LIMIT 1", (value,))
        return document
