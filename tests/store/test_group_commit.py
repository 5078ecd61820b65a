"""A run's commits on a PostgreSQL store leave the event loop free (legal_judge/store/writes.py).

A server commit waits for a round trip and the server's disk; a run that committed each judged
call on its event loop held every call in flight for that wait (``scripts/bench.py --store``:
1.15-1.23 times the bare loop, 1.05 with the commits off the loop). Here a second connection holds
the store's writer lock, so a commit cannot finish until it is released: the loop must go on
meanwhile, the rows queued meanwhile must be committed in one group, the run's own reads must see
them before, and a cancelled waiter's rows must be committed all the same.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from legal_judge.errors import StoreError
from legal_judge.store import PendingWrites, Store
from legal_judge.store.postgres import ADVISORY_LOCK
from legal_judge.store.writes import CallRows, CommitQueue


def _verdict(n: int) -> dict[str, Any]:
    return {"judge_id": "j", "status": "ok", "n": n}


def _call_writes(store: Store, n: int) -> PendingWrites:
    writes = store.writes()
    writes.call("R", f"i{n}", "j", purpose="judge", attempt=1, request={"n": n},
                response_text="{}", usage=None, latency_ms=1.0, cached=False, retries=0,
                error=None)
    writes.cache(f"key{n}", provider="p", model="m", response={"text": f"answer {n}"})
    writes.verdict_cache(f"vkey{n}", provider="p", model="m", verdict={"n": n})
    writes.verdict("R", f"i{n}", "j", _verdict(n))
    return writes


@pytest.fixture
def store(pg_schema_url: str) -> Any:
    opened = Store(pg_schema_url)
    opened.create_run("R", kind="run", config={})
    yield opened
    opened.close()


def _lock_writers(url: str) -> psycopg.Connection[Any]:
    holder = psycopg.connect(url, autocommit=True)
    holder.execute(f"SELECT pg_advisory_lock({ADVISORY_LOCK})")
    return holder


def test_commits_wait_off_the_loop_in_one_group_and_reads_see_them_meanwhile(
        store: Store, pg_schema_url: str) -> None:
    async def scenario() -> tuple[int, list[str]]:
        ticks = 0
        holder = _lock_writers(pg_schema_url)
        with store.commits_off_loop():
            commits = [asyncio.ensure_future(store.commit(_call_writes(store, n)))
                       for n in range(5)]
            for _ in range(20):  # the loop runs while every commit waits for the lock
                await asyncio.sleep(0.01)
                ticks += 1
            assert not any(c.done() for c in commits)
            # The run's own reads see what waits: nothing bought is bought again meanwhile.
            assert store.cache_get("key3") == {"text": "answer 3"}
            assert store.cached_verdicts(["vkey1", "vkey9"]) == {"vkey1": '{"n":1}'}
            assert store.call_counts("R")["calls"] == 0  # not committed yet
            holder.close()  # the lock is released
            await asyncio.gather(*commits)
            stamps = sorted({r["created_at"] for r in store.call_rows("R")})
        return ticks, stamps

    ticks, stamps = asyncio.run(scenario())
    assert ticks == 20
    assert store.call_counts("R")["calls"] == 5
    assert len(store.load_verdicts("R")) == 5
    # The writer may take the first commit before the others are queued; the rest wait for it
    # and go together.
    assert len(stamps) <= 2, f"the commits queued meanwhile were not grouped: {stamps}"
    assert store.cache_get("key3") == {"text": "answer 3"}  # committed, read from the server


def test_a_cancelled_waiter_s_rows_are_committed_all_the_same(
        store: Store, pg_schema_url: str) -> None:
    async def scenario() -> None:
        holder = _lock_writers(pg_schema_url)
        with store.commits_off_loop():
            waiter = asyncio.ensure_future(store.commit(_call_writes(store, 1)))
            await asyncio.sleep(0.05)
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            holder.close()
        # Leaving the block committed what was queued.

    asyncio.run(scenario())
    assert store.call_counts("R")["calls"] == 1
    assert store.queued_response("key1") is None


def test_on_sqlite_a_commit_is_made_at_once_on_the_loop(tmp_path: Any) -> None:
    store = Store(tmp_path / "s.sqlite3")
    store.create_run("R", kind="run", config={})

    async def scenario() -> int:
        with store.commits_off_loop():
            assert store._commits is None  # nothing to gain: SQLite's commits do not wait for a disk
            await store.commit(_call_writes(store, 1))
            return store.call_counts("R")["calls"]

    assert asyncio.run(scenario()) == 1
    store.close()


def test_a_failed_commit_reaches_its_waiter_and_an_unseen_one_the_close() -> None:
    def refused() -> Any:
        raise StoreError("the store refused the write", code="store-readonly", fix="grant it")

    queue = CommitQueue(refused)
    done = queue.submit(CallRows(run_id="R", results=[("R", "i", "ok", 1.0, "{}")]))
    with pytest.raises(StoreError, match="refused"):
        done.result(timeout=10)
    with pytest.raises(StoreError, match="refused"):
        queue.close()  # a failure no caller may have seen is never dropped
    quiet = CommitQueue(refused)
    quiet.submit(CallRows(run_id="R"))
    quiet.close(raise_failure=False)  # another exception is on its way: not masked


def test_one_row_set_the_store_refuses_fails_only_its_own_commit(store: Store) -> None:
    assert store.postgres is not None
    queue = CommitQueue(store.postgres.clone)
    holder = _lock_writers(store.postgres.url)
    call = ("R", "a", "j", "judge", 1, "{}", "{}", None, 1.0, 0, 0, None)
    good = queue.submit(CallRows(run_id="R", calls=[call], results=[("R", "a", "ok", 1.0, "{}")]))
    bad = queue.submit(CallRows(run_id="R", results=[("R", "b", None, 1.0, "{}")]))
    later = queue.submit(CallRows(run_id="R", results=[("R", "c", "ok", 1.0, "{}")]))
    holder.close()
    good.result(timeout=30)
    later.result(timeout=30)
    with pytest.raises(psycopg.errors.NotNullViolation):  # a status is required
        bad.result(timeout=30)
    with pytest.raises(psycopg.errors.NotNullViolation):
        queue.close()
    assert sorted(store.result_item_ids("R")) == ["a", "c"]
    # The failed group was rolled back whole before each set was retried alone: no call twice.
    assert store.call_counts("R")["calls"] == 1
