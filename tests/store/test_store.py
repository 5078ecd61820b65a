"""The SQLite store: migrations, WAL, reopen, refusal of newer schemas."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from legal_judge.errors import NotFoundError, StoreError
from legal_judge.store import MIGRATIONS, Store


def test_migrations_idempotent_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    s1 = Store(path)
    assert s1.schema_version == len(MIGRATIONS)
    assert s1.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    s1.create_run("r1", kind="run", config={"a": 1})
    s1.close()
    s2 = Store(path)  # reopen: nothing re-applied, data kept
    assert s2.schema_version == len(MIGRATIONS)
    assert s2.get_run("r1")["config"] == {"a": 1}
    tables = {r[0] for r in s2.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"runs", "items", "judge_calls", "verdicts", "ensemble_results", "provider_cache",
            "audits", "audit_log", "calibrations", "human_labels", "outbox"} <= tables
    assert s2.integrity_check() == "ok"


def test_newer_store_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO _migrations VALUES ('m999_future', 'x')")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer legal-judge"):
        Store(path)


def test_failed_transaction_rolls_back(store_target: str) -> None:
    s = Store(store_target)
    with pytest.raises(RuntimeError), s.transaction() as db:
        db.execute("INSERT INTO runs (id, kind, status, created_at, config_json) "
                   "VALUES ('x','run','running','t','{}')")
        raise RuntimeError("boom")
    with pytest.raises(NotFoundError):
        s.get_run("x")


def test_outbox_upsert_and_marking(store_target: str) -> None:
    s = Store(store_target)
    s.outbox_put("score", "a", {"v": 1})
    s.outbox_put("score", "a", {"v": 2})
    pending = s.outbox_pending()
    assert len(pending) == 1 and pending[0]["payload"] == {"v": 2}
    s.outbox_mark([pending[0]["id"]])
    assert s.outbox_status() == {"pending": 0, "delivered": 1}
    s.outbox_put("score", "a", {"v": 3})  # changed again: pending again
    assert s.outbox_status()["pending"] == 1
