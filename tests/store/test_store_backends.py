"""The store on both backends: one schema from one migration list, concurrent writers, a shared cache.

SQLite is the embedded default; a PostgreSQL URL in ``LEGAL_JUDGE_STORE`` (or given to ``Store``)
puts the same tables on a server that several processes and machines share. These tests run on a
throwaway server (tests/pg_server.py); without one they skip locally and fail in CI.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from stub_process import stub_process

from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import StoreError
from legal_judge.store import MIGRATIONS, Store

Schema = dict[str, dict[str, Any]]


def _sqlite_schema(path: Path) -> Schema:
    db = sqlite3.connect(path)
    schema: Schema = {}
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    for table in tables:
        info = db.execute(f"PRAGMA table_info({table})").fetchall()
        indexes = {r[1]: bool(r[2]) for r in db.execute(f"PRAGMA index_list({table})")
                   if not r[1].startswith("sqlite_autoindex")}
        schema[table] = {"columns": [r[1] for r in info],
                         "primary_key": [r[1] for r in sorted(info, key=lambda r: r[5]) if r[5]],
                         "indexes": indexes}
    db.close()
    return schema


def _pg_schema(url: str) -> Schema:
    schema: Schema = {}
    with psycopg.connect(url) as db:
        for table, column in db.execute(
                "SELECT table_name, column_name FROM information_schema.columns WHERE "
                "table_schema = current_schema() ORDER BY table_name, ordinal_position"):
            entry = schema.setdefault(table, {"columns": [], "primary_key": [], "indexes": {}})
            if column != "rowid":  # SQLite's implicit rowid, made explicit on PostgreSQL
                entry["columns"].append(column)
        for table, index, unique, primary, columns in db.execute(
                "SELECT t.relname, c.relname, i.indisunique, i.indisprimary, "
                "ARRAY(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY AS k(n, o) "
                "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.n ORDER BY k.o) "
                "FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
                "JOIN pg_class c ON c.oid = i.indexrelid "
                "WHERE t.relnamespace = current_schema()::regnamespace"):
            if primary:
                schema[table]["primary_key"] = list(columns)
            elif not index.endswith("_key"):  # a table's UNIQUE constraint (SQLite: autoindex)
                schema[table]["indexes"][index] = bool(unique)
            else:
                schema[table]["indexes"][index] = bool(unique)
    return schema


def test_every_migration_gives_the_same_schema_on_both_backends(tmp_path: Path,
                                                                  pg_schema_url: str) -> None:
    lite, server = Store(tmp_path / "s.sqlite3"), Store(pg_schema_url)
    assert lite.schema_version == server.schema_version == len(MIGRATIONS)
    lite.close()
    server.close()
    on_sqlite, on_pg = _sqlite_schema(tmp_path / "s.sqlite3"), _pg_schema(pg_schema_url)
    # UNIQUE table constraints are named by each engine (sqlite_autoindex_*, *_key): compare the
    # named indexes the migrations create, and the tables, columns and primary keys exactly.
    for schema in (on_sqlite, on_pg):
        for entry in schema.values():
            entry["indexes"] = {k: v for k, v in entry["indexes"].items()
                                if not k.endswith(("_key_key", "_seq_key", "_id_key"))
                                or k in ("human_labels_key", "label_comments_key")}
    assert sorted(on_sqlite) == sorted(on_pg)
    for table in on_sqlite:
        assert on_sqlite[table]["columns"] == on_pg[table]["columns"], table
        assert on_sqlite[table]["primary_key"] == on_pg[table]["primary_key"], table
        named = {k: v for k, v in on_pg[table]["indexes"].items() if k in on_sqlite[table]["indexes"]}
        assert on_sqlite[table]["indexes"] == named, table


def test_a_store_written_by_a_newer_version_is_refused_on_postgres(pg_schema_url: str) -> None:
    Store(pg_schema_url).close()
    with psycopg.connect(pg_schema_url, autocommit=True) as db:
        db.execute("INSERT INTO _migrations VALUES ('m999_future', 'x')")
    with pytest.raises(StoreError, match="newer legal-judge"):
        Store(pg_schema_url)


_APPEND = """
import sys
from legal_judge.audit.log import AuditLog
from legal_judge.store import Store
log = AuditLog(Store())
for i in range(int(sys.argv[2])):
    log.append(sys.argv[1], "probe_result", {"i": i, "writer": sys.argv[1]})
"""


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "legal_judge", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def test_two_processes_auditing_at_once_leave_one_verifiable_chain(pg_schema_url: str) -> None:
    env = {**os.environ, "LEGAL_JUDGE_STORE": pg_schema_url, "COLUMNS": "80"}
    writers = [subprocess.Popen([sys.executable, "-c", _APPEND, name, "60"], env=env,
                                stderr=subprocess.PIPE, text=True) for name in ("a1", "a2")]
    for proc in writers:
        assert proc.wait(120) == 0, proc.stderr.read() if proc.stderr else ""
    done = _cli(env, "audit", "verify-log")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "audit log intact: 120 entries" in " ".join(done.stdout.split())
    store = Store(pg_schema_url)
    rows = store.audit_log.rows()
    assert [r["seq"] for r in rows] == list(range(1, 121))  # one chain, no fork, no gap
    assert {r["audit_id"] for r in rows} == {"a1", "a2"}


@pytest.fixture
def stub_url() -> Iterator[str]:
    with stub_process(0) as url:
        yield url


def stub_requests(url: str) -> int:
    """How many chat requests the stub has answered."""
    stats = httpx.get(f"{url}/stats").json()
    return int(stats["requests"])


def stub_ensemble(path: Path, url: str) -> Path:
    """An ensemble of three judges served by the stub at ``url``."""
    judges = "".join(f'\n[[judges]]\nspec = "openai-compatible:{m}@{url}"\n'
                     for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest"))
    path.write_text(f"name = 'stub'\nconcurrency = 4\nrun_checks = false\n{judges}")
    return path


def small_dataset(path: Path, n: int) -> Path:
    """The first ``n`` items of the bundled sample as a JSONL file."""
    items = load_dataset(sample_dataset_path())[:n]
    path.write_text("".join(i.model_dump_json() + "\n" for i in items))
    return path


def test_a_response_bought_by_one_process_is_a_cache_hit_for_another(
        tmp_path: Path, pg_schema_url: str, stub_url: str) -> None:
    data, cfg = small_dataset(tmp_path / "d.jsonl", 4), stub_ensemble(tmp_path / "e.toml", stub_url)
    first = {**os.environ, "LEGAL_JUDGE_STORE": pg_schema_url,
             "LEGAL_JUDGE_HOME": str(tmp_path / "runner1")}
    second = {**first, "LEGAL_JUDGE_HOME": str(tmp_path / "runner2")}  # another machine's home
    done = _cli(first, "run", str(data), "--ensemble", str(cfg), "--run-id", "R1", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    bought = stub_requests(stub_url)
    assert bought >= 12
    done = _cli(second, "run", str(data), "--ensemble", str(cfg), "--run-id", "R2", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert stub_requests(stub_url) == bought  # every verdict came from the shared store
    store = Store(pg_schema_url)
    assert _outcomes(store, "R2") == _outcomes(store, "R1")
    assert store.get_run("R2")["summary"]["cached_verdicts"] == 12


def _outcomes(store: Store, run_id: str) -> dict[str, Any]:
    """Each item's outcome and each judge's verdict status: what a rerun must reproduce."""
    verdicts = {f"{item}/{judge}": v.get("status") for item, judge, v in store.iter_verdicts(run_id)}
    results = {item: r.get("overall") for item, r in store.load_results(run_id).items()}
    return {"verdicts": verdicts, "results": results}


def test_an_unreachable_server_exits_3_and_never_prints_the_password(tmp_path: Path) -> None:
    env = {**os.environ, "LEGAL_JUDGE_STORE": "postgresql://lj:s3cret@127.0.0.1:1/teamdb",
           "LEGAL_JUDGE_HOME": str(tmp_path / "home")}
    done = _cli(env, "runs", "list")
    assert done.returncode == 3, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "s3cret" not in out
    assert "postgresql://lj:***@127.0.0.1:1/teamdb" in " ".join(out.split())
    assert "cannot be reached" in out
