"""Store trouble is the user's to fix (exit 2, the file and the remedy), never an internal error.

Every failure here is a real SQLite failure: a size limit (``max_page_count``) that fills the
store, ``query_only`` that makes it read-only, another connection holding the lock, bytes of a real
store overwritten. The journey (tests/journeys/test_store_trouble.py) does the same over the CLI
with a really full filesystem.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from legal_judge.doctor import run_doctor
from legal_judge.errors import StoreError
from legal_judge.store import Store

# A full disk, a damaged, locked or read-only file: SQLite's troubles, with stores of explicit
# paths (the server's own trouble is the last test here, and tests/reliability's).
pytestmark = pytest.mark.sqlite_only("SQLite files' troubles")


def _real_store(path: Path, *, items: int = 40) -> Path:
    """A store with a run and a few hundred KB of judge calls, closed (WAL checkpointed)."""
    s = Store(path)
    s.create_run("r1", kind="run", config={"ensemble": {}},
                 items=[{"id": f"i{i}"} for i in range(items)])
    for i in range(items):
        s.record_call("r1", f"i{i}", "j", purpose="judge", attempt=1, request={"p": "x" * 4000},
                      response_text="{}", usage=None, latency_ms=1.0, cached=False, retries=0,
                      error=None)
    s.close()
    return path


def _overwrite(path: Path, page: int, *, offset: int = 0) -> None:
    with path.open("r+b") as f:
        f.seek((page - 1) * 4096 + offset)
        f.write(b"\xde\xad\xbe\xef" * 256)


def test_full_store_names_the_file_and_the_resume_command(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    s = Store(path)
    s.create_run("run-full", kind="run", config={"ensemble": {}}, items=[{"id": "a"}])
    pages = s.db.execute("PRAGMA page_count").fetchone()[0]
    s.db.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLite's own SQLITE_FULL
    with pytest.raises(StoreError) as caught:
        for i in range(50):
            s.save_verdict("run-full", f"a{i}", "j", {"judge_id": "x", "status": "ok",
                                                     "blob": "y" * 8000})
    err = caught.value
    assert (err.code, err.exit_code) == ("store-full", 2)
    assert str(path) in err.message and "database or disk is full" in err.message
    assert err.fix is not None and "legal-judge run --resume run-full" in err.fix
    assert "free space" in err.fix
    s.close()


def test_a_judged_call_on_a_full_disk_is_a_store_error_and_the_store_stays_usable(
        tmp_path: Path) -> None:
    """A run's one commit per judged call (PendingWrites) on a full disk: SQLite has already
    rolled the transaction back, and rolling back again used to raise "no transaction is
    active" (an internal error, exit 70) instead of the store-full error with its resume."""
    path = tmp_path / "store.sqlite3"
    s = Store(path)
    s.create_run("run-full", kind="run", config={"ensemble": {}}, items=[{"id": "a"}])
    pages = s.db.execute("PRAGMA page_count").fetchone()[0]
    s.db.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(StoreError) as caught:
        for i in range(50):
            writes = s.writes()
            writes.call("run-full", f"a{i}", "j", purpose="verdict", attempt=1,
                        request={"model": "m"}, response_text="z" * 8000, usage=None,
                        latency_ms=1.0, cached=False, retries=0, error=None)
            writes.verdict("run-full", f"a{i}", "j", {"judge_id": "x", "status": "ok"})
            writes.flush()
    err = caught.value
    assert (err.code, err.exit_code) == ("store-full", 2)
    assert err.fix is not None and "legal-judge run --resume run-full" in err.fix
    assert not s.db.in_transaction  # nothing left open: the next command's BEGIN works
    s.db.execute(f"PRAGMA max_page_count = {pages + 1000}")  # space freed
    s.save_verdict("run-full", "after", "j", {"judge_id": "x", "status": "ok"})
    assert s.db.execute("SELECT COUNT(*) FROM verdicts WHERE item_id = 'after'").fetchone()[0] == 1
    s.close()


def test_full_store_during_an_audit_names_the_audit_resume(tmp_path: Path) -> None:
    s = Store(tmp_path / "store.sqlite3")
    with s.transaction() as db:
        db.execute("INSERT INTO audits (id, created_at, judge_id, status, config_json) "
                   "VALUES ('aud-1', 't', 'j', 'running', '{}')")
    pages = s.db.execute("PRAGMA page_count").fetchone()[0]
    s.db.execute(f"PRAGMA max_page_count = {pages + 1}")
    with pytest.raises(StoreError) as caught:
        for i in range(50):
            s.record_call("aud-1", f"p{i}", "j", purpose="audit", attempt=1,
                          request={"p": "x" * 8000}, response_text="{}", usage=None,
                          latency_ms=1.0, cached=False, retries=0, error=None)
    assert caught.value.fix is not None
    assert "legal-judge audit run --resume aud-1" in caught.value.fix
    s.close()


def test_read_only_store(tmp_path: Path) -> None:
    s = Store(tmp_path / "store.sqlite3")
    s.db.execute("PRAGMA query_only = 1")
    with pytest.raises(StoreError) as caught:
        s.create_run("r", kind="run", config={})
    assert caught.value.code == "store-readonly"
    assert "writable" in (caught.value.fix or "")
    s.close()


def test_locked_store_waits_then_says_who_to_wait_for(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    s = Store(path, timeout_s=0.2)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's write transaction
    try:
        with pytest.raises(StoreError) as caught:
            s.create_run("r", kind="run", config={})
        assert caught.value.code == "store-locked" and caught.value.exit_code == 2
        assert str(path) in caught.value.message and "waited 0.2 s" in caught.value.message
        with pytest.raises(StoreError, match="locked"):  # opening (migrations write) as well
            Store(path, timeout_s=0.2)
    finally:
        other.execute("ROLLBACK")
        other.close()
    s.create_run("r", kind="run", config={})  # the lock is gone: the store works again
    s.close()


def test_new_store_locked_during_creation_waits_then_is_refused(tmp_path: Path) -> None:
    # A new store in rollback-journal mode held exclusively: switching to WAL must wait, not
    # fail at once (the concurrent-first-use race), and give up with a StoreError.
    path = tmp_path / "store.sqlite3"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE t (x)")
    other.execute("BEGIN EXCLUSIVE")
    released = threading.Timer(0.3, lambda: other.execute("ROLLBACK"))
    released.start()
    try:
        s = Store(path, timeout_s=10)  # the holder lets go after 0.3 s: opening succeeds
    finally:
        released.join()
    assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    s.close()
    held = tmp_path / "held.sqlite3"
    other2 = sqlite3.connect(held, isolation_level=None)
    other2.execute("CREATE TABLE t (x)")
    other2.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError) as caught:
            Store(held, timeout_s=0.3)
        assert caught.value.code == "store-locked"
    finally:
        other2.execute("ROLLBACK")
        other.close()
        other2.close()


@pytest.mark.parametrize(("page", "offset"), [(1, 100), (2, 0), (40, 0)],
                         ids=["schema page", "first table", "judge calls"])
def test_damaged_store_is_refused_before_anything_is_written(tmp_path: Path, page: int,
                                                             offset: int) -> None:
    path = _real_store(tmp_path / "store.sqlite3")
    _overwrite(path, page, offset=offset)
    before = path.read_bytes()
    with pytest.raises(StoreError) as caught:
        Store(path)
    err = caught.value
    assert (err.code, err.exit_code) == ("store-damaged", 2)
    assert str(path) in err.message
    assert err.fix is not None and "backup" in err.fix and f"mv {path}*" in err.fix
    assert path.read_bytes() == before  # refused before any write


def test_not_a_database(tmp_path: Path) -> None:
    path = _real_store(tmp_path / "store.sqlite3")
    _overwrite(path, 1)  # the 100-byte header
    with pytest.raises(StoreError) as caught:
        Store(path)
    assert caught.value.code == "store-damaged"


def test_unmapped_sqlite_errors_stay_sqlite_errors(tmp_path: Path) -> None:
    # A constraint or bad SQL is a bug in legal-judge, not the user's store: not disguised.
    s = Store(tmp_path / "store.sqlite3")
    s.create_run("r", kind="run", config={})
    with pytest.raises(sqlite3.IntegrityError):
        s.create_run("r", kind="run", config={})
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        s.db.execute("SELECT * FROM nope")
    s.close()


@pytest.mark.parametrize("page", [1, 2, 40], ids=["header", "first table", "judge calls"])
def test_doctor_reports_a_damaged_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        page: int) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _overwrite(_real_store(home / "store.sqlite3"), page)
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(home))
    result = run_doctor(ensemble="demo", timeout_s=0.1)
    store = next(c for c in result.checks if c.name == "store")
    assert store.status == "problem" and "damaged" in store.detail
    assert store.fix is not None and "backup" in store.fix


def test_doctor_passes_a_sound_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _real_store(home / "store.sqlite3")
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(home))
    store = next(c for c in run_doctor(ensemble="demo", timeout_s=0.1).checks
                 if c.name == "store")
    assert store.status == "ok" and "integrity_check: ok" in store.detail


def test_moving_a_damaged_store_aside_as_the_fix_says_starts_afresh(tmp_path: Path) -> None:
    path = _real_store(tmp_path / "store.sqlite3")
    _overwrite(path, 40)
    aside = tmp_path / "damaged"
    aside.mkdir()
    for f in tmp_path.glob("store.sqlite3*"):
        shutil.move(f, aside / f.name)
    s = Store(path)
    assert s.list_runs() == []
    s.close()


def test_a_server_store_naming_a_missing_schema_or_database_is_the_user_s_to_fix(
        postgres_url: str) -> None:
    # Both were an "internal error" or "cannot be reached, run again" (exit 3): a rerun cannot help.
    with pytest.raises(StoreError) as missing_schema:
        Store(f"{postgres_url}?options=-csearch_path%3Dno_such_schema")
    assert missing_schema.value.exit_code == 2 and missing_schema.value.code == "store-cannot-open"
    assert "CREATE SCHEMA no_such_schema" in (missing_schema.value.fix or "")
    with pytest.raises(StoreError) as missing_db:
        Store(postgres_url.rsplit("/", 1)[0] + "/no_such_database")
    assert missing_db.value.exit_code == 2 and "createdb" in (missing_db.value.fix or "")
    assert "no_such_database" in missing_db.value.message
