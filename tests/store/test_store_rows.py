"""A ``for`` over a store cursor reads its rows in batches (through ``fetchmany``, which maps a
failure while reading to a StoreError), not with a Python call per row."""

from __future__ import annotations

from pathlib import Path

import pytest

from legal_judge.store import Store
from legal_judge.store.connection import StoreCursor

pytestmark = pytest.mark.sqlite_only("the SQLite connection's cursor")


def test_rows_are_read_in_batches_not_one_python_call_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "s.sqlite3")
    store.create_run("r", kind="run", config={}, items=[{"id": f"i{k:04d}"} for k in range(1000)])
    calls = {"next": 0, "fetchmany": 0}
    nxt, many = StoreCursor.__next__, StoreCursor.fetchmany

    def counted_next(self: StoreCursor) -> object:
        calls["next"] += 1
        return nxt(self)

    def counted_many(self: StoreCursor, size: int | None = 1) -> list[object]:
        calls["fetchmany"] += 1
        return many(self, size)

    monkeypatch.setattr(StoreCursor, "__next__", counted_next)
    monkeypatch.setattr(StoreCursor, "fetchmany", counted_many)
    assert [i["id"] for i in store.iter_items("r")] == [f"i{k:04d}" for k in range(1000)]
    assert calls["next"] == 0 and calls["fetchmany"] <= 5
    store.close()

