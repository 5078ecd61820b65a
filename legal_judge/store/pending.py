"""The writes of one judged call, held in memory and committed together (one transaction).

A judged call writes its call log row(s), its response's provider cache entry, its verdict and the
verdict's cache entry. Committing each on its own cost three or four commits per call; a
:class:`PendingWrites` collects them while the call is awaited and :meth:`PendingWrites.flush`
writes them in one ``BEGIN IMMEDIATE ... COMMIT`` (never a transaction held open across an
``await``: every coroutine of a run shares the store's one connection).

The verdict is stored once: a verdict row given its cache key (:meth:`PendingWrites.verdict`) is the
verdict cache entry too (``verdicts.verdict_key``, migration ``m008_verdict_key``), so the copy
queued by :meth:`PendingWrites.verdict_cache` is only written to ``provider_cache`` when no verdict
row carries it (a judge used on its own: audits, debias, calibration).
"""

from __future__ import annotations

from typing import Any

from legal_judge.errors import StoreError
from legal_judge.store.base import StoreBase, canonical_json, document_json, utcnow

__all__ = ["PendingWrites"]

_CALL = """INSERT INTO judge_calls (run_id, item_id, judge, purpose, attempt, request_json,
           response_text, usage_json, latency_ms, cached, retries, error, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
_CACHE = "INSERT OR REPLACE INTO provider_cache VALUES (?, ?, ?, ?, ?)"
#: The one statement that stores a verdict (``verdict_key`` NULL: the row is no cache entry).
INSERT_VERDICT = """INSERT OR REPLACE INTO verdicts (run_id, item_id, judge, judge_id, status,
              verdict_json, created_at, verdict_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""


class PendingWrites:
    """Rows waiting for one commit: call log rows, provider cache entries, verdicts.

    Rows are encoded as they are added (each JSON once); :meth:`flush` commits whatever is
    pending and leaves the object empty and reusable. Made by ``Store.writes()``.
    """

    def __init__(self, base: StoreBase) -> None:
        self._base = base
        self._calls: list[tuple[Any, ...]] = []
        self._cache: dict[str, tuple[str, str, str]] = {}
        self._verdict_cache: dict[str, tuple[str, str, dict[str, Any]]] = {}
        self._verdicts: list[tuple[Any, ...]] = []
        self._run_id: str | None = None

    def __bool__(self) -> bool:
        """Whether anything waits to be committed."""
        return bool(self._calls or self._cache or self._verdict_cache or self._verdicts)

    @property
    def logged_calls(self) -> int:
        """How many call log rows wait (0: this judgment made and logged no call yet)."""
        return len(self._calls)

    def call(self, run_id: str, item_id: str, judge: str, *, purpose: str, attempt: int,
             request: dict[str, Any], response_text: str | None, usage: dict[str, Any] | None,
             latency_ms: float | None, cached: bool, retries: int, error: str | None) -> None:
        """One provider call (successful or not) for the call log (``Store.record_call``'s row)."""
        self._run_id = self._run_id or run_id
        self._calls.append((run_id, item_id, judge, purpose, attempt, canonical_json(request),
                            response_text, None if usage is None else canonical_json(usage),
                            latency_ms, int(cached), retries, error))

    def cache(self, key: str, *, provider: str, model: str, response: dict[str, Any]) -> None:
        """A provider response to remember under its request key (``Store.cache_put``)."""
        self._cache[key] = (provider, model, canonical_json(response))

    def verdict_cache(self, key: str, *, provider: str, model: str,
                      verdict: dict[str, Any]) -> None:
        """A verdict to remember under its verdict key, unless a verdict row carries the key."""
        self._verdict_cache[key] = (provider, model, verdict)

    def verdict(self, run_id: str, item_id: str, judge: str, verdict: dict[str, Any]) -> None:
        """One judge's verdict on one item (``Store.save_verdict``'s row).

        When this judgment queued the same verdict's cache entry, the row carries its key and is
        the cache entry (the verdict is not stored twice); a verdict the caller changed (a batch
        price) is stored apart from the cached one, as before.
        """
        self._run_id = self._run_id or run_id
        key = None
        for queued, (_, _, cached) in self._verdict_cache.items():
            if cached == verdict:
                key = queued
                break
        if key is not None:
            del self._verdict_cache[key]
        self._verdicts.append((run_id, item_id, judge, verdict["judge_id"], verdict["status"],
                               document_json(verdict), key))

    def flush(self) -> None:
        """Commit everything pending in one transaction (nothing to do when empty).

        Raises:
            StoreError: the store cannot be written; on a full disk the fix names the run's
                resume command.
        """
        if not self:
            return
        now = utcnow()
        calls, cache, vcache, verdicts = (self._calls, self._cache, self._verdict_cache,
                                          self._verdicts)
        self._calls, self._cache, self._verdict_cache, self._verdicts = [], {}, {}, []
        try:
            with self._base.transaction() as db:
                for key, (provider, model, text) in cache.items():
                    db.execute(_CACHE, (key, provider, model, text, now))
                for key, (provider, model, value) in vcache.items():
                    db.execute(_CACHE, (key, provider, model, canonical_json(value), now))
                for row in calls:
                    db.execute(_CALL, (*row, now))
                for run_id, item_id, judge, judge_id, status, text, key in verdicts:
                    db.execute(INSERT_VERDICT, (run_id, item_id, judge, judge_id, status, text, now,
                                          key))
        except StoreError as exc:
            if exc.code != "store-full" or self._run_id is None:
                raise
            raise StoreError(exc.message, code=exc.code,
                             fix=self._base.resume_fix(self._run_id)) from exc

