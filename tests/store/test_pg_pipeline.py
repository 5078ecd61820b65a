"""A PostgreSQL store's write transactions are pipelined (psycopg's pipeline mode): BEGIN, the
writer lock, the inserts and COMMIT go to the server without a wait for each, so a run's event
loop is not held for a round trip per statement (``scripts/bench.py --store``: the ratio to the
bare loop 1.29 before, 1.15 after). Reads inside such a transaction still see what it wrote, and a
failure inside it still rolls the whole transaction back."""

from __future__ import annotations

import pytest

from legal_judge.store import Store


def test_a_transaction_is_pipelined_and_reads_inside_it_see_its_writes(pg_schema_url: str) -> None:
    store = Store(pg_schema_url)
    try:
        assert store.postgres is not None and store.postgres.pipeline is None
        with store.transaction() as db:
            assert store.postgres.pipeline is not None  # statements are not waited for one by one
            db.execute("INSERT INTO provider_cache (key, provider, model, response_json, created_at) "
                       "VALUES (?, ?, ?, ?, ?)", ("k1", "p", "m", "{}", "2026-01-01"))
            rows = db.execute("SELECT key FROM provider_cache WHERE key = ?", ("k1",)).fetchall()
            assert [r[0] for r in rows] == ["k1"]
            applied = {r[0] for r in db.execute("SELECT name FROM _migrations")}
            assert applied  # iterating a cursor inside the pipeline reads its rows too
        assert store.postgres.pipeline is None
        assert store.cache_get("k1") is not None
        with pytest.raises(RuntimeError), store.transaction() as db:
            db.execute("INSERT INTO provider_cache (key, provider, model, response_json, created_at) "
                       "VALUES (?, ?, ?, ?, ?)", ("k2", "p", "m", "{}", "2026-01-01"))
            raise RuntimeError("a failure inside the transaction")
        assert store.cache_get("k2") is None  # rolled back, pipeline or not
    finally:
        store.close()


def test_a_store_reopened_on_its_schema_migrates_nothing_twice(pg_schema_url: str) -> None:
    Store(pg_schema_url).close()
    again = Store(pg_schema_url)  # the migrations read what is applied inside a pipeline
    try:
        assert again.schema_version > 0
    finally:
        again.close()


def test_a_statement_the_server_refuses_leaves_the_connection_usable(pg_schema_url: str) -> None:
    # The refusal arrives at the pipeline's sync, after COMMIT was sent (and skipped): the
    # aborted transaction must be ended, or every later statement of the store is refused.
    store = Store(pg_schema_url)
    try:
        with pytest.raises(Exception, match="not-null"), store.transaction() as db:  # noqa: PT011
            db.execute("INSERT INTO provider_cache (key, provider, model, response_json, created_at) "
                       "VALUES (?, ?, ?, ?, ?)", ("k3", "p", "m", None, "2026-01-01"))
        assert store.postgres is not None and not store.postgres.in_transaction
        store.cache_put("k4", provider="p", model="m", response={"ok": True})
        assert store.cache_get("k4") == {"ok": True} and store.cache_get("k3") is None
    finally:
        store.close()
