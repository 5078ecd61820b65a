"""The writes of one judged call, and a run's commits off the event loop on a server store.

**One judged call's writes** (:class:`PendingWrites`). A judged call writes its call log row(s), its
response's provider cache entry, its verdict and the verdict's cache entry; an item adds its
ensemble result. Committing each on its own cost three or four commits per call; a
:class:`PendingWrites` collects them while the call is awaited and :meth:`PendingWrites.flush`
writes them in one ``BEGIN IMMEDIATE ... COMMIT`` (never a transaction held open across an
``await``: every coroutine of a run shares the store's one connection). The verdict is stored
once: a verdict row given its cache key (:meth:`PendingWrites.verdict`) is the verdict cache entry
too (``verdicts.verdict_key``, migration ``m008_verdict_key``), so the copy queued by
:meth:`PendingWrites.verdict_cache` is only written to ``provider_cache`` when no verdict row
carries it (a judge used on its own: audits, debias, calibration).

**Group commit on PostgreSQL** (:class:`CommitQueue`, :meth:`CommitsMixin.commits_off_loop`). A
server commit waits for a round trip and for the server's write-ahead log to reach its disk
(SQLite in WAL mode with ``synchronous=NORMAL`` does not wait for the disk); a run committing on
its event loop held every call in flight for that wait (1.15-1.23 times the bare provider loop on a
local server, 1.02 on SQLite). Inside ``commits_off_loop`` (a run's judging) :meth:`CommitsMixin.commit`
hands a call's rows to a writer thread with a connection of its own, which sends whatever queued
meanwhile as one transaction, and the coroutine awaits its commit without holding the loop.
Durability is unchanged: a judgment goes on only once its rows are committed, and what a cancelled
judgment paid for is committed all the same. The run's reads of the provider and verdict caches
see queued rows, so nothing bought is bought again meanwhile. SQLite keeps committing on the loop:
its commits take tens of microseconds, less than a hand-off to a thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from legal_judge.store.base import (
    StoreBase,
    canonical_json,
    document_json,
    resume_fix_on_full,
    utcnow,
)
from legal_judge.store.postgres import PgConnection

__all__ = ["CallRows", "CommitQueue", "CommitsMixin", "PendingWrites"]

_CALL = """INSERT INTO judge_calls (run_id, item_id, judge, purpose, attempt, request_json,
           response_text, usage_json, latency_ms, cached, retries, error, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
_CACHE = "INSERT OR REPLACE INTO provider_cache VALUES (?, ?, ?, ?, ?)"
#: The one statement that stores a verdict (``verdict_key`` NULL: the row is no cache entry).
INSERT_VERDICT = """INSERT OR REPLACE INTO verdicts (run_id, item_id, judge, judge_id, status,
              verdict_json, created_at, verdict_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
SAVE_RESULT = "INSERT OR REPLACE INTO ensemble_results VALUES (?, ?, ?, ?, ?, ?)"


def result_row(run_id: str, item_id: str, result: dict[str, Any],
               now: str | None = None) -> tuple[Any, ...]:
    """The ``ensemble_results`` row of one item's result."""
    return (run_id, item_id, result["status"], result.get("overall"), document_json(result),
            now or utcnow())


@dataclass
class CallRows:
    """The rows a :class:`PendingWrites` collected, taken from it to be committed.

    Encoded as they were added (each JSON once): ``cache`` holds response JSON by request key,
    ``verdicts`` rows of ``INSERT_VERDICT`` without their time, ``results`` rows of
    :func:`result_row` without theirs; ``verdict_cache`` holds verdicts by verdict key, encoded
    only if written (most become a verdict row's key instead).
    """

    run_id: str | None = None
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    cache: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    verdict_cache: dict[str, tuple[str, str, dict[str, Any]]] = field(default_factory=dict)
    verdicts: list[tuple[Any, ...]] = field(default_factory=list)
    results: list[tuple[Any, ...]] = field(default_factory=list)

    def statements(self, now: str) -> list[tuple[str, list[tuple[Any, ...]]]]:
        """Each statement with its parameter rows, in the order they are run."""
        cache = [(key, provider, model, text, now)
                 for key, (provider, model, text) in self.cache.items()]
        cache += [(key, provider, model, canonical_json(value), now)
                  for key, (provider, model, value) in self.verdict_cache.items()]
        return [(_CACHE, cache), (_CALL, [(*row, now) for row in self.calls]),
                (INSERT_VERDICT, [(*row[:6], now, row[6]) for row in self.verdicts]),
                (SAVE_RESULT, [(*row, now) for row in self.results])]

    def write(self, db: Any, now: str) -> None:
        """Execute the rows' statements on ``db`` (inside the caller's transaction)."""
        for sql, rows in self.statements(now):
            _many(db, sql, rows)

    def cached_verdicts(self) -> dict[str, str]:
        """The verdict JSON these rows will store under each verdict key."""
        keyed = {key: text for *_, text, key in self.verdicts if key is not None}
        return {**{key: canonical_json(value) for key, (_, _, value) in self.verdict_cache.items()},
                **keyed}


def _many(db: Any, sql: str, rows: list[tuple[Any, ...]]) -> None:
    # A judged call writes one row per table, a cached rerun's chunk hundreds: executemany
    # prepares the statement once for many rows, but costs more than execute for one.
    if len(rows) == 1:
        db.execute(sql, rows[0])
    elif rows:
        db.executemany(sql, rows)


class PendingWrites:
    """Rows waiting for one commit: call log rows, provider cache entries, verdicts, results.

    Rows are encoded as they are added (each JSON once); :meth:`flush` commits whatever is
    pending and leaves the object empty and reusable. Made by ``Store.writes()``.
    """

    def __init__(self, base: StoreBase) -> None:
        self._base = base
        self._rows = CallRows()

    def __bool__(self) -> bool:
        """Whether anything waits to be committed."""
        r = self._rows
        return bool(r.calls or r.cache or r.verdict_cache or r.verdicts or r.results)

    @property
    def logged_calls(self) -> int:
        """How many call log rows wait (0: this judgment made and logged no call yet)."""
        return len(self._rows.calls)

    def call(self, run_id: str, item_id: str, judge: str, *, purpose: str, attempt: int,
             request: dict[str, Any], response_text: str | None, usage: dict[str, Any] | None,
             latency_ms: float | None, cached: bool, retries: int, error: str | None) -> None:
        """One provider call (successful or not) for the call log (``Store.record_call``'s row)."""
        self._rows.run_id = self._rows.run_id or run_id
        self._rows.calls.append((run_id, item_id, judge, purpose, attempt, canonical_json(request),
                                 response_text, None if usage is None else canonical_json(usage),
                                 latency_ms, int(cached), retries, error))

    def cache(self, key: str, *, provider: str, model: str, response: dict[str, Any]) -> None:
        """A provider response to remember under its request key (``Store.cache_put``)."""
        self._rows.cache[key] = (provider, model, canonical_json(response))

    def verdict_cache(self, key: str, *, provider: str, model: str,
                      verdict: dict[str, Any]) -> None:
        """A verdict to remember under its verdict key, unless a verdict row carries the key."""
        self._rows.verdict_cache[key] = (provider, model, verdict)

    def verdict(self, run_id: str, item_id: str, judge: str, verdict: dict[str, Any]) -> None:
        """One judge's verdict on one item (``Store.save_verdict``'s row).

        When this judgment queued the same verdict's cache entry, the row carries its key and is
        the cache entry (the verdict is not stored twice); a verdict the caller changed (a batch
        price) is stored apart from the cached one, as before.
        """
        self._rows.run_id = self._rows.run_id or run_id
        queued = self._rows.verdict_cache
        key = next((k for k, (_, _, cached) in queued.items() if cached == verdict), None)
        if key is not None:
            del queued[key]
        self._rows.verdicts.append((run_id, item_id, judge, verdict["judge_id"],
                                    verdict["status"], document_json(verdict), key))

    def result(self, run_id: str, item_id: str, result: dict[str, Any]) -> None:
        """One item's ensemble result (``Store.save_result``'s row)."""
        self._rows.run_id = self._rows.run_id or run_id
        self._rows.results.append(result_row(run_id, item_id, result)[:5])

    def take(self) -> CallRows | None:
        """The rows collected so far (None: nothing waits), leaving this object empty."""
        if not self:
            return None
        rows, self._rows = self._rows, CallRows()
        return rows

    def flush(self) -> None:
        """Commit everything pending in one transaction (nothing to do when empty).

        Raises:
            StoreError: the store cannot be written; on a full disk the fix names the run's
                resume command.
        """
        rows = self.take()
        if rows is None:
            return
        with resume_fix_on_full(self._base, rows.run_id), self._base.transaction() as db:
            rows.write(db, utcnow())


#: The most judged calls one group commit takes (a few hundred rows: one transaction's worth).
_GROUP = 256


class CommitQueue:
    """A writer thread that commits queued :class:`CallRows` in groups, one transaction each.

    ``open_connection`` opens the writer's own connection (in the thread, on first use). A group that
    fails is retried row set by row set, so one set the store refuses fails only its own commit.
    """

    def __init__(self, open_connection: Callable[[], PgConnection]) -> None:
        self._open_connection = open_connection
        self._jobs: queue.SimpleQueue[tuple[CallRows, concurrent.futures.Future[None]] | None] = (
            queue.SimpleQueue())
        self._lock = threading.Lock()
        self._waiting: dict[int, CallRows] = {}  # by id(): the rows queued, not yet committed
        self._failures: list[BaseException] = []
        self._thread = threading.Thread(target=self._work, name="legal-judge-commits",
                                        daemon=True)
        self._thread.start()

    def submit(self, rows: CallRows) -> concurrent.futures.Future[None]:
        """Queue ``rows``; the future is done once they are committed (or failed to be)."""
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._lock:
            self._waiting[id(rows)] = rows
        self._jobs.put((rows, done))
        return done

    def queued_response(self, key: str) -> str | None:
        """The response JSON a queued row set will cache under ``key``, if any."""
        with self._lock:
            for rows in reversed(self._waiting.values()):
                if key in rows.cache:
                    return rows.cache[key][2]
        return None

    def queued_verdicts(self, keys: list[str]) -> dict[str, str]:
        """The verdict JSON queued row sets will cache under any of ``keys``."""
        wanted = set(keys)
        found: dict[str, str] = {}
        with self._lock:
            for rows in self._waiting.values():  # in queue order: the newest wins
                found.update((k, v) for k, v in rows.cached_verdicts().items() if k in wanted)
        return found

    def close(self, *, raise_failure: bool = True) -> None:
        """Commit what is queued, stop the thread and wait for it.

        Args:
            raise_failure: Raise the first commit that failed (a failure its waiter, cancelled
                or gone, may never have seen); False while another exception is on its way.
        """
        self._jobs.put(None)
        self._thread.join()
        if raise_failure and self._failures:
            raise self._failures[0]

    def _work(self) -> None:
        base: PgConnection | None = None
        stopping = False
        try:
            while not stopping:
                first = self._jobs.get()
                if first is None:
                    break
                group = [first]
                while len(group) < _GROUP:
                    try:
                        job = self._jobs.get_nowait()
                    except queue.Empty:
                        break
                    if job is None:
                        stopping = True
                        break
                    group.append(job)
                try:
                    if base is None:
                        base = self._open_connection()
                    self._commit(base, group)
                except BaseException as exc:  # noqa: BLE001 - handed to every waiter
                    self._settle(group, exc)
        finally:
            if base is not None:
                base.close()

    def _commit(self, base: PgConnection, group: list[tuple[CallRows, Any]]) -> None:
        try:
            self._transaction(base, [rows for rows, _ in group])
        except Exception as exc:
            if len(group) == 1:
                self._settle(group, exc)
                return
            for job in group:  # one set the store refuses fails only its own commit
                try:
                    self._transaction(base, [job[0]])
                except Exception as alone:  # noqa: BLE001 - handed to its waiter
                    self._settle([job], alone)
                else:
                    self._settle([job], None)
            return
        self._settle(group, None)

    @staticmethod
    def _transaction(server: PgConnection, sets: list[CallRows]) -> None:
        merged = CallRows(run_id=sets[0].run_id)  # one statement per row, one message in all
        for rows in sets:
            merged.calls += rows.calls
            merged.cache.update(rows.cache)
            merged.verdict_cache.update(rows.verdict_cache)
            merged.verdicts += rows.verdicts
            merged.results += rows.results
        server.write_script(merged.statements(utcnow()))

    def _settle(self, group: list[tuple[CallRows, concurrent.futures.Future[None]]],
                failure: BaseException | None) -> None:
        with self._lock:
            for rows, _ in group:
                self._waiting.pop(id(rows), None)
            if failure is not None:
                self._failures.append(failure)
        for _, done in group:
            if done.done():
                continue
            if failure is None:
                done.set_result(None)
            else:
                done.set_exception(failure)


class CommitsMixin(StoreBase):
    """The :class:`~legal_judge.store.Store` methods that commit a run's writes."""

    #: The open :meth:`commits_off_loop` queue, None outside one.
    _commits: CommitQueue | None = None

    def writes(self) -> PendingWrites:
        """An empty :class:`~legal_judge.store.writes.PendingWrites`: one judged call's rows,
        committed together by its ``flush()`` (or :meth:`commit`)."""
        return PendingWrites(self)

    @contextlib.contextmanager
    def commits_off_loop(self) -> Iterator[None]:
        """While open, :meth:`commit` on a PostgreSQL store commits in a writer thread with a
        connection of its own, in groups (module docstring); on SQLite it changes nothing.

        On leaving, whatever is queued is committed and the thread stopped.

        Raises:
            StoreError: a queued commit failed that no waiter raised (only when nothing else is
                being raised).
        """
        server = self.postgres
        if server is None or self._commits is not None:
            yield
            return
        commits = CommitQueue(server.clone)
        self._commits = commits
        try:
            yield
        except BaseException:
            self._commits = None
            commits.close(raise_failure=False)
            raise
        self._commits = None
        commits.close()

    def _submitted(self, writes: PendingWrites
                   ) -> tuple[concurrent.futures.Future[None], CallRows] | None:
        # Outside commits_off_loop: committed now (None). Else queued (None: nothing to queue).
        commits = self._commits
        if commits is None:
            writes.flush()
            return None
        rows = writes.take()
        return None if rows is None else (commits.submit(rows), rows)

    async def commit(self, writes: PendingWrites) -> None:
        """Commit ``writes`` (empty: nothing); inside :meth:`commits_off_loop` on a server,
        without holding the event loop while the server commits, and even when the awaiting
        coroutine is cancelled meanwhile.

        Raises:
            StoreError: the store cannot be written (as :meth:`PendingWrites.flush`).
        """
        submitted = self._submitted(writes)
        if submitted is not None:
            with resume_fix_on_full(self, submitted[1].run_id):
                await asyncio.shield(asyncio.wrap_future(submitted[0]))

    def commit_soon(self, writes: PendingWrites) -> None:
        """Commit ``writes``, inside :meth:`commits_off_loop` on a server without waiting, for
        rows nothing was paid for (verdicts reused from the cache, their items' results): the
        next chunk is settled meanwhile. Leaving the block waits; a failure is raised there."""
        self._submitted(writes)

    def queued_response(self, key: str) -> str | None:
        """A response queued for the provider cache under ``key`` and not yet committed."""
        commits = self._commits
        return None if commits is None else commits.queued_response(key)

    def queued_verdicts(self, keys: list[str]) -> dict[str, str]:
        """Verdicts queued for the verdict cache under ``keys`` and not yet committed."""
        commits = self._commits
        return {} if commits is None else commits.queued_verdicts(keys)
